"""native.split.find_best_split against a naive numpy twin of LightGBM's scan.

The twin enumerates every candidate split of a leaf the way LightGBM's
``FeatureHistogram::FindBestThresholdSequentially`` visits them, and scores
each with the gain of the module docstring:

    T(G)       = sign(G) max(|G| - lambda_l1, 0)
    output     = clip(-T(G) / (H + lambda_l2), +-max_delta_step)   (no clip when <= 0)
    gain(G, H) = -(2 T(G) output + (H + lambda_l2) output^2)       (= T^2 / (H + l2) unclipped)
    split gain = gain(left) + gain(right) - gain(parent) - min_gain_to_split

Per feature (bins 0..B-1; with a NaN bin, it is the last):

* reverse pass, first: for t = last value bin down to 1, the right side is
  bins t..last value bin (NaN left), the threshold t - 1;
* forward pass, only with a NaN bin and B > 2: for t = 0 .. B - 2, the left
  side is bins 0..t (NaN right; t = B - 2 is "all values left, NaN right").

Sums as LightGBM forms them: the leaf's hessian sum H carries 2 kEpsilon
(kEpsilon = float32(1e-15)), a side summed along the scan starts at
kEpsilon, the other side is the leaf minus it.  With a most frequent bin 0
the forward pass starts from "bin 0 = leaf minus every other bin".  Counts:
every bin's count is round(h_bin * n / H) (half up), added along the scan;
the other side's count is n minus that.  A candidate is valid when both
sides have count >= min_data_in_leaf and hessian >= min_sum_hessian_in_leaf;
it makes the feature *splittable* when its gain is above the parent's gain
plus min_gain_to_split.  Within a pass the first best is kept; the forward
pass replaces the reverse pass's only when strictly better; across features
the best gain wins, ties the earlier feature (callers pass index order).
"""

import math

import numpy as np
import pytest
from dgbdt.native import common
from dgbdt.native.split import (
    K_EPSILON,
    best_leaf,
    find_best_split,
    fix_most_frequent_bins,
    leaf_gain,
    leaf_output,
)
from hypothesis import given, settings
from hypothesis import strategies as st

SEEDS = [0, 1, 2, 3]
EPS = float(np.float32(1e-15))


# -- the twin -------------------------------------------------------------------


def t_l1(g, l1):
    m = abs(g) - l1
    if m <= 0.0:
        return 0.0
    return m if g > 0.0 else -m


def twin_output(g, h, l1, l2, max_delta):
    if h + l2 <= 0.0:
        return 0.0  # an empty side (LightGBM would divide by zero)
    v = -t_l1(g, l1) / (h + l2)
    if max_delta > 0.0 and abs(v) > max_delta:
        v = math.copysign(max_delta, v)
    return v


def twin_gain(g, h, l1, l2, max_delta):
    if h + l2 <= 0.0:
        return 0.0
    t = t_l1(g, l1)
    if max_delta <= 0.0:
        return t * t / (h + l2)
    v = twin_output(g, h, l1, l2, max_delta)
    return -(2.0 * t * v + (h + l2) * v * v)


def split_params(l1=0.0, l2=0.0, min_gain=0.0, min_data=1, min_hess=0.0, max_delta=0.0):
    p = np.zeros(common.SPLIT_PARAMS_SIZE, np.float64)
    p[common.SP_LAMBDA_L1] = l1
    p[common.SP_LAMBDA_L2] = l2
    p[common.SP_MIN_GAIN_TO_SPLIT] = min_gain
    p[common.SP_MIN_DATA_IN_LEAF] = min_data
    p[common.SP_MIN_SUM_HESSIAN] = min_hess
    p[common.SP_MAX_DELTA_STEP] = max_delta
    return p


def bin_count(h, n, hessian_sum):
    """LightGBM's estimate of a bin's rows: int(h * n / H + 0.5)."""
    factor = n / hessian_sum if hessian_sum > 0.0 else 0.0
    return float(math.trunc(h * factor + 0.5))


def running(start, values):
    """start, start + v0, (start + v0) + v1, ...: sums in scan order, one by one."""
    out, acc = [], start
    for v in values:
        acc = acc + float(v)
        out.append(acc)
    return out


