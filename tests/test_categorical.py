"""Categorical features: the API, the binning, the split kernel against a naive
twin (and against brute force where the sorted scan is optimal), LightGBM
agreement, pandas category round trips, the model file, and every learner
under mpiexec equal to one process."""

import importlib.util
import itertools
import json
import re

import numpy as np
import pandas as pd
import pytest
from dgbdt.native import common
from dgbdt.native.split import K_EPSILON, find_best_split, leaf_gain
from mpi_launch import TESTS, run_mpi

import dgbdt
from dgbdt.data.binning import category_bins

_spec = importlib.util.spec_from_file_location(
    "categorical_data", TESTS / "mpi" / "categorical_data.py"
)
categorical_data = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(categorical_data)
make_data, as_frame, CATEGORICAL = (
    categorical_data.make_categorical_data,
    categorical_data.as_frame,
    categorical_data.CATEGORICAL,
)

QUIET = {"verbosity": -1}


# -- the API -------------------------------------------------------------------------
def test_odd_and_even_codes_are_split_exactly_in_one_tree():
    rng = np.random.default_rng(0)
    codes = rng.integers(0, 30, 3000)
    y = (codes % 2 == 1).astype(np.float64)
    X = np.column_stack([codes, rng.normal(size=3000)])
    params = {
        **QUIET,
        "objective": "regression",
        "num_leaves": 2,
        "learning_rate": 1.0,
        "min_data_per_group": 1,
        "cat_smooth": 1,
        "cat_l2": 0,
        "max_cat_to_onehot": 1,
        "max_cat_threshold": 64,
        "min_data_in_leaf": 1,
        "boost_from_average": False,
    }
    booster = dgbdt.train(params, dgbdt.Dataset(X, y, categorical_feature=[0]), 1)
    np.testing.assert_allclose(booster.predict(X), y, atol=1e-12)
    assert booster.trees[0].default_left[0] & dgbdt.models.tree.CATEGORICAL


@pytest.mark.parametrize("spec", [[0, 2], ["f0", "f2"], "name:f0,f2", "0,2"])
def test_categorical_feature_by_index_or_name_in_dataset_or_params(spec):
    X, y = make_data(800)
    names = [f"f{j}" for j in range(4)]
    want = dgbdt.train(
        QUIET, dgbdt.Dataset(X, y, feature_name=names, categorical_feature=[0, 2]), 3
    )
    if isinstance(spec, str):
        got = dgbdt.train(
            {**QUIET, "categorical_feature": spec}, dgbdt.Dataset(X, y, feature_name=names), 3
        )
    else:
        got = dgbdt.train(
            QUIET, dgbdt.Dataset(X, y, feature_name=names, categorical_feature=spec), 3
        )
    assert _trees(got) == _trees(want)


@pytest.mark.parametrize("alias", ["cat_feature", "categorical_column", "cat_column"])
def test_lightgbm_aliases_of_categorical_feature(alias):
    X, y = make_data(600)
    want = dgbdt.train(QUIET, dgbdt.Dataset(X, y, categorical_feature=[2]), 2)
    got = dgbdt.train({**QUIET, alias: "2"}, dgbdt.Dataset(X, y), 2)
    assert _trees(got) == _trees(want)


def test_bad_categorical_values_and_specs_are_named():
    X, y = make_data(300)
    X[5, 2] = 2.5
    with pytest.raises(ValueError, match=r"categorical feature 'Column_2' holds 2\.5"):
        dgbdt.Dataset(X, y, categorical_feature=[2]).construct()
    X[5, 2] = 2.0**31
    with pytest.raises(ValueError, match="integers in"):
        dgbdt.Dataset(X, y, categorical_feature=[2]).construct()
    with pytest.raises(ValueError, match="out of range"):
        dgbdt.Dataset(X, y, categorical_feature=[7]).construct()
    with pytest.raises(ValueError, match="'nope', which is not a feature name"):
        dgbdt.Dataset(X, y, categorical_feature=["nope"]).construct()
    with pytest.raises(ValueError, match="categorical_feature"):
        dgbdt.train({**QUIET, "categorical_feature": "a,b"}, dgbdt.Dataset(X, y), 1)


