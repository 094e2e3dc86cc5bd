"""Feature-parallel learner "by dimension": each rank holds all rows of its
own block of columns (memory per rank falls as 1/K).

Histograms and scans cover the local columns only; the best split is agreed
by gathering one record per rank.  Only the owner of the winning feature can
tell which rows go left, so it broadcasts the leaf's row directions as a
bitset (one bit per row of the leaf); every rank then partitions stably, so
row order stays the same everywhere.  Rows the partition does not place
(out-of-bag rows, validation rows) are routed the same way: per tree, each
rank computes the direction bits of every row at the nodes whose feature it
owns, and one allreduce of the packed bits gives every rank all of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ...data.binning import BinMapper
from ...distributed.comm import agreed
from ...native.common import SPLIT_BIN, SPLIT_DEFAULT_LEFT, SPLIT_FEATURE
from ...native.predict import CATEGORICAL
from .base import agree_best_splits, left_mask_of
from .serial import SerialLearner

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ...boosting.loop import TrainingData
    from ...data.dataset import Dataset
    from ...data.store import BinStore
    from ...distributed.comm import SerialComm
    from ...models.tree import Tree
    from .base import LeafScan


def assemble_global_mapper(
    comm: SerialComm, dataset: Dataset
) -> tuple[BinMapper, list[str], np.ndarray]:
    """Global bin mapper from every rank's column block; checks the blocks
    cover every column exactly once.  Returns (mapper, names, owner_of)."""
    local = dataset.bin_mapper
    assert local is not None and dataset.feature_indices is not None  # a constructed block
    ranges = local.value_ranges
    if ranges is None:
        ranges = np.full((local.n_features, 2), np.nan)
    mine = (
        dataset.feature_indices.tolist(),
        [ub.tolist() for ub in local.upper_bounds],
        local.nan_bins.tolist(),
        (local.zero_bins >= 0).tolist(),
        list(dataset.feature_name),
        ranges.tolist(),
        [None if c is None else c.tolist() for c in local.categories or [None] * local.n_features],
    )
    blocks = comm.allgather_object(mine)  # once per training: pickling is fine
    n_features = sum(len(b[0]) for b in blocks)
    owner_of = np.full(n_features, -1, np.int64)
    upper_bounds: list[Any]
    names: list[Any]
    upper_bounds, nan_bins, names = (
        [None] * n_features,
        np.zeros(n_features, np.int32),
        [None] * n_features,
    )
    value_ranges = np.full((n_features, 2), np.nan)
    zero_missing = np.zeros(n_features, bool)
    categories: list[np.ndarray | None] = [None] * n_features
    for rank, (indices, ubs, nbs, zms, block_names, block_ranges, cats) in enumerate(blocks):
        for g, ub, nb, zm, name, value_range, cat in zip(
            indices, ubs, nbs, zms, block_names, block_ranges, cats, strict=True
        ):
            if not 0 <= g < n_features or owner_of[g] >= 0:
                # every rank sees the same blocks and raises
                raise agreed(
                    ValueError(
                        f"feature_indices must cover columns 0..{n_features - 1} "
                        f"exactly once over all ranks; column {g} (rank {rank}) is "
                        f"{'out of range' if not 0 <= g < n_features else 'held twice'}"
                    )
                )
            owner_of[g] = rank
            upper_bounds[g], nan_bins[g], names[g] = np.asarray(ub), nb, name
            value_ranges[g], zero_missing[g] = value_range, zm
            categories[g] = None if cat is None else np.asarray(cat, np.int64)
    has_categories = any(c is not None for c in categories)
    mapper = BinMapper(
        upper_bounds, nan_bins, value_ranges, zero_missing, categories if has_categories else None
    )
    return mapper, names, owner_of


class FeatureBlockLearner(SerialLearner):
    def __init__(
        self, data: TrainingData, split_params: np.ndarray, comm: SerialComm, owner_of: np.ndarray
    ) -> None:
        super().__init__(data, split_params)
        self.comm = comm
        self.owner_of = owner_of
        self.global_of_local = data.global_feature_indices
        self.local_of_global = np.full(len(owner_of), -1, np.int64)
        self.local_of_global[self.global_of_local] = np.arange(len(self.global_of_local))

    def histogram_features(self, feature_indices: np.ndarray) -> np.ndarray:
        """This rank's columns among the (global) ``feature_indices``, as local indices
        in global order (not sorted: ties between equal gains go to the lower
        global feature, as on one process)."""
        local = self.local_of_global[feature_indices]
        return local[local >= 0].astype(np.int32)

    def agree(self, leaves: Sequence[LeafScan], splittable: list[np.ndarray]) -> list[np.ndarray]:
        # The scan saw local columns: the records and flags speak of global features.
        for s in leaves:
            if s.record[SPLIT_FEATURE] >= 0:
                s.record[SPLIT_FEATURE] = self.global_of_local[int(s.record[SPLIT_FEATURE])]
        found = [self.global_of_local[f] for f in splittable]
        masks = agree_best_splits(self.comm, [s.record for s in leaves], found, len(self.owner_of))
        return [s.feature_indices[m[s.feature_indices]] for s, m in zip(leaves, masks, strict=True)]

    def _goes_left(self, rows: np.ndarray, feature: int, record: np.ndarray) -> np.ndarray:
        local = self.local_of_global[feature]
        bins = self.feature_column(local, rows)[rows].astype(np.int64)
        offsets = self.data.feature_offsets
        mask = left_mask_of(record, int(offsets[local + 1] - offsets[local]))
        if mask is not None:  # a categorical split
            return mask[bins].astype(bool)
        nan_bin = self.data.missing_bins[local]
        default_left = bool(record[SPLIT_DEFAULT_LEFT])
        return np.where(bins == nan_bin, default_left, bins <= int(record[SPLIT_BIN]))

    def partition(self, sample_indices: np.ndarray, record: np.ndarray, scratch: np.ndarray) -> int:
        feature = int(record[SPLIT_FEATURE])
        owner = int(self.owner_of[feature])
        n = len(sample_indices)
        if self.comm.rank == owner:
            bits = np.packbits(self._goes_left(sample_indices, feature, record))
        else:
            bits = np.zeros((n + 7) // 8, np.uint8)
        left = np.unpackbits(self.comm.bcast(bits, root=owner), count=n).astype(bool)
        n_left = int(left.sum())
        sample_indices[:] = np.concatenate([sample_indices[left], sample_indices[~left]])
        return n_left

    def add_tree_scores(
        self, tree: Tree, store: BinStore, nan_bins: np.ndarray, scores: np.ndarray
    ) -> None:
        """scores += the tree's leaf values, rows routed with gathered direction bits."""
        n_rows, n_nodes = len(scores), tree.n_leaves - 1
        if n_nodes == 0:
            scores += tree.leaf_value[0]
            return
        bits = np.zeros((n_nodes, (n_rows + 7) // 8), np.uint8)
        rows = np.arange(n_rows)
        for k in range(n_nodes):
            feature = int(tree.split_feature[k])
            if self.owner_of[feature] == self.comm.rank:
                local = self.local_of_global[feature]
                b = store.column(local).astype(np.int64)
                if tree.default_left[k] & CATEGORICAL:
                    goes = _in_node_bitset(tree, k, store, local, b)
                else:
                    goes = np.where(
                        b == nan_bins[local],
                        bool(tree.default_left[k] & 1),
                        b <= tree.threshold_bin[k],
                    )
                bits[k] = np.packbits(goes)
        # Each node's bits come from its owner alone: the sum is an OR.
        left = np.unpackbits(self.comm.allreduce(bits), axis=1, count=n_rows).astype(bool)
        node = np.zeros(n_rows, np.int64)
        done = np.zeros(n_rows, bool)
        leaf = np.zeros(n_rows, np.int64)
        while not done.all():
            active = rows[~done]
            nxt = np.where(
                left[node[active], active],
                tree.left_child[node[active]],
                tree.right_child[node[active]],
            )
            reached = nxt < 0
            leaf[active[reached]] = ~nxt[reached]
            done[active[reached]] = True
            node[active[~reached]] = nxt[~reached]
        scores += tree.leaf_value[leaf]


def _in_node_bitset(
    tree: Tree, k: int, store: BinStore, local: int, bins: np.ndarray
) -> np.ndarray:
    """Whether each of ``bins`` (of local feature ``local``) goes left at the
    categorical node ``k``: its category is one of the node's (bin 0's is -1)."""
    offsets, values = store.bin_categories
    return np.isin(values[offsets[local] + bins], tree.left_categories(k))
