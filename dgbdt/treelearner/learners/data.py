"""Data-parallel learner: rows are sharded; histograms are reduce-scattered.

Per split (the scheme of LightGBM's data-parallel learner,
src/treelearner/data_parallel_tree_learner.cpp):
1. every rank builds the local histogram of the smaller child (smaller by
   *global* count, decided by the grower);
2. ``reduce_scatter`` sums it over ranks and hands each rank the global bins
   of the features it owns (contiguous feature blocks balanced by bin count,
   so the flat histogram is already in owner order);
3. the larger child is parent - smaller on those global, owned bins;
4. each rank scans its own features; the best split is agreed by gathering
   every rank's record and taking the maximum gain (ties: lower feature), the
   same on every rank (both children of a split in one allgather), with the
   features splittable in the leaf (which its children scan: LightGBM's
   ``is_splittable``, which LightGBM's own data-parallel learner skips; here it
   is applied as on one process);
5. rows are partitioned locally; child counts are summed globally.

Pipelined (``comm_pipeline``; the seed's compute/communication pipeline): the
smaller child's histogram is built in pieces of features, each piece holding a
slice of every owner's block, and each piece's reduce-scatter runs on the
communication thread (dgbdt.distributed.comm) while the next piece is built.
The sums are those of the one-piece exchange (integers exactly; float pairs
exactly on two ranks, and up to the reduction's order on more), and the bytes
are the same: only the calls are more.  It hides at most, per leaf, the
smaller of its build and its exchange (a leaf's exchange cannot overlap the
next leaf's work, which waits for its split), so by default it is taken only
where the exchanges outlast the builds (``PIPELINE_TRIAL``).

A rank with no rows still takes part in every collective with zeros (LightGBM
#4026: stale buffers on empty ranks gave huge leaf values).  The reduce-scatter
sends every feature's bins, also those ``feature_fraction`` left out of this
tree (never scanned; fixed counts keep the owner blocks simple), so its bytes
do not fall with ``feature_fraction``.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from ...native.histogram import BLOCK_FEATURES, put_bins, take_bins
from .base import ShardedRows, agree_best_splits, as_2d, owner_blocks, reduce_scatter_bins
from .serial import SerialLearner

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ...boosting.loop import TrainingData
    from ...distributed.comm import SerialComm
    from ..histograms import HistogramKind
    from .base import LeafScan


#: Histogram bytes (float pairs) from which pipelining may pay, and its pieces.
PIPELINE_MIN_BYTES = 256 * 1024
PIPELINE_PIECES = 4
#: By default the first histograms are timed unpipelined; the pipeline is then
#: used when their exchanges took longer than their builds (on the slowest
#: rank): measured on emulated links (bench/bench_network.py), it saved 7.5% at
#: 100 Mbit/s, where exchanges took 10x the builds, and nothing at 1 Gbit/s
#: (0.6x), where the link's own CPU work competes with the builds.
PIPELINE_TRIAL = 32


class Piece(NamedTuple):
    """One piece of a pipelined histogram: a slice of every owner's block."""

    features: np.ndarray  # bool per feature: built for this piece
    ranges: list[tuple[int, int]]  # each owner's bins in it, in owner order
    counts: list[int]  # bins per owner
    own: slice  # this rank's bins, received summed


def pipeline_pieces(
    offsets: np.ndarray, bounds: np.ndarray, rank: int, n_pieces: int, align: int = 1
) -> list[Piece]:
    """Each owner's features (``bounds``) cut into ``n_pieces`` runs of about
    equal bins, cuts on multiples of ``align`` features where they fall inside
    (the blocked builder builds 64 features at a time); piece j = every owner's
    run j."""
    cuts = []
    for r in range(len(bounds) - 1):
        lo, hi = int(bounds[r]), int(bounds[r + 1])
        targets = offsets[lo] + (offsets[hi] - offsets[lo]) * np.arange(1, n_pieces) / n_pieces
        inner = np.searchsorted(offsets[lo : hi + 1], targets) + lo
        inner = np.clip(np.round(inner / align) * align, lo, hi).astype(np.int64)
        cuts.append(np.concatenate([[lo], inner, [hi]]))
    pieces = []
    for j in range(n_pieces):
        mask = np.zeros(len(offsets) - 1, bool)
        ranges = []
        for c in cuts:
            mask[c[j] : c[j + 1]] = True
            ranges.append((int(offsets[c[j]]), int(offsets[c[j + 1]])))
        pieces.append(Piece(mask, ranges, [b - a for a, b in ranges], slice(*ranges[rank])))
    return pieces


