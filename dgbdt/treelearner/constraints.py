"""What a leaf's split scan must respect beyond the data: monotone constraints,
interaction constraints, path_smooth's parent output, extra_trees' random
thresholds and feature_fraction_bynode's features.

The grower keeps one :class:`TreeConstraints` per tree and asks it, before
each scan, for the leaf's :class:`LeafContext` (what native.split reads:
``values`` = its output, the bounds on its children's outputs and the monotone
penalty; ``rand`` = extra_trees' draws; ``usable`` = the features the leaf may
split on).  After each split it tells it the split, and (monotone method
``intermediate``) gets back the leaves whose bounds changed, to be scanned
again.  Everything here is global (features by global index, draws keyed on
(seed, tree, leaf, feature)), so every rank computes the same.

LightGBM's rules, read from src/treelearner/monotone_constraints.hpp
(BasicLeafConstraints, IntermediateLeafConstraints), col_sampler.hpp
(GetByNode) and serial_tree_learner.cpp:

* basic: after a split on a feature constrained increasing (decreasing), the
  left child's outputs are capped (floored) at the mean of the two children's
  outputs and the right child's floored (capped) there; both inherit the
  parent's bounds.
* intermediate: the bounds are the children's outputs themselves, and the
  leaves beside the new ones on the other side of a constrained ancestor
  split (the leaves whose region touches theirs) get their bounds tightened
  and their best split recomputed.
* monotone_penalty p: a split on a constrained feature at depth d has its
  gain multiplied by 1 - p / 2^d (p <= 1), 1 - 2^(p - 1 - d) (p > 1), or
  kEpsilon (p >= d + 1); plus kEpsilon, as LightGBM.
* interaction constraints: a leaf may split on the features of every set
  that holds all the features on its branch (a root: of every set), and on
  its branch's own.
* extra_trees and feature_fraction_bynode draw afresh at every node, keyed on
  (seed, tree, leaf, depth): a left child keeps its parent's leaf index, one
  level deeper.  Unlike LightGBM, intermediate monotone constraints stay on
  with feature_fraction_bynode (LightGBM falls back to basic: it cannot draw
  a node's features again when it recomputes its split; the keyed draws can),
  and on every distributed learner (LightGBM falls back to basic there too).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..native.common import NODE_MAX, NODE_MIN, NODE_PARENT_OUTPUT, NODE_PENALTY, NODE_SIZE
from ..native.predict import CATEGORICAL
from ..native.random import uniform_fill
from ..native.split import K_EPSILON, leaf_output
from ..streams import STREAM_BYNODE, STREAM_EXTRA_TREES, stream_key

if TYPE_CHECKING:
    from ..boosting.loop import TrainingData
    from ..models.tree import Tree

__all__ = ["LeafContext", "TreeConstraints", "monotone_penalty", "uses_constraints"]


def monotone_penalty(depth: int, penalty: float) -> float:
    """The factor on a constrained split's gain at ``depth`` (LightGBM's
    ComputeMonotoneSplitGainPenalty)."""
    if penalty >= depth + 1.0:
        return K_EPSILON
    if penalty <= 1.0:
        return 1.0 - penalty / 2.0**depth + K_EPSILON
    return 1.0 - 2.0 ** (penalty - 1.0 - depth) + K_EPSILON


def uses_constraints(cfg: dict[str, Any]) -> bool:
    """Whether a training needs leaf contexts at all (else the scans take None)."""
    return bool(
        cfg["monotone_constraints"] is not None
        or cfg["interaction_constraints"] is not None
        or cfg["path_smooth"] > K_EPSILON
        or cfg["extra_trees"]
        or cfg["feature_fraction_bynode"] < 1.0
    )


_NO_INT8, _NO_FLOAT, _NO_UINT8 = np.zeros(0, np.int8), np.zeros(0), np.zeros(0, np.uint8)


class LeafContext:
    """One leaf's scan inputs: ``values`` float64[NODE_SIZE]; ``monotone``
    int8[n_features], ``rand`` float64[n_features] and ``usable``
    uint8[n_features], each None when not in use (global feature indices)."""

    def __init__(
        self,
        values: np.ndarray,
        monotone: np.ndarray | None,
        rand: np.ndarray | None,
        usable: np.ndarray | None,
    ) -> None:
        self.values, self.monotone, self.rand, self.usable = values, monotone, rand, usable

    def kernel_args(self, global_of_local: np.ndarray) -> tuple[np.ndarray, ...]:
        """(values, monotone, rand, usable) for native.split over local features
        ``global_of_local`` (empty arrays for what is not in use)."""
        pick = [
            _NO_INT8 if self.monotone is None else self.monotone[global_of_local],
            _NO_FLOAT if self.rand is None else self.rand[global_of_local],
            _NO_UINT8 if self.usable is None else self.usable[global_of_local],
        ]
        return (self.values, *pick)


class TreeConstraints:
    """The constraints of the tree being grown.

    Parameters
    ----------
    cfg : resolved params
    monotone : int8[n_features_global] or None
    interactions : list of frozensets of global feature indices, or None
    n_features : the number of global features
    """

    def __init__(
        self,
        cfg: dict[str, Any],
        monotone: np.ndarray | None,
        interactions: list[frozenset[int]] | None,
        n_features: int,
    ) -> None:
        self.monotone = monotone
        self.interactions = interactions
        self.n_features = n_features
        self.intermediate = cfg["monotone_constraints_method"] == "intermediate"
        self.penalty = cfg["monotone_penalty"]
        self.path_smooth = cfg["path_smooth"]
        self.split_params = (cfg["lambda_l1"], cfg["lambda_l2"], cfg["max_delta_step"])
        self.extra_seed = (
            (cfg["extra_seed"] + cfg["seed"]) & 0x7FFFFFFF if cfg["extra_trees"] else None
        )
        self.bynode = cfg["feature_fraction_bynode"]
        self.bynode_seed = (cfg["feature_fraction_seed"] + cfg["seed"]) & 0x7FFFFFFF
        self.num_leaves = cfg["num_leaves"]

    def begin_tree(self, tree_index: int, tree_features: np.ndarray) -> None:
        """Reset for tree ``tree_index`` over the global features ``tree_features``."""
        n = self.num_leaves
        self.tree_index = tree_index
        self.tree_features = np.asarray(tree_features)
        self.bounds = np.tile([-np.inf, np.inf], (n, 1))
        self.branch: list[list[int]] = [[] for _ in range(n)]
        self.in_monotone_subtree = np.zeros(n, np.bool_)

    # -- what a scan reads ---------------------------------------------------------
    def context(self, tree: Tree, leaf: int, parent_output: float | None = None) -> LeafContext:
        """The LeafContext of ``leaf``'s scan; ``parent_output`` defaults to the
        leaf's own output (LightGBM's leaf weight)."""
        values = np.empty(NODE_SIZE, np.float64)
        values[NODE_PARENT_OUTPUT] = (
            tree.leaf_value[leaf] if parent_output is None else parent_output
        )
        values[NODE_MIN], values[NODE_MAX] = self.bounds[leaf]
        values[NODE_PENALTY] = monotone_penalty(int(tree.leaf_depth[leaf]), self.penalty)
        draws, usable = self._draws(tree, leaf), self._usable(tree, leaf)
        return LeafContext(values, self.monotone, draws, usable)

    def _node_draws(self, seed: int, stream: int, tree: Tree, leaf: int) -> np.ndarray:
        """One draw per global feature for the node ``leaf`` is now: keyed on
        (seed, tree, leaf, depth), as a left child keeps its parent's index."""
        draws = np.empty(self.n_features, np.float64)
        node = int(leaf) + self.num_leaves * int(tree.leaf_depth[leaf])
        uniform_fill(seed, stream_key(stream, self.tree_index), node * self.n_features, draws)
        return draws

    def _draws(self, tree: Tree, leaf: int) -> np.ndarray | None:
        if self.extra_seed is None:
            return None
        return self._node_draws(self.extra_seed, STREAM_EXTRA_TREES, tree, leaf)

    def _allowed(self, leaf: int) -> set[int] | None:
        """The global features ``leaf`` may split on by the interaction
        constraints (None: all)."""
        if self.interactions is None:
            return None
        branch = set(self.branch[leaf])
        allowed = set(branch)
        for group in self.interactions:
            if branch <= group:
                allowed |= group
        return allowed

    def _usable(self, tree: Tree, leaf: int) -> np.ndarray | None:
        allowed = self._allowed(leaf)
        if allowed is None and self.bynode >= 1.0:
            return None
        candidates = self.tree_features
        if allowed is not None:
            candidates = candidates[np.isin(candidates, np.fromiter(allowed, np.int64))]
        usable = np.zeros(self.n_features, np.uint8)
        if self.bynode < 1.0 and len(candidates):
            # LightGBM's GetCnt: round(n * fraction) of the tree's features, at
            # least one; no more than the interaction constraints allow
            n_tree = len(self.tree_features)
            n_used = min(max(int(n_tree * self.bynode + 0.5), 1), len(candidates))
            draws = self._node_draws(self.bynode_seed, STREAM_BYNODE, tree, leaf)
            candidates = candidates[np.argsort(draws[candidates], kind="stable")[:n_used]]
        usable[candidates] = 1
        return usable

    # -- after a split -------------------------------------------------------------
    def split(
        self,
        tree: Tree,
        leaf: int,
        right: int,
        record_values: tuple[float, float],
        gains: np.ndarray,
    ) -> list[int]:
        """Record the split of ``leaf`` (into ``leaf`` and ``right``) in tree
        ``tree``; ``record_values`` = (left output, right output).  Returns the
        leaves whose best split must be computed again (intermediate)."""
        node = tree.leaf_parent[leaf]
        feature = int(tree.split_feature[node])
        self.branch[right] = self.branch[leaf] = [*self.branch[leaf], feature]
        self.bounds[right] = self.bounds[leaf]
        mono = 0 if self.monotone is None else int(self.monotone[feature])
        numerical = not tree.default_left[node] & CATEGORICAL
        left_out, right_out = record_values
        if not self.intermediate:
            if numerical and mono != 0:
                mid = (left_out + right_out) / 2.0
                self._cap(leaf, right, mono, mid, mid)
            return []
        if mono != 0 or self.in_monotone_subtree[leaf]:
            self.in_monotone_subtree[leaf] = self.in_monotone_subtree[right] = True
        if not self.in_monotone_subtree[leaf]:
            return []
        if numerical and mono != 0:
            self._cap(leaf, right, mono, right_out, left_out)
        return _Neighbours(self, tree, node, record_values, gains).leaves()

    def _cap(self, leaf: int, right: int, mono: int, left_cap: float, right_floor: float) -> None:
        """Increasing: the left child's outputs at most ``left_cap``, the right
        one's at least ``right_floor``; decreasing: the other way round."""
        if mono > 0:
            self.bounds[leaf, 1] = min(self.bounds[leaf, 1], left_cap)
            self.bounds[right, 0] = max(self.bounds[right, 0], right_floor)
        else:
            self.bounds[leaf, 0] = max(self.bounds[leaf, 0], left_cap)
            self.bounds[right, 1] = min(self.bounds[right, 1], right_floor)

    def recompute_context(
        self, tree: Tree, leaf: int, totals: tuple[float, float, float]
    ) -> LeafContext:
        """The context of scanning ``leaf`` again after its bounds changed: its
        parent output is its own unsmoothed output (LightGBM's
        RecomputeBestSplitForLeaf), 0 without path_smooth."""
        parent = 0.0
        if self.path_smooth > K_EPSILON:
            parent = leaf_output(totals[0], totals[1], *self.split_params)
        return self.context(tree, leaf, parent_output=parent)


