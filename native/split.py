"""Split scan: the best threshold of every feature from a leaf's histogram.

Gain and leaf value follow the second-order formulas (XGBoost paper, Chen &
Guestrin 2016, eq. 5-7), with L1 soft-thresholding of the gradient sum and an
optional clip of the leaf value (``max_delta_step``) as in LightGBM:

    output(G, H) = -T(G) / (H + lambda_l2),   T(G) = sign(G) max(|G| - lambda_l1, 0)
    gain(G, H)   = -(2 T(G) output + (H + lambda_l2) output^2)
                 = T(G)^2 / (H + lambda_l2)   when the output is not clipped
    split gain   = gain(left) + gain(right) - gain(parent)

No fastmath here: the gains are compared for equality across ranks.
"""
import numpy as np
from numba import njit, types
from numba.extending import overload

from .common import (
    SPLIT_GAIN, SPLIT_FEATURE, SPLIT_BIN, SPLIT_DEFAULT_LEFT,
    SPLIT_LEFT_GRAD, SPLIT_LEFT_HESS, SPLIT_LEFT_COUNT,
    SPLIT_RIGHT_GRAD, SPLIT_RIGHT_HESS, SPLIT_RIGHT_COUNT,
    SPLIT_LEFT_VALUE, SPLIT_RIGHT_VALUE, SPLIT_RECORD_SIZE,
    SP_LAMBDA_L1, SP_LAMBDA_L2, SP_MIN_GAIN_TO_SPLIT, SP_MIN_DATA_IN_LEAF,
    SP_MIN_SUM_HESSIAN, SP_MAX_DELTA_STEP,
)
from .quantize import WIDE_SHIFT, word_halves


@njit(cache=True, inline="always")
def _threshold_l1(sum_gradients, lambda_l1):
    magnitude = abs(sum_gradients) - lambda_l1
    if magnitude <= 0.0:
        return 0.0
    return magnitude if sum_gradients > 0.0 else -magnitude


@njit(cache=True)
def leaf_output(sum_gradients, sum_hessians, lambda_l1, lambda_l2, max_delta_step):
    """Optimal leaf value (eq. 5 with L1 and the max_delta_step clip)."""
    if sum_hessians + lambda_l2 <= 0.0:
        return 0.0                       # an empty side (only with min_sum_hessian_in_leaf=0)
    value = -_threshold_l1(sum_gradients, lambda_l1) / (sum_hessians + lambda_l2)
    if max_delta_step > 0.0 and abs(value) > max_delta_step:
        value = max_delta_step if value > 0.0 else -max_delta_step
    return value


@njit(cache=True)
def leaf_gain(sum_gradients, sum_hessians, lambda_l1, lambda_l2, max_delta_step):
    """Loss reduction of one leaf at its optimal value (eq. 6 per leaf)."""
    if sum_hessians + lambda_l2 <= 0.0:
        return 0.0
    sg = _threshold_l1(sum_gradients, lambda_l1)
    if max_delta_step <= 0.0:
        return sg * sg / (sum_hessians + lambda_l2)
    value = leaf_output(sum_gradients, sum_hessians, lambda_l1, lambda_l2, max_delta_step)
    return -(2.0 * sg * value + (sum_hessians + lambda_l2) * value * value)


def _bin_sums(hist, b, g_scale, h_scale):
    """(sum_gradients, sum_hessians) of bin ``b``: a float histogram's row, or a
    quantized histogram's packed int64 word or int64 pair (native/quantize.py)
    scaled back."""


@overload(_bin_sums, inline="always")
def _bin_sums_impl(hist, b, g_scale, h_scale):
    if hist.ndim == 2 and isinstance(hist.dtype, types.Float):
        def read_floats(hist, b, g_scale, h_scale):
            return hist[b, 0], hist[b, 1]
        return read_floats

    if hist.ndim == 2:                                  # quantized int64 pairs
        def read_pairs(hist, b, g_scale, h_scale):
            return np.float64(hist[b, 0]) * g_scale, np.float64(hist[b, 1]) * h_scale
        return read_pairs

    def read_word(hist, b, g_scale, h_scale):
        g, h = word_halves(hist[b], WIDE_SHIFT)
        return np.float64(g) * g_scale, np.float64(h) * h_scale
    return read_word


