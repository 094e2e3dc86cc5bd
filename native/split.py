"""Split scan: the best threshold of every feature from a leaf's histogram.

Gain and leaf value follow the second-order formulas (XGBoost paper, Chen &
Guestrin 2016, eq. 5-7), with L1 soft-thresholding of the gradient sum and an
optional clip of the leaf value (``max_delta_step``) as in LightGBM:

    output(G, H) = -T(G) / (H + lambda_l2),   T(G) = sign(G) max(|G| - lambda_l1, 0)
    gain(G, H)   = -(2 T(G) output + (H + lambda_l2) output^2)
                 = T(G)^2 / (H + lambda_l2)   when the output is not clipped
    split gain   = gain(left) + gain(right) - gain(parent)

The scan is LightGBM's (``FeatureHistogram::FindBestThresholdSequentially`` in
src/treelearner/feature_histogram.hpp), arithmetic included, so that the
trees are LightGBM's, ties and all:

* Per feature, a *reverse* pass first: thresholds from the highest bin down,
  the right side summed bin by bin, NaN (a feature's last bin) left; then,
  when the feature has a NaN bin and more than two bins, a *forward* pass:
  thresholds from bin 0 up, NaN right, up to "every value left, NaN right".
  Within a pass the first of equal gains is kept (so the reverse pass keeps
  the highest of equal-gain thresholds, e.g. inside bins the leaf has no rows
  in); the forward pass replaces the reverse pass's choice only when strictly
  better.  Across features the higher gain wins, ties the lower feature index
  (``SplitInfo::operator>``): the earlier one, as callers list features in
  global index order.
* Row counts are estimated from hessians (histograms hold none): float
  histograms round each bin's ``hess * count / sum_hess`` and add the integers
  up along the scan; quantized ones round the side's integer hessian sum once.
  The other side's count is the leaf's count minus this one.
* Float scans carry LightGBM's ``kEpsilon`` (1e-15) in the hessian sums
  (two in the leaf's, one per side), quantized ones add it in the gain only.
* A feature is *splittable* in a leaf when some threshold met the
  constraints with gain above ``min_gain_to_split``; LightGBM scans only the
  features splittable in the parent (``is_splittable``), which the grower
  reproduces with these flags.

One departure: a side whose hessian sum (plus lambda_l2) is 0 has gain and
output 0 here; LightGBM divides by zero there (NaN, or an infinite gain that
wins), which only min_sum_hessian_in_leaf=0 with lambda_l2=0 allows.

No fastmath here: the gains are compared for equality across ranks.
"""

import numpy as np
from numba import njit, prange, types
from numba.extending import overload

from .common import (
    NODE_MAX,
    NODE_MIN,
    NODE_PARENT_OUTPUT,
    NODE_PENALTY,
    NODE_SIZE,
    SP_CAT_HIGH_ROWS,
    SP_CAT_L2,
    SP_CAT_SMOOTH,
    SP_LAMBDA_L1,
    SP_LAMBDA_L2,
    SP_MAX_CAT_THRESHOLD,
    SP_MAX_CAT_TO_ONEHOT,
    SP_MAX_DELTA_STEP,
    SP_MIN_DATA_IN_LEAF,
    SP_MIN_DATA_PER_GROUP,
    SP_MIN_GAIN_TO_SPLIT,
    SP_MIN_SUM_HESSIAN,
    SP_PATH_SMOOTH,
    SP_USE_MC,
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
)
from .quantize import WIDE_SHIFT, word_halves

# LightGBM's kEpsilon: a float32 constant (include/LightGBM/meta.h) widened to double.
K_EPSILON = float(np.float32(1e-15))

# Fields of one feature's best split (_scan_* returns them in this order);
# _F_L2: the L2 added for the children's values (cat_l2 of a many-vs-many split).
_F_GAIN, _F_BIN, _F_LEFT_DEFAULT, _F_LG, _F_LH, _F_LC, _F_RG, _F_RH, _F_RC, _F_L2 = range(10)
_F_SIZE = 10


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
        return 0.0  # an empty side (only with min_sum_hessian_in_leaf=0)
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


@njit(cache=True, inline="always")
def _round_count(x):
    # LightGBM's Common::RoundInt: int(x + 0.5), truncated toward zero
    return np.trunc(x + 0.5)


@njit(cache=True)
def sequential_sum(values):
    """float64 sum in index order: LightGBM's leaf totals (numpy's sum is
    pairwise, which rounds differently)."""
    total = 0.0
    for i in range(values.shape[0]):
        total += values[i]
    return total


def _bin_raw(hist, b):
    """(sum_gradients, sum_hessians) of bin ``b`` as stored: floats of a float
    histogram, integers of a quantized one (packed int64 word or int64 pair,
    native/quantize.py)."""


@overload(_bin_raw, inline="always")
def _bin_raw_impl(hist, b):
    if hist.ndim == 2:  # float rows or quantized int64 pairs

        def read_row(hist, b):
            return hist[b, 0], hist[b, 1]

        return read_row

    def read_word(hist, b):
        return word_halves(hist[b], WIDE_SHIFT)

    return read_word


@njit(cache=True, inline="always")
def _plain_gain(g, h, l2):
    # leaf_gain without L1 and clip: the same value, fewer branches (LightGBM's
    # templates do the same)
    return g * g / (h + l2) if h + l2 > 0.0 else 0.0


@njit(cache=True, inline="always")
def _split_gain(lg, lh, rg, rh, l1, l2, max_delta):
    if l1 == 0.0 and max_delta <= 0.0:
        return _plain_gain(lg, lh, l2) + _plain_gain(rg, rh, l2)
    return leaf_gain(lg, lh, l1, l2, max_delta) + leaf_gain(rg, rh, l1, l2, max_delta)


@njit(cache=True, inline="always")
def _smoothed(value, count, smooth, parent):
    # path_smooth: the value pulled toward the parent's output by ``smooth``
    # pseudo-rows (LightGBM's CalculateSplittedLeafOutput, USE_SMOOTHING)
    w = count / smooth
    return value * w / (w + 1.0) + parent / (w + 1.0)


@njit(cache=True, inline="always")
def _context(params, node):
    """(path_smooth, parent output, lower bound, upper bound, monotone on) as
    scalars: the scans read them per threshold, and arrays passed down there
    would cost a reference count update each time."""
    return (
        params[SP_PATH_SMOOTH],
        node[NODE_PARENT_OUTPUT],
        node[NODE_MIN],
        node[NODE_MAX],
        params[SP_USE_MC] != 0.0,
    )


@njit(cache=True)
def side_output(g, h, count, l1, l2, max_delta, ctx):
    """A child's output: eq. 5 with L1 and the max_delta_step clip, smoothed
    toward the parent's output (path_smooth), then within the leaf's monotone
    bounds when monotone constraints are on (``ctx``: _context)."""
    smooth, parent, lower, upper, use_mc = ctx
    value = leaf_output(g, h, l1, l2, max_delta)
    if smooth > K_EPSILON:
        value = _smoothed(value, count, smooth, parent)
    if use_mc:
        if value < lower:
            value = lower
        elif value > upper:
            value = upper
    return value


