"""Partition of a leaf's row indices by a split.

The grower keeps all row indices of the tree in one array; each leaf owns a
contiguous slice of it.  Splitting a leaf reorders its slice stably into
[left rows | right rows], so row order inside a leaf stays ascending (cache
friendly gathers) and is the same on every rank.  A stable partition is
unique, so the parallel version (blocks of rows, then a prefix sum) gives the
same result as the serial one for any number of blocks or threads.
"""

import numpy as np
from numba import njit, prange, types
from numba.extending import overload

from .prefetch import PREFETCH_DISTANCE, prefetch_item

# Leaves with fewer rows are partitioned by one thread.
PARALLEL_MIN_ROWS = 65536


@njit(cache=True, inline="always")
def _goes_left(b, threshold_bin, nan_left, nan_bin):
    # Arithmetic, not branches: the direction is data-dependent and would
    # mispredict about half the time.
    is_nan = np.int64(b == nan_bin)
    return is_nan * nan_left + (1 - is_nan) * np.int64(b <= threshold_bin)


def _bin_at(column, row):
    """The split feature's bin in ``row``: ``column`` is its binned column, or
    (the store column holding it, lo, width, skip, default): a feature of an
    EFB bundle (dgbdt.data.store's FM_* fields), decoded here rather than into a
    column first."""


@overload(_bin_at, inline="always")
def _bin_at_impl(column, row):
    if isinstance(column, types.Array):
        return lambda column, row: np.int64(column[row])

    def bundled(column, row):
        # arithmetic, not branches, as _goes_left
        s = np.int64(column[0][row]) - column[1]
        inside = np.int64(s >= 0) & np.int64(s < column[2])
        b = s + np.int64(s >= column[3])
        return column[4] + inside * (b - column[4])

    return bundled


def _prefetch_bin(column, row):
    """Prefetch what ``_bin_at`` will read."""


@overload(_prefetch_bin, inline="always")
def _prefetch_bin_impl(column, row):
    if isinstance(column, types.Array):
        return lambda column, row: prefetch_item(column, row)
    return lambda column, row: prefetch_item(column[0], row)


@njit(cache=True, inline="always")
def _split_block(
    sample_indices,
    lo,
    hi,
    column,
    threshold_bin,
    nan_left,
    nan_bin,
    left_out,
    left_at,
    right_out,
    right_at,
    left_mask,
):
    """Rows lo..hi-1 -> left_out[left_at...] and right_out[right_at...]; returns
    n_left.  A non-empty ``left_mask`` (categorical splits) decides instead:
    bin b goes left when left_mask[b]."""
    n_left = 0
    n_right = 0
    by_mask = left_mask.shape[0] > 0
    for i in range(lo, hi):
        if i + PREFETCH_DISTANCE < hi:
            _prefetch_bin(column, sample_indices[i + PREFETCH_DISTANCE])
        row = sample_indices[i]
        if by_mask:
            step = np.int64(left_mask[_bin_at(column, row)])
        else:
            step = _goes_left(_bin_at(column, row), threshold_bin, nan_left, nan_bin)
        left_out[left_at + n_left] = row
        right_out[right_at + n_right] = row
        n_left += step
        n_right += 1 - step
    return n_left


@njit(cache=True, parallel=True)
def _partition_parallel(
    sample_indices, column, threshold_bin, nan_left, nan_bin, n_blocks, scratch, left_mask
):
    n = sample_indices.shape[0]
    block = (n + n_blocks - 1) // n_blocks
    left_counts = np.zeros(n_blocks, np.int64)
    lefts = scratch[0]
    rights = scratch[1]
    for k in prange(n_blocks):
        lo = k * block
        hi = min(n, lo + block)
        left_counts[k] = _split_block(
            sample_indices,
            lo,
            hi,
            column,
            threshold_bin,
            nan_left,
            nan_bin,
            lefts,
            lo,
            rights,
            lo,
            left_mask,
        )
    left_starts = np.zeros(n_blocks, np.int64)
    right_starts = np.zeros(n_blocks, np.int64)
    n_left_total = 0
    for k in range(n_blocks):
        left_starts[k] = n_left_total
        n_left_total += left_counts[k]
    right_at = n_left_total
    for k in range(n_blocks):
        right_starts[k] = right_at
        right_at += min(n, (k + 1) * block) - k * block - left_counts[k]
    for k in prange(n_blocks):
        lo = k * block
        n_block = min(n, lo + block) - lo
        nl = left_counts[k]
        sample_indices[left_starts[k] : left_starts[k] + nl] = lefts[lo : lo + nl]
        sample_indices[right_starts[k] : right_starts[k] + n_block - nl] = rights[
            lo : lo + n_block - nl
        ]
    return n_left_total