@njit(cache=True)
def find_best_split(hist, feature_indices, feature_offsets, nan_bins,
                    sum_gradients, sum_hessians, count, split_params, out,
                    g_scale=1.0, h_scale=1.0):
    """Best split of one leaf over the features ``feature_indices``.

    For every feature the thresholds are scanned left to right; when the leaf
    has rows in the feature's NaN bin (its last bin), each threshold is tried
    with NaN going right and NaN going left, plus the split "all values left,
    NaN right".  Ties keep the earlier candidate: the lower feature index in
    ``feature_indices`` order, then the lower bin, then NaN-right.

    Parameters
    ----------
    hist : float64[total_bins, 2]          # IN  the leaf's histogram, or
           int64[total_bins]               #     its quantized wide words, or
           int64[total_bins, 2]            #     its quantized pairs, read as
                                           #     (g * g_scale, h * h_scale) bin by bin
    feature_indices : int32[n_used]        # IN  candidate features, ascending
    feature_offsets : int64[n_features+1]  # IN
    nan_bins : int32[n_features]           # IN  NaN bin within the feature, -1 if none
    sum_gradients, sum_hessians, count : float  # IN  the leaf's totals (exact count)
    split_params : float64[SPLIT_PARAMS_SIZE]  # IN
    out : float64[SPLIT_RECORD_SIZE]       # OUT the best split; feature -1 if none
    g_scale, h_scale : float64             # IN  quantized words only
    """
    l1 = split_params[SP_LAMBDA_L1]
    l2 = split_params[SP_LAMBDA_L2]
    min_data = split_params[SP_MIN_DATA_IN_LEAF]
    min_hess = split_params[SP_MIN_SUM_HESSIAN]
    max_delta = split_params[SP_MAX_DELTA_STEP]
    # A split must beat the parent's own gain by min_gain_to_split.
    min_gain_shift = leaf_gain(sum_gradients, sum_hessians, l1, l2, max_delta) \
        + split_params[SP_MIN_GAIN_TO_SPLIT]
    best_gain = -np.inf
    out[:] = 0.0
    out[SPLIT_FEATURE] = -1.0
    # Histograms hold no counts: a side's row count is estimated from its
    # hessians, as LightGBM does (exact when every row has the same hessian).
    count_per_hessian = count / sum_hessians if sum_hessians > 0.0 else 0.0
    for j in range(feature_indices.shape[0]):
        f = feature_indices[j]
        start = feature_offsets[f]
        nan_bin = nan_bins[f]
        n_value_bins = feature_offsets[f + 1] - start
        nan_g = 0.0
        nan_h = 0.0
        if nan_bin >= 0:
            n_value_bins -= 1
            nan_g, nan_h = _bin_sums(hist, start + nan_bin, g_scale, h_scale)
        # NaN rows present: each threshold is tried with NaN right (direction 0)
        # and NaN left (1), and "every value left, NaN right" is a split too.
        has_nan_rows = nan_bin >= 0 and (nan_h != 0.0 or nan_g != 0.0)
        n_directions = 2 if has_nan_rows else 1
        n_thresholds = n_value_bins if has_nan_rows else n_value_bins - 1
        value_g = 0.0
        value_h = 0.0
        for b in range(n_thresholds):
            bin_g, bin_h = _bin_sums(hist, start + b, g_scale, h_scale)
            value_g += bin_g
            value_h += bin_h
            for direction in range(n_directions):
                if direction == 1:
                    if b == n_value_bins - 1:
                        break            # everything left: not a split
                    left_g = value_g + nan_g
                    left_h = value_h + nan_h
                else:
                    left_g = value_g
                    left_h = value_h
                left_c = np.floor(left_h * count_per_hessian + 0.5)
                right_c = count - left_c
                right_h = sum_hessians - left_h
                if (left_c < min_data or left_h < min_hess
                        or right_c < min_data or right_h < min_hess):
                    continue
                right_g = sum_gradients - left_g
                gain = leaf_gain(left_g, left_h, l1, l2, max_delta) \
                    + leaf_gain(right_g, right_h, l1, l2, max_delta)
                if gain > min_gain_shift and gain > best_gain:
                    best_gain = gain
                    out[SPLIT_FEATURE] = f
                    out[SPLIT_BIN] = b
                    # NaN left when tried so, or when the feature has NaN values but
                    # this leaf has none: LightGBM's reverse scan (NaN left) comes
                    # first and keeps such a tie
                    out[SPLIT_DEFAULT_LEFT] = 1.0 if direction == 1 or (
                        nan_bin >= 0 and not has_nan_rows) else 0.0
                    out[SPLIT_LEFT_GRAD] = left_g
                    out[SPLIT_LEFT_HESS] = left_h
                    out[SPLIT_LEFT_COUNT] = left_c
    if out[SPLIT_FEATURE] < 0.0:
        out[SPLIT_GAIN] = -np.inf
        return
    out[SPLIT_GAIN] = best_gain - min_gain_shift
    out[SPLIT_RIGHT_GRAD] = sum_gradients - out[SPLIT_LEFT_GRAD]
    out[SPLIT_RIGHT_HESS] = sum_hessians - out[SPLIT_LEFT_HESS]
    out[SPLIT_RIGHT_COUNT] = count - out[SPLIT_LEFT_COUNT]
    out[SPLIT_LEFT_VALUE] = leaf_output(out[SPLIT_LEFT_GRAD], out[SPLIT_LEFT_HESS], l1, l2, max_delta)
    out[SPLIT_RIGHT_VALUE] = leaf_output(out[SPLIT_RIGHT_GRAD], out[SPLIT_RIGHT_HESS], l1, l2, max_delta)


@njit(cache=True)
def best_gain_per_feature(hist, feature_indices, feature_offsets, nan_bins,
                          sum_gradients, sum_hessians, count, split_params, gains,
                          g_scale=1.0, h_scale=1.0):
    """The best split gain of every feature on its own (voting-parallel's local vote).

    Parameters
    ----------
    (as find_best_split)
    gains : float64[n_used]   # OUT best gain of feature_indices[j]; -inf if it has no valid split
    """
    record = np.empty(SPLIT_RECORD_SIZE, np.float64)
    for j in range(feature_indices.shape[0]):
        find_best_split(hist, feature_indices[j:j + 1], feature_offsets, nan_bins,
                        sum_gradients, sum_hessians, count, split_params, record, g_scale, h_scale)
        gains[j] = record[SPLIT_GAIN]
