"""The scikit-learn estimators: scikit-learn's own estimator checks, label and
input handling, early stopping, persistence, and agreement with LightGBM."""

import pickle
import warnings

import joblib
import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_breast_cancer, make_classification, make_regression
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import train_test_split
from sklearn.utils.estimator_checks import parametrize_with_checks

import dgbdt
from dgbdt import DGBDTClassifier, DGBDTRegressor


# No check is expected to fail.  (Sample-weight equivalence -- weight 2 == the
# row repeated, weight 0 == the row dropped -- does not hold in general, as in
# LightGBM: zero-weight rows still count for min_data_in_leaf and for the bin
# boundaries; scikit-learn's checks of it pass on their small data.  Marks
# are strict (pyproject's xfail_strict): a check that passes cannot hide.)
@parametrize_with_checks([DGBDTClassifier(), DGBDTRegressor()])
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


# --------------------------------------------------------------------------- #
# Data
# --------------------------------------------------------------------------- #
def _binary(n=400, n_features=6, seed=0):
    return make_classification(
        n_samples=n, n_features=n_features, n_informative=4, random_state=seed
    )


def _multiclass(n=450, seed=0):
    return make_classification(
        n_samples=n,
        n_features=8,
        n_informative=5,
        n_classes=3,
        n_clusters_per_class=1,
        random_state=seed,
    )


def _regression(n=400, seed=0):
    return make_regression(n_samples=n, n_features=6, n_informative=4, noise=1.0, random_state=seed)


# --------------------------------------------------------------------------- #
# Parameters
# --------------------------------------------------------------------------- #
def test_defaults_match_lightgbm():
    lgb = pytest.importorskip("lightgbm")
    for ours, theirs in (
        (DGBDTClassifier(), lgb.LGBMClassifier()),
        (DGBDTRegressor(), lgb.LGBMRegressor()),
    ):
        mine = ours.get_params()
        for key, value in theirs.get_params().items():
            if key in mine:
                assert mine[key] == value, key
    expected = {
        "boosting_type": "gbdt",
        "num_leaves": 31,
        "max_depth": -1,
        "learning_rate": 0.1,
        "n_estimators": 100,
        "subsample_for_bin": 200000,
        "objective": None,
        "class_weight": None,
        "min_split_gain": 0.0,
        "min_child_weight": 1e-3,
        "min_child_samples": 20,
        "subsample": 1.0,
        "subsample_freq": 0,
        "colsample_bytree": 1.0,
        "reg_alpha": 0.0,
        "reg_lambda": 0.0,
        "random_state": None,
        "n_jobs": None,
        "max_bin": 255,
        "tree_learner": "serial",
        "verbosity": -1,
        "importance_type": "split",
    }
    assert DGBDTRegressor().get_params() == expected


def test_kwargs_are_params():
    est = DGBDTRegressor(n_estimators=5, min_data_in_bin=1, lambda_l2=2.0)
    params = est.get_params()
    assert params["min_data_in_bin"] == 1 and params["lambda_l2"] == 2.0
    cloned = clone(est)
    assert cloned.get_params() == params
    assert "lambda_l2=2.0" in repr(est)
    est.set_params(lambda_l2=3.0, num_leaves=7)
    assert est.get_params()["lambda_l2"] == 3.0 and est.num_leaves == 7
    X, y = _regression(200)
    est.fit(X, y)
    assert est.booster_.params["lambda_l2"] == 3.0
    assert est.booster_.params["num_leaves"] == 7
    assert est.booster_.params["num_iterations"] == 5


def test_unknown_kwarg_is_named_at_fit(capsys):
    # LightGBM logs an unknown parameter (a warning at verbosity >= 0) and trains on
    X, y = _regression(50)
    est = DGBDTRegressor(num_leavez=3, verbosity=0)  # constructing and get_params never validate
    assert est.get_params()["num_leavez"] == 3
    est.fit(X, y)
    assert "[LightGBM] [Warning] Unknown parameter: num_leavez" in capsys.readouterr().out


