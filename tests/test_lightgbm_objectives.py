"""The objectives of LightGBM's src/objective/ against LightGBM 4.7 itself, on
pre-binned data (see tests/test_lightgbm_agreement.py for why pre-binned data
gives both libraries the same histograms): one round at learning rate 1 and
five at 0.1, raw scores and predictions equal within 1e-6 relative, with and
without weights; and the model each one writes in LightGBM's format is
predicted by LightGBM exactly.
"""

import warnings

import numpy as np
import pytest
from prebinned import BASE as _SHARED
from prebinned import LGB_ONLY

import dgbdt

lgb = pytest.importorskip("lightgbm")

BASE = {**_SHARED, "metric": "None"}
N = 2000


def _f32(x):
    """LightGBM keeps labels and weights as float32."""
    return np.asarray(x, np.float32).astype(np.float64)


def _data(kind, seed=0):
    rng = np.random.default_rng(seed)
    n_values = rng.integers(5, 51, size=6)
    X = np.column_stack([rng.integers(0, k, size=N) for k in n_values]).astype(np.float64)
    s = np.sin(X[:, 0] / 5) + 0.05 * X[:, 1] - 0.3 * (X[:, 2] % 3 == 0) + 0.001 * X[:, 3] * X[:, 4]
    if kind == "positive":  # log-normal, heteroscedastic
        y = np.exp(s + (0.2 + 0.2 * (X[:, 5] % 2)) * rng.normal(size=N))
    elif kind == "counts":
        y = rng.poisson(np.exp(s + 0.5)).astype(np.float64)
    elif kind == "probability":
        y = 1 / (1 + np.exp(-2 * (s - s.mean()) + 0.3 * rng.normal(size=N)))
    elif kind == "classes":
        y = np.digitize(s + 0.2 * rng.normal(size=N), np.quantile(s, [0.33, 0.66]))
    else:
        y = s + 0.3 * rng.normal(size=N)
    return X, _f32(y), _f32(rng.uniform(0.5, 2.0, N))


#: (objective, data kind, extra params)
CASES = [
    ("quantile", "real", {}),
    ("quantile", "real", {"alpha": 0.25}),
    ("poisson", "counts", {}),
    ("poisson", "counts", {"poisson_max_delta_step": 0.3}),
    ("gamma", "positive", {}),
    ("tweedie", "counts", {}),
    ("tweedie", "positive", {"tweedie_variance_power": 1.8}),
    ("mape", "positive", {}),
    ("fair", "real", {}),
    ("fair", "real", {"fair_c": 0.3}),
    ("cross_entropy", "probability", {}),
    ("cross_entropy_lambda", "probability", {}),
    ("multiclassova", "classes", {"num_class": 3}),
    ("multiclassova", "classes", {"num_class": 3, "is_unbalance": True, "sigmoid": 1.5}),
    ("regression", "positive", {"reg_sqrt": True}),
    ("regression_l1", "positive", {"reg_sqrt": True}),
    ("quantile", "positive", {"reg_sqrt": True}),
    ("mape", "positive", {"reg_sqrt": True}),
    ("fair", "positive", {"reg_sqrt": True}),
]
IDS = [f"{o}-{'-'.join(f'{k}={v}' for k, v in e.items())}" for o, _, e in CASES]


def _fit_both(objective, kind, extra, rounds, learning_rate, weighted):
    X, y, w = _data(kind)
    w = w if weighted else None
    params = {**BASE, **extra, "objective": objective, "learning_rate": learning_rate}
    lgb_params = {**params, **LGB_ONLY}
    theirs = lgb.train(lgb_params, lgb.Dataset(X, y, weight=w, params=lgb_params), rounds)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # mape's "labels < 1" warning
        ours = dgbdt.train({**params, "verbosity": -1}, dgbdt.Dataset(X, y, weight=w), rounds)
    return X, theirs, ours


def _assert_close(ours, theirs, what, rtol=1e-6):
    assert ours.shape == theirs.shape
    rel = np.max(np.abs(ours - theirs) / np.maximum(np.abs(theirs), 1.0))
    assert rel <= rtol, f"{what}: max relative difference {rel:.3g}"