@njit(cache=True, inline="always")
def _given_gain(g, h, l1, l2, value):
    # eq. 6 at a given (not necessarily optimal) value: GetLeafGainGivenOutput
    sg = _threshold_l1(g, l1)
    return -(2.0 * sg * value + (h + l2) * value * value)


@njit(cache=True, inline="always")
def _gain(plain, lg, lh, lc, rg, rh, rc, l1, l2, max_delta, ctx, mono):
    """LightGBM's GetSplitGains (see _constrained_gain); ``plain`` (no
    path_smooth, no monotone constraints: _plain_scan) is decided once per
    feature, which keeps the scans' loops as fast as without constraints."""
    if plain:
        return _split_gain(lg, lh, rg, rh, l1, l2, max_delta)
    return _constrained_gain(lg, lh, lc, rg, rh, rc, l1, l2, max_delta, ctx, mono)


@njit(cache=True, inline="always")
def _plain_scan(ctx):
    # neither monotone constraints nor path_smooth: the plain gain
    return not ctx[4] and ctx[0] <= K_EPSILON


@njit(cache=True)
def _constrained_gain(lg, lh, lc, rg, rh, rc, l1, l2, max_delta, ctx, mono):
    """With path_smooth or monotone constraints: the gain at the children's
    (smoothed, bounded) outputs; -inf when those outputs go against the
    feature's direction ``mono``.

    LightGBM gives such a split gain 0, which loses to the leaf's own gain
    except with path_smooth, where the leaf's gain (at its output smoothed
    toward its parent's) can be negative: LightGBM then takes the split and its
    predictions are not monotone.  -inf refuses it always; the trees differ
    from LightGBM's only where LightGBM breaks the constraint."""
    use_mc = ctx[4]
    left = side_output(lg, lh, lc, l1, l2, max_delta, ctx)
    right = side_output(rg, rh, rc, l1, l2, max_delta, ctx)
    if use_mc and ((mono > 0 and left > right) or (mono < 0 and left < right)):
        return -np.inf
    return _given_gain(lg, lh, l1, l2, left) + _given_gain(rg, rh, l1, l2, right)


@njit(cache=True)
def _shift(sum_g, sum_h, count, l1, l2, max_delta, params, node):
    """The leaf's own gain plus min_gain_to_split, which a split must beat
    (GetLeafGain: with path_smooth, at its output smoothed toward the parent
    output; monotone bounds do not enter)."""
    if params[SP_PATH_SMOOTH] > K_EPSILON:
        value = _smoothed(
            leaf_output(sum_g, sum_h, l1, l2, max_delta),
            count,
            params[SP_PATH_SMOOTH],
            node[NODE_PARENT_OUTPUT],
        )
        gain = _given_gain(sum_g, sum_h, l1, l2, value)
    else:
        gain = leaf_gain(sum_g, sum_h, l1, l2, max_delta)
    return gain + params[SP_MIN_GAIN_TO_SPLIT]


@njit(cache=True, inline="always")
def _blocked(ctx):
    # LightGBM skips (after flagging the feature splittable) a best split whose
    # children's bounds cross
    return ctx[4] and ctx[2] > ctx[3]


@njit(cache=True, inline="always")
def _random_threshold(u, n_bins):
    # extra_trees: one threshold in [0, n_bins - 2), LightGBM's NextInt(0, num_bin - 2)
    return int(u * (n_bins - 2)) if n_bins > 2 else 0


@njit(cache=True)
def _scan_float(
    hist,
    start,
    n_bins,
    nan_bin,
    zero_bin,
    most_freq_bin,
    sum_g,
    sum_h,
    count,
    l1,
    l2,
    max_delta,
    min_data,
    min_hess,
    min_gain_shift,
    best,
    ctx,
    mono,
    rand_t,
):
    """One feature of a float histogram; ``sum_h`` holds the leaf's 2 kEpsilon.
    Writes the feature's best split into ``best`` (gain -inf if none, else
    gain - min_gain_shift); returns whether the feature is splittable.
    ``zero_bin`` >= 0 (missing type Zero): that bin is skipped by both passes,
    so its rows take the default side (LightGBM's SKIP_DEFAULT_BIN).
    ``mono``: the feature's monotone direction; ``rand_t`` >= 0: extra_trees'
    only threshold."""
    blocked, plain = _blocked(ctx), _plain_scan(ctx)
    cnt_factor = count / sum_h if sum_h > 0.0 else 0.0
    na_as_missing = nan_bin >= 0 and n_bins > 2
    splittable = False
    best[_F_GAIN] = -np.inf
    # Reverse: the right side grows from the last value bin down; NaN stays left.
    rg, rh, rc = 0.0, K_EPSILON, 0.0
    top_gain, top_bin, top_lg, top_lh, top_lc = -np.inf, -1, 0.0, 0.0, 0.0
    for t in range(n_bins - 1 - (1 if na_as_missing else 0), 0, -1):
        if t == zero_bin:
            continue
        g, h = _bin_raw(hist, start + t)
        rg += g
        rh += h
        rc += _round_count(h * cnt_factor)
        if rc < min_data or rh < min_hess:
            continue
        lc = count - rc
        if lc < min_data:
            break
        lh = sum_h - rh
        if lh < min_hess:
            break
        lg = sum_g - rg
        if rand_t >= 0 and t - 1 != rand_t:
            continue
        gain = _gain(plain, lg, lh, lc, rg, rh, rc, l1, l2, max_delta, ctx, mono)
        if gain <= min_gain_shift:
            continue
        splittable = True
        if gain > top_gain and not blocked:
            top_gain, top_bin, top_lg, top_lh, top_lc = gain, t - 1, lg, lh, lc
    if top_bin >= 0:
        _keep_float(
            best,
            top_gain - min_gain_shift,
            top_bin,
            True,
            top_lg,
            top_lh,
            top_lc,
            sum_g,
            sum_h,
            count,
        )
    if not na_as_missing and zero_bin < 0:
        if nan_bin >= 0:
            best[_F_LEFT_DEFAULT] = 0.0  # two bins, value | NaN: NaN goes right
        return splittable
    # Forward: the left side grows from bin 0 up; NaN (or zero) goes right.
    lg, lh, lc = 0.0, K_EPSILON, 0.0
    top_gain, top_bin = -np.inf, -1
    for t in range(n_bins - 1):
        if _skipped_forward(t, zero_bin, most_freq_bin):
            continue
        if t == 0 and most_freq_bin == 0:
            # LightGBM stores no bin 0 when it is the most frequent: bin 0 is the
            # leaf minus every other bin, NaN included.
            lg, lh, lc = sum_g, sum_h - K_EPSILON, count
            for i in range(1, n_bins):
                g, h = _bin_raw(hist, start + i)
                lg -= g
                lh -= h
                lc -= _round_count(h * cnt_factor)
        else:
            g, h = _bin_raw(hist, start + t)
            lg += g
            lh += h
            lc += _round_count(h * cnt_factor)
        if lc < min_data or lh < min_hess:
            continue
        rc = count - lc
        if rc < min_data:
            break
        rh = sum_h - lh
        if rh < min_hess:
            break
        if rand_t >= 0 and t != rand_t:
            continue
        gain = _gain(plain, lg, lh, lc, sum_g - lg, rh, rc, l1, l2, max_delta, ctx, mono)
        if gain <= min_gain_shift:
            continue
        splittable = True
        if gain > top_gain and not blocked:
            top_gain, top_bin, top_lg, top_lh, top_lc = gain, t, lg, lh, lc
    # LightGBM compares with the reverse pass's recorded (shifted) gain plus the shift.
    if top_bin >= 0 and top_gain > best[_F_GAIN] + min_gain_shift:
        _keep_float(
            best,
            top_gain - min_gain_shift,
            top_bin,
            False,
            top_lg,
            top_lh,
            top_lc,
            sum_g,
            sum_h,
            count,
        )
    return splittable


