"""LightGBM drop-in behaviour of the scikit-learn estimators (issue 28): user
subclasses, ``DGBDTModel`` as an estimator, LightGBM 4.7's fit and predict
arguments, the parameters given twice under two names."""

import re

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_iris, make_classification, make_regression
from sklearn.exceptions import NotFittedError
from sklearn.utils.estimator_checks import parametrize_with_checks
from sklearn.utils.validation import check_is_fitted

import dgbdt
from dgbdt import DGBDTClassifier, DGBDTRanker, DGBDTRegressor
from dgbdt.log import DGBDTDeprecationWarning
from dgbdt.sklearn import DGBDTModel


class ExtendedClassifier(DGBDTClassifier):
    """A user's subclass, as LightGBM's docs show it: its own parameter, the
    parent's through **kwargs."""

    def __init__(self, *, some_other_param="classifier", **kwargs):
        self.some_other_param = some_other_param
        super().__init__(**kwargs)


class ExtendedRegressor(DGBDTRegressor):
    def __init__(self, *, some_other_param="regressor", **kwargs):
        super().__init__(**kwargs)
        self.some_other_param = some_other_param


def _regression(n=200, seed=0):
    return make_regression(n_samples=n, n_features=5, noise=1.0, random_state=seed)


def _binary(n=200, seed=0):
    return make_classification(n_samples=n, n_features=5, random_state=seed)


def _expected_failures(estimator):
    return estimator._more_tags()["_xfail_checks"]


@parametrize_with_checks(
    [ExtendedClassifier(), ExtendedRegressor()], expected_failed_checks=_expected_failures
)
def test_subclass_passes_sklearn_checks(estimator, check):
    """LightGBM: a subclass of LGBMClassifier/LGBMRegressor passes scikit-learn's
    checks, but for the listed expected failures (LightGBM's test settings)."""
    estimator.set_params(min_child_samples=1, min_data_in_bin=1)
    check(estimator)


def test_subclass_get_params_keeps_the_parents_parameters():
    """LightGBM: LGBMModel.get_params walks the class hierarchy, so a subclass's
    get_params (and clone) keeps every parameter of its parents."""
    est = ExtendedClassifier(n_estimators=13, eta=0.07)
    params = est.get_params()
    assert params["some_other_param"] == "classifier"
    assert params["min_child_samples"] == 20 and params["n_estimators"] == 13
    assert params["eta"] == 0.07 and params["learning_rate"] == 0.1
    assert params == {**DGBDTClassifier(n_estimators=13, eta=0.07).get_params(), **params}
    assert set(params) == set(DGBDTClassifier(eta=0.07).get_params()) | {"some_other_param"}
    assert clone(est).get_params() == params


def test_subclass_attributes_are_not_training_parameters():
    """LightGBM: a subclass's own attribute is not a training parameter: the
    subclass trains the parent's model (dgbdt would reject an unknown one)."""
    X, y = _binary()
    theirs = DGBDTClassifier(n_estimators=5, num_leaves=7).fit(X, y)
    ours = ExtendedClassifier(n_estimators=5, num_leaves=7).fit(X, y)
    np.testing.assert_array_equal(ours.predict_proba(X), theirs.predict_proba(X))
    assert "some_other_param" not in ours.booster_.params


def test_subclass_parameter_that_is_a_training_parameter_reaches_train():
    """A subclass may declare a real training parameter in its signature: it trains."""

    class WithL2(DGBDTRegressor):
        def __init__(self, *, lambda_l2=50.0, **kwargs):
            super().__init__(**kwargs)
            self.lambda_l2 = lambda_l2

    X, y = _regression()
    est = WithL2(n_estimators=3).fit(X, y)
    assert est.booster_.params["lambda_l2"] == 50.0


def test_model_is_an_estimator_with_fit():
    """LightGBM: LGBMModel itself fits (here regression by default) and
    check_is_fitted sees whether it was fitted (__sklearn_is_fitted__)."""
    X, y = _regression()
    est = DGBDTModel(n_estimators=5)
    with pytest.raises(NotFittedError, match="This DGBDTModel instance is not fitted yet"):
        check_is_fitted(est)
    est.fit(X, y)
    check_is_fitted(est)
    assert est.objective_ == "regression"
    reg = DGBDTRegressor(n_estimators=5).fit(X, y)
    np.testing.assert_allclose(est.predict(X), reg.predict(X))
    assert clone(est).__sklearn_is_fitted__() is False

    Xb, yb = _binary()
    binary = DGBDTModel(n_estimators=5, objective="binary").fit(Xb, yb)
    proba = binary.predict(Xb)
    assert proba.ndim == 1 and np.all((proba > 0) & (proba < 1))


