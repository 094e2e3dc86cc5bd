"""One regression tree as flat arrays (LightGBM's layout).

Internal node ``k`` splits on ``split_feature[k]``: rows with
``x <= threshold[k]`` (binned: ``bin <= threshold_bin[k]``) go to
``left_child[k]``, others to ``right_child[k]``; NaN follows
``default_left[k]``.  A child link ``c < 0`` is the leaf ``~c``.

Growing a leaf ``L`` into a split keeps the left child as leaf ``L`` and
appends the right child as a new leaf:

    before:  parent --> ~L            after:  parent --> k
                                                   k --left--> ~L
                                                   k --right-> ~n_leaves
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from ..data.categorical import BITSET_CATEGORY_LIMIT
from ..native.common import FEATURE_INDEX_DTYPE, LARGEST, NODE_INDEX_DTYPE
from ..native.predict import CATEGORICAL, CATEGORY_LIST, ZERO_IS_MISSING, add_tree_binned

if TYPE_CHECKING:
    from ..data.store import BinStore

NODE_FIELDS = (
    "split_feature",
    "threshold",
    "threshold_bin",
    "default_left",
    "left_child",
    "right_child",
    "split_gain",
    "internal_value",
    "internal_weight",
    "internal_count",
)
LEAF_FIELDS = ("leaf_value", "leaf_weight", "leaf_count", "leaf_depth")


#: default_left bits (native.predict): bit 0 NaN goes left; bit 1
#: ZERO_IS_MISSING (LightGBM's missing type Zero); bit 2 CATEGORICAL; bit 3
#: CATEGORY_LIST (the categorical node's categories are a sorted list)
__all__ = [
    "BITSET_CATEGORY_LIMIT",
    "CATEGORICAL",
    "CATEGORY_LIST",
    "LARGEST",
    "LEAF_FIELDS",
    "NODE_FIELDS",
    "ZERO_IS_MISSING",
    "Tree",
    "bitset_words",
]

# A categorical split's categories going left are LightGBM's bitset (bit c of
# word c // 32) while the largest is below BITSET_CATEGORY_LIMIT (2**16, in
# dgbdt.data.categorical, which the Dataset's warning reads too), so at most
# 2,048 words (8 KiB) a split; beyond, their sorted list (one word each,
# default_left bit CATEGORY_LIST): a split's size follows its number of
# categories, not its largest code (a bitset holding 2**31 - 2 takes 67M
# words, 256 MiB).


def bitset_words(categories: np.ndarray) -> np.ndarray:
    """LightGBM's bitset of (non-negative) ``categories``: bit c of word c // 32."""
    categories = np.asarray(categories, np.int64)
    words = np.zeros(int(categories.max()) // 32 + 1, np.uint32)
    np.bitwise_or.at(words, categories // 32, (np.uint32(1) << (categories % 32)).astype(np.uint32))
    return words


def _no_categories() -> tuple[np.ndarray, np.ndarray]:
    """(cat_boundaries, cat_threshold) of a tree without categorical splits:
    LightGBM's layout, bitset j = words cat_threshold[b[j]:b[j + 1]]."""
    return np.zeros(1, np.int64), np.zeros(0, np.uint32)


class Tree:
    def __init__(self, max_leaves: int) -> None:
        m = max(max_leaves - 1, 1)
        self.n_leaves = 1
        self.split_feature = np.zeros(m, FEATURE_INDEX_DTYPE)
        self.threshold = np.zeros(m, np.float64)
        self.threshold_bin = np.zeros(m, np.int32)
        self.default_left = np.zeros(m, np.uint8)
        self.left_child = np.zeros(m, NODE_INDEX_DTYPE)
        self.right_child = np.zeros(m, NODE_INDEX_DTYPE)
        self.split_gain = np.zeros(m, np.float64)
        self.internal_value = np.zeros(m, np.float64)
        self.internal_weight = np.zeros(m, np.float64)
        self.internal_count = np.zeros(m, np.float64)
        self.leaf_value = np.zeros(max_leaves, np.float64)
        self.leaf_weight = np.zeros(max_leaves, np.float64)
        self.leaf_count = np.zeros(max_leaves, np.float64)
        self.leaf_depth = np.zeros(max_leaves, np.int32)
        self.leaf_parent = np.full(max_leaves, -1, np.int32)
        self.cat_boundaries, self.cat_threshold = _no_categories()
        self.shrinkage: float | None = None  # a tree read from LightGBM keeps its own

    @property
    def n_nodes(self) -> int:
        return self.n_leaves - 1

    def split(
        self,
        leaf: int,
        *,
        feature: int,
        threshold_bin: int,
        threshold: float,
        default_left: int,
        gain: float,
        parent: tuple[float, float, float],
        left: tuple[float, float, float],
        right: tuple[float, float, float],
        left_bins: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> int:
        """Turn ``leaf`` into an internal node; returns the new right leaf's index.

        ``parent``, ``left``, ``right``: (value, weight, count) of the node and
        of its two children (the left child keeps the index ``leaf``).
        ``left_bins``: a categorical split's (bins, categories) going left; the
        node's threshold (and threshold_bin) is then the index of their bitset
        (or of their list, see BITSET_CATEGORY_LIMIT).
        """
        if left_bins is not None:
            index, listed = self._add_bitset(left_bins[1])
            threshold = threshold_bin = index
            default_left |= CATEGORY_LIST if listed else 0
        node = self.n_leaves - 1
        new_leaf = self.n_leaves
        up = self.leaf_parent[leaf]
        if up >= 0:
            if self.left_child[up] == ~leaf:
                self.left_child[up] = node
            else:
                self.right_child[up] = node
        self.split_feature[node] = feature
        self.threshold_bin[node] = threshold_bin
        self.threshold[node] = threshold
        self.default_left[node] = default_left
        self.split_gain[node] = gain
        self.internal_value[node], self.internal_weight[node], self.internal_count[node] = parent
        self.left_child[node] = ~leaf
        self.right_child[node] = ~new_leaf
        depth = self.leaf_depth[leaf] + 1
        for child, (value, weight, count) in ((leaf, left), (new_leaf, right)):
            self.leaf_value[child] = value
            self.leaf_weight[child] = weight
            self.leaf_count[child] = count
            self.leaf_depth[child] = depth
            self.leaf_parent[child] = node
        self.n_leaves += 1
        return new_leaf

    def _add_bitset(self, categories: np.ndarray) -> tuple[int, bool]:
        """Append the bitset of ``categories`` (LightGBM's layout: bit c of word
        c // 32), or their sorted list when one reaches BITSET_CATEGORY_LIMIT;
        returns (its index, whether a list)."""
        categories = np.asarray(categories, np.int64)
        listed = int(categories.max()) >= BITSET_CATEGORY_LIMIT
        words = np.unique(categories).astype(np.uint32) if listed else bitset_words(categories)
        index = len(self.cat_boundaries) - 1
        self.cat_threshold = np.concatenate([self.cat_threshold, words])
        self.cat_boundaries = np.append(self.cat_boundaries, len(self.cat_threshold))
        return index, listed

    def left_categories(self, node: int) -> np.ndarray:
        """The categories (int64, ascending) that go left at categorical ``node``."""
        j = int(self.threshold[node])
        words = np.asarray(self.cat_threshold[self.cat_boundaries[j] : self.cat_boundaries[j + 1]])
        if self.default_left[node] & CATEGORY_LIST:
            return words.astype(np.int64)
        bits = np.unpackbits(words.astype("<u4").view(np.uint8), bitorder="little")
        return np.flatnonzero(bits).astype(np.int64)

    def finish(self) -> Tree:
        """Trim the arrays to the grown size."""
        n, m = self.n_leaves, self.n_leaves - 1
        for name in NODE_FIELDS:
            setattr(self, name, getattr(self, name)[:m].copy())
        for name in LEAF_FIELDS + ("leaf_parent",):
            setattr(self, name, getattr(self, name)[:n].copy())
        return self

    def scale(self, factor: float) -> None:
        self.leaf_value *= factor
        self.internal_value *= factor

    def add_binned_scores(self, store: BinStore, nan_bins: np.ndarray, scores: np.ndarray) -> None:
        """scores += the tree's leaf value for every row of a bin store
        (dgbdt.data.store.BinStore)."""
        if not store.plain:
            store.add_tree(self, nan_bins, scores)  # checks the split features are stored
            return
        add_tree_binned(
            store.dense.T,
            nan_bins,
            self.split_feature,
            self.threshold_bin,
            self.default_left,
            self.left_child,
            self.right_child,
            self.leaf_value,
            scores,
            (self.cat_boundaries, self.cat_threshold, *store.bin_categories),
        )

    def max_depth(self) -> int:
        return int(self.leaf_depth.max()) if self.n_leaves else 0

    # -- serialisation -------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"num_leaves": int(self.n_leaves)}
        for name in NODE_FIELDS + LEAF_FIELDS:
            arr = getattr(self, name)
            d[name] = arr.tolist()
        if len(self.cat_boundaries) > 1:  # categorical splits (models read from LightGBM)
            d["cat_boundaries"] = self.cat_boundaries.tolist()
            d["cat_threshold"] = self.cat_threshold.tolist()
        if self.shrinkage is not None:
            d["shrinkage"] = float(self.shrinkage)
        return d

    #: dtype of each integer field in memory (the others are float64).
    INT_DTYPES: dict[str, Any] = {
        "split_feature": FEATURE_INDEX_DTYPE,
        "threshold_bin": np.int32,
        "default_left": np.uint8,
        "left_child": NODE_INDEX_DTYPE,
        "right_child": NODE_INDEX_DTYPE,
        "leaf_depth": np.int32,
    }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Tree:
        """A tree from its dict (``to_dict``); the values are not validated here:
        files go through ``dgbdt.models.json_file``, which checks every field first."""
        n = int(d["num_leaves"])
        arrays = {
            name: np.asarray(d[name], dtype=cls.INT_DTYPES.get(name, np.float64))
            for name in NODE_FIELDS + LEAF_FIELDS
        }
        if "cat_boundaries" in d:
            arrays["cat_boundaries"], arrays["cat_threshold"] = (
                d["cat_boundaries"],
                d["cat_threshold"],
            )
        return cls.from_arrays(n, arrays)

    @classmethod
    def from_arrays(cls, n_leaves: int, arrays: Mapping[str, Any]) -> Tree:
        """A tree of ``n_leaves`` leaves from validated arrays, one per field."""
        tree = cls.__new__(cls)
        tree.n_leaves = n_leaves
        for name in NODE_FIELDS + LEAF_FIELDS:
            setattr(
                tree, name, np.asarray(arrays[name], dtype=cls.INT_DTYPES.get(name, np.float64))
            )
        tree.leaf_parent = np.full(n_leaves, -1, np.int32)
        tree.cat_boundaries, tree.cat_threshold = _no_categories()
        tree.shrinkage = arrays.get("shrinkage")
        if "cat_boundaries" in arrays:
            tree.cat_boundaries = np.asarray(arrays["cat_boundaries"], np.int64)
            tree.cat_threshold = np.asarray(arrays["cat_threshold"], np.uint32)
        for links in (tree.left_child, tree.right_child):
            is_leaf = links < 0
            tree.leaf_parent[~links[is_leaf]] = np.flatnonzero(is_leaf)
        return tree