def test_params_reach_the_engine():
    X, y = _regression(200)
    est = DGBDTRegressor(
        n_estimators=3,
        num_leaves=5,
        max_depth=3,
        learning_rate=0.2,
        subsample_for_bin=1000,
        min_split_gain=0.1,
        min_child_weight=0.5,
        min_child_samples=7,
        subsample=0.8,
        subsample_freq=1,
        colsample_bytree=0.5,
        reg_alpha=0.1,
        reg_lambda=0.2,
        random_state=5,
        n_jobs=1,
        max_bin=63,
    ).fit(X, y)
    p = est.booster_.config  # the resolved parameters (Booster.params: as given, LightGBM's)
    assert (p["num_leaves"], p["max_depth"], p["learning_rate"]) == (5, 3, 0.2)
    assert (p["bin_construct_sample_cnt"], p["min_gain_to_split"]) == (1000, 0.1)
    assert (p["min_sum_hessian_in_leaf"], p["min_data_in_leaf"]) == (0.5, 7)
    assert (p["bagging_fraction"], p["bagging_freq"], p["feature_fraction"]) == (0.8, 1, 0.5)
    assert (p["lambda_l1"], p["lambda_l2"], p["seed"], p["num_threads"]) == (0.1, 0.2, 5, 1)
    assert p["max_bin"] == 63 and p["objective"] == "regression"
    assert est.n_estimators_ == 3 and est.objective_ == "regression"


@pytest.mark.parametrize("n_jobs", [None, -1, 1, -2])
def test_n_jobs(n_jobs):
    X, y = _binary(100)
    est = DGBDTClassifier(n_estimators=2, n_jobs=n_jobs).fit(X, y)
    expected = {None: 0, -1: 0, 1: 1}.get(n_jobs)
    if expected is not None:
        assert est.booster_.params["num_threads"] == expected
    else:
        assert est.booster_.params["num_threads"] >= 1


def test_random_state_instance_is_not_modified():
    X, y = _binary(100)
    rs = np.random.RandomState(0)
    est = DGBDTClassifier(n_estimators=2, random_state=rs).fit(X, y)
    assert est.random_state is rs
    assert isinstance(est.booster_.params["seed"], int)


def test_unfitted():
    with pytest.raises(NotFittedError):
        DGBDTClassifier().predict(np.zeros((2, 3)))
    with pytest.raises(NotFittedError):
        DGBDTRegressor().feature_importances_  # noqa: B018
    assert not hasattr(DGBDTRegressor(), "feature_importances_")


# --------------------------------------------------------------------------- #
# Labels and classes
# --------------------------------------------------------------------------- #
def test_string_labels_round_trip():
    X, y = _binary(300)
    labels = np.array(["no", "yes"])[y]
    est = DGBDTClassifier(n_estimators=20).fit(X, labels)
    assert list(est.classes_) == ["no", "yes"] and est.n_classes_ == 2
    pred = est.predict(X)
    assert pred.dtype == labels.dtype and set(pred) <= {"no", "yes"}
    assert np.mean(pred == labels) > 0.9
    assert est.booster_.params["objective"] == "binary" and est.objective_ == "binary"

    Xm, ym = _multiclass(300)
    names = np.array(["cat", "dog", "emu"], dtype=object)[ym]
    est = DGBDTClassifier(n_estimators=20).fit(Xm, names)
    assert list(est.classes_) == ["cat", "dog", "emu"] and est.n_classes_ == 3
    assert est.booster_.params["objective"] == "multiclass"
    assert est.booster_.params["num_class"] == 3
    assert np.mean(est.predict(Xm) == names) > 0.9


def test_non_contiguous_integer_labels():
    X, y = _multiclass(300)
    labels = np.array([-5, 10, 42])[y]
    est = DGBDTClassifier(n_estimators=10).fit(X, labels)
    assert list(est.classes_) == [-5, 10, 42]
    assert set(np.unique(est.predict(X))) <= {-5, 10, 42}


def test_single_class_raises():
    X = np.random.default_rng(0).normal(size=(30, 3))
    with pytest.raises(ValueError, match="class"):
        DGBDTClassifier().fit(X, np.ones(30))


def test_regression_target_rejected_by_classifier():
    X, y = _regression(50)
    with pytest.raises(ValueError, match="Unknown label type"):
        DGBDTClassifier().fit(X, y)


