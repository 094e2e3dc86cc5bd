"""Partition of a leaf's row indices by a split.

The grower keeps all row indices of the tree in one array; each leaf owns a
contiguous slice of it.  Splitting a leaf reorders its slice stably into
[left rows | right rows], so row order inside a leaf stays ascending (cache
friendly gathers) and is the same on every rank.
"""
from numba import njit


@njit(cache=True)
def partition_rows(sample_indices, column, threshold_bin, default_left, nan_bin, scratch):
    """Stable in-place partition of ``sample_indices`` by ``column[row] <= threshold_bin``.

    Rows in the NaN bin go left when ``default_left``.

    Parameters
    ----------
    sample_indices : uint32[n_rows]     # IN/OUT the leaf's slice
    column : uint8|uint16[n_samples]    # IN  binned values of the split feature
    threshold_bin : int                 # IN
    default_left : bool                 # IN
    nan_bin : int                       # IN  -1 when the feature has no NaN bin
    scratch : uint32[>= n_rows]         # scratch for the right rows

    Returns
    -------
    n_left : int
    """
    n_left = 0
    n_right = 0
    for i in range(sample_indices.shape[0]):
        row = sample_indices[i]
        b = column[row]
        if b == nan_bin:
            go_left = default_left
        else:
            go_left = b <= threshold_bin
        if go_left:
            sample_indices[n_left] = row
            n_left += 1
        else:
            scratch[n_right] = row
            n_right += 1
    sample_indices[n_left:n_left + n_right] = scratch[:n_right]
    return n_left


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
    for leaf in range(leaf_values.shape[0]):
        value = leaf_values[leaf]
        begin = leaf_begin[leaf]
        for i in range(begin, begin + leaf_count[leaf]):
            scores[sample_indices[i]] += value
