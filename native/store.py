"""Kernels over a Dataset's bin store (dgbdt.data.store): reading a feature's bins,
building histograms, replaying a tree, and choosing EFB bundles.

A store has two parts (see native.common's FM_* layout):

* ``dense``: (n_samples, n_cols) group bins, C or F order.  A column holds one
  feature (its bins as they are) or an EFB bundle of features that are never
  off their most frequent bin in the same row (Ke et al., NeurIPS 2017,
  section 4).  ``col_map[col_start[c] + group_bin]`` is the histogram bin a
  column's group bin adds to; a bundle's group bin 0 ("every feature at its
  most frequent bin") adds to its first feature's most frequent bin, a slot
  the split scan recomputes from the leaf's totals.

      bundle of f (4 bins, most frequent 0) and g (3 bins, most frequent 0):
      group bin   0     1   2   3   4   5
      means       -     f1  f2  f3  g1  g2       (f0, g0: the leaf minus the rest)

* ``sparse``: a row-wise CSR of histogram bins (``indptr`` int64[n_samples+1],
  ``entries`` uint32, sorted within a row): a row's bins of the sparse
  features where they are off their most frequent bin (LightGBM's multi-value
  bin).  Histograms skip what is not stored; the most frequent bins are
  recovered from the leaf's totals (native.split.fix_most_frequent_bins,
  recover_*_bins here).

Float sums follow the dense kernels' order exactly (rows in order; in row
layout, the same row chunks summed in chunk order), so a model does not
depend on how its features are stored.
"""

import numpy as np
from numba import njit, prange
from numba.extending import overload

from .common import FM_COL, FM_DEFAULT, FM_LO, FM_SKIP, FM_WIDTH
from .histogram import n_row_chunks
from .predict import binned_goes_left
from .prefetch import PREFETCH_DISTANCE, prefetch_item, prefetch_row
from .quantize import WIDE_SHIFT, word_halves


@njit(cache=True, inline="always")
def stored_bin(dense, indptr, entries, feature_map, feature_offsets, f, r):
    """Feature ``f``'s bin in row ``r``."""
    c = feature_map[f, FM_COL]
    if c >= 0:
        s = np.int64(dense[r, c]) - feature_map[f, FM_LO]
        if s < 0 or s >= feature_map[f, FM_WIDTH]:
            return feature_map[f, FM_DEFAULT]
        return s if s < feature_map[f, FM_SKIP] else s + 1
    lo, hi = indptr[r], indptr[r + 1]
    first = feature_offsets[f]
    while lo < hi:  # the first entry >= first
        mid = (lo + hi) >> 1
        if np.int64(entries[mid]) < first:
            lo = mid + 1
        else:
            hi = mid
    if lo < indptr[r + 1] and np.int64(entries[lo]) < feature_offsets[f + 1]:
        return np.int64(entries[lo]) - first
    return feature_map[f, FM_DEFAULT]


@njit(cache=True, parallel=True)
def decode_feature(dense, indptr, entries, feature_map, feature_offsets, f, rows, out):
    """out[rows[i]] = feature ``f``'s bin in row rows[i].

    Parameters
    ----------
    dense : uint8|uint16[n_samples, n_cols]  # IN
    indptr : int64[n_samples + 1]; entries : uint32[nnz]  # IN  the sparse part
    feature_map : int64[n_features, FEATURE_MAP_SIZE]  # IN
    feature_offsets : int64[n_features + 1]  # IN
    f : int                                  # IN
    rows : uint32[n_rows]                    # IN
    out : uint16[n_samples]                  # OUT (only rows[i] written)
    """
    for i in prange(rows.shape[0]):
        r = rows[i]
        out[r] = stored_bin(dense, indptr, entries, feature_map, feature_offsets, f, r)


