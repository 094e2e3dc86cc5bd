"""The learner interface, and the pieces the distributed strategies share.

``Learner`` names every call the grower (dgbdt.treelearner.grower) makes on a strategy.
"Global" means the same value on every rank, computed from every rank's rows
and features; "local" means this rank's own rows or columns.  The grower
holds one histogram kind for the whole training (dgbdt.treelearner.histograms), passes
it into every histogram and split call, and never branches on it.

The pieces below are composed by the strategies: a reduce-scatter of
histogram bins to their owners (``reduce_scatter_bins``), the agreement on
one best split per leaf (``agree_best_splits``), the no-split record (``no_split``),
owner blocks of features balanced by bins (``owner_blocks``), and sums over
every rank's rows (``ShardedRows``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple, Protocol

import numpy as np

from ...native.common import SPLIT_CAT_BINS, SPLIT_CAT_COUNT, SPLIT_FEATURE, SPLIT_GAIN
from ...native.voting import owner_bounds

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ...boosting.loop import TrainingData
    from ...data.store import BinStore
    from ...distributed.comm import SerialComm
    from ...models.tree import Tree
    from ..constraints import LeafContext
    from ..histograms import HistogramKind


class LeafScan(NamedTuple):
    """One leaf's split search, as the grower asks it of a strategy."""

    hist: np.ndarray  # the leaf's histogram (leaf_histogram's)
    feature_indices: np.ndarray  # the features it may split on
    totals: tuple[float, float, float]  # global (sum_g, sum_h, count)
    record: np.ndarray  # OUT its best split record, the same on every rank
    local_rows: np.ndarray  # this rank's rows of the leaf
    node: LeafContext | None  # its constraints, or None


class Learner(Protocol):
    """What the grower calls; each strategy implements all of it."""

    data: TrainingData  # this rank's binned rows and columns
    # The bins of a leaf's histogram the grower subtracts for the larger child:
    # those ``leaf_histogram`` fills (data-parallel: the owned block only).
    subtracted_bins: slice

    def sum_over_rows(self, values: np.ndarray) -> np.ndarray:
        """Global: ``values`` summed over every rank's rows (element-wise;
        one process, or feature-parallel where every rank has all rows: as is)."""

    def global_totals(
        self, sum_gradients: float, sum_hessians: float, count: float
    ) -> tuple[float, float, float]:
        """Global (sum_g, sum_h, count) of a leaf from this rank's local sums."""

    def global_counts(self, n_left: int, n_right: int) -> tuple[int, int]:
        """Global row counts of two new children from this rank's local ones."""

    def histogram_features(self, feature_indices: np.ndarray) -> np.ndarray:
        """Local: the features (this rank's indices) whose bins this rank builds."""

    def scanned_features(self, feature_indices: np.ndarray) -> np.ndarray:
        """Local: the features whose bins this rank's split scan reads."""

    def leaf_histogram(
        self,
        rows: np.ndarray,
        kind: HistogramKind,
        feature_indices: np.ndarray,
        totals: tuple[float, float, float],
        hist: np.ndarray,
    ) -> None:
        """``hist`` = the histogram of a leaf's ``rows`` (local rows, gathered by
        ``kind`` where it needs them) that this strategy's ``best_splits`` reads:
        global on the features this rank scans (serial, data, feature), or local
        (voting: the vote decides what is sent).  ``totals``: the leaf's global
        (sum_g, sum_h, count)."""

    def best_splits(self, kind: HistogramKind, leaves: Sequence[LeafScan]) -> list[np.ndarray]:
        """Each leaf's ``record`` = its best split over its ``feature_indices``,
        global (the same on every rank); returns per leaf those of its
        ``feature_indices`` splittable in it, which its children scan
        (LightGBM's ``is_splittable``).  The leaves scanned together (a split's
        two children) come in one call, so the strategies agree them in one
        collective; every rank passes the same leaves."""

    def partition(self, sample_indices: np.ndarray, record: np.ndarray, scratch: np.ndarray) -> int:
        """Reorder a leaf's local ``sample_indices`` by ``record`` (left rows
        first, stably); returns the number of local rows going left."""

    def add_tree_scores(
        self, tree: Tree, store: BinStore, nan_bins: np.ndarray, scores: np.ndarray
    ) -> None:
        """``scores`` += the tree's values of local rows the partition did not
        place (out-of-bag rows, validation rows)."""


class ShardedRows:
    """Piece of the row-sharding strategies (data, voting): sums over ranks.
    Needs ``self.comm``."""

    comm: SerialComm  # set by the strategy

    def sum_over_rows(self, values: np.ndarray) -> np.ndarray:
        return self.comm.allreduce(np.asarray(values))

    def global_totals(
        self, sum_gradients: float, sum_hessians: float, count: float
    ) -> tuple[float, float, float]:
        g, h, c = self.sum_over_rows(np.array([sum_gradients, sum_hessians, count]))
        return float(g), float(h), float(c)

    def global_counts(self, n_left: int, n_right: int) -> tuple[int, int]:
        left, right = self.sum_over_rows(np.array([n_left, n_right], np.int64))
        return int(left), int(right)


