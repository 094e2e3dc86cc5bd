"""SHAP feature contributions: exact path-dependent TreeSHAP over flat node arrays.

Lundberg et al. 2020, "From local explanations to global understanding with
explainable AI for trees" (Nature Machine Intelligence 2, 56-67), Algorithm 2
(EXTEND, UNWIND, UNWOUNDSUM), as LightGBM's ``Tree::TreeSHAP``
(src/io/tree.cpp).  The value of a feature set S for a row x is the
path-dependent conditional expectation E[f(x) | x_S]: at a node splitting on
a feature in S the row follows its decision, at any other node both children
count, weighted by their data counts (``internal_count`` / ``leaf_count``,
LightGBM's ``data_count``).  The contributions are the exact Shapley values of
that game; with each tree's expected value (the bias) they add up to the raw
score.

Trees are laid out as in :mod:`dgbdt.native.predict` (node_offsets,
leaf_offsets, child links ``c < 0`` for the leaf ``~c``), and the row's
decision at a node is :func:`dgbdt.native.predict.goes_left`, prediction's own.

LightGBM recurses; here the recursion is a loop over an explicit stack of
records (node, parent's path offset, path length, incoming zero and one
fractions, feature), hot child (the row's way) on top of the cold one, so the
hot subtree is walked first as in LightGBM.  Paths live in one buffer per
block of rows (feature, zero fraction, one fraction, weight arrays), each
path right after its parent's (LightGBM's layout)::

    buffer: [root][ d1 d1 ][ d2 d2 d2 ][ d3 d3 d3 d3 ] ...
             0     1        3           6            (offsets when every child is hot)

A path holds the root's element and one per distinct feature above it (a
feature met again is unwound first), so at depth k it is at most
min(k, F) + 1 long for F distinct split features, and the buffer needs
sum_{k <= D} (min(k, F) + 1) entries: (D + 1)(D + 2) / 2 when F >= D, as
LightGBM allocates, but about D (F + 1) on a deep tree over few features
(LightGBM allocates the triangle and touches only that part of it, we
allocate only that part); the factor tables are (F + 2)^2, not (D + 2)^2.
The explicit stack holds at most D + 1 records (a cold child per level and
the hot one), so a tree 30,000 deep needs no deep recursion and no large
buffer.

The hot child copies its parent's path (and extends it in the same pass);
the cold child is walked after the whole hot subtree, when its parent's path
is no longer needed, so it extends that path in place.  The rest is exact
rewriting, the same values up to rounding:

* one fractions are always exactly 0 or 1 (the root's 1, a cold child's 0,
  or copied from an unwound element), so UNWIND and UNWOUNDSUM divide by
  nothing in their "one fraction != 0" branch;
* the factors (i + 1) / (u + 1), (u - i) / (u + 1), their inverses and
  (u - i) / (i + 1) come from small tables, which leaves one multiply-add on
  each loop's dependency chain;
* each node's child count fractions are computed once per call, not per row;
* at a leaf every path element with one fraction 0 gets the same value: its
  UNWOUNDSUM is sum_i pweight[i] (u + 1) / (u - i) / zero, times (0 - zero)
  times the leaf value, so that sum is computed once per leaf.

The helpers take the path arrays one by one and the buffers come as one flat
tuple: arrays unpacked from a tuple inside the walk's loop cost reference
counting at every node (measured: 25% slower), and nested tuples of arrays
of different lengths trip the parallel loop's array analysis.
"""

import numpy as np
from numba import njit, prange

from .predict import goes_left

# Rows per parallel block: a block walks every tree, so the trees stay in cache.
SHAP_BLOCK = 64
# The factor tables (see _factor_tables).
UP, DOWN, INV_UP, INV_DOWN, RATIO = 0, 1, 2, 3, 4


