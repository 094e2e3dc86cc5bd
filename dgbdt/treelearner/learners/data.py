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

A rank with no rows still takes part in every collective with zeros (LightGBM
#4026: stale buffers on empty ranks gave huge leaf values).  The reduce-scatter
sends every feature's bins, also those ``feature_fraction`` left out of this
tree (never scanned; fixed counts keep the owner blocks simple), so its bytes
do not fall with ``feature_fraction``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ...native.histogram import put_bins, take_bins
from .base import ShardedRows, agree_best_splits, as_2d, owner_blocks, reduce_scatter_bins
from .serial import SerialLearner

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ...boosting.loop import TrainingData
    from ...distributed.comm import SerialComm
    from ..histograms import HistogramKind
    from .base import LeafScan


class DataParallelLearner(ShardedRows, SerialLearner):
    def __init__(self, data: TrainingData, split_params: np.ndarray, comm: SerialComm) -> None:
        self.comm = comm  # before SerialLearner's init: it sums bin counts over ranks
        super().__init__(data, split_params)
        offsets = data.feature_offsets
        self.feature_bounds = owner_blocks(np.diff(offsets), comm.size)
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
        self._packed: dict[tuple[str, tuple[int, ...]], np.ndarray] = {}

    def _wire(
        self, data: TrainingData, comm: SerialComm
    ) -> tuple[np.ndarray, list[int], np.ndarray] | None:
        """(bins sent, bins per rank, this rank's bins received) when the store
        keeps no most frequent bins for some features: those bins are not sent
        (the owner recovers them from the leaf's totals), which is what an EFB
        bundle's histogram saves.  None: every bin travels."""
        offsets, recovered = data.feature_offsets, np.flatnonzero(data.recovered)
        recovered = recovered[np.diff(offsets)[recovered] > 0]
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
        local = kind.build_local(self, rows, feature_indices, totals[2], hist)
        lo, hi = self.own_bins
        # Only the owned bins are global; the rest of ``hist`` is never scanned.
        if self.wire is None:
            reduce_scatter_bins(self.comm, kind, local, self.bin_counts, totals[2], hist[lo:hi])
        else:
            sent, counts, own = self.wire
            packed = self._scratch(local, len(sent))
            take_bins(as_2d(local), sent, as_2d(packed))
            received = reduce_scatter_bins(self.comm, kind, packed, counts, totals[2])
            put_bins(as_2d(received), own, as_2d(hist))
        kind.fix(self, hist, self.scanned_features(feature_indices), totals)

    def _scratch(self, like: np.ndarray, n: int) -> np.ndarray:
        """A reused buffer of ``n`` bins shaped and typed as ``like``'s."""
        key = (like.dtype.str, like.shape[1:])
        buf = self._packed.get(key)
        if buf is None or len(buf) != n:
            buf = self._packed[key] = np.empty((n,) + like.shape[1:], like.dtype)
        return buf

    def scanned_features(self, feature_indices: np.ndarray) -> np.ndarray:
        # (a mask lookup, not intersect1d: it runs for every leaf)
        return feature_indices[self.owned_mask[feature_indices]]

    def agree(self, leaves: Sequence[LeafScan], splittable: list[np.ndarray]) -> list[np.ndarray]:
        records = [s.record for s in leaves]
        masks = agree_best_splits(self.comm, records, splittable, self.data.n_features_global)
        return [s.feature_indices[m[s.feature_indices]] for s, m in zip(leaves, masks, strict=True)]