def _recovered(data: TrainingData) -> np.ndarray:
    """The features (with bins) whose most frequent bin the store does not keep:
    not sent, recovered by their owner from the leaf's totals."""
    recovered = np.flatnonzero(data.recovered)
    return recovered[np.diff(data.feature_offsets)[recovered] > 0]


class DataParallelLearner(ShardedRows, SerialLearner):
    def __init__(
        self, data: TrainingData, split_params: np.ndarray, comm: SerialComm, pipeline: int = 0
    ) -> None:
        self.comm = comm  # before SerialLearner's init: it sums bin counts over ranks
        super().__init__(data, split_params)
        offsets = data.feature_offsets
        n_pieces = self._n_pieces(data, comm, pipeline)
        # [histograms timed, build seconds, exchange seconds] until auto decides
        self._trial = [0, 0.0, 0.0] if n_pieces and pipeline < 0 else None
        self.feature_bounds = owner_blocks(np.diff(offsets), comm.size)
        align = BLOCK_FEATURES if n_pieces and data.blocks is not None else 1
        if align > 1:  # owners of whole blocks: no block is built for two pieces
            aligned = np.round(self.feature_bounds / align) * align
            self.feature_bounds = np.clip(aligned, 0, data.n_features).astype(np.int64)
            self.feature_bounds[-1] = data.n_features
        lo, hi = self.feature_bounds[comm.rank], self.feature_bounds[comm.rank + 1]
        self.owned = np.arange(lo, hi, dtype=np.int32)
        self.owned_mask = np.zeros(data.n_features, bool)
        self.owned_mask[lo:hi] = True
        self.own_bins = (int(offsets[lo]), int(offsets[hi]))
        self.subtracted_bins = slice(*self.own_bins)  # the rest is never scanned
        # Bins of each rank's block (the kind decides the values per bin).
        self.bin_counts = [
            int(offsets[self.feature_bounds[r + 1]] - offsets[self.feature_bounds[r]])
            for r in range(comm.size)
        ]
        self.wire = self._wire(data, comm)
        self._packed: dict[tuple[str, tuple[int, ...], int], np.ndarray] = {}
        pieces = pipeline_pieces(offsets, self.feature_bounds, comm.rank, n_pieces, align)
        self._trial_pieces = pieces if n_pieces else []
        self.pieces = [] if self._trial is not None else self._trial_pieces

    def _n_pieces(self, data: TrainingData, comm: SerialComm, pipeline: int) -> int:
        """The pipeline's pieces, or 0 (one exchange): ``pipeline`` pieces when
        >= 2; by default (< 0) PIPELINE_PIECES when ranks span machines and the
        histogram is large.  Only where a histogram can be built a piece of
        features at a time and every bin travels (no EFB wire packing)."""
        if comm.size == 1 or len(_recovered(data)) or (data.store.plain and self.row_wise):
            return 0
        if pipeline < 0:
            spans = comm.local_size < comm.size
            large = data.total_bins * 16 >= PIPELINE_MIN_BYTES
            pipeline = PIPELINE_PIECES if spans and large else 0
        return pipeline if pipeline >= 2 else 0

    def _wire(
        self, data: TrainingData, comm: SerialComm
    ) -> tuple[np.ndarray, list[int], np.ndarray] | None:
        """(bins sent, bins per rank, this rank's bins received) when the store
        keeps no most frequent bins for some features: those bins are not sent
        (the owner recovers them from the leaf's totals), which is what an EFB
        bundle's histogram saves.  None: every bin travels."""
        offsets, recovered = data.feature_offsets, _recovered(data)
        if not len(recovered):
            return None
        keep = np.ones(data.total_bins, bool)
        keep[offsets[recovered] + data.most_freq_bins[recovered]] = False
        sent = np.flatnonzero(keep)
        edges = offsets[self.feature_bounds]
        counts = [int(keep[edges[r] : edges[r + 1]].sum()) for r in range(comm.size)]
        lo, hi = self.own_bins
        return sent, counts, sent[(sent >= lo) & (sent < hi)]

    def leaf_histogram(
        self,
        rows: np.ndarray,
        kind: HistogramKind,
        feature_indices: np.ndarray,
        totals: tuple[float, float, float],
        hist: np.ndarray,
    ) -> None:
        # The local histogram, in the width the leaf's global count allows
        # (narrow integer words for small quantized leaves), summed to its owners.
        if self.pieces:
            self._pipelined_histogram(rows, kind, feature_indices, totals, hist)
            return
        start = time.perf_counter()
        local = kind.build_local(self, rows, feature_indices, totals[2], hist)
        lo, hi = self.own_bins
        # Only the owned bins are global; the rest of ``hist`` is never scanned.
        if self.wire is None:
            built = time.perf_counter()
            reduce_scatter_bins(self.comm, kind, local, self.bin_counts, totals[2], hist[lo:hi])
            if self._trial is not None:
                self._time_trial(built - start, time.perf_counter() - built)
        else:
            sent, counts, own = self.wire
            packed = self._scratch(local, len(sent))
            take_bins(as_2d(local), sent, as_2d(packed))
            received = reduce_scatter_bins(self.comm, kind, packed, counts, totals[2])
            put_bins(as_2d(received), own, as_2d(hist))
        kind.fix(self, hist, self.scanned_features(feature_indices), totals)

    def _time_trial(self, build: float, exchange: float) -> None:
        """Count one unpipelined histogram; after PIPELINE_TRIAL of them, every
        rank takes the pipeline when the slowest rank's exchanges outlasted its
        builds (one small allreduce, at the same call on every rank)."""
        trial = self._trial
        assert trial is not None
        trial[0] += 1
        trial[1] += build
        trial[2] += exchange
        if trial[0] == PIPELINE_TRIAL:
            builds, exchanges = self.comm.greatest(np.array(trial[1:]))
            self.pieces = self._trial_pieces if exchanges > builds else []
            self._trial = None

    def _pipelined_histogram(
        self,
        rows: np.ndarray,
        kind: HistogramKind,
        feature_indices: np.ndarray,
        totals: tuple[float, float, float],
        hist: np.ndarray,
    ) -> None:
        """leaf_histogram in pieces: piece j's exchange runs while j+1 is built."""
        count, started = totals[2], []
        for j, piece in enumerate(self.pieces):
            features = feature_indices[piece.features[feature_indices]]
            local = kind.build_local(self, rows, features, count, hist, gathered=j > 0)
            bins = self._scratch(local, sum(piece.counts), key=j)  # one buffer per piece
            np.concatenate([local[a:b] for a, b in piece.ranges], out=bins)
            send, per_bin = kind.to_wire(bins, count)
            started.append(
                self.comm.reduce_scatter_start(send, [per_bin * c for c in piece.counts])
            )
        for piece, pending in zip(self.pieces, started, strict=True):
            kind.from_wire(pending.wait(), count, hist[piece.own])
        kind.fix(self, hist, self.scanned_features(feature_indices), totals)

    def _scratch(self, like: np.ndarray, n: int, key: int = -1) -> np.ndarray:
        """A reused buffer of ``n`` bins shaped and typed as ``like``'s."""
        name = (like.dtype.str, like.shape[1:], key)
        buf = self._packed.get(name)
        if buf is None or len(buf) != n:
            buf = self._packed[name] = np.empty((n,) + like.shape[1:], like.dtype)
        return buf

    def scanned_features(self, feature_indices: np.ndarray) -> np.ndarray:
        # (a mask lookup, not intersect1d: it runs for every leaf)
        return feature_indices[self.owned_mask[feature_indices]]

    def agree(self, leaves: Sequence[LeafScan], splittable: list[np.ndarray]) -> list[np.ndarray]:
        records = [s.record for s in leaves]
        masks = agree_best_splits(self.comm, records, splittable, self.data.n_features_global)
        return [s.feature_indices[m[s.feature_indices]] for s, m in zip(leaves, masks, strict=True)]