@njit(cache=True, error_model="numpy")
def max_tree_depth(node_offsets, left_child, right_child, n_trees):
    """The largest leaf depth of the first ``n_trees`` trees (0: single leaves).

    Walks the child links: the path buffers are sized from this, so the trees'
    stored leaf depths are not trusted.
    """
    largest = 0
    widest = 1
    for t in range(n_trees):
        widest = max(widest, node_offsets[t + 1] - node_offsets[t] + 1)
    stack_node = np.empty(widest, np.int64)
    stack_depth = np.empty(widest, np.int64)
    for t in range(n_trees):
        begin = node_offsets[t]
        if node_offsets[t + 1] == begin:
            continue
        top = 1
        stack_node[0] = 0
        stack_depth[0] = 0
        while top > 0:
            top -= 1
            node = stack_node[top]
            depth = stack_depth[top]
            if node < 0:
                largest = max(largest, depth)
                continue
            for child in (left_child[begin + node], right_child[begin + node]):
                stack_node[top] = child
                stack_depth[top] = depth + 1
                top += 1
    return largest


@njit(cache=True, error_model="numpy")
def distinct_split_features(node_offsets, split_feature, n_trees):
    """How many distinct features the first ``n_trees`` trees split on: a
    path's length is bounded by it (see the module docstring)."""
    begin, end = node_offsets[0], node_offsets[n_trees]
    if end == begin:
        return 0
    seen = np.zeros(split_feature[begin:end].max() + 1, np.bool_)
    count = 0
    for k in range(begin, end):
        f = split_feature[k]
        if not seen[f]:
            seen[f] = True
            count += 1
    return count


@njit(cache=True, error_model="numpy")
def path_buffer_size(max_depth, max_unique):
    """Entries of a block's path buffer: the paths of one root-to-leaf walk
    side by side, a node at depth k holding at most min(k, max_unique) + 1
    elements, for depths 0 .. max_depth."""
    size = 0
    for k in range(max_depth + 1):
        size += min(k, max_unique) + 1
    return size


@njit(cache=True, error_model="numpy")
def _factor_tables(max_unique):
    """tables[UP | DOWN | INV_UP | INV_DOWN | RATIO, u, i] = (i+1)/(u+1),
    (u-i)/(u+1), (u+1)/(i+1), (u+1)/(u-i), (u-i)/(i+1), for i < u <= max_unique + 1
    (a path's last index u is at most max_unique)."""
    n = max_unique + 2
    tables = np.zeros((5, n, n))
    for u in range(n):
        for i in range(u):
            tables[UP, u, i] = (i + 1) / (u + 1)
            tables[DOWN, u, i] = (u - i) / (u + 1)
            tables[INV_UP, u, i] = (u + 1) / (i + 1)
            tables[INV_DOWN, u, i] = (u + 1) / (u - i)
            tables[RATIO, u, i] = (u - i) / (i + 1)
    return tables


@njit(cache=True, error_model="numpy")
def _child_fractions(node_offsets, leaf_offsets, left_child, right_child, counts, n_trees):
    """out[k] = (left, right) child's data count / node k's (LightGBM's
    data_count(child) / data_count(node)), for the nodes of the first n_trees."""
    internal_count, leaf_count = counts
    out = np.empty((internal_count.shape[0], 2))
    for t in range(n_trees):
        node_begin, leaf_begin = node_offsets[t], leaf_offsets[t]
        for k in range(node_begin, node_offsets[t + 1]):
            for side in range(2):
                child = left_child[k] if side == 0 else right_child[k]
                if child >= 0:
                    count = internal_count[node_begin + child]
                else:
                    count = leaf_count[leaf_begin + ~child]
                out[k, side] = count / internal_count[k]
    return out