@njit(cache=True, parallel=True)
def add_tree_stored(
    dense,
    indptr,
    entries,
    feature_map,
    feature_offsets,
    nan_bins,
    split_feature,
    threshold_bin,
    default_left,
    left_child,
    right_child,
    leaf_value,
    scores,
    categories,
):
    """scores[r] += the value of the leaf row r reaches (native.predict.add_tree_binned
    on a store; ``categories`` as there).

    Parameters
    ----------
    (the store as decode_feature; nan_bins : int32[n_features])  # IN
    split_feature, threshold_bin : int32[n_nodes]; default_left : uint8[n_nodes]
    left_child, right_child : int32[n_nodes]; leaf_value : float64[n_leaves]  # IN one tree
    scores : float64[n_samples]              # IN/OUT
    """
    n_nodes = split_feature.shape[0]
    for r in prange(scores.shape[0]):
        node = 0 if n_nodes > 0 else -1
        while node >= 0:
            f = split_feature[node]
            b = np.int64(stored_bin(dense, indptr, entries, feature_map, feature_offsets, f, r))
            go_left = binned_goes_left(
                b, f, node, nan_bins, threshold_bin, default_left, categories
            )
            node = left_child[node] if go_left else right_child[node]
        scores[r] += leaf_value[~node]


# -- histograms -------------------------------------------------------------------
# A leaf's histogram needs only the bins of the features its split scan reads
# (LightGBM builds only ``is_feature_used`` ones): the builders take the dense
# columns holding them (``cols``, from store_columns) and whether any is in the
# sparse part.  The bins of other columns are left 0.  Wide one-hot data is
# where this pays: after a few splits most of its thousands of features hold
# too few rows of a leaf to split, and their bundles and sparse entries are
# skipped.  Which columns are built does not change a sum.


@njit(cache=True)
def store_columns(features, feature_map, seen, cols):
    """The dense columns holding any of ``features``, ascending, and whether
    any of them is in the sparse part.

    Parameters
    ----------
    features : int32|int64[n_used]       # IN
    feature_map : int64[n_features, FEATURE_MAP_SIZE]  # IN
    seen : uint8[n_cols]                 # scratch (any contents)
    cols : int64[n_cols]                 # OUT cols[:n] the columns

    Returns
    -------
    n : int; sparse : bool
    """
    seen[:] = 0
    sparse = False
    for j in range(features.shape[0]):
        c = feature_map[features[j], FM_COL]
        if c >= 0:
            seen[c] = 1
        else:
            sparse = True
    n = 0
    for c in range(seen.shape[0]):
        if seen[c]:
            cols[n] = c
            n += 1
    return n, sparse


@njit(cache=True, inline="always")
def _add_rows(dense, indptr, entries, col_start, col_map, cols, sparse, rows, og, oh, lo, hi, hist):
    """Rows lo..hi-1 (positions in ``rows``) added into ``hist``: the dense
    columns ``cols`` through their maps, then (``sparse``) the row's sparse
    entries."""
    n_cols = cols.shape[0]
    # every column: a plain loop over them (no indirection: 1.3x faster on
    # the flights table's 11 columns), else through ``cols``
    every = n_cols == dense.shape[1]
    for i in range(lo, hi):
        if i + PREFETCH_DISTANCE < hi:  # a leaf's rows are scattered (native.prefetch)
            ahead = rows[i + PREFETCH_DISTANCE]
            prefetch_row(dense, ahead)
            if sparse:
                prefetch_item(indptr, ahead)
        r = rows[i]
        g = og[i]
        h = oh[i]
        # unsigned indices: no negative-index wraparound (native.histogram)
        if every:
            for c in range(n_cols):
                b = np.uint64(col_map[np.uint64(col_start[c]) + np.uint64(dense[r, c])])
                hist[b, 0] += g
                hist[b, 1] += h
        else:
            for j in range(n_cols):
                c = cols[j]
                b = np.uint64(col_map[np.uint64(col_start[c]) + np.uint64(dense[r, c])])
                hist[b, 0] += g
                hist[b, 1] += h
        if sparse:
            for k in range(indptr[r], indptr[r + 1]):
                b = np.uint64(entries[k])
                hist[b, 0] += g
                hist[b, 1] += h