@njit(cache=True, inline="always")
def _skipped_forward(t, zero_bin, most_freq_bin):
    # Missing type Zero: the forward pass adds neither the zero bin nor, when
    # LightGBM stores no bin 0 (its most frequent), bin 0 (its loop starts at 1).
    return zero_bin >= 0 and (t == zero_bin or (t == 0 and most_freq_bin == 0))


@njit(cache=True, inline="always")
def _keep_float(best, gain, threshold, default_left, lg, lh, lc, sum_g, sum_h, count):
    # The scan's sums hold kEpsilon: each side's sum of hessians loses one.
    best[_F_GAIN] = gain
    best[_F_BIN] = threshold
    best[_F_LEFT_DEFAULT] = 1.0 if default_left else 0.0
    best[_F_LG], best[_F_LH], best[_F_LC] = lg, lh, lc
    best[_F_RG], best[_F_RH], best[_F_RC] = sum_g - lg, sum_h - lh, count - lc


@njit(cache=True)
def _scan_int(
    hist,
    start,
    n_bins,
    nan_bin,
    zero_bin,
    most_freq_bin,
    total_g,
    total_h,
    count,
    g_scale,
    h_scale,
    l1,
    l2,
    max_delta,
    min_data,
    min_hess,
    min_gain_shift,
    best,
    ctx,
    mono,
    rand_t,
):
    """One feature of a quantized histogram (integer sums ``total_g``, ``total_h``);
    as _scan_float, with LightGBM's FindBestThresholdSequentiallyInt arithmetic:
    exact integer sums, scaled once per candidate, a side's count rounded once."""
    blocked, plain = _blocked(ctx), _plain_scan(ctx)
    cnt_factor = count / np.float64(total_h) if total_h > 0 else 0.0
    na_as_missing = nan_bin >= 0 and n_bins > 2
    splittable = False
    best[_F_GAIN] = -np.inf
    rg, rh = np.int64(0), np.int64(0)
    top_gain, top_bin, top_lg, top_lh = -np.inf, -1, np.int64(0), np.int64(0)
    for t in range(n_bins - 1 - (1 if na_as_missing else 0), 0, -1):
        if t == zero_bin:
            continue
        g, h = _bin_raw(hist, start + t)
        rg += g
        rh += h
        rc = _round_count(np.float64(rh) * cnt_factor)
        right_h = np.float64(rh) * h_scale
        if rc < min_data or right_h < min_hess:
            continue
        if count - rc < min_data:
            break
        left_h = np.float64(total_h - rh) * h_scale
        if left_h < min_hess:
            break
        if rand_t >= 0 and t - 1 != rand_t:
            continue
        gain = _gain(
            plain,
            np.float64(total_g - rg) * g_scale,
            left_h + K_EPSILON,
            count - rc,
            np.float64(rg) * g_scale,
            right_h + K_EPSILON,
            rc,
            l1,
            l2,
            max_delta,
            ctx,
            mono,
        )
        if gain <= min_gain_shift:
            continue
        splittable = True
        if gain > top_gain and not blocked:
            top_gain, top_bin, top_lg, top_lh = gain, t - 1, total_g - rg, total_h - rh
    if top_bin >= 0:
        _keep_int(
            best,
            top_gain - min_gain_shift,
            top_bin,
            True,
            top_lg,
            top_lh,
            total_g,
            total_h,
            cnt_factor,
            g_scale,
            h_scale,
        )
    if not na_as_missing and zero_bin < 0:
        if nan_bin >= 0:
            best[_F_LEFT_DEFAULT] = 0.0
        return splittable
    lg, lh = np.int64(0), np.int64(0)
    top_gain, top_bin = -np.inf, -1
    for t in range(n_bins - 1):
        if _skipped_forward(t, zero_bin, most_freq_bin):
            continue
        g, h = _bin_raw(hist, start + t)
        lg += g
        lh += h
        lc = _round_count(np.float64(lh) * cnt_factor)
        left_h = np.float64(lh) * h_scale
        if lc < min_data or left_h < min_hess:
            continue
        if count - lc < min_data:
            break
        right_h = np.float64(total_h - lh) * h_scale
        if right_h < min_hess:
            break
        if rand_t >= 0 and t != rand_t:
            continue
        gain = _gain(
            plain,
            np.float64(lg) * g_scale,
            left_h + K_EPSILON,
            lc,
            np.float64(total_g - lg) * g_scale,
            right_h + K_EPSILON,
            count - lc,
            l1,
            l2,
            max_delta,
            ctx,
            mono,
        )
        if gain <= min_gain_shift:
            continue
        splittable = True
        if gain > top_gain and not blocked:
            top_gain, top_bin, top_lg, top_lh = gain, t, lg, lh
    if top_bin >= 0 and top_gain > best[_F_GAIN] + min_gain_shift:
        _keep_int(
            best,
            top_gain - min_gain_shift,
            top_bin,
            False,
            top_lg,
            top_lh,
            total_g,
            total_h,
            cnt_factor,
            g_scale,
            h_scale,
        )
    return splittable


@njit(cache=True, inline="always")
def _keep_int(
    best, gain, threshold, default_left, lg, lh, total_g, total_h, cnt_factor, g_scale, h_scale
):
    # Each side's count is rounded on its own (the two need not add up to the leaf's).
    best[_F_GAIN] = gain
    best[_F_BIN] = threshold
    best[_F_LEFT_DEFAULT] = 1.0 if default_left else 0.0
    best[_F_LG] = np.float64(lg) * g_scale
    best[_F_LH] = np.float64(lh) * h_scale
    best[_F_LC] = _round_count(np.float64(lh) * cnt_factor)
    best[_F_RG] = np.float64(total_g - lg) * g_scale
    best[_F_RH] = np.float64(total_h - lh) * h_scale
    best[_F_RC] = _round_count(np.float64(total_h - lh) * cnt_factor)


# A leaf's features are scanned by the parallel loop (each feature by one
# thread: the same result for any number of threads) when there are this many
# of them, or this many bins to scan: a launch costs about 5 us, a bin about
# 4 ns (rocketlake: 28 features x 255 bins, 2 threads 35 -> 19 us; on one
# thread the loop costs no more than the plain one, and 100 features of 16
# bins take 11 against 22 us).  (The thread count cannot decide it here: a
# kernel that asks Numba for it is not cached.)
PARALLEL_MIN_FEATURES = 64
PARALLEL_MIN_BINS = 1024


@njit(cache=True)
def scan_in_parallel(feature_indices, feature_offsets):
    """Whether a scan of ``feature_indices`` takes the parallel loop."""
    if feature_indices.shape[0] >= PARALLEL_MIN_FEATURES:
        return True
    if feature_indices.shape[0] < 2:
        return False
    bins = 0
    for f in feature_indices:
        bins += feature_offsets[f + 1] - feature_offsets[f]
        if bins >= PARALLEL_MIN_BINS:
            return True
    return False


