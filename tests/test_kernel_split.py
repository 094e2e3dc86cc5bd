"""native.split.find_best_split against a brute-force numpy twin.

The twin enumerates every (feature, threshold bin, NaN direction) split of a
leaf and scores it with the gain of the module docstring:

    T(G)       = sign(G) max(|G| - lambda_l1, 0)
    output     = clip(-T(G) / (H + lambda_l2), +-max_delta_step)   (no clip when <= 0)
    gain(G, H) = -(2 T(G) output + (H + lambda_l2) output^2)       (= T^2 / (H + l2) unclipped)
    split gain = gain(left) + gain(right) - gain(parent) - min_gain_to_split

Histograms hold (sum_gradients, sum_hessians) per bin, no counts.  A side's
row count is estimated from its hessians as LightGBM does:

    count_per_hessian = count / H_parent   (0 when H_parent <= 0)
    left_count  = floor(H_left * count_per_hessian + 0.5)
    right_count = count - left_count

(exact when every row has the same hessian).  A split is valid when both sides
have estimated count >= min_data_in_leaf and >= min_sum_hessian_in_leaf
hessian, and its gain is > 0.  Ties go to the lower
feature, then the lower bin, then NaN going right (DESIGN.md, distributed rule 2).

For a feature with a NaN bin (its last bin) that has rows (a nonzero gradient
or hessian sum) the thresholds are
* NaN right: bins 0..b left, the other value bins and NaN right, for every
  value bin b, including the last one ("all values left, NaN right", the split
  LightGBM writes with threshold 1e300);
* NaN left: NaN and bins 0..b left, for b below the last value bin.
"""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from dgbdt.native import common
from dgbdt.native.split import find_best_split, leaf_gain, leaf_output

SEEDS = [0, 1, 2, 3]


# -- the twin -------------------------------------------------------------------

def t_l1(g, l1):
    m = abs(g) - l1
    if m <= 0.0:
        return 0.0
    return m if g > 0.0 else -m


def twin_output(g, h, l1, l2, max_delta):
    v = -t_l1(g, l1) / (h + l2)
    if max_delta > 0.0 and abs(v) > max_delta:
        v = math.copysign(max_delta, v)
    return v


def twin_gain(g, h, l1, l2, max_delta):
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


def estimate_left_count(left_h, totals):
    """LightGBM's row-count estimate from hessians (see the module docstring)."""
    count_per_hessian = totals[2] / totals[1] if totals[1] > 0.0 else 0.0
    return float(math.floor(left_h * count_per_hessian + 0.5))


def candidates(hist, features, offsets, nan_bins, totals):
    """Every split as (feature, bin, default_left, left (g, h, c)), in tie-break order.

    c is the estimated left count.
    """
    assert hist.shape[1] == common.HIST_WIDTH == 2
    out = []
    for f in features:
        start, end = int(offsets[f]), int(offsets[f + 1])
        nan_bin = int(nan_bins[f])
        n_value_bins = end - start - (nan_bin >= 0)
        nan = hist[start + nan_bin] if nan_bin >= 0 else np.zeros(2)
        has_nan_rows = nan_bin >= 0 and (nan[0] != 0.0 or nan[1] != 0.0)
        last = n_value_bins if has_nan_rows else n_value_bins - 1
        for b in range(last):
            for default_left in (False, True):
                if default_left and (not has_nan_rows or b == n_value_bins - 1):
                    continue
                # Sum in the kernel's order (bins up, then NaN) so the twin's
                # floats, hence its rounded count estimates, are the kernel's.
                g = h = 0.0
                for k in range(b + 1):
                    g += float(hist[start + k, 0])
                    h += float(hist[start + k, 1])
                if default_left:
                    g += float(nan[0])
                    h += float(nan[1])
                # A feature with a NaN bin but no NaN rows here sends NaN left at
                # prediction (LightGBM's reverse scan keeps that tie).
                recorded = default_left or (nan_bin >= 0 and not has_nan_rows)
                out.append((int(f), b, recorded, (g, h, estimate_left_count(h, totals))))
    return out


