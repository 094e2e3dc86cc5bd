"""Quantized training: integer kernels against naive twins, and training with them."""

import json
import sys

import numpy as np
import pytest
from dgbdt.native.histogram import MAX_CHUNKS, PARALLEL_MIN_ROWS, feature_blocks
from dgbdt.native.quantize import (
    NARROW_SHIFT,
    PAIRS,
    WIDE_SHIFT,
    add_words_to_pairs,
    build_int_histogram_blocks,
    build_int_histogram_colwise,
    build_int_histogram_rowwise,
    build_wide_histogram_rowwise,
    gather_packed,
    narrow_rows,
    narrow_words,
    pack_words,
    packed_width,
    quantize_gradients,
    sum_levels,
    unpack_word,
    widen_words,
)
from mpi_launch import TESTS, run_mpi

import dgbdt

sys.path.insert(0, str(TESTS / "mpi"))  # tests/mpi/force_pairs.py


def unpack(words, g_scale=1.0, h_scale=1.0):
    """Naive twin of reading wide words: (sum_g * g_scale, sum_h * h_scale) per bin."""
    words = np.asarray(words, np.int64)
    h = words & 0xFFFFFFFF
    g = (words - h) >> 32
    return np.stack([g.astype(np.float64) * g_scale, h.astype(np.float64) * h_scale], axis=1)


