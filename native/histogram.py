"""Histogram kernels: per-bin (sum_gradients, sum_hessians, count) of one leaf.

Two layouts of the binned data, each fastest somewhere (LightGBM picks per
data set, and so do we, see ``Dataset``):

* column-wise: ``binned_cols`` is (n_features, n_samples); ``prange`` over
  features, so each feature's bins are owned by one thread.
* row-wise: ``binned_rows`` is (n_samples, n_features); threads split the
  features and each walks all rows (one cache miss per row, not per value).
  Either way each bin is summed by one thread in row order: the result does
  not depend on ``num_threads`` and is the same for both layouts.

Gradients are passed *ordered*: ``ordered_gradients[i]`` belongs to row
``sample_indices[i]``, so the inner loops read them sequentially.
"""
import numpy as np
from numba import njit, prange

from .prefetch import PREFETCH_DISTANCE, prefetch_item, prefetch_row

# Below this many rows a leaf's histogram is built by one thread: a parallel
# region costs more than it saves on small leaves, and much more when another
# process holds the other core (the threads wait for each other at the barrier).
PARALLEL_MIN_ROWS = 32768


@njit(cache=True, parallel=True)
def _gather_parallel(gradients, hessians, sample_indices, ordered_gradients, ordered_hessians):
    n = sample_indices.shape[0]
    for i in prange(n):
        if i + PREFETCH_DISTANCE < n:
            prefetch_item(gradients, sample_indices[i + PREFETCH_DISTANCE])
            prefetch_item(hessians, sample_indices[i + PREFETCH_DISTANCE])
        r = sample_indices[i]
        ordered_gradients[i] = gradients[r]
        ordered_hessians[i] = hessians[r]


@njit(cache=True)
def gather_gradients(gradients, hessians, sample_indices, ordered_gradients, ordered_hessians):
    """ordered_*[i] = *[sample_indices[i]].

    Parameters
    ----------
    gradients, hessians : float32[n_samples]           # IN
    sample_indices : uint32[n_rows]                      # IN
    ordered_gradients, ordered_hessians : float32[>= n_rows]  # OUT
    """
    if sample_indices.shape[0] >= PARALLEL_MIN_ROWS:
        _gather_parallel(gradients, hessians, sample_indices, ordered_gradients, ordered_hessians)
        return
    n = sample_indices.shape[0]
    for i in range(n):
        if i + PREFETCH_DISTANCE < n:
            prefetch_item(gradients, sample_indices[i + PREFETCH_DISTANCE])
            prefetch_item(hessians, sample_indices[i + PREFETCH_DISTANCE])
        r = sample_indices[i]
        ordered_gradients[i] = gradients[r]
        ordered_hessians[i] = hessians[r]


@njit(cache=True, inline="always")
def _accumulate_column(column, sample_indices, ordered_gradients, ordered_hessians,
                       start, end, hist):
    for b in range(start, end):
        hist[b, 0] = 0.0
        hist[b, 1] = 0.0
        hist[b, 2] = 0.0
    n = sample_indices.shape[0]
    for i in range(n):
        if i + PREFETCH_DISTANCE < n:
            prefetch_item(column, sample_indices[i + PREFETCH_DISTANCE])
        b = start + column[sample_indices[i]]
        hist[b, 0] += ordered_gradients[i]
        hist[b, 1] += ordered_hessians[i]
        hist[b, 2] += 1.0


@njit(cache=True, parallel=True)
def _colwise_parallel(binned_cols, sample_indices, ordered_gradients, ordered_hessians,
                      feature_indices, feature_offsets, hist):
    for j in prange(feature_indices.shape[0]):
        f = feature_indices[j]
        _accumulate_column(binned_cols[f], sample_indices, ordered_gradients, ordered_hessians,
                           feature_offsets[f], feature_offsets[f + 1], hist)


