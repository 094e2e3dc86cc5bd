"""Numerical edge cases (issue 27, items 7, 8 and 11): cat_smooth=0, tiny and
zero sample weights, and the error naming what overflowed the first gradients."""

import warnings
from decimal import Decimal, localcontext

import numpy as np
import pytest
from dgbdt.native import common
from dgbdt.native.objective import compute_gradients
from dgbdt.native.split import stable_order_lt

import dgbdt

QUIET = {"verbosity": -1, "num_threads": 1}


# -- item 7: cat_smooth=0 ------------------------------------------------------------
# std::stable_sort's orders (g++ 12, libstdc++) of keys with NaN, which compare
# false both ways: the order then depends on the algorithm's steps.
LIBSTDCXX_ORDERS = [
    ([2, "nan", 5, 1, 3], [0, 1, 3, 4, 2]),
    (["nan", 3, "nan", 1, 2, "nan", 0, "nan", 5], [0, 1, 2, 5, 6, 3, 4, 7, 8]),
    (
        [4, "nan", 1, "nan", "nan", 2, 7, 0, "nan", 3, "nan", 6, "nan", 5, 1, "nan"],
        [7, 2, 0, 1, 3, 4, 5, 6, 8, 9, 10, 11, 12, 14, 13, 15],
    ),
    (
        [1, 0, "nan", "nan", 3, 2, "nan", 1, 0, "nan", 5, "nan", 4, "nan", 2, "nan", 0, 3]
        + ["nan", 1],
        [1, 8, 16, 0, 2, 3, 7, 19, 5, 14, 4, 6, 9, 17, 12, 10, 11, 13, 15, 18],
    ),
]


@pytest.mark.parametrize("keys, order", LIBSTDCXX_ORDERS)
def test_category_order_with_nan_keys_is_libstdcxx_stable_sort(keys, order):
    got = stable_order_lt(np.array(keys, np.float64))
    np.testing.assert_array_equal(got, order)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("n", [0, 1, 2, 7, 8, 15, 29, 100])
def test_category_order_without_nan_is_a_stable_argsort(seed, n):
    rng = np.random.default_rng(seed)
    keys = rng.integers(-3, 4, n).astype(np.float64)  # many ties
    keys[rng.random(n) < 0.1] = np.inf
    keys[rng.random(n) < 0.1] = -np.inf
    np.testing.assert_array_equal(stable_order_lt(keys), np.argsort(keys, kind="stable"))


def _categorical_data(seed, n=600, k=24):
    """Two tied categorical columns: a split on one leaves categories of the
    other without rows in the children (0 / 0 sort keys with cat_smooth=0)."""
    rng = np.random.default_rng(seed)
    c1 = rng.integers(0, k, n).astype(np.float64)
    c2 = (c1 * 7 + rng.integers(0, 3, n)) % k
    x = rng.normal(size=n)
    effect = rng.normal(size=k)
    y = effect[c1.astype(int)] + 0.5 * effect[c2.astype(int)] + 0.3 * x + 0.1 * rng.normal(size=n)
    grid = np.array([[a, b, 0.0] for a in range(k) for b in range(k)])
    return np.column_stack([c1, c2, x]), y, grid


CAT_PARAMS = {
    **QUIET,
    "objective": "regression",
    "cat_smooth": 0,
    "num_leaves": 8,
    "min_data_in_leaf": 5,
    "min_data_per_group": 5,
    "max_cat_threshold": 16,
    "max_cat_to_onehot": 4,
    "learning_rate": 1.0,
}


@pytest.mark.parametrize("seed", [0, 3])
def test_cat_smooth_zero_equals_lightgbm(seed):
    lgb = pytest.importorskip("lightgbm")
    X, y, grid = _categorical_data(seed)
    ours = dgbdt.train(
        {**CAT_PARAMS, "cat_high_cardinality_rows": 0},  # LightGBM's rule
        dgbdt.Dataset(X, y, categorical_feature=[0, 1]),
        3,
    )
    theirs = lgb.train(CAT_PARAMS, lgb.Dataset(X, y, categorical_feature=[0, 1]), 3)
    # every pair of categories, those a leaf had no rows of included: where
    # they go follows the order LightGBM's sort gave them
    for Z in (X, grid):
        np.testing.assert_allclose(
            ours.predict(Z, raw_score=True), theirs.predict(Z, raw_score=True), atol=1e-6
        )