def test_multiclass_predict_proba_sums_to_one():
    X, y = _multiclass()
    est = DGBDTClassifier(n_estimators=30).fit(X, y)
    proba = est.predict_proba(X)
    assert proba.shape == (len(X), 3)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)
    assert np.all(proba >= 0)
    np.testing.assert_array_equal(est.classes_[proba.argmax(axis=1)], est.predict(X))
    raw = est.predict(X, raw_score=True)
    assert raw.shape == (len(X), 3)
    np.testing.assert_allclose(est.decision_function(X), raw)
    leaves = est.predict(X, pred_leaf=True)
    assert leaves.shape == (len(X), 3 * est.n_estimators_)


def test_binary_predict_proba_and_decision_function():
    X, y = _binary()
    est = DGBDTClassifier(n_estimators=20).fit(X, y)
    proba = est.predict_proba(X)
    assert proba.shape == (len(X), 2)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    raw = est.decision_function(X)
    assert raw.shape == (len(X),)
    np.testing.assert_allclose(proba[:, 1], 1.0 / (1.0 + np.exp(-raw)))
    np.testing.assert_array_equal(est.predict(X), (raw > 0).astype(int))


def test_class_weight():
    X, y = _binary(300)
    unweighted = DGBDTClassifier(n_estimators=20).fit(X, y)
    heavy = DGBDTClassifier(n_estimators=20, class_weight={0: 100.0, 1: 0.01}).fit(X, y)
    assert np.mean(heavy.predict(X) == 0) > np.mean(unweighted.predict(X) == 0)
    # "balanced" on balanced-ish data with explicit weights: same as multiplying them in.
    y_unbal = np.r_[np.zeros(250), np.ones(50)].astype(int)
    balanced = DGBDTClassifier(n_estimators=5, class_weight="balanced").fit(X, y_unbal)
    w = np.where(y_unbal == 1, 300 / (2 * 50), 300 / (2 * 250))
    manual = DGBDTClassifier(n_estimators=5).fit(X, y_unbal, sample_weight=w)
    np.testing.assert_allclose(balanced.predict_proba(X), manual.predict_proba(X))
    labels = np.array(["a", "b"])[y]
    est = DGBDTClassifier(n_estimators=5, class_weight={"a": 2.0, "b": 1.0}).fit(X, labels)
    assert list(est.classes_) == ["a", "b"]
    with pytest.raises(ValueError, match="class_weight"):
        DGBDTClassifier(class_weight={"zzz": 1.0}).fit(X, labels)


def test_sample_weight_validation():
    X, y = _regression(100)
    with pytest.raises(ValueError, match="zero"):
        DGBDTRegressor().fit(X, y, sample_weight=np.zeros(100))
    with pytest.raises(ValueError):
        DGBDTRegressor().fit(X, y, sample_weight=np.ones(99))
    with pytest.raises(ValueError, match="(?i)negative"):
        DGBDTRegressor().fit(X, y, sample_weight=-np.ones(100))
    w = np.linspace(0.5, 2.0, 100)
    est = DGBDTRegressor(n_estimators=5).fit(X, y, sample_weight=w)
    direct = dgbdt.train({"verbosity": -1}, dgbdt.Dataset(X, y, weight=w), num_boost_round=5)
    np.testing.assert_allclose(est.predict(X), direct.predict(X))


# --------------------------------------------------------------------------- #
# Inputs
# --------------------------------------------------------------------------- #
def test_pandas_dataframe_feature_names():
    pd = pytest.importorskip("pandas")
    X, y = _regression(300)
    df = pd.DataFrame(X, columns=[f"f_{i}" for i in range(X.shape[1])])
    df.iloc[::7, 2] = np.nan
    est = DGBDTRegressor(n_estimators=20).fit(df, pd.Series(y))
    np.testing.assert_array_equal(est.feature_names_in_, df.columns.to_numpy())
    assert est.booster_.feature_name() == list(df.columns)
    assert est.feature_name_ == list(df.columns)
    assert est.n_features_in_ == X.shape[1]
    pred = est.predict(df)
    with pytest.warns(UserWarning, match="feature names"):
        np.testing.assert_allclose(pred, est.predict(df.to_numpy()))
    np.testing.assert_allclose(pred, est.booster_.predict(df.to_numpy()))
    # Columns in another order are an error, as in scikit-learn.
    with pytest.raises(ValueError, match="feature names"):
        est.predict(df[df.columns[::-1]])
    # numpy input has no feature names attribute.
    est_np = DGBDTRegressor(n_estimators=2).fit(X, y)
    assert not hasattr(est_np, "feature_names_in_")
    assert est_np.feature_name_ == [f"Column_{i}" for i in range(X.shape[1])]