def feature_candidates(hist, start, n_bins, nan_bin, most_freq_bin, totals):
    """One feature's candidates in LightGBM's scan order, as
    (threshold, default_left, left (g, h, c), right (g, h, c)), hessians with kEpsilon."""
    G, n = totals[0], totals[2]
    H = totals[1] + 2 * EPS
    g = [float(x) for x in hist[start : start + n_bins, 0]]
    h = [float(x) for x in hist[start : start + n_bins, 1]]
    c = [bin_count(x, n, H) for x in h]
    na = nan_bin >= 0 and n_bins > 2
    last = n_bins - 1 - int(na)
    out = []
    order = list(range(last, 0, -1))  # reverse: right side grows downwards
    # NaN left, except with two bins (value | NaN): then NaN is the right side
    reverse_dl = nan_bin < 0 or na
    for rg, rh, rc, t in zip(
        running(0.0, [g[k] for k in order]),
        running(EPS, [h[k] for k in order]),
        running(0.0, [c[k] for k in order]),
        order,
        strict=True,
    ):
        out.append((t - 1, reverse_dl, (G - rg, H - rh, n - rc), (rg, rh, rc)))
    if na:
        if most_freq_bin == 0:  # bin 0 = leaf - the others
            first = (
                running(G, [-x for x in g[1:]])[-1],
                running(H - EPS, [-x for x in h[1:]])[-1],
                running(n, [-x for x in c[1:]])[-1],
            )
        else:
            first = (g[0], EPS + h[0], c[0])
        lgs = running(first[0], g[1 : n_bins - 1])
        lhs = running(first[1], h[1 : n_bins - 1])
        lcs = running(first[2], c[1 : n_bins - 1])
        for t, left in enumerate(
            zip([first[0]] + lgs, [first[1]] + lhs, [first[2]] + lcs, strict=True)
        ):
            out.append((t, False, left, (G - left[0], H - left[1], n - left[2])))
    return out


def twin_best_split(hist, features, offsets, nan_bins, totals, params, most_freq_bins=None):
    """(best, shift, scored, splittable): best = (gain, f, b, dl, left, right) or None,
    gains unshifted; scored = every valid candidate (gain, f, b, dl)."""
    l1, l2 = params[common.SP_LAMBDA_L1], params[common.SP_LAMBDA_L2]
    max_delta = params[common.SP_MAX_DELTA_STEP]
    min_data, min_hess = params[common.SP_MIN_DATA_IN_LEAF], params[common.SP_MIN_SUM_HESSIAN]
    shift = (
        twin_gain(totals[0], totals[1] + 2 * EPS, l1, l2, max_delta)
        + params[common.SP_MIN_GAIN_TO_SPLIT]
    )
    best, scored, splittable = None, [], []
    for f in features:
        start, end = int(offsets[f]), int(offsets[f + 1])
        mfb = -1 if most_freq_bins is None else int(most_freq_bins[f])
        top, top_shifted, ok = None, -math.inf, False
        for b, dl, left, right in feature_candidates(
            hist, start, end - start, int(nan_bins[f]), mfb, totals
        ):
            if (
                left[2] < min_data
                or right[2] < min_data
                or left[1] < min_hess
                or right[1] < min_hess
            ):
                continue
            gain = twin_gain(left[0], left[1], l1, l2, max_delta) + twin_gain(
                right[0], right[1], l1, l2, max_delta
            )
            scored.append((gain, int(f), b, dl))
            if gain <= shift:
                continue
            ok = True
            # the reverse pass first; the forward pass must beat its recorded gain
            forward = top is not None and not dl and top[3]
            better = (
                gain > top_shifted + shift
                if forward
                else gain > (-math.inf if top is None else top[0])
            )
            if better:
                top = (gain, int(f), b, dl, left, right)
                top_shifted = gain - shift
        splittable.append(ok)
        if top is not None and (best is None or top[0] - shift > best[0] - shift):
            best = top
    return best, shift, scored, splittable


def kernel_best_split(
    hist, features, offsets, nan_bins, totals, params, most_freq_bins=None, flags=None
):
    out = np.full(common.SPLIT_RECORD_SIZE, np.nan)
    features = np.asarray(features, np.int32)
    if most_freq_bins is None:
        most_freq_bins = np.full(len(nan_bins), -1, np.int32)
    if flags is None:
        flags = np.zeros(len(features), np.uint8)
    find_best_split(
        hist,
        features,
        offsets,
        nan_bins,
        np.full(len(nan_bins), -1, np.int32),  # no missing type Zero
        most_freq_bins,
        totals[0],
        totals[1],
        totals[2],
        params,
        out,
        flags,
    )
    return out


# -- random leaves --------------------------------------------------------------


def random_leaf(
    rng, n_bins, nan_features, n_rows=400, constant_hessian=False, signal=None, return_counts=False
):
    """A histogram built from random rows; returns hist, offsets, nan_bins, totals
    (and the true per-bin row counts with ``return_counts``)."""
    n_bins = np.asarray(n_bins, np.int64)
    offsets = np.concatenate([[0], np.cumsum(n_bins)]).astype(np.int64)
    nan_bins = np.array(
        [nb - 1 if f in nan_features else -1 for f, nb in enumerate(n_bins)], np.int32
    )
    bins = np.stack([rng.integers(0, nb, n_rows) for nb in n_bins])
    g = rng.normal(size=n_rows).astype(common.GRAD_DTYPE)
    if signal is not None:
        f, b = signal
        g += np.where(bins[f] <= b, -2.0, 2.0).astype(common.GRAD_DTYPE)
    h = (np.ones(n_rows) if constant_hessian else rng.uniform(0.1, 1.5, n_rows)).astype(
        common.GRAD_DTYPE
    )
    hist = np.zeros((offsets[-1], common.HIST_WIDTH), common.HIST_DTYPE)
    counts = np.zeros(offsets[-1], np.int64)  # true counts, which the kernel never sees
    for f in range(len(n_bins)):
        idx = offsets[f] + bins[f]
        np.add.at(hist[:, common.HIST_GRAD], idx, g.astype(np.float64))
        np.add.at(hist[:, common.HIST_HESS], idx, h.astype(np.float64))
        np.add.at(counts, idx, 1)
    totals = (float(np.sum(g, dtype=np.float64)), float(np.sum(h, dtype=np.float64)), float(n_rows))
    if return_counts:
        return hist, offsets, nan_bins, totals, counts
    return hist, offsets, nan_bins, totals