@pytest.mark.parametrize(
    "extra",
    [{"use_quantized_grad": True}, {"tree_learner": "data"}, {"tree_learner": "voting"}],
)
def test_cat_smooth_zero_trains_in_every_scan(extra):
    X, y, grid = _categorical_data(1)
    model = dgbdt.train({**CAT_PARAMS, **extra}, dgbdt.Dataset(X, y, categorical_feature=[0, 1]), 3)
    assert model.trees[0].n_leaves == 8
    assert np.isfinite(model.predict(grid)).all()


# -- item 8: tiny and zero weights ---------------------------------------------------
def _xentlambda_reference(s, y, w):
    """LightGBM's xentlambda formulas in 400-digit decimals (no cancellation)."""
    with localcontext() as ctx:
        ctx.prec = 400
        s, y, w = Decimal(s), Decimal(y), Decimal(w)
        epf = s.exp()
        hhat = (1 + epf).ln()
        z = 1 - (-w * hhat).exp()
        g = (1 - y / z) * w / (1 + 1 / epf)
        c = 1 / (1 - z)
        a = w * epf / (1 + epf) ** 2
        b = c / (c - 1) ** 2 * (1 + w * epf - c)
        return float(g), float(a * (1 + y * b))


WEIGHTS = [1e-300, 1e-30, 1e-20, 1e-16, 1e-9, 1e-5, 1e-3, 0.5, 1.0, 7.0, 30.0]


@pytest.mark.parametrize("w", WEIGHTS)
def test_cross_entropy_lambda_kernel_is_accurate_at_any_weight(w):
    scores = np.array([[-20.0, -3.0, -0.5, 0.0, 0.7, 3.0]])
    n = scores.shape[1]
    for y in (0.0, 0.3, 1.0):
        labels = np.full(n, y)
        g = np.empty((1, n), common.GRAD_DTYPE)
        h = np.empty((1, n), common.GRAD_DTYPE)
        weights = np.full(n, w)
        compute_gradients(
            common.OBJ_CROSS_ENTROPY_LAMBDA, scores, labels, weights, 0.9, 1.0, 0.0,
            np.ones(2), g, h,
        )  # fmt: skip
        want = np.array([_xentlambda_reference(s, y, w) for s in scores[0]])
        # float32 outputs; the hessian's epf * (w / z) - 1 cancels at s = -20 for
        # every weight (LightGBM's formula too)
        np.testing.assert_allclose(g[0], want[:, 0], rtol=1e-6, atol=1e-30)
        np.testing.assert_allclose(h[0], want[:, 1], rtol=3e-7, atol=1e-30)


def _xent_data(n=300):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 3))
    y = 1 / (1 + np.exp(-2 * X[:, 0] + 0.3 * rng.normal(size=n)))
    y[[5, 6]] = [0.0, 1.0]
    w = rng.uniform(0.5, 2.0, n)
    return X, np.float32(y).astype(np.float64), np.float32(w).astype(np.float64)


XENT_PARAMS = {**QUIET, "objective": "cross_entropy_lambda", "num_leaves": 7}


@pytest.mark.parametrize("tiny", [1e-20, 1e-30])
def test_tiny_weight_cross_entropy_lambda_trains_as_lightgbm(tiny):
    """LightGBM's own arithmetic holds down to weights of about 1e-15; below,
    its z = 1 - exp(-w lambda) rounds to 0, its gradients are NaN or -inf and
    its trees never split.  The row's gradient has a finite limit as its
    weight goes to 0: dgbdt's at 1e-20 or 1e-30 is LightGBM's at 1e-9."""
    lgb = pytest.importorskip("lightgbm")
    X, y, w = _xent_data()
    w_lgb = w.copy()
    w_lgb[[5, 6]] = 1e-9
    theirs = lgb.train(XENT_PARAMS, lgb.Dataset(X, y, weight=w_lgb), 5)
    for weight in (1e-9, tiny):  # dgbdt's stable branch at both
        w_ours = w.copy()
        w_ours[[5, 6]] = weight
        ours = dgbdt.train(XENT_PARAMS, dgbdt.Dataset(X, y, weight=w_ours), 5)
        np.testing.assert_allclose(
            ours.predict(X, raw_score=True), theirs.predict(X, raw_score=True), atol=1e-6
        )


POINTWISE = [
    ("regression", "real", {}),
    ("regression_l1", "real", {}),
    ("huber", "real", {}),
    ("quantile", "real", {}),
    ("fair", "real", {}),
    ("poisson", "counts", {}),
    ("gamma", "positive", {}),
    ("tweedie", "counts", {}),
    ("binary", "binary", {}),
    ("cross_entropy", "probability", {}),
    ("multiclass", "classes", {"num_class": 3}),
    ("multiclassova", "classes", {"num_class": 3}),
]