def test_pandas_integer_columns_and_classifier():
    pd = pytest.importorskip("pandas")
    X, y = _binary(200)
    df = pd.DataFrame(X)  # integer column names: no feature_names_in_
    est = DGBDTClassifier(n_estimators=5).fit(df, y)
    assert not hasattr(est, "feature_names_in_")
    assert est.predict(df).shape == (200,)


def test_float32_and_float64():
    X, y = _regression(300)
    X32 = X.astype(np.float32)
    a = DGBDTRegressor(n_estimators=20).fit(X32, y)
    b = DGBDTRegressor(n_estimators=20).fit(X32.astype(np.float64), y)
    np.testing.assert_array_equal(a.predict(X32), b.predict(X32.astype(np.float64)))
    np.testing.assert_array_equal(a.predict(X32), a.predict(X32.astype(np.float64)))
    assert a.predict(X32).dtype == np.float64
    Xc, yc = _binary(300)
    c32 = DGBDTClassifier(n_estimators=10).fit(Xc.astype(np.float32), yc)
    c64 = DGBDTClassifier(n_estimators=10).fit(Xc.astype(np.float32).astype(np.float64), yc)
    np.testing.assert_allclose(
        c32.predict_proba(Xc.astype(np.float32)), c64.predict_proba(Xc.astype(np.float32))
    )


def test_integer_and_list_input():
    X, y = _binary(200)
    Xi = np.round(X * 10).astype(np.int64)
    a = DGBDTClassifier(n_estimators=5).fit(Xi, y)
    b = DGBDTClassifier(n_estimators=5).fit(Xi.tolist(), y.tolist())
    np.testing.assert_allclose(a.predict_proba(Xi), b.predict_proba(Xi.tolist()))


def test_nan_in_X():
    rng = np.random.default_rng(0)
    n = 600
    X = rng.normal(size=(n, 4))
    missing = rng.random(n) < 0.3
    X[missing, 0] = np.nan
    y = np.where(missing, 3.0, X[:, 1]) + 0.01 * rng.normal(size=n)
    est = DGBDTRegressor(n_estimators=50).fit(X, y)
    pred = est.predict(X)
    assert np.all(np.isfinite(pred))
    # The model learns that "missing" means 3.
    assert np.abs(pred[missing] - 3.0).mean() < 0.2
    Xc = X.copy()
    yc = missing.astype(int)
    clf = DGBDTClassifier(n_estimators=10).fit(Xc, yc)
    assert np.mean(clf.predict(Xc) == yc) == 1.0
    all_nan = np.full((3, 4), np.nan)
    assert np.all(np.isfinite(clf.predict_proba(all_nan)))


def test_sparse_input_matches_dense():
    sp = pytest.importorskip("scipy.sparse")
    X, y = _regression(300)
    X[np.abs(X) < 0.7] = 0.0
    dense = DGBDTRegressor(n_estimators=10).fit(X, y)
    for fmt in ("csr", "csc", "coo"):
        Xs = sp.random(1, 1).asformat(fmt).__class__(X)
        est = DGBDTRegressor(n_estimators=10).fit(Xs, y)
        np.testing.assert_allclose(est.predict(Xs), dense.predict(X))


def test_wrong_number_of_features():
    X, y = _regression(100)
    est = DGBDTRegressor(n_estimators=2).fit(X, y)
    with pytest.raises(
        ValueError, match=r"X has 3 features, but DGBDTRegressor is expecting 6 features"
    ):
        est.predict(X[:, :3])
    Xc, yc = _binary(100)
    clf = DGBDTClassifier(n_estimators=2).fit(Xc, yc)
    for method in (clf.predict, clf.predict_proba, clf.decision_function):
        with pytest.raises(
            ValueError, match=r"X has 2 features, but DGBDTClassifier is expecting 6 features"
        ):
            method(Xc[:, :2])
    with pytest.raises(ValueError, match="features"):
        clf.fit(Xc, yc, eval_set=[(Xc[:, :2], yc)])