@njit(cache=True)
def build_histogram_colwise(binned_cols, sample_indices, ordered_gradients, ordered_hessians,
                            feature_indices, feature_offsets, hist):
    """Histogram of the rows ``sample_indices`` for the features ``feature_indices``.

    Parameters
    ----------
    binned_cols : uint8|uint16[n_features, n_samples]  # IN
    sample_indices : uint32[n_rows]                     # IN
    ordered_gradients, ordered_hessians : float32[>= n_rows]  # IN
    feature_indices : int32[n_used]                     # IN features to build
    feature_offsets : int64[n_features + 1]             # IN first bin of each feature
    hist : float64[total_bins, 3]                       # OUT only the used features' bins are written
    """
    if sample_indices.shape[0] >= PARALLEL_MIN_ROWS:
        _colwise_parallel(binned_cols, sample_indices, ordered_gradients, ordered_hessians,
                          feature_indices, feature_offsets, hist)
        return
    for j in range(feature_indices.shape[0]):
        f = feature_indices[j]
        _accumulate_column(binned_cols[f], sample_indices, ordered_gradients, ordered_hessians,
                           feature_offsets[f], feature_offsets[f + 1], hist)


@njit(cache=True, inline="always")
def _accumulate_rows(binned_rows, sample_indices, ordered_gradients, ordered_hessians,
                     feature_offsets, f_lo, f_hi, hist):
    for b in range(feature_offsets[f_lo], feature_offsets[f_hi]):
        hist[b, 0] = 0.0
        hist[b, 1] = 0.0
        hist[b, 2] = 0.0
    n = sample_indices.shape[0]
    for i in range(n):
        if i + PREFETCH_DISTANCE < n:
            prefetch_row(binned_rows, sample_indices[i + PREFETCH_DISTANCE])
        row = binned_rows[sample_indices[i]]
        g = ordered_gradients[i]
        h = ordered_hessians[i]
        for f in range(f_lo, f_hi):
            b = feature_offsets[f] + row[f]
            hist[b, 0] += g
            hist[b, 1] += h
            hist[b, 2] += 1.0


@njit(cache=True, parallel=True)
def _rowwise_by_feature_groups(binned_rows, sample_indices, ordered_gradients, ordered_hessians,
                               feature_offsets, n_groups, hist):
    n_features = binned_rows.shape[1]
    for grp in prange(n_groups):
        _accumulate_rows(binned_rows, sample_indices, ordered_gradients, ordered_hessians,
                         feature_offsets, grp * n_features // n_groups,
                         (grp + 1) * n_features // n_groups, hist)


@njit(cache=True)
def build_histogram_rowwise(binned_rows, sample_indices, ordered_gradients, ordered_hessians,
                            feature_offsets, n_threads, hist):
    """Histogram of the rows ``sample_indices`` for all features, row-wise.

    Large leaves: the threads split the *features*; each walks every row of
    the leaf and updates only its own block of features.  Every bin is summed
    by one thread in row order, so there are no private copies to zero and
    reduce, and the result is bit-identical for any number of threads (and to
    the column-wise kernel).

    Parameters
    ----------
    binned_rows : uint8|uint16[n_samples, n_features]  # IN  C-contiguous
    sample_indices : uint32[n_rows]                     # IN
    ordered_gradients, ordered_hessians : float32[>= n_rows]  # IN
    feature_offsets : int64[n_features + 1]             # IN
    n_threads : int                                     # IN  threads to use
    hist : float64[total_bins, 3]                       # OUT
    """
    n_features = binned_rows.shape[1]
    n_groups = min(n_features, n_threads)
    if sample_indices.shape[0] < PARALLEL_MIN_ROWS or n_groups <= 1:
        _accumulate_rows(binned_rows, sample_indices, ordered_gradients, ordered_hessians,
                         feature_offsets, 0, n_features, hist)
    else:
        _rowwise_by_feature_groups(binned_rows, sample_indices, ordered_gradients,
                                   ordered_hessians, feature_offsets, n_groups, hist)


@njit(cache=True)
def subtract_histograms(parent, child, out):
    """out = parent - child: the larger child's histogram from its sibling's.

    ``out`` may be ``parent`` itself (in-place reuse of the parent's buffer).

    Parameters
    ----------
    parent, child : float64[total_bins, 3]  # IN
    out : float64[total_bins, 3]            # OUT
    """
    for b in range(parent.shape[0]):
        out[b, 0] = parent[b, 0] - child[b, 0]
        out[b, 1] = parent[b, 1] - child[b, 1]
        out[b, 2] = parent[b, 2] - child[b, 2]