def check_against_twin(hist, features, offsets, nan_bins, totals, params, most_freq_bins=None):
    """The kernel's record and splittable flags are the twin's, bit for bit."""
    flags = np.zeros(len(features), np.uint8)
    rec = kernel_best_split(
        hist, features, offsets, nan_bins, totals, params, most_freq_bins, flags
    )
    best, shift, scored, splittable = twin_best_split(
        hist, features, offsets, nan_bins, totals, params, most_freq_bins
    )
    assert flags.astype(bool).tolist() == splittable
    if best is None:
        assert rec[common.SPLIT_FEATURE] == -1, f"kernel found {rec}, twin found no valid split"
        assert rec[common.SPLIT_GAIN] == -np.inf
        return rec, None
    gain, f, b, dl, left, right = best
    assert rec[common.SPLIT_FEATURE] >= 0, f"kernel found no split; twin found {best[:4]}"
    got = (
        int(rec[common.SPLIT_FEATURE]),
        int(rec[common.SPLIT_BIN]),
        bool(rec[common.SPLIT_DEFAULT_LEFT]),
    )
    assert got == (f, b, dl), f"kernel chose {got}, twin chose {(f, b, dl)}"
    l1, l2 = params[common.SP_LAMBDA_L1], params[common.SP_LAMBDA_L2]
    md = params[common.SP_MAX_DELTA_STEP]
    assert rec[common.SPLIT_GAIN] == gain - shift > 0
    # Estimated counts: whole numbers that add up to the leaf's count.
    assert rec[common.SPLIT_LEFT_COUNT] == math.floor(rec[common.SPLIT_LEFT_COUNT])
    assert rec[common.SPLIT_LEFT_COUNT] + rec[common.SPLIT_RIGHT_COUNT] == totals[2]
    # The record's right side is the leaf minus its left side (as LightGBM writes
    # it); the children's totals shed the kEpsilon each side carried in the scan.
    right = (totals[0] - left[0], totals[1] + 2 * EPS - left[1], totals[2] - left[2])
    assert tuple(
        rec[[common.SPLIT_LEFT_GRAD, common.SPLIT_LEFT_HESS, common.SPLIT_LEFT_COUNT]]
    ) == (left[0], left[1] - EPS, left[2])
    assert tuple(
        rec[[common.SPLIT_RIGHT_GRAD, common.SPLIT_RIGHT_HESS, common.SPLIT_RIGHT_COUNT]]
    ) == (right[0], right[1] - EPS, right[2])
    assert rec[common.SPLIT_LEFT_VALUE] == twin_output(*left[:2], l1, l2, md)
    assert rec[common.SPLIT_RIGHT_VALUE] == twin_output(*right[:2], l1, l2, md)
    return rec, best


def random_most_freq_bins(rng, layout):
    """Per feature: 0 (LightGBM stores no bin 0) or another bin."""
    return np.array(
        [0 if rng.random() < 0.5 else int(rng.integers(1, nb)) for nb in layout], np.int32
    )


# -- tests ----------------------------------------------------------------------


def test_k_epsilon_is_lightgbms():
    assert K_EPSILON == EPS == float(np.float32(1e-15)) != 1e-15


PARAM_SETS = [
    {},
    {"l2": 1.0, "min_data": 20},
    {"l1": 3.0, "l2": 0.5, "min_hess": 5.0},
    {"l2": 1.0, "max_delta": 0.05},
    {"l1": 1.0, "l2": 2.0, "min_gain": 5.0, "min_data": 5, "min_hess": 1.0, "max_delta": 0.3},
]


@pytest.mark.parametrize("n_bins", [3, 32, 256])
@pytest.mark.parametrize("with_nan", [False, True])
@pytest.mark.parametrize("constant_hessian", [False, True])
@pytest.mark.parametrize("pi", range(len(PARAM_SETS)))
@pytest.mark.parametrize("seed", SEEDS[:2])
def test_matches_twin_random(n_bins, with_nan, constant_hessian, pi, seed):
    rng = np.random.default_rng(seed)
    layout = [n_bins, 5, n_bins, 2]
    nan_features = {0, 1} if with_nan else set()
    hist, offsets, nan_bins, totals = random_leaf(
        rng, layout, nan_features, constant_hessian=constant_hessian
    )
    check_against_twin(
        hist,
        np.arange(len(layout)),
        offsets,
        nan_bins,
        totals,
        split_params(**PARAM_SETS[pi]),
        random_most_freq_bins(rng, layout),
    )


