"""Leaf-wise (best-first) tree growth.

The grower owns the tree being built, the row partition and the histogram
buffers.  It never knows how many processes there are: histograms, split
search and partitioning go through the learner strategy (dgbdt.learners).

Row partition: ``sample_indices`` holds the rows of the tree; leaf ``L`` owns
``sample_indices[leaf_begin[L] : leaf_begin[L] + leaf_count[L]]``.
"""

import numpy as np

from .native.common import (
    GRAD_DTYPE,
    HIST_DTYPE,
    HIST_WIDTH,
    INDEX_DTYPE,
    SPLIT_BIN,
    SPLIT_DEFAULT_LEFT,
    SPLIT_FEATURE,
    SPLIT_GAIN,
    SPLIT_LEFT_GRAD,
    SPLIT_LEFT_HESS,
    SPLIT_LEFT_VALUE,
    SPLIT_RECORD_SIZE,
    SPLIT_RIGHT_GRAD,
    SPLIT_RIGHT_HESS,
    SPLIT_RIGHT_VALUE,
)
from .native.histogram import gather_gradients, subtract_histograms
from .native.quantize import PAIRS, WIDE_DTYPE, add_words_to_pairs, packed_width, sum_levels
from .native.split import best_leaf, leaf_output, sequential_sum
from .tree import Tree