def test_a_string_column_is_an_error_naming_it():
    df = pd.DataFrame({"x": np.arange(6.0), "city": list("abcabc")})
    with pytest.raises(TypeError, match="'city' holds strings.*astype\\('category'\\)"):
        dgbdt.Dataset(df, np.arange(6.0)).construct()


def test_negative_and_nan_categories_share_the_missing_bin():
    X, y = make_data(1000)
    a = X.copy()
    a[np.isnan(a[:, 0]), 0] = -3.0
    models = [
        dgbdt.train(QUIET, dgbdt.Dataset(data, y, categorical_feature=[0, 2]), 3) for data in (X, a)
    ]
    np.testing.assert_array_equal(models[0].predict(X), models[1].predict(a))


# -- binning -----------------------------------------------------------------------
def test_category_bins_follow_lightgbm_rule():
    # counts 50, 30, 30 (ties: the smaller value first), 5, 2 (below min_data_in_bin)
    values = np.repeat([4.0, 9.0, 1.0, 6.0, 7.0], [50, 30, 30, 5, 2])
    np.testing.assert_array_equal(category_bins(values, 0, 0, 255, 3), [4, 1, 9, 6])
    # at most max_bin bins, the missing/other bin counted
    np.testing.assert_array_equal(category_bins(values, 0, 0, 3, 1), [4, 1])
    # implicit zeros are category 0
    np.testing.assert_array_equal(category_bins(values[:50], 60, 0, 255, 3), [0, 4])


def test_validation_rows_of_unseen_categories_go_right():
    X, y = make_data(1000)
    train = dgbdt.Dataset(X, y, categorical_feature=[0, 2])
    Xv = X[:50].copy()
    Xv[:, 2] = 1000.0  # never seen: the missing/other bin, as NaN
    Xn = X[:50].copy()
    Xn[:, 2] = np.nan
    booster = dgbdt.train(QUIET, train, 3)
    np.testing.assert_array_equal(booster.predict(Xv), booster.predict(Xn))
    record = {}
    dgbdt.train(
        {**QUIET, "metric": "l2"},
        train,
        3,
        valid_sets=[train.create_valid(Xv, y[:50])],
        callbacks=[dgbdt.record_evaluation(record)],
    )
    p = booster.predict(Xv)
    np.testing.assert_allclose(record["valid_0"]["l2"][-1], np.mean((p - y[:50]) ** 2))


# -- the split kernel ------------------------------------------------------------------
def _params(**kw):
    p = np.zeros(common.SPLIT_PARAMS_SIZE)
    defaults = {
        "l1": 0.0, "l2": 0.0, "min_data": 1, "min_hess": 1e-3, "onehot": 4, "max_cat": 32, "smooth": 10, "cat_l2": 10,
        "group": 100, "min_gain": 0.0, "high": 0.0,
    }  # fmt: skip
    defaults.update(kw)
    p[common.SP_LAMBDA_L1], p[common.SP_LAMBDA_L2] = defaults["l1"], defaults["l2"]
    p[common.SP_MIN_DATA_IN_LEAF] = defaults["min_data"]
    p[common.SP_MIN_SUM_HESSIAN] = defaults["min_hess"]
    p[common.SP_MIN_GAIN_TO_SPLIT] = defaults["min_gain"]
    p[common.SP_MAX_CAT_TO_ONEHOT] = defaults["onehot"]
    p[common.SP_MAX_CAT_THRESHOLD] = defaults["max_cat"]
    p[common.SP_CAT_SMOOTH] = defaults["smooth"]
    p[common.SP_CAT_L2] = defaults["cat_l2"]
    p[common.SP_MIN_DATA_PER_GROUP] = defaults["group"]
    p[common.SP_CAT_HIGH_ROWS] = defaults["high"]
    return p, defaults