def twin_best_split(hist, features, offsets, nan_bins, totals, params):
    l1, l2 = params[common.SP_LAMBDA_L1], params[common.SP_LAMBDA_L2]
    max_delta = params[common.SP_MAX_DELTA_STEP]
    min_data, min_hess = params[common.SP_MIN_DATA_IN_LEAF], params[common.SP_MIN_SUM_HESSIAN]
    shift = twin_gain(totals[0], totals[1], l1, l2, max_delta) + params[common.SP_MIN_GAIN_TO_SPLIT]
    best = None
    scored = []
    for f, b, dl, left in candidates(hist, features, offsets, nan_bins, totals):
        right = (totals[0] - left[0], totals[1] - left[1], totals[2] - left[2])
        if left[2] < min_data or right[2] < min_data or left[1] < min_hess or right[1] < min_hess:
            continue
        gain = twin_gain(left[0], left[1], l1, l2, max_delta) \
            + twin_gain(right[0], right[1], l1, l2, max_delta)
        scored.append((gain, f, b, dl))
        if gain > shift and (best is None or gain > best[0]):
            best = (gain, f, b, dl, left, right)
    return best, shift, scored


def kernel_best_split(hist, features, offsets, nan_bins, totals, params):
    out = np.full(common.SPLIT_RECORD_SIZE, np.nan)
    find_best_split(hist, np.asarray(features, np.int32), offsets, nan_bins,
                    totals[0], totals[1], totals[2], params, out)
    return out


# -- random leaves --------------------------------------------------------------

def random_leaf(rng, n_bins, nan_features, n_rows=400, constant_hessian=False, signal=None,
                return_counts=False):
    """A histogram built from random rows; returns hist, offsets, nan_bins, totals
    (and the true per-bin row counts with ``return_counts``)."""
    n_bins = np.asarray(n_bins, np.int64)
    offsets = np.concatenate([[0], np.cumsum(n_bins)]).astype(np.int64)
    nan_bins = np.array([nb - 1 if f in nan_features else -1 for f, nb in enumerate(n_bins)],
                        np.int32)
    bins = np.stack([rng.integers(0, nb, n_rows) for nb in n_bins])
    g = rng.normal(size=n_rows).astype(common.GRAD_DTYPE)
    if signal is not None:
        f, b = signal
        g += np.where(bins[f] <= b, -2.0, 2.0).astype(common.GRAD_DTYPE)
    h = (np.ones(n_rows) if constant_hessian else rng.uniform(0.1, 1.5, n_rows)).astype(
        common.GRAD_DTYPE)
    hist = np.zeros((offsets[-1], common.HIST_WIDTH), common.HIST_DTYPE)
    counts = np.zeros(offsets[-1], np.int64)      # true counts, which the kernel never sees
    for f in range(len(n_bins)):
        idx = offsets[f] + bins[f]
        np.add.at(hist[:, common.HIST_GRAD], idx, g.astype(np.float64))
        np.add.at(hist[:, common.HIST_HESS], idx, h.astype(np.float64))
        np.add.at(counts, idx, 1)
    totals = (float(np.sum(g, dtype=np.float64)), float(np.sum(h, dtype=np.float64)),
              float(n_rows))
    if return_counts:
        return hist, offsets, nan_bins, totals, counts
    return hist, offsets, nan_bins, totals


