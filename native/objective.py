"""Objective kernels: gradients and hessians of the loss w.r.t. the raw score.

Selected by an integer code from :mod:`common` (closures are not cached).
Scores are (n_classes, n_samples) so every class's scores are contiguous.
Each branch follows LightGBM's src/objective/*.hpp, including where it rounds
to float32 (its ``score_t`` and ``label_t``), so the trees agree with its
trees to rounding.  Division is IEEE's, as in LightGBM's C++ (Numba's
``error_model="numpy"``): an overflow or a division by zero gives inf or NaN,
never an exception (which a ``prange`` loop would turn into a SystemError);
the boosting loop's check of the first gradients names the likely cause.
"""

import numpy as np
from numba import njit, prange

from .common import (
    OBJ_BINARY,
    OBJ_CROSS_ENTROPY,
    OBJ_FAIR,
    OBJ_GAMMA,
    OBJ_HUBER,
    OBJ_MAPE,
    OBJ_MULTICLASS,
    OBJ_MULTICLASS_OVA,
    OBJ_POISSON,
    OBJ_QUANTILE,
    OBJ_REGRESSION,
    OBJ_REGRESSION_L1,
    OBJ_TWEEDIE,
)


@njit(cache=True, error_model="numpy")
def _sign(x):
    return 1.0 if x > 0.0 else (-1.0 if x < 0.0 else 0.0)


@njit(cache=True, error_model="numpy")
def _binary(s, positive, sigmoid, lw, w):
    """LightGBM's form with labels +-1: response = -y sigma / (1 + exp(y sigma s))."""
    sign = 1.0 if positive else -1.0
    response = -sign * sigmoid / (1.0 + np.exp(sign * sigmoid * s))
    abs_response = abs(response)
    return response * lw * w, abs_response * (sigmoid - abs_response) * lw * w


@njit(cache=True, error_model="numpy")
def _cross_entropy(s, y, w):
    """xentropy: p = sigmoid(s); (1 - y) is float arithmetic in LightGBM (label_t)."""
    if s > -37.0:
        e = np.exp(-s)
        one_minus_y = np.float64(np.float32(1.0) - np.float32(y))
        return (one_minus_y - y * e) / (1.0 + e) * w, e / ((1.0 + e) * (1.0 + e)) * w
    e = np.exp(s)
    return (e - y) * w, e * w


# Where LightGBM's xentlambda arithmetic keeps its digits: with x = w * lambda,
# z = 1 - exp(-x) and 1 - z lose about 1e-16 / min(x, exp(-x)) relative, under
# 1e-9 on [1e-4, 16].  Below, a tiny weight rounds z to 0 (x < 1.1e-16: NaN or
# -inf gradients, and LightGBM's trees never split); above, 1 - z rounds to 0
# (x > ~37).  Outside, the same derivatives are taken without cancelling.
_XENTLAMBDA_X_LO = 1e-4
_XENTLAMBDA_X_HI = 16.0


@njit(cache=True, error_model="numpy")
def _cross_entropy_lambda(s, y, w, weighted):
    """xentlambda: p = 1 - exp(-w lambda), lambda = log(1 + exp(s)); without
    weights it is the plain cross-entropy of sigmoid(s) (LightGBM's two branches).
    LightGBM's formulas where they are accurate; the same derivatives without
    the cancellations elsewhere (c = 1 / (1 - z) = exp(x), d = c - 1 = expm1(x),
    c / d = 1 / z)."""
    if not weighted:
        z = 1.0 / (1.0 + np.exp(-s))
        return z - y, z * (1.0 - z)
    epf = np.exp(s)
    hhat = np.log1p(epf)
    x = w * hhat
    enf = 1.0 / epf
    d = 1.0 + epf
    a = w * epf / (d * d)
    if _XENTLAMBDA_X_LO <= x <= _XENTLAMBDA_X_HI:
        z = 1.0 - np.exp(-x)
        g = (1.0 - y / z) * w / (1.0 + enf)
        c = 1.0 / (1.0 - z)
        d = c - 1.0
        b = (c / (d * d)) * (1.0 + w * epf - c)
        return g, a * (1.0 + y * b)
    # The same derivatives, rearranged with c = 1 / (1 - z) = exp(x),
    # d = c - 1 = expm1(x), c / d = 1 / z and w / z - w / d = w, so that nothing
    # cancels: g = ((1 - y) w - y w/d) / (1 + enf),
    # h = (1 - y) a + y epf / (1 + epf)^2 (w/d) (epf w/z - 1).
    # For a tiny x, w/z and w/d are taken as 1 / (lambda (z/x)): z/x and d/x
    # are near 1, where w / z would round through a subnormal z.
    if x < _XENTLAMBDA_X_LO:
        wz = 1.0 / (hhat * (-np.expm1(-x) / x))
        wd = 1.0 / (hhat * (np.expm1(x) / x))
    else:
        wz = w / -np.expm1(-x)
        wd = w / np.expm1(x)
    g = ((1.0 - y) * w - y * wd) / (1.0 + enf)
    return g, (1.0 - y) * a + y * (epf / (d * d)) * wd * (epf * wz - 1.0)


