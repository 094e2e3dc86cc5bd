"""Agreement with LightGBM at equal settings on pre-binned data.

Every feature is integer-valued with at most 50 distinct values, so both
libraries put each value in its own bin and see the same histograms; the
trees must then be the same and the raw scores agree to rounding.  (On
LightGBM's own example data, tests/test_lightgbm_trees.py compares trees
one by one.)

What the comparisons rely on:

* LightGBM stores labels as float32: labels here are float32-representable.
* Leaf counts for ``min_data_in_leaf`` are estimated from hessians bin by bin
  (``round(hess * n / sum_hess)`` per bin, added up), as LightGBM does, so
  binary rounds with uneven hessians agree too.
* A threshold inside a run of bins that are empty in the leaf gives the same
  partition of the training rows whichever is taken; LightGBM keeps the
  highest, and so does dgbdt.  Scores are compared on the training rows and on
  rows whose columns are shuffled independently, which reach leaves with
  values those leaves have no rows of.
* LightGBM skips, in a leaf's children, features that had no split with
  positive gain in the leaf (``is_splittable`` in serial_tree_learner.cpp);
  so does dgbdt.  It binds with ``max_delta_step`` (a clipped parent), which
  is compared on deep trees too.
"""

import numpy as np
import pytest
from prebinned import BASE as _SHARED
from prebinned import LGB_ONLY, prebinned

import dgbdt

lgb = pytest.importorskip("lightgbm")

BASE = {**_SHARED, "learning_rate": 1.0}


def _fit_both(objective, rounds, nan_fraction=0.0, **overrides):
    X, y = prebinned(objective, nan_fraction=nan_fraction)
    params = {**BASE, **overrides, "objective": objective}
    if objective == "multiclass":
        params["num_class"] = 3
    lgb_params = {**params, **LGB_ONLY}
    theirs = lgb.train(lgb_params, lgb.Dataset(X, y, params=lgb_params), num_boost_round=rounds)
    ours = dgbdt.train({**params, "verbosity": -1}, dgbdt.Dataset(X, y), num_boost_round=rounds)
    return X, theirs, ours


def _leaf_counts(theirs, ours):
    lgb_trees = theirs.dump_model()["tree_info"]
    our_trees = ours.dump_model(format="json")["trees"]
    return [t["num_leaves"] for t in lgb_trees], [t["num_leaves"] for t in our_trees]


def _compare(X, theirs, ours, atol=1e-6):
    lgb_leaves, our_leaves = _leaf_counts(theirs, ours)
    assert our_leaves == lgb_leaves
    # Shuffled columns: rows with values in bins a leaf has none of, where the
    # tie rule among thresholds inside empty bins decides.
    rng = np.random.default_rng(1)
    shuffled = np.column_stack([rng.permutation(column) for column in X.T])
    for rows in (X, shuffled):
        raw_theirs = theirs.predict(rows, raw_score=True)
        raw_ours = ours.predict(rows, raw_score=True)
        assert raw_ours.shape == raw_theirs.shape
        diff = np.abs(raw_ours - raw_theirs).max()
        assert diff <= atol, f"max |dgbdt - LightGBM| raw score difference {diff:.3g}"
    # and the comparison is not vacuous: the model moved away from a constant
    assert np.ptp(raw_ours, axis=0).min() > 0.05


@pytest.mark.parametrize(
    "objective", ["regression", "binary", "multiclass", "huber", "regression_l1"]
)
def test_one_round(objective):
    _compare(*_fit_both(objective, rounds=1))


@pytest.mark.parametrize("objective", ["regression", "binary"])
def test_one_round_with_nan(objective):
    _compare(*_fit_both(objective, rounds=1, nan_fraction=0.1))