class _Neighbours:
    """IntermediateLeafConstraints' walk: up from the new node, and down the
    other side of every constrained ancestor split, to the leaves contiguous
    with the two new ones; their bounds are tightened by the new outputs."""

    def __init__(
        self,
        owner: TreeConstraints,
        tree: Tree,
        node: int,
        outputs: tuple[float, float],
        gains: np.ndarray,
    ) -> None:
        self.owner, self.tree, self.gains = owner, tree, gains
        self.left_out, self.right_out = outputs
        self.feature = int(tree.split_feature[node])
        self.threshold = int(tree.threshold_bin[node])
        self.parent = _node_parents(tree)
        self.node = node
        # (feature, threshold, came from the right child) going up
        self.path: list[tuple[int, int, bool]] = []
        self.updated: list[int] = []

    def leaves(self) -> list[int]:
        node = self.node
        while self.parent[node] >= 0:
            up = self.parent[node]
            self._visit_ancestor(up, node)
            node = up
        return self.updated

    def _visit_ancestor(self, up: int, node: int) -> None:
        tree = self.tree
        feature = int(tree.split_feature[up])
        from_right = int(tree.right_child[up]) == node
        numerical = not tree.default_left[up] & CATEGORICAL
        # only the first turn on a feature, per side, can reach contiguous leaves
        if not numerical or any(f == feature and r == from_right for f, _, r in self.path):
            return
        mono = self.owner.monotone[feature] if self.owner.monotone is not None else 0
        if mono != 0:
            left_is_here = int(tree.left_child[up]) == node
            other = int(tree.right_child[up]) if left_is_here else int(tree.left_child[up])
            update_max = left_is_here if mono < 0 else not left_is_here
            self._down(other, update_max, True, True)
        self.path.append((feature, int(tree.threshold_bin[up]), from_right))

    def _down(self, node: int, update_max: bool, use_left: bool, use_right: bool) -> None:
        if node < 0:
            self._update_leaf(~node, update_max, use_left, use_right)
            return
        tree = self.tree
        feature, threshold = int(tree.split_feature[node]), int(tree.threshold_bin[node])
        numerical = not tree.default_left[node] & CATEGORICAL
        go_left, go_right = self._keep_going(feature, threshold, numerical)
        left_for_right = right_for_left = True
        if numerical and feature == self.feature:
            left_for_right = threshold < self.threshold
            right_for_left = threshold > self.threshold
        if go_left:
            self._down(
                int(tree.left_child[node]), update_max, use_left, right_for_left and use_right
            )
        if go_right:
            self._down(
                int(tree.right_child[node]), update_max, left_for_right and use_left, use_right
            )

    def _keep_going(self, feature: int, threshold: int, numerical: bool) -> tuple[bool, bool]:
        """LightGBM's ShouldKeepGoingLeftRight: a child beyond a threshold of the
        path's feature cannot touch the new leaves."""
        go_left = go_right = True
        if numerical:
            for f, t, from_right in self.path:
                if f == feature:
                    if threshold >= t and not from_right:
                        go_right = False
                    if threshold <= t and from_right:
                        go_left = False
        return go_left, go_right

    def _update_leaf(self, leaf: int, update_max: bool, use_left: bool, use_right: bool) -> None:
        if self.gains[leaf] == -np.inf:
            return  # cannot split: its bounds no longer matter
        if use_left and use_right:
            lo, hi = min(self.left_out, self.right_out), max(self.left_out, self.right_out)
        elif use_right:
            lo = hi = self.right_out
        else:
            lo = hi = self.left_out
        bounds = self.owner.bounds[leaf]
        if update_max:
            changed = lo < bounds[1]
            bounds[1] = min(bounds[1], lo)
        else:
            changed = hi > bounds[0]
            bounds[0] = max(bounds[0], hi)
        if changed:
            self.updated.append(leaf)


