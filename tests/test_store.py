"""The bin store (dgbdt.data.store, native/store.py): dense columns, EFB bundles and
the sparse part keep every feature's bins losslessly, build the histograms the
plain matrix gives, and train the same trees whatever the storage."""

import importlib.util
import json

import numpy as np
import pytest
import scipy.sparse as sp
from dgbdt.native.common import FM_COL, HIST_DTYPE
from dgbdt.native.histogram import MAX_CHUNKS
from dgbdt.native.quantize import WIDE_SHIFT, word_halves
from dgbdt.native.split import fix_most_frequent_bins
from dgbdt.native.store import (
    build_store_histogram,
    build_store_int_histogram,
    find_bundles,
    recover_int_bins,
    store_columns,
)
from mpi_launch import TESTS

import dgbdt

_spec = importlib.util.spec_from_file_location("sparse_data", TESTS / "mpi" / "sparse_data.py")
sparse_data = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sparse_data)

STORAGE = {
    "default": {},
    "plain": {"enable_bundle": False, "is_enable_sparse": False},
    "no_bundle": {"enable_bundle": False},
    "no_sparse": {"is_enable_sparse": False},
}


def one_hot_data(n=2000, seed=0):
    """tests/mpi/sparse_data.py's data as a dense array: one-hot blocks (they
    bundle), dense and rare columns, a column 80% at 5.0 (its most frequent bin
    is not the bin of 0) and one with NaN."""
    X, y = sparse_data.make_sparse_data(n, seed)
    return X.toarray(), y


def stores(X, y, **params):
    params.setdefault("feature_pre_filter", False)  # keep every feature to compare
    out = {}
    for name, extra in STORAGE.items():
        ds = dgbdt.Dataset(sp.csr_matrix(X), y, params={**params, **extra}).construct()
        out[name] = ds.store
    return out


def test_every_storage_keeps_every_bin():
    X, y = one_hot_data()
    found = stores(X, y)
    plain = found["plain"]
    assert plain.plain and found["default"].bundles and found["default"].n_sparse
    assert found["no_sparse"].n_sparse == 0 and found["no_bundle"].bundles == []
    for store in found.values():
        for f in range(X.shape[1]):
            np.testing.assert_array_equal(store.column(f), plain.column(f))


def test_dense_and_sparse_input_give_the_same_store():
    X, y = one_hot_data()
    a = dgbdt.Dataset(X, y).construct().store
    b = dgbdt.Dataset(sp.csr_matrix(X), y).construct().store
    assert a.bundles == b.bundles
    np.testing.assert_array_equal(a.feature_map, b.feature_map)
    np.testing.assert_array_equal(a.entries, b.entries)
    np.testing.assert_array_equal(a.dense, b.dense)


def trees(X, y, **params):
    params = {
        "objective": "binary",
        "num_leaves": 15,
        "min_data_in_leaf": 5,
        "verbose": -1,
        **params,
    }
    booster = dgbdt.train(params, dgbdt.Dataset(X, y, params=params), num_boost_round=8)
    return json.dumps(json.loads(booster.model_to_string(format="json"))["trees"]), booster


@pytest.mark.parametrize("quantized", [False, True])
@pytest.mark.parametrize("layout", ["force_row_wise", "force_col_wise"])
def test_the_trees_do_not_depend_on_the_storage(quantized, layout):
    X, y = one_hot_data()
    params = {"use_quantized_grad": quantized, layout: True}
    want, plain = trees(X, y, **params, **STORAGE["plain"])
    for name, extra in STORAGE.items():
        for data in (X, sp.csr_matrix(X), sp.csc_matrix(X)):
            got, booster = trees(data, y, **params, **extra)
            assert got == want, (name, type(data))
    np.testing.assert_allclose(booster.predict(X[:300]), plain.predict(X[:300]), rtol=0, atol=1e-12)


def test_bagging_and_validation_rows_are_scored_from_the_store():
    # Out-of-bag rows and a sparse validation set are walked through the store.
    X, y = one_hot_data()
    params = {"bagging_fraction": 0.6, "bagging_freq": 1, "metric": "auc"}
    results = {}
    for name in ("plain", "default"):
        p = {"objective": "binary", "num_leaves": 15, "verbose": -1, **params, **STORAGE[name]}
        train = dgbdt.Dataset(sp.csr_matrix(X[:1500]), y[:1500], params=p)
        valid = dgbdt.Dataset(sp.csr_matrix(X[1500:]), y[1500:], reference=train)
        record = {}
        booster = dgbdt.train(
            p, train, 6, valid_sets=[valid], callbacks=[dgbdt.record_evaluation(record)]
        )
        results[name] = (record["valid_0"]["auc"], booster.predict(X[1500:]))
    assert results["plain"][0] == results["default"][0]
    np.testing.assert_array_equal(results["plain"][1], results["default"][1])


