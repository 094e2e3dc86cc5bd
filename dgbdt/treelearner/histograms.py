"""Histogram kinds: what a leaf's histogram holds, and how it is built, sent,
subtracted and scanned.

The grower holds one kind for the whole training, chosen by
``use_quantized_grad``:

* ``FloatHistograms``: (sum_gradient, sum_hessian) float64 pairs per bin, built
  from the leaf's gradients gathered in row order, with LightGBM's most
  frequent bins (native.split.fix_most_frequent_bins);
* ``QuantizedHistograms``: integer sums of the tree's quantized gradients
  (dgbdt.treelearner.quantization), one word per bin in the width the leaf's *global* row
  count allows (native.quantize.packed_width: narrow int32 words for small
  leaves, wide int64 words, or two int64 "pairs" for leaves too large for
  words), exact in any order of addition.

Learners (dgbdt.treelearner.learners) call the same steps on either kind; a kind never
talks to other ranks: it says what goes on the wire (``to_wire``) and how to
read what comes back (``from_wire``), and the learner sends it.  Every buffer
a kind needs is allocated on first use and reused across leaves and trees.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numba
import numpy as np

from ..native.common import GRAD_DTYPE, HIST_DTYPE, HIST_WIDTH
from ..native.histogram import (
    BLOCK_FEATURES,
    MAX_CHUNKS,
    build_histogram_blocks,
    build_histogram_colwise,
    build_histogram_rowwise,
    gather_gradients,
    subtract_histograms,
)
from ..native.quantize import (
    NARROW_DTYPE,
    NARROW_SHIFT,
    PAIRS,
    WIDE_DTYPE,
    WIDE_SHIFT,
    add_words_to_pairs,
    build_int_histogram_blocks,
    build_int_histogram_colwise,
    build_int_histogram_rowwise,
    build_wide_histogram_rowwise,
    gather_packed,
    narrow_rows,
    narrow_words,
    packed_width,
    sum_levels,
    unpack_word,
    wide_rows,
    widen_words,
)
from ..native.split import fix_most_frequent_bins, sequential_sum
from ..native.store import build_store_histogram, build_store_int_histogram, recover_int_bins

if TYPE_CHECKING:
    from typing import TypeAlias

    import numpy.typing as npt

    from ..boosting.loop import TrainingData
    from .learners.serial import SerialLearner
    from .quantization import GradientQuantizer

    #: A histogram buffer's (shape, dtype).
    Layout: TypeAlias = tuple[tuple[int, ...], npt.DTypeLike]


def make_histograms(cfg: dict[str, Any], data: TrainingData) -> HistogramKind:
    """The histogram kind of a training (resolved params ``cfg``)."""
    if cfg["use_quantized_grad"]:
        return QuantizedHistograms(data, cfg["num_grad_quant_bins"])
    return FloatHistograms(data)


#: Rows of the probe that times the row-wise kernels' small-leaf threading.
PROBE_ROWS = 4096


def _best_seconds(
    build: Callable[[int, np.ndarray], None], threads: int, rows: np.ndarray, repeats: int = 5
) -> float:
    build(threads, rows)  # warm caches (and the kernel)
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        build(threads, rows)
        best = min(best, time.perf_counter() - t0)
    return best


class _Kind:
    """What both kinds share: a pool of full-size leaf histograms and scratch
    buffers by name."""

    layout: Callable[[float], Layout]  # each kind's: a leaf's buffer for its global count

    def __init__(self, data: TrainingData) -> None:
        self.data = data
        self.total_bins = data.total_bins
        self.free: list[np.ndarray] = []  # leaf histograms released for reuse
        self._scratch: dict[str, np.ndarray] = {}
        self._small_threads: int | None = None

    def small_leaf_threads(self, build: Callable[[int, np.ndarray], None]) -> int:
        """Threads for the row-wise kernels' leaves of one row chunk, which they
        split by features between threads: that pays on some machines and data
        and not on others (on rocketlake: 0.6-0.8x the time on 28 features of
        255 bins, 1.1-1.2x on the flights table's 12 narrower ones).  Both sum
        every bin in row order, the same bits, so the choice is timed, once per
        training, as LightGBM times row- against column-wise: ``build(threads,
        rows)`` on PROBE_ROWS evenly spaced rows of the Dataset."""
        if self._small_threads is None:
            threads, n = numba.get_num_threads(), self.data.n_samples
            if threads > 1 and n >= PROBE_ROWS:
                rows = np.linspace(0, n - 1, PROBE_ROWS).astype(np.uint32)
                one, many = (_best_seconds(build, t, rows) for t in (1, threads))
                threads = threads if many < 0.95 * one else 1
            self._small_threads = threads
        return self._small_threads

    def new(self, count: float) -> np.ndarray:
        """A full-size histogram (contents undefined) for a leaf of ``count``
        global rows, from the pool when one of its shape is free."""
        return self._take(*self.layout(count))

    def _take(self, shape: tuple[int, ...], dtype: npt.DTypeLike) -> np.ndarray:
        for i, h in enumerate(self.free):
            if h.dtype == dtype and h.shape == shape:
                return self.free.pop(i)
        return np.empty(shape, dtype)

    def release(self, hist: np.ndarray | None) -> None:
        if hist is not None:
            self.free.append(hist)

    def scratch(self, name: str, shape: int | tuple[int, ...], dtype: npt.DTypeLike) -> np.ndarray:
        """A reusable buffer (zeros when first made), one per name."""
        buf = self._scratch.get(name)
        if buf is None:
            buf = self._scratch[name] = np.zeros(shape, dtype)
        return buf


class FloatHistograms(_Kind):
    """(sum_g, sum_h) float64 per bin, shape (total_bins, HIST_WIDTH)."""

    scales = (1.0, 1.0)  # float sums need no scaling back

    # the tree's float32 gradients, set by begin_tree before any build
    gradients: np.ndarray
    hessians: np.ndarray

    def __init__(self, data: TrainingData) -> None:
        super().__init__(data)
        self.ordered_gradients = np.empty(data.n_samples, GRAD_DTYPE)
        self.ordered_hessians = np.empty(data.n_samples, GRAD_DTYPE)
        self.gradients = self.hessians = None  # type: ignore[assignment]  # until begin_tree

    def layout(self, count: float) -> Layout:
        return (self.total_bins, HIST_WIDTH), HIST_DTYPE

    def begin_tree(
        self, gradients: np.ndarray, hessians: np.ndarray, quant: GradientQuantizer | None
    ) -> None:
        self.gradients, self.hessians = gradients, hessians

    def gather(self, rows: np.ndarray) -> None:
        """The gradients of ``rows`` in row order (what the column-wise, blocked
        and bin-store builders read; the row-wise one reads them by row index)."""
        gather_gradients(
            self.gradients, self.hessians, rows, self.ordered_gradients, self.ordered_hessians
        )

    def root_totals(self, learner: SerialLearner, rows: np.ndarray) -> tuple[float, float, float]:
        """Global (sum_g, sum_h, count) of the root, summed in row order as
        LightGBM does (its trees, bit for bit); leaves the rows gathered."""
        self.gather(rows)
        n = len(rows)
        return learner.global_totals(
            sequential_sum(self.ordered_gradients[:n]),
            sequential_sum(self.ordered_hessians[:n]),
            float(n),
        )

    def _rowwise_threads(self, data: TrainingData, chunks: np.ndarray) -> int:
        if self._small_threads is not None:
            return self._small_threads
        probe = np.empty((self.total_bins, HIST_WIDTH), HIST_DTYPE)
        g, h = self.gradients, self.hessians  # the tree's (read by row index)

        def build(threads: int, rows: np.ndarray) -> None:
            build_histogram_rowwise(
                data.binned, rows, g, h, data.feature_offsets, threads, chunks, probe
            )

        return self.small_leaf_threads(build)

    def _build_store(
        self,
        learner: SerialLearner,
        rows: np.ndarray,
        feature_indices: np.ndarray,
        into: np.ndarray,
    ) -> None:
        store = learner.data.store
        chunks = (
            self.scratch("chunks", (MAX_CHUNKS, self.total_bins, HIST_WIDTH), HIST_DTYPE)
            if learner.row_wise
            else self.scratch("no_chunks", (1, 1, HIST_WIDTH), HIST_DTYPE)
        )
        cols, sparse = learner.store_columns(feature_indices)
        build_store_histogram(
            store.dense,
            store.indptr,
            store.entries,
            store.col_start,
            store.col_map,
            cols,
            sparse,
            rows,
            self.ordered_gradients,
            self.ordered_hessians,
            learner.row_wise,
            numba.get_num_threads(),
            chunks,
            into,
        )

    def build_local(
        self,
        learner: SerialLearner,
        rows: np.ndarray,
        feature_indices: np.ndarray,
        count: float,
        into: np.ndarray,
        gathered: bool = False,
    ) -> np.ndarray:
        """This rank's histogram of the rows, built into ``into`` (``gathered``:
        the previous build was of the same rows, whose gradients it gathered:
        a pipeline's next piece of features)."""
        data = learner.data
        if data.store.plain and data.blocks is None and learner.row_wise:
            chunks = self.scratch("chunks", (MAX_CHUNKS, self.total_bins, HIST_WIDTH), HIST_DTYPE)
            build_histogram_rowwise(
                data.binned,
                rows,
                self.gradients,
                self.hessians,
                data.feature_offsets,
                self._rowwise_threads(data, chunks),
                chunks,
                into,
            )
            return into
        if not gathered:
            self.gather(rows)
        if not data.store.plain:
            self._build_store(learner, rows, feature_indices, into)
        elif data.blocks is not None:
            features = learner.histogram_features(feature_indices)
            build_histogram_blocks(
                data.blocks,
                rows,
                self.ordered_gradients,
                self.ordered_hessians,
                np.unique(features // BLOCK_FEATURES).astype(np.int64),
                data.feature_offsets,
                into,
            )
        else:
            build_histogram_colwise(
                data.columns.T,
                rows,
                self.ordered_gradients,
                self.ordered_hessians,
                learner.histogram_features(feature_indices),
                data.feature_offsets,
                into,
            )
        return into

    def store(self, local: np.ndarray, hist: np.ndarray) -> None:
        """``hist`` = a local histogram ``build_local`` returned (built in place)."""

    def to_wire(self, bins: np.ndarray, count: float) -> tuple[np.ndarray, int]:
        """(flat send buffer, values per bin) of ``bins`` (float64 pairs)."""
        return bins.reshape(-1), HIST_WIDTH

    def from_wire(self, received: np.ndarray, count: float, out: np.ndarray) -> np.ndarray:
        out[:] = received.reshape(-1, HIST_WIDTH)
        return out

    def wire_shape(self, n_bins: int, count: float) -> Layout:
        return (n_bins, HIST_WIDTH), HIST_DTYPE

    def fix(
        self,
        learner: SerialLearner,
        hist: np.ndarray,
        features: np.ndarray,
        totals: tuple[float, ...],
    ) -> None:
        """LightGBM's most frequent bins of ``features`` in a global histogram."""
        fix_most_frequent_bins(
            hist,
            features,
            learner.data.feature_offsets,
            learner.most_freq_bins,
            totals[0],
            totals[1],
        )

    def local_totals(self, rows: np.ndarray) -> tuple[float, float]:
        """(sum_g, sum_h) of this rank's ``rows``, in row order."""
        return (
            sequential_sum(self.gradients[rows].astype(np.float64)),
            sequential_sum(self.hessians[rows].astype(np.float64)),
        )

    def bin_sums(self, bins: np.ndarray) -> tuple[float, float]:
        """(sum_g, sum_h) over bins of one feature: a leaf's local totals."""
        g, h = bins.sum(axis=0)
        return float(g), float(h)

    def subtract(
        self, parent: np.ndarray, child: np.ndarray, bins: slice = slice(None)
    ) -> np.ndarray:
        """parent -= child on ``bins``; returns the child."""
        subtract_histograms(parent[bins], child[bins], parent[bins])
        return child


class QuantizedHistograms(_Kind):
    """Integer sums of quantized gradients: wide int64 words (total_bins,) or,
    for leaves too large for words, int64 pairs (total_bins, 2)."""

    # the tree's integer gradients, set by begin_tree before any build
    quant: GradientQuantizer

    def __init__(self, data: TrainingData, n_bins: int) -> None:
        super().__init__(data)
        self.n_bins = n_bins
        self.quant = None  # type: ignore[assignment]  # until begin_tree
        self.scales = (1.0, 1.0)

    def width(self, count: float) -> int:
        """NARROW_SHIFT, WIDE_SHIFT or PAIRS for a leaf of ``count`` global rows."""
        return packed_width(int(count), self.n_bins)

    def layout(self, count: float) -> Layout:
        if self.width(count) == PAIRS:
            return (self.total_bins, 2), WIDE_DTYPE
        return (self.total_bins,), WIDE_DTYPE

    def begin_tree(
        self, gradients: np.ndarray, hessians: np.ndarray, quant: GradientQuantizer
    ) -> None:
        """``quant``: the tree's GradientQuantizer (integer gradients, scales)."""
        self.quant = quant
        self.scales = (quant.g_scale, quant.h_scale)

    def root_totals(self, learner: SerialLearner, rows: np.ndarray) -> tuple[float, float, float]:
        """Integer sums scaled back: exact, so the same on any number of ranks."""
        q = self.quant
        sum_g, sum_h = sum_levels(q.q_g, q.q_h, rows)
        sums = learner.sum_over_rows(np.array([sum_g, sum_h, len(rows)], np.int64))
        return float(sums[0]) * q.g_scale, float(sums[1]) * q.h_scale, float(sums[2])

    def build_local(
        self,
        learner: SerialLearner,
        rows: np.ndarray,
        feature_indices: np.ndarray,
        count: float,
        into: np.ndarray,
        gathered: bool = False,
    ) -> np.ndarray:
        """This rank's integer histogram in the leaf's width: narrow int32 words,
        wide int64 words or int64 pairs (a scratch buffer, valid until the next
        build); ``gathered`` as FloatHistograms.build_local's."""
        return self._build(learner, rows, feature_indices, self.width(count), gathered)

    def _build(
        self,
        learner: SerialLearner,
        rows: np.ndarray,
        feature_indices: np.ndarray,
        shift: int,
        gathered: bool = False,
    ) -> np.ndarray:
        if shift == PAIRS:
            # Wide words of pieces that fit them, added up as pairs.
            pairs = self.scratch("pairs", (self.total_bins, 2), WIDE_DTYPE)
            pairs[:] = 0
            piece = wide_rows(self.n_bins)
            for lo in range(0, len(rows), piece):
                words = self._build(learner, rows[lo : lo + piece], feature_indices, WIDE_SHIFT)
                add_words_to_pairs(words, pairs)
            return pairs
        narrow = shift == NARROW_SHIFT
        hist = self.scratch(
            "narrow" if narrow else "wide", self.total_bins, NARROW_DTYPE if narrow else WIDE_DTYPE
        )
        if not learner.data.store.plain:
            self._build_store(learner, rows, feature_indices, shift, hist, gathered)
        elif learner.row_wise:
            self._build_rowwise(learner.data, rows, narrow, hist)
        else:
            self._build_colwise(learner, rows, feature_indices, shift, hist, gathered)
        return hist

    def _build_rowwise(
        self, data: TrainingData, rows: np.ndarray, narrow: bool, hist: np.ndarray
    ) -> None:
        # The kernels read every row's narrow word by row index, wide leaves too
        # (build_wide_histogram_rowwise sums narrow pieces).
        q, offsets = self.quant, data.feature_offsets
        chunks = self.scratch("narrow_chunks", (MAX_CHUNKS, self.total_bins), NARROW_DTYPE)
        if narrow:
            threads = self._rowwise_threads(data, chunks)
            build_int_histogram_rowwise(
                data.binned, rows, q.row_words, offsets, threads, chunks, hist
            )
            return
        partials = self.scratch("wide_chunks", (MAX_CHUNKS, self.total_bins), WIDE_DTYPE)
        build_wide_histogram_rowwise(
            data.binned,
            rows,
            q.row_words,
            offsets,
            narrow_rows(self.n_bins),
            chunks,
            partials,
            hist,
        )

    def _rowwise_threads(self, data: TrainingData, chunks: np.ndarray) -> int:
        if self._small_threads is not None:
            return self._small_threads
        probe = np.empty(self.total_bins, NARROW_DTYPE)

        def build(threads: int, rows: np.ndarray) -> None:
            build_int_histogram_rowwise(
                data.binned,
                rows,
                self.quant.row_words,
                data.feature_offsets,
                threads,
                chunks,
                probe,
            )

        return self.small_leaf_threads(build)

    def _build_store(
        self,
        learner: SerialLearner,
        rows: np.ndarray,
        feature_indices: np.ndarray,
        shift: int,
        hist: np.ndarray,
        gathered: bool = False,
    ) -> None:
        # Words gathered in row order, in the leaf's width (exact in any order).
        data = learner.data
        q, store = self.quant, data.store
        narrow = shift == NARROW_SHIFT
        words = self.scratch("narrow_words" if narrow else "wide_words", data.n_samples, hist.dtype)
        words = words[: len(rows)]
        if not gathered:
            gather_packed(q.q_g, q.q_h, rows, shift, words)
        chunks = self.scratch(
            "narrow_chunks" if narrow else "wide_chunks", (MAX_CHUNKS, self.total_bins), hist.dtype
        )
        cols, sparse = learner.store_columns(feature_indices)
        build_store_int_histogram(
            store.dense,
            store.indptr,
            store.entries,
            store.col_start,
            store.col_map,
            cols,
            sparse,
            rows,
            words,
            chunks,
            hist,
        )

    def _build_colwise(
        self,
        learner: SerialLearner,
        rows: np.ndarray,
        feature_indices: np.ndarray,
        shift: int,
        hist: np.ndarray,
        gathered: bool = False,
    ) -> None:
        data, q = learner.data, self.quant
        name = "narrow_words" if shift == NARROW_SHIFT else "wide_words"
        words = self.scratch(name, data.n_samples, hist.dtype)[: len(rows)]
        if not gathered:
            gather_packed(q.q_g, q.q_h, rows, shift, words)
        if data.blocks is not None:  # wide data: the blocked copy (one line per row and block)
            features = learner.histogram_features(feature_indices)
            blocks = np.unique(features // BLOCK_FEATURES).astype(np.int64)
            build_int_histogram_blocks(data.blocks, rows, words, blocks, data.feature_offsets, hist)
            return
        build_int_histogram_colwise(
            data.columns.T,
            rows,
            words,
            learner.histogram_features(feature_indices),
            data.feature_offsets,
            hist,
        )

    def store(self, local: np.ndarray, hist: np.ndarray) -> None:
        """``hist`` (wide words or pairs) = a local histogram from ``build_local``."""
        if local.dtype == NARROW_DTYPE:
            widen_words(local, hist)
        else:
            hist[:] = local

    def to_wire(self, bins: np.ndarray, count: float) -> tuple[np.ndarray, int]:
        """(flat send buffer, values per bin) of ``bins`` in the width a leaf of
        ``count`` global rows allows: MPI_SUM adds words exactly, and the
        packing guarantees no carry between halves."""
        width = self.width(count)
        if bins.ndim == 2 and width != PAIRS:  # a child of a pairs leaf that fits words
            bins = (bins[:, 0] << WIDE_SHIFT) + bins[:, 1]
        if width == NARROW_SHIFT and bins.dtype != NARROW_DTYPE:
            out = np.empty(len(bins), NARROW_DTYPE)
            narrow_words(bins, out)
            bins = out
        return bins.reshape(-1), bins.ndim

    def from_wire(self, received: np.ndarray, count: float, out: np.ndarray) -> np.ndarray:
        """``out`` (wide words or pairs, the leaf's layout) = the summed bins."""
        if received.dtype == NARROW_DTYPE:
            widen_words(received, out)
        elif out.ndim == 2:
            out[:] = received.reshape(-1, 2)
        else:
            out[:] = received
        return out

    def wire_shape(self, n_bins: int, count: float) -> Layout:
        """(shape, dtype) of ``n_bins`` bins of a leaf of ``count`` rows, as stored."""
        return (n_bins, 2) if self.width(count) == PAIRS else (n_bins,), WIDE_DTYPE

    def local_totals(self, rows: np.ndarray) -> tuple[float, float]:
        """(sum_g, sum_h) of this rank's ``rows``, scaled back (exact)."""
        g, h = sum_levels(self.quant.q_g, self.quant.q_h, rows)
        return float(g) * self.scales[0], float(h) * self.scales[1]

    def fix(
        self,
        learner: SerialLearner,
        hist: np.ndarray,
        features: np.ndarray,
        totals: tuple[float, ...],
    ) -> None:
        """The most frequent bins a store does not keep (bundled and sparse
        features) = the leaf's integer totals minus the other bins: exact.
        Plain stores: nothing (integer sums have no rounding to reproduce)."""
        data = learner.data
        if data.store.plain:
            return
        recover_int_bins(
            hist,
            features,
            data.feature_offsets,
            data.most_freq_bins,
            data.recovered,
            np.int64(np.rint(totals[0] / self.scales[0])),
            np.int64(np.rint(totals[1] / self.scales[1])),
        )

    def bin_sums(self, bins: np.ndarray) -> tuple[float, float]:
        """(sum_g, sum_h) over bins of one feature, scaled back: words or pairs."""
        if bins.ndim == 1:  # the sum of words is the leaf's word
            g, h = unpack_word(bins.sum())
        else:
            g, h = bins.sum(axis=0)
        return float(g) * self.scales[0], float(h) * self.scales[1]

    def subtract(
        self, parent: np.ndarray, child: np.ndarray, bins: slice = slice(None)
    ) -> np.ndarray:
        """parent -= child on ``bins`` (exact on words and pairs); returns the
        child, as pairs when the parent is (a child small enough for words is
        built as words)."""
        if parent.ndim == 2 and child.ndim == 1:
            pairs = self._take((self.total_bins, 2), WIDE_DTYPE)
            pairs[:] = 0
            add_words_to_pairs(child, pairs)
            self.release(child)
            child = pairs
        np.subtract(parent[bins], child[bins], out=parent[bins])
        return child


if TYPE_CHECKING:
    #: The histogram kind a training holds (make_histograms).
    HistogramKind: TypeAlias = FloatHistograms | QuantizedHistograms