def _compare(X, theirs, ours):
    lgb_leaves = [t["num_leaves"] for t in theirs.dump_model()["tree_info"]]
    assert [t["num_leaves"] for t in ours.dump_model(format="json")["trees"]] == lgb_leaves
    rng = np.random.default_rng(1)
    shuffled = np.column_stack([rng.permutation(c) for c in X.T])
    for rows in (X, shuffled):
        _assert_close(
            ours.predict(rows, raw_score=True), theirs.predict(rows, raw_score=True), "raw"
        )
        _assert_close(ours.predict(rows), theirs.predict(rows), "prediction")
    raw = ours.predict(X, raw_score=True)
    assert np.ptp(raw, axis=0).min() > 0.01  # the model moved: the test is not vacuous


@pytest.mark.parametrize("objective, kind, extra", CASES, ids=IDS)
@pytest.mark.parametrize("rounds, learning_rate", [(1, 1.0), (5, 0.1)])
def test_objective_equals_lightgbm(objective, kind, extra, rounds, learning_rate):
    _compare(*_fit_both(objective, kind, extra, rounds, learning_rate, weighted=False))


@pytest.mark.parametrize(
    "objective, kind, extra",
    [c for c in CASES if c[0] != "mape"],
    ids=[i for c, i in zip(CASES, IDS, strict=True) if c[0] != "mape"],
)
def test_weighted_objective_equals_lightgbm(objective, kind, extra):
    _compare(*_fit_both(objective, kind, extra, 5, 0.1, weighted=True))


def test_weighted_mape_is_the_weighted_loss_not_lightgbms_constant_hessian():
    # LightGBM's RegressionMAPELOSS says its hessian is constant even with
    # weights (IsConstantHessian), so its histograms take count x the first
    # row's weight as the hessians while the leaves' sums are the weights:
    # dgbdt sums the weights.  With equal weights the two agree exactly.
    X, y, _ = _data("positive")
    params = {**BASE, "objective": "mape", "learning_rate": 0.1}
    lgb_params = {**params, **LGB_ONLY}
    w = np.full(N, 2.0)
    theirs = lgb.train(lgb_params, lgb.Dataset(X, y, weight=w, params=lgb_params), 5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = dgbdt.train({**params, "verbosity": -1}, dgbdt.Dataset(X, y, weight=w), 5)
    _assert_close(ours.predict(X, raw_score=True), theirs.predict(X, raw_score=True), "raw")


@pytest.mark.parametrize("objective, kind, extra", CASES, ids=IDS)
def test_lightgbm_predicts_the_exported_model_exactly(objective, kind, extra, tmp_path):
    X, _, ours = _fit_both(objective, kind, extra, 5, 0.1, weighted=False)
    path = tmp_path / "model.txt"
    ours.save_model(str(path), format="lightgbm")
    theirs = lgb.Booster(model_file=str(path))
    np.testing.assert_array_equal(
        theirs.predict(X, raw_score=True), ours.predict(X, raw_score=True)
    )
    np.testing.assert_allclose(theirs.predict(X), ours.predict(X), rtol=1e-15, atol=0)
    # and dgbdt reads LightGBM's text back to the same predictions
    again = dgbdt.Booster(model_file=str(path))
    np.testing.assert_array_equal(again.predict(X), ours.predict(X))


def test_a_class_without_rows_stays_at_its_starting_score():
    # multiclassova trains no model for a class with no (or only) rows: LightGBM's
    # ClassNeedTrain; its score is the clipped log-odds of its share
    X, y, _ = _data("classes")
    y = np.where(y == 2, 1.0, y)  # class 2 has no rows
    params = {**BASE, "objective": "multiclassova", "num_class": 3, "learning_rate": 0.1}
    lgb_params = {**params, **LGB_ONLY}
    theirs = lgb.train(lgb_params, lgb.Dataset(X, y, params=lgb_params), 3)
    ours = dgbdt.train({**params, "verbosity": -1}, dgbdt.Dataset(X, y), 3)
    _assert_close(ours.predict(X, raw_score=True), theirs.predict(X, raw_score=True), "raw")
    assert np.ptp(ours.predict(X, raw_score=True)[:, 2]) == 0.0