def test_wide_sparse_data_is_never_densified():
    n, m = 3000, 200_000
    # (scipy's sp.random takes 40 s at this shape: the same density drawn directly)
    rng = np.random.default_rng(1)
    nnz = int(n * m * 2e-5)
    X = sp.csr_matrix(
        (rng.random(nnz), (rng.integers(0, n, nnz), rng.integers(0, m, nnz))), shape=(n, m)
    )
    X = sp.hstack(
        [X[:, :7], sp.csr_matrix((np.arange(n) % 3 == 0)[:, None] * 1.0), X[:, 8:]]
    ).tocsr()
    y = (X[:, 7].toarray().ravel() > 0).astype(float)
    ds = dgbdt.Dataset(X, y)
    booster = dgbdt.train({"objective": "binary", "verbose": -1, "min_data_in_leaf": 5}, ds, 3)
    store = ds.store
    assert ds.binned is None
    assert store.nbytes() < 1_000_000  # the dense matrix would be 600 MB
    assert booster.predict(X[:10]).shape == (10,)
    assert booster.feature_importance()[7] > 0


def naive_bundles(order, rows_of, widths, n_total, max_width, window):
    """Algorithm 3 of the EFB paper, lossless, with the same window rule."""
    groups = []  # [width, row set]
    group_of = {}
    for f in order:
        rows = set(rows_of[f])
        chosen = None
        for g in range(len(groups) - 1, max(-1, len(groups) - 1 - window), -1):
            width, used = groups[g]
            if width + widths[f] > max_width or len(used) + len(rows) > n_total:
                continue
            if not rows & used:
                chosen = g
                break
        if chosen is None:
            groups.append([1, set()])
            chosen = len(groups) - 1
        groups[chosen][0] += widths[f]
        groups[chosen][1] |= rows
        group_of[f] = chosen
    return group_of


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("window", [1, 3, 64])
def test_find_bundles_against_a_naive_twin(seed, window):
    rng = np.random.default_rng(seed)
    n_total, n_features = 500, 60
    rows_of = [
        np.sort(rng.choice(n_total, rng.integers(0, 60), replace=False)) for _ in range(n_features)
    ]
    widths = rng.integers(1, 40, n_features)
    order = np.argsort([-len(r) for r in rows_of], kind="stable").astype(np.int64)
    ptr = np.concatenate([[0], np.cumsum([len(r) for r in rows_of])]).astype(np.int64)
    rows = np.concatenate(rows_of).astype(np.int64)
    group_of = np.full(n_features, -1, np.int64)
    find_bundles(order, ptr, rows, widths.astype(np.int64), n_total, 100, window, group_of)
    want = naive_bundles(order, rows_of, widths, n_total, 100, window)
    assert group_of.tolist() == [want[f] for f in range(n_features)]
    for g in set(group_of.tolist()):  # lossless: no row in two features of a bundle
        members = np.flatnonzero(group_of == g)
        used = np.concatenate([rows_of[f] for f in members])
        assert len(np.unique(used)) == len(used)
        assert 1 + widths[members].sum() <= 100


def naive_histogram(full, offsets, rows, g, h):
    hist = np.zeros((offsets[-1], 2))
    for i, r in enumerate(rows):
        for f in range(full.shape[1]):
            hist[offsets[f] + full[r, f]] += (g[i], h[i])
    return hist


def _every_column(store):
    return np.arange(store.dense.shape[1], dtype=np.int64), True


