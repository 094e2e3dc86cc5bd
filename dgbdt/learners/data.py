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
   same on every rank, with the features splittable in the leaf (which its
   children scan: LightGBM's ``is_splittable``, which LightGBM's own
   data-parallel learner skips; here it is applied as on one process);
5. rows are partitioned locally; child counts are summed globally.

A rank with no rows still takes part in every collective with zeros (LightGBM
#4026: stale buffers on empty ranks gave huge leaf values).  The reduce-scatter
sends every feature's bins, also those ``feature_fraction`` left out of this
tree (never scanned; fixed counts keep the owner blocks simple), so its bytes
do not fall with ``feature_fraction``.
"""

import numpy as np

from ..native.common import SPLIT_FEATURE, SPLIT_GAIN, SPLIT_RECORD_SIZE
from ..native.quantize import NARROW_DTYPE, widen_words
from .serial import SerialLearner


def owner_blocks(n_bins, n_ranks):
    """Contiguous feature blocks, one per rank, with about equal bin counts.

    Returns int64[n_ranks + 1] feature boundaries: rank r owns features
    ``bounds[r]:bounds[r+1]`` (possibly none).
    """
    n_features = len(n_bins)
    cumulative = np.concatenate([[0], np.cumsum(n_bins)])
    total = cumulative[-1]
    bounds = [0]
    for r in range(1, n_ranks):
        target = total * r / n_ranks
        f = int(np.searchsorted(cumulative, target))
        bounds.append(min(max(f, bounds[-1]), n_features))
    bounds.append(n_features)
    return np.asarray(bounds, dtype=np.int64)


def best_of(records):
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


def agree_best_split(comm, record, splittable, n_features):
    """Replace this rank's ``record`` by the best of every rank's, the same on all
    ranks; returns a bool[n_features] mask of the features splittable on some
    rank (``splittable``: the global indices this rank found splittable).

    The flags travel in the same allgather as the record, packed 8 per byte
    into the bytes of extra float64 slots (bytes only: MPI never does
    arithmetic on them), so one collective still agrees a leaf."""
    n_slots = -(-n_features // 64)
    mine = np.zeros(SPLIT_RECORD_SIZE + n_slots)
    mine[:SPLIT_RECORD_SIZE] = record
    flags = np.zeros(n_slots * 64, np.uint8)
    flags[splittable] = 1
    mine[SPLIT_RECORD_SIZE:].view(np.uint8)[:] = np.packbits(flags)
    gathered = comm.allgather(mine)
    best = best_of(gathered[:, :SPLIT_RECORD_SIZE])
    if best is None:
        record[SPLIT_FEATURE] = -1.0
        record[SPLIT_GAIN] = -np.inf
    else:
        record[:] = best
    packed = np.ascontiguousarray(gathered[:, SPLIT_RECORD_SIZE:]).view(np.uint8)
    return np.unpackbits(np.bitwise_or.reduce(packed, axis=0))[:n_features].astype(bool)


class DataParallelLearner(SerialLearner):
    def __init__(self, data, split_params, comm):
        self.comm = comm  # before SerialLearner's init: it sums bin counts over ranks
        super().__init__(data, split_params)
        offsets = data.feature_offsets
        self.feature_bounds = owner_blocks(np.diff(offsets), comm.size)
        lo, hi = self.feature_bounds[comm.rank], self.feature_bounds[comm.rank + 1]
        self.owned = np.arange(lo, hi, dtype=np.int32)
        self.owned_mask = np.zeros(data.n_features, bool)
        self.owned_mask[lo:hi] = True
        self.own_bins = (int(offsets[lo]), int(offsets[hi]))
        # Reduce-scatter counts in bins; float histograms send 2 float64 per bin,
        # integer (quantized) ones one word per bin, or two int64 (pairs).
        self.bin_counts = [
            int(offsets[self.feature_bounds[r + 1]] - offsets[self.feature_bounds[r]])
            for r in range(comm.size)
        ]
        self.recv_counts = [2 * c for c in self.bin_counts]

    def sum_over_rows(self, values):
        return self.comm.allreduce(np.asarray(values))

    def leaf_histogram(
        self, sample_indices, ordered_gradients, ordered_hessians, feature_indices, hist
    ):
        super().leaf_histogram(
            sample_indices, ordered_gradients, ordered_hessians, feature_indices, hist
        )
        owned = self.comm.reduce_scatter(hist.reshape(-1), self.recv_counts)
        lo, hi = self.own_bins
        # Only the owned bins are global; the rest of ``hist`` is never scanned.
        hist[lo:hi] = owned.reshape(-1, 2)

    def leaf_histogram_int(self, sample_indices, quant, shift, feature_indices, hist):
        # Words go over the wire in the width the grower chose from the leaf's
        # global row count (narrow int32 for small leaves): MPI_SUM adds them
        # exactly, and the packing guarantees no carry between halves.
        local = self.local_int_histogram(sample_indices, quant, shift, feature_indices)
        pairs = local.ndim == 2  # a leaf too large for wide words: two int64 per bin
        owned = self.comm.reduce_scatter(
            local.reshape(-1), self.recv_counts if pairs else self.bin_counts
        )
        lo, hi = self.own_bins
        if owned.dtype == NARROW_DTYPE:
            widen_words(owned, hist[lo:hi])
        else:
            hist[lo:hi] = owned.reshape(-1, 2) if pairs else owned

    def scanned_features(self, feature_indices):
        # (a mask lookup, not intersect1d: it runs for every leaf)
        return feature_indices[self.owned_mask[feature_indices]]

    def agree(self, record, feature_indices, splittable):
        mask = agree_best_split(self.comm, record, splittable, self.data.n_features_global)
        return feature_indices[mask[feature_indices]]