@njit(cache=True, inline="always", error_model="numpy")
def _extend(feat, zero, one, pweight, b, u, zero_fraction, one_fraction, feature, tables):
    """EXTEND in place: the path at offset ``b`` (elements 0..u-1) gets element u."""
    feat[b + u] = feature
    zero[b + u] = zero_fraction
    one[b + u] = one_fraction
    if u == 0:
        pweight[b] = 1.0
        return
    # pweight[i + 1] += one * pweight[i] * up; pweight[i] = zero * pweight[i] * down,
    # for i = u-1 .. 0, with the new pweight[i + 1] carried in a register
    carry = 0.0
    for i in range(u - 1, -1, -1):
        p = pweight[b + i]
        pweight[b + i + 1] = carry + one_fraction * p * tables[UP, u, i]
        carry = zero_fraction * p * tables[DOWN, u, i]
    pweight[b] = carry


@njit(cache=True, inline="always", error_model="numpy")
def _copy_extend(
    feat, zero, one, pweight, parent, b, u, zero_fraction, one_fraction, feature, tables
):
    """The parent's path at offset ``parent`` (elements 0..u-1) copied to ``b``
    and EXTENDed there, in one pass."""
    for k in range(u):
        feat[b + k] = feat[parent + k]
        zero[b + k] = zero[parent + k]
        one[b + k] = one[parent + k]
    feat[b + u] = feature
    zero[b + u] = zero_fraction
    one[b + u] = one_fraction
    if u == 0:
        pweight[b] = 1.0
        return
    pweight[b + u] = one_fraction * pweight[parent + u - 1] * tables[UP, u, u - 1]
    for k in range(u - 1, 0, -1):
        pweight[b + k] = (
            zero_fraction * pweight[parent + k] * tables[DOWN, u, k]
            + one_fraction * pweight[parent + k - 1] * tables[UP, u, k - 1]
        )
    pweight[b] = zero_fraction * pweight[parent] * tables[DOWN, u, 0]


@njit(cache=True, inline="always", error_model="numpy")
def _unwind(feat, zero, one, pweight, b, u, j, tables):
    """UNWIND: element ``j`` leaves the path at offset ``b`` (elements 0..u)."""
    z = zero[b + j]
    next_one = pweight[b + u]
    if one[b + j] != 0.0:  # one fraction 1
        for i in range(u - 1, -1, -1):
            tmp = pweight[b + i]
            pweight[b + i] = next_one * tables[INV_UP, u, i]
            # = tmp - pweight[b + i] * z * (u - i) / (u + 1)
            next_one = tmp - next_one * (z * tables[RATIO, u, i])
    else:
        inv_zero = 1.0 / z
        for i in range(u - 1, -1, -1):
            pweight[b + i] = pweight[b + i] * tables[INV_DOWN, u, i] * inv_zero
    for i in range(j, u):
        feat[b + i] = feat[b + i + 1]
        zero[b + i] = zero[b + i + 1]
        one[b + i] = one[b + i + 1]


@njit(cache=True, inline="always", error_model="numpy")
def _hot_unwound_sum(pweight, b, u, z, tables):
    """UNWOUNDSUM of an element of one fraction 1 and zero fraction ``z``."""
    next_one = pweight[b + u]
    total = 0.0
    for k in range(u - 1, -1, -1):
        total += next_one * tables[INV_UP, u, k]
        next_one = pweight[b + k] - next_one * (z * tables[RATIO, u, k])
    return total


@njit(cache=True, inline="always", error_model="numpy")
def _add_leaf(out, i, col0, value, feat, zero, one, pweight, b, u, tables, hot):
    """At a leaf of value ``value``: out[i, col0 + feature] += UNWOUNDSUM
    (one - zero) value of each path element 1..u (0 is the root's)."""
    n_hot = 0
    for j in range(1, u + 1):  # the hot elements, without a branch per element
        hot[n_hot] = j
        n_hot += one[b + j] != 0.0
    if n_hot < u:
        # every cold element: (sum_k pweight[k] (u+1)/(u-k) / zero) (0 - zero) value
        cold_sum = 0.0
        for k in range(u):
            cold_sum += pweight[b + k] * tables[INV_DOWN, u, k]
        cold = cold_sum * value
        for j in range(1, u + 1):
            out[i, col0 + feat[b + j]] -= (1.0 - one[b + j]) * cold
    for h in range(n_hot):
        j = hot[h]
        z = zero[b + j]
        out[i, col0 + feat[b + j]] += _hot_unwound_sum(pweight, b, u, z, tables) * (1.0 - z) * value