def _store_inputs(seed):
    X, y = one_hot_data(1200, seed)
    store = stores(X, y)["default"]
    full = np.stack([store.column(f) for f in range(store.n_features)], axis=1).astype(np.int64)
    rng = np.random.default_rng(seed)
    rows = np.sort(rng.choice(store.n_samples, 700, replace=False)).astype(np.uint32)
    return store, full, rows, rng


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("row_layout", [False, True])
def test_store_histogram_with_recovered_bins_equals_direct_accumulation(seed, row_layout):
    store, full, rows, rng = _store_inputs(seed)
    g = rng.normal(size=len(rows)).astype(np.float32)
    h = rng.random(len(rows)).astype(np.float32)
    offsets = store.feature_offsets
    hist = np.empty((offsets[-1], 2), HIST_DTYPE)
    chunks = np.empty((MAX_CHUNKS, offsets[-1], 2), HIST_DTYPE)
    args = (store.dense, store.indptr, store.entries, store.col_start, store.col_map)
    build_store_histogram(*args, *_every_column(store), rows, g, h, row_layout, 2, chunks, hist)
    want = naive_histogram(full, offsets, rows, g.astype(float), h.astype(float))
    mfb_slot = offsets[:-1] + store.most_freq_bins
    kept = np.ones(len(hist), bool)
    kept[mfb_slot[store.recovered.astype(bool)]] = False
    np.testing.assert_allclose(hist[kept], want[kept], rtol=1e-9, atol=1e-9)
    # Most frequent bins 1, 2, ...: the leaf minus the rest (bin 0: the split scan does it)
    features = np.arange(store.n_features, dtype=np.int32)
    fix_most_frequent_bins(
        hist,
        features,
        offsets,
        store.most_freq_bins,
        float(g.astype(float).sum()),
        float(h.astype(float).sum()),
    )
    nonzero = store.most_freq_bins > 0
    np.testing.assert_allclose(hist[mfb_slot[nonzero]], want[mfb_slot[nonzero]], atol=1e-6)


def test_integer_store_histogram_with_recovered_bins_is_exact():
    store, full, rows, rng = _store_inputs(2)
    q_g = rng.integers(-2, 3, len(rows))
    q_h = rng.integers(0, 5, len(rows))
    words = (q_g.astype(np.int64) << WIDE_SHIFT) + q_h
    offsets = store.feature_offsets
    hist = np.empty(offsets[-1], np.int64)
    chunks = np.empty((MAX_CHUNKS, offsets[-1]), np.int64)
    args = (store.dense, store.indptr, store.entries, store.col_start, store.col_map)
    build_store_int_histogram(*args, *_every_column(store), rows, words, chunks, hist)
    features = np.arange(store.n_features, dtype=np.int32)
    recover_int_bins(
        hist,
        features,
        offsets,
        store.most_freq_bins,
        store.recovered,
        int(q_g.sum()),
        int(q_h.sum()),
    )
    want = naive_histogram(full, offsets, rows, q_g, q_h).astype(np.int64)
    got = np.array([word_halves(w, WIDE_SHIFT) for w in hist])
    np.testing.assert_array_equal(got, want)
    assert (store.feature_map[:, FM_COL] < 0).any() and store.recovered.any()


def naive_store_columns(features, feature_map, n_cols):
    cols = sorted({int(feature_map[f, FM_COL]) for f in features if feature_map[f, FM_COL] >= 0})
    return cols, any(feature_map[f, FM_COL] < 0 for f in features)


def _feature_subsets(store, rng):
    n = store.n_features
    yield np.arange(n, dtype=np.int32)
    yield np.zeros(0, np.int32)
    sparse = np.flatnonzero(store.feature_map[:, FM_COL] < 0).astype(np.int32)
    yield sparse
    yield np.flatnonzero(store.feature_map[:, FM_COL] >= 0).astype(np.int32)
    for _ in range(4):
        yield np.sort(rng.choice(n, rng.integers(1, n), replace=False)).astype(np.int32)


@pytest.mark.parametrize("seed", [0, 1])
def test_store_columns_equals_naive(seed):
    store, _, _, rng = _store_inputs(seed)
    n_cols = store.dense.shape[1]
    seen = np.full(n_cols, 7, np.uint8)  # any contents
    cols = np.empty(n_cols, np.int64)
    for features in _feature_subsets(store, rng):
        n, sparse = store_columns(features, store.feature_map, seen, cols)
        want_cols, want_sparse = naive_store_columns(features, store.feature_map, n_cols)
        assert cols[:n].tolist() == want_cols and bool(sparse) == want_sparse


def _bins_of(store, features):
    """bool per histogram bin: the bins of ``features``."""
    offsets = store.feature_offsets
    mask = np.zeros(offsets[-1], bool)
    for f in features:
        mask[offsets[f] : offsets[f + 1]] = True
    return mask


