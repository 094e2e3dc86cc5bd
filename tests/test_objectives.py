"""The objectives (dgbdt.objective.objectives) beyond L2 / L1 / huber / binary /
multiclass: their label and parameter checks, starting scores and leaf renewal
against their definitions (naive numpy twins), reg_sqrt, and their model files.
Their gradients: tests/test_kernel_objective.py; agreement with LightGBM itself:
tests/test_lightgbm_objectives.py (kept apart: it skips without lightgbm)."""

import warnings

import numpy as np
import pytest

import dgbdt
from dgbdt.objective.objectives import OBJECTIVES, weighted_quantile

RNG = np.random.default_rng(0)
X = RNG.normal(size=(400, 4))
SIGNAL = X[:, 0] + 0.5 * np.sin(3 * X[:, 1])
POSITIVE = np.exp(0.5 * SIGNAL + 0.3 * RNG.normal(size=400))
PROBABILITY = 1 / (1 + np.exp(-2 * SIGNAL))
CLASSES = np.digitize(SIGNAL, [-0.5, 0.5]).astype(np.float64)
BASE = {"verbosity": -1, "num_leaves": 7, "min_data_in_leaf": 10}


def _train(params, y, rounds=3, weight=None, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return dgbdt.train({**BASE, **params}, dgbdt.Dataset(X, y, weight=weight, **kw), rounds)


@pytest.mark.parametrize(
    "objective, label, message",
    [
        ("poisson", -POSITIVE, "non-negative labels"),
        ("gamma", -POSITIVE, "non-negative labels"),
        ("tweedie", -POSITIVE, "non-negative labels"),
        ("poisson", np.zeros(400), "sum of the labels is zero"),
        ("cross_entropy", POSITIVE + 1, r"labels in \[0, 1\]"),
        ("cross_entropy_lambda", PROBABILITY - 0.5, r"labels in \[0, 1\]"),
        ("multiclassova", CLASSES + 0.5, "integer labels"),
    ],
)
def test_labels_outside_the_loss_are_refused_naming_a_row(objective, label, message):
    extra = {"num_class": 3} if objective == "multiclassova" else {}
    with pytest.raises(ValueError, match=message):
        _train({"objective": objective, **extra}, label)


def test_cross_entropy_lambda_needs_positive_weights():
    w = np.ones(400)
    w[7] = 0.0  # an exposure of zero: p = 1 - exp(-0 lambda) = 0 whatever the label
    with pytest.raises(ValueError, match="positive weights; row 7"):
        _train({"objective": "xentlambda"}, PROBABILITY, weight=w)


@pytest.mark.parametrize("alpha", [1.0, 1.5])
def test_quantile_needs_alpha_below_one(alpha):
    with pytest.raises(ValueError, match="'alpha' must be in \\(0, 1\\) for objective 'quantile'"):
        _train({"objective": "quantile", "alpha": alpha}, SIGNAL)


@pytest.mark.parametrize("objective", ["huber", "poisson", "binary", "cross_entropy"])
def test_reg_sqrt_is_named_where_it_does_not_apply(objective):
    y = (SIGNAL > 0) * 1.0 if objective in ("binary", "cross_entropy") else POSITIVE
    with pytest.warns(UserWarning, match="reg_sqrt is ignored by objective"):
        dgbdt.train({**BASE, "objective": objective, "reg_sqrt": True}, dgbdt.Dataset(X, y), 1)


@pytest.mark.parametrize("objective", ["regression", "regression_l1", "quantile", "mape", "fair"])
def test_reg_sqrt_fits_the_root_and_squares_back(objective):
    y = POSITIVE * 10
    model = _train({"objective": objective, "reg_sqrt": True}, y)
    raw = model.predict(X, raw_score=True)
    np.testing.assert_array_equal(model.predict(X), np.sign(raw) * raw * raw)
    assert model.dump_model(format="json")["objective_params"]["reg_sqrt"] == 1.0
    # the root is what is fitted: raw scores near sqrt(y), not y
    assert np.median(np.abs(raw - np.sqrt(y))) < np.median(np.abs(raw - y))
    plain = _train({"objective": objective}, y)
    assert "reg_sqrt" not in plain.dump_model(format="json")["objective_params"]


def _start(params, y, weight=None):
    """The starting score of boost_from_average (a model of no real round)."""
    return _train({**params, "learning_rate": 1e-300}, y, 1, weight).init_score


@pytest.mark.parametrize("weighted", [False, True])
def test_starting_scores_are_their_definitions(weighted):
    w = RNG.uniform(0.5, 2.0, 400) if weighted else None
    ww = np.ones(400) if w is None else w
    mean = lambda y: np.sum(ww * y) / np.sum(ww)  # noqa: E731
    a32 = float(np.float32(0.3))  # LightGBM's alpha is float32
    q = weighted_quantile(SIGNAL, w, a32)
    if w is None:
        assert q == pytest.approx(np.quantile(SIGNAL, 0.3), rel=1e-6)
    assert _start({"objective": "quantile", "alpha": 0.3}, SIGNAL, w)[0] == pytest.approx(q)
    for objective in ("poisson", "gamma", "tweedie"):
        got = _start({"objective": objective}, POSITIVE, w)[0]
        assert got == pytest.approx(np.log(mean(POSITIVE)), rel=1e-12)
    p = mean(PROBABILITY)
    got = _start({"objective": "cross_entropy"}, PROBABILITY, w)[0]
    assert got == pytest.approx(np.log(p / (1 - p)), rel=1e-12)
    got = _start({"objective": "cross_entropy_lambda"}, PROBABILITY, w)[0]
    assert got == pytest.approx(np.log(np.expm1(p)), rel=1e-12)
    got = _start({"objective": "multiclassova", "num_class": 3, "sigmoid": 2.0}, CLASSES, w)
    shares = np.array([mean(CLASSES == k) for k in range(3)])
    np.testing.assert_allclose(got, np.log(shares / (1 - shares)) / 2.0, rtol=1e-12)
    lw = 1 / np.maximum(1, np.abs(POSITIVE))
    got = _start({"objective": "mape"}, POSITIVE, w)[0]
    assert got == pytest.approx(weighted_quantile(POSITIVE, lw * ww, 0.5), rel=1e-6)


@pytest.mark.parametrize("objective, alpha", [("quantile", 0.2), ("quantile", 0.9), ("mape", 0.5)])
def test_leaf_values_are_the_quantiles_of_their_residuals(objective, alpha):
    y = POSITIVE if objective == "mape" else SIGNAL
    model = _train({"objective": objective, "alpha": alpha, "learning_rate": 1.0}, y, 1)
    leaf = model.predict(X, pred_leaf=True)[:, 0]
    residual = y - model.init_score[0]
    # MAPE's label weights are float32, as LightGBM's
    y32 = np.abs(y).astype(np.float32)
    lw = (1 / np.maximum(np.float32(1), y32)).astype(float) if objective == "mape" else None
    tree = model.trees[0]
    assert tree.n_leaves > 2
    for k in range(tree.n_leaves):
        rows = leaf == k
        want = weighted_quantile(
            residual[rows], None if lw is None else lw[rows], float(np.float32(alpha))
        )
        assert tree.leaf_value[k] == pytest.approx(want, rel=1e-9, abs=1e-12)


def test_multiclassova_predicts_each_class_sigmoid_unnormalised():
    model = _train({"objective": "ova", "num_class": 3, "sigmoid": 0.7}, CLASSES, 5)
    raw = model.predict(X, raw_score=True)
    np.testing.assert_allclose(model.predict(X), 1 / (1 + np.exp(-0.7 * raw)), rtol=1e-15)
    assert not np.allclose(model.predict(X).sum(axis=1), 1.0)
    accuracy = np.mean(model.predict(X).argmax(axis=1) == CLASSES)
    assert accuracy > 0.8


@pytest.mark.parametrize(
    "params, y",
    [
        ({"objective": "quantile", "alpha": 0.7}, SIGNAL),
        ({"objective": "poisson"}, POSITIVE),
        ({"objective": "gamma"}, POSITIVE),
        ({"objective": "tweedie", "tweedie_variance_power": 1.2}, POSITIVE),
        ({"objective": "fair", "fair_c": 0.5}, SIGNAL),
        ({"objective": "xentropy"}, PROBABILITY),
        ({"objective": "xentlambda"}, PROBABILITY),
        ({"objective": "multiclassova", "num_class": 3}, CLASSES),
        ({"objective": "mape", "reg_sqrt": True}, POSITIVE),
    ],
)
def test_model_files_round_trip_and_predict_alike(params, y, tmp_path):
    model = _train(params, y)
    for fmt in ("dgbdt", "lightgbm"):
        path = tmp_path / f"m.{fmt}"
        model.save_model(str(path), format=fmt)
        loaded = dgbdt.Booster(model_file=str(path))
        np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
        assert loaded.objective == model.objective
    doc = model.dump_model(format="json")
    assert doc["version"] == 3 and doc["objective"] == OBJECTIVES.canonical(params["objective"])


def test_the_objective_decides_the_loss():
    # each loss moves its own statistic: the 0.9 quantile model predicts above the
    # 0.1 one on every row, poisson/gamma/tweedie predict positive means
    hi = _train({"objective": "quantile", "alpha": 0.9}, SIGNAL, 20).predict(X)
    lo = _train({"objective": "quantile", "alpha": 0.1}, SIGNAL, 20).predict(X)
    assert np.mean(hi > lo) > 0.99
    assert 0.8 < np.mean(SIGNAL <= hi) and np.mean(SIGNAL <= lo) < 0.2
    for objective in ("poisson", "gamma", "tweedie"):
        pred = _train({"objective": objective}, POSITIVE, 20).predict(X)
        assert pred.min() > 0 and abs(pred.mean() / POSITIVE.mean() - 1) < 0.05


@pytest.mark.parametrize("objective", ["multiclassova", "ova", "ovr"])
def test_the_classifier_fits_one_vs_all_on_two_classes_too(objective):
    from dgbdt.sklearn import DGBDTClassifier

    y = (SIGNAL > 0).astype(int)
    clf = DGBDTClassifier(objective=objective, n_estimators=5, verbosity=-1).fit(X, y)
    assert clf.booster_.num_model_per_iteration() == 2
    assert np.mean(clf.predict(X) == y) > 0.8