# --------------------------------------------------------------------------- #
# Evaluation, early stopping, custom functions
# --------------------------------------------------------------------------- #
def test_eval_set_and_early_stopping():
    X, y = _binary(600)
    Xt, Xv, yt, yv = train_test_split(X, y, test_size=0.3, random_state=0)
    est = DGBDTClassifier(n_estimators=500, learning_rate=0.3)
    est.fit(
        Xt,
        yt,
        eval_set=[(Xv, yv)],
        eval_metric="error",
        callbacks=[dgbdt.early_stopping(5, verbose=False)],
    )
    assert 1 <= est.best_iteration_ < 500
    # LightGBM's fit returns the model cut at its best iteration; the history
    # holds every round run (5 past the best)
    assert est.n_estimators_ == est.best_iteration_ == est.booster_.current_iteration()
    assert set(est.evals_result_) == {"valid_0"}
    history = est.evals_result_["valid_0"]
    assert list(history) == ["binary_error", "binary_logloss"]
    assert len(history["binary_logloss"]) == est.best_iteration_ + 5
    best = est.best_score_["valid_0"]
    assert best["binary_error"] == history["binary_error"][est.best_iteration_ - 1]
    # predict uses the best iteration by default.
    np.testing.assert_allclose(
        est.predict_proba(Xv), est.predict_proba(Xv, num_iteration=est.best_iteration_)
    )


def test_early_stopping_round_param_and_names():
    X, y = _regression(500)
    Xt, Xv, yt, yv = train_test_split(X, y, test_size=0.3, random_state=0)
    est = DGBDTRegressor(n_estimators=1000, learning_rate=0.5, early_stopping_round=3)
    est.fit(
        Xt,
        yt,
        eval_set=[(Xt, yt), (Xv, yv)],
        eval_names=["train", "valid"],
        eval_metric=["l1", "l2"],
    )
    assert est.best_iteration_ > 0 and est.n_estimators_ < 1000
    assert set(est.evals_result_) == {"train", "valid"}
    assert list(est.evals_result_["valid"]) == ["l1", "l2"]
    # The training data passed in eval_set is evaluated too, and fits better.
    assert est.evals_result_["train"]["l2"][-1] < est.evals_result_["valid"]["l2"][-1]


def test_eval_without_early_stopping_reports_last_scores():
    X, y = _regression(300)
    est = DGBDTRegressor(n_estimators=7).fit(
        X[:200], y[:200], eval_set=[(X[200:], y[200:])], eval_sample_weight=[np.ones(100)]
    )
    assert est.best_iteration_ == 0 and est.n_estimators_ == 7
    assert len(est.evals_result_["valid_0"]["l2"]) == 7
    assert est.best_score_["valid_0"]["l2"] == est.evals_result_["valid_0"]["l2"][-1]
    no_eval = DGBDTRegressor(n_estimators=3).fit(X, y)
    assert no_eval.evals_result_ == {} and no_eval.best_score_ == {}


def test_eval_set_string_labels():
    X, y = _multiclass(300)
    labels = np.array(["x", "y", "z"])[y]
    est = DGBDTClassifier(n_estimators=10)
    est.fit(
        X[:200], labels[:200], eval_set=[(X[200:], labels[200:])], eval_metric=["logloss", "error"]
    )
    assert list(est.evals_result_["valid_0"]) == ["multi_logloss", "multi_error"]
    with pytest.raises(ValueError, match="not in the training labels"):
        est.fit(X[:200], labels[:200], eval_set=[(X[200:], np.full(100, "w"))])


