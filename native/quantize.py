"""Quantized gradients and integer histograms (Shi et al., NeurIPS 2022).

Gradients become integers in [-(B // 2), B // 2] and hessians in [0, B]
(B = ``num_grad_quant_bins``; the scales and ranges are LightGBM's, integer
division included) by stochastic rounding: ``floor(x + u)`` with ``u``
uniform in [0, 1), so the expected integer is ``x`` exactly.  A row's
draw is a hash of (seed, stream, global row), the same however the rows are
spread over ranks.

A histogram bin holds one integer word: the gradient sum in the high half and
the hessian sum, never negative, in the low half::

    word = sum_g * 2**SHIFT + sum_h        0 <= sum_h < 2**SHIFT

Adding words adds both halves at once, and a sum of words is again a valid
word as long as the hessian sum stays below ``2**SHIFT`` and the gradient sum
within the high half: a leaf of ``n`` rows qualifies when ``n * (B + 1) < 2**SHIFT``
(see :func:`packed_width`).  So one integer add per value builds the
histogram, MPI_SUM reduces words exactly (in any order), and parent - child
subtraction stays exact.  Two widths: *narrow* int32 words (SHIFT 16) and
*wide* int64 words (SHIFT 32).  Histograms are kept wide between steps; leaves
small enough are built and sent narrow.  A leaf too large even for wide words
(over all ranks) is held as *pairs*, two int64 sums per bin, added up from
wide words of row pieces that fit (:func:`add_words_to_pairs`).
"""

import numpy as np
from numba import njit, prange

from .histogram import (
    CHUNK_ROWS,
    PARALLEL_MIN_FEATURE_UPDATES,
    PARALLEL_MIN_ROWS,
    PARALLEL_MIN_UPDATES,
    n_row_chunks,
)
from .prefetch import PREFETCH_DISTANCE, prefetch_item, prefetch_row
from .random import _splitmix64

NARROW_SHIFT = 16
WIDE_SHIFT = 32
PAIRS = 0  # leaves too large for wide words: (sum_g, sum_h) as two int64 per bin
NARROW_DTYPE = np.int32
WIDE_DTYPE = np.int64
QUANT_DTYPE = np.int8  # one quantized gradient or hessian (B <= 126)
MAX_QUANT_BINS = 126
# Rows prefetched ahead by the row-wise integer kernels: twice the float
# kernels' distance, as a row takes about half the time (measured on 1M x 28,
# leaves of 6,600 scattered rows: 15.6 ns/row at 16, 10.9 at 32, 11.5 at 64).
INT_PREFETCH_DISTANCE = 2 * PREFETCH_DISTANCE

_TO_UNIT_32 = 1.0 / 4294967296.0  # 2**-32


@njit(cache=True, inline="always")
def word_halves(word, shift):
    """(sum_g, sum_h) of a packed word: the hessian sum is the low ``shift`` bits
    (never negative), the gradient sum the rest, sign included."""
    w = np.int64(word)
    h = w & ((np.int64(1) << np.int64(shift)) - np.int64(1))
    return (w - h) >> np.int64(shift), h


@njit(cache=True, inline="always")
def _narrow_to_wide(word):
    g, h = word_halves(word, NARROW_SHIFT)
    return (g << np.int64(WIDE_SHIFT)) + h


@njit(cache=True)
def packed_width(n_rows, n_bins):
    """16 (narrow), 32 (wide) or PAIRS: how to hold the sums of ``n_rows`` rows.

    Narrow needs ``n_rows * (B + 1) < 2**16``: the hessian sum (each h <= B)
    stays below 2**16 and the gradient sum (each |g| <= B // 2) within
    int16.  Wide needs ``n_rows * (B + 1) < 2**32``.  Beyond that (859 million
    rows at B = 4, 34 million at B = 126), PAIRS: separate int64 sums.
    """
    total = np.int64(n_rows) * np.int64(n_bins + 1)
    if total < (np.int64(1) << 16):
        return NARROW_SHIFT
    if total < (np.int64(1) << 32):
        return WIDE_SHIFT
    return PAIRS


def narrow_rows(n_bins):
    """The most rows whose sums fit narrow words (packed_width is narrow up to here)."""
    return ((1 << NARROW_SHIFT) - 1) // (n_bins + 1)