@njit(cache=True, inline="always")
def _feature_extras(f, n_bins, monotone, rand):
    """(monotone direction, extra_trees threshold or -1) of local feature ``f``
    (empty arrays: none given)."""
    mono = monotone[f] if monotone.shape[0] > 0 else 0
    rand_t = _random_threshold(rand[f], n_bins) if rand.shape[0] > 0 else -1
    return mono, rand_t


@njit(cache=True, inline="always")
def _float_feature(
    j, hist, features, offsets, nan_bins, zero_bins, most_freq_bins, sums, limits, bests, flags,
    params, node, monotone, rand,
):  # fmt: skip
    f = features[j]
    start = offsets[f]
    n_bins = offsets[f + 1] - start
    mono, rand_t = _feature_extras(f, n_bins, monotone, rand)
    ctx = _context(params, node)
    flags[j] = _scan_float(
        hist,
        start,
        n_bins,
        nan_bins[f],
        zero_bins[f],
        most_freq_bins[f],
        sums[0],
        sums[1],
        sums[2],
        limits[0],
        limits[1],
        limits[2],
        limits[3],
        limits[4],
        limits[5],
        bests[j],
        ctx,
        mono,
        rand_t,
    )


@njit(cache=True, parallel=True)
def _float_features_parallel(
    hist, features, offsets, nan_bins, zero_bins, most_freq_bins, sums, limits, bests, flags,
    params, node, monotone, rand,
):  # fmt: skip
    for j in prange(features.shape[0]):
        _float_feature(
            j, hist, features, offsets, nan_bins, zero_bins, most_freq_bins, sums, limits,
            bests, flags, params, node, monotone, rand,
        )  # fmt: skip


@njit(cache=True, inline="always")
def _int_feature(
    j, hist, features, offsets, nan_bins, zero_bins, most_freq_bins, total_g, total_h, limits,
    bests, flags, params, node, monotone, rand,
):  # fmt: skip
    f = features[j]
    start = offsets[f]
    n_bins = offsets[f + 1] - start
    mono, rand_t = _feature_extras(f, n_bins, monotone, rand)
    ctx = _context(params, node)
    flags[j] = _scan_int(
        hist,
        start,
        n_bins,
        nan_bins[f],
        zero_bins[f],
        most_freq_bins[f],
        total_g,
        total_h,
        limits[0],
        limits[1],
        limits[2],
        limits[3],
        limits[4],
        limits[5],
        limits[6],
        limits[7],
        limits[8],
        bests[j],
        ctx,
        mono,
        rand_t,
    )


@njit(cache=True, parallel=True)
def _int_features_parallel(
    hist, features, offsets, nan_bins, zero_bins, most_freq_bins, total_g, total_h, limits,
    bests, flags, params, node, monotone, rand,
):  # fmt: skip
    for j in prange(features.shape[0]):
        _int_feature(
            j, hist, features, offsets, nan_bins, zero_bins, most_freq_bins, total_g, total_h,
            limits, bests, flags, params, node, monotone, rand,
        )  # fmt: skip


def _scan_leaf(
    hist, feature_indices, feature_offsets, nan_bins, zero_bins, most_freq_bins, sum_gradients,
    sum_hessians, count, split_params, g_scale, h_scale, bests, splittable, node, monotone, rand,
):  # fmt: skip
    """Every feature's best split (``bests[j]``, the _F_* fields) and flag;
    returns the kEpsilon each side's hessian sum carries (0 when quantized)."""


@overload(_scan_leaf)
def _scan_leaf_impl(
    hist, feature_indices, feature_offsets, nan_bins, zero_bins, most_freq_bins, sum_gradients,
    sum_hessians, count, split_params, g_scale, h_scale, bests, splittable, node, monotone, rand,
):  # fmt: skip
    if hist.ndim == 2 and isinstance(hist.dtype, types.Float):

        def scan_floats(
            hist, feature_indices, feature_offsets, nan_bins, zero_bins, most_freq_bins,
            sum_gradients, sum_hessians, count, split_params, g_scale, h_scale, bests,
            splittable, node, monotone, rand,
        ):  # fmt: skip
            l1, l2, max_delta, min_data, min_hess = _params(split_params)
            # LightGBM's FindBestThreshold: the leaf's hessian sum gets 2 kEpsilon.
            sum_h = sum_hessians + 2.0 * K_EPSILON
            shift = _shift(sum_gradients, sum_h, count, l1, l2, max_delta, split_params, node)
            sums = np.array([sum_gradients, sum_h, count])
            limits = np.array([l1, l2, max_delta, min_data, min_hess, shift])
            if scan_in_parallel(feature_indices, feature_offsets):
                _float_features_parallel(
                    hist, feature_indices, feature_offsets, nan_bins, zero_bins, most_freq_bins,
                    sums, limits, bests, splittable, split_params, node, monotone, rand,
                )  # fmt: skip
            else:
                for j in range(feature_indices.shape[0]):
                    _float_feature(
                        j, hist, feature_indices, feature_offsets, nan_bins, zero_bins,
                        most_freq_bins, sums, limits, bests, splittable, split_params, node,
                        monotone, rand,
                    )  # fmt: skip
            return K_EPSILON

        return scan_floats

    # Integer sums are exact: LightGBM's most frequent bins change nothing here.
    def scan_ints(
        hist, feature_indices, feature_offsets, nan_bins, zero_bins, most_freq_bins,
        sum_gradients, sum_hessians, count, split_params, g_scale, h_scale, bests, splittable,
        node, monotone, rand,
    ):  # fmt: skip
        l1, l2, max_delta, min_data, min_hess = _params(split_params)
        # The leaf's sums are integers times the scales (exactly recovered).
        total_g = np.int64(np.rint(sum_gradients / g_scale))
        total_h = np.int64(np.rint(sum_hessians / h_scale))
        shift = _shift(
            np.float64(total_g) * g_scale,
            np.float64(total_h) * h_scale,
            count,
            l1,
            l2,
            max_delta,
            split_params,
            node,
        )
        limits = np.array([count, g_scale, h_scale, l1, l2, max_delta, min_data, min_hess, shift])
        if scan_in_parallel(feature_indices, feature_offsets):
            _int_features_parallel(
                hist, feature_indices, feature_offsets, nan_bins, zero_bins, most_freq_bins,
                total_g, total_h, limits, bests, splittable, split_params, node, monotone, rand,
            )  # fmt: skip
        else:
            for j in range(feature_indices.shape[0]):
                _int_feature(
                    j, hist, feature_indices, feature_offsets, nan_bins, zero_bins,
                    most_freq_bins, total_g, total_h, limits, bests, splittable, split_params,
                    node, monotone, rand,
                )  # fmt: skip
        return 0.0

    return scan_ints


@njit(cache=True, inline="always")
def _params(split_params):
    return (
        split_params[SP_LAMBDA_L1],
        split_params[SP_LAMBDA_L2],
        split_params[SP_MAX_DELTA_STEP],
        split_params[SP_MIN_DATA_IN_LEAF],
        split_params[SP_MIN_SUM_HESSIAN],
    )