@pytest.mark.parametrize("seed", SEEDS)
def test_feature_subset(seed):
    rng = np.random.default_rng(seed)
    layout = [32, 3, 256, 7, 32]
    hist, offsets, nan_bins, totals = random_leaf(rng, layout, {2, 4}, signal=(1, 0))
    features = [0, 2, 4]  # the planted feature 1 is not a candidate
    rec, _ = check_against_twin(hist, features, offsets, nan_bins, totals, split_params(l2=1.0))
    assert rec[common.SPLIT_FEATURE] in features


@pytest.mark.parametrize("n_bins", [3, 32, 256])
@pytest.mark.parametrize("seed", SEEDS)
def test_planted_split_is_found(n_bins, seed):
    rng = np.random.default_rng(seed)
    layout = [n_bins, 7, n_bins, n_bins]
    f = int(rng.integers(0, 4))
    b = int(rng.integers(0, layout[f] - 1))
    if f == 2:  # a NaN feature: keep b a value bin
        b = min(b, layout[f] - 3)
    hist, offsets, nan_bins, totals = random_leaf(rng, layout, {2}, n_rows=3000, signal=(f, b))
    rec, best = check_against_twin(
        hist, np.arange(4), offsets, nan_bins, totals, split_params(l2=1.0, min_data=1)
    )
    assert (int(rec[common.SPLIT_FEATURE]), int(rec[common.SPLIT_BIN])) == (f, b)
    if f == 2:
        # The NaN rows carry the right side's signal: the forward pass (NaN
        # right) is strictly better, so it replaces the reverse pass's choice.
        assert rec[common.SPLIT_DEFAULT_LEFT] == 0.0


def _hist_from_bins(per_feature):
    """hist from explicit per-bin (sum_gradients, sum_hessians) lists."""
    rows = [r for feature in per_feature for r in feature]
    assert all(len(r) == common.HIST_WIDTH for r in rows)
    sizes = [len(feature) for feature in per_feature]
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    return np.asarray(rows, common.HIST_DTYPE), offsets


def _choice(rec):
    return (rec[common.SPLIT_FEATURE], rec[common.SPLIT_BIN], rec[common.SPLIT_DEFAULT_LEFT])


# In the tie tests every hessian sum is a multiple of 64, where kEpsilon is below
# half an ulp: the tied candidates' sums, hence gains, are exactly equal.


def test_ties_inside_empty_bins_go_to_the_highest_threshold():
    # Bins 1 and 2 hold no rows: thresholds 0, 1 and 2 make the same partition.
    # LightGBM's reverse pass meets threshold 2 first and keeps it.
    feature = [(-40.0, 64.0), (0.0, 0.0), (0.0, 0.0), (40.0, 64.0)]
    hist, offsets = _hist_from_bins([feature, feature])
    nan_bins = np.array([-1, -1], np.int32)
    totals = (0.0, 128.0, 128.0)
    for features, want in (([0, 1], 0), ([1], 1)):
        rec = kernel_best_split(hist, features, offsets, nan_bins, totals, split_params())
        assert (rec[common.SPLIT_FEATURE], rec[common.SPLIT_BIN]) == (want, 2)
    check_against_twin(hist, [0, 1], offsets, nan_bins, totals, split_params())


def test_equal_gains_go_to_the_earlier_feature():
    # Callers list features in global index order (a column block's local
    # indices too): the first of equal gains is the lower global feature.
    hist, offsets = _hist_from_bins([[(40.0, 64.0), (-40.0, 64.0)], [(-40.0, 64.0), (40.0, 64.0)]])
    nan_bins = np.array([-1, -1], np.int32)
    totals = (0.0, 128.0, 128.0)
    for features in ([0, 1], [1, 0]):
        rec = kernel_best_split(hist, features, offsets, nan_bins, totals, split_params())
        assert rec[common.SPLIT_FEATURE] == features[0]
    check_against_twin(hist, [0, 1], offsets, nan_bins, totals, split_params())


@pytest.mark.parametrize("most_freq_bin", [-1, 0])
def test_nan_direction_tie_goes_left(most_freq_bin):
    # The NaN bin has rows but zero gradient, and the value bins are mirror
    # images: at bin 0 NaN-left ({b0, NaN} | {b1}) and NaN-right ({b0} | {b1, NaN})
    # give exactly equal gains.  The reverse pass (NaN left) runs first; the
    # forward pass would need a strictly higher gain.
    feature = [(-30.0, 64.0), (30.0, 64.0), (0.0, 64.0)]
    hist, offsets = _hist_from_bins([feature])
    nan_bins = np.array([2], np.int32)
    mfb = np.array([most_freq_bin], np.int32)
    totals = (0.0, 192.0, 192.0)
    best, shift, scored, _ = twin_best_split(
        hist, [0], offsets, nan_bins, totals, split_params(), mfb
    )
    gains = {s[1:]: s[0] for s in scored}
    assert gains[(0, 0, False)] == gains[(0, 0, True)] == best[0]
    rec = kernel_best_split(hist, [0], offsets, nan_bins, totals, split_params(), mfb)
    assert _choice(rec) == (0, 0, 1.0)
    check_against_twin(hist, [0], offsets, nan_bins, totals, split_params(), mfb)


