"""native.partition against a numpy stable partition."""

import numpy as np
import pytest
import scipy.sparse as sp
from dgbdt.native import common
from dgbdt.native.partition import add_leaf_values, partition_rows

import dgbdt

SEEDS = [0, 1, 2]


def twin_partition(rows, column, threshold_bin, default_left, nan_bin):
    b = column[rows].astype(np.int64)
    go_left = np.where(b == nan_bin, default_left, b <= threshold_bin)
    return np.concatenate([rows[go_left], rows[~go_left]]), int(go_left.sum())


@pytest.mark.parametrize("n_bins", [3, 32, 256, 300])
@pytest.mark.parametrize("with_nan", [False, True])
@pytest.mark.parametrize("default_left", [False, True])
@pytest.mark.parametrize("seed", SEEDS)
def test_partition_matches_stable_twin(n_bins, with_nan, default_left, seed):
    rng = np.random.default_rng(seed)
    n = 1000
    column = rng.integers(0, n_bins, n).astype(common.bin_dtype_for(n_bins))
    nan_bin = n_bins - 1 if with_nan else -1
    n_value_bins = n_bins - with_nan
    for threshold_bin in (0, int(rng.integers(0, n_value_bins)), n_value_bins - 1):
        rows = np.sort(rng.choice(n, size=int(rng.integers(0, n)), replace=False)).astype(
            common.INDEX_DTYPE
        )
        expected, expected_left = twin_partition(rows, column, threshold_bin, default_left, nan_bin)
        for n_threads in (1, 2, 3):
            scratch = np.full((2, n), 99999, common.INDEX_DTYPE)
            got = rows.copy()
            n_left = partition_rows(
                got, column, threshold_bin, default_left, nan_bin, n_threads, scratch
            )
            assert n_left == expected_left
            np.testing.assert_array_equal(got, expected)
        # Stable: each side stays ascending.
        assert np.all(np.diff(got[:n_left].astype(np.int64)) > 0)
        assert np.all(np.diff(got[n_left:].astype(np.int64)) > 0)


@pytest.mark.parametrize("n_threads", [2, 4])
def test_parallel_partition_equals_serial_on_large_leaves(n_threads):
    from dgbdt.native.partition import PARALLEL_MIN_ROWS

    rng = np.random.default_rng(3)
    n = 3 * PARALLEL_MIN_ROWS + 17
    column = rng.integers(0, 40, n).astype(common.BIN_DTYPE_SMALL)
    rows = np.sort(rng.choice(n, size=PARALLEL_MIN_ROWS + 1001, replace=False)).astype(
        common.INDEX_DTYPE
    )
    expected, expected_left = twin_partition(rows, column, 17, True, 39)
    got = rows.copy()
    n_left = partition_rows(
        got, column, 17, True, 39, n_threads, np.empty((2, n), common.INDEX_DTYPE)
    )
    assert n_left == expected_left
    np.testing.assert_array_equal(got, expected)


def test_partition_of_a_slice_leaves_the_rest_alone():
    rng = np.random.default_rng(0)
    column = rng.integers(0, 8, 200).astype(common.BIN_DTYPE_SMALL)
    all_rows = np.arange(200, dtype=common.INDEX_DTYPE)
    before = all_rows.copy()
    leaf = all_rows[50:120]  # a view, as in the grower
    expected, n_expected = twin_partition(leaf.copy(), column, 3, True, 7)
    n_left = partition_rows(leaf, column, 3, True, 7, 1, np.empty((2, 200), common.INDEX_DTYPE))
    assert n_left == n_expected
    np.testing.assert_array_equal(all_rows[50:120], expected)
    np.testing.assert_array_equal(all_rows[:50], before[:50])
    np.testing.assert_array_equal(all_rows[120:], before[120:])


def test_partition_nan_bin_follows_default_left_only():
    column = np.array([0, 1, 2, 3, 3, 0], common.BIN_DTYPE_SMALL)  # bin 3 = NaN
    rows = np.arange(6, dtype=common.INDEX_DTYPE)
    scratch = np.empty((2, 6), common.INDEX_DTYPE)
    r = rows.copy()
    assert partition_rows(r, column, 2, False, 3, 1, scratch) == 4
    np.testing.assert_array_equal(r, [0, 1, 2, 5, 3, 4])
    r = rows.copy()
    assert partition_rows(r, column, 0, True, 3, 1, scratch) == 4
    np.testing.assert_array_equal(r, [0, 3, 4, 5, 1, 2])
    r = rows.copy()  # no NaN bin: bin 3 is a value bin
    assert partition_rows(r, column, 2, True, -1, 1, scratch) == 4
    np.testing.assert_array_equal(r, [0, 1, 2, 5, 3, 4])


@pytest.mark.parametrize("n_leaves", [1, 2, 7])
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("n", [500, 100_000])  # one thread; leaves in parallel
def test_add_leaf_values(n_leaves, seed, n):
    rng = np.random.default_rng(seed)
    leaf_of_row = rng.integers(0, n_leaves, n)
    n_root = n * 4 // 5  # the rest are out of the tree (bagging)
    root = np.sort(rng.choice(n, n_root, replace=False))
    order = root[np.argsort(leaf_of_row[root], kind="stable")].astype(common.INDEX_DTYPE)
    leaf_count = np.bincount(leaf_of_row[root], minlength=n_leaves).astype(np.int64)
    leaf_begin = np.concatenate([[0], np.cumsum(leaf_count)[:-1]]).astype(np.int64)
    leaf_values = rng.normal(size=n_leaves)
    scores = rng.normal(size=n)
    expected = scores.copy()
    expected[root] += leaf_values[leaf_of_row[root]]
    add_leaf_values(scores, order, leaf_begin, leaf_count, leaf_values)
    np.testing.assert_array_equal(scores, expected)


@pytest.mark.parametrize("n_rows", [700, 70000])
def test_partition_decoding_a_bin_store_equals_the_decoded_column(n_rows):
    """partition_rows given a store's decoder (a feature of a dense column,
    bundled or not, decoded row by row) moves the rows as given its column."""
    rng = np.random.default_rng(3)
    n = 70000
    X = np.zeros((n, 12))
    X[np.arange(n), rng.integers(0, 6, n)] = 1.0  # one-hot: bundled
    X[:, 6:] = rng.random((n, 6)) * (rng.random((n, 6)) < 0.05)  # sparse numeric
    store = dgbdt.Dataset(sp.csr_matrix(X), rng.random(n) < 0.5).construct().store
    assert not store.plain and store.bundles and store.n_sparse
    rows = np.sort(rng.choice(n, n_rows, replace=False)).astype(common.INDEX_DTYPE)
    decoded = [f for f in range(X.shape[1]) if store.decoder(f) is not None]
    assert len(decoded) == X.shape[1] - store.n_sparse  # the sparse part: None
    for f in decoded:
        column = store.column(f)
        n_bins = int(store.feature_offsets[f + 1] - store.feature_offsets[f])
        mask = (rng.random(n_bins) < 0.5).astype(np.uint8)
        for threshold_bin, left_mask in ((0, None), (n_bins // 2, None), (0, mask)):
            got, want = rows.copy(), rows.copy()
            scratch = np.empty((2, n), common.INDEX_DTYPE)
            args = (threshold_bin, True, -1, 2, scratch, left_mask)
            n_left = partition_rows(got, store.decoder(f), *args)
            assert n_left == partition_rows(want, column, *args)
            np.testing.assert_array_equal(got, want)
