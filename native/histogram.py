"""Histogram kernels: per-bin (sum_gradients, sum_hessians) of one leaf.

Two layouts of the binned data, each fastest somewhere (LightGBM picks per
data set, and so do we, see ``Dataset``):

* row-wise: ``binned_rows`` is (n_samples, n_features), one cache miss per
  row rather than per value.  A small leaf is summed in row order, its
  features shared between threads; a larger one is cut into a number of row
  chunks that depends only on its row count (never on the number of
  threads), each chunk fills a private histogram and the chunks are summed in
  chunk order.  (Sharing the features on large leaves was measured slower on
  1M x 28: each thread then walks every row, and they no longer fit in cache.)
* column-wise: ``binned_cols`` is (n_features, n_samples); ``prange`` over
  features, so each feature's bins are summed by one thread in row order.

Either way the result does not depend on ``num_threads``.  The column-wise
kernels read gradients *ordered* (``ordered_gradients[i]`` belongs to row
``sample_indices[i]``, gathered once and read once per feature); the row-wise
kernels read each row's gradients once, so they read them by row index beside
the row's bins, with no gather pass (the same values added in the same order:
the same sums).  Rows are prefetched ahead (see ``prefetch``): a leaf's rows
are scattered over the whole data set.

The builders a data-parallel pipeline calls (column-wise, blocked, and the
gathers) release the GIL (``nogil``): the communication thread sends one
piece of a histogram while the next is built.
"""

import numpy as np
from numba import njit, prange

from .prefetch import PREFETCH_DISTANCE, prefetch_item, prefetch_row

# Below this many rows a leaf's histogram is built by one thread: a parallel
# region, and zeroing and summing private copies, cost more than they save on
# small leaves, and much more when another process holds the other core (the
# threads wait for each other at the barrier).  Measured best of 8192, 16384,
# 32768 on 1M x 28.
PARALLEL_MIN_ROWS = 16384
# Leaves below PARALLEL_MIN_ROWS are built with the features shared between
# threads from this many bin updates (about 300 rows of 28 features): on 1M x 28
# (rocketlake, 2 threads) 1.5-1.7x faster than one thread from 500 to 16,000
# rows, where private row chunks lose (they also change the sums).
PARALLEL_MIN_FEATURE_UPDATES = 8192
# Column-wise builds go parallel (over features) from this many bin updates:
# PARALLEL_MIN_ROWS rows of 28 features, the case the row threshold was
# measured on, or 230 rows of 2,000 features (wide data: every leaf counts).
PARALLEL_MIN_UPDATES = PARALLEL_MIN_ROWS * 28
# Histograms of this many bins are subtracted by several threads.
PARALLEL_MIN_BINS = 65536
# Row-wise chunking of large leaves: one private histogram per CHUNK_ROWS rows,
# at most MAX_CHUNKS (zeroing and summing the copies stays under ~5% of the work).
CHUNK_ROWS = 16384
MAX_CHUNKS = 8


