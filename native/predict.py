"""Prediction kernels over flat node arrays.

All trees of a model are concatenated.  Tree ``t`` owns internal nodes
``node_offsets[t]:node_offsets[t+1]`` and leaves
``leaf_offsets[t]:leaf_offsets[t+1]``; node 0 of a tree is its root.  A child
link ``c >= 0`` is an internal node of the same tree, ``c < 0`` is the leaf
``~c``.  A tree without internal nodes is a single leaf.  Tree ``t`` adds to
class ``t % n_classes``.

A row goes left when ``x <= threshold`` (real features) or
``bin <= threshold_bin`` (binned features); NaN (the NaN bin) follows
``default_left`` bit 0.  Bit 1 (nodes of models read from LightGBM, whose
missing type Zero treats zero as missing; such models have no bins) sends
values within ZERO_THRESHOLD of 0 that way too.  Bit 2 (CATEGORICAL) makes
the node a categorical split, as LightGBM's: the row goes left when its value,
cast to an integer (truncated, as C++ does), is a category in the node's
bitset, the uint32 words ``cat_threshold[cat_boundaries[j] :
cat_boundaries[j + 1]]`` with ``j = int(threshold)``; NaN, negative and
unseen values go right.  With bit 3 (CATEGORY_LIST) too, those words are the
node's categories, sorted, instead of a bitset (dgbdt's form for categories
too large for a bitset: dgbdt.models.tree.BITSET_CATEGORY_LIMIT).
"""

import numpy as np
from numba import njit, prange

from .binning import K_ZERO_THRESHOLD as ZERO_THRESHOLD  # LightGBM's kZeroThreshold

# Rows per parallel block: a block walks every tree, so the trees stay in cache.
PREDICT_BLOCK = 512
ZERO_IS_MISSING = 2  # default_left bits
CATEGORICAL = 4
CATEGORY_LIST = 8


@njit(cache=True)
def _in_list(x, j, cat_boundaries, cat_threshold):
    """Whether category int(x) is among the sorted categories ``j`` (a binary
    search; not inlined: rare nodes, and inlining it slowed numeric-only
    prediction by 3-6%)."""
    if not (x > -1.0 and x < 2147483648.0):  # NaN, negative, beyond int32: right
        return False
    c = int(x)
    lo = cat_boundaries[j]
    hi = cat_boundaries[j + 1]
    end = hi
    while lo < hi:  # the first category >= c
        mid = (lo + hi) >> 1
        if np.int64(cat_threshold[mid]) < c:
            lo = mid + 1
        else:
            hi = mid
    return lo < end and np.int64(cat_threshold[lo]) == c


@njit(cache=True, inline="always")
def _in_bitset(x, j, listed, cat_boundaries, cat_threshold):
    """Whether category int(x) is in bitset ``j`` (LightGBM's FindInBitset), or
    with ``listed`` in the sorted categories ``j`` (_in_list)."""
    if listed:
        return _in_list(x, j, cat_boundaries, cat_threshold)
    if not (x > -1.0 and x < 2147483648.0):  # NaN, negative, beyond int32: right
        return False
    c = int(x)
    lo = cat_boundaries[j]
    w = c >> 5
    if w >= cat_boundaries[j + 1] - lo:
        return False
    return (cat_threshold[lo + w] >> np.uint32(c & 31)) & np.uint32(1) != 0


@njit(cache=True, inline="always")
def goes_left(x, k, threshold, default_left, cat_boundaries, cat_threshold):
    """Whether value ``x`` goes left at flat node ``k`` (see the module docstring):
    the one decision of prediction and of SHAP contributions (native.shap)."""
    d = default_left[k]
    if d & CATEGORICAL:
        listed = (d & CATEGORY_LIST) != 0
        return _in_bitset(x, int(threshold[k]), listed, cat_boundaries, cat_threshold)
    if np.isnan(x) or ((d & ZERO_IS_MISSING) != 0 and -ZERO_THRESHOLD <= x <= ZERO_THRESHOLD):
        return (d & 1) != 0
    return x <= threshold[k]


# Rows walked side by side through a tree: their walks are independent, so the
# CPU overlaps one row's loads with another's.  With the next node read by
# index rather than chosen by a branch, 1.4x faster than a row at a time with
# a branch (100 trees of 255 leaves, 200,000 rows, rocketlake).
ROWS_IN_STEP = 8


@njit(cache=True, inline="always")
def _decide(x, k, threshold, default_left, cat_boundaries, cat_threshold):
    """goes_left, with the plain numeric node (no category, zero not missing)
    decided without a branch on x."""
    d = default_left[k]
    if d & (CATEGORICAL | ZERO_IS_MISSING):
        return goes_left(x, k, threshold, default_left, cat_boundaries, cat_threshold)
    return (x <= threshold[k]) | ((x != x) & ((d & 1) != 0))


@njit(cache=True, inline="always")
def _walk_rows(X, i0, m, node_begin, split_feature, threshold, default_left, children,
               cat_boundaries, cat_threshold, nodes):  # fmt: skip
    """The leaves of rows i0..i0+m-1 in the tree whose root is flat node
    ``node_begin`` (-1: a single leaf), into ``nodes[:m]``."""
    nodes[:m] = 0
    if node_begin < 0:
        return
    active = m
    while active:
        active = 0
        for r in range(m):
            node = nodes[r]
            if node >= 0:
                k = node_begin + node
                go = _decide(
                    X[i0 + r, split_feature[k]], k, threshold, default_left, cat_boundaries,
                    cat_threshold,
                )  # fmt: skip
                # an indexed load, not a branch on the decision
                node = children[k, 1 - np.int64(go)]
                nodes[r] = node
                active += node >= 0
    for r in range(m):
        nodes[r] = ~nodes[r]


