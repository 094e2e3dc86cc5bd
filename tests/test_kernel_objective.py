"""native.objective.compute_gradients against numpy formulas (LightGBM's forms)."""

import numpy as np
import pytest

from dgbdt.native import common
from dgbdt.native.objective import compute_gradients

SEEDS = [0, 1, 2]
EMPTY = np.zeros(0, np.float64)


def run(objective, scores, labels, weights, alpha=0.9, sigmoid=1.0, label_weights=(1.0, 1.0)):
    k, n = scores.shape
    g = np.full((k, n), np.nan, common.GRAD_DTYPE)
    h = np.full((k, n), np.nan, common.GRAD_DTYPE)
    compute_gradients(
        objective,
        scores,
        labels,
        EMPTY if weights is None else weights,
        alpha,
        sigmoid,
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
