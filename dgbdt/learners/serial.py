"""Single-process learner: local histograms and split search, no communication."""
import numba
import numpy as np

from ..native.common import HIST_DTYPE, HIST_WIDTH, SPLIT_BIN, SPLIT_DEFAULT_LEFT, SPLIT_FEATURE
from ..native.histogram import MAX_CHUNKS, build_histogram_colwise, build_histogram_rowwise
from ..native.partition import partition_rows
from ..native.predict import add_tree_binned
from ..native.quantize import (NARROW_DTYPE, build_int_histogram_colwise,
                               build_int_histogram_rowwise, unpack_histogram, widen_words)
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
        self.row_wise = data.layout == "row"
        self._chunk_hists = None
        if self.row_wise:
            self._chunk_hists = np.empty((MAX_CHUNKS, data.total_bins, HIST_WIDTH), HIST_DTYPE)
        self._int_scratch = {}      # quantized training: per word dtype, local histograms

    def global_totals(self, sum_gradients, sum_hessians, count):
        return sum_gradients, sum_hessians, count

    def global_counts(self, n_left, n_right):
        return n_left, n_right

    def sum_over_rows(self, values):
        """Sums over every rank's rows (this rank holds them all)."""
        return values

    def histogram_features(self, feature_indices):
        """The (local) features whose bins this rank builds."""
        return feature_indices

    def leaf_histogram(self, sample_indices, ordered_gradients, ordered_hessians,
                       feature_indices, hist):
        if self.row_wise:
            build_histogram_rowwise(self.data.binned, sample_indices, ordered_gradients,
                                    ordered_hessians, self.data.feature_offsets,
                                    self._chunk_hists, hist)
        else:
            build_histogram_colwise(self.data.columns.T, sample_indices, ordered_gradients,
                                    ordered_hessians, self.histogram_features(feature_indices),
                                    self.data.feature_offsets, hist)

    # -- quantized training: integer words (native/quantize.py) ----------------------
    def _local_words(self, dtype):
        """Scratch histograms of one word dtype: (hist, chunk_hists)."""
        if dtype not in self._int_scratch:
            total = self.data.total_bins
            chunks = np.empty((MAX_CHUNKS, total) if self.row_wise else (1, 1), dtype)
            self._int_scratch[dtype] = (np.zeros(total, dtype), chunks)
        return self._int_scratch[dtype]

    def local_int_histogram(self, sample_indices, words, feature_indices):
        """This rank's integer histogram of the rows, in the dtype of ``words``
        (a scratch buffer, valid until the next call with that dtype)."""
        hist, chunks = self._local_words(words.dtype.type)
        if self.row_wise:
            build_int_histogram_rowwise(self.data.binned, sample_indices, words,
                                        self.data.feature_offsets, chunks, hist)
        else:
            build_int_histogram_colwise(self.data.columns.T, sample_indices, words,
                                        self.histogram_features(feature_indices),
                                        self.data.feature_offsets, hist)
        return hist

    def leaf_histogram_int(self, sample_indices, words, feature_indices, hist):
        """``hist`` (wide int64 words) = the leaf's integer histogram."""
        local = self.local_int_histogram(sample_indices, words, feature_indices)
        if local.dtype == NARROW_DTYPE:
            widen_words(local, hist)
        else:
            hist[:] = local

    def best_split_int(self, words, feature_indices, totals, record, quant):
        """best_split on integer words: scaled back to floats, then the usual scan."""
        if not hasattr(self, "_unpacked"):
            self._unpacked = np.zeros((self.data.total_bins, HIST_WIDTH), HIST_DTYPE)
        unpack_histogram(words, self.histogram_features(feature_indices),
                         self.data.feature_offsets, quant.g_scale, quant.h_scale, self._unpacked)
        self.best_split(self._unpacked, feature_indices, totals, record)

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