def test_tie_across_nan_directions_keeps_the_reverse_pass():
    # The NaN bin has the same (g, h) as bin 1, so NaN-left at bin 0 ({NaN, b0} |
    # {b1, b2}) and NaN-right at bin 1 ({b0, b1} | {b2, NaN}) have equal sums,
    # hence exactly equal gains; min_data_in_leaf rules out every other
    # candidate.  The reverse pass's (bin 0, NaN left) stays.
    feature = [(-3.0, 128.0), (2.0, 64.0), (2.0, 128.0), (2.0, 64.0)]
    hist, offsets = _hist_from_bins([feature])
    nan_bins = np.array([3], np.int32)
    totals = (3.0, 384.0, 384.0)
    params = split_params(min_data=192)
    best, shift, scored, _ = twin_best_split(hist, [0], offsets, nan_bins, totals, params)
    assert sorted(s[1:] for s in scored) == [(0, 0, True), (0, 1, False)]
    assert scored[0][0] == scored[1][0]
    rec = kernel_best_split(hist, [0], offsets, nan_bins, totals, params)
    assert _choice(rec) == (0, 0, 1.0)
    check_against_twin(hist, [0], offsets, nan_bins, totals, params)


def test_split_of_nan_against_all_values_is_found():
    # Only missingness carries signal: the best split sends every value bin
    # left and NaN right (LightGBM: threshold 1e300, default_left=False).
    feature = [(-1.0, 1.0), (1.0, 1.0), (-1.0, 1.0), (20.0, 1.0)]
    hist, offsets = _hist_from_bins([feature])
    nan_bins = np.array([3], np.int32)
    totals = (19.0, 4.0, 40.0)
    best, shift, _, _ = twin_best_split(hist, [0], offsets, nan_bins, totals, split_params())
    assert best[1:4] == (0, 2, False)
    rec = kernel_best_split(hist, [0], offsets, nan_bins, totals, split_params())
    got = _choice(rec)
    assert got == (0, 2, 0.0), f"NaN-vs-values split not found: got {got}"
    assert (rec[common.SPLIT_LEFT_COUNT], rec[common.SPLIT_RIGHT_COUNT]) == (30.0, 10.0)
    check_against_twin(hist, [0], offsets, nan_bins, totals, split_params())


def test_nan_bin_with_gradient_but_no_hessian():
    # NaN left at bin 0 ({b0, NaN} | {b1}: gains 64/2 + 16/2 with l2 = 1) beats
    # NaN right ({b0} | {b1, NaN}) and "values left, NaN right".
    feature = [(-4.0, 1.0), (4.0, 1.0), (-4.0, 0.0)]
    hist, offsets = _hist_from_bins([feature])
    nan_bins = np.array([2], np.int32)
    totals = (-4.0, 2.0, 3.0)
    params = split_params(l2=1.0)
    best, shift, _, _ = twin_best_split(hist, [0], offsets, nan_bins, totals, params)
    assert best[1:4] == (0, 0, True)
    rec = kernel_best_split(hist, [0], offsets, nan_bins, totals, params)
    assert _choice(rec) == (0, 0, 1.0)
    check_against_twin(hist, [0], offsets, nan_bins, totals, params)


def test_empty_nan_bin_sends_nan_left():
    # A NaN bin without rows: both passes see the same partitions and the reverse
    # pass (NaN left) keeps its tie; "every value left" leaves an empty right side.
    feature = [(-30.0, 64.0), (30.0, 64.0), (0.0, 0.0)]
    hist, offsets = _hist_from_bins([feature])
    nan_bins = np.array([2], np.int32)
    totals = (0.0, 128.0, 128.0)
    rec = kernel_best_split(hist, [0], offsets, nan_bins, totals, split_params())
    assert _choice(rec) == (0, 0, 1.0)
    check_against_twin(hist, [0], offsets, nan_bins, totals, split_params())


def test_two_bins_value_and_nan_send_nan_right():
    # One value bin and the NaN bin: LightGBM's only split puts NaN right.
    hist, offsets = _hist_from_bins([[(-3.0, 1.0), (3.0, 1.0)]])
    nan_bins = np.array([1], np.int32)
    rec = kernel_best_split(hist, [0], offsets, nan_bins, (0.0, 2.0, 2.0), split_params())
    assert _choice(rec) == (0, 0, 0.0)
    check_against_twin(hist, [0], offsets, nan_bins, (0.0, 2.0, 2.0), split_params())


