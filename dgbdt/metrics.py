"""Evaluation metrics with LightGBM's exact semantics.

Every additive metric is split in two so that distributed training gets the
exact global value (sums over ranks, not an average of per-rank values)::

    sums = metric.partial(label, pred, weight)   # local, float64 array
    sums = comm.total(sums)                      # later: the sum over ranks
    value = metric.finalize(sums)

AUC is not a function of a few sums (it needs the global ranking), so it has
``partial=None``; a distributed AUC must gather (label, pred, weight) first and
call ``compute`` on the gathered data.

``pred`` is always the *transformed* prediction: the raw value for regression,
the probability of class 1 (shape ``(n,)``) for binary, class probabilities
(shape ``(n, K)``) for multiclass. ``weight=None`` means all ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from .registry import Registry

__all__ = ["METRICS", "METRIC_ALIASES", "Metric", "auc", "auc_mu", "get_metric"]

# LightGBM clips probabilities at kEpsilon, a *float* constant (meta.h:
# ``const score_t kEpsilon = 1e-15f``); ``-std::log(kEpsilon)`` therefore
# runs the float overload of log. Mirror both so clipped points agree exactly.
_EPS = float(np.float32(1e-15))
_NEG_LOG_EPS = float(-np.log(np.float32(1e-15)))


def _as_1d(x, name):
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {arr.shape}")
    return arr


def _prepare(label, pred, weight, pred_ndim=1):
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


def _weighted_sums(loss, weight):
    """``[sum(w * loss), sum(w)]``; LightGBM's sum_weights is n without weights."""
    if weight is None:
        return np.array([loss.sum(), float(loss.shape[0])])
    return np.array([(loss * weight).sum(), weight.sum()])


def _mean(sums):
    return float(sums[0] / sums[1])


def _pointwise(loss_fn, pred_ndim=1):
    """Build ``partial(label, pred, weight=None, **kw)`` from a point-wise loss."""

    def partial(label, pred, weight=None, **kw):
        label, pred, weight = _prepare(label, pred, weight, pred_ndim)
        return _weighted_sums(loss_fn(label, pred, **kw), weight)

    partial.__name__ = loss_fn.__name__.lstrip("_") + "_partial"
    partial.__doc__ = loss_fn.__doc__
    return partial


# --- point-wise losses (LightGBM src/metric/*_metric.hpp) -----------------


def _l2(label, pred):
    """Squared error (LightGBM ``l2`` is the MSE, not the RMSE)."""
    return (pred - label) ** 2


def _l1(label, pred):
    """Absolute error."""
    return np.abs(pred - label)


def _huber(label, pred, alpha=0.9):
    """Huber loss, HuberLossMetric: quadratic inside ``|d| <= alpha``."""
    d = np.abs(pred - label)
    return np.where(d <= alpha, 0.5 * d * d, alpha * (d - 0.5 * alpha))


def _binary_logloss(label, pred):
    """Log loss; class 1 iff ``label > 0``; ``-log(kEpsilon)`` below kEpsilon."""
    p_true = np.where(label > 0, pred, 1.0 - pred)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(p_true > _EPS, -np.log(p_true), _NEG_LOG_EPS)


def _binary_error(label, pred):
    """Error rate; predicts class 1 iff ``prob > 0.5`` (so 0.5 itself is class 0)."""
    return ((pred > 0.5) != (label > 0)).astype(np.float64)


def _true_class(label, n_classes):
    k = label.astype(np.int64)  # static_cast<size_t>(label) truncates
    if k.size and (k.min() < 0 or k.max() >= n_classes):
        raise ValueError(f"multiclass label must lie in [0, {n_classes}), got {k.min()}..{k.max()}")
    return k


def _multi_logloss(label, pred):
    """Softmax log loss of the true class, clipped at kEpsilon."""
    p_true = pred[np.arange(label.shape[0]), _true_class(label, pred.shape[1])]
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(p_true > _EPS, -np.log(p_true), _NEG_LOG_EPS)


def _multi_error(label, pred, multi_error_top_k=1):
    """Top-k error: wrong unless fewer than ``k + 1`` classes score ``>=`` the true one.

    The true class counts itself, so with ``k = 1`` any tie with the true class
    is an error (LightGBM's MultiErrorMetric), unlike a plain argmax.
    """
    p_true = pred[np.arange(label.shape[0]), _true_class(label, pred.shape[1])]
    n_at_least = (pred >= p_true[:, None]).sum(axis=1)
    return (n_at_least > multi_error_top_k).astype(np.float64)