def _kernel(hist, count, params, max_cat=64):
    out = np.zeros(common.split_record_size(max_cat))
    flags = np.zeros(1, np.uint8)
    n = len(hist)
    find_best_split(
        hist,
        np.array([0], np.int32),
        np.array([0, n], np.int64),
        np.array([-1], np.int32),
        np.array([-1], np.int32),
        np.array([0], np.int32),
        float(hist[:, 0].sum()),
        float(hist[:, 1].sum()),
        float(count),
        params,
        out,
        flags,
        1.0,
        1.0,
        np.array([1], np.uint8),
    )
    n_left = int(out[common.SPLIT_CAT_COUNT])
    left = sorted(out[common.SPLIT_CAT_BINS : common.SPLIT_CAT_BINS + n_left].astype(int))
    return out[common.SPLIT_GAIN], left, bool(flags[0])


def _naive(hist, count, d):
    """LightGBM's FindBestThresholdCategoricalInner, written plainly."""
    sum_g, sum_h = hist[:, 0].sum(), hist[:, 1].sum() + 2 * K_EPSILON
    factor = count / sum_h
    shift = leaf_gain(sum_g, sum_h, d["l1"], d["l2"], 0.0) + d["min_gain"]
    n = len(hist)
    cnt = [np.trunc(hist[t, 1] * factor + 0.5) for t in range(n)]
    best, best_left = -np.inf, []
    if n <= d["onehot"]:
        for t in range(1, n):
            g, h = hist[t]
            if cnt[t] < d["min_data"] or h < d["min_hess"] or count - cnt[t] < d["min_data"]:
                continue
            oh = sum_h - h - K_EPSILON
            if oh < d["min_hess"]:
                continue
            gain = leaf_gain(sum_g - g, oh, d["l1"], d["l2"], 0) + leaf_gain(
                g, h + K_EPSILON, d["l1"], d["l2"], 0
            )
            if gain > shift and gain > best:
                best, best_left = gain, [t]
        return best - shift, best_left
    used = [t for t in range(1, n) if cnt[t] >= d["smooth"]]
    used.sort(key=lambda t: hist[t, 0] / (hist[t, 1] + d["smooth"]))  # stable
    l2 = d["l2"] + d["cat_l2"]
    max_num = min(d["max_cat"], (len(used) + 1) // 2)
    if d["high"] > 0 and len(used) > d["max_cat"]:  # dgbdt's high-cardinality rule
        mean = sum(hist[t, 1] * factor for t in used) / len(used)
        group = int(np.ceil(d["group"] / mean)) if mean > 0 else 1
        max_num = min(max_num, max(1, int(mean / d["high"]), group))
    for order in (used, used[::-1]):
        lg, lh, lc, group = 0.0, K_EPSILON, 0.0, 0.0
        for i, t in enumerate(order[:max_num]):
            lg, lh, lc, group = lg + hist[t, 0], lh + hist[t, 1], lc + cnt[t], group + cnt[t]
            if lc < d["min_data"] or lh < d["min_hess"]:
                continue
            rc = count - lc
            if rc < d["min_data"] or rc < d["group"] or sum_h - lh < d["min_hess"]:
                break
            if group < d["group"]:
                continue
            group = 0.0
            gain = leaf_gain(lg, lh, d["l1"], l2, 0) + leaf_gain(
                sum_g - lg, sum_h - lh, d["l1"], l2, 0
            )
            if gain > shift and gain > best:
                best, best_left = gain, sorted(order[: i + 1])
    return best - shift, best_left


def _random_hist(rng, n_bins, rows_per_bin=(1, 60)):
    counts = rng.integers(*rows_per_bin, n_bins)
    g = np.array([rng.normal(size=c).sum() for c in counts])
    return np.column_stack([g, counts.astype(np.float64)]), int(counts.sum())


@pytest.mark.parametrize("seed", range(40))
def test_split_kernel_equals_naive_twin(seed):
    rng = np.random.default_rng(seed)
    n_bins = int(rng.integers(2, 14))
    hist, count = _random_hist(rng, n_bins)
    params, d = _params(
        onehot=int(rng.choice([2, 4, 8])),
        max_cat=int(rng.choice([1, 2, 4, 32])),
        smooth=float(rng.choice([0, 5, 10])),
        cat_l2=float(rng.choice([0, 10])),
        group=int(rng.choice([1, 20, 100])),
        l2=float(rng.choice([0, 1])),
        min_data=int(rng.choice([1, 10])),
        high=float(rng.choice([0, 5, 20])),
    )
    gain, left, _ = _kernel(hist, count, params)
    want_gain, want_left = _naive(hist, count, d)
    if want_gain == -np.inf:
        assert gain == -np.inf
    else:
        assert left == want_left
        np.testing.assert_allclose(gain, want_gain, rtol=1e-12)


@pytest.mark.parametrize("seed", range(25))
def test_sorted_scan_is_the_best_subset_without_smoothing_or_caps(seed):
    """With cat_smooth 0, no L2 and no caps the sorted prefixes from both ends hold
    the optimal partition (bin 0, missing/other, empty here: it always goes right)."""
    rng = np.random.default_rng(100 + seed)
    n_bins = int(rng.integers(3, 10))
    hist, count = _random_hist(rng, n_bins, (5, 40))
    hist[0] = 0.0
    count -= 0
    params, d = _params(onehot=1, max_cat=64, smooth=0, cat_l2=0, group=1, min_data=1)
    gain, left, _ = _kernel(hist, count, params)
    sum_g, sum_h = hist[:, 0].sum(), hist[:, 1].sum() + 2 * K_EPSILON
    shift = leaf_gain(sum_g, sum_h, 0, 0, 0)
    best = -np.inf
    for r in range(1, n_bins - 1):
        for subset in itertools.combinations(range(1, n_bins), r):
            lg, lh = hist[list(subset), 0].sum(), hist[list(subset), 1].sum() + K_EPSILON
            best = max(
                best, leaf_gain(lg, lh, 0, 0, 0) + leaf_gain(sum_g - lg, sum_h - lh, 0, 0, 0)
            )
    np.testing.assert_allclose(gain, best - shift, rtol=1e-9)


# -- LightGBM agreement ------------------------------------------------------------------
@pytest.mark.parametrize("n_categories, onehot", [(3, 4), (4, 4), (12, 4), (16, 4), (16, 32)])
@pytest.mark.parametrize("objective", ["regression", "binary"])
def test_one_round_equals_lightgbm(n_categories, onehot, objective):
    lgb = pytest.importorskip("lightgbm")
    rng = np.random.default_rng(n_categories + onehot)
    n = 3000
    c1 = rng.integers(0, n_categories, n).astype(np.float64)
    c2 = rng.integers(0, n_categories, n).astype(np.float64)
    x = rng.normal(size=n)
    effect = rng.normal(size=n_categories)
    y = effect[c1.astype(int)] + 0.5 * effect[c2.astype(int)] ** 2 + x + 0.3 * rng.normal(size=n)
    if objective == "binary":
        y = (y > np.median(y)).astype(np.float64)
    c1[rng.random(n) < 0.05] = np.nan
    X = np.column_stack([c1, x, c2])
    params = {
        **QUIET,
        "objective": objective,
        "num_leaves": 15,
        "learning_rate": 1.0,
        "min_data_in_leaf": 20,
        "max_cat_to_onehot": onehot,
        "min_data_per_group": 50,
        "num_threads": 1,
    }
    ours = dgbdt.train(params, dgbdt.Dataset(X, y, categorical_feature=[0, 2]), 1)
    theirs = lgb.train(params, lgb.Dataset(X, y, categorical_feature=[0, 2]), 1)
    np.testing.assert_allclose(
        ours.predict(X, raw_score=True), theirs.predict(X, raw_score=True), atol=1e-6
    )
    assert ours.trees[0].n_leaves == 15


def test_categorical_model_round_trips_through_lightgbm_text():
    lgb = pytest.importorskip("lightgbm")
    X, y = make_data(2000)
    df = as_frame(X)
    ours = dgbdt.train({**QUIET, "objective": "binary"}, dgbdt.Dataset(df, y), 10)
    theirs = lgb.Booster(model_str=ours.model_to_string(format="lightgbm"))
    np.testing.assert_allclose(theirs.predict(df), ours.predict(df), atol=1e-12)
    text = lgb.train({**QUIET, "objective": "binary"}, lgb.Dataset(df, y), 10).model_to_string()
    back = dgbdt.Booster(model_str=text)
    np.testing.assert_allclose(
        back.predict(df), lgb.Booster(model_str=text).predict(df), atol=1e-12
    )


# -- pandas categories and the model file ----------------------------------------------
def test_pandas_categories_are_mapped_by_value_at_predict():
    X, y = make_data(2000)
    df = as_frame(X)
    booster = dgbdt.train({**QUIET, "objective": "binary"}, dgbdt.Dataset(df, y), 10)
    shuffled = as_frame(X, order_seed=7)  # same values, other category order
    np.testing.assert_array_equal(booster.predict(shuffled), booster.predict(df))
    unseen = df.iloc[:20].copy()
    unseen["f2"] = pd.Categorical(["never"] * 20)
    missing = df.iloc[:20].copy()
    missing["f2"] = pd.Categorical([None] * 20, categories=["c1"])
    np.testing.assert_array_equal(booster.predict(unseen), booster.predict(missing))


def test_model_file_keeps_categories(tmp_path):
    X, y = make_data(2000)
    df = as_frame(X)
    booster = dgbdt.train({**QUIET, "objective": "binary"}, dgbdt.Dataset(df, y), 8)
    path = tmp_path / "m.json"
    booster.save_model(path)
    doc = json.loads(path.read_text())
    assert doc["version"] == 3
    assert doc["pandas_categorical"] == list(booster.pandas_categorical)
    assert doc["bin_categories"][1] is None and doc["bin_categories"][0] is not None
    loaded = dgbdt.Booster(model_file=path)
    np.testing.assert_array_equal(loaded.predict(df), booster.predict(df))
    # a continued training replays the loaded trees on the bins
    more = dgbdt.train({**QUIET, "objective": "binary"}, dgbdt.Dataset(df, y), 2, init_model=loaded)
    assert more.current_iteration() == 10


def test_bad_bin_categories_are_named(tmp_path):
    X, y = make_data(500)
    booster = dgbdt.train(QUIET, dgbdt.Dataset(X, y, categorical_feature=[0, 2]), 2)
    doc = json.loads(booster.model_to_string(format="json"))
    doc["bin_categories"][0] = doc["bin_categories"][0][:-1]
    with pytest.raises(ValueError, match=r"'bin_categories'\[0\] lists"):
        dgbdt.Booster(model_str=json.dumps(doc))


def test_estimator_fit_takes_categorical_feature():
    X, y = make_data(1500)
    est = dgbdt.DGBDTClassifier(n_estimators=5, verbose=-1)
    est.fit(X, y, categorical_feature=[0, 2])
    want = dgbdt.train(
        {**QUIET, "objective": "binary"}, dgbdt.Dataset(X, y, categorical_feature=[0, 2]), 5
    )
    np.testing.assert_allclose(est.predict_proba(X)[:, 1], want.predict(X), atol=1e-12)


# -- every learner under mpiexec -----------------------------------------------------------
BASE = {
    **QUIET,
    "objective": "binary",
    "num_leaves": 15,
    "learning_rate": 0.3,
    "min_data_in_leaf": 10,
    "min_data_per_group": 20,
}
N_ROUNDS = 5


def _serial(params, frame=False):
    X, y = make_data()
    data = (
        dgbdt.Dataset(as_frame(X), y)
        if frame
        else dgbdt.Dataset(X, y, categorical_feature=CATEGORICAL)
    )
    return dgbdt.train({**params, "tree_learner": "serial"}, data, N_ROUNDS)


def _distributed(tmp_path, k, params, mode="rows"):
    result = run_mpi(k, "train_categorical.py", tmp_path, json.dumps(params), N_ROUNDS, mode)
    assert result.returncode == 0, result.stderr[-3000:]
    return dgbdt.Booster(model_file=tmp_path / "model.json")


def _trees(booster):
    return json.dumps(json.loads(booster.model_to_string(format="json"))["trees"])


@pytest.mark.parametrize(
    "learner, k, mode",
    [("data", 2, "rows"), ("data", 3, "rows"), ("voting", 2, "rows"), ("feature", 2, "rows"),
     ("feature", 3, "blocks")],
)  # fmt: skip
def test_distributed_equals_one_process(tmp_path, learner, k, mode):
    params = {**BASE, "tree_learner": learner}
    booster = _distributed(tmp_path, k, params, mode)
    want = _serial(params)
    X, _ = make_data()
    np.testing.assert_allclose(
        booster.predict(X, raw_score=True), want.predict(X, raw_score=True), atol=1e-9
    )
    assert any(t.default_left.max() & dgbdt.models.tree.CATEGORICAL for t in want.trees)


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_quantized_is_byte_identical_on_any_number_of_ranks(tmp_path, k):
    params = {**BASE, "tree_learner": "data", "use_quantized_grad": True}
    booster = _distributed(tmp_path, k, params)
    assert _trees(booster) == _trees(_serial(params))


def test_ranks_listing_categories_differently_agree_on_one_mapping(tmp_path):
    params = {**BASE, "tree_learner": "data"}
    booster = _distributed(tmp_path, 2, params, "frame")
    want = _serial(params, frame=True)
    X, _ = make_data()
    df = as_frame(X)
    np.testing.assert_allclose(booster.predict(df), want.predict(df), atol=1e-9)


def test_estimator_on_a_frame_of_category_columns():
    X, y = make_data(1500)
    df = as_frame(X)
    est = dgbdt.DGBDTClassifier(n_estimators=5, verbose=-1).fit(df, y)
    want = dgbdt.train({**QUIET, "objective": "binary"}, dgbdt.Dataset(df, y), 5)
    np.testing.assert_allclose(
        est.predict_proba(as_frame(X, 3))[:, 1], want.predict(df), atol=1e-12
    )
    assert list(est.feature_names_in_) == list(df.columns)


# -- LightGBM's categorical example and the command line --------------------------------
def _categorical_example(shared_datasets):
    from sklearn.datasets import load_svmlight_file

    X, y = load_svmlight_file(str(shared_datasets / "lightgbm" / "categorical.data"))
    return X.toarray(), y


def test_lightgbm_categorical_example_auc(shared_datasets):
    from sklearn.metrics import roc_auc_score

    X, y = _categorical_example(shared_datasets)
    params = {**QUIET, "objective": "binary", "num_leaves": 31}
    train = dgbdt.Dataset(X[:5600], y[:5600], categorical_feature=[0, 1, 4, 5, 6])
    booster = dgbdt.train(params, train, 50)
    auc = roc_auc_score(y[5600:], booster.predict(X[5600:]))
    assert auc >= 0.656  # LightGBM 4.7: 0.6661, the same model


@pytest.mark.parametrize("fmt", ["libsvm", "csv"])
def test_command_line_categorical_feature(tmp_path, shared_datasets, fmt):
    from dgbdt.cli.commands import run

    X, y = _categorical_example(shared_datasets)
    X, y = X[:3000], y[:3000]
    if fmt == "csv":
        data = tmp_path / "train.csv"
        header = "label," + ",".join(f"c{j}" for j in range(X.shape[1]))
        np.savetxt(data, np.column_stack([y, X]), delimiter=",", header=header, comments="")
        extra = ["header=true", "categorical_feature=name:c0,c1,c4,c5,c6"]
    else:
        data = shared_datasets / "lightgbm" / "categorical.data"
        extra = ["categorical_feature=0,1,4,5,6"]
        X, y = _categorical_example(shared_datasets)
    model = tmp_path / "model.json"
    config = tmp_path / "train.conf"
    config.write_text(
        "\n".join(
            [
                f"data={data}",
                "objective=binary",
                "num_leaves=15",
                "num_iterations=5",
                f"output_model={model}",
                "verbosity=-1",
                *extra,
            ]
        )  # fmt: skip
    )
    assert run(["train", f"config={config}"]) == 0
    booster = dgbdt.Booster(model_file=model)
    want = dgbdt.train(
        {**QUIET, "objective": "binary", "num_leaves": 15},
        dgbdt.Dataset(X, y, categorical_feature=[0, 1, 4, 5, 6]),
        5,
    )
    np.testing.assert_allclose(booster.predict(X), want.predict(X), atol=1e-12)
    assert any(t.default_left.max() & dgbdt.models.tree.CATEGORICAL for t in booster.trees)


@pytest.mark.parametrize("kind", ["polars", "arrow"])
def test_polars_and_arrow_categories_and_names(kind):
    X, y = make_data(1500)
    df = as_frame(X)
    if kind == "polars":
        pl = pytest.importorskip("polars")
        frame = pl.from_pandas(df)
    else:
        pa = pytest.importorskip("pyarrow")
        frame = pa.Table.from_pandas(df, preserve_index=False)
    want = dgbdt.train({**QUIET, "objective": "binary"}, dgbdt.Dataset(df, y), 5)
    booster = dgbdt.train({**QUIET, "objective": "binary"}, dgbdt.Dataset(frame, y), 5)
    assert booster.feature_name() == list(df.columns)
    # (polars may list the categories in another order: other codes, the same model)
    np.testing.assert_allclose(booster.predict(frame), want.predict(df), atol=1e-12)
    np.testing.assert_allclose(booster.predict(df), want.predict(df), atol=1e-12)


def test_the_readme_categorical_example_runs():
    import pathlib
    import re

    readme = (pathlib.Path(__file__).resolve().parents[1] / "README.md").read_text()
    section = readme[readme.index("## Categorical features") :]
    section = section[: section.index("\n## ", 1)]
    blocks = re.findall(r"```python\n(.*?)\n```", section, flags=re.S)
    assert blocks
    for code in blocks:
        exec(compile(code, "README.md, Categorical features", "exec"), {})


@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_sparse_input_with_categorical_columns_equals_dense(fmt):
    import scipy.sparse as sp

    X, y = make_data(2000)
    X = np.nan_to_num(X, nan=-1.0)  # sparse input: missing as a negative category
    X[:, 2] = np.where(np.random.default_rng(1).random(len(X)) < 0.6, 0.0, X[:, 2])
    dense = dgbdt.train(QUIET, dgbdt.Dataset(X, y, categorical_feature=[0, 2]), 5)
    matrix = sp.csr_matrix(X) if fmt == "csr" else sp.csc_matrix(X)
    sparse = dgbdt.train(QUIET, dgbdt.Dataset(matrix, y, categorical_feature=[0, 2]), 5)
    assert _trees(sparse) == _trees(dense)
    np.testing.assert_array_equal(sparse.predict(matrix), dense.predict(X))


def test_lightgbm_rule_at_high_cardinality_is_reachable():
    """More categories than max_cat_threshold: cat_high_cardinality_rows=0 gives
    LightGBM's model; the default moves fewer categories of few rows."""
    lgb = pytest.importorskip("lightgbm")
    rng = np.random.default_rng(5)
    n = 4000
    c = rng.integers(0, 80, n).astype(np.float64)
    y = rng.normal(size=80)[c.astype(int)] + rng.normal(size=n)
    X = np.column_stack([c, rng.normal(size=n)])
    params = {**QUIET, "num_leaves": 7, "learning_rate": 1.0, "min_data_per_group": 10}
    theirs = lgb.train(params, lgb.Dataset(X, y, categorical_feature=[0]), 1)
    exact = dgbdt.train(
        {**params, "cat_high_cardinality_rows": 0},
        dgbdt.Dataset(X, y, categorical_feature=[0]),
        1,
    )
    np.testing.assert_allclose(exact.predict(X), theirs.predict(X), atol=1e-6)
    default = dgbdt.train(params, dgbdt.Dataset(X, y, categorical_feature=[0]), 1)
    moved = [
        bin(int(w)).count("1")
        for t in default.trees
        for w in t.cat_threshold  # 4000 rows / 80 categories = 50 < 100: one at a time
    ]
    assert sum(moved) == len([k for k in default.trees[0].default_left if k & 4])


def test_high_cardinality_rule_still_splits_small_categories():
    """40 categories of ~75 rows: the rule moves enough of them for one group of
    min_data_per_group rows (it once allowed one category, never a split)."""
    rng = np.random.default_rng(3)
    n = 3000
    c = rng.integers(0, 40, n).astype(np.float64)
    y = rng.normal(size=40)[c.astype(int)] + 0.1 * rng.normal(size=n)
    X = np.column_stack([c, rng.normal(size=n)])
    booster = dgbdt.train(QUIET, dgbdt.Dataset(X, y, categorical_feature=[0]), 20)
    assert booster.feature_importance()[0] > 0
    assert np.mean((booster.predict(X) - y) ** 2) < 0.2 * np.var(y)


def test_continued_training_codes_categories_by_the_init_models_lists():
    X, y = make_data(2000)
    df = as_frame(X)
    params = {**QUIET, "objective": "binary"}
    base = dgbdt.train(params, dgbdt.Dataset(df, y), 5)
    same = dgbdt.train(params, dgbdt.Dataset(df, y), 5, init_model=base)
    reordered = as_frame(X, order_seed=11)  # the same values, listed otherwise
    other = dgbdt.train(params, dgbdt.Dataset(reordered, y), 5, init_model=base)
    np.testing.assert_allclose(other.predict(df), same.predict(df), atol=1e-12)
    assert other.pandas_categorical == base.pandas_categorical


def test_categories_far_larger_than_their_number_are_warned_about():
    X, y = make_data(500)
    X[:, 2] = np.where(X[:, 2] >= 0, X[:, 2] * 1_000_003, X[:, 2])
    with pytest.warns(UserWarning, match="renumber them to consecutive integers"):
        dgbdt.Dataset(X, y, categorical_feature=[2]).construct()


@pytest.mark.parametrize(
    "key, value, words",
    [
        ("cat_smooth", -1, "'cat_smooth' must be a number >= 0"),
        ("max_cat_to_onehot", 0, "'max_cat_to_onehot' must be an integer >= 1"),
        (
            "max_cat_threshold",
            "x",
            'max_cat_threshold should be of type int, got "x" (it must be an integer',
        ),
        ("cat_l2", -2, "'cat_l2' must be a number >= 0"),
        ("min_data_per_group", 0, "'min_data_per_group' must be an integer >= 1"),
        ("cat_high_cardinality_rows", -1, "'cat_high_cardinality_rows' must be a number >= 0"),
        ("categorical_feature", [1.5], "neither a column index nor a name"),
    ],
)
def test_bad_values_of_the_categorical_parameters_are_named(key, value, words):
    X, y = make_data(200)
    with pytest.raises(ValueError, match=re.escape(words)):
        dgbdt.train({**QUIET, key: value}, dgbdt.Dataset(X, y), 1)