def _node_parents(tree: Tree) -> np.ndarray:
    """int64[n_nodes]: each node's parent node, -1 for the root."""
    n = tree.n_leaves - 1
    parent = np.full(n, -1, np.int64)
    for k in range(n):
        for child in (tree.left_child[k], tree.right_child[k]):
            if child >= 0:
                parent[child] = k
    return parent


def _global_monotone(cfg: dict[str, Any], data: TrainingData) -> np.ndarray | None:
    """int8[n_features_global] of the monotone constraints, or None; checks
    their number and that no categorical feature is constrained."""
    given = cfg["monotone_constraints"]
    if given is None:
        return None
    n = data.n_features_global
    if len(given) != n:
        raise ValueError(
            f"Parameter 'monotone_constraints' has {len(given)} entries; the data has "
            f"{n} features (one entry per feature)"
        )
    monotone = np.asarray(given, np.int8)
    is_cat = data.global_mapper.is_categorical
    bad = np.flatnonzero((monotone != 0) & is_cat)
    if len(bad):
        raise ValueError(
            f"Parameter 'monotone_constraints': feature {int(bad[0])} "
            f"({data.feature_names[bad[0]]!r}) is categorical and cannot be constrained"
        )
    return monotone


def _feature_index(item: int | str, names: Sequence[str], n: int) -> int:
    """A global feature index from an index or a feature name (ValueError naming it)."""
    if isinstance(item, str):
        if item not in names:
            raise ValueError(f"Parameter 'interaction_constraints': unknown feature name {item!r}")
        return names.index(item)
    if not 0 <= item < n:
        raise ValueError(
            f"Parameter 'interaction_constraints': feature index {item} is out of range "
            f"(the data has {n} features)"
        )
    return item


def _global_interactions(cfg: dict[str, Any], data: TrainingData) -> list[frozenset[int]] | None:
    """The interaction sets as frozensets of global feature indices, or None."""
    given = cfg["interaction_constraints"]
    if given is None:
        return None
    names, n = list(data.feature_names), data.n_features_global
    return [frozenset(_feature_index(i, names, n) for i in group) for group in given]


def make_tree_constraints(cfg: dict[str, Any], data: TrainingData) -> TreeConstraints | None:
    """The TreeConstraints of a training on ``data`` (TrainingData), or None
    when it uses none of them."""
    if not uses_constraints(cfg):
        return None
    monotone = _global_monotone(cfg, data)
    interactions = _global_interactions(cfg, data)
    return TreeConstraints(cfg, monotone, interactions, data.n_features_global)