def wide_rows(n_bins):
    """The most rows whose sums fit wide words."""
    return ((1 << WIDE_SHIFT) - 1) // (n_bins + 1)


@njit(cache=True, parallel=True)
def quantize_gradients(
    gradients,
    hessians,
    inv_g_scale,
    inv_h_scale,
    n_bins,
    seed,
    stream,
    row_offset,
    stochastic,
    out_g,
    out_h,
):
    """Integer gradients and hessians.

    ``x * inv_scale`` is rounded down after adding a uniform draw in [0, 1)
    (stochastic) or rounded to nearest, halves away from zero, as LightGBM
    does (not stochastic), then clipped to [-(B // 2), B // 2] (gradients) and
    [0, B] (hessians) against the last bit of rounding in the scale.  The draws for row i are the two 32-bit
    halves of hash(seed, stream, row_offset + i).

    Parameters
    ----------
    gradients, hessians : float32[n]        # IN
    inv_g_scale, inv_h_scale : float64      # IN  1 / scale (0 when all values are 0)
    n_bins : int                            # IN  B = num_grad_quant_bins
    seed, stream, row_offset : int          # IN
    stochastic : bool                       # IN
    out_g, out_h : int8[n]                  # OUT
    """
    key = _splitmix64(np.uint64(seed) ^ _splitmix64(np.uint64(stream)))
    g_max = np.float64(n_bins // 2)
    h_max = np.float64(n_bins)
    for i in prange(gradients.shape[0]):
        g = np.float64(gradients[i]) * inv_g_scale
        h = np.float64(hessians[i]) * inv_h_scale
        if stochastic:
            z = _splitmix64(key ^ np.uint64(row_offset + i))
            level_g = np.floor(g + np.float64(z & np.uint64(0xFFFFFFFF)) * _TO_UNIT_32)
            level_h = np.floor(h + np.float64(z >> np.uint64(32)) * _TO_UNIT_32)
        else:
            level_g = np.floor(abs(g) + 0.5)
            if g < 0.0:
                level_g = -level_g
            level_h = np.floor(h + 0.5)
        out_g[i] = np.int8(min(max(level_g, -g_max), g_max))
        out_h[i] = np.int8(min(max(level_h, 0.0), h_max))


@njit(cache=True)
def sum_levels(q_g, q_h, sample_indices):
    """(sum of q_g, sum of q_h) over the rows ``sample_indices``, as int64.

    Parameters
    ----------
    q_g, q_h : int8[n_samples]         # IN
    sample_indices : uint32[n_rows]    # IN
    """
    sum_g = np.int64(0)
    sum_h = np.int64(0)
    for i in range(sample_indices.shape[0]):
        r = sample_indices[i]
        sum_g += q_g[r]
        sum_h += q_h[r]
    return sum_g, sum_h


@njit(cache=True, parallel=True)
def pack_words(q_g, q_h, out):
    """out[r] = q_g[r] * 2**16 + q_h[r]: every row's narrow word, once per tree, so
    that the row-wise histogram kernels read one word per row by row index
    instead of gathering the leaf's words first (measured 1.4x on scattered
    leaves: the gather is a second pass of random reads).

    Parameters
    ----------
    q_g, q_h : int8[n_samples]     # IN
    out : int32[n_samples]         # OUT
    """
    for r in prange(q_g.shape[0]):
        out[r] = (np.int32(q_g[r]) << np.int32(NARROW_SHIFT)) + np.int32(q_h[r])


@njit(cache=True, inline="always")
def _pack_range(q_g, q_h, sample_indices, shift, lo, hi, out):
    for i in range(lo, hi):
        if i + PREFETCH_DISTANCE < hi:
            prefetch_item(q_g, sample_indices[i + PREFETCH_DISTANCE])
            prefetch_item(q_h, sample_indices[i + PREFETCH_DISTANCE])
        r = sample_indices[i]
        # Computed in int64; the value fits the narrow word when shift is 16.
        out[i] = (np.int64(q_g[r]) << np.int64(shift)) + np.int64(q_h[r])


@njit(cache=True, parallel=True)
def _pack_parallel(q_g, q_h, sample_indices, shift, out):
    n = sample_indices.shape[0]
    n_blocks = (n + CHUNK_ROWS - 1) // CHUNK_ROWS
    for k in prange(n_blocks):
        _pack_range(
            q_g, q_h, sample_indices, shift, k * CHUNK_ROWS, min(n, (k + 1) * CHUNK_ROWS), out
        )


@njit(cache=True, nogil=True)
def gather_packed(q_g, q_h, sample_indices, shift, out):
    """out[i] = q_g[r] * 2**shift + q_h[r] for r = sample_indices[i]: one word per row.

    Parameters
    ----------
    q_g, q_h : int8[n_samples]             # IN
    sample_indices : uint32[n_rows]        # IN
    shift : int                            # IN  16 (int32 out) or 32 (int64 out)
    out : int32|int64[>= n_rows]           # OUT
    """
    n = sample_indices.shape[0]
    if n >= PARALLEL_MIN_ROWS:
        _pack_parallel(q_g, q_h, sample_indices, shift, out)
    else:
        _pack_range(q_g, q_h, sample_indices, shift, 0, n, out)


# -- histograms: the float kernels' structure, one integer add per value ----------


@njit(cache=True, inline="always")
def _accumulate_rows_int(
    binned_rows, sample_indices, row_words, feature_offsets, lo, hi, f_lo, f_hi, hist
):
    """Rows lo..hi-1, features f_lo..f_hi-1 into hist (their bins zeroed first).

    Bin indices are computed unsigned: with signed ones Numba adds a
    negative-index wraparound to every add (measured 1.5x slower on rows in
    cache).  An integer add is quick, so rows are prefetched further ahead
    than in the float kernels (INT_PREFETCH_DISTANCE)."""
    for b in range(feature_offsets[f_lo], feature_offsets[f_hi]):
        hist[b] = 0
    for i in range(lo, hi):
        if i + INT_PREFETCH_DISTANCE < hi:
            ahead = sample_indices[i + INT_PREFETCH_DISTANCE]
            prefetch_row(binned_rows, ahead)
            prefetch_item(row_words, ahead)
        r = sample_indices[i]
        row = binned_rows[r]
        w = row_words[r]
        for f in range(f_lo, f_hi):
            hist[np.uint64(feature_offsets[f]) + np.uint64(row[f])] += w


@njit(cache=True, parallel=True)
def _rowwise_chunked_int(
    binned_rows, sample_indices, row_words, feature_offsets, n_chunks, chunk_hists, hist
):
    n_rows = sample_indices.shape[0]
    chunk = (n_rows + n_chunks - 1) // n_chunks
    for c in prange(n_chunks):
        lo = c * chunk
        _accumulate_rows_int(
            binned_rows,
            sample_indices,
            row_words,
            feature_offsets,
            lo,
            min(n_rows, lo + chunk),
            0,
            binned_rows.shape[1],
            chunk_hists[c],
        )
    for b in prange(hist.shape[0]):
        total = chunk_hists[0, b]
        for c in range(1, n_chunks):
            total += chunk_hists[c, b]
        hist[b] = total


@njit(cache=True, parallel=True)
def _rowwise_by_features_int(
    binned_rows, sample_indices, row_words, feature_offsets, n_parts, hist
):
    # Small leaves: each thread walks every row for its share of the features
    # (native.histogram._rowwise_by_features; integer sums are exact anyway).
    n_features = binned_rows.shape[1]
    for t in prange(n_parts):
        _accumulate_rows_int(
            binned_rows,
            sample_indices,
            row_words,
            feature_offsets,
            0,
            sample_indices.shape[0],
            t * n_features // n_parts,
            (t + 1) * n_features // n_parts,
            hist,
        )


@njit(cache=True)
def build_int_histogram_rowwise(
    binned_rows, sample_indices, row_words, feature_offsets, n_threads, chunk_hists, hist
):
    """Narrow integer histogram of the rows ``sample_indices``, all features,
    row-wise (the caller knows the leaf fits narrow words: packed_width).

    Parameters
    ----------
    binned_rows : uint8|uint16[n_samples, n_features]  # IN  C-contiguous
    sample_indices : uint32[n_rows]                     # IN
    row_words : int32[n_samples]                        # IN  every row's narrow word (pack_words)
    feature_offsets : int64[n_features + 1]             # IN
    n_threads : int  # IN  numba.get_num_threads() (build_histogram_rowwise)
    chunk_hists : int32[MAX_CHUNKS, total_bins]         # scratch (C order, whole rows:
                                                        # a sliced view would be indexed with strides)
    hist : int32[total_bins]                            # OUT
    """
    n_rows = sample_indices.shape[0]
    n_chunks = n_row_chunks(n_rows)
    n_features = binned_rows.shape[1]
    by_features = n_rows * n_features >= PARALLEL_MIN_FEATURE_UPDATES
    n_parts = min(n_features, n_threads)
    if n_chunks == 1 and by_features and n_parts > 1:
        _rowwise_by_features_int(
            binned_rows, sample_indices, row_words, feature_offsets, n_parts, hist
        )
    elif n_chunks == 1:
        _accumulate_rows_int(
            binned_rows, sample_indices, row_words, feature_offsets, 0, n_rows, 0, n_features, hist
        )
    else:
        _rowwise_chunked_int(
            binned_rows, sample_indices, row_words, feature_offsets, n_chunks, chunk_hists, hist
        )


@njit(cache=True, parallel=True)
def build_wide_histogram_rowwise(
    binned_rows,
    sample_indices,
    row_words,
    feature_offsets,
    piece_rows,
    narrow_scratch,
    wide_partials,
    hist,
):
    """Wide (int64) histogram of a leaf too large for narrow words, accumulated in
    narrow int32 words all the same: pieces of at most ``piece_rows`` rows (which
    fit narrow) are summed in an int32 histogram half the size of a wide one
    (measured 1.2x), then widened and added.  Integer sums: the result does not
    depend on how pieces are spread over threads.

    Parameters
    ----------
    binned_rows : uint8|uint16[n_samples, n_features]  # IN  C-contiguous
    sample_indices : uint32[n_rows]                     # IN
    row_words : int32[n_samples]                        # IN  every row's narrow word (pack_words)
    feature_offsets : int64[n_features + 1]             # IN
    piece_rows : int                                    # IN  rows whose sums fit narrow words
    narrow_scratch : int32[MAX_CHUNKS, total_bins]      # scratch
    wide_partials : int64[MAX_CHUNKS, total_bins]       # scratch
    hist : int64[total_bins]                            # OUT
    """
    n_rows = sample_indices.shape[0]
    total_bins = hist.shape[0]
    # As many pieces per worker, of equal size (unequal pieces left one thread
    # with most of a medium leaf: measured 1.3x slower than even chunks).
    n_workers = n_row_chunks(n_rows)
    per_worker = max(1, -(-n_rows // (piece_rows * n_workers)))
    n_pieces = n_workers * per_worker
    piece = -(-n_rows // n_pieces)
    for c in prange(n_workers):
        partial = wide_partials[c]
        partial[:] = 0
        scratch = narrow_scratch[c]
        for p in range(c * per_worker, (c + 1) * per_worker):
            lo = min(n_rows, p * piece)
            _accumulate_rows_int(
                binned_rows,
                sample_indices,
                row_words,
                feature_offsets,
                lo,
                min(n_rows, lo + piece),
                0,
                binned_rows.shape[1],
                scratch,
            )
            for b in range(total_bins):
                partial[b] += _narrow_to_wide(scratch[b])
    for b in prange(total_bins):
        total = wide_partials[0, b]
        for c in range(1, n_workers):
            total += wide_partials[c, b]
        hist[b] = total


@njit(cache=True, inline="always")
def _accumulate_column_int(column, sample_indices, ordered_words, start, end, hist):
    for b in range(start, end):
        hist[b] = 0
    n = sample_indices.shape[0]
    for i in range(n):
        if i + PREFETCH_DISTANCE < n:
            prefetch_item(column, sample_indices[i + PREFETCH_DISTANCE])
        hist[start + column[sample_indices[i]]] += ordered_words[i]


@njit(cache=True, parallel=True)
def _colwise_parallel_int(
    binned_cols, sample_indices, ordered_words, feature_indices, feature_offsets, hist
):
    for j in prange(feature_indices.shape[0]):
        f = feature_indices[j]
        _accumulate_column_int(
            binned_cols[f],
            sample_indices,
            ordered_words,
            feature_offsets[f],
            feature_offsets[f + 1],
            hist,
        )


@njit(cache=True, nogil=True)
def build_int_histogram_colwise(
    binned_cols, sample_indices, ordered_words, feature_indices, feature_offsets, hist
):
    """Integer histogram of the rows ``sample_indices`` for ``feature_indices``, column-wise.

    Parameters
    ----------
    binned_cols : uint8|uint16[n_features, n_samples]  # IN
    sample_indices : uint32[n_rows]                     # IN
    ordered_words : int32|int64[>= n_rows]              # IN
    feature_indices : int32[n_used]                     # IN
    feature_offsets : int64[n_features + 1]             # IN
    hist : int32|int64[total_bins]                      # OUT only the used features' bins
    """
    if sample_indices.shape[0] * feature_indices.shape[0] >= PARALLEL_MIN_UPDATES:
        _colwise_parallel_int(
            binned_cols, sample_indices, ordered_words, feature_indices, feature_offsets, hist
        )
        return
    for j in range(feature_indices.shape[0]):
        f = feature_indices[j]
        _accumulate_column_int(
            binned_cols[f],
            sample_indices,
            ordered_words,
            feature_offsets[f],
            feature_offsets[f + 1],
            hist,
        )


@njit(cache=True, nogil=True, parallel=True)
def build_int_histogram_blocks(
    blocks, sample_indices, ordered_words, block_ids, feature_offsets, hist
):
    """Integer histogram of the rows ``sample_indices`` for every feature of the
    blocks ``block_ids``, one block per thread (native.histogram's blocked
    layout: one cache line per row and block on wide data); integer sums, so
    the column-wise kernel's exactly.

    Parameters
    ----------
    blocks : uint8|uint16[n_blocks, n_samples, BLOCK_FEATURES]  # IN
    sample_indices : uint32[n_rows]                     # IN
    ordered_words : int32|int64[>= n_rows]              # IN  packed (g, h) per row
    block_ids : int64[n_built]                          # IN  blocks to build
    feature_offsets : int64[n_features + 1]             # IN
    hist : int32|int64[total_bins]                      # OUT the built blocks' bins
    """
    width = blocks.shape[2]
    n_features = feature_offsets.shape[0] - 1
    n = sample_indices.shape[0]
    for k in prange(block_ids.shape[0]):
        blk = block_ids[k]
        f0 = blk * width
        f1 = min(n_features, f0 + width)
        for b in range(feature_offsets[f0], feature_offsets[f1]):
            hist[b] = 0
        data = blocks[blk]
        for i in range(n):
            if i + PREFETCH_DISTANCE < n:
                prefetch_row(data, sample_indices[i + PREFETCH_DISTANCE])
            row = data[sample_indices[i]]
            w = ordered_words[i]
            for f in range(f0, f1):
                hist[np.uint64(feature_offsets[f]) + np.uint64(row[f - f0])] += w


# -- conversions --------------------------------------------------------------------


@njit(cache=True)
def widen_words(narrow, out):
    """Narrow int32 words -> wide int64 words (the same sums).

    Parameters
    ----------
    narrow : int32[m]    # IN
    out : int64[m]       # OUT
    """
    for b in range(narrow.shape[0]):
        out[b] = _narrow_to_wide(narrow[b])


@njit(cache=True)
def narrow_words(wide, out):
    """Wide int64 words -> narrow int32 words; the caller knows the sums fit (packed_width).

    Parameters
    ----------
    wide : int64[m]      # IN
    out : int32[m]       # OUT
    """
    for b in range(wide.shape[0]):
        g, h = word_halves(wide[b], WIDE_SHIFT)
        out[b] = np.int32((g << np.int64(NARROW_SHIFT)) + h)


@njit(cache=True)
def add_words_to_pairs(wide, pairs):
    """pairs[b] += (sum_g, sum_h) of the wide word wide[b]: wide words into the
    int64 pairs of a leaf too large for them (summed piece by piece).

    Parameters
    ----------
    wide : int64[m]          # IN
    pairs : int64[m, 2]      # IN/OUT
    """
    for b in range(wide.shape[0]):
        g, h = word_halves(wide[b], WIDE_SHIFT)
        pairs[b, 0] += g
        pairs[b, 1] += h


@njit(cache=True)
def unpack_word(word):
    """(sum_g, sum_h) integers of one wide word."""
    return word_halves(word, WIDE_SHIFT)