@pytest.mark.parametrize(
    "overrides",
    [
        {"lambda_l2": 0.0},
        {"lambda_l1": 2.0},
        {"max_depth": 3},
        {"min_gain_to_split": 5.0},
        {"min_data_in_leaf": 40},
        {"min_sum_hessian_in_leaf": 60.0},
        {"num_leaves": 2, "max_delta_step": 0.05},
        {"num_leaves": 3, "max_delta_step": 0.05},
        {"max_delta_step": 0.05},
        {"num_leaves": 63, "min_data_in_leaf": 3, "max_delta_step": 0.1},
    ],
    ids=lambda d: ",".join(f"{k}={v}" for k, v in d.items()),
)
def test_one_round_regression_settings(overrides):
    _compare(*_fit_both("regression", rounds=1, **overrides))


def test_rounds_regression():
    X, theirs, ours = _fit_both("regression", rounds=5, learning_rate=0.1, min_data_in_leaf=20)
    _compare(X, theirs, ours, atol=1e-5)


def test_rounds_regression_with_nan():
    X, theirs, ours = _fit_both("regression", rounds=5, learning_rate=0.1, nan_fraction=0.1)
    _compare(X, theirs, ours, atol=1e-5)


@pytest.mark.parametrize("min_data_in_leaf", [0, 20])
def test_rounds_binary(min_data_in_leaf):
    X, theirs, ours = _fit_both(
        "binary", rounds=5, learning_rate=0.3, min_data_in_leaf=min_data_in_leaf
    )
    _compare(X, theirs, ours, atol=1e-5)


@pytest.mark.parametrize("min_data_in_leaf", [0, 20])
def test_rounds_multiclass(min_data_in_leaf):
    X, theirs, ours = _fit_both(
        "multiclass", rounds=3, learning_rate=0.3, min_data_in_leaf=min_data_in_leaf
    )
    _compare(X, theirs, ours, atol=1e-5)


def test_deep_tree():
    X, theirs, ours = _fit_both(
        "regression", rounds=2, num_leaves=255, min_data_in_leaf=3, lambda_l2=0.0
    )
    _compare(X, theirs, ours, atol=1e-6)


# Quantized training with deterministic rounding (stochastic_rounding=false)
# turns the same gradients into the same integers in both libraries (the same
# scales, LightGBM's integer division B // 2 included, halves rounded away
# from zero), so the trees and scores must agree as in float training
# (integer scan included: each side's count rounded once, as LightGBM's).
QUANTIZED = {"use_quantized_grad": True, "stochastic_rounding": False}


@pytest.mark.parametrize(
    "objective, overrides",
    [
        ("regression", {}),
        ("regression", {"num_grad_quant_bins": 16, "nan_fraction": 0.1}),
        ("binary", {}),
        ("binary", {"num_grad_quant_bins": 3}),
        ("binary", {"num_grad_quant_bins": 2}),
        ("regression", {"num_grad_quant_bins": 2}),
        ("binary", {"num_grad_quant_bins": 8, "quant_train_renew_leaf": True}),
        ("huber", {}),
        ("regression_l1", {}),
    ],
    ids=lambda v: v if isinstance(v, str) else ",".join(f"{k}={x}" for k, x in v.items()),
)
def test_quantized_rounds(objective, overrides):
    overrides = dict(overrides)
    nan_fraction = overrides.pop("nan_fraction", 0.0)
    X, theirs, ours = _fit_both(
        objective, rounds=4, nan_fraction=nan_fraction, **QUANTIZED, **overrides
    )
    _compare(X, theirs, ours, atol=1e-9)
    # and quantization changed the model (the comparison is not float training's),
    # except for L1, whose gradients (+-1) and hessians (1) are levels exactly
    _, _, floats = _fit_both(
        objective,
        rounds=4,
        nan_fraction=nan_fraction,
        **{k: v for k, v in overrides.items() if k == "num_grad_quant_bins"},
    )
    change = np.abs(floats.predict(X, raw_score=True) - ours.predict(X, raw_score=True)).max()
    assert change == 0.0 if objective == "regression_l1" else change > 1e-6