def test_eval_X_eval_y_equal_eval_set_which_is_deprecated():
    """LightGBM 4.7: fit(eval_X=, eval_y=) (tuples for several sets); eval_set
    still works with an LGBMDeprecationWarning."""
    X, y = _regression(300)
    Xt, yt, Xv, yv = X[:200], y[:200], X[200:], y[200:]
    new = DGBDTRegressor(n_estimators=5).fit(
        Xt, yt, eval_X=(Xv[:50], Xv[50:]), eval_y=(yv[:50], yv[50:])
    )
    with pytest.warns(DGBDTDeprecationWarning, match="The argument 'eval_set' is deprecated"):
        old = DGBDTRegressor(n_estimators=5).fit(
            Xt, yt, eval_set=[(Xv[:50], yv[:50]), (Xv[50:], yv[50:])]
        )
    assert set(new.evals_result_) == {"valid_0", "valid_1"}
    assert new.evals_result_ == old.evals_result_
    one = DGBDTRegressor(n_estimators=5).fit(Xt, yt, eval_X=Xv, eval_y=yv)
    assert list(one.evals_result_) == ["valid_0"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"eval_set": [(0, 0)], "eval_X": 0}, "Specify either 'eval_set' or 'eval_X'"),
        ({"eval_set": [(0, 0)], "eval_y": 0}, "Specify either 'eval_set' or 'eval_X'"),
        ({"eval_X": 0}, "You must specify eval_X and eval_y, not just one of them"),
        ({"eval_y": 0}, "You must specify eval_X and eval_y, not just one of them"),
        ({"eval_X": (0, 0), "eval_y": 0}, "If eval_X is a tuple, y_val must be a tuple"),
        ({"eval_X": (0,) * 3, "eval_y": (0,) * 2}, "If eval_X is a tuple, y_val must be a tuple"),
    ],
)
def test_eval_X_eval_y_errors(kwargs, message):
    """LightGBM 4.7's errors for eval_set/eval_X/eval_y given wrongly."""
    X, y = _regression(50)
    with pytest.warns() if "eval_set" in kwargs else _no_warning():
        with pytest.raises(ValueError, match=re.escape(message)):
            DGBDTRegressor(n_estimators=2).fit(X, y, **kwargs)


class _no_warning:  # noqa: N801 - used as a context manager like pytest.warns
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_ranker_eval_group_required_with_eval_X():
    """LightGBM: the ranker's eval_group is required with any of eval_set,
    eval_X, eval_y, and has one entry per eval set."""
    X, y = _regression(40)
    y = (y > 0).astype(int)
    group = [10] * 4
    msg = "eval_group cannot be None if any of eval_set, eval_X, or eval_y are provided"
    with pytest.raises(ValueError, match=msg):
        DGBDTRanker().fit(X, y, group=group, eval_X=(X,))
    with pytest.raises(
        ValueError, match=re.escape("Length of eval_group (1) not equal to length of eval_set (2)")
    ):
        DGBDTRanker().fit(X, y, group=group, eval_X=(X, X), eval_y=(y, y), eval_group=[group])


def test_eval_class_weight_weights_each_eval_set():
    """LightGBM: fit(eval_class_weight=[...]) weights each eval set's rows by
    class, by label as given to fit ("balanced" or {label: weight})."""
    X, y = _binary(400)
    labels = np.array(["no", "yes"])[y]
    Xt, yt, Xv, yv = X[:300], labels[:300], X[300:370], labels[300:370]
    assert np.mean(yv == "yes") != 0.5  # (else "balanced" weighs every row 1)
    est = DGBDTClassifier(n_estimators=5).fit(
        Xt,
        yt,
        eval_X=(Xv, Xv, Xv),
        eval_y=(yv, yv, yv),
        eval_class_weight=[None, "balanced", {"yes": 10}],
    )
    plain, balanced, heavy = (est.evals_result_[f"valid_{i}"]["binary_logloss"] for i in range(3))
    assert plain != balanced and plain != heavy and balanced != heavy
    proba = est.predict_proba(Xv)[:, 1]
    w = np.where(yv == "yes", 10.0, 1.0)
    target = (yv == "yes").astype(float)
    logloss = -np.sum(w * (target * np.log(proba) + (1 - target) * np.log(1 - proba))) / w.sum()
    assert heavy[-1] == pytest.approx(logloss, rel=1e-6)
    with pytest.raises(ValueError, match=r"eval_class_weight has labels \['maybe'\]"):
        DGBDTClassifier(n_estimators=2).fit(
            Xt, yt, eval_X=Xv, eval_y=yv, eval_class_weight=[{"maybe": 2}]
        )


