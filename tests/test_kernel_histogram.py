"""native.histogram against np.add.at twins, and its invariants.

A histogram is (total_bins, 2): (sum_gradients, sum_hessians) per bin.  The
column-wise kernel and small leaves of the row-wise kernel sum every bin in row
order (= the np.add.at twin, bit for bit).  A large row-wise leaf is cut into
``n_row_chunks(n)`` contiguous chunks of ceil(n / n_chunks) rows, each summed
in row order, then the chunks are added in chunk order (= ``twin_chunked``).
"""

import numba
import numpy as np
import pytest
from dgbdt.native import common
from dgbdt.native.histogram import (
    CHUNK_ROWS,
    MAX_CHUNKS,
    PARALLEL_MIN_ROWS,
    build_histogram_colwise,
    build_histogram_rowwise,
    gather_gradients,
    n_row_chunks,
    put_bins,
    subtract_histograms,
    take_bins,
)

SEEDS = [0, 1, 2]
SENTINEL = -12345.0


def make_data(rng, n_samples, n_bins_per_feature, constant_hessian, wide_range=False):
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
    if wide_range:
        # Magnitudes over 12 decades: float64 sums of float32 values of similar
        # size are exact, which would hide a change of summation order.
        gradients = (gradients * 10.0 ** rng.uniform(-8, 4, n_samples)).astype(common.GRAD_DTYPE)
        if not constant_hessian:
            hessians = (hessians * 10.0 ** rng.uniform(-8, 4, n_samples)).astype(common.GRAD_DTYPE)
    return binned_cols, offsets, gradients, hessians


def twin_histogram(binned_cols, offsets, rows, gradients, hessians, features, total_bins):
    hist = np.full((total_bins, common.HIST_WIDTH), SENTINEL)
    for f in features:
        b = offsets[f] + binned_cols[f, rows].astype(np.int64)
        hist[offsets[f] : offsets[f + 1]] = 0.0
        np.add.at(hist[:, common.HIST_GRAD], b, gradients[rows].astype(np.float64))
        np.add.at(hist[:, common.HIST_HESS], b, hessians[rows].astype(np.float64))
    return hist