@pytest.mark.parametrize(
    "overrides, weighted",
    [
        ({"scale_pos_weight": 3.0}, False),
        ({"scale_pos_weight": 3.0}, True),
        ({"is_unbalance": True}, True),
    ],
)
def test_binary_class_weights_and_starting_score(overrides, weighted):
    # is_unbalance weighs classes by row counts, and the starting score is the
    # plain (weighted) log-odds, class weights left out: LightGBM's choices.
    X, y = prebinned("binary")
    w = np.where(y > 0, 5.0, 1.0) if weighted else None
    params = {
        **BASE,
        **overrides,
        "objective": "binary",
        "learning_rate": 0.3,
        "min_data_in_leaf": 0,
    }
    lgb_params = {**params, **LGB_ONLY}
    theirs = lgb.train(
        lgb_params, lgb.Dataset(X, y, weight=w, params=lgb_params), num_boost_round=3
    )
    ours = dgbdt.train({**params, "verbosity": -1}, dgbdt.Dataset(X, y, weight=w), 3)
    _compare(X, theirs, ours, atol=1e-6)


def test_nan_at_prediction_where_the_leaf_had_no_nan_rows():
    # Feature 0 has NaN only where feature 1 is 1: the split on feature 0 under
    # feature 1 == 0 saw no NaN rows.  LightGBM sends NaN left there (its reverse
    # scan keeps the tie); so must dgbdt.
    rng = np.random.default_rng(0)
    n = 2000
    X = np.column_stack([rng.integers(0, 20, n).astype(float), rng.integers(0, 2, n).astype(float)])
    y = 5 * X[:, 1] + (X[:, 0] > 10) * (1 - X[:, 1])
    X[(X[:, 1] == 1) & (rng.random(n) < 0.3), 0] = np.nan
    params = {
        "objective": "regression",
        "num_leaves": 3,
        "min_data_in_leaf": 5,
        "learning_rate": 1.0,
    }
    theirs = lgb.train({**params, **LGB_ONLY}, lgb.Dataset(X, y), 1)
    ours = dgbdt.train({**params, "verbosity": -1}, dgbdt.Dataset(X, y), 1)
    T = np.array([[np.nan, 0.0], [np.nan, 1.0], [15, 0.0], [3, 0.0]])
    np.testing.assert_allclose(ours.predict(T), theirs.predict(T), atol=1e-6)


@pytest.mark.parametrize("boost_from_average", [True, False])
@pytest.mark.parametrize("objective", ["regression_l1", "huber", "binary", "regression"])
def test_a_first_tree_that_cannot_split_is_the_starting_score(objective, boost_from_average):
    # A constant feature: LightGBM keeps one constant tree at the starting score,
    # the objective's automatic one even without boost_from_average (gbdt.cpp).
    y = np.array([0, 0, 0, 1, 5.0] * 20)
    y = (y > 0).astype(float) if objective == "binary" else y
    X = np.zeros((100, 1))
    params = {"objective": objective, "alpha": 0.5, "boost_from_average": boost_from_average}
    theirs = lgb.train({**params, **LGB_ONLY}, lgb.Dataset(X, y), 10)
    ours = dgbdt.train({**params, "verbosity": -1}, dgbdt.Dataset(X, y), 10)
    assert ours.num_trees() == theirs.num_trees() == 1
    np.testing.assert_allclose(
        ours.predict(X, raw_score=True), theirs.predict(X, raw_score=True), atol=1e-12
    )


def test_min_data_in_leaf_and_min_sum_hessian_both_zero():
    # LightGBM sets min_data_in_leaf to 1 (config.cpp): no splits with an empty side.
    with pytest.warns(UserWarning, match="min_data_in_leaf is set to 1"):
        X, theirs, ours = _fit_both(
            "regression", rounds=3, num_leaves=63, min_data_in_leaf=0, min_sum_hessian_in_leaf=0.0
        )
    _compare(X, theirs, ours, atol=1e-9)
    assert all(np.all(t.leaf_count > 0) for t in ours.trees)


def test_best_iteration_when_nothing_is_left_to_split():
    # Separable data: trees stop splitting before early stopping triggers;
    # LightGBM's loop keeps evaluating and reports the best iteration.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4))
    y = (X[:, 0] > 0).astype(float)
    params = {"objective": "binary", "learning_rate": 0.3, "verbose": -1}
    out = {}
    for name, mod in (("lgb", lgb), ("dgbdt", dgbdt)):
        train = mod.Dataset(X[:200], y[:200])
        valid = mod.Dataset(X[200:], y[200:], reference=train)
        out[name] = mod.train(
            params, train, 200, valid_sets=[valid], callbacks=[mod.early_stopping(5, verbose=False)]
        )
    assert out["dgbdt"].best_iteration == out["lgb"].best_iteration > 0


