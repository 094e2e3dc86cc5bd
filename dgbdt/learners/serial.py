"""Single-process learner: local histograms and split search, no communication."""
import numpy as np

from ..native.common import SPLIT_BIN, SPLIT_DEFAULT_LEFT, SPLIT_FEATURE
import numba

from ..native.common import HIST_DTYPE, HIST_WIDTH
from ..native.histogram import MAX_CHUNKS, build_histogram_colwise, build_histogram_rowwise
from ..native.partition import partition_rows
from ..native.predict import add_tree_binned
from ..native.split import find_best_split


class SerialLearner:
    """Histograms and split search over the local binned data.

    Parameters
    ----------
    data : TrainingData
        binned (n_samples, n_features) in C or F order, layout, feature_offsets, nan_bins.
    split_params : float64[SPLIT_PARAMS_SIZE]
    """

    def __init__(self, data, split_params):
        self.data = data
        self.split_params = split_params
        self._chunk_hists = None
        if data.layout == "row":
            self._chunk_hists = np.empty((MAX_CHUNKS, data.total_bins, HIST_WIDTH), HIST_DTYPE)

    def global_totals(self, sum_gradients, sum_hessians, count):
        return sum_gradients, sum_hessians, count

    def global_counts(self, n_left, n_right):
        return n_left, n_right

    def leaf_histogram(self, sample_indices, ordered_gradients, ordered_hessians,
                       feature_indices, hist):
        if self.data.layout == "row":
            build_histogram_rowwise(self.data.binned, sample_indices, ordered_gradients,
                                    ordered_hessians, self.data.feature_offsets,
                                    self._chunk_hists, hist)
        else:
            build_histogram_colwise(self.data.binned.T, sample_indices, ordered_gradients,
                                    ordered_hessians, feature_indices, self.data.feature_offsets,
                                    hist)

    def best_split(self, hist, feature_indices, totals, record):
        find_best_split(hist, feature_indices, self.data.feature_offsets, self.data.nan_bins,
                        totals[0], totals[1], totals[2], self.split_params, record)

    def partition(self, sample_indices, record, scratch):
        feature = int(record[SPLIT_FEATURE])
        return partition_rows(sample_indices, self.data.columns[:, feature], int(record[SPLIT_BIN]),
                              bool(record[SPLIT_DEFAULT_LEFT]), int(self.data.nan_bins[feature]),
                              numba.get_num_threads(), scratch)

    def add_tree_scores(self, tree, binned, nan_bins, scores):
        """scores += the tree's leaf value for every row of ``binned`` (n, n_features)."""
        add_tree_binned(binned.T, nan_bins, tree.split_feature, tree.threshold_bin,
                        tree.default_left, tree.left_child, tree.right_child, tree.leaf_value,
                        scores)
