"""native.objective.compute_gradients against numpy formulas (LightGBM's forms)."""

import numpy as np
import pytest
from dgbdt.native import common
from dgbdt.native.objective import compute_gradients

SEEDS = [0, 1, 2]
EMPTY = np.zeros(0, np.float64)


def run(
    objective, scores, labels, weights, alpha=0.9, sigmoid=1.0, label_weights=(1.0, 1.0), extra=0.0
):
    k, n = scores.shape
    g = np.full((k, n), np.nan, common.GRAD_DTYPE)
    h = np.full((k, n), np.nan, common.GRAD_DTYPE)
    if objective == common.OBJ_MULTICLASS_OVA and len(label_weights) == 2:
        label_weights = tuple(label_weights) * k
    compute_gradients(
        objective,
        scores,
        labels,
        EMPTY if weights is None else weights,
        alpha,
        sigmoid,
        extra,
        np.asarray(label_weights, np.float64),
        g,
        h,
    )
    return g, h


def twin(objective, scores, labels, weights, alpha=0.9, sigmoid=1.0, label_weights=(1.0, 1.0)):
    w = np.ones(scores.shape[1]) if weights is None else weights
    s = scores[0]
    if objective == common.OBJ_REGRESSION:
        return ((s - labels) * w)[None], w[None]
    if objective == common.OBJ_REGRESSION_L1:
        return (np.sign(s - labels) * w)[None], w[None]
    if objective == common.OBJ_HUBER:
        d = s - labels
        return (np.clip(d, -alpha, alpha) * w)[None], w[None]
    if objective == common.OBJ_BINARY:
        # d/ds of lw * logloss(y, sigmoid(sigma * s)), as in LightGBM.
        p = 1.0 / (1.0 + np.exp(-sigmoid * s))
        lw = np.where(labels > 0, label_weights[1], label_weights[0])
        return (sigmoid * (p - labels) * lw * w)[None], (sigmoid**2 * p * (1 - p) * lw * w)[None]
    # multiclass: softmax cross-entropy, hessian scaled by K / (K - 1).
    k = scores.shape[0]
    z = np.exp(scores - scores.max(axis=0))
    p = z / z.sum(axis=0)
    onehot = np.arange(k)[:, None] == labels.astype(int)[None, :]
    return (p - onehot) * w, k / (k - 1.0) * p * (1 - p) * w


def data(rng, objective, n=500, k=1):
    scores = rng.normal(scale=2.0, size=(k, n))
    if objective == common.OBJ_BINARY:
        labels = rng.integers(0, 2, n).astype(np.float64)
    elif objective == common.OBJ_MULTICLASS:
        labels = rng.integers(0, k, n).astype(np.float64)
    else:
        labels = rng.normal(scale=2.0, size=n)
        labels[:5] = scores[0, :5]  # zero residual: L1 sign(0) = 0
        labels[5:10] = scores[0, 5:10] + 0.9  # |d| == alpha on the huber boundary
    return scores, labels


OBJECTIVES = [
    common.OBJ_REGRESSION,
    common.OBJ_REGRESSION_L1,
    common.OBJ_HUBER,
    common.OBJ_BINARY,
    common.OBJ_MULTICLASS,
]