def check_against_twin(hist, features, offsets, nan_bins, totals, params):
    rec = kernel_best_split(hist, features, offsets, nan_bins, totals, params)
    best, shift, scored = twin_best_split(hist, features, offsets, nan_bins, totals, params)
    if best is None:
        assert rec[common.SPLIT_FEATURE] == -1, f"kernel found {rec}, twin found no valid split"
        assert rec[common.SPLIT_GAIN] == -np.inf
        return rec, None
    gain, f, b, dl, left, right = best
    assert rec[common.SPLIT_FEATURE] >= 0, f"kernel found no split; twin found {best[:4]}"
    got = (int(rec[common.SPLIT_FEATURE]), int(rec[common.SPLIT_BIN]),
           bool(rec[common.SPLIT_DEFAULT_LEFT]))
    if got != (f, b, dl):
        # Accept a different choice only for a true float near-tie.
        got_gain = [s[0] for s in scored if (s[1], s[2], s[3]) == got]
        assert got_gain and math.isclose(got_gain[0], gain, rel_tol=1e-12), \
            f"kernel chose {got}, twin chose {(f, b, dl)} with gain {gain - shift}"
        return rec, best
    l1, l2 = params[common.SP_LAMBDA_L1], params[common.SP_LAMBDA_L2]
    md = params[common.SP_MAX_DELTA_STEP]
    np.testing.assert_allclose(rec[common.SPLIT_GAIN], gain - shift, rtol=1e-9, atol=1e-9)
    # Estimated counts: whole numbers that add up to the leaf's count.
    assert rec[common.SPLIT_LEFT_COUNT] == math.floor(rec[common.SPLIT_LEFT_COUNT])
    assert rec[common.SPLIT_LEFT_COUNT] + rec[common.SPLIT_RIGHT_COUNT] == totals[2]
    np.testing.assert_allclose(
        rec[[common.SPLIT_LEFT_GRAD, common.SPLIT_LEFT_HESS, common.SPLIT_LEFT_COUNT]], left,
        rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(
        rec[[common.SPLIT_RIGHT_GRAD, common.SPLIT_RIGHT_HESS, common.SPLIT_RIGHT_COUNT]], right,
        rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(rec[common.SPLIT_LEFT_VALUE], twin_output(*left[:2], l1, l2, md),
                               rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(rec[common.SPLIT_RIGHT_VALUE], twin_output(*right[:2], l1, l2, md),
                               rtol=1e-9, atol=1e-12)
    assert rec[common.SPLIT_GAIN] > 0
    return rec, best


# -- tests ----------------------------------------------------------------------

PARAM_SETS = [
    dict(),
    dict(l2=1.0, min_data=20),
    dict(l1=3.0, l2=0.5, min_hess=5.0),
    dict(l2=1.0, max_delta=0.05),
    dict(l1=1.0, l2=2.0, min_gain=5.0, min_data=5, min_hess=1.0, max_delta=0.3),
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
    hist, offsets, nan_bins, totals = random_leaf(rng, layout, nan_features,
                                                  constant_hessian=constant_hessian)
    check_against_twin(hist, np.arange(len(layout)), offsets, nan_bins, totals,
                       split_params(**PARAM_SETS[pi]))


@pytest.mark.parametrize("seed", SEEDS)
def test_feature_subset(seed):
    rng = np.random.default_rng(seed)
    layout = [32, 3, 256, 7, 32]
    hist, offsets, nan_bins, totals = random_leaf(rng, layout, {2, 4}, signal=(1, 0))
    features = [0, 2, 4]                      # the planted feature 1 is not a candidate
    rec, _ = check_against_twin(hist, features, offsets, nan_bins, totals, split_params(l2=1.0))
    assert rec[common.SPLIT_FEATURE] in features


@pytest.mark.parametrize("n_bins", [3, 32, 256])
@pytest.mark.parametrize("seed", SEEDS)
def test_planted_split_is_found(n_bins, seed):
    rng = np.random.default_rng(seed)
    layout = [n_bins, 7, n_bins, n_bins]
    f = int(rng.integers(0, 4))
    b = int(rng.integers(0, layout[f] - 1))
    if f == 2:                                     # a NaN feature: keep b a value bin
        b = min(b, layout[f] - 3)
    hist, offsets, nan_bins, totals = random_leaf(rng, layout, {2}, n_rows=3000, signal=(f, b))
    rec, best = check_against_twin(hist, np.arange(4), offsets, nan_bins, totals,
                                   split_params(l2=1.0, min_data=1))
    assert (int(rec[common.SPLIT_FEATURE]), int(rec[common.SPLIT_BIN])) == (f, b)
    if f == 2:
        # The NaN rows carry the right side's signal: they go right.
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


def test_ties_go_to_the_lower_feature_then_lower_bin():
    # Features 0 and 1 are identical; within each, bins 0 and 2 give the same
    # gain (mirror images: left sum -4 vs right sum -4).
    feature = [(-4.0, 1.0), (4.0, 1.0), (4.0, 1.0), (-4.0, 1.0)]
    hist, offsets = _hist_from_bins([feature, feature])
    nan_bins = np.array([-1, -1], np.int32)
    totals = (0.0, 4.0, 4.0)
    rec = kernel_best_split(hist, [0, 1], offsets, nan_bins, totals, split_params())
    assert (rec[common.SPLIT_FEATURE], rec[common.SPLIT_BIN]) == (0, 0)
    rec = kernel_best_split(hist, [1], offsets, nan_bins, totals, split_params())
    assert (rec[common.SPLIT_FEATURE], rec[common.SPLIT_BIN]) == (1, 0)
    check_against_twin(hist, [0, 1], offsets, nan_bins, totals, split_params())


def test_nan_direction_tie_goes_right():
    # The NaN bin has rows (hessian 1) but zero gradient, and the value bins
    # are mirror images: at bin 0 NaN-left ({b0, NaN} | {b1}) and NaN-right
    # ({b0} | {b1, NaN}) give exactly equal gains; NaN-right must win.
    feature = [(-3.0, 1.0), (3.0, 1.0), (0.0, 1.0)]
    hist, offsets = _hist_from_bins([feature])
    nan_bins = np.array([2], np.int32)
    totals = (0.0, 3.0, 3.0)
    best, shift, scored = twin_best_split(hist, [0], offsets, nan_bins, totals, split_params())
    gains = {s[1:]: s[0] for s in scored}
    assert gains[(0, 0, False)] == gains[(0, 0, True)] == best[0]
    rec = kernel_best_split(hist, [0], offsets, nan_bins, totals, split_params())
    assert _choice(rec) == (0, 0, 0.0)
    check_against_twin(hist, [0], offsets, nan_bins, totals, split_params())


def test_tie_across_nan_directions_goes_to_the_lower_bin():
    # One row = one unit of hessian.  The NaN bin has the same (g, h) as bin 1,
    # so NaN-left at bin 0 ({NaN, b0} | {b1, b2}) and NaN-right at bin 1
    # ({b0, b1} | {b2, NaN}) have equal sums, hence exactly equal gains.
    # min_data_in_leaf=3 rules out every other candidate.  DESIGN.md rule 2
    # (and this module's docstring): the lower bin first, so (bin 0, NaN left) wins.
    feature = [(-3.0, 2.0), (2.0, 1.0), (2.0, 2.0), (2.0, 1.0)]
    hist, offsets = _hist_from_bins([feature])
    nan_bins = np.array([3], np.int32)
    totals = (3.0, 6.0, 6.0)
    params = split_params(min_data=3)
    best, shift, scored = twin_best_split(hist, [0], offsets, nan_bins, totals, params)
    assert sorted(s[1:] for s in scored) == [(0, 0, True), (0, 1, False)]
    assert scored[0][0] == scored[1][0]
    assert best[1:4] == (0, 0, True)
    rec = kernel_best_split(hist, [0], offsets, nan_bins, totals, params)
    got = _choice(rec)
    assert got == (0, 0, 1.0), f"tie-break order is not (feature, bin, NaN-right): got {got}"


def test_split_of_nan_against_all_values_is_found():
    # Only missingness carries signal: the best split sends every value bin
    # left and NaN right (LightGBM: threshold 1e300, default_left=False).
    feature = [(-1.0, 1.0), (1.0, 1.0), (-1.0, 1.0), (20.0, 1.0)]
    hist, offsets = _hist_from_bins([feature])
    nan_bins = np.array([3], np.int32)
    totals = (19.0, 4.0, 40.0)
    best, shift, _ = twin_best_split(hist, [0], offsets, nan_bins, totals, split_params())
    assert best[1:4] == (0, 2, False)
    rec = kernel_best_split(hist, [0], offsets, nan_bins, totals, split_params())
    got = _choice(rec)
    assert got == (0, 2, 0.0), f"NaN-vs-values split not found: got {got}"
    np.testing.assert_allclose(rec[common.SPLIT_GAIN], best[0] - shift)
    assert (rec[common.SPLIT_LEFT_COUNT], rec[common.SPLIT_RIGHT_COUNT]) == (30.0, 10.0)


def test_nan_bin_with_gradient_but_no_hessian_has_rows():
    # The NaN bin "has rows" when its gradient OR hessian sum is nonzero.
    # Here only its gradient is: sending NaN left at bin 0 ({b0, NaN} | {b1})
    # is the best split (gain 64/2 + 16/2 vs 16/2 for NaN right, l2=1).
    feature = [(-4.0, 1.0), (4.0, 1.0), (-4.0, 0.0)]
    hist, offsets = _hist_from_bins([feature])
    nan_bins = np.array([2], np.int32)
    totals = (-4.0, 2.0, 3.0)
    params = split_params(l2=1.0)
    best, shift, _ = twin_best_split(hist, [0], offsets, nan_bins, totals, params)
    assert best[1:4] == (0, 0, True)
    rec = kernel_best_split(hist, [0], offsets, nan_bins, totals, params)
    assert _choice(rec) == (0, 0, 1.0), f"NaN bin with zero hessian was ignored: {_choice(rec)}"
    check_against_twin(hist, [0], offsets, nan_bins, totals, params)


def test_empty_nan_bin_adds_no_candidates():
    # A NaN bin with zero gradient and hessian has no rows: no NaN-left
    # candidates and no "all values left" split, whatever it would score; NaN
    # at prediction goes left (LightGBM's reverse scan keeps that tie).
    feature = [(-3.0, 1.0), (3.0, 1.0), (0.0, 0.0)]
    hist, offsets = _hist_from_bins([feature])
    nan_bins = np.array([2], np.int32)
    totals = (0.0, 2.0, 2.0)
    _, _, scored = twin_best_split(hist, [0], offsets, nan_bins, totals, split_params())
    assert [s[1:] for s in scored] == [(0, 0, True)]
    rec = kernel_best_split(hist, [0], offsets, nan_bins, totals, split_params())
    assert _choice(rec) == (0, 0, 1.0)
    check_against_twin(hist, [0], offsets, nan_bins, totals, split_params())


def test_counts_are_estimated_from_hessians():
    # True counts: 2 | 2 rows, but the left side has 3/4 of the hessian, so
    # its estimated count is floor(3 * 4/4 + 0.5) = 3 and the right's 1:
    # min_data_in_leaf=2 rejects the split although each side has 2 rows.
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
    assert _choice(rec) == (0, 0, 0.0)
    assert (rec[common.SPLIT_LEFT_COUNT], rec[common.SPLIT_RIGHT_COUNT]) == (2.0, 2.0)
    for min_data in (1, 2, 3):
        check_against_twin(hist, [0], offsets, nan_bins, totals, split_params(min_data=min_data))


def test_count_estimate_rounds_half_up():
    # 5 rows, hessian 2: count_per_hessian = 2.5, left estimate
    # floor(1 * 2.5 + 0.5) = 3 (round half up, not half to even), right 5 - 3.
    hist, offsets = _hist_from_bins([[(-5.0, 1.0), (5.0, 1.0)]])
    nan_bins = np.array([-1], np.int32)
    totals = (0.0, 2.0, 5.0)
    rec = kernel_best_split(hist, [0], offsets, nan_bins, totals, split_params())
    assert (rec[common.SPLIT_LEFT_COUNT], rec[common.SPLIT_RIGHT_COUNT]) == (3.0, 2.0)
    assert kernel_best_split(hist, [0], offsets, nan_bins, totals,
                             split_params(min_data=3))[common.SPLIT_FEATURE] == -1
    check_against_twin(hist, [0], offsets, nan_bins, totals, split_params())


def test_zero_hessian_leaf_estimates_zero_left_rows():
    # sum_hessians = 0: count_per_hessian is 0, every left estimate is 0 and
    # the right side gets all rows (l2 keeps the gains finite).
    hist, offsets = _hist_from_bins([[(-3.0, 0.0), (3.0, 0.0)]])
    nan_bins = np.array([-1], np.int32)
    totals = (0.0, 0.0, 10.0)
    rec = kernel_best_split(hist, [0], offsets, nan_bins, totals, split_params(l2=1.0, min_data=0))
    assert _choice(rec) == (0, 0, 0.0)
    assert (rec[common.SPLIT_LEFT_COUNT], rec[common.SPLIT_RIGHT_COUNT]) == (0.0, 10.0)
    rec = kernel_best_split(hist, [0], offsets, nan_bins, totals, split_params(l2=1.0, min_data=1))
    assert rec[common.SPLIT_FEATURE] == -1
    for min_data in (0, 1):
        check_against_twin(hist, [0], offsets, nan_bins, totals,
                           split_params(l2=1.0, min_data=min_data))


@pytest.mark.parametrize("with_nan", [False, True])
@pytest.mark.parametrize("seed", SEEDS)
def test_estimated_counts_are_exact_with_constant_hessians(with_nan, seed):
    # Every row with the same hessian: the estimate is the true row count.
    rng = np.random.default_rng(seed)
    layout = [32, 5, 256]
    hist, offsets, nan_bins, totals, counts = random_leaf(
        rng, layout, {0, 2} if with_nan else set(), n_rows=1000, constant_hessian=True,
        return_counts=True)
    rec, best = check_against_twin(hist, [0, 1, 2], offsets, nan_bins, totals,
                                   split_params(l2=1.0, min_data=20))
    assert best is not None
    f, b, dl = int(rec[common.SPLIT_FEATURE]), int(rec[common.SPLIT_BIN]), \
        bool(rec[common.SPLIT_DEFAULT_LEFT])
    start = int(offsets[f])
    true_left = int(counts[start:start + b + 1].sum())
    if dl:
        true_left += int(counts[start + nan_bins[f]])
    assert rec[common.SPLIT_LEFT_COUNT] == true_left
    assert rec[common.SPLIT_RIGHT_COUNT] == 1000 - true_left


@pytest.mark.parametrize("params, why", [
    (split_params(min_data=200), "min_data_in_leaf above half the rows"),
    (split_params(min_hess=1e9), "min_sum_hessian_in_leaf above the total"),
    (split_params(min_gain=1e12), "min_gain_to_split too high"),
    (split_params(l1=1e9), "lambda_l1 zeroes every gain"),
])
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


@pytest.mark.parametrize("g, h, l1, l2, md", [
    (5.0, 2.0, 0.0, 0.0, 0.0), (-5.0, 2.0, 1.0, 1.0, 0.0), (0.5, 2.0, 1.0, 1.0, 0.0),
    (5.0, 2.0, 0.0, 1.0, 0.5), (-50.0, 0.5, 2.0, 0.0, 1.0), (1e-3, 1e-3, 0.0, 1e-6, 0.0),
])
def test_leaf_output_and_gain(g, h, l1, l2, md):
    assert leaf_output(g, h, l1, l2, md) == pytest.approx(twin_output(g, h, l1, l2, md), rel=1e-12)
    assert leaf_gain(g, h, l1, l2, md) == pytest.approx(twin_gain(g, h, l1, l2, md), rel=1e-12)
    # The gain is the loss reduction at the leaf value: -(2 T v + (H + l2) v^2).
    v = twin_output(g, h, l1, l2, md)
    t = t_l1(g, l1)
    assert leaf_gain(g, h, l1, l2, md) == pytest.approx(-(2 * t * v + (h + l2) * v * v),
                                                        rel=1e-9, abs=1e-12)


@settings(deadline=None, max_examples=40)
@given(seed=st.integers(0, 2**32 - 1),
       n_bins=st.sampled_from([3, 32, 256]),
       with_nan=st.booleans(),
       constant_hessian=st.booleans(),
       l1=st.sampled_from([0.0, 0.5, 5.0]),
       l2=st.sampled_from([0.0, 1.0, 10.0]),
       min_gain=st.sampled_from([0.0, 1.0]),
       min_data=st.sampled_from([1, 10, 50]),
       min_hess=st.sampled_from([0.0, 1e-3, 10.0]),
       max_delta=st.sampled_from([0.0, 0.1, 2.0]))
def test_matches_twin_hypothesis(seed, n_bins, with_nan, constant_hessian, l1, l2, min_gain,
                                 min_data, min_hess, max_delta):
    rng = np.random.default_rng(seed)
    layout = [n_bins, 4, n_bins]
    hist, offsets, nan_bins, totals = random_leaf(
        rng, layout, {0, 1} if with_nan else set(), n_rows=int(rng.integers(2, 300)),
        constant_hessian=constant_hessian)
    check_against_twin(hist, [0, 1, 2], offsets, nan_bins, totals,
                       split_params(l1, l2, min_gain, min_data, min_hess, max_delta))