def twin_n_chunks(n_rows):
    """The documented chunking rule, restated from the constants."""
    if n_rows < PARALLEL_MIN_ROWS:
        return 1
    return max(2, min(MAX_CHUNKS, n_rows // CHUNK_ROWS))


def twin_chunked(binned_cols, offsets, rows, gradients, hessians, total_bins):
    """Row-wise kernel's float grouping: row order inside a chunk, then chunk order."""
    n = len(rows)
    n_chunks = twin_n_chunks(n)
    chunk = -(-n // n_chunks)
    features = np.arange(binned_cols.shape[0])
    total = np.zeros((total_bins, common.HIST_WIDTH))
    for c in range(n_chunks):
        part = rows[c * chunk : min(n, (c + 1) * chunk)]
        total += twin_histogram(
            binned_cols, offsets, part, gradients, hessians, features, total_bins
        )
    return total


def colwise(binned_cols, offsets, rows, gradients, hessians, features):
    og = np.full(len(rows) + 5, np.nan, common.GRAD_DTYPE)  # longer than needed
    oh = np.full(len(rows) + 5, np.nan, common.GRAD_DTYPE)
    gather_gradients(gradients, hessians, rows, og, oh)
    hist = np.full((offsets[-1], common.HIST_WIDTH), SENTINEL, common.HIST_DTYPE)
    build_histogram_colwise(
        binned_cols, rows, og, oh, np.asarray(features, np.int32), offsets, hist
    )
    return hist


def rowwise(binned_cols, offsets, rows, gradients, hessians, n_threads=2):
    binned_rows = np.ascontiguousarray(binned_cols.T)
    hist = np.full((offsets[-1], common.HIST_WIDTH), SENTINEL, common.HIST_DTYPE)
    # Scratch: garbage in it must not leak into the result.
    chunk_hists = np.full((MAX_CHUNKS, offsets[-1], common.HIST_WIDTH), np.nan, common.HIST_DTYPE)
    build_histogram_rowwise(
        binned_rows, rows, gradients, hessians, offsets, n_threads, chunk_hists, hist
    )
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
    "256": [256, 3, 256],  # uint8 at its limit
    "mixed_uint16": [300, 3, 32, 256],  # uint16
}


@pytest.mark.parametrize("layout", list(BIN_LAYOUTS))
@pytest.mark.parametrize("rows_kind", ["all", "subset", "empty"])
@pytest.mark.parametrize("constant_hessian", [False, True])
@pytest.mark.parametrize("seed", SEEDS)
def test_histograms_match_twin(layout, rows_kind, constant_hessian, seed):
    rng = np.random.default_rng(seed)
    n_bins = BIN_LAYOUTS[layout]
    binned_cols, offsets, g, h = make_data(rng, 700, n_bins, constant_hessian, wide_range=True)
    assert binned_cols.dtype == (
        common.BIN_DTYPE_LARGE if max(n_bins) > common.MAX_SMALL_BINS else common.BIN_DTYPE_SMALL
    )
    rows = random_rows(rng, 700, rows_kind)
    total_bins = int(offsets[-1])
    all_features = np.arange(len(n_bins))
    expected = twin_histogram(binned_cols, offsets, rows, g, h, all_features, total_bins)

    got = colwise(binned_cols, offsets, rows, g, h, all_features)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
    got = rowwise(binned_cols, offsets, rows, g, h)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
    assert got.shape == (total_bins, 2) and common.HIST_WIDTH == 2
    # Small leaves: both kernels sum each bin in row order, like the twin.
    np.testing.assert_array_equal(got, expected)


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


def _large_leaf(layout, n_rows, seed=7):
    rng = np.random.default_rng(seed)
    n = n_rows + 500
    binned_cols, offsets, g, h = make_data(rng, n, BIN_LAYOUTS[layout], False, wide_range=True)
    rows = np.sort(rng.choice(n, size=n_rows, replace=False)).astype(common.INDEX_DTYPE)
    return binned_cols, offsets, g, h, rows


def _thread_counts():
    return sorted({1, min(2, numba.config.NUMBA_NUM_THREADS), numba.config.NUMBA_NUM_THREADS})


# Large leaves: 2 chunks (uneven last chunk), 5 chunks, and capped at MAX_CHUNKS.
LARGE_ROWS = [PARALLEL_MIN_ROWS + 1001, 5 * CHUNK_ROWS + 777, (MAX_CHUNKS + 2) * CHUNK_ROWS + 3]


@pytest.mark.parametrize("layout", ["32", "mixed_uint16"])
@pytest.mark.parametrize("n_rows", [1, 300, 2000, PARALLEL_MIN_ROWS - 1])
def test_small_leaves_with_features_shared_between_threads_sum_in_row_order(layout, n_rows):
    # From PARALLEL_MIN_FEATURE_UPDATES bin updates a one-chunk leaf's features
    # are shared between threads: any n_threads (and any Numba thread count)
    # gives the row-order twin, bit for bit.
    binned_cols, offsets, g, h, rows = _large_leaf(layout, n_rows, seed=n_rows)
    features = np.arange(binned_cols.shape[0])
    expected = twin_histogram(binned_cols, offsets, rows, g, h, features, int(offsets[-1]))
    old = numba.get_num_threads()
    try:
        for threads in _thread_counts():
            numba.set_num_threads(threads)
            for n_threads in (1, 2, 3, 64):
                got = rowwise(binned_cols, offsets, rows, g, h, n_threads=n_threads)
                np.testing.assert_array_equal(got, expected)
    finally:
        numba.set_num_threads(old)


@pytest.mark.parametrize(
    "n_rows",
    [
        0,
        1,
        PARALLEL_MIN_ROWS - 1,
        PARALLEL_MIN_ROWS,
        2 * CHUNK_ROWS,
        3 * CHUNK_ROWS - 1,
        3 * CHUNK_ROWS,
        100 * CHUNK_ROWS,
    ]
    + LARGE_ROWS,
)
def test_n_row_chunks_follows_the_documented_rule(n_rows):
    assert n_row_chunks(n_rows) == twin_n_chunks(n_rows)
    assert 1 <= n_row_chunks(n_rows) <= MAX_CHUNKS


@pytest.mark.parametrize("layout", ["32", "mixed_uint16"])
def test_large_leaves_colwise_parallel_path_matches_twin_bit_for_bit(layout):
    # >= PARALLEL_MIN_ROWS rows take the parallel path; every bin is still
    # summed by one thread in row order, so the result is bit-identical to the
    # twin whatever the number of threads.
    binned_cols, offsets, g, h, rows = _large_leaf(layout, PARALLEL_MIN_ROWS + 1000)
    assert len(rows) >= PARALLEL_MIN_ROWS
    features = np.arange(len(BIN_LAYOUTS[layout]))
    expected = twin_histogram(binned_cols, offsets, rows, g, h, features, int(offsets[-1]))
    old = numba.get_num_threads()
    try:
        for threads in _thread_counts():
            numba.set_num_threads(threads)
            np.testing.assert_array_equal(
                colwise(binned_cols, offsets, rows, g, h, features), expected
            )
    finally:
        numba.set_num_threads(old)


@pytest.mark.parametrize("layout", ["32", "mixed_uint16"])
@pytest.mark.parametrize("n_rows", LARGE_ROWS)
def test_large_leaves_rowwise_is_chunk_twin_for_any_thread_count(layout, n_rows):
    # The chunk count depends on the row count only, and the chunks are added
    # in chunk order: bit-identical for 1 and 2 (and all) threads, and equal to
    # a numpy twin that groups the float sums the same way.
    binned_cols, offsets, g, h, rows = _large_leaf(layout, n_rows)
    assert twin_n_chunks(len(rows)) >= 2
    expected = twin_chunked(binned_cols, offsets, rows, g, h, int(offsets[-1]))
    old = numba.get_num_threads()
    results = {}
    try:
        for threads in _thread_counts():
            numba.set_num_threads(threads)
            results[threads] = rowwise(binned_cols, offsets, rows, g, h)
    finally:
        numba.set_num_threads(old)
    for threads, got in results.items():
        np.testing.assert_array_equal(got, results[1], err_msg=f"{threads} threads vs 1")
        np.testing.assert_array_equal(got, expected, err_msg=f"{threads} threads vs chunk twin")


def _assert_close_to_row_order(got, binned_cols, offsets, rows, g, h, features):
    """|got - exact row-order sum| <= 1e-12 * sum of |values| in the bin (rtol 1e-12)."""
    exact = twin_histogram(binned_cols, offsets, rows, g, h, features, int(offsets[-1]))
    scale = twin_histogram(
        binned_cols, offsets, rows, np.abs(g), np.abs(h), features, int(offsets[-1])
    )
    err = np.abs(got - exact)
    assert np.all(err <= 1e-12 * scale), (
        f"max error / scale {np.max(err / np.maximum(scale, 1e-300))}"
    )


@pytest.mark.parametrize("layout", list(BIN_LAYOUTS))
@pytest.mark.parametrize("seed", SEEDS)
def test_rowwise_equals_colwise_bit_for_bit_on_small_leaves(layout, seed):
    rng = np.random.default_rng(seed)
    n_bins = BIN_LAYOUTS[layout]
    binned_cols, offsets, g, h = make_data(rng, 500, n_bins, False, wide_range=True)
    rows = random_rows(rng, 500, "subset")
    np.testing.assert_array_equal(
        rowwise(binned_cols, offsets, rows, g, h),
        colwise(binned_cols, offsets, rows, g, h, np.arange(len(n_bins))),
    )


@pytest.mark.parametrize("layout", ["32", "mixed_uint16"])
@pytest.mark.parametrize("n_rows", [PARALLEL_MIN_ROWS - 1] + LARGE_ROWS)
def test_rowwise_close_to_colwise_on_large_leaves(layout, n_rows):
    # Chunked leaves group the float sums differently from the column-wise
    # kernel: equal up to rounding (rtol 1e-12), exactly equal below the
    # chunking threshold.
    binned_cols, offsets, g, h, rows = _large_leaf(layout, n_rows, seed=11)
    features = np.arange(len(BIN_LAYOUTS[layout]))
    row = rowwise(binned_cols, offsets, rows, g, h)
    col = colwise(binned_cols, offsets, rows, g, h, features)
    if twin_n_chunks(n_rows) == 1:
        np.testing.assert_array_equal(row, col)
    else:
        np.testing.assert_allclose(row[:, common.HIST_HESS], col[:, common.HIST_HESS], rtol=1e-12)
        np.testing.assert_allclose(row, col, rtol=1e-12, atol=1e-9)
        _assert_close_to_row_order(row, binned_cols, offsets, rows, g, h, features)


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


@pytest.mark.parametrize("dtype, width", [(np.float64, 2), (np.int64, 1), (np.int32, 1)])
@pytest.mark.parametrize("seed", SEEDS)
def test_take_and_put_bins_equal_fancy_indexing(dtype, width, seed):
    rng = np.random.default_rng(seed)
    hist = rng.integers(-1000, 1000, (300, width)).astype(dtype)
    index = np.flatnonzero(rng.random(300) < 0.7).astype(np.int64)
    out = np.empty((len(index), width), dtype)
    take_bins(hist, index, out)
    np.testing.assert_array_equal(out, hist[index])
    target = np.full_like(hist, 7)
    put_bins(out, index, target)
    want = np.full_like(hist, 7)
    want[index] = hist[index]
    np.testing.assert_array_equal(target, want)


@pytest.mark.parametrize("quantized", [False, True])
def test_the_timed_small_leaf_threading_never_changes_a_model(monkeypatch, quantized):
    # dgbdt.treelearner.histograms times one thread against feature-shared threads for small
    # leaves (the machine decides); whichever it picks, the model is the same.
    import dgbdt
    from dgbdt.treelearner import histograms

    rng = np.random.default_rng(3)
    X = rng.normal(size=(20_000, 12))
    y = (X[:, 0] + X[:, 1] * X[:, 2] + 0.3 * rng.normal(size=len(X)) > 0).astype(float)
    params = {
        "objective": "binary",
        "num_leaves": 31,
        "force_row_wise": True,
        "num_threads": 2,
        "use_quantized_grad": quantized,
        "verbosity": -1,
    }
    picked = {}
    timed = histograms._Kind.small_leaf_threads

    def spy(self, build):
        picked["threads"] = timed(self, build)
        return picked["threads"]

    monkeypatch.setattr(histograms._Kind, "small_leaf_threads", spy)
    models = []
    for forced in (None, 1, 2):
        if forced is not None:
            monkeypatch.setattr(histograms._Kind, "small_leaf_threads", lambda s, b, t=forced: t)
        models.append(dgbdt.train(params, dgbdt.Dataset(X, y), 8).model_to_string())
    assert picked["threads"] in (1, 2)
    assert models[0] == models[1] == models[2]
