"""Histogram kernels: per-bin (sum_gradients, sum_hessians, count) of one leaf.

Two layouts of the binned data, each fastest somewhere (LightGBM picks per
data set, and so do we, see ``Dataset``):

* column-wise: ``binned_cols`` is (n_features, n_samples); ``prange`` over
  features, so each feature's bins are owned by one thread.
* row-wise: ``binned_rows`` is (n_samples, n_features); rows are cut into a
  number of chunks that depends only on the row count (never on the number of
  threads), each chunk fills a private histogram, and the chunks are summed
  in chunk order.  Either way the result does not depend on ``num_threads``.

Gradients are passed *ordered*: ``ordered_gradients[i]`` belongs to row
``sample_indices[i]``, so the inner loops read them sequentially.
"""
import numpy as np
from numba import njit, prange

# Row-wise chunking: at most MAX_CHUNKS private histograms, each covering at
# least MIN_CHUNK_ROWS rows, so zeroing and summing the private copies stays a
# small fraction of the work.
MAX_CHUNKS = 16
MIN_CHUNK_ROWS = 16384


@njit(cache=True)
def n_row_chunks(n_rows):
    """Number of private histograms the row-wise kernel uses for ``n_rows``."""
    n = (n_rows + MIN_CHUNK_ROWS - 1) // MIN_CHUNK_ROWS
    return max(1, min(MAX_CHUNKS, n))


@njit(cache=True, parallel=True)
def gather_gradients(gradients, hessians, sample_indices, ordered_gradients, ordered_hessians):
    """ordered_*[i] = *[sample_indices[i]].

    Parameters
    ----------
    gradients, hessians : float32[n_samples]           # IN
    sample_indices : uint32[n_rows]                      # IN
    ordered_gradients, ordered_hessians : float32[>= n_rows]  # OUT
    """
    for i in prange(sample_indices.shape[0]):
        r = sample_indices[i]
        ordered_gradients[i] = gradients[r]
        ordered_hessians[i] = hessians[r]


@njit(cache=True, parallel=True)
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
    n_rows = sample_indices.shape[0]
    for j in prange(feature_indices.shape[0]):
        f = feature_indices[j]
        start = feature_offsets[f]
        for b in range(start, feature_offsets[f + 1]):
            hist[b, 0] = 0.0
            hist[b, 1] = 0.0
            hist[b, 2] = 0.0
        column = binned_cols[f]
        for i in range(n_rows):
            b = start + column[sample_indices[i]]
            hist[b, 0] += ordered_gradients[i]
            hist[b, 1] += ordered_hessians[i]
            hist[b, 2] += 1.0


@njit(cache=True, parallel=True)
def build_histogram_rowwise(binned_rows, sample_indices, ordered_gradients, ordered_hessians,
                            feature_offsets, chunk_hists, hist):
    """Histogram of the rows ``sample_indices`` for all features, row-wise.

    Parameters
    ----------
    binned_rows : uint8|uint16[n_samples, n_features]  # IN
    sample_indices : uint32[n_rows]                     # IN
    ordered_gradients, ordered_hessians : float32[>= n_rows]  # IN
    feature_offsets : int64[n_features + 1]             # IN
    chunk_hists : float64[>= n_row_chunks(n_rows), total_bins, 3]  # scratch
    hist : float64[total_bins, 3]                       # OUT
    """
    n_rows = sample_indices.shape[0]
    n_features = binned_rows.shape[1]
    total_bins = hist.shape[0]
    n_chunks = n_row_chunks(n_rows)
    chunk_size = (n_rows + n_chunks - 1) // n_chunks
    offsets = feature_offsets[:n_features]
    for c in prange(n_chunks):
        local = chunk_hists[c]
        local[:, :] = 0.0
        lo = c * chunk_size
        hi = min(n_rows, lo + chunk_size)
        for i in range(lo, hi):
            row = binned_rows[sample_indices[i]]
            g = ordered_gradients[i]
            h = ordered_hessians[i]
            for f in range(n_features):
                b = offsets[f] + row[f]
                local[b, 0] += g
                local[b, 1] += h
                local[b, 2] += 1.0
    # Sum the chunks in chunk order: the same float result for any thread count.
    for b in prange(total_bins):
        s0 = 0.0
        s1 = 0.0
        s2 = 0.0
        for c in range(n_chunks):
            s0 += chunk_hists[c, b, 0]
            s1 += chunk_hists[c, b, 1]
            s2 += chunk_hists[c, b, 2]
        hist[b, 0] = s0
        hist[b, 1] = s1
        hist[b, 2] = s2


@njit(cache=True, parallel=True)
def subtract_histograms(parent, child, out):
    """out = parent - child: the larger child's histogram from its sibling's.

    ``out`` may be ``parent`` itself (in-place reuse of the parent's buffer).

    Parameters
    ----------
    parent, child : float64[total_bins, 3]  # IN
    out : float64[total_bins, 3]            # OUT
    """
    for b in prange(parent.shape[0]):
        out[b, 0] = parent[b, 0] - child[b, 0]
        out[b, 1] = parent[b, 1] - child[b, 1]
        out[b, 2] = parent[b, 2] - child[b, 2]