@pytest.mark.parametrize("n_threads", [1, 2, 3, 8])
def test_column_layout_sums_a_large_leaf_in_row_order_on_any_threads(n_threads):
    """A large leaf in column layout (each thread a run of dense columns, the
    last one the sparse part too) sums every bin in row order: the naive sums
    bit for bit, whatever the number of threads."""
    store, full, _, rng = _store_inputs(2)
    assert store.n_sparse and store.bundles
    rows = np.resize(np.sort(rng.choice(store.n_samples, 900, replace=False)), 40000)
    rows = rows.astype(np.uint32)  # above the single-thread limit: the parallel path
    g = rng.normal(size=len(rows)).astype(np.float32)
    h = rng.random(len(rows)).astype(np.float32)
    offsets = store.feature_offsets
    hist = np.full((offsets[-1], 2), np.nan, HIST_DTYPE)
    chunks = np.empty((MAX_CHUNKS, offsets[-1], 2), HIST_DTYPE)
    args = (store.dense, store.indptr, store.entries, store.col_start, store.col_map)
    build_store_histogram(*args, *_every_column(store), rows, g, h, False, n_threads, chunks, hist)
    want = naive_histogram(full, offsets, rows, g.astype(float), h.astype(float))
    kept = np.ones(len(hist), bool)
    kept[(offsets[:-1] + store.most_freq_bins)[store.recovered.astype(bool)]] = False
    np.testing.assert_array_equal(hist[kept], want[kept])


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("n_rows", [700, 40000])
@pytest.mark.parametrize("row_layout", [False, True])
def test_store_histogram_of_some_columns_equals_every_column(seed, n_rows, row_layout):
    """Building only the columns of some features gives those features' bins bit
    for bit (every layout path: one row block, row chunks, columns and bin
    slices) and zeros elsewhere; integer words the same."""
    store, _, _, rng = _store_inputs(seed)
    rows = np.sort(rng.choice(store.n_samples, min(n_rows, store.n_samples), replace=False))
    rows = np.resize(rows, n_rows).astype(np.uint32)  # large leaves repeat rows
    g = rng.normal(size=n_rows).astype(np.float32)
    h = rng.random(n_rows).astype(np.float32)
    words = (rng.integers(-2, 3, n_rows) << WIDE_SHIFT) + rng.integers(0, 5, n_rows)
    total = store.feature_offsets[-1]
    chunks = np.empty((MAX_CHUNKS, total, 2), HIST_DTYPE)
    int_chunks = np.empty((MAX_CHUNKS, total), np.int64)
    args = (store.dense, store.indptr, store.entries, store.col_start, store.col_map)
    full, full_int = np.empty((total, 2)), np.empty(total, np.int64)
    build_store_histogram(*args, *_every_column(store), rows, g, h, row_layout, 2, chunks, full)
    build_store_int_histogram(*args, *_every_column(store), rows, words, int_chunks, full_int)
    n_cols = store.dense.shape[1]
    seen, cols = np.empty(n_cols, np.uint8), np.empty(n_cols, np.int64)
    for features in _feature_subsets(store, rng):
        n, sparse = store_columns(features, store.feature_map, seen, cols)
        hist, hist_int = np.full((total, 2), np.nan), np.full(total, -1, np.int64)
        build_store_histogram(*args, cols[:n], sparse, rows, g, h, row_layout, 2, chunks, hist)
        build_store_int_histogram(*args, cols[:n], sparse, rows, words, int_chunks, hist_int)
        wanted = _bins_of(store, features)
        np.testing.assert_array_equal(hist[wanted], full[wanted])
        np.testing.assert_array_equal(hist_int[wanted], full_int[wanted])
        built = np.zeros(total, bool)
        for c in cols[:n]:
            built[store.col_map[store.col_start[c] : store.col_start[c + 1]]] = True
        if sparse:
            built[store.entries] = True
        assert not hist[~built].any() and not hist_int[~built].any()


def test_feature_pre_filter_drops_what_cannot_split():
    """LightGBM's NeedFilter on global counts: a feature kept needs a threshold
    with min_data_in_leaf rows on each side; dropped ones take no histogram
    bins, and the model is the one trained with every feature kept."""
    X, y = one_hot_data()
    counts = np.count_nonzero(X, axis=0)
    for min_data in (5, 20, 200):
        store = dgbdt.Dataset(X, y, params={"min_data_in_leaf": min_data}).construct().store
        off = store.bin_offsets
        for f in range(X.shape[1]):
            c = store.counts[off[f] : off[f + 1]]
            left = np.cumsum(c)[:-1]
            can = bool(np.any((left >= min_data) & (c.sum() - left >= min_data)))
            assert store.kept[f] == can, (min_data, f)
            assert (store.feature_offsets[f + 1] - store.feature_offsets[f] > 0) == can
        assert not store.kept[counts < min_data].any()
        params = {"min_data_in_leaf": min_data, "feature_fraction": 1.0}
        want, _ = trees(X, y, **params, feature_pre_filter=False)
        got, _ = trees(X, y, **params)
        assert got == want