@pytest.mark.parametrize(
    ("make", "fit_kwargs", "metric"),
    [
        (DGBDTRegressor, {}, "l2"),
        (DGBDTClassifier, {}, "binary_logloss"),
        (DGBDTRanker, {"group": [25] * 8}, "ndcg@1"),
    ],
)
def test_custom_objective_is_evaluated_with_the_estimators_metric(make, fit_kwargs, metric):
    """LightGBM: with a custom objective and no metric, the estimator's own
    metric (l2, binary_logloss, ndcg) is evaluated, so early stopping works."""
    X, y = _binary()

    def objective(y_true, y_pred):
        return y_pred - y_true, np.ones_like(y_pred)

    est = make(n_estimators=3, objective=objective).fit(
        X,
        y,
        eval_X=X,
        eval_y=y,
        callbacks=[dgbdt.early_stopping(2, verbose=False)],
        **fit_kwargs,
        **({"eval_group": [fit_kwargs["group"]]} if fit_kwargs else {}),
    )
    assert metric in est.evals_result_["training"]


def test_canonical_name_beats_alias_as_in_lightgbm():
    """LightGBM: learning_rate=0.1 (the canonical name, a constructor argument)
    beats eta=0.08 given in **kwargs; get_params and Booster.params keep both;
    lambda_l1 in **kwargs beats the constructor's alias reg_alpha=0.0."""
    X, y = _regression()
    both = DGBDTRegressor(n_estimators=3, eta=0.5).fit(X, y)
    assert both.get_params()["eta"] == 0.5 and both.get_params()["learning_rate"] == 0.1
    plain = DGBDTRegressor(n_estimators=3).fit(X, y)
    np.testing.assert_array_equal(both.predict(X), plain.predict(X))
    lgb = pytest.importorskip("lightgbm")
    theirs = lgb.LGBMRegressor(n_estimators=3, eta=0.5, verbose=-1).fit(X, y)
    assert theirs.booster_._get_loaded_param()["learning_rate"] == 0.1
    assert both.booster_.params["eta"] == 0.5 and both.booster_.params["learning_rate"] == 0.1
    l1 = DGBDTRegressor(n_estimators=3, lambda_l1=50.0).fit(X, y)
    alpha = DGBDTRegressor(n_estimators=3, reg_alpha=50.0).fit(X, y)
    np.testing.assert_array_equal(l1.predict(X), alpha.predict(X))
    assert not np.array_equal(l1.predict(X), plain.predict(X))


def test_predict_takes_lightgbms_arguments():
    """LightGBM: predict(X, raw_score, start_iteration, num_iteration, pred_leaf,
    pred_contrib, validate_features, **kwargs) forwards to Booster.predict."""
    X, y = _binary()
    est = DGBDTClassifier(n_estimators=6).fit(X, y)
    booster = est.booster_
    np.testing.assert_allclose(
        est.predict_proba(X, start_iteration=2)[:, 1], booster.predict(X, start_iteration=2)
    )
    np.testing.assert_allclose(
        est.predict(X, raw_score=True, start_iteration=2, num_iteration=3),
        booster.predict(X, raw_score=True, start_iteration=2, num_iteration=3),
    )
    np.testing.assert_array_equal(
        est.predict(X, start_iteration=3), (booster.predict(X, start_iteration=3) > 0.5).astype(int)
    )
    np.testing.assert_allclose(est.predict(X, num_threads=1), est.predict(X))


