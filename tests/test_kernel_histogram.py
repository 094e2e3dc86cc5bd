"""native.histogram against np.add.at twins, and its invariants."""
import numba
import numpy as np
import pytest

from dgbdt.native import common
from dgbdt.native.histogram import (
    PARALLEL_MIN_ROWS, build_histogram_colwise, build_histogram_rowwise, gather_gradients,
    subtract_histograms,
)

SEEDS = [0, 1, 2]
SENTINEL = -12345.0


def make_data(rng, n_samples, n_bins_per_feature, constant_hessian):
    n_bins = np.asarray(n_bins_per_feature, np.int64)
    offsets = np.concatenate([[0], np.cumsum(n_bins)]).astype(np.int64)
    dtype = common.bin_dtype_for(int(n_bins.max()))
    binned_cols = np.empty((len(n_bins), n_samples), dtype)
    for f, nb in enumerate(n_bins):
        # Skewed bin frequencies so some bins are empty.
        p = rng.dirichlet(np.full(nb, 0.5))
        binned_cols[f] = rng.choice(nb, size=n_samples, p=p)
    gradients = rng.normal(size=n_samples).astype(common.GRAD_DTYPE)
    if constant_hessian:
        hessians = np.ones(n_samples, common.GRAD_DTYPE)
    else:
        hessians = rng.uniform(0.01, 2.0, size=n_samples).astype(common.GRAD_DTYPE)
    return binned_cols, offsets, gradients, hessians


def twin_histogram(binned_cols, offsets, rows, gradients, hessians, features, total_bins):
    hist = np.full((total_bins, common.HIST_WIDTH), SENTINEL)
    for f in features:
        b = offsets[f] + binned_cols[f, rows].astype(np.int64)
        hist[offsets[f]:offsets[f + 1]] = 0.0
        np.add.at(hist[:, common.HIST_GRAD], b, gradients[rows].astype(np.float64))
        np.add.at(hist[:, common.HIST_HESS], b, hessians[rows].astype(np.float64))
        np.add.at(hist[:, common.HIST_COUNT], b, 1.0)
    return hist


def colwise(binned_cols, offsets, rows, gradients, hessians, features):
    og = np.full(len(rows) + 5, np.nan, common.GRAD_DTYPE)      # longer than needed
    oh = np.full(len(rows) + 5, np.nan, common.GRAD_DTYPE)
    gather_gradients(gradients, hessians, rows, og, oh)
    hist = np.full((offsets[-1], common.HIST_WIDTH), SENTINEL, common.HIST_DTYPE)
    build_histogram_colwise(binned_cols, rows, og, oh, np.asarray(features, np.int32), offsets, hist)
    return hist


def rowwise(binned_cols, offsets, rows, gradients, hessians, n_threads=None):
    binned_rows = np.ascontiguousarray(binned_cols.T)
    og = gradients[rows].copy()
    oh = hessians[rows].copy()
    hist = np.full((offsets[-1], common.HIST_WIDTH), SENTINEL, common.HIST_DTYPE)
    if n_threads is None:
        n_threads = numba.get_num_threads()
    build_histogram_rowwise(binned_rows, rows, og, oh, offsets, n_threads, hist)
    return hist


def random_rows(rng, n_samples, kind):
    if kind == "all":
        rows = np.arange(n_samples)
    elif kind == "empty":
        rows = np.arange(0)
    else:
        rows = np.sort(rng.choice(n_samples, size=int(rng.integers(1, n_samples)), replace=False))
    return rows.astype(common.INDEX_DTYPE)


BIN_LAYOUTS = {
    "3": [3, 3, 3],
    "32": [32, 5, 32, 2],
    "256": [256, 3, 256],              # uint8 at its limit
    "mixed_uint16": [300, 3, 32, 256],  # uint16
}


@pytest.mark.parametrize("layout", list(BIN_LAYOUTS))
@pytest.mark.parametrize("rows_kind", ["all", "subset", "empty"])
@pytest.mark.parametrize("constant_hessian", [False, True])
@pytest.mark.parametrize("seed", SEEDS)
def test_histograms_match_twin(layout, rows_kind, constant_hessian, seed):
    rng = np.random.default_rng(seed)
    n_bins = BIN_LAYOUTS[layout]
    binned_cols, offsets, g, h = make_data(rng, 700, n_bins, constant_hessian)
    assert binned_cols.dtype == (common.BIN_DTYPE_LARGE if max(n_bins) > common.MAX_SMALL_BINS
                                 else common.BIN_DTYPE_SMALL)
    rows = random_rows(rng, 700, rows_kind)
    total_bins = int(offsets[-1])
    all_features = np.arange(len(n_bins))
    expected = twin_histogram(binned_cols, offsets, rows, g, h, all_features, total_bins)

    got = colwise(binned_cols, offsets, rows, g, h, all_features)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
    got = rowwise(binned_cols, offsets, rows, g, h)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
    # Counts are exact; the NaN bin is just the last bin of a feature here.
    np.testing.assert_array_equal(got[:, common.HIST_COUNT], expected[:, common.HIST_COUNT])