@pytest.mark.parametrize("objective", OBJECTIVES)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("seed", SEEDS)
def test_gradients_match_formulas(objective, weighted, seed):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(3, 6)) if objective == common.OBJ_MULTICLASS else 1
    scores, labels = data(rng, objective, k=k)
    weights = rng.uniform(0.0, 3.0, scores.shape[1]) if weighted else None
    g, h = run(objective, scores, labels, weights)
    eg, eh = twin(objective, scores, labels, weights)
    np.testing.assert_allclose(g, eg, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(h, eh, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("alpha", [0.1, 1.0, 5.0])
def test_huber_alpha(alpha):
    rng = np.random.default_rng(0)
    scores, labels = data(rng, common.OBJ_HUBER)
    g, h = run(common.OBJ_HUBER, scores, labels, None, alpha=alpha)
    eg, eh = twin(common.OBJ_HUBER, scores, labels, None, alpha=alpha)
    np.testing.assert_allclose(g, eg, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(h, eh)


@pytest.mark.parametrize("sigmoid", [0.5, 1.0, 2.0])
@pytest.mark.parametrize("label_weights", [(1.0, 1.0), (1.0, 4.0), (2.5, 1.0)])
@pytest.mark.parametrize("weighted", [False, True])
def test_binary_sigmoid_and_label_weights(sigmoid, label_weights, weighted):
    rng = np.random.default_rng(1)
    scores, labels = data(rng, common.OBJ_BINARY)
    weights = rng.uniform(0.0, 3.0, scores.shape[1]) if weighted else None
    g, h = run(
        common.OBJ_BINARY, scores, labels, weights, sigmoid=sigmoid, label_weights=label_weights
    )
    eg, eh = twin(
        common.OBJ_BINARY, scores, labels, weights, sigmoid=sigmoid, label_weights=label_weights
    )
    np.testing.assert_allclose(g, eg, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(h, eh, rtol=1e-6, atol=1e-7)


def test_extreme_scores_stay_finite():
    scores = np.array([[-800.0, 800.0, -800.0, 800.0]])
    labels = np.array([0.0, 1.0, 1.0, 0.0])
    g, h = run(common.OBJ_BINARY, scores, labels, None)
    assert np.all(np.isfinite(g)) and np.all(np.isfinite(h))
    np.testing.assert_allclose(g[0], [0.0, 0.0, -1.0, 1.0], atol=1e-12)
    multi = np.array([[1000.0, -1000.0], [0.0, 0.0], [-1000.0, 1000.0]])
    g, h = run(common.OBJ_MULTICLASS, multi, np.array([0.0, 0.0]), None)
    assert np.all(np.isfinite(g)) and np.all(np.isfinite(h))
    np.testing.assert_allclose(g[:, 0], [0.0, 0.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(g[:, 1], [-1.0, 0.0, 1.0], atol=1e-12)


def test_zero_weight_rows_have_zero_gradient_and_hessian():
    rng = np.random.default_rng(2)
    for objective in OBJECTIVES:
        k = 3 if objective == common.OBJ_MULTICLASS else 1
        scores, labels = data(rng, objective, n=50, k=k)
        weights = np.ones(50)
        weights[::3] = 0.0
        g, h = run(objective, scores, labels, weights)
        assert np.all(g[:, ::3] == 0) and np.all(h[:, ::3] == 0)


# --- the objectives of LightGBM's regression_objective.hpp / xentropy_objective.hpp


def _loss_twin(objective, s, y, w, alpha, extra):
    """Gradient and hessian of each loss written from its formula (numpy, float64)."""
    d = s - y
    if objective == common.OBJ_QUANTILE:
        return np.where(d >= 0, 1 - alpha, -alpha) * w, w
    if objective == common.OBJ_MAPE:
        return np.sign(d) * w / np.maximum(1.0, np.abs(y)), w
    if objective == common.OBJ_FAIR:
        c = extra
        return c * d / (np.abs(d) + c) * w, c * c / (np.abs(d) + c) ** 2 * w
    if objective == common.OBJ_POISSON:
        # loss exp(s) - y s; hessian scaled by extra = exp(max_delta_step)
        return (np.exp(s) - y) * w, np.exp(s) * extra * w
    if objective == common.OBJ_GAMMA:
        # loss y exp(-s) + s
        return (1 - y * np.exp(-s)) * w, y * np.exp(-s) * w
    if objective == common.OBJ_TWEEDIE:
        # loss -y exp((1-rho) s) / (1-rho) + exp((2-rho) s) / (2-rho)
        rho = extra
        e1, e2 = np.exp((1 - rho) * s), np.exp((2 - rho) * s)
        return (-y * e1 + e2) * w, (-y * (1 - rho) * e1 + (2 - rho) * e2) * w
    if objective == common.OBJ_CROSS_ENTROPY:
        p = 1 / (1 + np.exp(-s))
        return (p - y) * w, p * (1 - p) * w
    raise AssertionError(objective)


def _xentlambda_twin(s, y, w):
    """Derivatives of -(1-y) log(1-p) - y log(p), p = 1 - exp(-w log(1 + e^s)),
    by central differences of the loss (an independent route)."""

    def loss(t):
        lam = np.log1p(np.exp(t))
        p = 1 - np.exp(-w * lam)
        return -(1 - y) * np.log(1 - p) - y * np.log(p)

    eps = 1e-4
    g = (loss(s + eps) - loss(s - eps)) / (2 * eps)
    h = (loss(s + eps) - 2 * loss(s) + loss(s - eps)) / eps**2
    return g, h


NEW_REGRESSION = [
    (common.OBJ_QUANTILE, 0.9, 0.0),
    (common.OBJ_QUANTILE, 0.25, 0.0),
    (common.OBJ_MAPE, 0.9, 0.0),
    (common.OBJ_FAIR, 0.9, 1.0),
    (common.OBJ_FAIR, 0.9, 0.3),
    (common.OBJ_POISSON, 0.9, float(np.exp(0.7))),
    (common.OBJ_GAMMA, 0.9, 0.0),
    (common.OBJ_TWEEDIE, 0.9, 1.5),
    (common.OBJ_TWEEDIE, 0.9, 1.1),
    (common.OBJ_CROSS_ENTROPY, 0.9, 0.0),
]


@pytest.mark.parametrize("objective, alpha, extra", NEW_REGRESSION)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("seed", SEEDS)
def test_more_losses_match_their_formulas(objective, alpha, extra, weighted, seed):
    rng = np.random.default_rng(seed)
    n = 400
    scores = rng.normal(scale=1.5, size=(1, n))
    if objective == common.OBJ_CROSS_ENTROPY:
        labels = rng.uniform(0, 1, n).astype(np.float32).astype(np.float64)
        scores[0, :5] = -40.0  # LightGBM's other branch below -37
    elif objective == common.OBJ_MAPE:
        labels = rng.normal(scale=3.0, size=n)
        labels[:5] = 0.25  # |y| < 1 counts as 1
    elif objective in (common.OBJ_QUANTILE, common.OBJ_FAIR):
        labels = rng.normal(scale=2.0, size=n)
        labels[:5] = scores[0, :5]  # zero residual: quantile takes the >= 0 side
    else:
        labels = rng.exponential(2.0, n)
        labels[:5] = 0.0
    weights = rng.uniform(0.1, 3.0, n) if weighted else None
    g, h = run(objective, scores, labels, weights, alpha=alpha, extra=extra)
    eg, eh = _loss_twin(
        objective, scores[0], labels, np.ones(n) if weights is None else weights, alpha, extra
    )
    np.testing.assert_allclose(g[0], eg, rtol=2e-6, atol=1e-6)
    np.testing.assert_allclose(h[0], eh, rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("seed", SEEDS)
def test_cross_entropy_lambda_matches_its_loss(seed):
    rng = np.random.default_rng(seed)
    n = 300
    s = rng.normal(scale=1.0, size=n)
    y = rng.uniform(0.05, 0.95, n)
    w = rng.uniform(0.5, 3.0, n)
    g, h = run(common.OBJ_CROSS_ENTROPY_LAMBDA, s[None], y, w)
    eg, eh = _xentlambda_twin(s, y, w)
    np.testing.assert_allclose(g[0], eg, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(h[0], eh, rtol=1e-3, atol=1e-4)
    # without weights it is the cross-entropy of sigmoid(s) (w = 1 in the same loss)
    g, h = run(common.OBJ_CROSS_ENTROPY_LAMBDA, s[None], y, None)
    eg, eh = _xentlambda_twin(s, y, np.ones(n))
    np.testing.assert_allclose(g[0], eg, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(h[0], eh, rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("seed", SEEDS)
def test_multiclassova_is_one_binary_model_per_class(seed):
    rng = np.random.default_rng(seed)
    k, n = 4, 200
    scores = rng.normal(scale=2.0, size=(k, n))
    labels = rng.integers(0, k, n).astype(np.float64)
    weights = rng.uniform(0.1, 3.0, n)
    label_weights = rng.uniform(0.5, 2.0, 2 * k)
    g, h = run(
        common.OBJ_MULTICLASS_OVA, scores, labels, weights, sigmoid=1.5, label_weights=label_weights
    )
    for c in range(k):
        eg, eh = twin(
            common.OBJ_BINARY,
            scores[c : c + 1],
            (labels == c).astype(np.float64),
            weights,
            sigmoid=1.5,
            label_weights=label_weights[2 * c : 2 * c + 2],
        )
        np.testing.assert_allclose(g[c], eg[0], rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(h[c], eh[0], rtol=1e-6, atol=1e-7)
