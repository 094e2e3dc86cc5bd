"""Objective kernels: gradients and hessians of the loss w.r.t. the raw score.

Selected by an integer code from :mod:`common` (closures are not cached).
Scores are (n_classes, n_samples) so every class's scores are contiguous.
"""

import numpy as np
from numba import njit, prange

from .common import OBJ_BINARY, OBJ_HUBER, OBJ_REGRESSION, OBJ_REGRESSION_L1


@njit(cache=True, parallel=True)
def compute_gradients(
    objective, scores, labels, weights, alpha, sigmoid, label_weights, gradients, hessians
):
    """Gradients and hessians for every row (and class).

    Parameters
    ----------
    objective : int                       # IN  OBJ_* code
    scores : float64[n_classes, n_samples]  # IN  raw scores
    labels : float64[n_samples]           # IN  class index for multiclass, 0/1 for binary
    weights : float64[n_samples] or float64[0]  # IN  empty means all ones
    alpha : float                         # IN  huber delta
    sigmoid : float                       # IN  binary sigmoid scale
    label_weights : float64[2]            # IN  binary: weight of label 0 and label 1
    gradients, hessians : float32[n_classes, n_samples]  # OUT
    """
    n_classes = scores.shape[0]
    n_samples = scores.shape[1]
    weighted = weights.shape[0] > 0
    for i in prange(n_samples):
        w = weights[i] if weighted else 1.0
        y = labels[i]
        if objective == OBJ_REGRESSION:
            # LightGBM multiplies in float32: (float)((float)(s - y) * (float)w)
            gradients[0, i] = np.float32(scores[0, i] - y) * np.float32(w)
            hessians[0, i] = w
        elif objective == OBJ_REGRESSION_L1:
            diff = scores[0, i] - y
            gradients[0, i] = (1.0 if diff > 0.0 else (-1.0 if diff < 0.0 else 0.0)) * w
            hessians[0, i] = w
        elif objective == OBJ_HUBER:
            diff = scores[0, i] - y
            if abs(diff) <= alpha:
                gradients[0, i] = diff * w
            else:
                gradients[0, i] = (alpha if diff > 0.0 else -alpha) * w
            hessians[0, i] = w
        elif objective == OBJ_BINARY:
            # LightGBM's form with labels +-1: response = -y sigma / (1 + exp(y sigma s))
            sign = 1.0 if y > 0.0 else -1.0
            lw = label_weights[1] if y > 0.0 else label_weights[0]
            response = -sign * sigmoid / (1.0 + np.exp(sign * sigmoid * scores[0, i]))
            abs_response = abs(response)
            gradients[0, i] = response * lw * w
            hessians[0, i] = abs_response * (sigmoid - abs_response) * lw * w
        else:  # OBJ_MULTICLASS: softmax; hessian scaled by K / (K - 1) as in LightGBM
            max_score = scores[0, i]
            for k in range(1, n_classes):
                max_score = max(max_score, scores[k, i])
            total = 0.0
            for k in range(n_classes):
                total += np.exp(scores[k, i] - max_score)
            factor = n_classes / (n_classes - 1.0)
            yi = int(y)
            for k in range(n_classes):
                p = np.exp(scores[k, i] - max_score) / total
                gradients[k, i] = ((p - 1.0) if k == yi else p) * w
                hessians[k, i] = factor * p * (1.0 - p) * w