def test_counts_are_estimated_bin_by_bin():
    # n / H = 1 (up to kEpsilon): bins of hessian 1.4, 1.4, 1.2 count 1 row each.
    # The reverse pass adds those up (right side {b1, b2}: 2 rows, left 4 - 2);
    # rounding the side's hessian once (2.6 -> 3) would leave 1 row on the left
    # and min_data_in_leaf=2 would reject the split.
    hist, offsets = _hist_from_bins([[(-5.0, 1.4), (0.0, 1.4), (5.0, 1.2)]])
    nan_bins = np.array([-1], np.int32)
    totals = (0.0, 4.0, 4.0)
    rec = kernel_best_split(hist, [0], offsets, nan_bins, totals, split_params(min_data=2))
    assert _choice(rec) == (0, 0, 1.0)
    assert (rec[common.SPLIT_LEFT_COUNT], rec[common.SPLIT_RIGHT_COUNT]) == (2.0, 2.0)
    check_against_twin(hist, [0], offsets, nan_bins, totals, split_params(min_data=2))


def test_counts_are_estimated_from_hessians():
    # True counts: 2 | 2 rows, but the left side has 3/4 of the hessian: the
    # right side's estimate is 1, so min_data_in_leaf=2 rejects the split.
    hist, offsets = _hist_from_bins([[(-5.0, 3.0), (5.0, 1.0)]])
    nan_bins = np.array([-1], np.int32)
    totals = (0.0, 4.0, 4.0)
    rec = kernel_best_split(hist, [0], offsets, nan_bins, totals, split_params(min_data=2))
    assert rec[common.SPLIT_FEATURE] == -1, "min_data_in_leaf must use the estimated counts"
    rec = kernel_best_split(hist, [0], offsets, nan_bins, totals, split_params(min_data=1))
    assert (rec[common.SPLIT_LEFT_COUNT], rec[common.SPLIT_RIGHT_COUNT]) == (3.0, 1.0)
    # True counts 1 | 3 with equal hessians: estimated 2 | 2, so min_data=2 accepts.
    hist, _ = _hist_from_bins([[(-5.0, 2.0), (5.0, 2.0)]])
    rec = kernel_best_split(hist, [0], offsets, nan_bins, totals, split_params(min_data=2))
    assert _choice(rec) == (0, 0, 1.0)
    assert (rec[common.SPLIT_LEFT_COUNT], rec[common.SPLIT_RIGHT_COUNT]) == (2.0, 2.0)
    for min_data in (1, 2, 3):
        check_against_twin(hist, [0], offsets, nan_bins, totals, split_params(min_data=min_data))


def test_count_estimate_rounds_half_up():
    # 5 rows, hessian 128 (kEpsilon vanishes): a bin of hessian 64 counts
    # int(64 * 5/128 + 0.5) = int(3.0) = 3 rows, on the right (the side the
    # reverse pass sums); the left gets 5 - 3.
    hist, offsets = _hist_from_bins([[(-5.0, 64.0), (5.0, 64.0)]])
    nan_bins = np.array([-1], np.int32)
    totals = (0.0, 128.0, 5.0)
    rec = kernel_best_split(hist, [0], offsets, nan_bins, totals, split_params())
    assert (rec[common.SPLIT_LEFT_COUNT], rec[common.SPLIT_RIGHT_COUNT]) == (2.0, 3.0)
    assert (
        kernel_best_split(hist, [0], offsets, nan_bins, totals, split_params(min_data=3))[
            common.SPLIT_FEATURE
        ]
        == -1
    )
    check_against_twin(hist, [0], offsets, nan_bins, totals, split_params())


def test_zero_hessian_leaf():
    # sum_hessians = 0: every bin's estimate is 0 rows, so the right side (summed)
    # has none and the left all (l2 keeps the gains finite).  Without NaN values,
    # the record says NaN left (LightGBM's reverse pass); the grower sends NaN
    # where 0.0 goes for such features.
    hist, offsets = _hist_from_bins([[(-3.0, 0.0), (3.0, 0.0)]])
    nan_bins = np.array([-1], np.int32)
    totals = (0.0, 0.0, 10.0)
    rec = kernel_best_split(hist, [0], offsets, nan_bins, totals, split_params(l2=1.0, min_data=0))
    assert _choice(rec) == (0, 0, 1.0)
    assert (rec[common.SPLIT_LEFT_COUNT], rec[common.SPLIT_RIGHT_COUNT]) == (10.0, 0.0)
    rec = kernel_best_split(hist, [0], offsets, nan_bins, totals, split_params(l2=1.0, min_data=1))
    assert rec[common.SPLIT_FEATURE] == -1
    for min_data in (0, 1):
        check_against_twin(
            hist, [0], offsets, nan_bins, totals, split_params(l2=1.0, min_data=min_data)
        )