@njit(cache=True)
def partition_rows(
    sample_indices, column, threshold_bin, default_left, nan_bin, n_threads, scratch, left_mask=None
):
    """Stable in-place partition of ``sample_indices`` by ``column[row] <= threshold_bin``.

    Rows in the NaN bin go left when ``default_left``.  A categorical split
    passes ``left_mask`` instead (uint8 per bin of the feature: 1 goes left).

    Parameters
    ----------
    sample_indices : uint32[n_rows]     # IN/OUT the leaf's slice
    column : uint8|uint16[n_samples]    # IN  binned values of the split feature (may be
                                        # strided), or a bundled feature's (store column,
                                        # lo, width, skip, default): see _bin_at
    threshold_bin : int                 # IN
    default_left : bool                 # IN
    nan_bin : int                       # IN  -1 when the feature has no NaN bin
    n_threads : int                     # IN  threads to use for large leaves
    scratch : uint32[2, >= n_rows]      # scratch

    Returns
    -------
    n_left : int
    """
    n = sample_indices.shape[0]
    nan_left = np.int64(1 if default_left else 0)
    if left_mask is None:
        mask = np.empty(0, np.uint8)
    else:
        mask = left_mask
    if n >= PARALLEL_MIN_ROWS and n_threads > 1:
        return _partition_parallel(
            sample_indices, column, threshold_bin, nan_left, nan_bin, 4 * n_threads, scratch, mask
        )
    # Serial: lefts compacted in place (slot n_left <= i was already read), rights aside.
    n_left = _split_block(
        sample_indices,
        0,
        n,
        column,
        threshold_bin,
        nan_left,
        nan_bin,
        sample_indices,
        0,
        scratch[0],
        0,
        mask,
    )
    sample_indices[n_left:n] = scratch[0, : n - n_left]
    return n_left


@njit(cache=True, inline="always")
def _add_leaf_value(scores, sample_indices, begin, end, value):
    for i in range(begin, end):
        if i + PREFETCH_DISTANCE < end:
            prefetch_item(scores, sample_indices[i + PREFETCH_DISTANCE])
        scores[sample_indices[i]] += value


@njit(cache=True, parallel=True)
def _add_leaf_values_parallel(scores, sample_indices, leaf_begin, leaf_count, leaf_values):
    # leaves own disjoint rows: each score gets one addition, in any order
    for leaf in prange(leaf_values.shape[0]):
        begin = leaf_begin[leaf]
        _add_leaf_value(scores, sample_indices, begin, begin + leaf_count[leaf], leaf_values[leaf])


@njit(cache=True)
def add_leaf_values(scores, sample_indices, leaf_begin, leaf_count, leaf_values):
    """scores[row] += leaf_values[leaf] for the rows of every leaf.

    Parameters
    ----------
    scores : float64[n_samples]          # IN/OUT
    sample_indices : uint32[n_rows]      # IN  rows grouped by leaf
    leaf_begin, leaf_count : int64[n_leaves]  # IN  each leaf's slice
    leaf_values : float64[n_leaves]      # IN
    """
    if leaf_count.sum() >= PARALLEL_MIN_ROWS and leaf_values.shape[0] > 1:
        _add_leaf_values_parallel(scores, sample_indices, leaf_begin, leaf_count, leaf_values)
        return
    for leaf in range(leaf_values.shape[0]):
        begin = leaf_begin[leaf]
        _add_leaf_value(scores, sample_indices, begin, begin + leaf_count[leaf], leaf_values[leaf])