@njit(cache=True, parallel=True)
def _rows_chunked(
    dense, indptr, entries, col_start, col_map, cols, sparse, rows, og, oh, n_chunks, chunks, hist
):
    n_rows = rows.shape[0]
    chunk = (n_rows + n_chunks - 1) // n_chunks
    for c in prange(n_chunks):
        chunks[c, :, :] = 0.0
        lo = c * chunk
        _add_rows(
            dense,
            indptr,
            entries,
            col_start,
            col_map,
            cols,
            sparse,
            rows,
            og,
            oh,
            lo,
            min(n_rows, lo + chunk),
            chunks[c],
        )
    # In chunk order from 0.0: the dense row-wise kernel's sums, bit for bit.
    for b in prange(hist.shape[0]):
        g = 0.0
        h = 0.0
        for c in range(n_chunks):
            g += chunks[c, b, 0]
            h += chunks[c, b, 1]
        hist[b, 0] = g
        hist[b, 1] = h


@njit(cache=True, inline="always")
def _add_column(dense, col_start, col_map, c, rows, og, oh, hist):
    base = col_start[c]
    for i in range(rows.shape[0]):
        b = col_map[base + np.int64(dense[rows[i], c])]
        hist[b, 0] += og[i]
        hist[b, 1] += oh[i]


@njit(cache=True, inline="always")
def _add_sparse(indptr, entries, rows, og, oh, hist):
    for i in range(rows.shape[0]):
        r = rows[i]
        for k in range(indptr[r], indptr[r + 1]):
            b = entries[k]
            hist[b, 0] += og[i]
            hist[b, 1] += oh[i]


@njit(cache=True, parallel=True)
def _columns_and_sparse(
    dense, indptr, entries, col_start, col_map, cols, sparse, rows, og, oh, n_threads, hist
):  # fmt: skip
    # Column layout: every bin summed by one thread in row order, whatever the
    # number of threads.  A thread takes a run of dense columns; the last also
    # walks the sparse part once, weighed as 2 + 2 x its entries per row
    # columns (measured on the flights one-hot table: 1.3x faster than
    # cutting the sparse part into bin slices, each walking every row).
    n_cols = cols.shape[0]
    weight = 2.0 + 2.0 * indptr[-1] / max(1, indptr.shape[0] - 1) if sparse else 0.0
    n_parts = max(1, min(n_threads, n_cols + 1))
    share = (n_cols + weight) / n_parts
    for p in prange(n_parts):
        lo = min(n_cols, int(p * share + 0.5))
        hi = n_cols if p == n_parts - 1 else min(n_cols, int((p + 1) * share + 0.5))
        for j in range(lo, hi):
            _add_column(dense, col_start, col_map, cols[j], rows, og, oh, hist)
        if sparse and p == n_parts - 1:
            _add_sparse(indptr, entries, rows, og, oh, hist)


@njit(cache=True, nogil=True)
def build_store_histogram(
    dense, indptr, entries, col_start, col_map, cols, sparse, rows, og, oh, row_layout,
    n_threads, chunks, hist,
):  # fmt: skip
    """Float histogram of the rows ``rows`` over the columns ``cols`` of a store.

    Parameters
    ----------
    dense : uint8|uint16[n_samples, n_cols]   # IN
    indptr : int64[n_samples + 1]; entries : uint32[nnz]  # IN
    col_start : int64[n_cols + 1]; col_map : int64[...]   # IN  group bin -> histogram bin
    cols : int64[n_built]                     # IN  dense columns to build (store_columns)
    sparse : bool                             # IN  build the sparse part too
    rows : uint32[n_rows]                     # IN
    og, oh : float32[>= n_rows]               # IN  gradients of rows[i], in order
    row_layout : bool                         # IN  sum as the row-wise kernel (chunks)
    n_threads : int                           # IN  numba.get_num_threads(): runs of
                                              # columns (sums do not depend on it)
    chunks : float64[MAX_CHUNKS, total_bins, 2]  # scratch (row layout)
    hist : float64[total_bins, 2]             # OUT (the most frequent bins of bundled
                                              # and sparse features hold no sums;
                                              # bins of other columns 0)
    """
    n_rows = rows.shape[0]
    n_chunks = n_row_chunks(n_rows) if row_layout else 1
    if n_chunks > 1:
        _rows_chunked(
            dense, indptr, entries, col_start, col_map, cols, sparse, rows, og, oh, n_chunks,
            chunks, hist,
        )  # fmt: skip
        return
    hist[:, :] = 0.0
    # Column layout: by runs of columns at any size (a leaf of 500 to 16,000
    # rows 2-3.5x faster on 2 threads than one thread row by row, whose every
    # row misses the cache once per column).
    if row_layout:
        _add_rows(
            dense, indptr, entries, col_start, col_map, cols, sparse, rows, og, oh, 0, n_rows,
            hist,
        )  # fmt: skip
    else:
        _columns_and_sparse(
            dense, indptr, entries, col_start, col_map, cols, sparse, rows, og, oh,
            max(1, n_threads), hist,
        )  # fmt: skip