@njit(cache=True, inline="always")
def _block_leaves(X, lo, hi, t, node_offsets, split_feature, threshold, default_left, children,
                  cat_boundaries, cat_threshold, leaves):  # fmt: skip
    """The leaves of rows lo..hi-1 in tree ``t``, into ``leaves[:hi - lo]``,
    ROWS_IN_STEP rows at a time."""
    node_begin = node_offsets[t] if node_offsets[t + 1] > node_offsets[t] else -1
    for i0 in range(lo, hi, ROWS_IN_STEP):
        _walk_rows(
            X, i0, min(ROWS_IN_STEP, hi - i0), node_begin, split_feature, threshold,
            default_left, children, cat_boundaries, cat_threshold, leaves[i0 - lo :],
        )  # fmt: skip


@njit(cache=True, parallel=True)
def predict_raw(
    X,
    node_offsets,
    leaf_offsets,
    split_feature,
    threshold,
    default_left,
    children,
    cat_boundaries,
    cat_threshold,
    leaf_value,
    n_trees,
    n_classes,
    out,
):
    """Sum of leaf values of the first ``n_trees`` trees, per class.

    Parameters
    ----------
    X : float64[n_samples, n_features]   # IN  C-contiguous
    node_offsets, leaf_offsets : int64[n_total_trees + 1]  # IN
    split_feature : int32[n_nodes]; threshold : float64[n_nodes]
    default_left : uint8[n_nodes]
    children : int32[n_nodes, 2]         # IN  (left, right) child links
    cat_boundaries : int64[n_bitsets + 1]; cat_threshold : uint32[n_words]  # IN
    leaf_value : float64[n_leaves]       # IN
    n_trees, n_classes : int             # IN
    out : float64[n_samples, n_classes]  # IN/OUT values are added, tree by tree
    """
    n_samples = X.shape[0]
    n_blocks = (n_samples + PREDICT_BLOCK - 1) // PREDICT_BLOCK
    for blk in prange(n_blocks):
        lo = blk * PREDICT_BLOCK
        hi = min(n_samples, lo + PREDICT_BLOCK)
        leaves = np.empty(PREDICT_BLOCK, np.int64)
        for t in range(n_trees):
            _block_leaves(
                X, lo, hi, t, node_offsets, split_feature, threshold, default_left, children,
                cat_boundaries, cat_threshold, leaves,
            )  # fmt: skip
            leaf_begin = leaf_offsets[t]
            c = t % n_classes
            for i in range(lo, hi):
                out[i, c] += leaf_value[leaf_begin + leaves[i - lo]]


@njit(cache=True, parallel=True)
def predict_leaf_index(
    X,
    node_offsets,
    split_feature,
    threshold,
    default_left,
    children,
    cat_boundaries,
    cat_threshold,
    n_trees,
    out,
):
    """Leaf index reached in each of the first ``n_trees`` trees.

    Parameters
    ----------
    X : float64[n_samples, n_features]   # IN
    children : int32[n_nodes, 2]         # IN  as predict_raw
    out : int32[n_samples, n_trees]      # OUT
    """
    n_samples = X.shape[0]
    n_blocks = (n_samples + PREDICT_BLOCK - 1) // PREDICT_BLOCK
    for blk in prange(n_blocks):
        lo = blk * PREDICT_BLOCK
        hi = min(n_samples, lo + PREDICT_BLOCK)
        leaves = np.empty(PREDICT_BLOCK, np.int64)
        for t in range(n_trees):
            _block_leaves(
                X, lo, hi, t, node_offsets, split_feature, threshold, default_left, children,
                cat_boundaries, cat_threshold, leaves,
            )  # fmt: skip
            for i in range(lo, hi):
                out[i, t] = leaves[i - lo]


@njit(cache=True, inline="always")
def binned_goes_left(b, f, node, nan_bins, threshold_bin, default_left, categories):
    """Whether bin ``b`` of feature ``f`` goes left at ``node`` of one tree.
    ``categories``: (cat_boundaries, cat_threshold, bin_offsets, bin_values) of
    a tree's categorical nodes (the bitset index is their threshold_bin) and
    the category of each bin of a categorical feature (bin_values[bin_offsets[f]
    + b], -1 for bin 0)."""
    d = default_left[node]
    if d & CATEGORICAL:
        c = categories[3][categories[2][f] + b]
        listed = (d & CATEGORY_LIST) != 0
        return _in_bitset(np.float64(c), threshold_bin[node], listed, categories[0], categories[1])
    if b == nan_bins[f]:
        return (d & 1) != 0
    return b <= threshold_bin[node]


@njit(cache=True, parallel=True)
def add_tree_binned(
    binned_cols,
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
    """scores[i] += value of the leaf row i reaches in one tree, on binned data.

    Used for rows the grower did not partition (out-of-bag rows, validation sets).

    Parameters
    ----------
    binned_cols : uint8|uint16[n_features, n_samples]  # IN
    nan_bins : int32[n_features]       # IN
    split_feature, threshold_bin : int32[n_nodes]; default_left : uint8[n_nodes]
    left_child, right_child : int32[n_nodes]; leaf_value : float64[n_leaves]  # IN one tree
    scores : float64[n_samples]        # IN/OUT
    categories : tuple of 4 arrays     # IN  see binned_goes_left
    """
    n_nodes = split_feature.shape[0]
    for i in prange(binned_cols.shape[1]):
        node = 0 if n_nodes > 0 else -1
        while node >= 0:
            f = split_feature[node]
            b = np.int64(binned_cols[f, i])
            go_left = binned_goes_left(
                b, f, node, nan_bins, threshold_bin, default_left, categories
            )
            node = left_child[node] if go_left else right_child[node]
        scores[i] += leaf_value[~node]