def owner_blocks(n_bins: np.ndarray, n_ranks: int) -> np.ndarray:
    """Contiguous feature blocks, one per rank, with about equal bin counts
    (native.voting.owner_bounds: also the rule of voting's elected bins).

    Returns int64[n_ranks + 1] feature boundaries: rank r owns features
    ``bounds[r]:bounds[r+1]`` (possibly none).
    """
    return owner_bounds(np.asarray(n_bins, np.int64), n_ranks)


def reduce_scatter_bins(
    comm: SerialComm,
    kind: HistogramKind,
    bins: np.ndarray,
    bin_counts: Sequence[int],
    count: float,
    out: np.ndarray | None = None,
) -> np.ndarray:
    """Sum ``bins`` (this rank's, in owner order) over ranks; rank r receives the
    ``bin_counts[r]`` bins of its block, written into ``out`` (a fresh buffer
    when None) in the leaf's layout.  ``kind`` decides what travels: for a
    leaf of ``count`` global rows, float pairs or integer words of the
    narrowest exact width."""
    send, per_bin = kind.to_wire(bins, count)
    received = comm.reduce_scatter(send, [per_bin * c for c in bin_counts])
    if out is None:
        shape, dtype = kind.wire_shape(int(bin_counts[comm.rank]), count)
        out = np.empty(shape, dtype)
    return kind.from_wire(received, count, out)


def left_mask_of(record: np.ndarray, n_bins: int) -> np.ndarray | None:
    """uint8 per bin of the split feature, 1 for the bins a categorical split
    record sends left; None for a numeric split."""
    n_left = int(record[SPLIT_CAT_COUNT]) if len(record) > SPLIT_CAT_COUNT else 0
    if n_left == 0:
        return None
    mask = np.zeros(n_bins, np.uint8)
    mask[record[SPLIT_CAT_BINS : SPLIT_CAT_BINS + n_left].astype(np.int64)] = 1
    return mask


def no_split(record: np.ndarray) -> None:
    """Make ``record`` say "no split"."""
    record[:] = 0.0
    record[SPLIT_FEATURE] = -1.0
    record[SPLIT_GAIN] = -np.inf


def best_of(records: np.ndarray) -> np.ndarray | None:
    """The best split among per-rank records: max gain, then lower feature
    (LightGBM's SplitInfo::operator>; one rank scans each feature)."""
    best = None
    for rec in records:
        if rec[SPLIT_FEATURE] < 0:
            continue
        if best is None or (rec[SPLIT_GAIN], -rec[SPLIT_FEATURE]) > (
            best[SPLIT_GAIN],
            -best[SPLIT_FEATURE],
        ):
            best = rec
    return best


def agree_best_splits(
    comm: SerialComm,
    records: Sequence[np.ndarray],
    splittable: Sequence[np.ndarray],
    n_features: int,
) -> list[np.ndarray]:
    """Replace each leaf's ``records[i]`` by the best of every rank's, the same
    on all ranks; returns per leaf a bool[n_features] mask of the features
    splittable on some rank (``splittable[i]``: the global indices this rank
    found splittable).  The leaves scanned together (a split's two children)
    are agreed in one collective; every rank passes the same number of leaves.

    The flags travel in the same allgather as the records, packed 8 per byte
    into the bytes of extra float64 slots (bytes only: MPI never does
    arithmetic on them)."""
    n_slots = -(-n_features // 64)
    size = len(records[0])  # longer with categorical splits (native.common)
    width = size + n_slots
    mine = np.zeros(len(records) * width)
    for i, (record, found) in enumerate(zip(records, splittable, strict=True)):
        mine[i * width : i * width + size] = record
        flags = np.zeros(n_slots * 64, np.uint8)
        flags[found] = 1
        mine[i * width + size : (i + 1) * width].view(np.uint8)[:] = np.packbits(flags)
    gathered = comm.allgather(mine)
    masks = []
    for i, record in enumerate(records):
        leaf = gathered[:, i * width : (i + 1) * width]
        best = best_of(leaf[:, :size])
        if best is None:
            record[SPLIT_FEATURE] = -1.0
            record[SPLIT_GAIN] = -np.inf
        else:
            record[:] = best
        packed = np.ascontiguousarray(leaf[:, size:]).view(np.uint8)
        masks.append(np.unpackbits(np.bitwise_or.reduce(packed, axis=0))[:n_features].astype(bool))
    return masks


def as_2d(bins: np.ndarray) -> np.ndarray:
    """(bins, values per bin) view of a histogram or bins taken from one:
    integer words are one value per bin (native.histogram.take_bins/put_bins)."""
    return bins if bins.ndim == 2 else bins.reshape(-1, 1)