# -- categorical features --------------------------------------------------------
# LightGBM's FeatureHistogram::FindBestThresholdCategoricalInner (float) and
# ...IntInner (quantized), src/treelearner/feature_histogram.cpp.  Bin 0 (NaN,
# negative, rare, unseen categories) is never sent left.  Sums are read in
# "units": floats as they are (scale 1; the left hessian sum starts at
# kEpsilon, ``eps``), integer sums exactly (then scaled; ``eps`` 0).


@njit(cache=True, inline="always")
def _bin_units(hist, b):
    g, h = _bin_raw(hist, b)
    return np.float64(g), np.float64(h)


@njit(cache=True, error_model="numpy")
def _ctr(sum_g, sum_h, cat_smooth):
    """A category's sort key, sum_gradient / (sum_hessian + cat_smooth), with
    IEEE division as in LightGBM: cat_smooth=0 (allowed) lets a category with
    no hessian in the leaf divide by 0, giving +-inf, or NaN when its gradient
    sum is 0 too (an empty bin), which stable_order_lt then places as
    libstdc++ does.  (Numba's default error model would raise instead.)"""
    return sum_g / (sum_h + cat_smooth)


# -- std::stable_sort, as libstdc++ runs it ---------------------------------------
# LightGBM orders the categories with std::stable_sort and ``ctr(i) < ctr(j)``.
# Without NaN keys every stable sort gives the same order; a NaN key compares
# false both ways, so the order then depends on the algorithm's exact sequence
# of comparisons and moves: these kernels replay libstdc++'s (bits/stl_algo.h,
# the path where the half-length temporary buffer is granted):
#
#   stable_sort(n):  mid = (n + 1) // 2
#     [0, mid) and [mid, n): insertion sort of 7-element chunks, then merge
#       passes of doubling width, ping-ponging between the range and the buffer
#     merge the halves: forward through the buffer when len1 <= len2, else
#       backward (the second half buffered, the output filled from the end)
_CHUNK = 7  # libstdc++'s _S_chunk_size


@njit(cache=True)
def _insertion_sort(a, lo, hi, keys):
    for i in range(lo + 1, hi):
        v = a[i]
        j = i
        if keys[v] < keys[a[lo]]:
            while j > lo:
                a[j] = a[j - 1]
                j -= 1
        else:  # __unguarded_linear_insert: a[lo] stops it
            while keys[v] < keys[a[j - 1]]:
                a[j] = a[j - 1]
                j -= 1
        a[j] = v


@njit(cache=True)
def _move_merge(src, f1, l1, f2, l2, dst, r, keys):
    """__move_merge: src[f1:l1] and src[f2:l2] into dst from r; returns the end."""
    while f1 < l1 and f2 < l2:
        if keys[src[f2]] < keys[src[f1]]:
            dst[r] = src[f2]
            f2 += 1
        else:
            dst[r] = src[f1]
            f1 += 1
        r += 1
    for i in range(f1, l1):
        dst[r] = src[i]
        r += 1
    for i in range(f2, l2):
        dst[r] = src[i]
        r += 1
    return r


@njit(cache=True)
def _merge_sort_loop(src, lo, hi, dst, r, step, keys):
    f = lo
    while hi - f >= 2 * step:
        r = _move_merge(src, f, f + step, f + step, f + 2 * step, dst, r, keys)
        f += 2 * step
    step = min(hi - f, step)
    _move_merge(src, f, f + step, f + step, hi, dst, r, keys)


@njit(cache=True)
def _merge_sort_with_buffer(a, lo, hi, buf, keys):
    n = hi - lo
    f = lo
    while hi - f >= _CHUNK:
        _insertion_sort(a, f, f + _CHUNK, keys)
        f += _CHUNK
    _insertion_sort(a, f, hi, keys)
    step = _CHUNK
    while step < n:
        _merge_sort_loop(a, lo, hi, buf, 0, step, keys)
        step *= 2
        _merge_sort_loop(buf, 0, n, a, lo, step, keys)
        step *= 2


@njit(cache=True)
def _merge_backward(a, mid, buf, n2, n, keys):
    """__move_merge_adaptive_backward: a[:mid] and buf[:n2] into a[:n], from the end."""
    if n2 == 0:
        return
    l1, l2, r = mid - 1, n2 - 1, n
    while True:
        r -= 1
        if keys[buf[l2]] < keys[a[l1]]:
            a[r] = a[l1]
            if l1 == 0:
                a[r - l2 - 1 : r] = buf[: l2 + 1]
                return
            l1 -= 1
        else:
            a[r] = buf[l2]
            if l2 == 0:
                return
            l2 -= 1


@njit(cache=True)
def stable_order_lt(keys):
    """The permutation std::stable_sort (libstdc++) makes of 0..n-1 under
    ``keys[i] < keys[j]``: a stable ascending argsort, NaN keys included.

    keys : float64[n]  # IN
    returns int64[n]   # OUT, the positions in sorted order
    """
    n = keys.shape[0]
    a = np.arange(n)
    mid = (n + 1) // 2
    buf = np.empty(mid, np.int64)
    _merge_sort_with_buffer(a, 0, mid, buf, keys)
    _merge_sort_with_buffer(a, mid, n, buf, keys)
    if mid <= n - mid:  # __move_merge_adaptive: first half from the buffer
        buf[:mid] = a[:mid]
        _move_merge_halves(buf, mid, a, n, keys)
    else:
        buf[: n - mid] = a[mid:]
        _merge_backward(a, mid, buf, n - mid, n, keys)
    return a


@njit(cache=True)
def _move_merge_halves(buf, mid, a, n, keys):
    """__move_merge_adaptive: buf[:mid] and a[mid:n] into a[:n], from the front
    (what is left of a[mid:n] is already in place)."""
    f1, f2, r = 0, mid, 0
    while f1 < mid and f2 < n:
        if keys[a[f2]] < keys[buf[f1]]:
            a[r] = a[f2]
            f2 += 1
        else:
            a[r] = buf[f1]
            f1 += 1
        r += 1
    a[r : r + mid - f1] = buf[f1:mid]


@njit(cache=True)
def _categorical_shift(sum_g, sum_h, l1, l2, max_delta, params, node):
    """The gain a categorical split must beat: with path_smooth, the leaf's gain
    at its own output (FindBestThresholdCategoricalInner), else as numeric ones."""
    if params[SP_PATH_SMOOTH] > K_EPSILON:
        gain = _given_gain(sum_g, sum_h, l1, l2, node[NODE_PARENT_OUTPUT])
    else:
        gain = leaf_gain(sum_g, sum_h, l1, l2, max_delta)
    return gain + params[SP_MIN_GAIN_TO_SPLIT]