@njit(cache=True)
def n_row_chunks(n_rows):
    """Private histograms the row-wise kernel uses for a leaf of ``n_rows`` rows."""
    if n_rows < PARALLEL_MIN_ROWS:
        return 1
    return max(2, min(MAX_CHUNKS, n_rows // CHUNK_ROWS))


@njit(cache=True, inline="always")
def _gather_range(gradients, hessians, sample_indices, lo, hi, ordered_gradients, ordered_hessians):
    for i in range(lo, hi):
        if i + PREFETCH_DISTANCE < hi:
            prefetch_item(gradients, sample_indices[i + PREFETCH_DISTANCE])
            prefetch_item(hessians, sample_indices[i + PREFETCH_DISTANCE])
        r = sample_indices[i]
        ordered_gradients[i] = gradients[r]
        ordered_hessians[i] = hessians[r]


@njit(cache=True, parallel=True)
def _gather_parallel(gradients, hessians, sample_indices, ordered_gradients, ordered_hessians):
    n = sample_indices.shape[0]
    n_blocks = (n + CHUNK_ROWS - 1) // CHUNK_ROWS
    for k in prange(n_blocks):
        _gather_range(
            gradients,
            hessians,
            sample_indices,
            k * CHUNK_ROWS,
            min(n, (k + 1) * CHUNK_ROWS),
            ordered_gradients,
            ordered_hessians,
        )


@njit(cache=True, nogil=True)
def gather_gradients(gradients, hessians, sample_indices, ordered_gradients, ordered_hessians):
    """ordered_*[i] = *[sample_indices[i]].

    Parameters
    ----------
    gradients, hessians : float32[n_samples]           # IN
    sample_indices : uint32[n_rows]                      # IN
    ordered_gradients, ordered_hessians : float32[>= n_rows]  # OUT
    """
    n = sample_indices.shape[0]
    if n >= PARALLEL_MIN_ROWS:
        _gather_parallel(gradients, hessians, sample_indices, ordered_gradients, ordered_hessians)
    else:
        _gather_range(
            gradients, hessians, sample_indices, 0, n, ordered_gradients, ordered_hessians
        )


# -- column-wise ------------------------------------------------------------------


@njit(cache=True, inline="always")
def _accumulate_column(
    column, sample_indices, ordered_gradients, ordered_hessians, start, end, hist
):
    for b in range(start, end):
        hist[b, 0] = 0.0
        hist[b, 1] = 0.0
    n = sample_indices.shape[0]
    for i in range(n):
        if i + PREFETCH_DISTANCE < n:
            prefetch_item(column, sample_indices[i + PREFETCH_DISTANCE])
        b = start + column[sample_indices[i]]
        hist[b, 0] += ordered_gradients[i]
        hist[b, 1] += ordered_hessians[i]


@njit(cache=True, parallel=True)
def _colwise_parallel(
    binned_cols,
    sample_indices,
    ordered_gradients,
    ordered_hessians,
    feature_indices,
    feature_offsets,
    hist,
):
    for j in prange(feature_indices.shape[0]):
        f = feature_indices[j]
        _accumulate_column(
            binned_cols[f],
            sample_indices,
            ordered_gradients,
            ordered_hessians,
            feature_offsets[f],
            feature_offsets[f + 1],
            hist,
        )


@njit(cache=True, nogil=True)
def build_histogram_colwise(
    binned_cols,
    sample_indices,
    ordered_gradients,
    ordered_hessians,
    feature_indices,
    feature_offsets,
    hist,
):
    """Histogram of the rows ``sample_indices`` for the features ``feature_indices``.

    Parameters
    ----------
    binned_cols : uint8|uint16[n_features, n_samples]  # IN
    sample_indices : uint32[n_rows]                     # IN
    ordered_gradients, ordered_hessians : float32[>= n_rows]  # IN
    feature_indices : int32[n_used]                     # IN features to build
    feature_offsets : int64[n_features + 1]             # IN first bin of each feature
    hist : float64[total_bins, 2]                       # OUT only the used features' bins are written
    """
    if sample_indices.shape[0] * feature_indices.shape[0] >= PARALLEL_MIN_UPDATES:
        _colwise_parallel(
            binned_cols,
            sample_indices,
            ordered_gradients,
            ordered_hessians,
            feature_indices,
            feature_offsets,
            hist,
        )
        return
    for j in range(feature_indices.shape[0]):
        f = feature_indices[j]
        _accumulate_column(
            binned_cols[f],
            sample_indices,
            ordered_gradients,
            ordered_hessians,
            feature_offsets[f],
            feature_offsets[f + 1],
            hist,
        )


# -- row-wise ---------------------------------------------------------------------


@njit(cache=True, inline="always")
def _accumulate_rows(
    binned_rows,
    sample_indices,
    gradients,
    hessians,
    feature_offsets,
    lo,
    hi,
    f_lo,
    f_hi,
    hist,
):
    """Rows lo..hi-1, features f_lo..f_hi-1 into hist (their bins zeroed first).
    Bin indices are unsigned: Numba adds a negative-index wraparound to signed
    ones (measured 6% on scattered leaves).  Gradients by row index: on 1M x 28
    (rocketlake) 4-12% faster than gathering them in order first."""
    for b in range(feature_offsets[f_lo], feature_offsets[f_hi]):
        hist[b, 0] = 0.0
        hist[b, 1] = 0.0
    for i in range(lo, hi):
        if i + PREFETCH_DISTANCE < hi:
            ahead = sample_indices[i + PREFETCH_DISTANCE]
            prefetch_row(binned_rows, ahead)
            prefetch_item(gradients, ahead)
            prefetch_item(hessians, ahead)
        r = sample_indices[i]
        row = binned_rows[r]
        g = gradients[r]
        h = hessians[r]
        for f in range(f_lo, f_hi):
            b = np.uint64(feature_offsets[f]) + np.uint64(row[f])
            hist[b, 0] += g
            hist[b, 1] += h


@njit(cache=True, parallel=True)
def _rowwise_chunked(
    binned_rows,
    sample_indices,
    gradients,
    hessians,
    feature_offsets,
    n_chunks,
    chunk_hists,
    hist,
):
    n_rows = sample_indices.shape[0]
    chunk = (n_rows + n_chunks - 1) // n_chunks
    n_features = binned_rows.shape[1]
    for c in prange(n_chunks):
        lo = c * chunk
        _accumulate_rows(
            binned_rows,
            sample_indices,
            gradients,
            hessians,
            feature_offsets,
            lo,
            min(n_rows, lo + chunk),
            0,
            n_features,
            chunk_hists[c],
        )
    # Sum the chunks in chunk order: the same float result for any thread count.
    for b in prange(hist.shape[0]):
        g = 0.0
        h = 0.0
        for c in range(n_chunks):
            g += chunk_hists[c, b, 0]
            h += chunk_hists[c, b, 1]
        hist[b, 0] = g
        hist[b, 1] = h


@njit(cache=True, parallel=True)
def _rowwise_by_features(
    binned_rows, sample_indices, gradients, hessians, feature_offsets, n_parts,
    hist,
):  # fmt: skip
    # Each thread walks every row of the leaf for its own share of the features:
    # every bin is still summed by one thread in row order (the one-chunk sum,
    # bit for bit, for any number of threads), and no private copies.
    n_features = binned_rows.shape[1]
    for t in prange(n_parts):
        _accumulate_rows(
            binned_rows,
            sample_indices,
            gradients,
            hessians,
            feature_offsets,
            0,
            sample_indices.shape[0],
            t * n_features // n_parts,
            (t + 1) * n_features // n_parts,
            hist,
        )


@njit(cache=True)
def build_histogram_rowwise(
    binned_rows,
    sample_indices,
    gradients,
    hessians,
    feature_offsets,
    n_threads,
    chunk_hists,
    hist,
):
    """Histogram of the rows ``sample_indices`` for all features, row-wise.

    Parameters
    ----------
    binned_rows : uint8|uint16[n_samples, n_features]  # IN  C-contiguous
    sample_indices : uint32[n_rows]                     # IN
    gradients, hessians : float32[n_samples]            # IN  by row index (not gathered)
    feature_offsets : int64[n_features + 1]             # IN
    n_threads : int  # IN  numba.get_num_threads() (a Numba kernel asking makes
                     #     itself uncacheable); the sums do not depend on it
    chunk_hists : float64[MAX_CHUNKS, total_bins, 2]    # scratch
    hist : float64[total_bins, 2]                       # OUT
    """
    n_rows = sample_indices.shape[0]
    n_chunks = n_row_chunks(n_rows)
    by_features = n_rows * binned_rows.shape[1] >= PARALLEL_MIN_FEATURE_UPDATES
    n_parts = min(binned_rows.shape[1], n_threads)
    if n_chunks == 1 and by_features and n_parts > 1:
        _rowwise_by_features(
            binned_rows, sample_indices, gradients, hessians, feature_offsets,
            n_parts, hist,
        )  # fmt: skip
    elif n_chunks == 1:
        _accumulate_rows(
            binned_rows,
            sample_indices,
            gradients,
            hessians,
            feature_offsets,
            0,
            n_rows,
            0,
            binned_rows.shape[1],
            hist,
        )
    else:
        _rowwise_chunked(
            binned_rows,
            sample_indices,
            gradients,
            hessians,
            feature_offsets,
            n_chunks,
            chunk_hists,
            hist,
        )


@njit(cache=True)
def subtract_histograms(parent, child, out):
    """out = parent - child: the larger child's histogram from its sibling's.

    ``out`` may be ``parent`` itself (in-place reuse of the parent's buffer).

    Parameters
    ----------
    parent, child : float64[total_bins, 2]  # IN
    out : float64[total_bins, 2]            # OUT
    """
    if parent.shape[0] >= PARALLEL_MIN_BINS:
        _subtract_parallel(parent, child, out)
        return
    for b in range(parent.shape[0]):
        out[b, 0] = parent[b, 0] - child[b, 0]
        out[b, 1] = parent[b, 1] - child[b, 1]


@njit(cache=True, parallel=True)
def _subtract_parallel(parent, child, out):
    n = parent.shape[0]
    n_blocks = (n + CHUNK_ROWS - 1) // CHUNK_ROWS
    for k in prange(n_blocks):
        for b in range(k * CHUNK_ROWS, min(n, (k + 1) * CHUNK_ROWS)):
            out[b, 0] = parent[b, 0] - child[b, 0]
            out[b, 1] = parent[b, 1] - child[b, 1]


# -- feature blocks (wide data) -----------------------------------------------------

# Features per block of a blocked binned matrix: a row's 64 one-byte bins are one
# cache line, and the block's histogram (64 x 256 bins x 16 bytes) stays in L2.
BLOCK_FEATURES = 64


@njit(cache=True, nogil=True, parallel=True)
def build_histogram_blocks(
    blocks, sample_indices, ordered_gradients, ordered_hessians, block_ids, feature_offsets, hist
):
    """Histogram of the rows ``sample_indices`` for every feature of the blocks
    ``block_ids``, one block per thread, rows in order: the column-wise
    kernel's sums, bit for bit, with one cache line read per row and block
    instead of one per value (wide data: 2,000 columns).

    Parameters
    ----------
    blocks : uint8|uint16[n_blocks, n_samples, BLOCK_FEATURES]  # IN  block k holds
                                         # features k * BLOCK_FEATURES ... (C order)
    sample_indices : uint32[n_rows]      # IN
    ordered_gradients, ordered_hessians : float32[>= n_rows]  # IN
    block_ids : int64[n_built]           # IN  blocks to build
    feature_offsets : int64[n_features + 1]  # IN
    hist : float64[total_bins, 2]        # OUT the built blocks' bins
    """
    width = blocks.shape[2]
    n_features = feature_offsets.shape[0] - 1
    n = sample_indices.shape[0]
    for k in prange(block_ids.shape[0]):
        blk = block_ids[k]
        f0 = blk * width
        f1 = min(n_features, f0 + width)
        for b in range(feature_offsets[f0], feature_offsets[f1]):
            hist[b, 0] = 0.0
            hist[b, 1] = 0.0
        data = blocks[blk]
        for i in range(n):
            if i + PREFETCH_DISTANCE < n:
                prefetch_row(data, sample_indices[i + PREFETCH_DISTANCE])
            row = data[sample_indices[i]]
            g = ordered_gradients[i]
            h = ordered_hessians[i]
            for f in range(f0, f1):
                b = np.uint64(feature_offsets[f]) + np.uint64(row[f - f0])
                hist[b, 0] += g
                hist[b, 1] += h


def feature_blocks(binned):
    """The blocked copy of a binned (n_samples, n_features) matrix that
    build_histogram_blocks reads (features past the last one are 0)."""
    n, m = binned.shape
    n_blocks = (m + BLOCK_FEATURES - 1) // BLOCK_FEATURES
    out = np.zeros((n_blocks, n, BLOCK_FEATURES), binned.dtype)
    for k in range(n_blocks):
        part = binned[:, k * BLOCK_FEATURES : (k + 1) * BLOCK_FEATURES]
        out[k, :, : part.shape[1]] = part
    return out


@njit(cache=True)
def take_bins(hist, index, out):
    """out[i] = hist[index[i]] for the rows (bins) of 2-D ``hist``: the bins
    a rank sends, packed (numpy's fancy indexing allocates and is several
    times slower on these sizes).

    Parameters
    ----------
    hist : T[total_bins, w]  # IN
    index : int64[n]         # IN  bins to take
    out : T[n, w]            # OUT
    """
    for i in range(len(index)):
        b = index[i]
        for k in range(hist.shape[1]):
            out[i, k] = hist[b, k]


@njit(cache=True)
def put_bins(values, index, hist):
    """hist[index[i]] = values[i]: the received bins back in their places.

    Parameters
    ----------
    values : T[n, w]         # IN
    index : int64[n]         # IN
    hist : T[total_bins, w]  # OUT (the other bins are left as they are)
    """
    for i in range(len(index)):
        b = index[i]
        for k in range(hist.shape[1]):
            hist[b, k] = values[i, k]