@pytest.mark.parametrize("with_nan", [False, True])
@pytest.mark.parametrize("seed", SEEDS)
def test_estimated_counts_are_exact_with_constant_hessians(with_nan, seed):
    # Every row with the same hessian: the estimate is the true row count.
    rng = np.random.default_rng(seed)
    layout = [32, 5, 256]
    hist, offsets, nan_bins, totals, counts = random_leaf(
        rng,
        layout,
        {0, 2} if with_nan else set(),
        n_rows=1000,
        constant_hessian=True,
        return_counts=True,
    )
    rec, best = check_against_twin(
        hist, [0, 1, 2], offsets, nan_bins, totals, split_params(l2=1.0, min_data=20)
    )
    assert best is not None
    f, b, dl = (
        int(rec[common.SPLIT_FEATURE]),
        int(rec[common.SPLIT_BIN]),
        bool(rec[common.SPLIT_DEFAULT_LEFT]),
    )
    start = int(offsets[f])
    true_left = int(counts[start : start + b + 1].sum())
    if dl and nan_bins[f] >= 0:
        true_left += int(counts[start + nan_bins[f]])
    assert rec[common.SPLIT_LEFT_COUNT] == true_left
    assert rec[common.SPLIT_RIGHT_COUNT] == 1000 - true_left


def test_splittable_flags():
    # Feature 0 splits well; feature 1 is constant in gradient (no positive gain);
    # feature 2 has only one bin with rows (no valid split); feature 3's only
    # valid split has gain below min_gain_to_split once that is raised.
    hist, offsets = _hist_from_bins(
        [
            [(-40.0, 64.0), (40.0, 64.0)],
            [(0.0, 64.0), (0.0, 64.0)],
            [(0.0, 128.0), (0.0, 0.0)],
            [(-1.0, 64.0), (1.0, 64.0)],
        ]
    )
    nan_bins = np.full(4, -1, np.int32)
    totals = (0.0, 128.0, 128.0)
    for params, want in (
        (split_params(), [1, 0, 0, 1]),
        (split_params(min_gain=1.0), [1, 0, 0, 0]),
    ):
        flags = np.full(4, 7, np.uint8)
        rec = kernel_best_split(hist, [0, 1, 2, 3], offsets, nan_bins, totals, params, flags=flags)
        assert flags.tolist() == want and rec[common.SPLIT_FEATURE] == 0
        check_against_twin(hist, [0, 1, 2, 3], offsets, nan_bins, totals, params)


@pytest.mark.parametrize(
    "params, why",
    [
        (split_params(min_data=200), "min_data_in_leaf above half the rows"),
        (split_params(min_hess=1e9), "min_sum_hessian_in_leaf above the total"),
        (split_params(min_gain=1e12), "min_gain_to_split too high"),
        (split_params(l1=1e9), "lambda_l1 zeroes every gain"),
    ],
)
def test_no_valid_split(params, why):
    rng = np.random.default_rng(0)
    hist, offsets, nan_bins, totals = random_leaf(rng, [32, 3, 256], {1}, n_rows=300)
    rec = kernel_best_split(hist, [0, 1, 2], offsets, nan_bins, totals, params)
    assert rec[common.SPLIT_FEATURE] == -1, why
    assert rec[common.SPLIT_GAIN] == -np.inf, why
    check_against_twin(hist, [0, 1, 2], offsets, nan_bins, totals, params)


def test_no_split_on_constant_gradients_and_empty_feature_list():
    hist, offsets = _hist_from_bins([[(0.0, 5.0)] * 4])
    nan_bins = np.array([-1], np.int32)
    rec = kernel_best_split(hist, [0], offsets, nan_bins, (0.0, 4.0, 20.0), split_params())
    assert rec[common.SPLIT_FEATURE] == -1 and rec[common.SPLIT_GAIN] == -np.inf
    rec = kernel_best_split(hist, [], offsets, nan_bins, (0.0, 4.0, 20.0), split_params())
    assert rec[common.SPLIT_FEATURE] == -1 and rec[common.SPLIT_GAIN] == -np.inf


@pytest.mark.parametrize("seed", SEEDS)
def test_fix_most_frequent_bins_is_the_leaf_minus_the_other_bins(seed):
    rng = np.random.default_rng(seed)
    layout = [32, 3, 256, 7]
    hist, offsets, nan_bins, totals = random_leaf(rng, layout, {2})
    mfb = random_most_freq_bins(rng, layout)
    fixed = hist.copy()
    features = np.array([0, 1, 3], np.int32)  # feature 2 is left alone
    fix_most_frequent_bins(fixed, features, offsets, mfb, totals[0], totals[1])
    want = hist.copy()
    for f in features:
        m, start = int(mfb[f]), int(offsets[f])
        if m == 0:
            continue
        for col, total in ((0, totals[0]), (1, totals[1])):
            acc = total
            for i in range(int(offsets[f + 1]) - start):
                if i != m:
                    acc -= float(hist[start + i, col])
            want[start + m, col] = acc
    np.testing.assert_array_equal(fixed, want)
    # the true sums only move by rounding
    np.testing.assert_allclose(fixed, hist, rtol=0, atol=1e-9)