def auc(label, pred, weight=None):
    """Weighted ROC AUC as LightGBM's AUCMetric (single process only).

    Equal predictions form one step of the ROC curve (trapezoid). Positive
    means ``label > 0``. Returns 1.0 when only one class is present, as
    LightGBM does. Needs all rows at once: a distributed caller must gather.
    """
    label, pred, weight = _prepare(label, pred, weight)
    w = np.ones_like(label) if weight is None else weight
    if label.shape[0] == 0:
        return 1.0
    # unique() sorts ascending; group rows by score, then walk groups downwards
    scores, group = np.unique(pred, return_inverse=True)
    is_pos = label > 0
    pos = np.bincount(group, weights=w * is_pos, minlength=scores.size)[::-1]
    neg = np.bincount(group, weights=w * ~is_pos, minlength=scores.size)[::-1]
    pos_above = np.concatenate(([0.0], np.cumsum(pos)[:-1]))
    accum = float(np.sum(neg * (0.5 * pos + pos_above)))
    sum_pos, sum_weights = float(pos.sum()), float(w.sum())
    if sum_pos > 0.0 and sum_pos != sum_weights:
        return accum / (sum_pos * (sum_weights - sum_pos))
    return 1.0


def auc_mu(label, raw, weight=None, weights_matrix=None):
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


@dataclass(frozen=True)
class Metric:
    """An evaluation metric.

    Attributes
    ----------
    name : str
        Canonical LightGBM name.
    higher_better : bool
        Whether larger values are better (only ``auc``).
    partial : callable or None
        ``partial(label, pred, weight=None, **kw) -> ndarray[float64]``: local
        additive sums; add them over shards, then call ``finalize``.
        None for metrics that are not sums (``auc``).
    finalize : callable or None
        ``finalize(sums) -> float``.
    direct : callable or None
        ``direct(label, pred, weight=None, **kw) -> float`` for metrics
        without ``partial``.
    raw_scores : bool
        ``pred`` are raw scores, not transformed predictions (``auc_mu``, as
        LightGBM).
    aliases : tuple of str
        LightGBM's other names of the metric (config.cpp ParseMetricAlias).
    multiclass : bool
        The metric is of class probabilities or scores (n, K): it fits the
        multiclass objectives only, and the others only the other metrics.
    options : callable or None
        ``options(cfg) -> dict``: the metric's keyword parameters from the
        resolved training params (see :meth:`options_from`).
    """

    name: str
    higher_better: bool
    partial: Callable | None
    finalize: Callable | None
    direct: Callable | None = None
    raw_scores: bool = False
    aliases: tuple[str, ...] = ()
    multiclass: bool = False
    options: Callable | None = None

    def options_from(self, cfg) -> dict:
        """The keyword parameters of :meth:`compute` taken from the training params."""
        return {} if self.options is None else self.options(cfg)

    def compute(self, label, pred, weight=None, **kw) -> float:
        """Single-process value of the metric.

        Parameters
        ----------
        label : array-like of shape (n,)
        pred : array-like of shape (n,) or (n, n_classes)
            Transformed prediction (see module docstring).
        weight : array-like of shape (n,), optional
        **kw
            Metric parameters: ``alpha`` (huber), ``multi_error_top_k``
            (multi_error).

        Returns
        -------
        float
        """
        if self.partial is None:
            return float(self.direct(label, pred, weight, **kw))
        return float(self.finalize(self.partial(label, pred, weight, **kw)))


def _additive(name, loss, finalize=_mean, *, aliases=(), multiclass=False, options=None):
    """A lower-is-better metric that is a sum over rows (``loss`` point-wise)."""
    partial = _pointwise(loss, 2 if multiclass else 1)
    return Metric(
        name, False, partial, finalize, aliases=aliases, multiclass=multiclass, options=options
    )


def _huber_options(cfg):
    return {"alpha": cfg["alpha"]}


def _auc_mu_options(cfg):
    if cfg["auc_mu_weights"] is None:
        return {}
    k = cfg["num_class"]
    # LightGBM takes the diagonal as zero whatever was given
    return {"weights_matrix": np.array(cfg["auc_mu_weights"]).reshape(k, k) * (1 - np.eye(k))}


def _rmse(sums):
    return float(np.sqrt(sums[0] / sums[1]))


_REGISTRY = Registry()
for _metric in (
    _additive("l2", _l2, aliases=("mse", "mean_squared_error", "regression_l2", "regression")),
    _additive("rmse", _l2, _rmse, aliases=("l2_root", "root_mean_squared_error")),
    _additive("l1", _l1, aliases=("mae", "mean_absolute_error", "regression_l1")),
    _additive("huber", _huber, options=_huber_options),
    _additive("binary_logloss", _binary_logloss, aliases=("binary",)),
    _additive("binary_error", _binary_error),
    Metric("auc", True, None, None, auc),
    _additive(
        "multi_logloss",
        _multi_logloss,
        aliases=("multiclass", "softmax", "multiclassova", "multiclass_ova", "ova", "ovr"),
        multiclass=True,
    ),
    _additive("multi_error", _multi_error, multiclass=True),
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