@pytest.mark.parametrize("seed", range(3))
def test_weighted_l1_starting_score_and_leaf_values(seed):
    # LightGBM's weighted median (interpolated only across a cumulative-weight
    # step of at least 1; all-one weights count as none), for the starting score
    # and for the leaf values L1 renews.
    rng = np.random.default_rng(seed)
    X, y = prebinned("regression", seed=seed)
    w = rng.choice([0.3, 0.5, 1.0, 1.5, 2.0, 3.0], len(y))
    params = {**BASE, "objective": "regression_l1", "learning_rate": 0.5, "min_data_in_leaf": 20}
    lgb_params = {**params, **LGB_ONLY}
    theirs = lgb.train(
        lgb_params, lgb.Dataset(X, y, weight=w, params=lgb_params), num_boost_round=3
    )
    ours = dgbdt.train({**params, "verbosity": -1}, dgbdt.Dataset(X, y, weight=w), 3)
    _compare(X, theirs, ours, atol=1e-5)
    unit = dgbdt.train({**params, "verbosity": -1}, dgbdt.Dataset(X, y, weight=np.ones(len(y))), 3)
    plain = dgbdt.train({**params, "verbosity": -1}, dgbdt.Dataset(X, y), 3)
    np.testing.assert_array_equal(unit.predict(X), plain.predict(X))


def test_best_iteration_of_the_earliest_stalled_validation_set():
    # Nothing left to split after a few rounds: LightGBM keeps evaluating frozen
    # metrics and stops on the set whose best came first (here 'b', at 1).
    X = np.repeat([[0.0], [1.0]], 200, axis=0)
    y = X[:, 0] * 2.0
    yb = np.where(X[:, 0] > 0, 0.1, 0.0)
    params = {
        "objective": "regression",
        "num_leaves": 2,
        "learning_rate": 0.5,
        "min_data_in_leaf": 1,
        "min_gain_to_split": 0.5,
        "boost_from_average": False,
        "max_bin": 255,
        "min_data_in_bin": 1,
        "metric": "l2",
        "verbose": -1,
    }
    best = {}
    for name, mod in (("lgb", lgb), ("dgbdt", dgbdt)):
        train = mod.Dataset(X, y)
        sets = [mod.Dataset(X, y, reference=train), mod.Dataset(X, yb, reference=train)]
        best[name] = mod.train(
            params,
            train,
            50,
            valid_sets=sets,
            valid_names=["a", "b"],
            callbacks=[mod.early_stopping(20, verbose=False)],
        ).best_iteration
    assert best["dgbdt"] == best["lgb"] == 1


def test_weighted_l1_leaf_whose_rows_all_weigh_one():
    # LightGBM drops all-one weights for a whole Dataset only: a leaf of rows
    # that all weigh 1 still gets the weighted median.
    rng = np.random.default_rng(1)
    X = rng.integers(0, 10, size=(400, 1)).astype(float)
    y = (X[:, 0] + rng.normal(size=400)).astype(np.float32).astype(float)
    w = np.ones(400)
    w[X[:, 0] < 2] = rng.choice([0.5, 2.0, 3.0], int((X[:, 0] < 2).sum()))
    params = {
        "objective": "regression_l1",
        "num_leaves": 2,
        "min_data_in_leaf": 20,
        "learning_rate": 1.0,
        "lambda_l2": 0.0,
        "max_bin": 255,
        "min_data_in_bin": 1,
    }
    theirs = lgb.train({**params, **LGB_ONLY}, lgb.Dataset(X, y, weight=w), 1)
    ours = dgbdt.train({**params, "verbosity": -1}, dgbdt.Dataset(X, y, weight=w), 1)
    xs = np.arange(10.0)[:, None]
    np.testing.assert_allclose(ours.predict(xs), theirs.predict(xs), atol=1e-6)