def test_quantized_scan_rounds_each_side_once():
    # LightGBM's integer scan: a side's count is round(its integer hessian sum *
    # n / H), the other side n minus that.  Bins of hessian 14, 14, 12 (scale 0.1,
    # n / H = 0.1): the right side {b1, b2} counts round(2.6) = 3, the left 1 row,
    # so min_data_in_leaf=2 rejects the split the float scan (1 + 1 rows) takes.
    g = np.array([-50, 25, 25])
    h = np.array([14, 14, 12])
    words = (g * 2**32 + h).astype(np.int64)
    offsets = np.array([0, 3], np.int64)
    nan_bins = np.array([-1], np.int32)
    mfb = np.array([-1], np.int32)
    totals = (0.0, 40 * 0.1, 4.0)
    out = np.empty(common.SPLIT_RECORD_SIZE)
    flags = np.zeros(1, np.uint8)
    for min_data, want in ((2, -1.0), (1, 0.0)):
        find_best_split(
            words,
            np.array([0], np.int32),
            offsets,
            nan_bins,
            np.full(len(nan_bins), -1, np.int32),
            mfb,
            *totals,
            split_params(min_data=min_data),
            out,
            flags,
            0.1,
            0.1,
        )
        assert out[common.SPLIT_FEATURE] == want
    assert (out[common.SPLIT_LEFT_COUNT], out[common.SPLIT_RIGHT_COUNT]) == (1.0, 3.0)
    floats = np.stack([g * 0.1, h * 0.1], axis=1)
    rec = kernel_best_split(floats, [0], offsets, nan_bins, totals, split_params(min_data=2))
    assert _choice(rec) == (0, 0, 1.0)


@pytest.mark.parametrize(
    "g, h, l1, l2, md",
    [
        (5.0, 2.0, 0.0, 0.0, 0.0),
        (-5.0, 2.0, 1.0, 1.0, 0.0),
        (0.5, 2.0, 1.0, 1.0, 0.0),
        (5.0, 2.0, 0.0, 1.0, 0.5),
        (-50.0, 0.5, 2.0, 0.0, 1.0),
        (1e-3, 1e-3, 0.0, 1e-6, 0.0),
    ],
)
def test_leaf_output_and_gain(g, h, l1, l2, md):
    assert leaf_output(g, h, l1, l2, md) == pytest.approx(twin_output(g, h, l1, l2, md), rel=1e-12)
    assert leaf_gain(g, h, l1, l2, md) == pytest.approx(twin_gain(g, h, l1, l2, md), rel=1e-12)
    # The gain is the loss reduction at the leaf value: -(2 T v + (H + l2) v^2).
    v = twin_output(g, h, l1, l2, md)
    t = t_l1(g, l1)
    assert leaf_gain(g, h, l1, l2, md) == pytest.approx(
        -(2 * t * v + (h + l2) * v * v), rel=1e-9, abs=1e-12
    )


@settings(deadline=None, max_examples=40)
@given(
    seed=st.integers(0, 2**32 - 1),
    n_bins=st.sampled_from([3, 32, 256]),
    with_nan=st.booleans(),
    constant_hessian=st.booleans(),
    l1=st.sampled_from([0.0, 0.5, 5.0]),
    l2=st.sampled_from([0.0, 1.0, 10.0]),
    min_gain=st.sampled_from([0.0, 1.0]),
    min_data=st.sampled_from([1, 10, 50]),
    min_hess=st.sampled_from([0.0, 1e-3, 10.0]),
    max_delta=st.sampled_from([0.0, 0.1, 2.0]),
)
def test_matches_twin_hypothesis(
    seed, n_bins, with_nan, constant_hessian, l1, l2, min_gain, min_data, min_hess, max_delta
):
    rng = np.random.default_rng(seed)
    layout = [n_bins, 4, n_bins]
    hist, offsets, nan_bins, totals = random_leaf(
        rng,
        layout,
        {0, 1} if with_nan else set(),
        n_rows=int(rng.integers(2, 300)),
        constant_hessian=constant_hessian,
    )
    check_against_twin(
        hist,
        [0, 1, 2],
        offsets,
        nan_bins,
        totals,
        split_params(l1, l2, min_gain, min_data, min_hess, max_delta),
        random_most_freq_bins(rng, layout),
    )


def test_best_leaf_breaks_ties_by_split_feature_then_leaf():
    # LightGBM's ArgMax over leaves' SplitInfo: the higher gain, then the lower
    # split feature, then the lower leaf; leaves without a split never.
    inf = np.inf
    for gains, features, want in (
        ([1.0, 3.0, 2.0], [0, 0, 0], 1),
        ([3.0, 3.0, 3.0], [5, 2, 2], 1),
        ([3.0, 3.0], [1, 1], 0),
        ([-inf, 0.5, -inf], [0, 9, 0], 1),
        ([-inf, -inf], [0, 0], -1),
    ):
        assert best_leaf(np.array(gains), np.array(features, np.float64)) == want