def test_custom_eval_metric():
    X, y = _regression(300)

    def max_abs_error(y_true, y_pred):
        return "max_abs", float(np.max(np.abs(y_true - y_pred))), False

    def weighted(y_true, y_pred, weight):
        assert weight is None
        return [("neg_mae", -float(np.mean(np.abs(y_true - y_pred))), True)]

    est = DGBDTRegressor(n_estimators=5).fit(
        X[:200], y[:200], eval_set=[(X[200:], y[200:])], eval_metric=[max_abs_error, weighted, "l1"]
    )
    history = est.evals_result_["valid_0"]
    assert set(history) == {"l1", "l2", "max_abs", "neg_mae"}
    pred = est.predict(X[200:])
    assert history["max_abs"][-1] == pytest.approx(np.max(np.abs(y[200:] - pred)))
    assert history["neg_mae"][-1] == pytest.approx(-history["l1"][-1])


def test_custom_objective_regression_matches_builtin():
    X, y = _regression(300)

    def l2(y_true, y_pred):
        return y_pred - y_true, np.ones_like(y_true)

    custom = DGBDTRegressor(n_estimators=10, objective=l2).fit(X, y)
    builtin = DGBDTRegressor(n_estimators=10, boost_from_average=False).fit(X, y)
    # LightGBM's Booster.params: a callable objective is "none"
    assert custom.objective_ is l2 and custom.booster_.params["objective"] == "none"
    np.testing.assert_allclose(custom.predict(X), builtin.predict(X), rtol=1e-5, atol=1e-5)


def test_custom_objective_classifier():
    X, y = _binary(300)

    def logloss(y_true, y_pred):
        p = 1.0 / (1.0 + np.exp(-y_pred))
        return p - y_true, p * (1.0 - p)

    custom = DGBDTClassifier(n_estimators=10, objective=logloss).fit(X, y)
    builtin = DGBDTClassifier(n_estimators=10, boost_from_average=False).fit(X, y)
    np.testing.assert_allclose(
        custom.decision_function(X), builtin.decision_function(X), rtol=1e-4, atol=1e-4
    )
    np.testing.assert_array_equal(custom.predict(X), builtin.predict(X))
    with pytest.warns(UserWarning, match="custom objective"):
        raw = custom.predict_proba(X)
    np.testing.assert_allclose(raw, custom.decision_function(X))

    Xm, ym = _multiclass(300)

    def softmax_loss(y_true, y_pred):
        assert y_pred.shape == (len(y_true), 3)
        z = np.exp(y_pred - y_pred.max(axis=1, keepdims=True))
        p = z / z.sum(axis=1, keepdims=True)
        onehot = np.eye(3)[y_true.astype(int)]
        # LightGBM's (and the built-in) softmax hessian factor K / (K - 1)
        return p - onehot, 1.5 * p * (1.0 - p)

    multi = DGBDTClassifier(n_estimators=10, objective=softmax_loss).fit(Xm, ym)
    assert multi.booster_.num_class == 3
    builtin_multi = DGBDTClassifier(n_estimators=10, boost_from_average=False).fit(Xm, ym)
    np.testing.assert_allclose(
        multi.decision_function(Xm), builtin_multi.decision_function(Xm), rtol=1e-4, atol=1e-4
    )
    np.testing.assert_array_equal(multi.predict(Xm), builtin_multi.predict(Xm))
    assert np.mean(multi.predict(Xm) == ym) > 0.85


def test_init_model_continues_training():
    X, y = _regression(300)
    first = DGBDTRegressor(n_estimators=5).fit(X, y)
    more = DGBDTRegressor(n_estimators=5).fit(X, y, init_model=first)
    assert more.n_estimators_ == 10
    all_at_once = DGBDTRegressor(n_estimators=10).fit(X, y)
    np.testing.assert_allclose(more.predict(X), all_at_once.predict(X), rtol=1e-6, atol=1e-6)


def test_init_score():
    X, y = _regression(200)
    offset = np.full(200, 100.0)
    est = DGBDTRegressor(n_estimators=5, learning_rate=1.0).fit(X, y + 100.0, init_score=offset)
    # The trees model y; the offset is not part of the model.
    assert abs(np.mean(est.predict(X)) - np.mean(y)) < 5.0