class TreeGrower:
    """Grows trees on one (local) data set; buffers are reused across trees.

    Parameters
    ----------
    learner : a learner strategy (see dgbdt.learners)
    data : TrainingData (binned, bin_mapper, feature_offsets, nan_bins)
    cfg : resolved params
    """

    def __init__(self, learner, data, cfg):
        self.learner = learner
        self.data = data
        self.num_leaves = cfg["num_leaves"]
        self.max_depth = cfg["max_depth"] if cfg["max_depth"] > 0 else 1 << 30
        self.min_data_in_leaf = cfg["min_data_in_leaf"]
        self.lambda_l1 = cfg["lambda_l1"]
        self.lambda_l2 = cfg["lambda_l2"]
        self.max_delta_step = cfg["max_delta_step"]
        n = data.n_samples
        self.sample_indices = np.empty(n, INDEX_DTYPE)
        self.scratch = np.empty((2, n), INDEX_DTYPE)  # partition scratch
        self.ordered_gradients = np.empty(n, GRAD_DTYPE)
        self.ordered_hessians = np.empty(n, GRAD_DTYPE)
        self.leaf_begin = np.zeros(self.num_leaves, np.int64)
        self.leaf_count = np.zeros(self.num_leaves, np.int64)
        self._free_hists = []
        self.quant = None  # a GradientQuantizer while growing a quantized tree

    # -- histogram buffers ----------------------------------------------------
    def _new_hist(self, pairs=False):
        # Quantized: one wide int64 word per bin, or two int64 for leaves too large
        # for words (native/quantize.py); else (g, h) floats.
        if self.quant is not None:
            dtype = WIDE_DTYPE
            shape = (self.data.total_bins, 2) if pairs else (self.data.total_bins,)
        else:
            dtype, shape = HIST_DTYPE, (self.data.total_bins, HIST_WIDTH)
        for i, h in enumerate(self._free_hists):
            if h.dtype == dtype and h.shape == shape:
                return self._free_hists.pop(i)
        return np.empty(shape, dtype)

    def _release(self, hist):
        if hist is not None:
            self._free_hists.append(hist)

    def _leaf_histogram(self, rows, totals, feature_indices):
        """The histogram of the rows, whose gradients are already gathered (float,
        with LightGBM's most frequent bins: the leaf's ``totals`` minus the rest),
        or of their integer gradients (quantized: built in the width the leaf's
        global count allows, see native.quantize.packed_width)."""
        if self.quant is None:
            hist = self._new_hist()
            self.learner.leaf_histogram(
                rows, self.ordered_gradients, self.ordered_hessians, feature_indices, hist
            )
            self.learner.fix_histogram(hist, feature_indices, totals)
            return hist
        shift = packed_width(int(totals[2]), self.quant.n_bins)
        hist = self._new_hist(pairs=shift == PAIRS)
        self.learner.leaf_histogram_int(rows, self.quant, shift, feature_indices, hist)
        return hist

    def _subtract(self, parent, child):
        """parent -= child (exact on integer words and pairs); returns the child,
        as pairs when the parent is (a child small enough for words is built as words)."""
        if self.quant is None:
            subtract_histograms(parent, child, parent)
            return child
        if parent.ndim == 2 and child.ndim == 1:
            pairs = self._new_hist(pairs=True)
            pairs[:] = 0
            add_words_to_pairs(child, pairs)
            self._release(child)
            child = pairs
        np.subtract(parent, child, out=parent)
        return child

    def _best_split(self, leaf, hist, feature_indices, totals, record):
        """The leaf's best split into ``record``; returns the features its
        children may split on (LightGBM's ``is_splittable``: those of
        ``feature_indices`` with a valid split of positive gain here)."""
        local_count = self.leaf_count[leaf]
        if self.quant is None:
            return self.learner.best_split(hist, feature_indices, totals, record, local_count)
        return self.learner.best_split_int(
            hist, feature_indices, totals, record, self.quant, local_count
        )

    def _can_split(self, count, depth):
        return count >= max(2, 2 * self.min_data_in_leaf) and depth < self.max_depth

    def _histogram(self, leaf, totals, gradients, hessians, feature_indices):
        begin, count = self.leaf_begin[leaf], self.leaf_count[leaf]
        rows = self.sample_indices[begin : begin + count]
        if self.quant is None:
            gather_gradients(
                gradients, hessians, rows, self.ordered_gradients, self.ordered_hessians
            )
        return self._leaf_histogram(rows, totals, feature_indices)

    def _root_totals(self, n_root, gradients, hessians):
        """Global (sum_g, sum_h, count) of the root: float sums, or, quantized,
        integer sums scaled back (exact, so the same on any number of ranks)."""
        rows = self.sample_indices[:n_root]
        if self.quant is None:
            gather_gradients(
                gradients, hessians, rows, self.ordered_gradients, self.ordered_hessians
            )
            # Summed in row order, as LightGBM does (its trees, bit for bit).
            return self.learner.global_totals(
                sequential_sum(self.ordered_gradients[:n_root]),
                sequential_sum(self.ordered_hessians[:n_root]),
                float(n_root),
            )
        q = self.quant
        sum_g, sum_h = sum_levels(q.q_g, q.q_h, rows)
        sums = self.learner.sum_over_rows(np.array([sum_g, sum_h, n_root], np.int64))
        return float(sums[0]) * q.g_scale, float(sums[1]) * q.h_scale, float(sums[2])

    # -- growth -----------------------------------------------------------------
    def grow(self, gradients, hessians, root_rows, feature_indices, quant=None):
        """Grow one tree.

        Parameters
        ----------
        gradients, hessians : float32[n_samples]
        root_rows : uint32[n_root]  rows of the tree (all rows, or the bag)
        feature_indices : int32[n_used]  features this tree may split on
        quant : GradientQuantizer, optional
            Quantized training: histograms of its integer gradients.

        Returns
        -------
        tree : Tree (leaf values not yet shrunk)
        """
        self.quant = quant
        tree = Tree(self.num_leaves)
        n_root = root_rows.shape[0]
        self.sample_indices[:n_root] = root_rows
        self.leaf_begin[0] = 0
        self.leaf_count[0] = n_root

        totals = self._root_totals(n_root, gradients, hessians)
        tree.leaf_value[0] = leaf_output(
            totals[0], totals[1], self.lambda_l1, self.lambda_l2, self.max_delta_step
        )
        tree.leaf_weight[0] = totals[1]
        tree.leaf_count[0] = totals[2]
        leaves = _Leaves(self.num_leaves, gradients, hessians, feature_indices)
        leaves.totals[0] = totals
        if self.num_leaves > 1 and self._can_split(totals[2], 0):
            leaves.hists[0] = self._leaf_histogram(
                self.sample_indices[:n_root], totals, feature_indices
            )
            self._scan(leaves, 0, feature_indices)
        while tree.n_leaves < self.num_leaves:
            leaf = leaves.best_leaf()
            if leaf < 0:
                break
            self._split(tree, leaves, leaf)
        for h in leaves.hists:
            self._release(h)
        return tree.finish()

    def _scan(self, leaves, leaf, candidates):
        """Best split of ``leaf`` over ``candidates``; its children will scan the
        features splittable here (LightGBM's ``is_splittable``)."""
        leaves.features[leaf] = self._best_split(
            leaf, leaves.hists[leaf], candidates, leaves.totals[leaf], leaves.records[leaf]
        )
        leaves.gains[leaf] = leaves.records[leaf, SPLIT_GAIN]

    def _split(self, tree, leaves, leaf):
        """Apply ``leaf``'s best split, then build and scan its children."""
        rec = leaves.records[leaf].copy()
        leaves.gains[leaf] = -np.inf
        feature = int(rec[SPLIT_FEATURE])
        threshold_bin = int(rec[SPLIT_BIN])
        default_left = bool(rec[SPLIT_DEFAULT_LEFT])
        mapper = self.data.global_mapper  # split features are global indices
        if mapper.nan_bins[feature] < 0:
            # No NaN in training: NaN at prediction time goes where 0.0 goes.
            default_left = 0.0 <= mapper.threshold_value(feature, threshold_bin)
        begin, count = self.leaf_begin[leaf], self.leaf_count[leaf]
        n_left = self.learner.partition(
            self.sample_indices[begin : begin + count], rec, self.scratch
        )
        # Exact (global) row counts; the split record's counts are estimates.
        left_count, right_count = self.learner.global_counts(n_left, count - n_left)
        parent_totals = leaves.totals[leaf]
        right = tree.split(
            leaf,
            feature,
            threshold_bin,
            mapper.threshold_value(feature, threshold_bin),
            default_left,
            rec[SPLIT_GAIN],
            tree.leaf_value[leaf],
            parent_totals[1],
            parent_totals[2],
            rec[SPLIT_LEFT_VALUE],
            rec[SPLIT_LEFT_HESS],
            left_count,
            rec[SPLIT_RIGHT_VALUE],
            rec[SPLIT_RIGHT_HESS],
            right_count,
        )
        self.leaf_begin[right] = begin + n_left
        self.leaf_count[right] = count - n_left
        self.leaf_count[leaf] = n_left
        leaves.totals[leaf] = (rec[SPLIT_LEFT_GRAD], rec[SPLIT_LEFT_HESS], float(left_count))
        leaves.totals[right] = (rec[SPLIT_RIGHT_GRAD], rec[SPLIT_RIGHT_HESS], float(right_count))

        depth = tree.leaf_depth[leaf]
        ok = {leaf: self._can_split(left_count, depth), right: self._can_split(right_count, depth)}
        parent_hist = leaves.hists[leaf]
        leaves.hists[leaf] = None
        if tree.n_leaves >= self.num_leaves or not any(ok.values()):
            self._release(parent_hist)
            return
        # Build the smaller child (by global count), subtract for the larger; on a
        # tie the right one is built, as LightGBM (the same float sums, bit for bit).
        small, large = (leaf, right) if left_count < right_count else (right, leaf)
        small_hist = self._histogram(
            small, leaves.totals[small], leaves.gradients, leaves.hessians, leaves.tree_features
        )
        leaves.hists[small] = self._subtract(parent_hist, small_hist)
        leaves.hists[large] = parent_hist
        candidates = leaves.features[leaf]
        for child in (leaf, right):
            if ok[child]:
                self._scan(leaves, child, candidates)
            else:
                self._release(leaves.hists[child])
                leaves.hists[child] = None


class _Leaves:
    """Per leaf of the tree being grown: best split record and its gain,
    histogram, global totals (sum_g, sum_h, count), and the features its
    children may split on."""

    def __init__(self, num_leaves, gradients, hessians, tree_features):
        self.records = np.zeros((num_leaves, SPLIT_RECORD_SIZE), np.float64)
        self.gains = np.full(num_leaves, -np.inf)
        self.hists = [None] * num_leaves
        self.totals = [None] * num_leaves
        self.features = [None] * num_leaves
        self.gradients, self.hessians = gradients, hessians
        self.tree_features = tree_features

    def best_leaf(self):
        """The leaf to split next, -1 when none can (native.split.best_leaf:
        LightGBM's order)."""
        return int(best_leaf(self.gains, self.records[:, SPLIT_FEATURE]))
