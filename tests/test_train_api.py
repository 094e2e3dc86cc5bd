"""dgbdt.train / Dataset / Booster behaviour through the public API.

Small generated data only; every test compares against something that can
disagree: a constant model, an equivalent input, or an equivalent parameter
spelling.
"""

import copy
import re

import numpy as np
import pytest
import scipy.sparse as sp

import dgbdt

QUIET = {"verbosity": -1}


# --------------------------------------------------------------------------- #
# helpers
# --------------------------------------------------------------------------- #
def _regression_data(n=600, n_features=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, n_features))
    y = 2.0 * X[:, 0] + np.sin(2 * X[:, 1]) + 0.1 * rng.normal(size=n)
    return X, y


def _binary_data(n=600, n_features=5, seed=1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, n_features))
    logit = 2.0 * X[:, 0] - 1.5 * X[:, 1] * (X[:, 2] > 0)
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-logit))).astype(np.float64)
    return X, y


def _multiclass_data(n=600, n_features=5, n_classes=3, seed=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, n_features))
    centers = np.random.default_rng(99).normal(scale=1.5, size=(n_classes, 2))
    d = ((X[:, None, :2] - centers[None]) ** 2).sum(-1)
    y = np.argmin(d + 0.5 * rng.normal(size=d.shape), axis=1).astype(np.float64)
    return X, y