@pytest.mark.parametrize("layout", list(BIN_LAYOUTS))
@pytest.mark.parametrize("seed", SEEDS)
def test_colwise_writes_only_the_requested_features(layout, seed):
    rng = np.random.default_rng(seed)
    n_bins = BIN_LAYOUTS[layout]
    binned_cols, offsets, g, h = make_data(rng, 500, n_bins, False)
    rows = random_rows(rng, 500, "subset")
    features = np.sort(rng.choice(len(n_bins), size=max(1, len(n_bins) // 2), replace=False))
    expected = twin_histogram(binned_cols, offsets, rows, g, h, features, int(offsets[-1]))
    got = colwise(binned_cols, offsets, rows, g, h, features)
    # Unused features keep the sentinel (untouched), used ones match the twin.
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("layout", ["32", "mixed_uint16"])
def test_large_leaves_parallel_paths_match_twin_bit_for_bit(layout):
    # >= PARALLEL_MIN_ROWS rows take the parallel code paths; every bin is
    # still summed by one thread in row order, so the result is bit-identical
    # whatever the number of threads, and the same for both layouts.
    rng = np.random.default_rng(7)
    n = PARALLEL_MIN_ROWS + 1000
    n_bins = BIN_LAYOUTS[layout]
    binned_cols, offsets, g, h = make_data(rng, n, n_bins, False)
    rows = np.sort(rng.choice(n, size=n - 500, replace=False)).astype(common.INDEX_DTYPE)
    assert len(rows) >= PARALLEL_MIN_ROWS
    features = np.arange(len(n_bins))
    expected = twin_histogram(binned_cols, offsets, rows, g, h, features, int(offsets[-1]))
    col = colwise(binned_cols, offsets, rows, g, h, features)
    np.testing.assert_array_equal(col, expected)
    old = numba.get_num_threads()
    try:
        for threads in (1, numba.config.NUMBA_NUM_THREADS):
            numba.set_num_threads(threads)
            np.testing.assert_array_equal(colwise(binned_cols, offsets, rows, g, h, features), col)
            for n_threads in (1, 2, 3, 64):
                np.testing.assert_array_equal(
                    rowwise(binned_cols, offsets, rows, g, h, n_threads), col)
    finally:
        numba.set_num_threads(old)


@pytest.mark.parametrize("layout", list(BIN_LAYOUTS))
@pytest.mark.parametrize("seed", SEEDS)
def test_rowwise_equals_colwise_bit_for_bit(layout, seed):
    rng = np.random.default_rng(seed)
    n_bins = BIN_LAYOUTS[layout]
    binned_cols, offsets, g, h = make_data(rng, 500, n_bins, False)
    rows = random_rows(rng, 500, "subset")
    np.testing.assert_array_equal(
        rowwise(binned_cols, offsets, rows, g, h),
        colwise(binned_cols, offsets, rows, g, h, np.arange(len(n_bins))))


@pytest.mark.parametrize("layout", list(BIN_LAYOUTS))
@pytest.mark.parametrize("seed", SEEDS)
def test_parent_minus_smaller_is_larger(layout, seed):
    rng = np.random.default_rng(seed)
    n = 800
    binned_cols, offsets, g, h = make_data(rng, n, BIN_LAYOUTS[layout], seed == 0)
    features = np.arange(len(BIN_LAYOUTS[layout]))
    parent_rows = random_rows(rng, n, "subset")
    go_left = rng.random(len(parent_rows)) < 0.3
    small_rows, large_rows = parent_rows[go_left], parent_rows[~go_left]
    parent = colwise(binned_cols, offsets, parent_rows, g, h, features)
    small = colwise(binned_cols, offsets, small_rows, g, h, features)
    large = colwise(binned_cols, offsets, large_rows, g, h, features)
    out = np.empty_like(parent)
    subtract_histograms(parent, small, out)
    np.testing.assert_allclose(out, large, rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(out[:, common.HIST_COUNT], large[:, common.HIST_COUNT])
    np.testing.assert_array_equal(out, parent - small)
    # In place, as the grower does it.
    subtract_histograms(parent, small, parent)
    np.testing.assert_array_equal(parent, out)


@pytest.mark.parametrize("layout", list(BIN_LAYOUTS))
@pytest.mark.parametrize("seed", SEEDS)
def test_row_order_does_not_matter(layout, seed):
    rng = np.random.default_rng(seed)
    n = 600
    binned_cols, offsets, g, h = make_data(rng, n, BIN_LAYOUTS[layout], False)
    features = np.arange(len(BIN_LAYOUTS[layout]))
    rows = random_rows(rng, n, "subset")
    shuffled = rng.permutation(rows).astype(common.INDEX_DTYPE)
    a = colwise(binned_cols, offsets, rows, g, h, features)
    b = colwise(binned_cols, offsets, shuffled, g, h, features)
    np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(a[:, common.HIST_COUNT], b[:, common.HIST_COUNT])
    c = rowwise(binned_cols, offsets, shuffled, g, h)
    np.testing.assert_allclose(a, c, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("seed", SEEDS)
def test_gather_gradients(seed):
    rng = np.random.default_rng(seed)
    g = rng.normal(size=1000).astype(common.GRAD_DTYPE)
    h = rng.random(1000).astype(common.GRAD_DTYPE)
    rows = rng.choice(1000, size=300, replace=False).astype(common.INDEX_DTYPE)
    og = np.full(400, np.nan, common.GRAD_DTYPE)
    oh = np.full(400, np.nan, common.GRAD_DTYPE)
    gather_gradients(g, h, rows, og, oh)
    np.testing.assert_array_equal(og[:300], g[rows])
    np.testing.assert_array_equal(oh[:300], h[rows])
    assert np.all(np.isnan(og[300:])) and np.all(np.isnan(oh[300:]))