def _labels(kind, s, rng):
    return {
        "real": s,
        "positive": np.exp(s),
        "counts": rng.poisson(np.exp(s)).astype(np.float64),
        "binary": (s > 0).astype(np.float64),
        "probability": 1 / (1 + np.exp(-s)),
        "classes": np.digitize(s, [-0.5, 0.5]).astype(np.float64),
    }[kind]


@pytest.mark.parametrize("objective, kind, extra", POINTWISE, ids=[c[0] for c in POINTWISE])
@pytest.mark.parametrize("tiny", [1e-30, 0.0])
def test_weighted_objectives_take_tiny_and_zero_weights_as_lightgbm(objective, kind, extra, tiny):
    """(mape is left out: LightGBM takes its hessians as count x the first
    row's weight, see test_lightgbm_objectives; cross_entropy_lambda above.)"""
    lgb = pytest.importorskip("lightgbm")
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 3))
    s = X[:, 0] + 0.3 * rng.normal(size=300)
    y = np.float32(_labels(kind, s, rng)).astype(np.float64)
    w = np.float32(rng.uniform(0.5, 2.0, 300)).astype(np.float64)
    w[[3, 10, 11]] = tiny
    params = {**QUIET, "objective": objective, "num_leaves": 7, **extra}
    theirs = lgb.train(params, lgb.Dataset(X, y, weight=w), 3)
    ours = dgbdt.train(params, dgbdt.Dataset(X, y, weight=w), 3)
    np.testing.assert_allclose(
        ours.predict(X, raw_score=True), theirs.predict(X, raw_score=True), atol=1e-6
    )


def test_cross_entropy_lambda_refuses_a_zero_weight_as_lightgbm():
    X, y, w = _xent_data()
    w[7] = 0.0
    with pytest.raises(ValueError, match="positive weights; row 7 has weight 0"):
        dgbdt.train(XENT_PARAMS, dgbdt.Dataset(X, y, weight=w), 2)


# -- item 11: what overflowed the first gradients -------------------------------------
def _data(kind, n=200):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 3))
    return X, _labels(kind, X[:, 0], rng)


@pytest.mark.parametrize(
    "params, kind, culprit",
    [
        ({"objective": "fair", "fair_c": 1e300}, "real", r"fair_c=1e\+300 \(default 1.0\)"),
        (
            {"objective": "poisson", "poisson_max_delta_step": 1000},
            "counts",
            r"poisson_max_delta_step=1000.0 \(default 0.7\)",
        ),
        ({"objective": "binary", "sigmoid": 1e300}, "binary", r"sigmoid=1e\+300"),
        ({"objective": "binary", "scale_pos_weight": 1e300}, "binary", r"scale_pos_weight=1e\+300"),
        (
            {"objective": "multiclassova", "num_class": 3, "sigmoid": 1e300},
            "classes",
            r"sigmoid=1e\+300",
        ),
    ],
)
def test_overflowing_objective_parameter_is_named(params, kind, culprit):
    X, y = _data(kind)
    with pytest.raises(ValueError, match="non-finite gradients") as err:
        dgbdt.train({**QUIET, **params}, dgbdt.Dataset(X, y), 2)
    assert err.match(culprit)
    assert "init_score" not in str(err.value)


@pytest.mark.parametrize(
    "objective, kind",
    [("regression", "real"), ("binary", "binary"), ("cross_entropy_lambda", "probability")],
)
def test_huge_weights_are_named(objective, kind):
    X, y = _data(kind)
    w = np.ones(len(y))
    w[17] = 1e300
    with pytest.raises(ValueError, match=r"row 17\).*sample weights \(up to 1e\+300") as err:
        dgbdt.train({**QUIET, "objective": objective}, dgbdt.Dataset(X, y, weight=w), 2)
    assert "init_score" not in str(err.value)


def test_a_given_init_score_is_named():
    X, y = _data("real")
    ds = dgbdt.Dataset(X, y, init_score=np.full(len(y), 1e39))
    with pytest.raises(ValueError, match=r"check init_score") as err:
        dgbdt.train(QUIET, ds, 2)
    assert "fair_c" not in str(err.value) and "weights" not in str(err.value)


def test_a_custom_objective_is_named():
    X, y = _data("real")

    def fobj(preds, data):
        return np.full(len(preds), 1e39), np.ones(len(preds))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # float32 overflow in the cast
        with pytest.raises(ValueError, match="the custom objective's gradients") as err:
            dgbdt.train({**QUIET, "objective": fobj}, dgbdt.Dataset(X, y), 2)
    assert "init_score" not in str(err.value)
