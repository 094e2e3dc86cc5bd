"""Single-process learner: local histograms and split search, no communication."""

import numba
import numpy as np

from ..native.common import HIST_DTYPE, HIST_WIDTH, SPLIT_BIN, SPLIT_DEFAULT_LEFT, SPLIT_FEATURE
from ..native.histogram import MAX_CHUNKS, build_histogram_colwise, build_histogram_rowwise
from ..native.partition import partition_rows
from ..native.predict import add_tree_binned
from ..native.quantize import (
    NARROW_DTYPE,
    NARROW_SHIFT,
    PAIRS,
    WIDE_DTYPE,
    WIDE_SHIFT,
    add_words_to_pairs,
    build_int_histogram_colwise,
    build_int_histogram_rowwise,
    build_wide_histogram_rowwise,
    gather_packed,
    narrow_rows,
    wide_rows,
    widen_words,
)
from ..native.split import find_best_split, fix_most_frequent_bins


def most_frequent_bins(data, sum_over_rows):
    """LightGBM's ``most_freq_bin`` of every (local) feature: the most frequent
    bin when it holds at least 70% of the rows (``kSparseThreshold``), else the
    bin of 0.0 (src/io/bin.cpp).  Counted over the training rows (LightGBM: its
    bin sample, the same rows while there are at most
    ``bin_construct_sample_cnt``); ``sum_over_rows`` sums the counts over ranks.
    It decides only how LightGBM's histograms are rounded
    (native.split.fix_most_frequent_bins)."""
    offsets = data.feature_offsets
    n_features = len(offsets) - 1
    counts = np.zeros(int(offsets[-1]), np.int64)
    for f in range(n_features):
        counts[offsets[f] : offsets[f + 1]] = np.bincount(
            data.columns[:, f], minlength=offsets[f + 1] - offsets[f]
        )
    counts = sum_over_rows(counts)
    out = np.zeros(n_features, np.int32)
    for f in range(n_features):
        c = counts[offsets[f] : offsets[f + 1]]
        top = int(np.argmax(c))  # the first of equal counts, as ArgMax
        if c.sum() and c[top] / c.sum() < 0.7:
            top = int(np.searchsorted(data.bin_mapper.upper_bounds[f], 0.0))
        out[f] = top
    return out


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
        self._int_scratch = {}  # quantized training: buffers by name (see _scratch)
        self.most_freq_bins = most_frequent_bins(data, self.sum_over_rows)
        self._flags = np.zeros(len(data.feature_offsets) - 1, np.uint8)

    def sum_over_rows(self, values):
        """Sums over every rank's rows (this rank holds them all); the
        row-sharded learners sum over the ranks."""
        return np.asarray(values)

    def global_totals(self, sum_gradients, sum_hessians, count):
        g, h, c = self.sum_over_rows(np.array([sum_gradients, sum_hessians, count]))
        return float(g), float(h), float(c)

    def global_counts(self, n_left, n_right):
        left, right = self.sum_over_rows(np.array([n_left, n_right], np.int64))
        return int(left), int(right)

    def histogram_features(self, feature_indices):
        """The (local) features whose bins this rank builds."""
        return feature_indices

    def scanned_features(self, feature_indices):
        """The (local) features whose bins this rank's split scan reads."""
        return self.histogram_features(feature_indices)

    def leaf_histogram(
        self, sample_indices, ordered_gradients, ordered_hessians, feature_indices, hist
    ):
        if self.row_wise:
            build_histogram_rowwise(
                self.data.binned,
                sample_indices,
                ordered_gradients,
                ordered_hessians,
                self.data.feature_offsets,
                self._chunk_hists,
                hist,
            )
        else:
            build_histogram_colwise(
                self.data.columns.T,
                sample_indices,
                ordered_gradients,
                ordered_hessians,
                self.histogram_features(feature_indices),
                self.data.feature_offsets,
                hist,
            )

    def fix_histogram(self, hist, feature_indices, totals):
        """Give a float histogram just built (global) LightGBM's most frequent bins."""
        fix_most_frequent_bins(
            hist,
            self.scanned_features(feature_indices),
            self.data.feature_offsets,
            self.most_freq_bins,
            totals[0],
            totals[1],
        )

    # -- quantized training: integer words (native/quantize.py) ----------------------
    def _scratch(self, name, shape, dtype):
        """A reusable buffer (quantized training allocates its own only when used)."""
        buf = self._int_scratch.get(name)
        if buf is None:
            buf = self._int_scratch[name] = np.zeros(shape, dtype)
        return buf

    def local_int_histogram(self, sample_indices, quant, shift, feature_indices):
        """This rank's integer histogram of the rows, in narrow int32 words when
        ``shift`` is narrow, wide int64 words when wide, int64 pairs for PAIRS (a
        scratch buffer, valid until the next call).  Row-wise, the kernels read
        every row's narrow word by row index, wide leaves too
        (build_wide_histogram_rowwise sums narrow pieces)."""
        if shift == PAIRS:
            # Wide words of pieces that fit them, added up as pairs.
            pairs = self._scratch("pairs", (self.data.total_bins, 2), WIDE_DTYPE)
            pairs[:] = 0
            piece = wide_rows(quant.n_bins)
            for lo in range(0, len(sample_indices), piece):
                words = self.local_int_histogram(
                    sample_indices[lo : lo + piece], quant, WIDE_SHIFT, feature_indices
                )
                add_words_to_pairs(words, pairs)
            return pairs
        total, n = self.data.total_bins, len(sample_indices)
        narrow = shift == NARROW_SHIFT
        hist = self._scratch(
            "narrow" if narrow else "wide", total, NARROW_DTYPE if narrow else WIDE_DTYPE
        )
        offsets = self.data.feature_offsets
        if self.row_wise:
            chunks = self._scratch("narrow_chunks", (MAX_CHUNKS, total), NARROW_DTYPE)
            if narrow:
                build_int_histogram_rowwise(
                    self.data.binned, sample_indices, quant.row_words, offsets, chunks, hist
                )
            else:
                partials = self._scratch("wide_chunks", (MAX_CHUNKS, total), WIDE_DTYPE)
                build_wide_histogram_rowwise(
                    self.data.binned,
                    sample_indices,
                    quant.row_words,
                    offsets,
                    narrow_rows(quant.n_bins),
                    chunks,
                    partials,
                    hist,
                )
        else:
            words = self._scratch(
                "narrow_words" if narrow else "wide_words", self.data.n_samples, hist.dtype
            )[:n]
            gather_packed(quant.q_g, quant.q_h, sample_indices, shift, words)
            build_int_histogram_colwise(
                self.data.columns.T,
                sample_indices,
                words,
                self.histogram_features(feature_indices),
                offsets,
                hist,
            )
        return hist

    def leaf_histogram_int(self, sample_indices, quant, shift, feature_indices, hist):
        """``hist`` = the leaf's integer histogram: wide int64 words, or int64 pairs
        when ``shift`` is PAIRS, the width its global row count allows
        (native.quantize.packed_width)."""
        local = self.local_int_histogram(sample_indices, quant, shift, feature_indices)
        if local.dtype == NARROW_DTYPE:
            widen_words(local, hist)
        else:
            hist[:] = local

    def best_split(self, hist, feature_indices, totals, record, local_count):
        """``record`` = the leaf's best split over ``feature_indices`` (the same
        on every rank); returns those of ``feature_indices`` splittable in the
        leaf (LightGBM's ``is_splittable``: its children scan only these).
        ``local_count``: this rank's rows in the leaf (voting's local vote)."""
        return self.scan(hist, feature_indices, totals, record)

    def best_split_int(self, words, feature_indices, totals, record, quant, local_count):
        """best_split on integer words (the scan scales the sums back)."""
        return self.scan(words, feature_indices, totals, record, (quant.g_scale, quant.h_scale))

    def scan(self, hist, feature_indices, totals, record, scales=(1.0, 1.0)):
        """find_best_split over this rank's share of ``feature_indices``, agreed."""
        features = self.scanned_features(feature_indices)
        flags = self._flags[: len(features)]  # every entry is written
        find_best_split(
            hist,
            features,
            self.data.feature_offsets,
            self.data.nan_bins,
            self.most_freq_bins,
            totals[0],
            totals[1],
            totals[2],
            self.split_params,
            record,
            flags,
            *scales,
        )
        return self.agree(record, feature_indices, features[flags.view(np.bool_)])

    def agree(self, record, feature_indices, splittable):
        """The best split of every rank's ``record`` and the features splittable on
        any rank (one process: its own)."""
        return splittable

    def partition(self, sample_indices, record, scratch):
        feature = int(record[SPLIT_FEATURE])
        return partition_rows(
            sample_indices,
            self.data.columns[:, feature],
            int(record[SPLIT_BIN]),
            bool(record[SPLIT_DEFAULT_LEFT]),
            int(self.data.nan_bins[feature]),
            numba.get_num_threads(),
            scratch,
        )

    def add_tree_scores(self, tree, binned, nan_bins, scores):
        """scores += the tree's leaf value for every row of ``binned`` (n, n_features)."""
        add_tree_binned(
            binned.T,
            nan_bins,
            tree.split_feature,
            tree.threshold_bin,
            tree.default_left,
            tree.left_child,
            tree.right_child,
            tree.leaf_value,
            scores,
        )
