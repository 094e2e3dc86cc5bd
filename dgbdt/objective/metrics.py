"""Evaluation metrics with LightGBM's exact semantics.

Every additive metric is split in two so that distributed training gets the
exact global value (sums over ranks, not an average of per-rank values)::

    sums = metric.partial(label, pred, weight)   # local, float64 array
    sums = comm.total(sums)                      # later: the sum over ranks
    value = metric.finalize(sums)

AUC, average precision and R^2 are not functions of a few sums (the first two
need the global ranking, R^2 LightGBM's two-pass label mean), so they have
``partial=None``; a distributed caller must gather (label, pred, weight) first
and call ``compute`` on the gathered data (``evaluation.global_metric`` does).

``pred`` is always the *transformed* prediction: the raw value for regression,
the probability of class 1 (shape ``(n,)``) for binary and cross_entropy,
``exp(raw)`` for poisson / gamma / tweedie, ``log(1 + exp(raw))`` for
cross_entropy_lambda, class probabilities (shape ``(n, K)``) for multiclass.
``weight=None`` means all ones.

The ranking metrics ``ndcg`` and ``map`` score queries: they take raw scores
and the query row boundaries (``queries=``, see ``Metric.queries``) and give
one result per position k of ``eval_at`` (``ndcg@1``, ``ndcg@2``, ...; see
``Metric.result_names``), their ``finalize`` a list of values.  They are sums
over queries, and a query never spans two ranks, so they add up over ranks
exactly.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ..native import rank_metric
from ..registry import Registry
from . import ranking

__all__ = [
    "METRICS",
    "METRIC_ALIASES",
    "Metric",
    "auc",
    "auc_mu",
    "average_precision",
    "get_metric",
    "r2",
]

# LightGBM clips probabilities at kEpsilon, a *float* constant (meta.h:
# ``const score_t kEpsilon = 1e-15f``); ``-std::log(kEpsilon)`` therefore
# runs the float overload of log. Mirror both so clipped points agree exactly.
_EPS = float(np.float32(1e-15))
_NEG_LOG_EPS = float(-np.log(np.float32(1e-15)))
# PoissonMetric / TweedieMetric clip the prediction at ``1e-10f``, a float too.
_EPS_1E10 = float(np.float32(1e-10))
# XentLoss clips log arguments at the *double* 1e-12 (xentropy_metric.hpp).
_LOG_ARG_EPS = 1.0e-12
# meta.h: ``const double kZeroThreshold = 1e-35f`` (R2Metric's zero test).
_ZERO_THRESHOLD = float(np.float32(1e-35))


def _as_1d(x: npt.ArrayLike, name: str) -> npt.NDArray[np.float64]:
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {arr.shape}")
    return arr


def _prepare(
    label: npt.ArrayLike, pred: npt.ArrayLike, weight: npt.ArrayLike | None, pred_ndim: int = 1
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.float64] | None]:
    """Convert inputs to float64 arrays and check their shapes."""
    label = _as_1d(label, "label")
    pred = np.asarray(pred, dtype=np.float64)
    if pred.ndim != pred_ndim or pred.shape[0] != label.shape[0]:
        want = "(n,)" if pred_ndim == 1 else "(n, n_classes)"
        raise ValueError(f"pred must have shape {want} with n={label.shape[0]}, got {pred.shape}")
    if weight is not None:
        weight = _as_1d(weight, "weight")
        if weight.shape[0] != label.shape[0]:
            raise ValueError(f"weight has {weight.shape[0]} entries, label has {label.shape[0]}")
    return label, pred, weight


def _weighted_sums(loss: np.ndarray, weight: np.ndarray | None) -> npt.NDArray[np.float64]:
    """``[sum(w * loss), sum(w)]``; LightGBM's sum_weights is n without weights."""
    if weight is None:
        return np.array([loss.sum(), float(loss.shape[0])])
    return np.array([(loss * weight).sum(), weight.sum()])


def _mean(sums: np.ndarray) -> float:
    return float(sums[0] / sums[1])


def _pointwise(
    loss_fn: Callable[..., np.ndarray], pred_ndim: int = 1
) -> Callable[..., npt.NDArray[np.float64]]:
    """Build ``partial(label, pred, weight=None, **kw)`` from a point-wise loss."""

    def partial(
        label: npt.ArrayLike, pred: npt.ArrayLike, weight: npt.ArrayLike | None = None, **kw: Any
    ) -> npt.NDArray[np.float64]:
        label, pred, weight = _prepare(label, pred, weight, pred_ndim)
        return _weighted_sums(loss_fn(label, pred, **kw), weight)

    partial.__name__ = loss_fn.__name__.lstrip("_") + "_partial"
    partial.__doc__ = loss_fn.__doc__
    return partial


# --- point-wise losses (LightGBM src/metric/*_metric.hpp) -----------------


def _l2(label: np.ndarray, pred: np.ndarray) -> np.ndarray:
    """Squared error (LightGBM ``l2`` is the MSE, not the RMSE)."""
    return (pred - label) ** 2


def _l1(label: np.ndarray, pred: np.ndarray) -> np.ndarray:
    """Absolute error."""
    return np.abs(pred - label)


def _huber(label: np.ndarray, pred: np.ndarray, alpha: float = 0.9) -> np.ndarray:
    """Huber loss, HuberLossMetric: quadratic inside ``|d| <= alpha``."""
    d = np.abs(pred - label)
    return np.where(d <= alpha, 0.5 * d * d, alpha * (d - 0.5 * alpha))