@njit(cache=True)
def _scan_categorical(hist, start, n_bins, sums, scales, eps, params, best, left_bins, node, u):
    """One categorical feature: its best split into ``best`` (the _F_* fields;
    gain -inf if none) and, when ``left_bins`` is long enough, its left bins;
    returns (splittable, number of left bins).  ``sums``: the leaf's (g, h,
    count) in units (a float leaf's h with its 2 kEpsilon).  ``u`` in [0, 1):
    extra_trees' draw (< 0: every split is tried)."""
    sum_g, sum_h, count = sums[0], sums[1], sums[2]
    gs, hs = scales[0], scales[1]
    l1, l2, max_delta, min_data, min_hess = _params(params)
    shift = _categorical_shift(sum_g * gs, sum_h * hs, l1, l2, max_delta, params, node)
    ctx = _context(params, node)
    plain = _plain_scan(ctx)
    cnt_factor = count / sum_h if sum_h > 0.0 else 0.0
    best[:] = 0.0
    best[_F_GAIN] = -np.inf
    if n_bins <= params[SP_MAX_CAT_TO_ONEHOT]:
        rand_t = 1 + int(u * (n_bins - 1)) if u >= 0.0 and n_bins > 1 else -1
        return _one_vs_rest(
            hist, start, n_bins, sums, scales, eps, params, shift, best, left_bins, node, rand_t
        )
    used = np.empty(n_bins, np.int64)
    ctr = np.empty(n_bins, np.float64)
    n_used = 0
    smooth = params[SP_CAT_SMOOTH]
    for t in range(1, n_bins):
        g, h = _bin_units(hist, start + t)
        if _round_count(h * cnt_factor) >= smooth:
            used[n_used] = t
            ctr[n_used] = _ctr(g * gs, h * hs, smooth)
            n_used += 1
    order = used[:n_used][stable_order_lt(ctr[:n_used])]
    max_num_cat = min(int(params[SP_MAX_CAT_THRESHOLD]), (n_used + 1) // 2)
    high_rows = params[SP_CAT_HIGH_ROWS]
    if high_rows > 0.0 and n_used > params[SP_MAX_CAT_THRESHOLD]:
        # dgbdt's high-cardinality rule: more categories than a split may move,
        # each of few rows: move at most (their mean rows / high_rows) of them,
        # but enough for one group of min_data_per_group rows
        rows = 0.0
        for i in range(n_used):
            rows += _bin_units(hist, start + used[i])[1] * cnt_factor
        mean = rows / n_used
        group = int(np.ceil(params[SP_MIN_DATA_PER_GROUP] / mean)) if mean > 0.0 else 1
        max_num_cat = min(max_num_cat, max(1, int(mean / high_rows), group))
    l2c = l2 + params[SP_CAT_L2]
    min_group = params[SP_MIN_DATA_PER_GROUP]
    rand_i = -1
    if u >= 0.0:
        max_threshold = max(min(max_num_cat, n_used) - 1, 0)
        rand_i = int(u * max_threshold) if max_threshold > 0 else 0
    top_gain, top_i, top_dir, top_g, top_h, top_c = -np.inf, -1, 1, 0.0, 0.0, 0.0
    splittable = False
    for direction in (1, -1):
        pos = 0 if direction == 1 else n_used - 1
        acc_g, acc_h, left_c, group = 0.0, eps, 0.0, 0.0
        for i in range(min(n_used, max_num_cat)):
            g, h = _bin_units(hist, start + order[pos])
            pos += direction
            c = _round_count(h * cnt_factor)
            acc_g += g
            acc_h += h
            left_c += c
            group += c
            if left_c < min_data or acc_h * hs < min_hess:
                continue
            right_c = count - left_c
            if right_c < min_data or right_c < min_group:
                break
            if (sum_h - acc_h) * hs < min_hess:
                break
            if group < min_group:
                continue
            group = 0.0
            if rand_i >= 0 and i != rand_i:
                continue
            gain = _gain(
                plain,
                acc_g * gs,
                acc_h * hs,
                left_c,
                (sum_g - acc_g) * gs,
                (sum_h - acc_h) * hs,
                right_c,
                l1,
                l2c,
                max_delta,
                ctx,
                0,
            )
            if gain <= shift:
                continue
            splittable = True
            if gain > top_gain:
                top_gain, top_i, top_dir, top_g, top_h, top_c = (
                    gain,
                    i,
                    direction,
                    acc_g,
                    acc_h,
                    left_c,
                )
    if top_i < 0:
        return splittable, 0
    _keep_categorical(best, top_gain - shift, top_g, top_h, top_c, sums, scales, params[SP_CAT_L2])
    n_left = top_i + 1
    if left_bins.shape[0] >= n_left:
        for i in range(n_left):
            left_bins[i] = order[i] if top_dir == 1 else order[n_used - 1 - i]
    return splittable, n_left


@njit(cache=True)
def _one_vs_rest(
    hist, start, n_bins, sums, scales, eps, params, shift, best, left_bins, node, rand_t
):
    sum_g, sum_h, count = sums[0], sums[1], sums[2]
    gs, hs = scales[0], scales[1]
    l1, l2, max_delta, min_data, min_hess = _params(params)
    ctx = _context(params, node)
    plain = _plain_scan(ctx)
    cnt_factor = count / sum_h if sum_h > 0.0 else 0.0
    top_gain, top_t, top_g, top_h, top_c = -np.inf, -1, 0.0, 0.0, 0.0
    splittable = False
    for t in range(1, n_bins):
        g, h = _bin_units(hist, start + t)
        c = _round_count(h * cnt_factor)
        if c < min_data or h * hs < min_hess:
            continue
        if count - c < min_data:
            continue
        other_h = (sum_h - h) * hs - eps
        if other_h < min_hess:
            continue
        if rand_t >= 0 and t != rand_t:
            continue
        gain = _gain(
            plain,
            (sum_g - g) * gs,
            other_h,
            count - c,
            g * gs,
            h * hs + eps,
            c,
            l1,
            l2,
            max_delta,
            ctx,
            0,
        )
        if gain <= shift:
            continue
        splittable = True
        if gain > top_gain:
            top_gain, top_t, top_g, top_h, top_c = gain, t, g, h + eps, c
    if top_t < 0:
        return splittable, 0
    _keep_categorical(best, top_gain - shift, top_g, top_h, top_c, sums, scales, 0.0)
    if left_bins.shape[0] >= 1:
        left_bins[0] = top_t
    return splittable, 1


@njit(cache=True, inline="always")
def _keep_categorical(best, gain, lg, lh, lc, sums, scales, extra_l2):
    # lh holds the float scan's kEpsilon (find_best_split takes it off)
    best[_F_GAIN] = gain
    best[_F_BIN] = -1.0
    best[_F_LEFT_DEFAULT] = 0.0  # missing and unseen categories go right
    best[_F_LG], best[_F_LH], best[_F_LC] = lg * scales[0], lh * scales[1], lc
    best[_F_RG] = (sums[0] - lg) * scales[0]
    best[_F_RH] = (sums[1] - lh) * scales[1]
    best[_F_RC] = sums[2] - lc
    best[_F_L2] = extra_l2


@njit(cache=True)
def _scan_categoricals(
    hist, features, offsets, categorical, sums, scales, eps, params, bests, flags, node, rand
):
    """Re-scan the categorical ones of ``features`` (the numeric scan read them as
    ordered bins)."""
    none = np.empty(0, np.int64)
    for j in range(features.shape[0]):
        f = features[j]
        if categorical[f]:
            start = offsets[f]
            u = rand[f] if rand.shape[0] > 0 else -1.0
            ok, _ = _scan_categorical(
                hist, start, offsets[f + 1] - start, sums, scales, eps, params, bests[j], none,
                node, u,
            )  # fmt: skip
            flags[j] = ok


@njit(cache=True)
def _scan_categorical_features(
    hist, features, offsets, categorical, sum_gradients, sum_hessians, count, split_params,
    g_scale, h_scale, eps, bests, flags, node, rand,
):  # fmt: skip
    """After the numeric scan: the categorical features' own (None: there are none)."""
    if categorical is not None:
        sums, scales, _ = _leaf_units(hist, sum_gradients, sum_hessians, count, g_scale, h_scale)
        _scan_categoricals(
            hist, features, offsets, categorical, sums, scales, eps, split_params, bests, flags,
            node, rand,
        )  # fmt: skip


def _leaf_units(hist, sum_gradients, sum_hessians, count, g_scale, h_scale):
    """((g, h, count) in units, (g_scale, h_scale), eps) of a leaf for the
    categorical scan: floats with the 2 kEpsilon of LightGBM's FindBestThreshold,
    or the exact integer totals of a quantized histogram."""


@overload(_leaf_units, inline="always")
def _leaf_units_impl(hist, sum_gradients, sum_hessians, count, g_scale, h_scale):
    if hist.ndim == 2 and isinstance(hist.dtype, types.Float):

        def floats(hist, sum_gradients, sum_hessians, count, g_scale, h_scale):
            sums = np.array([sum_gradients, sum_hessians + 2.0 * K_EPSILON, count])
            return sums, np.array([1.0, 1.0]), K_EPSILON

        return floats

    def ints(hist, sum_gradients, sum_hessians, count, g_scale, h_scale):
        sums = np.array([np.rint(sum_gradients / g_scale), np.rint(sum_hessians / h_scale), count])
        return sums, np.array([g_scale, h_scale]), 0.0

    return ints


def _default_node():
    """The node of a leaf without constraints: output 0, no bounds, penalty 1."""


@overload(_default_node, inline="always")
def _default_node_impl():
    def make():
        node = np.zeros(NODE_SIZE, np.float64)
        node[NODE_MIN], node[NODE_MAX], node[NODE_PENALTY] = -np.inf, np.inf, 1.0
        return node

    return make


def _or_empty(x, empty):
    """``x``, or ``empty`` (the array meaning "nothing given") for None."""


@overload(_or_empty, inline="always")
def _or_empty_impl(x, empty):
    if isinstance(x, types.NoneType):
        return lambda x, empty: empty
    return lambda x, empty: x


def _or_node(node):
    """``node``, or the node of a leaf without constraints for None."""


@overload(_or_node, inline="always")
def _or_node_impl(node):
    if isinstance(node, types.NoneType):
        return lambda node: _default_node()
    return lambda node: node


@njit(cache=True)
def _penalise(bests, features, monotone, node):
    # monotone_penalty: a split on a constrained feature has its gain scaled by
    # node[NODE_PENALTY] (LightGBM applies it whatever the penalty, 1 + kEpsilon at 0)
    if monotone.shape[0] == 0:
        return
    for j in range(features.shape[0]):
        if monotone[features[j]] != 0 and bests[j, _F_GAIN] != -np.inf:
            bests[j, _F_GAIN] *= node[NODE_PENALTY]


@njit(cache=True)
def find_best_split(
    hist,
    feature_indices,
    feature_offsets,
    nan_bins,
    zero_bins,
    most_freq_bins,
    sum_gradients,
    sum_hessians,
    count,
    split_params,
    out,
    splittable,
    g_scale=1.0,
    h_scale=1.0,
    categorical=None,
    node=None,
    monotone=None,
    rand=None,
    usable=None,
):
    """Best split of one leaf over the features ``feature_indices`` (LightGBM's
    scan and tie rule, see the module docstring).

    Parameters
    ----------
    hist : float64[total_bins, 2]          # IN  the leaf's histogram, or
           int64[total_bins]               #     its quantized wide words, or
           int64[total_bins, 2]            #     its quantized pairs, read as
                                           #     (g * g_scale, h * h_scale)
    feature_indices : int32[n_used]        # IN  candidate features, in global index order
    feature_offsets : int64[n_features+1]  # IN
    nan_bins : int32[n_features]           # IN  NaN bin within the feature, -1 if none
    zero_bins : int32[n_features]          # IN  missing type Zero: the bin of 0.0, else -1
    most_freq_bins : int32[n_features]     # IN  LightGBM's most frequent bin (most_frequent_bins)
    sum_gradients, sum_hessians, count : float  # IN  the leaf's totals (exact count)
    split_params : float64[SPLIT_PARAMS_SIZE]  # IN
    out : float64[SPLIT_RECORD_SIZE]       # OUT the best split; feature -1 if none
    splittable : uint8[n_used]             # OUT 1 where feature_indices[j] is splittable
    g_scale, h_scale : float64             # IN  quantized histograms only
    categorical : uint8[n_features] or None  # IN  1 for categorical features; their
                                           #     best split's left bins go to
                                           #     out[SPLIT_CAT_BINS:] (their count to
                                           #     out[SPLIT_CAT_COUNT]; 0: numeric)
    node : float64[NODE_SIZE] or None      # IN  the leaf's output and monotone bounds
                                           #     and penalty (native.common NODE_*)
    monotone : int8[n_features] or None    # IN  each feature's monotone direction
    rand : float64[n_features] or None     # IN  extra_trees: each feature's draw in [0, 1)
    usable : uint8[n_features] or None     # IN  0: scanned (for ``splittable``) but not
                                           #     chosen (feature_fraction_bynode,
                                           #     interaction constraints)
    """
    node_ = _or_node(node)
    monotone_ = _or_empty(monotone, np.zeros(0, np.int8))
    rand_ = _or_empty(rand, np.zeros(0, np.float64))
    usable_ = _or_empty(usable, np.zeros(0, np.uint8))
    n_used = feature_indices.shape[0]
    bests, eps = _all_bests(
        hist, feature_indices, feature_offsets, nan_bins, zero_bins, most_freq_bins,
        sum_gradients, sum_hessians, count, split_params, splittable, g_scale, h_scale,
        categorical, node_, monotone_, rand_,
    )  # fmt: skip
    out[:] = 0.0
    out[SPLIT_FEATURE] = -1.0
    out[SPLIT_GAIN] = -np.inf
    best_j = -1
    for j in range(n_used):
        gain = bests[j, _F_GAIN]
        if gain == -np.inf or (usable_.shape[0] > 0 and not usable_[feature_indices[j]]):
            continue
        # SplitInfo::operator>: the higher gain, on a tie the lower feature; callers
        # list features in (global) index order, so the earlier one.
        if best_j < 0 or gain > bests[best_j, _F_GAIN]:
            best_j = j
    if best_j < 0:
        return
    b = bests[best_j]
    l1, l2, max_delta, _, _ = _params(split_params)
    l2 = l2 + b[_F_L2]
    out[SPLIT_GAIN] = b[_F_GAIN]
    out[SPLIT_FEATURE] = feature_indices[best_j]
    out[SPLIT_BIN] = b[_F_BIN]
    out[SPLIT_DEFAULT_LEFT] = b[_F_LEFT_DEFAULT]
    ctx = _context(split_params, node_)
    out[SPLIT_LEFT_VALUE] = side_output(b[_F_LG], b[_F_LH], b[_F_LC], l1, l2, max_delta, ctx)
    out[SPLIT_RIGHT_VALUE] = side_output(b[_F_RG], b[_F_RH], b[_F_RC], l1, l2, max_delta, ctx)
    # The children's totals; a float scan's sides shed the kEpsilon they carried.
    out[SPLIT_LEFT_GRAD], out[SPLIT_LEFT_HESS] = b[_F_LG], b[_F_LH] - eps
    out[SPLIT_RIGHT_GRAD], out[SPLIT_RIGHT_HESS] = b[_F_RG], b[_F_RH] - eps
    out[SPLIT_LEFT_COUNT], out[SPLIT_RIGHT_COUNT] = b[_F_LC], b[_F_RC]
    if categorical is not None and categorical[feature_indices[best_j]]:
        sums, scales, _ = _leaf_units(hist, sum_gradients, sum_hessians, count, g_scale, h_scale)
        f = feature_indices[best_j]
        u = rand_[f] if rand_.shape[0] > 0 else -1.0
        _record_left_bins(hist, f, feature_offsets, sums, scales, eps, split_params, out, node_, u)


@njit(cache=True)
def _all_bests(
    hist, feature_indices, feature_offsets, nan_bins, zero_bins, most_freq_bins, sum_gradients,
    sum_hessians, count, split_params, splittable, g_scale, h_scale, categorical, node,
    monotone, rand,
):  # fmt: skip
    """Every candidate's best split (the _F_* rows), numeric then categorical,
    monotone penalty applied, and the kEpsilon of a float scan's sides; fills
    ``splittable``."""
    bests = np.zeros((feature_indices.shape[0], _F_SIZE), np.float64)
    eps = _scan_leaf(
        hist, feature_indices, feature_offsets, nan_bins, zero_bins, most_freq_bins,
        sum_gradients, sum_hessians, count, split_params, g_scale, h_scale, bests, splittable,
        node, monotone, rand,
    )  # fmt: skip
    _scan_categorical_features(
        hist, feature_indices, feature_offsets, categorical, sum_gradients, sum_hessians, count,
        split_params, g_scale, h_scale, eps, bests, splittable, node, rand,
    )  # fmt: skip
    _penalise(bests, feature_indices, monotone, node)
    return bests, eps


@njit(cache=True)
def _record_left_bins(hist, f, feature_offsets, sums, scales, eps, split_params, out, node, u):
    """out[SPLIT_CAT_COUNT], out[SPLIT_CAT_BINS:] = the winning categorical
    split's left bins (its scan run again on the same sums, keeping them)."""
    start = feature_offsets[f]
    left = np.empty(out.shape[0] - SPLIT_CAT_BINS, np.int64)
    again = np.empty(_F_SIZE, np.float64)
    _, n_left = _scan_categorical(
        hist, start, feature_offsets[f + 1] - start, sums, scales, eps, split_params, again, left,
        node, u,
    )  # fmt: skip
    out[SPLIT_CAT_COUNT] = n_left
    for i in range(n_left):
        out[SPLIT_CAT_BINS + i] = left[i]


@njit(cache=True)
def best_gain_per_feature(
    hist,
    feature_indices,
    feature_offsets,
    nan_bins,
    zero_bins,
    most_freq_bins,
    sum_gradients,
    sum_hessians,
    count,
    split_params,
    gains,
    splittable,
    g_scale=1.0,
    h_scale=1.0,
    categorical=None,
    node=None,
    monotone=None,
    rand=None,
    usable=None,
):
    """The best split gain of every feature on its own (voting-parallel's local vote).

    Parameters
    ----------
    (as find_best_split)
    gains : float64[n_used]        # OUT best gain of feature_indices[j]; -inf if it has
                                   #     no valid split or is not usable
    splittable : uint8[n_used]     # OUT as find_best_split
    """
    usable_ = _or_empty(usable, np.zeros(0, np.uint8))
    bests, _ = _all_bests(
        hist, feature_indices, feature_offsets, nan_bins, zero_bins, most_freq_bins,
        sum_gradients, sum_hessians, count, split_params, splittable, g_scale, h_scale,
        categorical, _or_node(node), _or_empty(monotone, np.zeros(0, np.int8)),
        _or_empty(rand, np.zeros(0, np.float64)),
    )  # fmt: skip
    gains[:] = bests[:, _F_GAIN]
    if usable_.shape[0] > 0:
        for j in range(feature_indices.shape[0]):
            if not usable_[feature_indices[j]]:
                gains[j] = -np.inf


@njit(cache=True)
def fix_most_frequent_bins(
    hist, feature_indices, feature_offsets, most_freq_bins, sum_gradients, sum_hessians
):
    """Set each feature's most frequent bin to the leaf's totals minus its other
    bins, in bin order, as LightGBM's Dataset::FixHistogram does (it never
    accumulates that bin), so a built histogram holds LightGBM's sums bit for
    bit: an empty bin so filled holds rounding residue, not zeros, and that
    decides near-ties.  Features whose most frequent bin is 0 are left alone
    (LightGBM stores no bin 0 for them; the forward scan derives it).

    Parameters
    ----------
    hist : float64[total_bins, 2]          # IN/OUT a histogram just built
    feature_indices : int32[n_used]        # IN
    feature_offsets : int64[n_features+1]  # IN
    most_freq_bins : int32[n_features]     # IN
    sum_gradients, sum_hessians : float    # IN  the leaf's totals
    """
    if scan_in_parallel(feature_indices, feature_offsets):
        _fix_parallel(
            hist, feature_indices, feature_offsets, most_freq_bins, sum_gradients, sum_hessians
        )
        return
    for j in range(feature_indices.shape[0]):
        _fix_feature(
            hist, feature_indices[j], feature_offsets, most_freq_bins, sum_gradients, sum_hessians
        )


@njit(cache=True, parallel=True)
def _fix_parallel(
    hist, feature_indices, feature_offsets, most_freq_bins, sum_gradients, sum_hessians
):
    for j in prange(feature_indices.shape[0]):
        _fix_feature(
            hist, feature_indices[j], feature_offsets, most_freq_bins, sum_gradients, sum_hessians
        )


@njit(cache=True, inline="always")
def _fix_feature(hist, f, feature_offsets, most_freq_bins, sum_gradients, sum_hessians):
    m = most_freq_bins[f]
    if m <= 0:
        return
    start = feature_offsets[f]
    g, h = sum_gradients, sum_hessians
    for i in range(feature_offsets[f + 1] - start):
        if i != m:
            g -= hist[start + i, 0]
            h -= hist[start + i, 1]
    hist[start + m, 0] = g
    hist[start + m, 1] = h


@njit(cache=True)
def best_leaf(gains, features):
    """The leaf to split next, -1 when none can: the highest gain, on a tie the
    lower split feature, then the lower leaf (LightGBM's ArgMax over its
    SplitInfo records).

    Parameters
    ----------
    gains : float64[num_leaves]     # IN  best split gain per leaf, -inf when none
    features : float64[num_leaves]  # IN  its split feature
    """
    best = -1
    for leaf in range(gains.shape[0]):
        gain = gains[leaf]
        if gain == -np.inf:
            continue
        if (
            best < 0
            or gain > gains[best]
            or (gain == gains[best] and features[leaf] < features[best])
        ):
            best = leaf
    return best