@njit(cache=True, inline="always")
def _add_rows_int(
    dense, indptr, entries, col_start, col_map, cols, sparse, rows, words, lo, hi, hist
):
    n_cols = cols.shape[0]
    every = n_cols == dense.shape[1]  # as _add_rows
    for i in range(lo, hi):
        r = rows[i]
        w = words[i]
        if every:
            for c in range(n_cols):
                hist[col_map[col_start[c] + np.int64(dense[r, c])]] += w
        else:
            for j in range(n_cols):
                c = cols[j]
                hist[col_map[col_start[c] + np.int64(dense[r, c])]] += w
        if sparse:
            for k in range(indptr[r], indptr[r + 1]):
                hist[entries[k]] += w


@njit(cache=True, parallel=True)
def _rows_chunked_int(
    dense, indptr, entries, col_start, col_map, cols, sparse, rows, words, n_chunks, chunks, hist
):
    n_rows = rows.shape[0]
    chunk = (n_rows + n_chunks - 1) // n_chunks
    for c in prange(n_chunks):
        chunks[c, :] = 0
        lo = c * chunk
        _add_rows_int(
            dense,
            indptr,
            entries,
            col_start,
            col_map,
            cols,
            sparse,
            rows,
            words,
            lo,
            min(n_rows, lo + chunk),
            chunks[c],
        )
    for b in prange(hist.shape[0]):
        total = chunks[0, b]
        for c in range(1, n_chunks):
            total += chunks[c, b]
        hist[b] = total


@njit(cache=True, nogil=True)
def build_store_int_histogram(
    dense, indptr, entries, col_start, col_map, cols, sparse, rows, words, chunks, hist
):
    """Integer histogram (packed words, exact in any order) of the rows ``rows``.

    Parameters
    ----------
    (the store, ``cols`` and ``sparse`` as build_store_histogram)
    words : int32|int64[>= n_rows]      # IN  packed word of rows[i] (gather_packed)
    chunks : int32|int64[MAX_CHUNKS, total_bins]  # scratch, the words' dtype
    hist : int32|int64[total_bins]      # OUT the words' dtype
    """
    n_rows = rows.shape[0]
    n_chunks = n_row_chunks(n_rows)
    if n_chunks > 1:
        _rows_chunked_int(
            dense, indptr, entries, col_start, col_map, cols, sparse, rows, words, n_chunks,
            chunks, hist,
        )  # fmt: skip
        return
    hist[:] = 0
    _add_rows_int(
        dense, indptr, entries, col_start, col_map, cols, sparse, rows, words, 0, n_rows, hist
    )