def _discrete_data(n=400, n_features=4, n_values=8, seed=3):
    """Integer-valued features with few distinct values: bins do not depend on
    how often each value occurs, so duplicated/zero-weight rows bin alike."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, n_values, size=(n, n_features)).astype(np.float64)
    # every value appears in every column (so subsets keep the same bins)
    X[:n_values] = np.arange(n_values)[:, None]
    y = X[:, 0] - 0.5 * X[:, 1] + rng.normal(size=n)
    return X, y


def _train(params, X, y, rounds=10, **ds_kw):
    return dgbdt.train({**QUIET, **params}, dgbdt.Dataset(X, y, **ds_kw), num_boost_round=rounds)


def _trees(booster):
    """The learned structure and values of a model, without its metadata."""
    return booster.dump_model(format="json")["trees"]


def _assert_same_model(a, b, X):
    assert _trees(a) == _trees(b)
    np.testing.assert_array_equal(a.predict(X, raw_score=True), b.predict(X, raw_score=True))


def _tree_depths(booster):
    return [max(t["leaf_depth"]) if t["num_leaves"] > 1 else 0 for t in _trees(booster)]


def _logloss(y, p):
    p = np.clip(p, 1e-15, 1 - 1e-15)
    return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))


# --------------------------------------------------------------------------- #
# objectives
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("objective", ["regression", "regression_l1", "huber"])
def test_regression_objectives_beat_constant(objective):
    X, y = _regression_data()
    Xt, yt = _regression_data(seed=10)
    b = _train(
        {"objective": objective, "num_leaves": 15, "learning_rate": 0.2, "alpha": 1.0},
        X,
        y,
        rounds=30,
    )
    pred = b.predict(Xt)
    assert pred.shape == (len(yt),)
    if objective == "regression_l1":
        const = np.mean(np.abs(yt - np.median(y)))
        assert np.mean(np.abs(yt - pred)) < 0.5 * const
    else:
        const = np.mean((yt - np.mean(y)) ** 2)
        assert np.mean((yt - pred) ** 2) < 0.3 * const


def test_binary_beats_constant():
    X, y = _binary_data()
    Xt, yt = _binary_data(seed=11)
    b = _train({"objective": "binary", "num_leaves": 7}, X, y, rounds=30)
    p = b.predict(Xt)
    assert p.shape == (len(yt),)
    assert np.all((p > 0) & (p < 1))
    raw = b.predict(Xt, raw_score=True)
    np.testing.assert_allclose(p, 1 / (1 + np.exp(-raw)), rtol=1e-12)
    assert _logloss(yt, p) < 0.85 * _logloss(yt, np.full(len(yt), y.mean()))


def test_multiclass_beats_constant():
    X, y = _multiclass_data()
    Xt, yt = _multiclass_data(seed=12)
    b = _train({"objective": "multiclass", "num_class": 3, "num_leaves": 7}, X, y, rounds=20)
    assert b.num_trees() == 20 * 3
    p = b.predict(Xt)
    assert p.shape == (len(yt), 3)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, rtol=1e-12)
    prior = np.bincount(y.astype(int), minlength=3) / len(y)
    ll = -np.mean(np.log(p[np.arange(len(yt)), yt.astype(int)]))
    ll_const = -np.mean(np.log(prior[yt.astype(int)]))
    assert ll < 0.7 * ll_const
    assert np.mean(p.argmax(1) == yt) > 0.7
    raw = b.predict(Xt, raw_score=True)
    assert raw.shape == (len(yt), 3)


# --------------------------------------------------------------------------- #
# input types
# --------------------------------------------------------------------------- #
def test_pandas_input_same_model_and_feature_names():
    pd = pytest.importorskip("pandas")
    X, y = _regression_data(n=300)
    names = ["alpha", "beta", "gamma", "delta", "eps"]
    df = pd.DataFrame(X, columns=names)
    b_np = _train({"num_leaves": 7}, X, y)
    b_df = _train({"num_leaves": 7}, df, y)
    assert b_df.feature_name() == names
    assert b_np.feature_name() == [f"Column_{i}" for i in range(5)]
    _assert_same_model(b_np, b_df, X)
    np.testing.assert_array_equal(b_df.predict(df), b_np.predict(X))
    assert b_df.dump_model()["feature_names"] == names


@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_sparse_input_same_model_as_dense(fmt):
    rng = np.random.default_rng(4)
    X, y = _regression_data(n=400)
    X[rng.random(X.shape) < 0.6] = 0.0  # mostly zeros
    y = y + 3 * (X[:, 3] != 0)
    Xs = sp.csr_matrix(X) if fmt == "csr" else sp.csc_matrix(X)
    b_dense = _train({"num_leaves": 7}, X, y)
    b_sparse = _train({"num_leaves": 7}, Xs, y)
    _assert_same_model(b_dense, b_sparse, X)
    np.testing.assert_array_equal(b_sparse.predict(Xs), b_dense.predict(X))


# --------------------------------------------------------------------------- #
# weights and init_score
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("objective", ["regression", "binary"])
def test_weight_two_equals_duplicated_row(objective):
    X, y = _discrete_data()
    if objective == "binary":
        y = (y > np.median(y)).astype(np.float64)
    w = np.ones(len(y))
    dup = np.arange(0, len(y), 3)
    w[dup] = 2.0
    params = {
        "objective": objective,
        "num_leaves": 7,
        "min_data_in_leaf": 1,
        "min_sum_hessian_in_leaf": 1e-3,
        "min_data_in_bin": 1,
    }
    b_w = _train(params, X, y, weight=w)
    Xd = np.vstack([X, X[dup]])
    yd = np.concatenate([y, y[dup]])
    b_d = _train(params, Xd, yd)
    b_plain = _train(params, X, y)
    pw, pd_, pp = (b.predict(X, raw_score=True) for b in (b_w, b_d, b_plain))
    np.testing.assert_allclose(pw, pd_, rtol=1e-6, atol=1e-6)
    assert not np.allclose(pw, pp, atol=1e-3)  # the weights did something


def test_zero_weight_rows_are_ignored():
    X, y = _discrete_data()
    rng = np.random.default_rng(5)
    n_extra = 150
    X_extra = X[rng.integers(0, len(X), n_extra)]
    y_extra = rng.normal(scale=100.0, size=n_extra)  # wild labels
    X_all = np.vstack([X, X_extra])
    y_all = np.concatenate([y, y_extra])
    w_all = np.concatenate([np.ones(len(y)), np.zeros(n_extra)])
    params = {"num_leaves": 7, "min_data_in_leaf": 1, "min_data_in_bin": 1}
    b_ref = _train(params, X, y)
    b_zero = _train(params, X_all, y_all, weight=w_all)
    np.testing.assert_allclose(b_zero.predict(X), b_ref.predict(X), rtol=1e-9, atol=1e-9)


def test_init_score():
    X, y = _regression_data(n=400)
    c = 5.0
    # LightGBM: an init_score disables boost_from_average, and predictions do
    # not include it.
    b_init = _train({"num_leaves": 7}, X, y, init_score=np.full(len(y), c))
    b_shift = _train({"num_leaves": 7, "boost_from_average": False}, X, y - c)
    np.testing.assert_allclose(b_init.predict(X), b_shift.predict(X), rtol=1e-9, atol=1e-9)
    assert _trees(b_init)[0]["split_feature"] == _trees(b_shift)[0]["split_feature"]
    # and it is not the model trained without the offset
    b_plain = _train({"num_leaves": 7}, X, y)
    assert np.mean(np.abs(b_plain.predict(X) - (b_init.predict(X) + c))) > 0.05


def test_multiclass_init_score_layouts():
    # LightGBM accepts (n_samples, n_classes) or a flat class-major array
    X, y = _multiclass_data(n=300)
    rng = np.random.default_rng(15)
    S = rng.normal(size=(300, 3))
    params = {"objective": "multiclass", "num_class": 3, "num_leaves": 5}
    b_2d = _train(params, X, y, rounds=3, init_score=S)
    b_flat = _train(params, X, y, rounds=3, init_score=S.T.ravel())
    b_none = _train(params, X, y, rounds=3)
    _assert_same_model(b_2d, b_flat, X)
    assert _trees(b_2d) != _trees(b_none)


def test_init_score_of_validation_set_is_used():
    X, y = _regression_data(n=400)
    Xv, yv = _regression_data(n=200, seed=13)
    res_a, res_b = {}, {}
    params = {**QUIET, "num_leaves": 7, "metric": "l2"}
    ds = dgbdt.Dataset(X, y)
    dgbdt.train(
        params,
        ds,
        3,
        valid_sets=[ds.create_valid(Xv, yv)],
        valid_names=["v"],
        callbacks=[dgbdt.record_evaluation(res_a)],
    )
    ds = dgbdt.Dataset(X, y)
    dgbdt.train(
        params,
        ds,
        3,
        valid_sets=[ds.create_valid(Xv, yv, init_score=np.full(len(yv), 50.0))],
        valid_names=["v"],
        callbacks=[dgbdt.record_evaluation(res_b)],
    )
    assert res_b["v"]["l2"][0] > 100 * res_a["v"]["l2"][0]


# --------------------------------------------------------------------------- #
# validation, evaluation and early stopping
# --------------------------------------------------------------------------- #
def _noisy_split(seed=6):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(300, 5))
    y = X[:, 0] + rng.normal(scale=2.0, size=300)
    return X[:200], y[:200], X[200:], y[200:]


def test_valid_sets_record_evaluation_matches_predictions():
    X, y, Xv, yv = _noisy_split()
    ds = dgbdt.Dataset(X, y)
    dv = dgbdt.Dataset(Xv, yv, reference=ds)
    res = {}
    b = dgbdt.train(
        {**QUIET, "num_leaves": 7, "metric": ["l2", "l1"]},
        ds,
        6,
        valid_sets=[ds, dv],
        valid_names=["train", "holdout"],
        callbacks=[dgbdt.record_evaluation(res)],
    )
    # LightGBM names the training data after valid_names when it is given
    assert set(res) == {"train", "holdout"}
    assert set(res["holdout"]) == {"l2", "l1"}
    assert len(res["holdout"]["l2"]) == 6 and len(res["train"]["l1"]) == 6
    for k in (1, 4, 6):
        p = b.predict(Xv, num_iteration=k)
        assert res["holdout"]["l2"][k - 1] == pytest.approx(np.mean((p - yv) ** 2), rel=1e-9)
        assert res["holdout"]["l1"][k - 1] == pytest.approx(np.mean(np.abs(p - yv)), rel=1e-9)
        pt = b.predict(X, num_iteration=k)
        assert res["train"]["l2"][k - 1] == pytest.approx(np.mean((pt - y) ** 2), rel=1e-9)
    # training loss goes down
    assert res["train"]["l2"][-1] < res["train"]["l2"][0]


def test_default_eval_names():
    X, y, Xv, yv = _noisy_split()
    ds = dgbdt.Dataset(X, y)
    res = {}
    dgbdt.train(
        {**QUIET, "num_leaves": 7},
        ds,
        2,
        valid_sets=[ds, ds.create_valid(Xv, yv)],
        callbacks=[dgbdt.record_evaluation(res)],
    )
    # as LightGBM: "training" for the training data, "valid_<index>" otherwise
    assert set(res) == {"training", "valid_1"}
    assert len(res["training"]["l2"]) == 2


def test_early_stopping_best_iteration_and_predict():
    X, y, Xv, yv = _noisy_split()
    ds = dgbdt.Dataset(X, y)
    res = {}
    b = dgbdt.train(
        {**QUIET, "num_leaves": 31, "min_data_in_leaf": 2, "learning_rate": 0.5},
        ds,
        200,
        valid_sets=[ds.create_valid(Xv, yv)],
        valid_names=["v"],
        callbacks=[dgbdt.early_stopping(5, verbose=False), dgbdt.record_evaluation(res)],
        keep_training_booster=True,  # keeps the trees after the best (LightGBM)
    )
    best = b.best_iteration
    assert 1 <= best < 100
    l2 = res["v"]["l2"]
    assert len(l2) == best + 5  # stopped 5 rounds after the best
    assert b.current_iteration() == best + 5
    assert int(np.argmin(l2)) + 1 == best
    assert b.best_score["v"]["l2"] == pytest.approx(min(l2))
    # predict uses the best iteration by default; num_iteration overrides it
    p_default = b.predict(Xv)
    np.testing.assert_array_equal(p_default, b.predict(Xv, num_iteration=best))
    assert np.mean((p_default - yv) ** 2) == pytest.approx(min(l2), rel=1e-9)
    p_all = b.predict(Xv, num_iteration=-1)
    np.testing.assert_array_equal(p_all, b.predict(Xv, num_iteration=b.current_iteration()))
    assert not np.array_equal(p_all, p_default)
    p_first = b.predict(Xv, num_iteration=1)
    assert np.mean((p_first - yv) ** 2) == pytest.approx(l2[0], rel=1e-9)
    # saved model keeps best_iteration
    b2 = dgbdt.Booster(model_str=b.model_to_string())
    assert b2.best_iteration == best
    np.testing.assert_array_equal(b2.predict(Xv), p_default)


def test_early_stopping_from_params():
    X, y, Xv, yv = _noisy_split()
    ds = dgbdt.Dataset(X, y)
    b = dgbdt.train(
        {
            **QUIET,
            "num_leaves": 31,
            "min_data_in_leaf": 2,
            "learning_rate": 0.5,
            "early_stopping_rounds": 3,
        },
        ds,
        200,
        valid_sets=[ds.create_valid(Xv, yv)],
    )
    assert 1 <= b.best_iteration and b.current_iteration() == b.best_iteration


def test_log_evaluation_format(capsys):
    X, y, Xv, yv = _noisy_split()
    ds = dgbdt.Dataset(X, y)
    dgbdt.train(
        {**QUIET, "num_leaves": 7, "metric": "l2,l1"},
        ds,
        4,
        valid_sets=[ds.create_valid(Xv, yv)],
        valid_names=["val"],
        callbacks=[dgbdt.log_evaluation(period=2)],
    )
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.strip()]
    assert len(lines) == 2, lines
    num = r"[-+0-9.e]+"
    for it, line in zip((2, 4), lines, strict=True):
        assert re.fullmatch(rf"\[{it}\]\tval's l2: {num}\tval's l1: {num}", line), line


# --------------------------------------------------------------------------- #
# custom objective and metric
# --------------------------------------------------------------------------- #
def test_custom_objective_l2_equals_regression():
    X, y = _regression_data(n=400)

    def l2(preds, train_data):
        assert isinstance(train_data, dgbdt.Dataset)
        return preds - train_data.get_label(), np.ones_like(preds)

    b_custom = _train({"objective": l2, "num_leaves": 7}, X, y)
    b_builtin = _train(
        {"objective": "regression", "boost_from_average": False, "num_leaves": 7}, X, y
    )
    np.testing.assert_allclose(b_custom.predict(X), b_builtin.predict(X), rtol=1e-12, atol=1e-12)
    assert [t["split_feature"] for t in _trees(b_custom)] == [
        t["split_feature"] for t in _trees(b_builtin)
    ]
    # the custom model predicts raw scores
    np.testing.assert_array_equal(b_custom.predict(X), b_custom.predict(X, raw_score=True))


def test_custom_objective_bad_shape_is_an_error():
    X, y = _regression_data(n=100)
    with pytest.raises(ValueError, match="shape"):
        _train({"objective": lambda p, d: (np.zeros(3), np.ones(3))}, X, y)


def test_feval_lightgbm_signature_and_early_stopping():
    X, y = _binary_data(n=500)
    Xv, yv = _binary_data(n=300, seed=14)
    calls = []

    def accuracy(preds, eval_data):
        calls.append(preds.copy())
        assert isinstance(eval_data, dgbdt.Dataset)
        return "acc", float(np.mean((preds > 0.5) == eval_data.get_label())), True

    def neg_one(preds, eval_data):
        return [("one", 1.0, False), ("two", 2.0, True)]

    ds = dgbdt.Dataset(X, y)
    res = {}
    b = dgbdt.train(
        {**QUIET, "objective": "binary", "metric": "None", "num_leaves": 7},
        ds,
        8,
        valid_sets=[ds.create_valid(Xv, yv)],
        valid_names=["v"],
        feval=[accuracy, neg_one],
        callbacks=[dgbdt.record_evaluation(res)],
    )
    assert set(res["v"]) == {"acc", "one", "two"}
    assert len(calls) == 8
    # built-in objective: feval sees transformed predictions (probabilities)
    assert np.all((calls[-1] >= 0) & (calls[-1] <= 1))
    np.testing.assert_allclose(calls[-1], b.predict(Xv, num_iteration=8), rtol=1e-12)
    for k in (1, 8):
        acc = np.mean((b.predict(Xv, num_iteration=k) > 0.5) == yv)
        assert res["v"]["acc"][k - 1] == pytest.approx(acc)
    assert res["v"]["two"] == [2.0] * 8

    # early stopping on a higher-is-better feval
    ds = dgbdt.Dataset(X, y)
    b = dgbdt.train(
        {
            **QUIET,
            "objective": "binary",
            "metric": "None",
            "num_leaves": 31,
            "min_data_in_leaf": 2,
            "learning_rate": 0.8,
        },
        ds,
        300,
        valid_sets=[ds.create_valid(Xv, yv)],
        feval=accuracy,
        callbacks=[dgbdt.early_stopping(5, verbose=False)],
    )
    assert b.current_iteration() == b.best_iteration  # cut at the best (LightGBM)
    assert b.best_score["valid_0"]["acc"] == pytest.approx(np.mean((b.predict(Xv) > 0.5) == yv))


# --------------------------------------------------------------------------- #
# continued training
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("objective", ["regression", "binary", "multiclass"])
def test_init_model_continuation_equals_longer_training(objective, tmp_path):
    if objective == "multiclass":
        X, y = _multiclass_data(n=400)
        params = {"objective": objective, "num_class": 3}
    elif objective == "binary":
        X, y = _binary_data(n=400)
        params = {"objective": objective}
    else:
        X, y = _regression_data(n=400)
        params = {"objective": objective}
    params.update(QUIET, num_leaves=7)
    b20 = dgbdt.train(params, dgbdt.Dataset(X, y), 20)
    b10 = dgbdt.train(params, dgbdt.Dataset(X, y), 10)
    p10 = b10.predict(X, raw_score=True)
    b_cont = dgbdt.train(params, dgbdt.Dataset(X, y), 10, init_model=b10)
    assert b_cont.current_iteration() == 20
    np.testing.assert_allclose(
        b_cont.predict(X, raw_score=True), b20.predict(X, raw_score=True), rtol=1e-10, atol=1e-12
    )
    # the init model is not modified
    np.testing.assert_array_equal(b10.predict(X, raw_score=True), p10)
    assert b10.current_iteration() == 10
    # from a file too
    path = tmp_path / "ten.json"
    b10.save_model(path)
    b_file = dgbdt.train(params, dgbdt.Dataset(X, y), 10, init_model=str(path))
    np.testing.assert_allclose(
        b_file.predict(X, raw_score=True), b20.predict(X, raw_score=True), rtol=1e-10, atol=1e-12
    )


# --------------------------------------------------------------------------- #
# randomness
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize(
    "sampling",
    [
        {"bagging_fraction": 0.6, "bagging_freq": 1},
        {"feature_fraction": 0.6},
    ],
)
def test_sampling_reproducible_and_seed_dependent(sampling):
    X, y = _regression_data(n=400, n_features=8)
    params = {"num_leaves": 7, **sampling}
    a = _train({**params, "seed": 1}, X, y)
    b = _train({**params, "seed": 1}, X, y)
    c = _train({**params, "seed": 2}, X, y)
    full = _train({"num_leaves": 7}, X, y)
    _assert_same_model(a, b, X)
    assert _trees(a) != _trees(c)
    assert _trees(a) != _trees(full)
    key = "bagging_seed" if "bagging_freq" in sampling else "feature_fraction_seed"
    d = _train({**params, "seed": 1, key: 12345}, X, y)
    assert _trees(a) != _trees(d)
    if "feature_fraction" in sampling:
        # every tree uses only round(0.6 * 8) = 5 features
        for t in _trees(a):
            assert len(set(t["split_feature"])) <= 5


def test_bagging_uses_a_subset_of_rows():
    X, y = _regression_data(n=400)
    b = _train(
        {"num_leaves": 4, "bagging_fraction": 0.5, "bagging_freq": 1, "min_data_in_leaf": 1},
        X,
        y,
        rounds=1,
    )
    root_count = sum(_trees(b)[0]["leaf_count"])
    assert 120 <= root_count <= 280


# --------------------------------------------------------------------------- #
# parameters
# --------------------------------------------------------------------------- #
def test_parameter_aliases_give_the_same_model():
    X, y = _regression_data(n=400, n_features=8)
    canonical = {
        "num_iterations": 6,
        "learning_rate": 0.3,
        "min_data_in_leaf": 7,
        "lambda_l2": 2.0,
        "bagging_fraction": 0.7,
        "bagging_freq": 1,
        "feature_fraction": 0.7,
        "seed": 11,
        "num_threads": 1,
        "num_leaves": 9,
    }
    aliases = {
        "n_estimators": 6,
        "eta": 0.3,
        "min_child_samples": 7,
        "reg_lambda": 2.0,
        "subsample": 0.7,
        "subsample_freq": 1,
        "colsample_bytree": 0.7,
        "random_state": 11,
        "n_jobs": 1,
        "max_leaves": 9,
    }
    a = dgbdt.train({**QUIET, **canonical}, dgbdt.Dataset(X, y))
    b = dgbdt.train({**QUIET, **aliases}, dgbdt.Dataset(X, y))
    assert a.current_iteration() == 6
    _assert_same_model(a, b, X)
    # and the settings matter (the comparison can fail)
    c = dgbdt.train({**QUIET, **canonical, "seed": 12}, dgbdt.Dataset(X, y))
    assert _trees(a) != _trees(c)


@pytest.mark.parametrize(
    "bad, closest",
    [
        ("learning_rat", "learning_rate"),
        ("num_leavs", "num_leaves"),
        ("min_data_in_lef", "min_data_in_leaf"),
    ],
)
def test_unknown_parameter_names_closest(bad, closest, capsys):
    # LightGBM warns about an unknown parameter and trains on (dgbdt adds the hint)
    X, y = _regression_data(n=50)
    _train({bad: 1, "verbosity": 0}, X, y, rounds=1)
    out = capsys.readouterr().out
    assert f"[LightGBM] [Warning] Unknown parameter: {bad} (Did you mean '{closest}'" in out


@pytest.mark.parametrize(
    "params, exc, words",
    [
        ({"num_leaves": 1}, ValueError, ["num_leaves", "1"]),
        ({"learning_rate": -0.1}, ValueError, ["learning_rate", "-0.1"]),
        ({"bagging_fraction": 1.5}, ValueError, ["bagging_fraction", "1.5"]),
        ({"objective": "hinge"}, ValueError, ["objective", "hinge"]),
        ({"num_leaves": "many"}, ValueError, ["num_leaves", "many"]),
        ({"num_leaves": 2.5}, ValueError, ["num_leaves", "2.5"]),
        ({"min_data_in_leaf": -1}, ValueError, ["min_data_in_leaf", "-1"]),
        ({"num_leaves": [3]}, TypeError, ["num_leaves"]),
        ({"objective": "multiclass"}, ValueError, ["num_class"]),
    ],
)
def test_bad_parameter_values(params, exc, words):
    X, y = _regression_data(n=50)
    with pytest.raises(exc) as info:
        _train(params, X, y, rounds=1)
    for w in words:
        assert w in str(info.value)


def test_bad_labels():
    X, y = _regression_data(n=50)
    with pytest.raises(ValueError, match="label"):
        _train({"objective": "binary"}, X, y, rounds=1)
    with pytest.raises(ValueError, match="label"):
        _train({"objective": "multiclass", "num_class": 3}, X, np.full(50, 3.0), rounds=1)


def test_wrong_feature_count_at_predict():
    X, y = _regression_data(n=100)
    b = _train({"num_leaves": 4}, X, y, rounds=2)
    for bad in (X[:, :3], np.hstack([X, X])):
        # LightGBM's words
        with pytest.raises(ValueError, match=r"is not the same as it was in training data \(5\)"):
            b.predict(bad)
    with pytest.raises(ValueError, match="5"):
        b.predict(sp.csr_matrix(X[:, :4]))


# --------------------------------------------------------------------------- #
# tree shape
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("max_depth", [1, 2, 3])
def test_max_depth_respected(max_depth):
    X, y = _regression_data(n=500)
    b = _train({"num_leaves": 31, "max_depth": max_depth, "min_data_in_leaf": 1}, X, y, rounds=5)
    depths = _tree_depths(b)
    assert max(depths) == max_depth
    for t in _trees(b):
        assert t["num_leaves"] <= 2**max_depth


@pytest.mark.parametrize("num_leaves", [2, 5, 17])
def test_num_leaves_respected(num_leaves):
    X, y = _regression_data(n=500)
    b = _train({"num_leaves": num_leaves, "min_data_in_leaf": 1}, X, y, rounds=3)
    counts = [t["num_leaves"] for t in _trees(b)]
    assert counts == [num_leaves] * 3  # plenty of data: every tree fills up
    for t in _trees(b):
        assert sum(t["leaf_count"]) == 500


def test_unlimited_depth_grows_deep():
    X, y = _regression_data(n=500)
    b = _train({"num_leaves": 31, "min_data_in_leaf": 1}, X, y, rounds=2)
    assert max(_tree_depths(b)) > 5  # leaf-wise growth is not depth-limited


def test_min_data_in_leaf_respected():
    X, y = _regression_data(n=500)
    b = _train({"num_leaves": 63, "min_data_in_leaf": 40}, X, y, rounds=3)
    for t in _trees(b):
        assert min(t["leaf_count"]) >= 40


# --------------------------------------------------------------------------- #
# feature importance, determinism, pred_leaf
# --------------------------------------------------------------------------- #
def test_feature_importance():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(500, 6))
    y = 3 * X[:, 4] + 0.3 * X[:, 1] + 0.1 * rng.normal(size=500)
    b = _train({"num_leaves": 7}, X, y, rounds=10)
    split = b.feature_importance("split")
    gain = b.feature_importance("gain")
    assert split.shape == (6,) and gain.shape == (6,)
    assert np.issubdtype(split.dtype, np.integer)
    assert split.sum() == sum(t["num_leaves"] - 1 for t in _trees(b))
    assert int(np.argmax(gain)) == 4
    assert np.all(gain >= 0) and gain[4] > 0.5 * gain.sum()
    total_gain = sum(sum(t["split_gain"]) for t in _trees(b))
    assert gain.sum() == pytest.approx(total_gain)
    with pytest.raises(ValueError, match="importance_type"):
        b.feature_importance("cover")


@pytest.mark.parametrize(
    "layout",
    [{}, {"force_row_wise": True}, {"force_col_wise": True}],
    ids=["auto", "row_wise", "col_wise"],
)
def test_num_threads_does_not_change_the_model(layout):
    X, y = _binary_data(n=3000, n_features=10)
    X[::7, 3] = np.nan
    params = {
        "objective": "binary",
        "num_leaves": 15,
        "bagging_fraction": 0.8,
        "bagging_freq": 1,
        "feature_fraction": 0.8,
        **layout,
    }
    a = _train({**params, "num_threads": 1}, X, y, rounds=5)
    b = _train({**params, "num_threads": 2}, X, y, rounds=5)
    _assert_same_model(a, b, X)


def test_histogram_layout_does_not_change_the_model():
    X, y = _regression_data(n=2000, n_features=8)
    X[::5, 2] = np.nan
    params = {"num_leaves": 15, "max_bin": 63}
    a = _train({**params, "force_row_wise": True}, X, y, rounds=5)
    b = _train({**params, "force_col_wise": True}, X, y, rounds=5)
    _assert_same_model(a, b, X)


def test_pred_leaf():
    X, y = _multiclass_data(n=300)
    b = _train({"objective": "multiclass", "num_class": 3, "num_leaves": 6}, X, y, rounds=4)
    leaves = b.predict(X, pred_leaf=True)
    assert leaves.shape == (300, 12)
    assert np.issubdtype(leaves.dtype, np.integer)
    trees = _trees(b)
    for j, t in enumerate(trees):
        assert leaves[:, j].min() >= 0 and leaves[:, j].max() < t["num_leaves"]
    # the leaves' values sum to the raw score
    raw = np.tile(np.asarray(b.dump_model(format="json")["init_score"], float), (300, 1))
    for j, t in enumerate(trees):
        raw[:, j % 3] += np.asarray(t["leaf_value"])[leaves[:, j]]
    np.testing.assert_allclose(raw, b.predict(X, raw_score=True), rtol=1e-12, atol=1e-12)
    # training rows land where the tree put them
    assert sorted(np.bincount(leaves[:, 0], minlength=trees[0]["num_leaves"]).tolist()) == sorted(
        int(c) for c in trees[0]["leaf_count"]
    )
    assert b.predict(X, pred_leaf=True, num_iteration=2).shape == (300, 6)


# --------------------------------------------------------------------------- #
# missing values
# --------------------------------------------------------------------------- #
def test_nan_as_signal_is_used():
    rng = np.random.default_rng(8)
    n = 600
    X = rng.normal(size=(n, 4))
    missing = rng.random(n) < 0.3
    X[missing, 2] = np.nan
    y = np.where(missing, 3.0, 0.0) + 0.1 * rng.normal(size=n)
    b = _train({"num_leaves": 4}, X, y, rounds=20)
    first = _trees(b)[0]
    assert first["split_feature"][0] == 2
    pred = b.predict(X)
    assert np.mean((pred - y) ** 2) < 0.05
    assert pred[missing].mean() > 2.5 and abs(pred[~missing].mean()) < 0.5
    # new rows: NaN goes the NaN way, whatever the other values are
    Xt = rng.normal(size=(50, 4))
    Xt[:25, 2] = np.nan
    pt = b.predict(Xt)
    assert pt[:25].min() > 2.5 and pt[25:].max() < 0.5


def test_nan_in_unseen_feature_follows_zero():
    # No NaN at training time: NaN at prediction time behaves like 0.0 (LightGBM)
    rng = np.random.default_rng(9)
    X = rng.normal(size=(400, 2))
    y = (X[:, 0] > 0.5).astype(float) * 2.0
    b = _train({"num_leaves": 2}, X, y, rounds=1)
    Xt = np.array([[np.nan, 0.0], [0.0, 0.0], [2.0, 0.0]])
    p = b.predict(Xt)
    assert p[0] == p[1] != p[2]


# -- a Dataset reused with other binning params ---------------------------------------------


def _reuse_data():
    rng = np.random.default_rng(8)
    X = rng.normal(size=(1500, 4))
    return X, X[:, 0] + 0.3 * rng.normal(size=1500)


def test_rebinning_a_freed_dataset_is_an_error_naming_the_parameter():
    X, y = _reuse_data()
    ds = dgbdt.Dataset(X, y)
    dgbdt.train({"max_bin": 255, "verbosity": -1}, ds, 3)
    with pytest.raises(ValueError, match=r"max_bin=15 \(was 255\).*free_raw_data=False"):
        dgbdt.train({"max_bin": 15, "verbosity": -1}, ds, 3)
    # the seed picks the bin sample only when it is not every row: no error
    dgbdt.train({"max_bin": 255, "seed": 9, "verbosity": -1}, ds, 3)


def test_a_dataset_keeping_raw_data_is_rebinned_with_its_validation_set():
    X, y = _reuse_data()
    ds = dgbdt.Dataset(X, y, free_raw_data=False)
    valid = dgbdt.Dataset(X[:300], y[:300], reference=ds, free_raw_data=False)
    dgbdt.train({"max_bin": 255, "verbosity": -1}, ds, 3, valid_sets=[valid])
    params = {"max_bin": 15, "verbosity": -1, "force_col_wise": True}
    reused = dgbdt.train(params, ds, 5, valid_sets=[valid])
    fresh_ds = dgbdt.Dataset(X, y)
    fresh = dgbdt.train(
        params, fresh_ds, 5, valid_sets=[dgbdt.Dataset(X[:300], y[:300], reference=fresh_ds)]
    )
    assert reused.model_to_string() == fresh.model_to_string()
    assert ds.layout == "col" and valid.bin_mapper is ds.bin_mapper
    assert ds.bin_mapper.feature_offsets[-1] <= 4 * 15


def test_dataset_params_are_used_and_train_params_override_them():
    X, y = _reuse_data()
    ds = dgbdt.Dataset(X, y, params={"max_bin": 15})
    dgbdt.train({"verbosity": -1}, ds, 2)
    assert ds.bin_mapper.feature_offsets[-1] <= 4 * 15
    pre = dgbdt.Dataset(X, y, params={"max_bin": 15})
    pre.construct()
    dgbdt.train({"verbosity": -1}, pre, 2)  # no "max_bin=255" asked of it
    ds = dgbdt.Dataset(X, y, params={"max_bin": 15})
    dgbdt.train({"verbosity": -1, "max_bin": 31}, ds, 2)
    assert 4 * 15 < ds.bin_mapper.feature_offsets[-1] <= 4 * 31


def test_continuing_a_model_whose_trees_have_other_bins():
    # m2 holds m1's trees (255 bins) and its own (15 bins): it must never be
    # replayed on bins, only predicted from raw values.
    X, y = _reuse_data()
    p = {
        "objective": "regression",
        "verbosity": -1,
        "num_leaves": 7,
        "metric": "l2",
        "is_provide_training_metric": True,
    }
    m1 = dgbdt.train(p, dgbdt.Dataset(X, y), 5)
    m2 = dgbdt.train({**p, "max_bin": 15}, dgbdt.Dataset(X, y), 3, init_model=m1)
    freed = dgbdt.Dataset(X, y)
    freed.construct({**p, "max_bin": 15})
    with pytest.raises(ValueError, match="init_model was binned differently"):
        dgbdt.train({**p, "max_bin": 15}, freed, 1, init_model=m2)
    evals = {}
    m3 = dgbdt.train(
        {**p, "max_bin": 15},
        dgbdt.Dataset(X, y),
        1,
        init_model=m2,
        callbacks=[dgbdt.record_evaluation(evals)],
    )
    assert evals["training"]["l2"][-1] == pytest.approx(np.mean((m3.predict(X) - y) ** 2))


def test_a_validation_set_reused_with_another_training_set():
    X, y = _reuse_data()
    valid = dgbdt.Dataset(X[:300], y[:300], free_raw_data=False)
    a = dgbdt.Dataset(X[:1000], y[:1000])
    dgbdt.train({"verbosity": -1, "max_bin": 63}, a, 2, valid_sets=[valid])
    b = dgbdt.Dataset(X[500:], y[500:])
    evals = {}
    dgbdt.train(
        {"verbosity": -1, "metric": "l2"},
        b,
        3,
        valid_sets=[valid],
        callbacks=[dgbdt.record_evaluation(evals)],
    )
    assert valid.bin_mapper is b.bin_mapper
    fresh = {}
    b2 = dgbdt.Dataset(X[500:], y[500:])
    dgbdt.train(
        {"verbosity": -1, "metric": "l2"},
        b2,
        3,
        valid_sets=[dgbdt.Dataset(X[:300], y[:300], reference=b2)],
        callbacks=[dgbdt.record_evaluation(fresh)],
    )
    assert evals["valid_0"]["l2"] == fresh["valid_0"]["l2"]
    # raw data freed: cannot be re-binned for another training set
    freed_valid = dgbdt.Dataset(X[:300], y[:300])
    dgbdt.train({"verbosity": -1, "max_bin": 63}, a, 1, valid_sets=[freed_valid])
    with pytest.raises(ValueError, match="not those of its reference"):
        dgbdt.train({"verbosity": -1}, b, 1, valid_sets=[freed_valid])


def test_column_vector_labels_are_flattened_and_other_shapes_refused():
    X, y = _reuse_data()
    with pytest.warns(UserWarning, match="column vector"):
        ds = dgbdt.Dataset(X, y.reshape(-1, 1), weight=np.ones((len(y), 1)))
    flat = dgbdt.train({"verbosity": -1}, dgbdt.Dataset(X, y, weight=np.ones(len(y))), 3)
    assert dgbdt.train({"verbosity": -1}, ds, 3).model_to_string() == flat.model_to_string()
    with pytest.raises(ValueError, match=r"label must be 1-D .* shape \(1500, 2\)"):
        dgbdt.Dataset(X, np.stack([y, y], axis=1))
    with pytest.raises(ValueError, match="labels must be finite"):
        dgbdt.Dataset(X, y).set_label(np.full(len(y), np.nan))
    with pytest.raises(ValueError, match="weights must be finite and >= 0"):
        dgbdt.Dataset(X, y).set_weight(-np.ones(len(y)))


def test_repeated_feature_names_are_refused():
    pd = pytest.importorskip("pandas")
    X, y = _reuse_data()
    df = pd.DataFrame(X, columns=["a", "b", "a", "c"])
    with pytest.raises(ValueError, match="'a' appears more than once"):
        dgbdt.Dataset(df, y)


def test_iteration_ranges_are_clamped_as_in_lightgbm():
    X, y = _reuse_data()
    valid = dgbdt.Dataset(X[:300], y[:300])
    booster = dgbdt.train(
        {"verbosity": -1, "num_leaves": 4, "early_stopping_round": 3, "learning_rate": 0.5},
        dgbdt.Dataset(X[300:], y[300:]),
        40,
        valid_sets=[valid],
        keep_training_booster=True,  # the trees after the best stay (LightGBM)
    )
    total, best = booster.current_iteration(), booster.best_iteration
    assert 0 < best < total
    raw = lambda **kw: booster.predict(X, raw_score=True, **kw)  # noqa: E731
    # a negative start is 0 (it used to read before the first tree: a crash)
    np.testing.assert_array_equal(raw(start_iteration=-2), raw(start_iteration=0))
    # from a start > 0 without num_iteration: every later iteration, not best ones
    np.testing.assert_array_equal(raw(start_iteration=2), raw(start_iteration=2, num_iteration=-1))
    assert booster.predict(X, pred_leaf=True, start_iteration=total + 5).shape == (len(X), 0)
    # a saved prefix shorter than the best iteration records no best iteration
    short = dgbdt.Booster(model_str=booster.model_to_string(num_iteration=best - 1))
    assert short.best_iteration == 0 and short.current_iteration() == best - 1


def test_infinite_values_train_save_and_predict_like_their_bins():
    # +inf in training used to give bounds of +inf: a model that could not be
    # saved (strict JSON) and raw predictions that disagreed with the bins.
    import pickle

    rng = np.random.default_rng(0)
    x = rng.choice(np.array([0.0, 1.0, 2.0, np.inf, -np.inf, np.nan]), 600)
    y = np.where(np.isposinf(x), 10.0, np.where(np.isneginf(x), -5.0, np.nan_to_num(x, nan=3.0)))
    X = x[:, None]
    ds = dgbdt.Dataset(X, y, free_raw_data=False)
    evals = {}
    booster = dgbdt.train(
        {
            "objective": "regression",
            "num_leaves": 8,
            "min_data_in_leaf": 5,
            "min_data_in_bin": 1,
            "learning_rate": 1.0,
            "metric": "l2",
            "verbosity": -1,
        },
        ds,
        3,
        valid_sets=[ds],
        valid_names=["train"],
        callbacks=[dgbdt.record_evaluation(evals)],
    )
    from_raw = np.mean((booster.predict(X) - y) ** 2)
    assert evals["train"]["l2"][-1] == pytest.approx(from_raw, abs=1e-12)
    # LightGBM's bins: +inf shares the bin of the largest finite value (2.0),
    # -inf has one of its own (tests/test_inf_bins.py), so the model fits every
    # bin's mean and nothing finer
    top = (x == 2.0) | np.isposinf(x)
    expected = np.where(top, y[top].mean(), y)
    assert from_raw == pytest.approx(np.mean((expected - y) ** 2), abs=1e-6)
    again = pickle.loads(pickle.dumps(booster))
    np.testing.assert_array_equal(again.predict(X), booster.predict(X))
    np.testing.assert_allclose(
        booster.predict(np.array([[np.inf], [2.0], [-np.inf]])),
        [y[top].mean(), y[top].mean(), -5.0],
        atol=1e-6,
    )


def test_construct_without_params_keeps_the_bins():
    X, y = _reuse_data()
    ds = dgbdt.Dataset(X, y)
    dgbdt.train({"verbosity": -1, "max_bin": 15}, ds, 2)
    bins = ds.bin_mapper
    assert ds.construct() is ds and ds.bin_mapper is bins
    valid = ds.create_valid(X[:100], y[:100]).construct()
    assert valid.bin_mapper is bins


class _Tagged(dgbdt.Booster):
    """A user's Booster subclass whose __init__ needs more than Booster's."""

    def __init__(self, tag, params=None, train_set=None, **kwargs):
        super().__init__(params, train_set, **kwargs)
        self.tag = tag


def test_a_booster_subclass_with_its_own_arguments_trains_copies_and_refits():
    rng = np.random.default_rng(3)
    X = rng.random((300, 3))
    params = {"verbose": -1, "num_leaves": 4}
    tagged = _Tagged("mine", params, dgbdt.Dataset(X, X[:, 0]))
    tagged.update()
    tagged.update()
    assert tagged.tag == "mine" and tagged.num_trees() == 2
    plain = dgbdt.train(params, dgbdt.Dataset(X, X[:, 0]), 2)
    assert np.array_equal(tagged.predict(X), plain.predict(X))
    for other in (copy.copy(tagged), copy.deepcopy(tagged), tagged.refit(X, X[:, 0])):
        assert type(other) is dgbdt.Booster  # as before Model was split off
    assert np.array_equal(copy.copy(tagged).predict(X), plain.predict(X))


def test_the_json_reader_names_a_lightgbm_text_model_as_such():
    from dgbdt.models.json_file import ModelFormatError, model_from_json
    from dgbdt.models.loader import model_from_text

    X = np.random.default_rng(4).random((200, 3))
    text = dgbdt.train({"verbose": -1}, dgbdt.Dataset(X, X[:, 0]), 2).model_to_string(
        format="lightgbm"
    )
    with pytest.raises(ModelFormatError, match="a LightGBM text model"):
        model_from_json(text)
    assert len(model_from_text(text)[1]) == 2