def test_predict_validate_features_on_dataframes():
    """LightGBM: predict(validate_features=True) rejects a DataFrame whose column
    names differ from the training's; False predicts by position."""
    pd = pytest.importorskip("pandas")
    X, y = _regression()
    df = pd.DataFrame(X, columns=["a", "b", "c", "d", "e"])
    est = DGBDTRegressor(n_estimators=3).fit(df, y)
    renamed = df.rename(columns={"b": "z"})
    with pytest.raises(ValueError, match="'b'.*'z'|'z'.*'b'"):
        est.predict(renamed, validate_features=True)
    np.testing.assert_array_equal(est.predict(renamed, validate_features=False), est.predict(X))
    with pytest.raises(ValueError, match="X has 4 features, but DGBDTRegressor is expecting 5"):
        est.predict(df.iloc[:, :4], validate_features=False)


def test_feature_names_in_only_for_named_columns():
    """scikit-learn's (and LightGBM 4.7's) feature_names_in_: a DataFrame's string
    column names; none for a numpy array."""
    pd = pytest.importorskip("pandas")
    X, y = _regression()
    est = DGBDTModel(n_estimators=2).fit(X, y)
    with pytest.raises(AttributeError, match="feature_names_in_"):
        _ = est.feature_names_in_
    df = pd.DataFrame(X, columns=[f"f{i}" for i in range(5)])
    est.fit(df, y)
    np.testing.assert_array_equal(est.feature_names_in_, df.columns)


def test_sparse_dataframe_with_nan_fill_value():
    """LightGBM: a DataFrame of pandas sparse columns trains and predicts as its
    dense copy, whatever the columns' fill value (NaN here: scikit-learn's
    validation alone refuses it: "fill value must be 0")."""
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    X = pd.DataFrame(
        {
            "A": pd.arrays.SparseArray(rng.permutation([0, 1, 2] * 100)),
            "B": pd.arrays.SparseArray(rng.permutation([0.0, 0.1, 0.2, -0.1, 0.2] * 60)),
            "C": pd.arrays.SparseArray(rng.permutation([True, False] * 150)),
        }
    )
    assert np.isnan(X["B"].sparse.fill_value)
    y = rng.permutation([0, 1] * 150)
    est = DGBDTClassifier(n_estimators=5).fit(X, y)
    dense = DGBDTClassifier(n_estimators=5).fit(X.sparse.to_dense(), y)
    np.testing.assert_allclose(
        est.predict(X, raw_score=True), dense.predict(X.sparse.to_dense(), raw_score=True)
    )


@pytest.mark.parametrize("objective", ["multiclass", "ovr"])
def test_multiclass_objective_on_two_classes_takes_multiclass_metric_names(objective):
    """LightGBM: with a multiclass objective on 2 classes, eval_metric's binary
    names ("binary_logloss", "binary_error") become the multiclass metrics."""
    X, y = _binary()
    est = DGBDTClassifier(objective=objective, n_estimators=2).fit(
        X, y, eval_X=X, eval_y=y, eval_metric=["binary_logloss", "binary_error"]
    )
    assert set(est.evals_result_["training"]) == {"multi_logloss", "multi_error"}


def test_prediction_params_given_to_the_estimator_act_at_predict():
    """LightGBM: an estimator's prediction parameters (``pred_early_stop``, ...),
    given to its constructor or set_params, act in predict as predict's own
    keywords do (predict's keywords win); training ignores them."""
    X, y = load_iris(return_X_y=True)
    early = {"pred_early_stop": True, "pred_early_stop_margin": 1.0}
    plain = DGBDTClassifier(verbose=-1).fit(X, y)
    in_predict = plain.predict(X, raw_score=True, **early)
    assert np.abs(plain.predict(X, raw_score=True) - in_predict).max() > 0.1
    for est in (
        DGBDTClassifier(verbose=-1, **early),
        DGBDTClassifier(verbose=-1).set_params(**early),
    ):
        np.testing.assert_array_equal(est.fit(X, y).predict(X, raw_score=True), in_predict)
    after_fit = DGBDTClassifier(verbose=-1).fit(X, y).set_params(**early)
    np.testing.assert_array_equal(after_fit.predict(X, raw_score=True), in_predict)
    overridden = DGBDTClassifier(verbose=-1, **early).fit(X, y)
    np.testing.assert_array_equal(
        overridden.predict(X, raw_score=True, pred_early_stop=False),
        plain.predict(X, raw_score=True),
    )