@njit(cache=True)
def recover_int_bins(hist, features, feature_offsets, most_freq_bins, recovered, total_g, total_h):
    """The most frequent bin of each recovered feature of an integer histogram
    (wide words or pairs) = the leaf's totals minus the feature's other bins:
    exact, so equal to accumulating it.

    Parameters
    ----------
    hist : int64[total_bins] | int64[total_bins, 2]  # IN/OUT
    features : int32[n_used]; feature_offsets : int64[n_features + 1]  # IN
    most_freq_bins : int32[n_features]; recovered : uint8[n_features]  # IN
    total_g, total_h : int64                 # IN  the leaf's integer sums
    """
    for j in range(features.shape[0]):
        f = features[j]
        if not recovered[f]:
            continue
        start, end = feature_offsets[f], feature_offsets[f + 1]
        m = start + most_freq_bins[f]
        g, h = np.int64(total_g), np.int64(total_h)
        for b in range(start, end):
            if b != m:
                bg, bh = _int_bin(hist, b)
                g -= bg
                h -= bh
        _set_int_bin(hist, m, g, h)


def _int_bin(hist, b):
    """(sum_g, sum_h) of bin ``b`` of wide words or pairs."""


@overload(_int_bin, inline="always")
def _int_bin_impl(hist, b):
    if hist.ndim == 2:
        return lambda hist, b: (np.int64(hist[b, 0]), np.int64(hist[b, 1]))
    return lambda hist, b: word_halves(hist[b], WIDE_SHIFT)


def _set_int_bin(hist, b, g, h):
    """Bin ``b`` of wide words or pairs = (g, h)."""


@overload(_set_int_bin, inline="always")
def _set_int_bin_impl(hist, b, g, h):
    if hist.ndim == 2:

        def set_pair(hist, b, g, h):
            hist[b, 0] = g
            hist[b, 1] = h

        return set_pair

    def set_word(hist, b, g, h):
        hist[b] = (g << np.int64(WIDE_SHIFT)) + h

    return set_word


# -- bundling ---------------------------------------------------------------------


@njit(cache=True)
def find_bundles(order, row_ptr, rows, widths, n_total, max_width, window, group_of):
    """Greedy exclusive feature bundling (Ke et al. 2017, Algorithm 3), lossless.

    Features are taken in ``order`` (most non-default rows first); each joins
    the newest of the last ``window`` bundles that has room for its bins and
    shares no row with it (checked on every row, not a sample: no value is
    lost), else starts a bundle.  Only the ``window`` newest bundles keep a
    row bitmap, so memory is window x n_total / 8 bytes and time about
    window x the non-default entries.

    Parameters
    ----------
    order : int64[n_candidates]       # IN  feature indices, in bundling order
    row_ptr : int64[n_features + 1]; rows : int64[...]  # IN  each feature's
                                      #     non-default global rows
    widths : int64[n_features]        # IN  group bins a feature takes
    n_total : int                     # IN  global rows
    max_width : int                   # IN  group bins a bundle may hold (bin 0 included)
    window : int                      # IN
    group_of : int64[n_features]      # OUT bundle of each candidate (0, 1, ...);
                                      #     other entries untouched
    """
    n_words = (n_total + 63) // 64
    bitmaps = np.zeros((window, n_words), np.uint64)
    slot_group = np.full(window, -1, np.int64)
    group_width = np.zeros(order.shape[0], np.int64)
    group_rows = np.zeros(order.shape[0], np.int64)
    n_groups = 0
    for f in order:
        lo, hi = row_ptr[f], row_ptr[f + 1]
        chosen = -1
        for back in range(min(window, n_groups)):
            g = n_groups - 1 - back
            slot = g % window
            if group_width[g] + widths[f] > max_width or group_rows[g] + hi - lo > n_total:
                continue
            clash = False
            for k in range(lo, hi):
                r = rows[k]
                if bitmaps[slot, r >> 6] & (np.uint64(1) << np.uint64(r & 63)):
                    clash = True
                    break
            if not clash:
                chosen = g
                break
        if chosen < 0:
            chosen = n_groups
            n_groups += 1
            slot = chosen % window
            bitmaps[slot, :] = 0
            slot_group[slot] = chosen
            group_width[chosen] = 1  # the shared bin 0
        slot = chosen % window
        for k in range(lo, hi):
            r = rows[k]
            bitmaps[slot, r >> 6] |= np.uint64(1) << np.uint64(r & 63)
        group_width[chosen] += widths[f]
        group_rows[chosen] += hi - lo
        group_of[f] = chosen
    return n_groups