def test_a_freed_pre_filtered_dataset_names_the_change():
    X, y = one_hot_data()
    params = {"objective": "binary", "verbose": -1, "min_data_in_leaf": 200}
    ds = dgbdt.Dataset(X, y, params=params)
    dgbdt.train(params, ds, 2)
    with pytest.raises(ValueError, match="feature_pre_filter"):
        dgbdt.train({**params, "min_data_in_leaf": 5}, ds, 2)
    dgbdt.train({**params, "min_data_in_leaf": 400}, ds, 2)  # fewer features: the store serves
    kept = dgbdt.Dataset(X, y, params=params, free_raw_data=False)
    dgbdt.train(params, kept, 2)
    dgbdt.train({**params, "min_data_in_leaf": 5}, kept, 2)  # re-binned from the raw data
    assert kept.store.kept.sum() > 0


@pytest.mark.parametrize("n_rows", [300, 5000])
def test_feature_blocks_equal_the_column_kernel(n_rows):
    from dgbdt.native.histogram import (
        build_histogram_blocks,
        build_histogram_colwise,
        feature_blocks,
    )

    rng = np.random.default_rng(n_rows)
    n, m = 6000, 150  # 3 blocks, the last one partial
    n_bins = rng.integers(2, 256, m)
    offsets = np.concatenate([[0], np.cumsum(n_bins)]).astype(np.int64)
    binned = np.stack([rng.integers(0, b, n) for b in n_bins], axis=1).astype(np.uint8)
    rows = np.sort(rng.choice(n, n_rows, replace=False)).astype(np.uint32)
    g = rng.normal(size=n_rows).astype(np.float32)
    h = rng.random(n_rows).astype(np.float32)
    want = np.full((offsets[-1], 2), np.nan)
    features = np.arange(m, dtype=np.int32)
    build_histogram_colwise(np.asfortranarray(binned).T, rows, g, h, features, offsets, want)
    got = np.full((offsets[-1], 2), np.nan)
    blocks = feature_blocks(binned)
    build_histogram_blocks(blocks, rows, g, h, np.arange(len(blocks)), offsets, got)
    np.testing.assert_array_equal(got, want)  # the same sums, bit for bit


def test_wide_data_trains_the_same_trees_in_both_layouts():
    # 300 features, fewer rows than a row chunk: the column layout's feature
    # blocks and the row kernel sum every bin in row order.
    rng = np.random.default_rng(3)
    X = rng.normal(size=(3000, 300))
    y = (X[:, 0] + X[:, 1] * X[:, 2] > 0).astype(float)
    want, _ = trees(X, y, force_row_wise=True)
    got, _ = trees(X, y, force_col_wise=True)
    assert got == want


def test_a_dataframe_of_sparse_columns_is_kept_sparse():
    pd = pytest.importorskip("pandas")
    X, y = one_hot_data()
    names = [f"c{i}" for i in range(X.shape[1])]
    frame = pd.DataFrame.sparse.from_spmatrix(sp.csr_matrix(X), columns=names)
    want, plain = trees(X, y)
    ds = dgbdt.Dataset(frame, y)
    assert ds.construct().binned is None and ds.store.nbytes() < X.size  # no dense copy
    got, booster = trees(frame, y)
    assert got == want
    np.testing.assert_array_equal(booster.predict(frame), plain.predict(X))
    # a dense column among sparse ones: binned on its own, the same trees
    mixed = frame.copy()
    mixed["c0"] = X[:, 0]
    got, _ = trees(mixed, y)
    assert got == want


def test_predict_on_sparse_frames_of_any_fill_value():
    pd = pytest.importorskip("pandas")
    X, y = one_hot_data(600)
    X = X[:, :10]
    frame = pd.DataFrame(
        {
            f"c{i}": pd.arrays.SparseArray(X[:, i], fill_value=[0.0, np.nan, 1.0][i % 3])
            for i in range(X.shape[1])
        }
    )
    _, booster = trees(frame, y)
    _, dense = trees(X, y)
    np.testing.assert_array_equal(booster.predict(frame), dense.predict(X))


def test_sparse_input_without_columns_keeps_its_rows():
    X = sp.csr_matrix((300, 0))
    ds = dgbdt.Dataset(X, np.arange(300) % 2).construct()
    assert ds.store.n_samples == 300 and ds.store.dense.shape == (300, 0)


@pytest.mark.parametrize(
    "key", ["enable_bundle", "is_enable_sparse", "feature_pre_filter", "zero_as_missing"]
)
def test_a_bad_value_of_a_storage_parameter_names_it(key):
    X, y = one_hot_data(300)
    with pytest.raises(ValueError, match=key):
        dgbdt.train({"objective": "binary", "verbose": -1, key: "maybe"}, dgbdt.Dataset(X, y), 1)
    with pytest.raises(ValueError, match=key):
        dgbdt.Dataset(X, y, params={key: 2}).construct()