@njit(cache=True, inline="always", error_model="numpy")
def _tree_shap_row(X, i, col0, tree, nodes, fractions, tables, buffers, out):
    """TreeSHAP of row ``i`` in one tree, added to out[i, col0:col0 + n_features].
    ``tree``: (node_begin, leaf_begin); ``nodes``: the tree arrays; ``buffers``:
    the block's path and stack arrays (see tree_shap)."""
    node_begin, leaf_begin = tree
    split_feature, threshold, default_left, left_child, right_child = nodes[:5]
    cat_boundaries, cat_threshold, leaf_value = nodes[5:]
    feat, zero, one, pweight, st_node, st_base, st_u, st_feat, st_copy, st_zero, st_one, hot = (
        buffers
    )
    top = 1  # the root: an empty path, fractions 1, no feature
    st_node[0] = 0
    st_base[0] = 0
    st_u[0] = 0
    st_feat[0] = -1
    st_copy[0] = 0
    st_zero[0] = 1.0
    st_one[0] = 1.0
    while top > 0:
        top -= 1
        node, parent, u = st_node[top], st_base[top], st_u[top]
        if st_copy[top]:
            b = parent + u
            _copy_extend(
                feat,
                zero,
                one,
                pweight,
                parent,
                b,
                u,
                st_zero[top],
                st_one[top],
                st_feat[top],
                tables,
            )
        else:
            b = parent
            _extend(feat, zero, one, pweight, b, u, st_zero[top], st_one[top], st_feat[top], tables)
        if node < 0:
            _add_leaf(
                out,
                i,
                col0,
                leaf_value[leaf_begin + ~node],
                feat,
                zero,
                one,
                pweight,
                b,
                u,
                tables,
                hot,
            )
            continue
        k = node_begin + node
        f = split_feature[k]
        if goes_left(X[i, f], k, threshold, default_left, cat_boundaries, cat_threshold):
            hot_child, cold_child = left_child[k], right_child[k]
            hot_zero, cold_zero = fractions[k, 0], fractions[k, 1]
        else:
            hot_child, cold_child = right_child[k], left_child[k]
            hot_zero, cold_zero = fractions[k, 1], fractions[k, 0]
        incoming_zero = 1.0
        incoming_one = 1.0
        for j in range(1, u + 1):  # a feature already on the path: undo its split, redo it here
            if feat[b + j] == f:
                incoming_zero = zero[b + j]
                incoming_one = one[b + j]
                _unwind(feat, zero, one, pweight, b, u, j, tables)
                u -= 1
                break
        # cold first: the hot child is on top, walked first; it copies the path
        for side in range(2):
            st_node[top] = cold_child if side == 0 else hot_child
            st_base[top] = b
            st_u[top] = u + 1
            st_feat[top] = f
            st_copy[top] = side
            st_zero[top] = (cold_zero if side == 0 else hot_zero) * incoming_zero
            st_one[top] = 0.0 if side == 0 else incoming_one
            top += 1


@njit(cache=True, inline="always", error_model="numpy")
def _add_bias(node_offsets, leaf_offsets, counts, leaf_value, n_trees, n_classes, out):
    """out[:, bias column of class t % n_classes] += the expected value of each
    tree t: its leaf values weighted by their data counts over the root's
    (LightGBM's Tree::ExpectedValue; a single leaf: its value)."""
    internal_count, leaf_count = counts
    width = out.shape[1] // n_classes
    for t in range(n_trees):
        lo, hi = leaf_offsets[t], leaf_offsets[t + 1]
        if node_offsets[t + 1] == node_offsets[t]:
            bias = leaf_value[lo]
        else:
            total = internal_count[node_offsets[t]]
            bias = 0.0
            for leaf in range(lo, hi):
                bias += (leaf_count[leaf] / total) * leaf_value[leaf]
        col = (t % n_classes) * width + width - 1
        for i in range(out.shape[0]):
            out[i, col] += bias


