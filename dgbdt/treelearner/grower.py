"""Leaf-wise (best-first) tree growth.

The grower owns the tree being built, the row partition and the histogram
buffers.  It never knows how many processes there are: histograms, split
search and partitioning go through the learner strategy (dgbdt.treelearner.learners).

Row partition: ``sample_indices`` holds the rows of the tree; leaf ``L`` owns
``sample_indices[leaf_begin[L] : leaf_begin[L] + leaf_count[L]]``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..models.tree import Tree
from ..native.common import (
    INDEX_DTYPE,
    SPLIT_BIN,
    SPLIT_CAT_BINS,
    SPLIT_CAT_COUNT,
    SPLIT_DEFAULT_LEFT,
    SPLIT_FEATURE,
    SPLIT_GAIN,
    SPLIT_LEFT_COUNT,
    SPLIT_LEFT_GRAD,
    SPLIT_LEFT_HESS,
    SPLIT_LEFT_VALUE,
    SPLIT_RIGHT_COUNT,
    SPLIT_RIGHT_GRAD,
    SPLIT_RIGHT_HESS,
    SPLIT_RIGHT_VALUE,
    split_record_size,
)
from ..native.predict import CATEGORICAL, ZERO_IS_MISSING
from ..native.split import best_leaf, leaf_output
from .constraints import make_tree_constraints
from .histograms import make_histograms
from .learners.base import LeafScan

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..boosting.loop import TrainingData
    from ..data.binning import BinMapper, WideBinMapper
    from .constraints import LeafContext
    from .learners.serial import SerialLearner
    from .quantization import GradientQuantizer

    #: A leaf's global (sum_g, sum_h, count).
    Totals = tuple[float, float, float]


class TreeGrower:
    """Grows trees on one (local) data set; buffers are reused across trees.

    Parameters
    ----------
    learner : a learner strategy (dgbdt.treelearner.learners.base.Learner)
    data : TrainingData (binned, bin_mapper, feature_offsets, nan_bins)
    cfg : resolved params; ``use_quantized_grad`` chooses the histogram kind
        (dgbdt.treelearner.histograms) once for the training
    """

    def __init__(self, learner: SerialLearner, data: TrainingData, cfg: dict[str, Any]) -> None:
        self.learner = learner
        self.data = data
        self.hists = make_histograms(cfg, data)
        self.num_leaves = cfg["num_leaves"]
        self.max_depth = cfg["max_depth"] if cfg["max_depth"] > 0 else 1 << 30
        self.min_data_in_leaf = cfg["min_data_in_leaf"]
        self.lambda_l1 = cfg["lambda_l1"]
        self.lambda_l2 = cfg["lambda_l2"]
        self.max_delta_step = cfg["max_delta_step"]
        # monotone / interaction constraints, path_smooth, extra_trees, by-node
        # features: None when the training uses none (the scans then take none)
        self.constraints = make_tree_constraints(cfg, data)
        self.quantized = cfg["use_quantized_grad"]
        has_categories = bool(data.global_mapper.is_categorical.any())
        self.record_size = split_record_size(cfg["max_cat_threshold"] if has_categories else 0)
        n = data.n_samples
        self.sample_indices = np.empty(n, INDEX_DTYPE)
        self.scratch = np.empty((2, n), INDEX_DTYPE)  # partition scratch
        self.leaf_begin = np.zeros(self.num_leaves, np.int64)
        self.leaf_count = np.zeros(self.num_leaves, np.int64)

    @property
    def _free_hists(self) -> list[np.ndarray]:
        """Histograms released for reuse (the kind's pool)."""
        return self.hists.free

    def _rows(self, leaf: int) -> np.ndarray:
        begin = self.leaf_begin[leaf]
        return self.sample_indices[begin : begin + self.leaf_count[leaf]]

    def _leaf_histogram(
        self, rows: np.ndarray, totals: Totals, feature_indices: np.ndarray
    ) -> np.ndarray:
        """The histogram of the leaf's rows."""
        hist = self.hists.new(totals[2])
        self.learner.leaf_histogram(rows, self.hists, feature_indices, totals, hist)
        return hist

    def _can_split(self, count: float, depth: int) -> bool:
        return count >= max(2, 2 * self.min_data_in_leaf) and depth < self.max_depth

    def _histogram(self, leaf: int, totals: Totals, feature_indices: np.ndarray) -> np.ndarray:
        return self._leaf_histogram(self._rows(leaf), totals, feature_indices)

    # -- growth -----------------------------------------------------------------
    def grow(
        self,
        gradients: np.ndarray,
        hessians: np.ndarray,
        root_rows: np.ndarray,
        feature_indices: np.ndarray,
        quant: GradientQuantizer | None = None,
        tree_index: int = 0,
    ) -> Tree:
        """Grow one tree.

        Parameters
        ----------
        gradients, hessians : float32[n_samples]
        root_rows : uint32[n_root]  rows of the tree (all rows, or the bag)
        feature_indices : int32[n_used]  features this tree may split on
        quant : GradientQuantizer, optional
            Quantized training: the tree's integer gradients.
        tree_index : int
            The tree's index in the model (keys extra_trees' and by-node draws).

        Returns
        -------
        tree : Tree (leaf values not yet shrunk)
        """
        # (quantized training always passes the tree's quantizer)
        self.hists.begin_tree(gradients, hessians, quant)  # type: ignore[arg-type]
        tree = self.tree = Tree(self.num_leaves)
        if self.constraints is not None:
            self.constraints.begin_tree(tree_index, feature_indices)
        n_root = root_rows.shape[0]
        self.sample_indices[:n_root] = root_rows
        self.leaf_begin[0] = 0
        self.leaf_count[0] = n_root

        totals = self.hists.root_totals(self.learner, self.sample_indices[:n_root])
        tree.leaf_value[0] = leaf_output(
            totals[0], totals[1], self.lambda_l1, self.lambda_l2, self.max_delta_step
        )
        tree.leaf_weight[0] = totals[1]
        tree.leaf_count[0] = totals[2]
        leaves = _Leaves(self.num_leaves, feature_indices, self.record_size)
        leaves.totals[0] = totals
        if self.num_leaves > 1 and self._can_split(totals[2], 0):
            leaves.hists[0] = self._leaf_histogram(
                self.sample_indices[:n_root], totals, feature_indices
            )
            self._scan(leaves, [0], feature_indices)
        while tree.n_leaves < self.num_leaves:
            leaf = leaves.best_leaf()
            if leaf < 0:
                break
            self._split(tree, leaves, leaf)
        for h in leaves.hists:
            self.hists.release(h)
        return tree.finish()

    def _scan(
        self,
        leaves: _Leaves,
        ids: Sequence[int],
        candidates: np.ndarray,
        totals: Totals | None = None,
        node: LeafContext | None = None,
    ) -> None:
        """Best splits of the leaves ``ids`` over ``candidates``, in one call of
        the learner (a split's two children: distributed strategies agree them
        in one collective); their children will scan the features splittable
        here (LightGBM's ``is_splittable``).  ``totals``, ``node``: one leaf's,
        its constraints (dgbdt.treelearner.constraints.LeafContext; by default
        each leaf's own)."""
        scans = [
            LeafScan(
                leaves.hists[leaf],
                candidates,
                leaves.totals[leaf] if totals is None else totals,
                leaves.records[leaf],
                self._rows(leaf),
                node if node is not None or self.constraints is None
                else self.constraints.context(self.tree, leaf),
            )
            for leaf in ids
        ]  # fmt: skip
        for leaf, splittable in zip(ids, self.learner.best_splits(self.hists, scans), strict=True):
            leaves.features[leaf] = splittable
            leaves.gains[leaf] = leaves.records[leaf, SPLIT_GAIN]

    def _constrain(
        self, tree: Tree, leaves: _Leaves, leaf: int, right: int, rec: np.ndarray
    ) -> None:
        """Tell the constraints of a split; scan again the leaves whose bounds it
        tightened (intermediate), from their histograms, as LightGBM's
        RecomputeBestSplitForLeaf: over the features splittable there, with the
        leaf's totals as its best split's two sides (float histograms)."""
        outputs = (rec[SPLIT_LEFT_VALUE], rec[SPLIT_RIGHT_VALUE])
        # (_split calls this only when the training has constraints)
        for other in self.constraints.split(tree, leaf, right, outputs, leaves.gains):  # type: ignore[union-attr]
            if leaves.hists[other] is None:
                continue
            old = leaves.records[other]
            totals = leaves.totals[other]
            if not self.quantized:
                totals = (
                    old[SPLIT_LEFT_GRAD] + old[SPLIT_RIGHT_GRAD],
                    old[SPLIT_LEFT_HESS] + old[SPLIT_RIGHT_HESS],
                    old[SPLIT_LEFT_COUNT] + old[SPLIT_RIGHT_COUNT],
                )
            node = self.constraints.recompute_context(tree, other, totals)  # type: ignore[union-attr]
            self._scan(leaves, [other], leaves.features[other], totals, node)

    def _split(self, tree: Tree, leaves: _Leaves, leaf: int) -> None:
        """Apply ``leaf``'s best split, then build and scan its children."""
        rec = leaves.records[leaf].copy()
        leaves.gains[leaf] = -np.inf
        right, (left_count, right_count) = self._apply(tree, leaves, leaf, rec)
        if self.constraints is not None:
            self._constrain(tree, leaves, leaf, right, rec)
        depth = tree.leaf_depth[leaf]
        ok = {leaf: self._can_split(left_count, depth), right: self._can_split(right_count, depth)}
        parent_hist = leaves.hists[leaf]
        leaves.hists[leaf] = None
        if tree.n_leaves >= self.num_leaves or not any(ok.values()):
            self.hists.release(parent_hist)
            return
        # Build the smaller child (by global count), subtract for the larger; on a
        # tie the right one is built, as LightGBM (the same float sums, bit for bit).
        small, large = (leaf, right) if left_count < right_count else (right, leaf)
        # The features the children scan: those splittable in the parent (voting:
        # every feature of the tree, its splittable lists differ between ranks and
        # a rank sends the bins of every elected feature).
        candidates = leaves.features[leaf]
        built = candidates if self.learner.builds_parent_splittable else leaves.tree_features
        small_hist = self._histogram(small, leaves.totals[small], built)
        leaves.hists[small] = self.hists.subtract(
            parent_hist, small_hist, self.learner.subtracted_bins
        )
        leaves.hists[large] = parent_hist
        scanned = []
        for child in (leaf, right):
            if ok[child]:
                scanned.append(child)
            else:
                self.hists.release(leaves.hists[child])
                leaves.hists[child] = None
        self._scan(leaves, scanned, candidates)

    def _apply(
        self, tree: Tree, leaves: _Leaves, leaf: int, rec: np.ndarray
    ) -> tuple[int, tuple[int, int]]:
        """Partition ``leaf``'s rows by the split record ``rec`` and record the
        split in ``tree``; returns the right leaf and the global child counts."""
        feature = int(rec[SPLIT_FEATURE])
        threshold_bin, threshold, default_left, left_bins = _node_rule(
            self.data.global_mapper, feature, rec
        )
        begin, count = self.leaf_begin[leaf], self.leaf_count[leaf]
        n_left = self.learner.partition(self._rows(leaf), rec, self.scratch)
        # Exact (global) row counts; the split record's counts are estimates.
        left_count, right_count = self.learner.global_counts(n_left, count - n_left)
        parent_totals = leaves.totals[leaf]
        # A wide Dataset binned only its columns holding values: trees speak of columns.
        columns = self.data.store.columns
        right = tree.split(
            leaf,
            feature=feature if columns is None else int(columns[feature]),
            threshold_bin=threshold_bin,
            threshold=threshold,
            default_left=default_left,
            left_bins=left_bins,
            gain=rec[SPLIT_GAIN],
            parent=(tree.leaf_value[leaf], parent_totals[1], parent_totals[2]),
            left=(rec[SPLIT_LEFT_VALUE], rec[SPLIT_LEFT_HESS], left_count),
            right=(rec[SPLIT_RIGHT_VALUE], rec[SPLIT_RIGHT_HESS], right_count),
        )
        self.leaf_begin[right] = begin + n_left
        self.leaf_count[right] = count - n_left
        self.leaf_count[leaf] = n_left
        leaves.totals[leaf] = (rec[SPLIT_LEFT_GRAD], rec[SPLIT_LEFT_HESS], float(left_count))
        leaves.totals[right] = (rec[SPLIT_RIGHT_GRAD], rec[SPLIT_RIGHT_HESS], float(right_count))
        return right, (left_count, right_count)


def _node_rule(
    mapper: BinMapper | WideBinMapper, feature: int, rec: np.ndarray
) -> tuple[int, float, int, tuple[np.ndarray, np.ndarray] | None]:
    """(threshold_bin, threshold, default_left bits, left bins) of the node a
    split record makes; left bins: a categorical split's (else None), whose
    threshold and bitsets Tree.split fills in."""
    n_left = int(rec[SPLIT_CAT_COUNT]) if len(rec) > SPLIT_CAT_COUNT else 0
    if n_left:
        bins = rec[SPLIT_CAT_BINS : SPLIT_CAT_BINS + n_left].astype(np.int64)
        # (a categorical split's feature has categories)
        return 0, 0.0, CATEGORICAL, (bins, mapper.categories[feature][bins - 1])  # type: ignore[index]
    threshold_bin = int(rec[SPLIT_BIN])
    default_left = int(rec[SPLIT_DEFAULT_LEFT])
    threshold = mapper.threshold_value(feature, threshold_bin)
    if mapper.zero_missing is not None and mapper.zero_missing[feature]:
        default_left |= ZERO_IS_MISSING  # zero (and NaN) take the default side
    elif mapper.nan_bins[feature] < 0:
        # No NaN in training: NaN at prediction time goes where 0.0 goes.
        default_left = int(0.0 <= threshold)
    return threshold_bin, threshold, default_left, None


class _Leaves:
    """Per leaf of the tree being grown: best split record and its gain,
    histogram, global totals (sum_g, sum_h, count), and the features its
    children may split on."""

    def __init__(self, num_leaves: int, tree_features: np.ndarray, record_size: int) -> None:
        self.records = np.zeros((num_leaves, record_size), np.float64)
        self.gains = np.full(num_leaves, -np.inf)
        self.hists: list[Any] = [None] * num_leaves  # arrays, None where released
        self.totals: list[Any] = [None] * num_leaves  # Totals once the leaf exists
        self.features: list[Any] = [None] * num_leaves  # int32 arrays once scanned
        self.tree_features = tree_features

    def best_leaf(self) -> int:
        """The leaf to split next, -1 when none can (native.split.best_leaf:
        LightGBM's order)."""
        return int(best_leaf(self.gains, self.records[:, SPLIT_FEATURE]))