def test_feature_importances():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 5))
    y = 3 * X[:, 2] + 0.1 * rng.normal(size=400)
    est = DGBDTRegressor(n_estimators=10).fit(X, y)
    imp = est.feature_importances_
    assert imp.shape == (5,) and imp.argmax() == 2
    np.testing.assert_array_equal(imp, est.booster_.feature_importance("split"))
    est.set_params(importance_type="gain")
    gain = est.feature_importances_
    assert gain.dtype == np.float64 and gain.argmax() == 2
    assert gain[2] > 10 * np.delete(gain, 2).sum()


# --------------------------------------------------------------------------- #
# Persistence
# --------------------------------------------------------------------------- #
def test_joblib_round_trip(tmp_path):
    X, y = _multiclass(300)
    labels = np.array(["a", "b", "c"])[y]
    est = DGBDTClassifier(n_estimators=15, lambda_l2=1.0).fit(X, labels)
    path = tmp_path / "model.joblib"
    joblib.dump(est, path)
    loaded = joblib.load(path)
    np.testing.assert_array_equal(loaded.predict_proba(X), est.predict_proba(X))
    np.testing.assert_array_equal(loaded.predict(X), est.predict(X))
    assert loaded.get_params() == est.get_params()
    assert list(loaded.classes_) == ["a", "b", "c"]

    reg = DGBDTRegressor(n_estimators=15).fit(*_regression(200))
    again = pickle.loads(pickle.dumps(reg))
    Xr = _regression(200)[0]
    np.testing.assert_array_equal(again.predict(Xr), reg.predict(Xr))


def test_in_sklearn_pipeline_and_cross_validation():
    from sklearn.model_selection import cross_val_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = _binary(300)
    scores = cross_val_score(
        make_pipeline(StandardScaler(), DGBDTClassifier(n_estimators=10)), X, y, cv=3
    )
    assert scores.mean() > 0.8


# --------------------------------------------------------------------------- #
# Agreement with LightGBM
# --------------------------------------------------------------------------- #
def test_accuracy_close_to_lightgbm_breast_cancer():
    lgb = pytest.importorskip("lightgbm")
    X, y = load_breast_cancer(return_X_y=True)
    Xt, Xv, yt, yv = train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)
    ours = DGBDTClassifier().fit(Xt, yt)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = lgb.LGBMClassifier(verbosity=-1).fit(Xt, yt)
    acc_ours = np.mean(ours.predict(Xv) == yv)
    acc_theirs = np.mean(theirs.predict(Xv) == yv)
    assert acc_ours >= acc_theirs - 0.02, (acc_ours, acc_theirs)
    assert acc_ours > 0.92


def test_regression_close_to_lightgbm():
    lgb = pytest.importorskip("lightgbm")
    X, y = _regression(800, seed=1)
    Xt, Xv, yt, yv = train_test_split(X, y, test_size=0.3, random_state=0)
    ours = DGBDTRegressor(n_estimators=50).fit(Xt, yt)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = lgb.LGBMRegressor(n_estimators=50, verbosity=-1).fit(Xt, yt)
    mse_ours = np.mean((ours.predict(Xv) - yv) ** 2)
    mse_theirs = np.mean((theirs.predict(Xv) - yv) ** 2)
    assert mse_ours < 1.2 * mse_theirs, (mse_ours, mse_theirs)


def test_training_eval_set_with_a_custom_name_is_not_used_for_early_stopping():
    # As LightGBM: the training pair in eval_set, whatever eval_names calls it,
    # is evaluated on the training scores and never decides the best iteration
    # (here the validation loss only grows: best iteration 1, not the last).
    import dgbdt
    from dgbdt import DGBDTRegressor

    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 4))
    y = X[:, 0] + rng.normal(size=400) * 0.5
    Xv = rng.normal(size=(200, 4))
    yv = -Xv[:, 0] + rng.normal(size=200)
    model = DGBDTRegressor(n_estimators=12, learning_rate=0.05).fit(
        X,
        y,
        eval_set=[(X, y), (Xv, yv)],
        eval_names=["train", "val"],
        callbacks=[dgbdt.early_stopping(20, verbose=False)],
    )
    assert model.best_iteration_ == 1 == 1 + int(np.argmin(model.evals_result_["val"]["l2"]))
    assert model.evals_result_["train"]["l2"][-1] < model.evals_result_["train"]["l2"][0]