@pytest.mark.parametrize("objective", ["regression", "binary"])
def test_use_missing_false_treats_nan_as_zero_as_lightgbm(objective):
    # LightGBM's use_missing=false: NaN is 0.0 when binning (no NaN bin) and
    # when predicting (missing type None); dgbdt's nodes send NaN where 0.0 goes.
    X, theirs, ours = _fit_both(objective, 8, nan_fraction=0.1, use_missing=False)
    assert np.isnan(X).any()
    _compare(X, theirs, ours)
    nan_rows = np.where(np.isnan(X), np.nan, X)
    np.testing.assert_array_equal(
        ours.predict(nan_rows, raw_score=True), ours.predict(np.nan_to_num(X), raw_score=True)
    )
    exported = lgb.Booster(model_str=ours.model_to_string(format="lightgbm"))
    np.testing.assert_allclose(
        exported.predict(X, raw_score=True), ours.predict(X, raw_score=True), rtol=0, atol=1e-12
    )


def test_max_bin_by_feature_as_lightgbm():
    # Coarser bins on some features: both libraries bin each feature with its
    # own max_bin (the bounds are LightGBM's rule for that max_bin) and agree.
    max_bins = [4, 255, 8, 16, 3, 255]
    X, theirs, ours = _fit_both("regression", 5, max_bin_by_feature=max_bins)
    _compare(X, theirs, ours)
    bounds = ours.dump_model(format="json")["bin_upper_bounds"]  # value bins = finite bounds + 1
    assert all(len(b) + 1 <= m for b, m in zip(bounds, max_bins, strict=True))
    assert len(bounds[0]) + 1 < len(bounds[1]) + 1  # the cap bites


@pytest.mark.parametrize("objective", ["regression", "binary"])
@pytest.mark.parametrize("nan_fraction", [0.0, 0.1])
def test_zero_as_missing_as_lightgbm(objective, nan_fraction):
    # LightGBM's missing type Zero: NaN is binned as 0.0, and the split scan
    # skips the bin of 0.0 in both directions, so zero (and NaN) rows take the
    # default side; the model file says so in decision_type.
    X, theirs, ours = _fit_both(objective, 6, nan_fraction=nan_fraction, zero_as_missing=True)
    assert (X == 0).any()
    _compare(X, theirs, ours)
    default_left = np.concatenate([t.default_left for t in ours.trees])
    assert (default_left & 2).any()  # zero-is-missing nodes
    zeros = np.where(np.isnan(X), 0.0, X)
    np.testing.assert_array_equal(
        ours.predict(X, raw_score=True), ours.predict(zeros, raw_score=True)
    )
    exported = lgb.Booster(model_str=ours.model_to_string(format="lightgbm"))
    for rows in (X, zeros, X + 0.5):
        np.testing.assert_allclose(
            exported.predict(rows, raw_score=True),
            ours.predict(rows, raw_score=True),
            rtol=0,
            atol=1e-12,
        )


def test_zero_as_missing_sparse_equals_dense():
    # The values a CSR matrix leaves out are zeros: missing too.
    import scipy.sparse as sp

    X, y = prebinned("regression", nan_fraction=0.05)
    params = {**BASE, "objective": "regression", "zero_as_missing": True, "verbosity": -1}
    dense = dgbdt.train(params, dgbdt.Dataset(X, y), 5)
    sparse = dgbdt.train(params, dgbdt.Dataset(sp.csr_matrix(np.nan_to_num(X, nan=0.0)), y), 5)
    np.testing.assert_allclose(
        dense.predict(X, raw_score=True), sparse.predict(X, raw_score=True), rtol=0, atol=1e-12
    )
    lgb_params = {**params, **LGB_ONLY}
    theirs = lgb.train(
        lgb_params, lgb.Dataset(sp.csr_matrix(np.nan_to_num(X)), y, params=lgb_params), 5
    )
    np.testing.assert_allclose(
        theirs.predict(X, raw_score=True), sparse.predict(X, raw_score=True), rtol=0, atol=1e-6
    )