def quantize(g, h, n_bins, stream=7, row_offset=0, stochastic=True, seed=1):
    g_scale = np.abs(g).max() / (n_bins // 2)
    h_scale = np.abs(h).max() / n_bins
    q_g, q_h = np.empty(len(g), np.int8), np.empty(len(g), np.int8)
    quantize_gradients(
        g.astype(np.float32),
        h.astype(np.float32),
        1 / g_scale,
        1 / h_scale,
        n_bins,
        seed,
        stream,
        row_offset,
        stochastic,
        q_g,
        q_h,
    )
    return q_g, q_h, g_scale, h_scale


# -- quantization -----------------------------------------------------------------------


@pytest.mark.parametrize("n_bins", [2, 4, 5, 16, 126])
def test_quantized_values_stay_in_range_and_round_to_a_neighbour(n_bins):
    rng = np.random.default_rng(n_bins)
    g, h = rng.normal(size=5000), rng.uniform(0, 3, 5000)
    q_g, q_h, gs, hs = quantize(g, h, n_bins)
    g32, h32 = g.astype(np.float32).astype(np.float64), h.astype(np.float32).astype(np.float64)
    assert np.all(np.abs(q_g) <= n_bins // 2) and q_h.min() >= 0 and q_h.max() <= n_bins
    # stochastic rounding picks the level just below or just above
    assert np.all((q_g == np.floor(g32 / gs)) | (q_g == np.floor(g32 / gs) + 1))
    assert np.all((q_h == np.floor(h32 / hs)) | (q_h == np.floor(h32 / hs) + 1))
    # round to nearest without stochastic rounding, halves away from zero (LightGBM)
    q_g, q_h, _, _ = quantize(g, h, n_bins, stochastic=False)
    x = g32 / gs
    np.testing.assert_array_equal(
        q_g, np.clip(np.sign(x) * np.floor(np.abs(x) + 0.5), -(n_bins // 2), n_bins // 2)
    )
    np.testing.assert_array_equal(q_h, np.clip(np.floor(h32 / hs + 0.5), 0, n_bins))


def test_stochastic_rounding_is_unbiased():
    rng = np.random.default_rng(0)
    g, h = rng.normal(size=200), rng.uniform(0.1, 1, 200)
    draws = 4000
    total_g, total_h = np.zeros(200), np.zeros(200)
    for stream in range(draws):
        q_g, q_h, gs, hs = quantize(g, h, 4, stream=stream)
        total_g += q_g * gs
        total_h += q_h * hs
    # The mean of the quantized values converges on the values: the error of a
    # mean of 4000 draws is at most scale / 2 / sqrt(4000) ~ 0.008 * scale per row.
    gs_, hs_ = np.abs(g).max() / 2, h.max() / 4
    np.testing.assert_allclose(total_g / draws, g.astype(np.float32), atol=0.05 * gs_)
    np.testing.assert_allclose(total_h / draws, h.astype(np.float32), atol=0.05 * hs_)
    # ...while rounding to nearest is biased for most rows
    q_g, _, gs, _ = quantize(g, h, 4, stochastic=False)
    assert np.mean(np.abs(q_g * gs - g) > 0.05 * gs_) > 0.5


def test_a_rows_draw_depends_on_its_global_index_only():
    rng = np.random.default_rng(1)
    g, h = rng.normal(size=1000), rng.uniform(0, 1, 1000)
    full_g, full_h, gs, hs = quantize(g, h, 4)
    for lo, hi in ((0, 300), (300, 301), (301, 1000)):
        q_g, q_h = np.empty(hi - lo, np.int8), np.empty(hi - lo, np.int8)
        quantize_gradients(
            g[lo:hi].astype(np.float32),
            h[lo:hi].astype(np.float32),
            1 / gs,
            1 / hs,
            4,
            1,
            7,
            lo,
            True,
            q_g,
            q_h,
        )
        np.testing.assert_array_equal(q_g, full_g[lo:hi])
        np.testing.assert_array_equal(q_h, full_h[lo:hi])


# -- packing ------------------------------------------------------------------------------


def test_packed_width_boundaries():
    # narrow while n * (B + 1) < 2**16
    assert packed_width(13107, 4) == NARROW_SHIFT  # 13107 * 5 = 65535
    assert packed_width(13108, 4) == WIDE_SHIFT
    assert packed_width((2**32 - 1) // 5, 4) == WIDE_SHIFT
    assert packed_width(2**32 // 5 + 1, 4) == PAIRS  # two int64 per bin


@pytest.mark.parametrize("n_bins", [4, 15])
def test_words_at_the_width_limit_add_exactly_in_any_grouping(n_bins):
    # The worst case a width allows: every row at the extreme level.
    rng = np.random.default_rng(2)
    for shift, dtype in ((NARROW_SHIFT, np.int32), (WIDE_SHIFT, np.int64)):
        n = (2**shift - 1) // (n_bins + 1) if shift == NARROW_SHIFT else 100_000
        for g_level in (-((n_bins + 1) // 2), (n_bins + 1) // 2):
            q_g = np.full(n, g_level, np.int8)
            q_h = rng.integers(0, n_bins + 1, n).astype(np.int8)
            q_h[:10] = n_bins
            words = np.empty(n, dtype)
            gather_packed(q_g, q_h, np.arange(n, dtype=np.uint32), shift, words)
            # sums of groups (ranks) added afterwards (MPI_SUM) equal the total
            cuts = np.sort(rng.choice(n, 3, replace=False))
            total = sum((p.sum(dtype=dtype) for p in np.split(words, cuts)), dtype(0))
            wide = np.empty(1, np.int64)
            if dtype == np.int32:
                widen_words(np.array([total], np.int32), wide)
            else:
                wide[0] = total
            out = unpack(wide)
            assert out[0, 0] == g_level * n and out[0, 1] == q_h.sum(dtype=np.int64)


def test_pack_words_packs_every_row_narrow():
    rng = np.random.default_rng(4)
    q_g = rng.integers(-63, 64, 10_000).astype(np.int8)
    q_h = rng.integers(0, 127, 10_000).astype(np.int8)
    out = np.empty(10_000, np.int32)
    pack_words(q_g, q_h, out)
    np.testing.assert_array_equal(out, q_g.astype(np.int64) * 65536 + q_h)


def test_add_words_to_pairs_splits_and_accumulates():
    rng = np.random.default_rng(6)
    g = rng.integers(-(2**31), 2**31, 500)
    h = rng.integers(0, 2**32, 500)
    pairs = np.ones((500, 2), np.int64)
    add_words_to_pairs((g * 2**32 + h).astype(np.int64), pairs)
    add_words_to_pairs((g * 2**32 + h).astype(np.int64), pairs)
    np.testing.assert_array_equal(pairs, np.stack([2 * g + 1, 2 * h + 1], axis=1))


def test_widen_and_narrow_are_inverse():
    rng = np.random.default_rng(3)
    g = rng.integers(-32768, 32768, 1000)
    h = rng.integers(0, 65536, 1000)
    narrow = (g * 65536 + h).astype(np.int32)
    wide = np.empty(1000, np.int64)
    widen_words(narrow, wide)
    np.testing.assert_array_equal(wide, g * 2**32 + h)
    back = np.empty(1000, np.int32)
    narrow_words(wide, back)
    np.testing.assert_array_equal(back, narrow)


# -- integer histograms against a naive twin ----------------------------------------------


def naive_int_histogram(binned, rows, q_g, q_h, offsets, features):
    out = np.zeros((offsets[-1], 2))
    for f in features:
        np.add.at(out[:, 0], offsets[f] + binned[rows, f], q_g[rows])
        np.add.at(out[:, 1], offsets[f] + binned[rows, f], q_h[rows])
    return out


@pytest.mark.parametrize("n_rows", [0, 1, 900, PARALLEL_MIN_ROWS * 3 + 17])
@pytest.mark.parametrize("bin_dtype", [np.uint8, np.uint16])
@pytest.mark.parametrize("shift", [NARROW_SHIFT, WIDE_SHIFT])
def test_int_histograms_equal_the_naive_twin(n_rows, bin_dtype, shift):
    rng = np.random.default_rng(n_rows)
    n, n_features = max(2 * n_rows, 10), 5
    n_bins = np.array([3, 40, 256, 2, 17])
    offsets = np.concatenate([[0], np.cumsum(n_bins)]).astype(np.int64)
    binned = np.stack([rng.integers(0, b, n) for b in n_bins], axis=1).astype(bin_dtype)
    rows = np.sort(rng.choice(n, n_rows, replace=False)).astype(np.uint32)
    # narrow words must not overflow: small levels for the many-row case
    q_g = rng.integers(-1, 2, n).astype(np.int8)
    q_h = rng.integers(0, 2, n).astype(np.int8)
    dtype = np.int32 if shift == NARROW_SHIFT else np.int64
    words = np.empty(n, dtype)
    gather_packed(q_g, q_h, rows, shift, words)
    row_words = np.empty(n, np.int32)  # every row's narrow word, by row index
    pack_words(q_g, q_h, row_words)
    expected = naive_int_histogram(binned, rows, q_g, q_h, offsets, range(n_features))
    features = np.arange(n_features, dtype=np.int32)
    total = offsets[-1]
    for layout in ("row", "col", "blocks"):
        hist = np.full(total, 99, dtype)
        if layout == "blocks":
            blocks = feature_blocks(np.ascontiguousarray(binned))
            ids = np.arange(len(blocks), dtype=np.int64)
            build_int_histogram_blocks(blocks, rows, words, ids, offsets, hist)
        elif layout == "col":
            build_int_histogram_colwise(
                np.asfortranarray(binned).T, rows, words, features, offsets, hist
            )
        elif shift == NARROW_SHIFT:
            build_int_histogram_rowwise(
                np.ascontiguousarray(binned),
                rows,
                row_words,
                offsets,
                2,  # features shared by 2 threads where the leaf is small
                np.empty((MAX_CHUNKS, total), np.int32),
                hist,
            )
        else:  # row-wise wide: summed from narrow pieces that fit
            build_wide_histogram_rowwise(
                np.ascontiguousarray(binned),
                rows,
                row_words,
                offsets,
                narrow_rows(1),
                np.empty((MAX_CHUNKS, total), np.int32),
                np.empty((MAX_CHUNKS, total), np.int64),
                hist,
            )
        wide = np.empty(len(hist), np.int64)
        if dtype == np.int32:
            widen_words(hist, wide)
        else:
            wide[:] = hist
        np.testing.assert_array_equal(unpack(wide), expected, err_msg=layout)


@pytest.mark.parametrize(
    "n_rows, piece_rows",
    [(0, 5), (1, 5), (1000, 7), (1000, 1000), (PARALLEL_MIN_ROWS * 2 + 5, narrow_rows(4))],
)
def test_wide_histogram_from_narrow_pieces_equals_the_naive_twin(n_rows, piece_rows):
    # Rows at the extreme levels: a narrow histogram of all of them would overflow.
    rng = np.random.default_rng(n_rows)
    n, n_bins = max(2 * n_rows, 10), np.array([2, 3, 256])
    offsets = np.concatenate([[0], np.cumsum(n_bins)]).astype(np.int64)
    binned = np.stack([rng.integers(0, b, n) for b in n_bins], axis=1).astype(np.uint8)
    rows = np.sort(rng.choice(n, n_rows, replace=False)).astype(np.uint32)
    q_g = rng.choice(np.array([-2, 2], np.int8), n)
    q_h = np.full(n, 4, np.int8)
    row_words = np.empty(n, np.int32)
    pack_words(q_g, q_h, row_words)
    hist = np.full(offsets[-1], 7, np.int64)
    build_wide_histogram_rowwise(
        binned,
        rows,
        row_words,
        offsets,
        piece_rows,
        np.empty((MAX_CHUNKS, offsets[-1]), np.int32),
        np.empty((MAX_CHUNKS, offsets[-1]), np.int64),
        hist,
    )
    np.testing.assert_array_equal(
        unpack(hist), naive_int_histogram(binned, rows, q_g, q_h, offsets, range(3))
    )


def test_sum_levels_equals_numpy():
    rng = np.random.default_rng(9)
    q_g = rng.integers(-3, 4, 5000).astype(np.int8)
    q_h = rng.integers(0, 7, 5000).astype(np.int8)
    rows = np.sort(rng.choice(5000, 3000, replace=False)).astype(np.uint32)
    assert sum_levels(q_g, q_h, rows) == (
        q_g[rows].sum(dtype=np.int64),
        q_h[rows].sum(dtype=np.int64),
    )
    assert sum_levels(q_g, q_h, rows[:0]) == (0, 0)


def test_unpack_word_splits_the_halves():
    assert unpack_word(np.int64((-3 << 32) + 5)) == (-3, 5)
    assert unpack_word(np.int64((7 << 32) + 0xFFFFFFFF)) == (7, 0xFFFFFFFF)
    np.testing.assert_array_equal(
        unpack(np.array([(-3 << 32) + 5], np.int64), 0.5, 0.25), [[-1.5, 1.25]]
    )


# -- training -----------------------------------------------------------------------------


def higgs(n=4000, seed=5):
    from dgbdt.datasets import make_higgs_like

    X, y = make_higgs_like(n, seed=seed)
    return X, y


QUANT = {
    "objective": "binary",
    "num_leaves": 15,
    "learning_rate": 0.2,
    "min_data_in_leaf": 10,
    "verbosity": -1,
    "use_quantized_grad": True,
}


def test_quantized_training_is_close_to_float_training():
    from sklearn.metrics import roc_auc_score

    X, y = higgs(8000)
    Xt, yt = higgs(4000, seed=6)
    aucs = {}
    for quantized in (False, True):
        booster = dgbdt.train({**QUANT, "use_quantized_grad": quantized}, dgbdt.Dataset(X, y), 30)
        aucs[quantized] = roc_auc_score(yt, booster.predict(Xt))
    assert aucs[True] > 0.75 and abs(aucs[True] - aucs[False]) < 0.01, aucs


@pytest.mark.parametrize("layout", ["force_row_wise", "force_col_wise"])
def test_pairs_for_large_leaves_give_the_same_model(monkeypatch, layout):
    # Leaves too large for wide words (forced above 400 rows here) are summed
    # as int64 pairs from wide pieces: the same sums, the same model.
    import sys

    from force_pairs import force_pairs

    import dgbdt.treelearner.histograms as histograms_module

    X, y = higgs()
    params = {**QUANT, layout: True}
    plain = dgbdt.train(params, dgbdt.Dataset(X, y), 5).model_to_string()
    force_pairs(400, monkeypatch.setattr)
    calls = {"pieces": 0, "subtractions": 0}

    real = histograms_module.add_words_to_pairs
    # Pieces are added up while building, subtractions widen a child of a pairs leaf.
    caller_kind = {"_build": "pieces", "subtract": "subtractions"}

    def counted(*args):
        calls[caller_kind[sys._getframe(1).f_code.co_name]] += 1
        return real(*args)

    monkeypatch.setattr(histograms_module, "add_words_to_pairs", counted)
    assert dgbdt.train(params, dgbdt.Dataset(X, y), 5).model_to_string() == plain
    assert calls["pieces"] > 5 and calls["subtractions"] > 0, calls


def test_quantized_model_does_not_depend_on_layout_or_threads():
    # Integer sums do not depend on the order of addition: row- and column-wise
    # histograms, chunked or not, give the same model, bit for bit.
    import numba

    X, y = higgs()
    models = []
    for layout, threads in (("force_row_wise", 1), ("force_row_wise", 2), ("force_col_wise", 2)):
        params = {
            **QUANT,
            layout: True,
            "num_threads": threads,
            "bagging_fraction": 0.8,
            "bagging_freq": 1,
        }
        if threads > numba.config.NUMBA_NUM_THREADS:
            continue
        models.append(
            dgbdt.train(params, dgbdt.Dataset(X, y), 8).dump_model(format="json")["trees"]
        )
    assert all(m == models[0] for m in models[1:])


@pytest.mark.parametrize("objective", ["regression", "multiclass", "regression_l1"])
def test_quantized_training_learns_other_objectives(objective):
    rng = np.random.default_rng(4)
    X, _ = higgs(6000)
    noise = rng.normal(0, 0.5, len(X))
    if objective == "multiclass":
        y = ((X[:, 0] + noise > 0).astype(int) + (X[:, 1] + noise > 0.5)).astype(float)
    else:
        y = X[:, 0] + X[:, 1] ** 2 + noise
    train, test = slice(0, 4000), slice(4000, None)
    params = {**QUANT, "objective": objective, "metric": "None"}
    if objective == "multiclass":
        params["num_class"] = 3

    def test_loss(rounds, quantized):
        m = dgbdt.train(
            {**params, "use_quantized_grad": quantized}, dgbdt.Dataset(X[train], y[train]), rounds
        )
        p, t = m.predict(X[test]), y[test]
        if objective == "multiclass":
            return -np.mean(np.log(p[np.arange(len(t)), t.astype(int)]))
        return np.mean(np.abs(p - t)) if objective == "regression_l1" else np.mean((p - t) ** 2)

    quantized = test_loss(20, True)
    assert quantized < 0.8 * test_loss(1, False)  # it learns
    assert quantized < 1.05 * test_loss(20, False)  # about as well as float training


def test_renew_leaf_uses_the_float_gradients():
    X, y = higgs()
    y = X[:, 0] + X[:, 1]
    params = {
        **QUANT,
        "objective": "regression",
        "learning_rate": 1.0,
        "num_leaves": 4,
        "boost_from_average": False,
    }
    plain = dgbdt.train(params, dgbdt.Dataset(X, y), 1)
    renewed = dgbdt.train({**params, "quant_train_renew_leaf": True}, dgbdt.Dataset(X, y), 1)
    tree = renewed.trees[0]
    np.testing.assert_array_equal(tree.split_feature, plain.trees[0].split_feature)
    # L2 leaf value from the float gradients: the mean label of the leaf's rows
    leaves = renewed.predict(X, pred_leaf=True)[:, 0]
    for leaf in range(tree.n_leaves):
        assert tree.leaf_value[leaf] == pytest.approx(
            y[leaves == leaf].mean(), rel=1e-6
        )  # float32 g
    assert not np.allclose(plain.trees[0].leaf_value, tree.leaf_value, rtol=1e-9, atol=0)


def test_a_tree_that_cannot_split_adds_nothing_renewed_or_not():
    # LightGBM never fits the leaf of a tree without a split: the model stays at
    # its starting score, the objective's automatic one (the label mean) even with
    # boost_from_average off (gbdt.cpp TrainOneIter), renewed leaves or not.
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(2000, 3)), rng.exponential(size=2000) * 10
    params = {
        "objective": "regression",
        "verbosity": -1,
        "boost_from_average": False,
        "min_data_in_leaf": 1500,
        "learning_rate": 1.0,
        "use_quantized_grad": True,
    }
    for renew in (False, True):
        booster = dgbdt.train({**params, "quant_train_renew_leaf": renew}, dgbdt.Dataset(X, y), 3)
        assert booster.num_trees() == 1 and booster.trees[0].leaf_value[0] == 0.0
        np.testing.assert_allclose(booster.predict(X), y.mean(), rtol=1e-12)


# -- distributed ----------------------------------------------------------------------------

DIST = {
    "objective": "binary",
    "num_leaves": 15,
    "learning_rate": 0.2,
    "min_data_in_leaf": 10,
    "metric": ["auc"],
    "verbosity": -1,
    "use_quantized_grad": True,
    "bagging_fraction": 0.7,
    "bagging_freq": 1,
    "feature_fraction": 0.8,
}


def train_on(tmp_path, k, params, n_rounds=8):
    out = tmp_path / f"k{k}-{params['tree_learner']}-{params.get('use_quantized_grad')}"
    out.mkdir()
    result = run_mpi(k, "train_shards.py", out, json.dumps(params), n_rounds)
    assert result.returncode == 0, result.stderr[-3000:]
    return (out / "model.json").read_bytes(), json.loads((out / "result.json").read_text())


def test_data_parallel_quantized_models_are_byte_identical_for_any_ranks(tmp_path):
    params = {**DIST, "tree_learner": "data"}
    models = {k: train_on(tmp_path, k, params) for k in (1, 2, 3, 4)}
    for k in (2, 3, 4):
        assert models[k][0] == models[1][0], f"K={k} differs from K=1"
    assert models[4][1]["same_model_on_all_ranks"]
    # float data-parallel of the same data: quantized words cut the histogram bytes
    float_bytes = {
        k: train_on(tmp_path, k, {**params, "use_quantized_grad": False})[1] for k in (2,)
    }
    for k in (2,):
        ratio = np.mean(models[k][1]["comm"]["bytes_per_tree"]) / np.mean(
            float_bytes[k]["comm"]["bytes_per_tree"]
        )
        assert ratio <= 0.5, ratio


def test_integer_histograms_make_models_independent_of_the_rank_count(tmp_path):
    # Labels over many orders of magnitude: float histogram sums then depend on
    # how rows are split over ranks (shown without boost_from_average, whose
    # mean leaves residuals of one magnitude), integer ones cannot; the
    # starting score is an exact global sum (dgbdt.distributed.exact_sum).
    params = {
        "objective": "regression",
        "num_leaves": 15,
        "min_data_in_leaf": 10,
        "verbosity": -1,
        "tree_learner": "data",
    }
    runs = {
        "float": {"use_quantized_grad": False, "boost_from_average": False},
        "quantized": {"use_quantized_grad": True},
        # leaf values from the float gradients: exact global sums per leaf
        "renewed": {
            "use_quantized_grad": True,
            "quant_train_renew_leaf": True,
            "boost_from_average": False,
        },
    }
    models = {}
    for k in (1, 3):  # every run in one launch of K ranks
        out = tmp_path / f"k{k}"
        out.mkdir()
        every = {name: {**params, **extra} for name, extra in runs.items()}
        result = run_mpi(k, "train_wide_range.py", out, json.dumps(every), 6)
        assert result.returncode == 0, result.stderr[-3000:]
        for name in runs:
            models[name, k] = (out / f"{name}.json").read_bytes()
    assert models["float", 1] != models["float", 3]
    assert models["quantized", 1] == models["quantized", 3]
    assert models["renewed", 1] == models["renewed", 3]


@pytest.mark.parametrize("learner", ["data", "voting"])
def test_leaves_too_large_for_wide_words_as_pairs_give_the_same_models(
    tmp_path, monkeypatch, learner
):
    # Leaves over 300 rows held as int64 pairs, summed from pieces of 100 rows
    # (tests/mpi/force_pairs.py): the same sums, so the same model bit for bit,
    # on 1 and 3 ranks.
    params = {**DIST, "tree_learner": learner, "top_k": 5}
    plain = train_on(tmp_path, 3, params)[0]
    monkeypatch.setenv("DGBDT_TEST_PAIRS_ABOVE", "300")
    for k in (1, 3) if learner == "data" else (3,):
        (tmp_path / "pairs").mkdir(exist_ok=True)
        assert train_on(tmp_path / "pairs", k, params)[0] == plain, f"K={k}"


def test_voting_parallel_quantized(tmp_path):
    params = {**DIST, "tree_learner": "voting", "top_k": 5}
    _, quant = train_on(tmp_path, 2, params)
    _, floats = train_on(tmp_path, 2, {**params, "use_quantized_grad": False})
    assert quant["evals"]["valid"]["auc"][-1] > floats["evals"]["valid"]["auc"][-1] - 0.01
    assert np.mean(quant["comm"]["bytes_per_tree"]) <= 0.6 * np.mean(
        floats["comm"]["bytes_per_tree"]
    )


@pytest.mark.parametrize("script", ["train_shards.py", "train_blocks.py"])
def test_feature_parallel_quantized_equals_serial(tmp_path, script):
    import importlib.util

    from mpi_launch import TESTS

    params = {**DIST, "tree_learner": "feature"}
    result = run_mpi(2, script, tmp_path, json.dumps(params), 6)
    assert result.returncode == 0, result.stderr[-3000:]
    distributed = dgbdt.Booster(model_file=tmp_path / "model.json")
    spec = importlib.util.spec_from_file_location("shard_data", TESTS / "mpi" / "shard_data.py")
    shard_data = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(shard_data)
    X, y, _, _ = shard_data.make_data()
    serial = dgbdt.train({**params, "tree_learner": "serial"}, dgbdt.Dataset(X, y), 6)
    assert (
        distributed.dump_model(format="json")["trees"] == serial.dump_model(format="json")["trees"]
    )


@pytest.mark.parametrize("seed", range(4))
def test_split_scan_on_words_equals_the_scan_on_pairs(seed):
    # find_best_split reads packed words and int64 pairs alike, with LightGBM's
    # integer scan (exact integer sums, each side's count rounded once): the same
    # record, bit for bit.  The float scan of the histogram unpacked to floats
    # rounds counts bin by bin, so it only comes close.
    from dgbdt.native import common
    from dgbdt.native.split import find_best_split

    rng = np.random.default_rng(seed)
    n_bins = np.array([5, 30, 2, 255])
    offsets = np.concatenate([[0], np.cumsum(n_bins)]).astype(np.int64)
    nan_bins = np.array([4, -1, 1, 254], np.int32)
    most_freq_bins = np.array([0, 3, 0, 100], np.int32)
    g = rng.integers(-400, 400, offsets[-1])
    h = rng.integers(0, 800, offsets[-1])
    h[offsets[2] + 1] = 0  # a NaN bin without rows
    words = (g * 2**32 + h).astype(np.int64)
    pairs = np.stack([g, h], axis=1).astype(np.int64)
    features = np.array([0, 1, 2, 3], np.int32)
    gs, hs = 0.37, 0.011
    floats = unpack(words, gs, hs)
    params = np.zeros(common.SPLIT_PARAMS_SIZE)
    params[common.SP_LAMBDA_L2] = 1.0
    params[common.SP_MIN_DATA_IN_LEAF] = 20
    params[common.SP_MIN_SUM_HESSIAN] = 1e-3
    totals = (g[:5].sum() * gs, h[:5].sum() * hs, 1000.0)
    records = {name: np.empty(common.SPLIT_RECORD_SIZE) for name in ("words", "pairs", "floats")}
    flags = {name: np.zeros(4, np.uint8) for name in records}
    for name, hist, scales in (
        ("words", words, (gs, hs)),
        ("pairs", pairs, (gs, hs)),
        ("floats", floats, ()),
    ):
        find_best_split(
            hist,
            features,
            offsets,
            nan_bins,
            np.full(len(nan_bins), -1, np.int32),
            most_freq_bins,
            *totals,
            params,
            records[name],
            flags[name],
            *scales,
        )
    assert records["words"][common.SPLIT_FEATURE] >= 0
    np.testing.assert_array_equal(records["words"], records["pairs"])
    np.testing.assert_array_equal(flags["words"], flags["pairs"])
    np.testing.assert_allclose(
        records["words"][common.SPLIT_GAIN], records["floats"][common.SPLIT_GAIN], rtol=1e-6
    )


@pytest.mark.parametrize("quantized", [False, True])
def test_histogram_buffers_are_reused_across_leaves_and_trees(monkeypatch, quantized):
    # A buffer that never matched the free list cost a new allocation per leaf and
    # a free list growing with every tree (quantized fit 5x slower).
    import dgbdt.treelearner.grower as grower_module

    growers = []
    init = grower_module.TreeGrower.__init__

    def recording_init(self, *args, **kwargs):
        init(self, *args, **kwargs)
        growers.append(self)

    monkeypatch.setattr(grower_module.TreeGrower, "__init__", recording_init)
    X, y = higgs()
    dgbdt.train({**QUANT, "use_quantized_grad": quantized}, dgbdt.Dataset(X, y), 10)
    assert len(growers) == 1 and 0 < len(growers[0]._free_hists) <= QUANT["num_leaves"]
