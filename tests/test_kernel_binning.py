"""native.binning against numpy twins, and dgbdt.data.binning dense vs sparse."""

import numpy as np
import pytest
import scipy.sparse as sp
from dgbdt.native import common
from dgbdt.native.binning import (
    K_ZERO_THRESHOLD,
    distinct_counts,
    find_bin_upper_bounds,
    map_sparse_to_bins,
    map_to_bins,
    value_to_bin,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from dgbdt.data.binning import find_bin_mapper

SEEDS = [0, 1, 2]


def upper_bounds_of(distinct, counts, max_bin, min_data_in_bin):
    out = np.full(max(max_bin, 1) + 1, np.nan)
    n = find_bin_upper_bounds(
        np.asarray(distinct, np.float64),
        np.asarray(counts, np.int64),
        max_bin,
        min_data_in_bin,
        out,
    )
    return out[:n].copy()


def bin_counts(distinct, counts, bounds):
    """Rows per bin when every distinct value goes to searchsorted(bounds, v, 'left')."""
    bins = np.searchsorted(bounds, distinct, side="left")
    return np.bincount(bins, weights=counts, minlength=len(bounds))


def random_bounds(rng, n_value_bins):
    ub = np.sort(rng.choice(np.linspace(-3, 3, 601), n_value_bins - 1, replace=False))
    return np.append(ub, np.inf)


# -- find_bin_upper_bounds ------------------------------------------------------
#
# The bounds follow LightGBM 4.x exactly (tests/test_binning_lightgbm.py checks
# them bound for bound).  These tests check properties of that algorithm that
# need no LightGBM: see find_bin_upper_bounds / greedy_find_bin docstrings.

K = 1.0000000180025095e-35  # LightGBM's kZeroThreshold, float32(1e-35)


def nonzero_sides(distinct, counts):
    """(values, counts) below -K and above +K."""
    distinct = np.asarray(distinct, np.float64)
    counts = np.asarray(counts, np.int64)
    neg, pos = distinct < -K, distinct > K
    return (distinct[neg], counts[neg]), (distinct[pos], counts[pos])


def side_bins(distinct, counts, ub):
    """Rows per bin of the negative side, of the positive side, and the zero bin's index."""
    per_bin = bin_counts(distinct, counts, ub)
    zero_bin = int(np.searchsorted(ub, 0.0, side="left"))
    return per_bin[:zero_bin], per_bin[zero_bin + 1 :], zero_bin


def midpoint_bounds(values):
    values = np.asarray(values, np.float64)
    return np.nextafter((values[:-1] + values[1:]) / 2.0, np.inf)


def assert_bound_properties(distinct, counts, ub, max_bin, well_spaced=True):
    """Properties every result has; ``well_spaced``: no two distinct values of
    one sign closer than a few ulps (then cuts fall strictly between values)."""
    distinct = np.asarray(distinct, np.float64)
    counts = np.asarray(counts, np.int64)
    (neg, neg_c), (pos, pos_c) = nonzero_sides(distinct, counts)
    assert 1 <= len(ub) <= max(max_bin, 1)
    assert ub[-1] == np.inf
    assert np.all(np.diff(ub) > 0), "upper bounds must be strictly increasing"
    assert not np.any(np.isnan(ub))

    # Zero keeps its own bin (-K, K]: -K ends the negatives, +K starts the positives.
    assert (-K in ub) == (len(neg) > 0 and max_bin > 1)
    n_neg_bins = int(np.sum(ub <= -K))
    if len(pos) and (max_bin >= 3 or (max_bin == 2 and not len(neg))):
        assert K in ub
    if len(neg) == 0 and len(pos) == 0:
        assert list(ub) == [np.inf]

    # Values in (-K, K] share the bin of 0.0; negatives lie below it, positives above.
    # (-K itself counts as zero while bounds are found but is binned with the negatives.)
    bins = np.searchsorted(ub, distinct, side="left")
    zero_bin = int(np.searchsorted(ub, 0.0, side="left"))
    assert np.all(bins[(distinct > -K) & (distinct <= K)] == zero_bin)
    if max_bin > 1:
        assert np.all(bins[distinct < -K] < zero_bin)
        if K in ub:
            assert np.all(bins[distinct > K] > zero_bin)

    # Bins are shared in proportion to the rows of each side.
    if len(neg) and max_bin > 1:
        share = max(1, int(neg_c.sum() / (neg_c.sum() + pos_c.sum()) * (max_bin - 1)))
        assert 1 <= n_neg_bins <= share
    n_pos_bins = int(np.sum(ub > K))
    if K in ub:
        assert 1 <= n_pos_bins <= max_bin - 1 - n_neg_bins

    # Every other finite bound is a cut between two neighbouring values of one sign.
    for u in ub[:-1]:
        if u in (-K, K):
            continue
        side = neg if u < 0 else pos
        assert len(side) >= 2 and side[0] < u <= side[-1], u
        j = int(np.searchsorted(side, u, side="left"))
        lo, hi = side[j - 1], side[j]
        assert lo < u <= hi
        if well_spaced:
            assert u < hi, f"cut {u!r} is not strictly between {lo!r} and {hi!r}"
            assert u == np.nextafter((lo + hi) / 2.0, np.inf)

    if well_spaced:
        # Every bin but the zero bin holds some value.
        per_bin = bin_counts(distinct, counts, ub)
        assert np.all(np.delete(per_bin, zero_bin) > 0)
        assert per_bin.sum() == counts.sum()


def test_zero_threshold_is_lightgbms_float32_constant():
    assert K_ZERO_THRESHOLD == K == float(np.float32(1e-35))


def test_empty_zero_and_single_value():
    assert list(upper_bounds_of([], [], 8, 3)) == [np.inf]
    assert list(upper_bounds_of([0.0], [10], 8, 3)) == [np.inf]
    assert list(upper_bounds_of([2.5], [10], 8, 3)) == [K, np.inf]
    assert list(upper_bounds_of([-2.5], [10], 8, 3)) == [-K, np.inf]
    assert list(upper_bounds_of([-2.5, 0.0, 2.5], [10, 10, 10], 8, 3)) == [-K, K, np.inf]
    assert list(upper_bounds_of([0.0, 2.5], [10, 10], 8, 3)) == [K, np.inf]


def test_max_bin_one_and_two():
    values, counts = [-3.0, -1.0, 0.0, 1.0, 3.0], [5, 5, 5, 5, 5]
    assert list(upper_bounds_of(values, counts, 1, 1)) == [np.inf]
    # Two bins: the negatives, then zero; the positives have no bin left.
    assert list(upper_bounds_of(values, counts, 2, 1)) == [-K, np.inf]
    assert list(upper_bounds_of([1.0, 3.0], [5, 5], 2, 1)) == [K, np.inf]
    assert list(upper_bounds_of(values, counts, 3, 1)) == [-K, K, np.inf]
    assert list(upper_bounds_of(values, counts, 4, 1)) == [-K, K, np.nextafter(2.0, np.inf), np.inf]


def test_values_within_zero_threshold_count_as_zero():
    tiny = [-K, -1e-36, -5e-324, 0.0, 5e-324, 1e-36, K]
    ub = upper_bounds_of(tiny + [1.0, 2.0], [3] * 9, 16, 1)
    # No value is negative: no -K bound; all the tiny ones share the zero bin.
    assert list(ub) == [K, np.nextafter(1.5, np.inf), np.inf]
    just_below = np.nextafter(-K, -1.0)
    just_above = np.nextafter(K, 1.0)
    ub = upper_bounds_of([just_below] + tiny + [just_above], [3] * 9, 16, 1)
    assert list(ub) == [-K, K, np.inf]
    # The zero bin is (-K, K]: -K itself is binned with the negatives.
    assert list(np.searchsorted(ub, [just_below] + tiny + [just_above], side="left")) == [0, 0] + [
        1
    ] * 6 + [2]


@pytest.mark.parametrize("max_bin", [3, 32, 255])
@pytest.mark.parametrize("sign", [1.0, -1.0])
@pytest.mark.parametrize("seed", SEEDS)
def test_few_distinct_same_sign_values_get_one_bin_each(max_bin, sign, seed):
    """Fewer distinct values than non-zero bins, min_data_in_bin=1: a cut
    one ulp above the midpoint between every two neighbours."""
    rng = np.random.default_rng(seed)
    n_distinct = int(rng.integers(1, max_bin))  # <= max_bin - 1 (one bin is zero's)
    distinct = np.sort(sign * rng.choice(np.arange(1, 1000) * 0.37, n_distinct, replace=False))
    counts = rng.integers(1, 50, n_distinct)
    ub = upper_bounds_of(distinct, counts, max_bin, 1)
    mids = list(midpoint_bounds(distinct))
    expected = [K] + mids + [np.inf] if sign > 0 else mids + [-K, np.inf]
    np.testing.assert_array_equal(ub, expected)
    first = 1 if sign > 0 else 0
    np.testing.assert_array_equal(
        np.searchsorted(ub, distinct, side="left"), first + np.arange(n_distinct)
    )
    assert_bound_properties(distinct, counts, ub, max_bin)


@pytest.mark.parametrize(
    "n_neg, n_pos, with_zero", [(1, 1, False), (5, 7, True), (12, 3, False), (9, 9, True)]
)
def test_few_distinct_values_both_signs(n_neg, n_pos, with_zero):
    max_bin = 32
    neg = -np.arange(n_neg, 0, -1) * 1.25
    pos = np.arange(1, n_pos + 1) * 0.75
    distinct = np.concatenate([neg, [0.0] if with_zero else [], pos])
    counts = np.full(len(distinct), 4)
    ub = upper_bounds_of(distinct, counts, max_bin, 1)
    expected = list(midpoint_bounds(neg)) + [-K, K] + list(midpoint_bounds(pos)) + [np.inf]
    np.testing.assert_array_equal(ub, expected)
    assert_bound_properties(distinct, counts, ub, max_bin)


@pytest.mark.parametrize("sign", [1.0, -1.0])
@pytest.mark.parametrize("ulps", [1, 2, 3, 4, 5, 6])
def test_neighbours_a_few_ulps_apart(ulps, sign):
    """Two values ``ulps`` doubles apart, away from zero from 1.0 or -1.0."""
    a = b = sign
    for _ in range(ulps):
        b = np.nextafter(b, 2.0 * sign)
    lo, hi = min(a, b), max(a, b)
    ub = upper_bounds_of([lo, hi], [5, 5], 8, 1)
    zero = [K] if sign > 0 else [-K]
    if ulps == 1:
        # One ulp apart: one value (as in LightGBM).
        assert list(ub) == zero + [np.inf]
        return
    cut = ub[1] if sign > 0 else ub[0]
    assert len(ub) == 3 and (ub[0] == K if sign > 0 else ub[1] == -K)
    assert cut == np.nextafter((lo + hi) / 2.0, np.inf)
    assert lo < cut <= hi
    # The midpoint moved up one ulp can reach hi (2 ulps apart; 3 above 1.0,
    # where the sum rounds up): both values then share a bin, as in LightGBM.
    shared = ulps == 2 or (ulps == 3 and sign > 0)
    assert (cut == hi) == shared
    bins = np.searchsorted(ub, [lo, hi], side="left")
    assert (bins[0] == bins[1]) == shared


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_ulp_runs_merge_into_one_value(sign):
    run = [sign]
    for _ in range(3):
        run.append(np.nextafter(run[-1], 2.0 * sign))  # a chain of 1-ulp steps
    values = np.sort(run + [2.0 * sign])
    ub = upper_bounds_of(values, [5] * 5, 8, 1)
    # The run counts as its largest value: one cut, between it and +-2.0.
    if sign > 0:
        assert list(ub) == [K, np.nextafter((run[-1] + 2.0) / 2.0, np.inf), np.inf]
    else:
        assert list(ub) == [np.nextafter((-2.0 + -1.0) / 2.0, np.inf), -K, np.inf]


@pytest.mark.parametrize("max_bin", [3, 32, 255])
@pytest.mark.parametrize("min_data_in_bin", [1, 3, 20])
@pytest.mark.parametrize("seed", SEEDS)
def test_many_distinct_values(max_bin, min_data_in_bin, seed):
    rng = np.random.default_rng(seed)
    n_distinct = int(rng.integers(max_bin + 1, 4 * max_bin + 50))
    distinct = np.sort(rng.choice(np.arange(-5000, 5000) * 0.01, n_distinct, replace=False))
    counts = rng.integers(1, 30, n_distinct)
    ub = upper_bounds_of(distinct, counts, max_bin, min_data_in_bin)
    assert_bound_properties(distinct, counts, ub, max_bin)
    assert -K in ub and K in ub
    # A side has more values than bins here: its bin count is capped at
    # rows // min_data_in_bin.
    (_, neg_c), (_, pos_c) = nonzero_sides(distinct, counts)
    for side_c, n_side_bins in [(neg_c, np.sum(ub <= -K)), (pos_c, np.sum(ub > K))]:
        assert n_side_bins <= max(side_c.sum() // min_data_in_bin, 1)


@pytest.mark.parametrize("max_bin", [8, 32, 255])
@pytest.mark.parametrize("min_data_in_bin", [1, 3, 20])
@pytest.mark.parametrize("sign", [1.0, -1.0])
@pytest.mark.parametrize("seed", SEEDS)
def test_min_data_in_bin_with_few_distinct_values(max_bin, min_data_in_bin, sign, seed):
    """At most max_bin - 1 values of one sign: each bin but the side's last
    (the one next to zero for negatives, the one up to +inf for positives)
    is closed as soon as it holds min_data_in_bin rows."""
    rng = np.random.default_rng(seed)
    n_distinct = int(rng.integers(2, max_bin))
    distinct = np.sort(sign * rng.choice(np.arange(1, 5000) * 0.01, n_distinct, replace=False))
    counts = rng.integers(1, 30, n_distinct)
    ub = upper_bounds_of(distinct, counts, max_bin, min_data_in_bin)
    assert_bound_properties(distinct, counts, ub, max_bin)
    bins = np.searchsorted(ub, distinct, side="left")
    per_bin = bin_counts(distinct, counts, ub)
    side = np.unique(bins)  # greedy runs from the smallest value up
    for b in side[:-1]:
        assert per_bin[b] >= min_data_in_bin
        largest = np.max(np.nonzero(bins == b)[0])
        assert per_bin[b] - counts[largest] < min_data_in_bin, "closed too late"
    if min_data_in_bin == 1:
        assert len(side) == n_distinct


@pytest.mark.parametrize("max_bin", [3, 32, 255])
@pytest.mark.parametrize("min_data_in_bin", [1, 3, 20])
@pytest.mark.parametrize("seed", SEEDS)
def test_min_data_in_bin_with_one_row_per_value(max_bin, min_data_in_bin, seed):
    """One row per value (no big values): every bin of a side but its last
    holds at least min_data_in_bin rows.  (With uneven counts LightGBM's bins
    can fall short of it; only its bin count is capped then.)"""
    rng = np.random.default_rng(seed)
    n_distinct = int(rng.integers(1, 30 * max_bin))
    distinct = np.sort(rng.choice(np.arange(-50_000, 50_000) * 0.01, n_distinct, replace=False))
    counts = np.ones(n_distinct, np.int64)
    ub = upper_bounds_of(distinct, counts, max_bin, min_data_in_bin)
    assert_bound_properties(distinct, counts, ub, max_bin)
    neg_bins, pos_bins, _ = side_bins(distinct, counts, ub)
    for per_side in (neg_bins, pos_bins):
        assert np.all(per_side[:-1] >= min_data_in_bin)


@pytest.mark.parametrize("max_bin", [3, 8, 32, 255])
@pytest.mark.parametrize("lo, hi", [(0, 10_000), (-5000, 5000), (-2000, 8000)])
def test_equal_counts_for_uniform_values(max_bin, lo, hi):
    distinct = np.arange(lo, hi, dtype=np.float64)
    counts = np.ones(len(distinct), np.int64)
    ub = upper_bounds_of(distinct, counts, max_bin, 1)
    assert_bound_properties(distinct, counts, ub, max_bin)
    assert len(ub) == max_bin
    n_neg, n_pos = -lo, hi - 1
    neg_bins, pos_bins, zero_bin = side_bins(distinct, counts, ub)
    assert bin_counts(distinct, counts, ub)[zero_bin] == 1  # the value 0.0
    expected_neg = max(1, int(n_neg / (n_neg + n_pos) * (max_bin - 1))) if n_neg else 0
    assert len(neg_bins) == expected_neg
    assert len(pos_bins) == max_bin - 1 - expected_neg
    for per_side, n in [(neg_bins, n_neg), (pos_bins, n_pos)]:
        if len(per_side):
            assert per_side.max() - per_side.min() <= 1, per_side
            assert per_side.min() == n // len(per_side)


@pytest.mark.parametrize("seed", range(8))
def test_big_value_ends_its_bin(seed):
    """A value holding more than a mean bin's rows ends its bin, and the bin
    before it is closed early, so it shares its bin with under half a bin."""
    rng = np.random.default_rng(seed)
    max_bin = int(rng.choice([8, 32, 255]))
    n = int(rng.integers(2 * max_bin, 20 * max_bin))
    distinct = np.arange(1, n + 1) * 0.5
    counts = np.ones(n, np.int64)
    j = int(rng.integers(0, n // 2))
    heavy = int(rng.integers(n // (max_bin - 1) + 1, 3 * n))
    counts[j] = heavy
    ub = upper_bounds_of(distinct, counts, max_bin, 1)
    assert_bound_properties(distinct, counts, ub, max_bin)
    bins = np.searchsorted(ub, distinct, side="left")
    assert bins[j + 1] == bins[j] + 1, "a cut right after the big value"
    mean_other = (counts.sum() - heavy) / (max_bin - 2)
    others = bin_counts(distinct, counts, ub)[bins[j]] - heavy
    assert others < 0.5 * mean_other + 1


# -- map_to_bins / value_to_bin ---------------------------------------------------


def _values(rng, n, ub, with_nan):
    v = rng.normal(scale=2.0, size=n)
    finite = ub[:-1]
    if len(finite):
        k = rng.integers(0, n, size=n // 10)
        v[k] = rng.choice(finite, size=len(k))  # exactly on a bound
    v[:3] = [0.0, -np.inf, np.inf]
    if with_nan:
        v[rng.random(n) < 0.2] = np.nan
    return v


@pytest.mark.parametrize("n_value_bins", [1, 3, 32, 255, 300])
@pytest.mark.parametrize("with_nan", [False, True])
@pytest.mark.parametrize("seed", SEEDS)
def test_map_to_bins_matches_searchsorted(n_value_bins, with_nan, seed):
    rng = np.random.default_rng(seed)
    ub = random_bounds(rng, n_value_bins)
    v = _values(rng, 2000, ub, with_nan)
    nan_bin = n_value_bins if with_nan else -1
    dtype = common.bin_dtype_for(n_value_bins + with_nan)
    out = np.zeros(len(v), dtype)
    map_to_bins(v, ub, nan_bin, out)

    zero_bin = np.searchsorted(ub, 0.0, side="left")
    expected = np.searchsorted(ub, np.where(np.isnan(v), 0.0, v), side="left")
    expected[np.isnan(v)] = nan_bin if with_nan else zero_bin
    np.testing.assert_array_equal(out, expected)
    for k in range(0, len(v), 97):
        assert value_to_bin(v[k], ub, nan_bin) == expected[k]


@pytest.mark.parametrize("n_value_bins", [3, 32, 300])
@pytest.mark.parametrize("with_nan", [False, True])
@pytest.mark.parametrize("seed", SEEDS)
def test_map_sparse_to_bins_equals_dense(n_value_bins, with_nan, seed):
    rng = np.random.default_rng(seed)
    ub = random_bounds(rng, n_value_bins)
    n = 1500
    rows = np.sort(rng.choice(n, size=300, replace=False)).astype(np.int64)
    values = rng.normal(scale=2.0, size=len(rows))
    values[::17] = 0.0  # explicit zeros
    if with_nan:
        values[rng.random(len(rows)) < 0.2] = np.nan
    dense = np.zeros(n)
    dense[rows] = values
    nan_bin = n_value_bins if with_nan else -1
    dtype = common.bin_dtype_for(n_value_bins + with_nan)
    out_dense = np.zeros(n, dtype)
    out_sparse = np.full(n, 7, dtype)  # must be overwritten
    map_to_bins(dense, ub, nan_bin, out_dense)
    map_sparse_to_bins(values, rows, ub, nan_bin, out_sparse)
    np.testing.assert_array_equal(out_sparse, out_dense)


# -- dgbdt.data.binning.find_bin_mapper: dense and sparse agree ----------------------------


def _dense_columns(X):
    for f in range(X.shape[1]):
        yield np.ascontiguousarray(X[:, f], dtype=np.float64)


def _sparse_columns(X):
    m = sp.csc_matrix(X)
    for f in range(X.shape[1]):
        lo, hi = m.indptr[f], m.indptr[f + 1]
        yield (
            np.ascontiguousarray(m.data[lo:hi], np.float64),
            np.ascontiguousarray(m.indices[lo:hi], np.int64),
        )


@pytest.mark.parametrize("max_bin", [3, 32, 255, 300])
@pytest.mark.parametrize("sample_cnt", [100_000, 300])
@pytest.mark.parametrize("seed", SEEDS)
def test_find_bin_mapper_dense_equals_sparse(max_bin, sample_cnt, seed):
    rng = np.random.default_rng(seed)
    n, d = 1000, 5
    X = rng.normal(size=(n, d)) * (rng.random((n, d)) < 0.3)
    X[:, 1] = np.round(X[:, 1], 1)  # few distinct values
    X[rng.random(n) < 0.1, 2] = np.nan  # NaN stored in the sparse matrix
    X[:, 3] = 0.0  # an all-zero column
    dense = find_bin_mapper(_dense_columns(X), n, max_bin, 3, sample_cnt, seed)
    sparse = find_bin_mapper(_sparse_columns(X), n, max_bin, 3, sample_cnt, seed)
    np.testing.assert_array_equal(dense.nan_bins, sparse.nan_bins)
    assert dense.nan_bins[2] >= 0 and np.all(np.delete(dense.nan_bins, 2) == -1)
    for f in range(d):
        np.testing.assert_array_equal(dense.upper_bounds[f], sparse.upper_bounds[f])
        assert len(dense.upper_bounds[f]) + (dense.nan_bins[f] >= 0) <= max(max_bin, 2)


@settings(deadline=None, max_examples=60)
@given(
    values=st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=1, max_size=200),
    max_bin=st.sampled_from([1, 2, 3, 32, 255]),
    min_data_in_bin=st.integers(1, 10),
)
def test_bounds_properties_any_values(values, max_bin, min_data_in_bin):
    """Any doubles, ulp neighbours and subnormals included."""
    distinct, counts = np.unique(np.asarray(values, np.float64), return_counts=True)
    ub = upper_bounds_of(distinct, counts, max_bin, min_data_in_bin)
    (neg, _), (pos, _) = nonzero_sides(distinct, counts)
    gaps = np.concatenate([np.diff(neg) / np.abs(neg[1:]), np.diff(pos) / pos[:-1]])
    assert_bound_properties(distinct, counts, ub, max_bin, well_spaced=bool(np.all(gaps > 1e-12)))


@settings(deadline=None, max_examples=60)
@given(
    values=st.lists(st.integers(-400, 400), min_size=1, max_size=300),
    scale=st.sampled_from([1.0, 0.01, 1e-30, 1e30]),
    max_bin=st.sampled_from([2, 3, 5, 32, 255]),
    min_data_in_bin=st.integers(1, 10),
)
def test_bounds_properties_well_spaced_values(values, scale, max_bin, min_data_in_bin):
    distinct, counts = np.unique(np.asarray(values, np.float64) * scale, return_counts=True)
    ub = upper_bounds_of(distinct, counts, max_bin, min_data_in_bin)
    assert_bound_properties(distinct, counts, ub, max_bin, well_spaced=True)


def naive_distinct_counts(values, n_zeros):
    """np.unique with ``n_zeros`` more rows of 0.0."""
    values = np.concatenate((np.asarray(values, np.float64), np.zeros(n_zeros)))
    return np.unique(values, return_counts=True) if len(values) else (np.empty(0), np.empty(0))


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from([-2.0, -1.0, -0.0, 0.0, 0.5, 1.0, 3.0]), max_size=12),
    st.integers(0, 5),
)
def test_distinct_counts_equals_unique(values, n_zeros):
    values = np.sort(np.asarray(values, np.float64))
    distinct, counts = np.empty(len(values) + 1), np.empty(len(values) + 1, np.int64)
    n = distinct_counts(values, n_zeros, distinct, counts)
    want_values, want_counts = naive_distinct_counts(values, n_zeros)
    np.testing.assert_array_equal(distinct[:n], want_values)
    np.testing.assert_array_equal(counts[:n], want_counts)