def _quantile(label: np.ndarray, pred: np.ndarray, alpha: float = 0.9) -> np.ndarray:
    """Pinball loss, QuantileMetric: with ``d = label - pred``, ``(alpha - 1) d`` if
    ``d < 0``, else ``alpha d``."""
    d = label - pred
    return np.where(d < 0, (alpha - 1.0) * d, alpha * d)


def _mape(label: np.ndarray, pred: np.ndarray) -> np.ndarray:
    """MAPEMetric: ``|label - pred| / max(1, |label|)`` (so no blow-up near label 0)."""
    return np.abs(label - pred) / np.maximum(1.0, np.abs(label))


def _fair(label: np.ndarray, pred: np.ndarray, fair_c: float = 1.0) -> np.ndarray:
    """FairLossMetric: ``c x - c^2 log1p(x / c)`` with ``x = |pred - label|``."""
    x = np.abs(pred - label)
    return fair_c * x - fair_c * fair_c * np.log1p(x / fair_c)


def _safe_log(x: np.ndarray) -> np.ndarray:
    """Common::SafeLog: ``log(x)`` for ``x > 0``, else ``-inf`` (NaN too, as LightGBM)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(x > 0, np.log(np.where(x > 0, x, 1.0)), -np.inf)


def _clip_1e10(pred: np.ndarray) -> np.ndarray:
    """``if (score < 1e-10f) score = 1e-10f`` (NaN is not clipped)."""
    return np.where(pred < _EPS_1E10, _EPS_1E10, pred)


def _poisson(label: np.ndarray, pred: np.ndarray) -> np.ndarray:
    """PoissonMetric: ``pred - label log(pred)``, ``pred`` clipped below at ``1e-10f``.

    Labels are not checked (a negative label is just used).
    """
    s = _clip_1e10(pred)
    return s - label * np.log(s)


def _check_positive_labels(label: np.ndarray, name: str) -> None:
    """GammaMetric / GammaDevianceMetric::CheckLabel: CHECK_GT(label, 0) (NaN fails)."""
    if not np.all(label > 0):
        raise ValueError(f"metric {name} needs labels > 0 (LightGBM: CHECK_GT(label, 0))")


def _gamma(label: np.ndarray, pred: np.ndarray) -> np.ndarray:
    """GammaMetric, the Gamma negative log-likelihood with ``psi = 1``.

    Follows LightGBM's steps: ``theta = -1 / pred``, ``b = -SafeLog(-theta)``,
    ``c = SafeLog(label / psi) - SafeLog(label)`` and ``-((label theta - b) + c)``,
    i.e. ``label / pred + log(pred) - c``; ``pred < 0`` gives +inf and
    ``pred = 0`` NaN, as LightGBM.  ``c`` is not 0: ``SafeLog(label)`` of the
    float label is a *float* log (the template takes ``T = float``), so ``c`` is
    the double log minus the float one, here the double log rounded to float32
    (glibc's logf misses that by one float ulp on ~1% of labels: up to ~1e-9
    relative in the metric).  Labels must be > 0 (LightGBM fails otherwise).
    """
    _check_positive_labels(label, "gamma")
    with np.errstate(divide="ignore", invalid="ignore"):
        theta = -1.0 / pred
        b = -_safe_log(-theta)
        c = _safe_log(label) - _safe_log(label).astype(np.float32).astype(np.float64)
        return -((label * theta - b) + c)


def _gamma_deviance(label: np.ndarray, pred: np.ndarray) -> np.ndarray:
    """GammaDevianceMetric point loss: ``t - SafeLog(t) - 1``, ``t = label / (pred + 1e-9)``.

    Labels must be > 0.  The metric is twice the weighted *sum*, not a mean
    (see ``_twice_sum``).
    """
    _check_positive_labels(label, "gamma_deviance")
    with np.errstate(divide="ignore", invalid="ignore"):
        t = label / (pred + 1.0e-9)
        return t - _safe_log(t) - 1.0


def _tweedie(
    label: np.ndarray, pred: np.ndarray, tweedie_variance_power: float = 1.5
) -> np.ndarray:
    """TweedieMetric: ``-label s^(1-rho) / (1-rho) + s^(2-rho) / (2-rho)``.

    ``s`` is ``pred`` clipped below at ``1e-10f``; the powers are computed as
    LightGBM does, ``exp(k * log(s))``.
    """
    rho = tweedie_variance_power
    s = _clip_1e10(pred)
    with np.errstate(divide="ignore", invalid="ignore"):
        a = label * np.exp((1.0 - rho) * np.log(s)) / (1.0 - rho)
        b = np.exp((2.0 - rho) * np.log(s)) / (2.0 - rho)
    return -a + b


def _binary_logloss(label: np.ndarray, pred: np.ndarray) -> np.ndarray:
    """Log loss; class 1 iff ``label > 0``; ``-log(kEpsilon)`` below kEpsilon."""
    p_true = np.where(label > 0, pred, 1.0 - pred)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(p_true > _EPS, -np.log(p_true), _NEG_LOG_EPS)


def _binary_error(label: np.ndarray, pred: np.ndarray) -> np.ndarray:
    """Error rate; predicts class 1 iff ``prob > 0.5`` (so 0.5 itself is class 0)."""
    return ((pred > 0.5) != (label > 0)).astype(np.float64)


def _true_class(label: np.ndarray, n_classes: int) -> npt.NDArray[np.int64]:
    k = label.astype(np.int64)  # static_cast<size_t>(label) truncates
    if k.size and (k.min() < 0 or k.max() >= n_classes):
        raise ValueError(f"multiclass label must lie in [0, {n_classes}), got {k.min()}..{k.max()}")
    return k


def _multi_logloss(label: np.ndarray, pred: np.ndarray) -> np.ndarray:
    """Softmax log loss of the true class, clipped at kEpsilon."""
    p_true = pred[np.arange(label.shape[0]), _true_class(label, pred.shape[1])]
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(p_true > _EPS, -np.log(p_true), _NEG_LOG_EPS)


def _multi_error(label: np.ndarray, pred: np.ndarray, multi_error_top_k: int = 1) -> np.ndarray:
    """Top-k error: wrong unless fewer than ``k + 1`` classes score ``>=`` the true one.

    The true class counts itself, so with ``k = 1`` any tie with the true class
    is an error (LightGBM's MultiErrorMetric), unlike a plain argmax.
    """
    p_true = pred[np.arange(label.shape[0]), _true_class(label, pred.shape[1])]
    n_at_least = (pred >= p_true[:, None]).sum(axis=1)
    return (n_at_least > multi_error_top_k).astype(np.float64)


# --- cross-entropy family (LightGBM src/metric/xentropy_metric.hpp) --------


def _check_unit_labels(label: np.ndarray, name: str) -> None:
    """CheckElementsIntervalClosed(label, 0, 1): Log::Fatal outside [0, 1] (NaN passes)."""
    if np.any((label < 0.0) | (label > 1.0)):
        raise ValueError(f"metric {name} needs labels in [0, 1] (as LightGBM)")


def _check_weights(weight: np.ndarray | None, name: str, strict: bool) -> None:
    """LightGBM refuses negative weights (cross_entropy, kullback_leibler) or
    non-positive ones (``strict``: cross_entropy_lambda)."""
    if weight is not None and weight.size and (weight.min() <= 0 if strict else weight.min() < 0):
        need = "positive" if strict else "non-negative"
        raise ValueError(f"metric {name} needs {need} weights (as LightGBM)")


def _unit_label_lines(name: str, label: np.ndarray, weight: np.ndarray | None) -> list[str]:
    """The labels-in-[0, 1] line of LightGBM's xentropy metrics, when they are
    (if not, evaluation raises; no error here, where ranks do not agree)."""
    label = np.asarray(label, np.float64)
    if np.any((label < 0.0) | (label > 1.0)):
        return []
    return [f"[{name}:Init]: (metric) labels passed interval [0, 1] check"]


def _sum_of_weights(label: np.ndarray, weight: np.ndarray | None) -> float:
    return float(len(label)) if weight is None else float(np.sum(weight, dtype=np.float64))


def _cross_entropy_lines(
    label: np.ndarray, weight: np.ndarray | None, queries: np.ndarray | None
) -> list[str]:
    lines = _unit_label_lines("cross_entropy", label, weight)
    w = _sum_of_weights(label, weight)
    return lines + [f"[cross_entropy:Init]: sum-of-weights = {w:f}"] if lines else []


def _cross_entropy_lambda_lines(
    label: np.ndarray, weight: np.ndarray | None, queries: np.ndarray | None
) -> list[str]:
    return _unit_label_lines("cross_entropy_lambda", label, weight)


def _kullback_leibler_lines(
    label: np.ndarray, weight: np.ndarray | None, queries: np.ndarray | None
) -> list[str]:
    lines = _unit_label_lines("kullback_leibler", label, weight)
    w = _sum_of_weights(label, weight)
    if not lines or not w > 0:
        return lines
    yent = _label_entropy(np.asarray(label, np.float64))
    offset = float((yent.sum() if weight is None else (yent * weight).sum()) / w)
    return lines + [
        f"[kullback_leibler:Init]: sum-of-weights = {w:f}",
        f"kullback_leibler offset term = {offset:f}",
    ]


def _map_lines(
    label: np.ndarray, weight: np.ndarray | None, queries: np.ndarray | None
) -> list[str]:
    if queries is None:  # (evaluation refuses it)
        return []
    return [f"Total groups: {len(queries) - 1}, total data: {len(label)}"]


def _xent_loss(label: np.ndarray, prob: np.ndarray) -> np.ndarray:
    """XentLoss: ``-(y log p + (1 - y) log(1 - p))``, each log argument clipped
    below at the double ``1e-12`` (a NaN ``p`` counts as clipped).

    ``1 - y`` is LightGBM's ``1.0f - label`` with a float label, so it is
    computed in float32; ``1 - p`` is a double.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        a = label * np.log(np.where(prob > _LOG_ARG_EPS, prob, _LOG_ARG_EPS))
        one_minus_y = (np.float32(1.0) - label.astype(np.float32)).astype(np.float64)
        q = 1.0 - prob
        b = one_minus_y * np.log(np.where(q > _LOG_ARG_EPS, q, _LOG_ARG_EPS))
    return -(a + b)


def _label_entropy(label: np.ndarray) -> np.ndarray:
    """YentLoss: ``y log y + (1 - y) log(1 - y)``, a term only where its argument
    is > 0 (``1 - y`` here is a double)."""
    q = 1.0 - label
    with np.errstate(divide="ignore", invalid="ignore"):
        hp = np.where(label > 0, label * np.log(np.where(label > 0, label, 1.0)), 0.0)
        return hp + np.where(q > 0, q * np.log(np.where(q > 0, q, 1.0)), 0.0)


def _cross_entropy_partial(
    label: npt.ArrayLike, pred: npt.ArrayLike, weight: npt.ArrayLike | None = None
) -> npt.NDArray[np.float64]:
    """CrossEntropyMetric: ``[sum w XentLoss, sum w]``; weights used linearly.

    Labels must lie in [0, 1] and weights be >= 0 (LightGBM: Log::Fatal).
    LightGBM sums these weights in float32 (Common::ObtainMinMaxSum), ~1e-7
    relative off; here the sum is a double, so that it adds up over ranks.
    """
    label, pred, weight = _prepare(label, pred, weight)
    _check_unit_labels(label, "cross_entropy")
    _check_weights(weight, "cross_entropy", strict=False)
    return _weighted_sums(_xent_loss(label, pred), weight)


def _xent_mean(sums: np.ndarray) -> float:
    """``sums[0] / sums[-1]`` (the weighted mean); LightGBM refuses a sum of
    weights <= 0 (Log::Fatal "sum-of-weights ... is non-positive")."""
    if not sums[-1] > 0:
        raise ValueError(f"sum of weights is {sums[-1]}: must be positive (as LightGBM)")
    return float(sums[0] / sums[-1])


def _kullback_leibler_partial(
    label: npt.ArrayLike, pred: npt.ArrayLike, weight: npt.ArrayLike | None = None
) -> npt.NDArray[np.float64]:
    """KullbackLeiblerDivergence: ``[sum w XentLoss, sum w YentLoss(y), sum w]``.

    The value is LightGBM's ``presum_label_entropy + sum_loss / sum_weights``
    (see ``_kullback_leibler_finalize``): cross-entropy minus the label entropy.
    The sum of weights is a double (LightGBM's is float32, as cross_entropy's).
    """
    label, pred, weight = _prepare(label, pred, weight)
    _check_unit_labels(label, "kullback_leibler")
    _check_weights(weight, "kullback_leibler", strict=False)
    xent, yent = _xent_loss(label, pred), _label_entropy(label)
    if weight is None:
        return np.array([xent.sum(), yent.sum(), float(label.shape[0])])
    return np.array([(xent * weight).sum(), (yent * weight).sum(), weight.sum()])


def _kullback_leibler_finalize(sums: np.ndarray) -> float:
    """``sum w YentLoss / sum w + sum w XentLoss / sum w``, in LightGBM's order."""
    _xent_mean(sums[[0, 2]])  # the same sum-of-weights check
    return float(sums[1] / sums[2] + sums[0] / sums[2])


def _cross_entropy_lambda_partial(
    label: npt.ArrayLike, pred: npt.ArrayLike, weight: npt.ArrayLike | None = None
) -> npt.NDArray[np.float64]:
    """CrossEntropyLambdaMetric: ``[sum XentLoss(y, 1 - exp(-w hhat)), n]``.

    ``pred`` is ``hhat``, the xentlambda objective's output ``log(1 + exp(raw))``
    (LightGBM takes whatever the objective converts to).  Weights enter the
    loss, not the average: the mean is over the row count.  Labels must lie in
    [0, 1] and weights be > 0.
    """
    label, pred, weight = _prepare(label, pred, weight)
    _check_unit_labels(label, "cross_entropy_lambda")
    _check_weights(weight, "cross_entropy_lambda", strict=True)
    w = 1.0 if weight is None else weight
    loss = _xent_loss(label, 1.0 - np.exp(-w * pred))
    return np.array([loss.sum(), float(label.shape[0])])


def _score_groups(
    label: np.ndarray, pred: np.ndarray, w: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(positive weight, negative weight) of each group of equal ``pred``, the
    highest score first (positive: ``label > 0``)."""
    # unique() sorts ascending; group rows by score, then walk groups downwards
    scores, group = np.unique(pred, return_inverse=True)
    is_pos = label > 0
    pos = np.bincount(group, weights=w * is_pos, minlength=scores.size)[::-1]
    neg = np.bincount(group, weights=w * ~is_pos, minlength=scores.size)[::-1]
    return pos, neg


def auc(label: npt.ArrayLike, pred: npt.ArrayLike, weight: npt.ArrayLike | None = None) -> float:
    """Weighted ROC AUC as LightGBM's AUCMetric (single process only).

    Equal predictions form one step of the ROC curve (trapezoid). Positive
    means ``label > 0``. Returns 1.0 when only one class is present, as
    LightGBM does. Needs all rows at once: a distributed caller must gather.
    """
    label, pred, weight = _prepare(label, pred, weight)
    w = np.ones_like(label) if weight is None else weight
    if label.shape[0] == 0:
        return 1.0
    pos, neg = _score_groups(label, pred, w)
    pos_above = np.concatenate(([0.0], np.cumsum(pos)[:-1]))
    accum = float(np.sum(neg * (0.5 * pos + pos_above)))
    sum_pos, sum_weights = float(pos.sum()), float(w.sum())
    if sum_pos > 0.0 and sum_pos != sum_weights:
        return accum / (sum_pos * (sum_weights - sum_pos))
    return 1.0


def average_precision(
    label: npt.ArrayLike, pred: npt.ArrayLike, weight: npt.ArrayLike | None = None
) -> float:
    """Weighted average precision as LightGBM's AveragePrecisionMetric (single process only).

    Rows are grouped by equal score, best first; each group adds its positive
    weight times the precision after the whole group (ties form one step):
    ``sum_g pos_g * P(<= g) / sum pos``.  Positive means ``label > 0``.  Returns
    1.0 when only one class is present (or no rows), as LightGBM does.
    LightGBM ranks the raw scores; ``pred`` ranks alike, as the transforms are
    monotone, unless they round distinct scores together (a sigmoid at 1.0).
    Needs all rows at once: a distributed caller must gather.
    """
    label, pred, weight = _prepare(label, pred, weight)
    w = np.ones_like(label) if weight is None else weight
    if label.shape[0] == 0:
        return 1.0
    pos, neg = _score_groups(label, pred, w)
    with np.errstate(divide="ignore", invalid="ignore"):
        precision = np.cumsum(pos) / np.cumsum(pos + neg)
        accum = float(np.sum(pos * precision))
    sum_pos, sum_weights = float(pos.sum()), float(w.sum())
    if sum_pos > 0.0 and sum_pos != sum_weights:
        return accum / sum_pos
    return 1.0


def r2(label: npt.ArrayLike, pred: npt.ArrayLike, weight: npt.ArrayLike | None = None) -> float:
    """R-squared as LightGBM's R2Metric (single process only): ``1 - RSS / TSS``.

    The label mean is taken first (two passes, as LightGBM); with weights its
    numerator sums ``label * weight`` products rounded to float32, as
    LightGBM's float ``label_[i] * weights_[i]``.  When ``|TSS| < 1e-35f``
    (kZeroThreshold) it is 1.0 if also ``|RSS| < 1e-35f``, else 0.0.
    """
    label, pred, weight = _prepare(label, pred, weight)
    if weight is None:
        mean = label.sum() / label.shape[0]
        tss = np.sum((label - mean) ** 2)
        rss = np.sum((label - pred) ** 2)
    else:
        lw = (label.astype(np.float32) * weight.astype(np.float32)).astype(np.float64)
        mean = lw.sum() / weight.sum()
        tss = np.sum((label - mean) ** 2 * weight)
        rss = np.sum((label - pred) ** 2 * weight)
    if abs(tss) < _ZERO_THRESHOLD:
        return 1.0 if abs(rss) < _ZERO_THRESHOLD else 0.0
    return float(1.0 - rss / tss)


def auc_mu(
    label: npt.ArrayLike,
    raw: npt.ArrayLike,
    weight: npt.ArrayLike | None = None,
    weights_matrix: npt.ArrayLike | None = None,
) -> float:
    """AUC-mu (Kleiman & Page, ICML 2019) as LightGBM's AucMuMetric (single process only).

    For every pair of classes i < j, the rows of i and j are ordered by
    ``t1 * (raw_row . v)`` with ``v = W[i] - W[j]`` and ``t1 = v[i] - v[j]``, and
    each row of class i counts the (weighted) rows of class j below it, ties
    half; the sum over pairs, each divided by its two class sizes (weights),
    times 2 / (K (K - 1)).  ``raw`` are raw scores (n, K), not probabilities,
    as LightGBM; ``weights_matrix`` (K, K) defaults to ones off the diagonal.
    A class without rows gives NaN (LightGBM divides by zero too).
    """
    label = _as_1d(label, "label")
    raw = np.asarray(raw, dtype=np.float64)
    if raw.ndim != 2 or raw.shape[0] != label.shape[0]:
        raise ValueError(f"raw scores must have shape (n, n_classes), got {raw.shape}")
    k = raw.shape[1]
    W = np.ones((k, k)) - np.eye(k) if weights_matrix is None else np.asarray(weights_matrix, float)
    w = np.ones(label.shape[0]) if weight is None else _as_1d(weight, "weight")
    cls = label.astype(np.int64)
    total = 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        for i in range(k):
            for j in range(i + 1, k):
                v = W[i] - W[j]
                dist = (v[i] - v[j]) * (raw @ v)
                in_i, in_j = cls == i, cls == j
                order = np.argsort(dist[in_j], kind="stable")
                d_j, w_j = dist[in_j][order], w[in_j][order]
                below = np.concatenate(([0.0], np.cumsum(w_j)))
                lo = np.searchsorted(d_j, dist[in_i], side="left")
                hi = np.searchsorted(d_j, dist[in_i], side="right")
                s = np.sum(w[in_i] * (below[lo] + 0.5 * (below[hi] - below[lo])))
                total += s / w[in_i].sum() / w_j.sum()
    return float(2.0 * total / k / (k - 1))


# --- ranking (LightGBM src/metric/rank_metric.hpp, map_metric.hpp) --------

# DCGCalculator::DefaultEvalAt: positions 1 .. 5 when eval_at is not given
_DEFAULT_EVAL_AT = (1, 2, 3, 4, 5)
# DCGCalculator's discount table, 1 / log2(2 + i) (a query has at most 10000 rows)
_DISCOUNTS = ranking.discounts()


def _rank_inputs(
    name: str,
    label: npt.ArrayLike,
    pred: npt.ArrayLike,
    weight: npt.ArrayLike | None,
    queries: npt.ArrayLike | None,
    eval_at: Sequence[int] | np.ndarray,
) -> tuple[
    npt.NDArray[np.float32],
    npt.NDArray[np.float64],
    npt.NDArray[np.int64],
    npt.NDArray[np.int64],
    npt.NDArray[np.float32] | None,
]:
    """float32 labels, float64 scores (n,), int64 query boundaries, int64
    positions and float32 query weights (None without weights)."""
    pred = np.asarray(pred, dtype=np.float64)
    if pred.ndim == 2 and pred.shape[1] == 1:  # the raw scores of one class, (n, 1)
        pred = pred[:, 0]
    label, pred, weight = _prepare(label, pred, weight)
    if queries is None:
        raise ValueError(f"the {name} metric needs query groups (queries=boundaries)")
    b = np.asarray(queries, dtype=np.int64)
    if b.ndim != 1 or b.size == 0 or b[0] != 0 or b[-1] != label.shape[0] or np.any(b[1:] < b[:-1]):
        raise ValueError(
            f"the {name} metric: queries must be row boundaries 0 = b[0] <= ... <= b[-1] = "
            f"{label.shape[0]} (the number of rows), got {b[:10]}..."
        )
    ks = np.asarray(eval_at, dtype=np.int64).reshape(-1)
    if ks.size == 0 or ks.min() < 1:
        raise ValueError(f"the {name} metric: eval_at must be positions >= 1, got {eval_at!r}")
    return label.astype(np.float32), pred, b, ks, ranking.query_weights(weight, b)


def _query_sums(
    values: np.ndarray, qw: np.ndarray | None, trivial: np.ndarray | None = None
) -> npt.NDArray[np.float64]:
    """``[sum_q w_q v_qk for each k ..., sum_q w_q]`` of per-query values
    (n_queries, n_k); every query weighs 1 without query weights ``qw``.

    A ``trivial`` query adds 1, unweighted, as LightGBM's NDCGMetric adds
    ``1.0f`` for a query without relevant documents even with weights.
    """
    if qw is None:
        return np.append(values.sum(axis=0), float(values.shape[0]))
    w = qw.astype(np.float64)
    terms = values * w[:, None]
    if trivial is not None:
        terms[trivial.astype(bool)] = 1.0
    return np.append(terms.sum(axis=0), w.sum())


def _ndcg_partial(
    label: npt.ArrayLike,
    pred: npt.ArrayLike,
    weight: npt.ArrayLike | None = None,
    *,
    queries: npt.ArrayLike | None = None,
    eval_at: Sequence[int] | np.ndarray = _DEFAULT_EVAL_AT,
    label_gain: Sequence[float] | np.ndarray | None = None,
) -> npt.NDArray[np.float64]:
    """NDCGMetric: ``[sum_q w_q NDCG_q@k for each k of eval_at, sum_q w_q]``.

    Per query, the documents are ranked by raw score (ties in row order);
    ``DCG@k = sum_{j < min(k, n)} label_gain[label_(j)] / log2(2 + j)`` over
    the maximal DCG@k of the query's labels.  A query whose maximal DCG at the
    first k is <= 0 (all labels 0 with the default gains, or no rows) scores
    1 at every k, and adds that 1 unweighted (LightGBM's rule).  ``w_q`` is
    the query's mean row weight in float32 (LightGBM's query weights), 1
    without weights.  ``label_gain`` defaults to ``2^i - 1``; labels must be
    integers with a gain and queries at most 10000 rows (as LightGBM).
    """
    label, pred, b, ks, qw = _rank_inputs("ndcg", label, pred, weight, queries, eval_at)
    gains = ranking.default_label_gain(label_gain)
    ranking.check_ranking_labels(label, gains, "the ndcg metric")
    sizes = np.diff(b)
    if sizes.size and sizes.max() > ranking.MAX_QUERY_ROWS:
        i = int(np.argmax(sizes))
        raise ValueError(
            f"the ndcg metric: query {i} has {int(sizes[i])} rows, more than "
            f"LightGBM's limit of {ranking.MAX_QUERY_ROWS}"
        )
    values = np.empty((sizes.size, ks.size), np.float64)
    trivial = np.empty(sizes.size, np.uint8)
    rank_metric.ndcg_at(label, pred, b, ks, gains, _DISCOUNTS, values, trivial)
    return _query_sums(values, qw, trivial)


def _map_partial(
    label: npt.ArrayLike,
    pred: npt.ArrayLike,
    weight: npt.ArrayLike | None = None,
    *,
    queries: npt.ArrayLike | None = None,
    eval_at: Sequence[int] | np.ndarray = _DEFAULT_EVAL_AT,
) -> npt.NDArray[np.float64]:
    """MapMetric: ``[sum_q w_q AP_q@k for each k of eval_at, sum_q w_q]``.

    Per query, the documents are ranked by raw score (ties in row order); a
    document is relevant when ``label > 0.5``; ``AP@k`` sums ``hits / (j + 1)``
    over the relevant ones among the first ``min(k, n)`` and divides by
    ``min(npos, k)`` (``npos``: the query's relevant documents); a query
    without relevant documents scores 1.  ``w_q`` as for ndcg.  Labels are
    not checked (as LightGBM).
    """
    label, pred, b, ks, qw = _rank_inputs("map", label, pred, weight, queries, eval_at)
    values = np.empty((b.size - 1, ks.size), np.float64)
    rank_metric.map_at(label, pred, b, ks, values)
    return _query_sums(values, qw)


def _query_means(sums: np.ndarray) -> list[float]:
    """``sum_q w_q v_qk / sum_q w_q`` for each k (NaN without queries: 0 / 0)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return [float(x) for x in sums[:-1] / sums[-1]]


@dataclass(frozen=True)
class Metric:
    """An evaluation metric.

    Attributes
    ----------
    name : str
        Canonical LightGBM name.
    higher_better : bool
        Whether larger values are better (``auc``, ``average_precision``,
        ``r2``, ``auc_mu``, ``ndcg``, ``map``).
    partial : callable or None
        ``partial(label, pred, weight=None, **kw) -> ndarray[float64]``: local
        additive sums; add them over shards, then call ``finalize``.
        None for metrics that are not sums (``auc``, ``average_precision``,
        ``r2``, ``auc_mu``).
    finalize : callable or None
        ``finalize(sums) -> float`` (a list of floats with ``names_from``).
    direct : callable or None
        ``direct(label, pred, weight=None, **kw) -> float`` for metrics
        without ``partial``.
    raw_scores : bool
        ``pred`` are raw scores, not transformed predictions (``auc_mu``,
        ``ndcg``, ``map``, as LightGBM).
    aliases : tuple of str
        LightGBM's other names of the metric (config.cpp ParseMetricAlias).
    multiclass : bool
        The metric is of class probabilities or scores (n, K): it fits the
        multiclass objectives only, and the others only the other metrics.
    options : callable or None
        ``options(cfg) -> dict``: the metric's keyword parameters from the
        resolved training params (see :meth:`options_from`).
    name_from : callable or None
        ``name_from(cfg) -> str``: the name LightGBM reports when it depends on
        the params (``multi_error@k`` for ``multi_error_top_k = k > 1``); see
        :meth:`result_name`.
    queries : bool
        The metric scores queries (``ndcg``, ``map``): ``partial`` and
        :meth:`compute` take the query row boundaries as the keyword
        ``queries`` (int64, n_queries + 1: query i is rows ``b[i]:b[i + 1]``).
    names_from : callable or None
        ``names_from(cfg) -> list of str``: the metric has several results
        (``ndcg@k`` for each k of ``eval_at``); ``finalize`` and
        :meth:`compute` then give a list, one value per name (see
        :meth:`result_names`).
    init_lines : callable or None
        ``init_lines(label, weight, queries) -> list of str``: the info lines
        LightGBM's metric logs when it is set up on a data set (see
        :meth:`init_log`).
    """

    name: str
    higher_better: bool
    partial: Callable[..., np.ndarray] | None
    finalize: Callable[[np.ndarray], float | list[float]] | None
    direct: Callable[..., float] | None = None
    raw_scores: bool = False
    aliases: tuple[str, ...] = ()
    multiclass: bool = False
    options: Callable[[Mapping[str, Any]], dict[str, Any]] | None = None
    name_from: Callable[[Mapping[str, Any]], str] | None = None
    queries: bool = False
    names_from: Callable[[Mapping[str, Any]], Sequence[str]] | None = None
    init_lines: Callable[..., list[str]] | None = None

    def init_log(
        self, label: np.ndarray, weight: np.ndarray | None, queries: np.ndarray | None
    ) -> list[str]:
        """LightGBM's info lines of this metric's Init on a data set (``label``,
        ``weight``, query row boundaries ``queries`` of this rank's rows, as each
        LightGBM machine's): what it checked and the sums it took."""
        return [] if self.init_lines is None else self.init_lines(label, weight, queries)

    def options_from(self, cfg: Mapping[str, Any]) -> dict[str, Any]:
        """The keyword parameters of :meth:`compute` taken from the training params."""
        return {} if self.options is None else self.options(cfg)

    def result_name(self, cfg: Mapping[str, Any]) -> str:
        """The name LightGBM gives this metric's results under the training params
        (``name`` unless it depends on them, as ``multi_error@2``)."""
        return self.name if self.name_from is None else self.name_from(cfg)

    def result_names(self, cfg: Mapping[str, Any]) -> list[str]:
        """The names of this metric's results under the training params, in
        order: ``[result_name(cfg)]``, or several (``ndcg@1``, ``ndcg@3``, ...)."""
        return [self.result_name(cfg)] if self.names_from is None else list(self.names_from(cfg))

    def value_of(self, sums: np.ndarray) -> float | list[float]:
        """``finalize(sums)``: a float, or a list of floats (one per result
        name) for a metric with several results."""
        value: Any = self.finalize(sums)  # type: ignore[misc]  # set with partial
        return [float(v) for v in value] if self.names_from is not None else float(value)

    def compute(
        self,
        label: npt.ArrayLike,
        pred: npt.ArrayLike,
        weight: npt.ArrayLike | None = None,
        **kw: Any,
    ) -> float | list[float]:
        """Single-process value of the metric.

        Parameters
        ----------
        label : array-like of shape (n,)
        pred : array-like of shape (n,) or (n, n_classes)
            Transformed prediction (see module docstring).
        weight : array-like of shape (n,), optional
        **kw
            Metric parameters: ``alpha`` (huber, quantile), ``fair_c`` (fair),
            ``tweedie_variance_power`` (tweedie), ``multi_error_top_k``
            (multi_error), ``weights_matrix`` (auc_mu), ``queries`` (the
            query row boundaries, ndcg and map), ``eval_at`` (ndcg, map),
            ``label_gain`` (ndcg).

        Returns
        -------
        float, or list of float (one per :meth:`result_names` entry) for a
        metric with several results.
        """
        if self.partial is None:
            return float(self.direct(label, pred, weight, **kw))  # type: ignore[misc]  # set without partial
        return self.value_of(self.partial(label, pred, weight, **kw))


def _additive(
    name: str,
    loss: Callable[..., np.ndarray],
    finalize: Callable[[np.ndarray], float] = _mean,
    *,
    multiclass: bool = False,
    **fields: Any,
) -> Metric:
    """A lower-is-better metric that is a sum over rows (``loss`` point-wise)."""
    partial = _pointwise(loss, 2 if multiclass else 1)
    return Metric(name, False, partial, finalize, multiclass=multiclass, **fields)


def _alpha_options(cfg: Mapping[str, Any]) -> dict[str, Any]:
    return {"alpha": cfg["alpha"]}


def _fair_options(cfg: Mapping[str, Any]) -> dict[str, Any]:
    return {"fair_c": cfg["fair_c"]}


def _tweedie_options(cfg: Mapping[str, Any]) -> dict[str, Any]:
    return {"tweedie_variance_power": cfg["tweedie_variance_power"]}


def _multi_error_options(cfg: Mapping[str, Any]) -> dict[str, Any]:
    return {"multi_error_top_k": cfg["multi_error_top_k"]}


def _multi_error_name(cfg: Mapping[str, Any]) -> str:
    """MultiErrorMetric::Name: ``multi_error``, or ``multi_error@k`` when k != 1."""
    k = cfg["multi_error_top_k"]
    return "multi_error" if k == 1 else f"multi_error@{k}"


def _twice_sum(sums: np.ndarray) -> float:
    """GammaDevianceMetric::AverageLoss: ``2 * sum w loss``, *not* divided by the weights."""
    return float(sums[0] * 2.0)


def _auc_mu_options(cfg: Mapping[str, Any]) -> dict[str, Any]:
    if cfg["auc_mu_weights"] is None:
        return {}
    k = cfg["num_class"]
    # LightGBM takes the diagonal as zero whatever was given
    return {"weights_matrix": np.array(cfg["auc_mu_weights"]).reshape(k, k) * (1 - np.eye(k))}


def _rmse(sums: np.ndarray) -> float:
    return float(np.sqrt(sums[0] / sums[1]))


def _eval_at(cfg: Mapping[str, Any]) -> tuple[int, ...]:
    """The positions of ndcg / map: eval_at sorted, as LightGBM's config sorts it."""
    return tuple(sorted(cfg["eval_at"]))


def _ndcg_options(cfg: Mapping[str, Any]) -> dict[str, Any]:
    return {"eval_at": _eval_at(cfg), "label_gain": cfg["label_gain"]}


def _map_options(cfg: Mapping[str, Any]) -> dict[str, Any]:
    return {"eval_at": _eval_at(cfg)}


def _ndcg_names(cfg: Mapping[str, Any]) -> list[str]:
    return [f"ndcg@{k}" for k in _eval_at(cfg)]


def _map_names(cfg: Mapping[str, Any]) -> list[str]:
    return [f"map@{k}" for k in _eval_at(cfg)]


def _query_metric(
    name: str,
    partial: Callable[..., np.ndarray],
    options: Callable[[Mapping[str, Any]], dict[str, Any]],
    names: Callable[[Mapping[str, Any]], Sequence[str]],
    aliases: tuple[str, ...],
    init_lines: Callable[..., list[str]] | None = None,
) -> Metric:
    """A higher-is-better ranking metric of raw scores with one result per eval_at k."""
    return Metric(
        name,
        True,
        partial,
        _query_means,
        raw_scores=True,
        aliases=aliases,
        options=options,
        queries=True,
        names_from=names,
        init_lines=init_lines,
    )


_REGISTRY: Registry[Metric] = Registry()
for _metric in (
    _additive("l2", _l2, aliases=("mse", "mean_squared_error", "regression_l2", "regression")),
    _additive("rmse", _l2, _rmse, aliases=("l2_root", "root_mean_squared_error")),
    _additive("l1", _l1, aliases=("mae", "mean_absolute_error", "regression_l1")),
    _additive("quantile", _quantile, options=_alpha_options),
    _additive("mape", _mape, aliases=("mean_absolute_percentage_error",)),
    _additive("huber", _huber, options=_alpha_options),
    _additive("fair", _fair, options=_fair_options),
    _additive("poisson", _poisson),
    _additive("gamma", _gamma),
    _additive("gamma_deviance", _gamma_deviance, _twice_sum),
    _additive("tweedie", _tweedie, options=_tweedie_options),
    Metric("r2", True, None, None, r2),
    _additive("binary_logloss", _binary_logloss, aliases=("binary",)),
    _additive("binary_error", _binary_error),
    Metric("auc", True, None, None, auc),
    Metric("average_precision", True, None, None, average_precision),
    _additive(
        "multi_logloss",
        _multi_logloss,
        aliases=("multiclass", "softmax", "multiclassova", "multiclass_ova", "ova", "ovr"),
        multiclass=True,
    ),
    _additive(
        "multi_error",
        _multi_error,
        multiclass=True,
        options=_multi_error_options,
        name_from=_multi_error_name,
    ),
    Metric(
        "auc_mu",
        True,
        None,
        None,
        auc_mu,
        raw_scores=True,
        multiclass=True,
        options=_auc_mu_options,
    ),
    Metric(
        "cross_entropy",
        False,
        _cross_entropy_partial,
        _xent_mean,
        aliases=("xentropy",),
        init_lines=_cross_entropy_lines,
    ),
    Metric(
        "cross_entropy_lambda",
        False,
        _cross_entropy_lambda_partial,
        _mean,
        aliases=("xentlambda",),
        init_lines=_cross_entropy_lambda_lines,
    ),
    Metric(
        "kullback_leibler",
        False,
        _kullback_leibler_partial,
        _kullback_leibler_finalize,
        aliases=("kldiv",),
        init_lines=_kullback_leibler_lines,
    ),
    _query_metric(
        "ndcg",
        _ndcg_partial,
        _ndcg_options,
        _ndcg_names,
        ("lambdarank", "rank_xendcg", "xendcg", "xe_ndcg", "xe_ndcg_mart", "xendcg_mart"),
    ),
    _query_metric(
        "map", _map_partial, _map_options, _map_names, ("mean_average_precision",), _map_lines
    ),
):
    _REGISTRY.add(_metric)

#: The metrics by canonical (LightGBM) name, in the order the docs list them.
METRICS: dict[str, Metric] = _REGISTRY.entries
#: Every accepted metric spelling (canonical names and aliases) -> canonical name.
METRIC_ALIASES: dict[str, str] = _REGISTRY.aliases


def get_metric(name: str) -> Metric:
    """Look a metric up by canonical name or LightGBM alias.

    Raises
    ------
    ValueError
        If ``name`` is unknown; the message lists the valid names.
    """
    key = _REGISTRY.canonical(name)
    if key is None:
        raise ValueError(
            f"unknown metric {name!r}; valid metrics: {', '.join(METRICS)} "
            f"(aliases: {', '.join(_REGISTRY.alias_names())})"
        )
    return METRICS[key]