@njit(cache=True, parallel=True, error_model="numpy")
def tree_shap(
    X,
    node_offsets,
    leaf_offsets,
    split_feature,
    threshold,
    default_left,
    left_child,
    right_child,
    cat_boundaries,
    cat_threshold,
    leaf_value,
    internal_count,
    leaf_count,
    n_trees,
    n_classes,
    out,
):
    """SHAP contributions of the first ``n_trees`` trees, per class, added to ``out``.

    Class ``c`` (tree t adds to class t % n_classes) owns the columns
    ``c * (n_features + 1) : (c + 1) * (n_features + 1)`` of ``out``: one
    contribution per feature, then the bias (the sum of the trees' expected
    values), LightGBM's ``pred_contrib`` layout.

    Parameters
    ----------
    X : float64[n_samples, n_features]   # IN  C-contiguous
    node_offsets, leaf_offsets : int64[n_trees + 1]  # IN  see native.predict
    split_feature : int32[n_nodes]; threshold : float64[n_nodes]
    default_left : uint8[n_nodes]; left_child, right_child : int32[n_nodes]
    cat_boundaries : int64[n_bitsets + 1]; cat_threshold : uint32[n_words]  # IN
    leaf_value : float64[n_leaves]       # IN
    internal_count : float64[n_nodes]; leaf_count : float64[n_leaves]  # IN data counts
    n_trees, n_classes : int             # IN
    out : float64[n_samples, n_classes * (n_features + 1)]  # IN/OUT values are added
    """
    n_samples = X.shape[0]
    width = out.shape[1] // n_classes
    counts = (internal_count, leaf_count)
    _add_bias(node_offsets, leaf_offsets, counts, leaf_value, n_trees, n_classes, out)
    max_depth = max_tree_depth(node_offsets, left_child, right_child, n_trees)
    # the longest path (less its root element): one element per distinct feature
    max_unique = min(max_depth, distinct_split_features(node_offsets, split_feature, n_trees))
    tables = _factor_tables(max_unique)
    fractions = _child_fractions(
        node_offsets, leaf_offsets, left_child, right_child, counts, n_trees
    )
    nodes = (
        split_feature,
        threshold,
        default_left,
        left_child,
        right_child,
        cat_boundaries,
        cat_threshold,
        leaf_value,
    )
    path_size = path_buffer_size(max_depth, max_unique)
    stack_size = max_depth + 3
    n_blocks = (n_samples + SHAP_BLOCK - 1) // SHAP_BLOCK
    for blk in prange(n_blocks):
        lo = blk * SHAP_BLOCK
        hi = min(n_samples, lo + SHAP_BLOCK)
        buffers = (
            np.empty(path_size, np.int64),  # feature
            np.empty(path_size),  # zero fraction
            np.empty(path_size),  # one fraction
            np.empty(path_size),  # weight
            np.empty(stack_size, np.int64),  # node
            np.empty(stack_size, np.int64),  # parent's path offset
            np.empty(stack_size, np.int64),  # path length
            np.empty(stack_size, np.int64),  # feature
            np.empty(stack_size, np.int64),  # copy the parent's path (hot child)
            np.empty(stack_size),  # zero fraction
            np.empty(stack_size),  # one fraction
            np.empty(max_unique + 2, np.int64),  # the hot elements at a leaf
        )
        for t in range(n_trees):
            if node_offsets[t + 1] == node_offsets[t]:
                continue  # a single leaf: all bias
            tree = (node_offsets[t], leaf_offsets[t])
            col0 = (t % n_classes) * width
            for i in range(lo, hi):
                _tree_shap_row(X, i, col0, tree, nodes, fractions, tables, buffers, out)