@njit(cache=True, error_model="numpy")
def _pointwise(objective, s, y, w, weighted, alpha, extra):
    """(gradient, hessian) of one row of a one-output regression objective."""
    if objective == OBJ_REGRESSION:
        # LightGBM multiplies in float32: (float)((float)(s - y) * (float)w)
        return np.float64(np.float32(s - y) * np.float32(w)), w
    if objective == OBJ_REGRESSION_L1:
        return _sign(s - y) * w, w
    if objective == OBJ_HUBER:
        diff = s - y
        if abs(diff) <= alpha:
            return diff * w, w
        return (alpha if diff > 0.0 else -alpha) * w, w
    if objective == OBJ_QUANTILE:
        # alpha is float32 in LightGBM, the residual too
        a = np.float32(alpha)
        if np.float32(s - y) >= 0:
            return np.float64((np.float32(1.0) - a) * np.float32(w)), w
        return np.float64(-a * np.float32(w)), w
    if objective == OBJ_MAPE:
        # label weight 1 / max(1, |y|), in float32 as LightGBM's label_weight_
        lw = np.float32(1.0) / max(np.float32(1.0), abs(np.float32(y)))
        if weighted:
            lw = lw * np.float32(w)
        return _sign(s - y) * np.float64(lw), w
    if objective == OBJ_FAIR:
        x = s - y
        return extra * x / (abs(x) + extra) * w, extra * extra / ((abs(x) + extra) ** 2) * w
    if objective == OBJ_POISSON:
        # extra = exp(poisson_max_delta_step)
        e = np.exp(s)
        return (e - y) * w, e * extra * w
    if objective == OBJ_GAMMA:
        e = np.exp(-s)
        return (1.0 - y * e) * w, y * e * w
    if objective == OBJ_TWEEDIE:
        rho = extra
        e1 = np.exp((1.0 - rho) * s)
        e2 = np.exp((2.0 - rho) * s)
        return (-y * e1 + e2) * w, (-y * (1.0 - rho) * e1 + (2.0 - rho) * e2) * w
    if objective == OBJ_CROSS_ENTROPY:
        return _cross_entropy(s, y, w)
    # OBJ_CROSS_ENTROPY_LAMBDA (the last code; one return type for Numba)
    return _cross_entropy_lambda(s, y, w, weighted)


@njit(cache=True, error_model="numpy")
def _softmax_row(scores, i, yi, w, gradients, hessians):
    """Softmax; hessian scaled by K / (K - 1) as in LightGBM."""
    n_classes = scores.shape[0]
    max_score = scores[0, i]
    for k in range(1, n_classes):
        max_score = max(max_score, scores[k, i])
    total = 0.0
    for k in range(n_classes):
        total += np.exp(scores[k, i] - max_score)
    factor = n_classes / (n_classes - 1.0)
    for k in range(n_classes):
        p = np.exp(scores[k, i] - max_score) / total
        gradients[k, i] = ((p - 1.0) if k == yi else p) * w
        hessians[k, i] = factor * p * (1.0 - p) * w


@njit(cache=True, parallel=True, error_model="numpy")
def compute_gradients(
    objective, scores, labels, weights, alpha, sigmoid, extra, label_weights, gradients, hessians
):
    """Gradients and hessians for every row (and class).

    Parameters
    ----------
    objective : int                       # IN  OBJ_* code
    scores : float64[n_classes, n_samples]  # IN  raw scores
    labels : float64[n_samples]           # IN  class index for multiclass, 0/1 for binary
    weights : float64[n_samples] or float64[0]  # IN  empty means all ones
    alpha : float                         # IN  huber delta, quantile
    sigmoid : float                       # IN  binary / multiclassova sigmoid scale
    extra : float                         # IN  fair_c, tweedie's variance power,
                                          #     exp(poisson_max_delta_step)
    label_weights : float64[2 * n_classes]  # IN  binary / multiclassova: the weight of
                                          #     class k's negatives (2k) and positives (2k+1)
    gradients, hessians : float32[n_classes, n_samples]  # OUT
    """
    n_classes = scores.shape[0]
    n_samples = scores.shape[1]
    weighted = weights.shape[0] > 0
    for i in prange(n_samples):
        w = weights[i] if weighted else 1.0
        y = labels[i]
        if objective == OBJ_BINARY:
            positive = y > 0.0
            lw = label_weights[1] if positive else label_weights[0]
            gradients[0, i], hessians[0, i] = _binary(scores[0, i], positive, sigmoid, lw, w)
        elif objective == OBJ_MULTICLASS_OVA:
            yi = int(y)
            for k in range(n_classes):
                positive = yi == k
                lw = label_weights[2 * k + 1] if positive else label_weights[2 * k]
                gradients[k, i], hessians[k, i] = _binary(scores[k, i], positive, sigmoid, lw, w)
        elif objective == OBJ_MULTICLASS:
            _softmax_row(scores, i, int(y), w, gradients, hessians)
        else:
            gradients[0, i], hessians[0, i] = _pointwise(
                objective, scores[0, i], y, w, weighted, alpha, extra
            )
