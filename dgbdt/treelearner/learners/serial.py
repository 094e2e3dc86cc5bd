"""Single-process learner: local histograms and split search, no communication.

It is also the local half every distributed strategy builds on: building a
histogram of this rank's rows, scanning bins, partitioning rows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numba
import numpy as np

from ...native.common import SPLIT_BIN, SPLIT_DEFAULT_LEFT, SPLIT_FEATURE
from ...native.partition import partition_rows
from ...native.split import find_best_split
from ...native.store import store_columns
from .base import left_mask_of

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ...boosting.loop import TrainingData
    from ...data.store import BinStore
    from ...models.tree import Tree
    from ..constraints import LeafContext
    from ..histograms import HistogramKind
    from .base import LeafScan


class SerialLearner:
    """Histograms and split search over the local binned data (the calls of
    dgbdt.treelearner.learners.base.Learner).

    Parameters
    ----------
    data : TrainingData
        binned (n_samples, n_features) in C or F order, layout, feature_offsets, nan_bins.
    split_params : float64[SPLIT_PARAMS_SIZE]
    """

    subtracted_bins = slice(None)
    # A child's histogram is built for the features splittable in its parent
    # only (LightGBM's is_feature_used): the child and its own children scan no
    # other, and the larger child's (parent - smaller) bins of those are exact.
    # Voting sends bins of features elected by the vote, so it builds all.
    builds_parent_splittable = True

    def __init__(self, data: TrainingData, split_params: np.ndarray) -> None:
        self.data = data
        self.split_params = split_params
        self.row_wise = self.builds_row_wise(data)
        # LightGBM's most_freq_bin of every (local) feature, from global counts
        # (dgbdt.data.store.most_frequent_bins).
        self.most_freq_bins = data.most_freq_bins
        # A feature's bins at a leaf's rows, for features not in a plain column.
        self._bins = None if data.store.plain else np.empty(data.n_samples, np.uint16)
        self._flags = np.zeros(len(data.feature_offsets) - 1, np.uint8)
        n_cols = 0 if data.store.plain else data.store.dense.shape[1]
        self._seen = np.empty(n_cols, np.uint8)
        self._cols = np.empty(n_cols, np.int64)

    @staticmethod
    def builds_row_wise(data: TrainingData) -> bool:
        """Whether histograms are built row by row (C-order binned data) or
        column by column (the column-major copy)."""
        return data.layout == "row"

    def sum_over_rows(self, values: np.ndarray) -> np.ndarray:
        """Sums over every rank's rows (this rank holds them all); the
        row-sharded learners sum over the ranks."""
        return np.asarray(values)

    def global_totals(
        self, sum_gradients: float, sum_hessians: float, count: float
    ) -> tuple[float, float, float]:
        """This rank holds every row (the row-sharded learners sum: ShardedRows)."""
        return float(sum_gradients), float(sum_hessians), float(count)

    def global_counts(self, n_left: int, n_right: int) -> tuple[int, int]:
        return int(n_left), int(n_right)

    def histogram_features(self, feature_indices: np.ndarray) -> np.ndarray:
        """The (local) features whose bins this rank builds."""
        return feature_indices

    def store_columns(self, feature_indices: np.ndarray) -> tuple[np.ndarray, bool]:
        """(dense columns, whether the sparse part) of the bin store that hold
        the features this rank builds (native.store.store_columns)."""
        features = self.histogram_features(feature_indices)
        n, sparse = store_columns(features, self.data.store.feature_map, self._seen, self._cols)
        return self._cols[:n], sparse

    def scanned_features(self, feature_indices: np.ndarray) -> np.ndarray:
        """The (local) features whose bins this rank's split scan reads."""
        return self.histogram_features(feature_indices)

    def leaf_histogram(
        self,
        rows: np.ndarray,
        kind: HistogramKind,
        feature_indices: np.ndarray,
        totals: tuple[float, float, float],
        hist: np.ndarray,
    ) -> None:
        """``hist`` = the histogram of the rows (all of them are here)."""
        kind.store(kind.build_local(self, rows, feature_indices, totals[2], hist), hist)
        kind.fix(self, hist, self.scanned_features(feature_indices), totals)

    def best_splits(self, kind: HistogramKind, leaves: Sequence[LeafScan]) -> list[np.ndarray]:
        """Each leaf's best split (dgbdt.treelearner.learners.base.Learner):
        every leaf scanned here, then agreed."""
        found = [
            self.scan(s.hist, s.feature_indices, s.totals, s.record, kind.scales, s.node)
            for s in leaves
        ]
        return self.agree(leaves, found)

    def node_args(self, node: LeafContext | None) -> tuple[np.ndarray, ...]:
        """The split kernels' trailing arguments for ``node`` (none without one:
        the kernels' defaults)."""
        return () if node is None else node.kernel_args(self.data.global_feature_indices)

    def scan(
        self,
        hist: np.ndarray,
        feature_indices: np.ndarray,
        totals: tuple[float, float, float],
        record: np.ndarray,
        scales: tuple[float, float],
        node: LeafContext | None = None,
    ) -> np.ndarray:
        """find_best_split over this rank's share of ``feature_indices``, not yet
        agreed (``scales`` map integer sums back to gradients: 1.0 for floats);
        returns the features splittable in this rank's scan (its indices)."""
        features = self.scanned_features(feature_indices)
        flags = self._flags[: len(features)]  # every entry is written
        find_best_split(
            hist,
            features,
            self.data.feature_offsets,
            self.data.nan_bins,
            self.data.zero_bins,
            self.most_freq_bins,
            totals[0],
            totals[1],
            totals[2],
            self.split_params,
            record,
            flags,
            *scales,
            self.data.categorical,
            *self.node_args(node),
        )
        return features[flags.view(np.bool_)]

    def agree(self, leaves: Sequence[LeafScan], splittable: list[np.ndarray]) -> list[np.ndarray]:
        """The best split of every rank's record of each leaf, and the features
        splittable on any rank (one process: its own)."""
        return splittable

    def feature_column(self, feature: int, rows: np.ndarray) -> np.ndarray:
        """The bins of (local) ``feature``, read at ``rows`` (a uint16[n_samples]
        scratch filled there, or the plain column itself)."""
        if self._bins is None:
            return self.data.columns[:, feature]
        return self.data.store.bins_of(feature, rows, self._bins)

    def partition(self, sample_indices: np.ndarray, record: np.ndarray, scratch: np.ndarray) -> int:
        feature = int(record[SPLIT_FEATURE])
        offsets = self.data.feature_offsets
        store = self.data.store
        # a feature of a dense column is decoded row by row inside the partition
        column: tuple[np.ndarray, int, int, int, int] | np.ndarray | None
        column = None if store.plain else store.decoder(feature)
        if column is None:
            column = self.feature_column(feature, sample_indices)
        return partition_rows(
            sample_indices,
            column,
            int(record[SPLIT_BIN]),
            bool(record[SPLIT_DEFAULT_LEFT]),
            int(self.data.missing_bins[feature]),
            numba.get_num_threads(),
            scratch,
            left_mask_of(record, int(offsets[feature + 1] - offsets[feature])),
        )

    def add_tree_scores(
        self, tree: Tree, store: BinStore, nan_bins: np.ndarray, scores: np.ndarray
    ) -> None:
        """scores += the tree's leaf value for every row of a bin store."""
        tree.add_binned_scores(store, nan_bins, scores)
