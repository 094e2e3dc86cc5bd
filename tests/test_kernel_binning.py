"""native.binning against numpy twins, and dgbdt.binning dense vs sparse."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

from dgbdt.binning import find_bin_mapper
from dgbdt.native import common
from dgbdt.native.binning import (
    find_bin_upper_bounds, map_sparse_to_bins, map_to_bins, value_to_bin,
)

SEEDS = [0, 1, 2]


def upper_bounds_of(distinct, counts, max_bin, min_data_in_bin):
    out = np.full(max(max_bin, 1) + 1, np.nan)
    n = find_bin_upper_bounds(np.asarray(distinct, np.float64), np.asarray(counts, np.int64),
                              max_bin, min_data_in_bin, out)
    return out[:n].copy()


def bin_counts(distinct, counts, bounds):
    """Rows per bin when every distinct value goes to searchsorted(bounds, v, 'left')."""
    bins = np.searchsorted(bounds, distinct, side="left")
    return np.bincount(bins, weights=counts, minlength=len(bounds))


def random_bounds(rng, n_value_bins):
    ub = np.sort(rng.choice(np.linspace(-3, 3, 601), n_value_bins - 1, replace=False))
    return np.append(ub, np.inf)


# -- find_bin_upper_bounds ------------------------------------------------------

@pytest.mark.parametrize("max_bin", [3, 32, 255])
@pytest.mark.parametrize("seed", SEEDS)
def test_few_distinct_values_get_one_bin_each_at_midpoints(max_bin, seed):
    rng = np.random.default_rng(seed)
    n_distinct = int(rng.integers(1, max_bin + 1))
    distinct = np.sort(rng.choice(np.arange(-500, 500) * 0.37, n_distinct, replace=False))
    counts = rng.integers(1, 50, n_distinct)
    ub = upper_bounds_of(distinct, counts, max_bin, 1)
    assert len(ub) == n_distinct
    assert ub[-1] == np.inf
    np.testing.assert_array_equal(ub[:-1], distinct[:-1] + (distinct[1:] - distinct[:-1]) / 2)
    np.testing.assert_array_equal(np.searchsorted(ub, distinct, side="left"), np.arange(n_distinct))


def test_empty_and_single_value():
    assert list(upper_bounds_of([], [], 8, 3)) == [np.inf]
    assert list(upper_bounds_of([2.5], [10], 8, 3)) == [np.inf]


def test_neighbours_one_ulp_apart_stay_separated():
    lo = 1.0
    hi = np.nextafter(lo, 2.0)
    ub = upper_bounds_of([lo, hi], [5, 5], 4, 1)
    assert len(ub) == 2
    assert lo <= ub[0] < hi


@pytest.mark.parametrize("max_bin", [3, 32, 255])
@pytest.mark.parametrize("min_data_in_bin", [1, 3, 20])
@pytest.mark.parametrize("seed", SEEDS)
def test_many_distinct_values(max_bin, min_data_in_bin, seed):
    rng = np.random.default_rng(seed)
    n_distinct = int(rng.integers(max_bin + 1, 4 * max_bin + 50))
    distinct = np.sort(rng.choice(np.arange(-5000, 5000) * 0.01, n_distinct, replace=False))
    counts = rng.integers(1, 30, n_distinct)
    ub = upper_bounds_of(distinct, counts, max_bin, min_data_in_bin)
    assert 1 <= len(ub) <= max_bin
    assert ub[-1] == np.inf
    assert np.all(np.diff(ub) > 0), "upper bounds must be strictly increasing"
    # Every cut lies between two neighbouring values: no empty bins.
    per_bin = bin_counts(distinct, counts, ub)
    assert np.all(per_bin > 0)
    # min_data_in_bin: every bin but the last (which takes the remainder).
    assert np.all(per_bin[:-1] >= min_data_in_bin)
    assert per_bin.sum() == counts.sum()


@pytest.mark.parametrize("max_bin", [8, 32, 255])
def test_equal_counts_for_uniform_values(max_bin):
    distinct = np.arange(10_000, dtype=np.float64)
    counts = np.ones(10_000, np.int64)
    ub = upper_bounds_of(distinct, counts, max_bin, 1)
    assert len(ub) == max_bin
    per_bin = bin_counts(distinct, counts, ub)
    expected = 10_000 / max_bin
    assert per_bin.max() <= 1.5 * expected + 1
    assert per_bin.min() >= 0.5 * expected - 1


# -- map_to_bins / value_to_bin ---------------------------------------------------

def _values(rng, n, ub, with_nan):
    v = rng.normal(scale=2.0, size=n)
    finite = ub[:-1]
    if len(finite):
        k = rng.integers(0, n, size=n // 10)
        v[k] = rng.choice(finite, size=len(k))            # exactly on a bound
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
    values[::17] = 0.0                                    # explicit zeros
    if with_nan:
        values[rng.random(len(rows)) < 0.2] = np.nan
    dense = np.zeros(n)
    dense[rows] = values
    nan_bin = n_value_bins if with_nan else -1
    dtype = common.bin_dtype_for(n_value_bins + with_nan)
    out_dense = np.zeros(n, dtype)
    out_sparse = np.full(n, 7, dtype)                      # must be overwritten
    map_to_bins(dense, ub, nan_bin, out_dense)
    map_sparse_to_bins(values, rows, ub, nan_bin, out_sparse)
    np.testing.assert_array_equal(out_sparse, out_dense)


# -- dgbdt.binning.find_bin_mapper: dense and sparse agree ----------------------------

def _dense_columns(X):
    for f in range(X.shape[1]):
        yield np.ascontiguousarray(X[:, f], dtype=np.float64)


def _sparse_columns(X):
    m = sp.csc_matrix(X)
    for f in range(X.shape[1]):
        lo, hi = m.indptr[f], m.indptr[f + 1]
        yield (np.ascontiguousarray(m.data[lo:hi], np.float64),
               np.ascontiguousarray(m.indices[lo:hi], np.int64))


@pytest.mark.parametrize("max_bin", [3, 32, 255, 300])
@pytest.mark.parametrize("sample_cnt", [100_000, 300])
@pytest.mark.parametrize("seed", SEEDS)
def test_find_bin_mapper_dense_equals_sparse(max_bin, sample_cnt, seed):
    rng = np.random.default_rng(seed)
    n, d = 1000, 5
    X = rng.normal(size=(n, d)) * (rng.random((n, d)) < 0.3)
    X[:, 1] = np.round(X[:, 1], 1)                      # few distinct values
    X[rng.random(n) < 0.1, 2] = np.nan                  # NaN stored in the sparse matrix
    X[:, 3] = 0.0                                       # an all-zero column
    dense = find_bin_mapper(_dense_columns(X), n, max_bin, 3, sample_cnt, seed)
    sparse = find_bin_mapper(_sparse_columns(X), n, max_bin, 3, sample_cnt, seed)
    np.testing.assert_array_equal(dense.nan_bins, sparse.nan_bins)
    assert dense.nan_bins[2] >= 0 and np.all(np.delete(dense.nan_bins, 2) == -1)
    for f in range(d):
        np.testing.assert_array_equal(dense.upper_bounds[f], sparse.upper_bounds[f])
        assert len(dense.upper_bounds[f]) + (dense.nan_bins[f] >= 0) <= max(max_bin, 2)


@settings(deadline=None, max_examples=25)
@given(values=st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=1, max_size=200),
       max_bin=st.sampled_from([2, 3, 32, 255]), min_data_in_bin=st.integers(1, 10))
def test_bounds_separate_bins_property(values, max_bin, min_data_in_bin):
    distinct, counts = np.unique(np.asarray(values, np.float64), return_counts=True)
    ub = upper_bounds_of(distinct, counts, max_bin, min_data_in_bin)
    assert 1 <= len(ub) <= max_bin and ub[-1] == np.inf
    assert np.all(np.diff(ub) > 0)
    per_bin = bin_counts(distinct, counts, ub)
    assert np.all(per_bin > 0)
    assert np.all(per_bin[:-1] >= min_data_in_bin)
