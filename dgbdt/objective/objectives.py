"""Objectives: one class per loss, registered by name in ``OBJECTIVES``.

A class states everything that differs between losses: its name and aliases,
the branch of the gradient kernel ``native.objective.compute_gradients`` it
uses (an integer code: Numba caches neither closures, jitclasses nor
functions passed as values, so the kernel selects by integer), its label
check, starting score, output transform and default metric.  The parameter
table, the CLI help and model loading read the registry, so adding an
objective is one class here plus its branch in the kernel.

A custom objective is a callable ``fobj(preds, train_data) -> (grad, hess)``
as in LightGBM; its models are saved as objective ``"custom"``
(:class:`CustomObjective`, which only loads and predicts).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import numpy.typing as npt

from ..distributed.exact_sum import global_exact_sums
from ..log import DGBDTError, log_lightgbm_info, log_lightgbm_warning
from ..native import common
from ..native import rank as rank_kernels
from ..native.objective import compute_gradients
from ..registry import Registry
from .ranking import PositionBias, Queries, check_ranking_labels, default_label_gain, discounts

if TYPE_CHECKING:
    from ..distributed.comm import SerialComm
    from ..models.tree import Tree
    from ..treelearner.grower import TreeGrower

__all__ = [
    "OBJECTIVES",
    "Objective",
    "CustomObjective",
    "NO_OBJECTIVE_NAMES",
    "no_objective",
    "make_objective",
    "model_objective",
    "model_objective_names",
    "weighted_quantile",
]

#: The objectives ``train`` accepts, by canonical name (``OBJECTIVES.aliases``:
#: every accepted spelling).
OBJECTIVES: Registry[type[Objective]] = Registry()
_EMPTY = np.zeros(0, np.float64)
_EMPTY32 = np.zeros(0, np.float32)
#: LightGBM's kEpsilon, a float constant (1e-15f)
_EPSILON = float(np.float32(1e-15))
#: bounds that keep predictions finite: exp(_LOG_MAX) and _SQRT_MAX ** 2 are floats
_LOG_MAX, _SQRT_MAX = 709.0, 1e154


def weighted_quantile(values: np.ndarray, weights: np.ndarray | None, q: float) -> float:
    """Weighted quantile (q in [0, 1]); the median with q = 0.5, as LightGBM 4.7
    computes it for L1 (starting score and leaf values).

    Unweighted (``weights`` None; LightGBM drops a Dataset's weights when they
    are all 1, see Objective.set_label_weights): numpy's linearly interpolated
    quantile.  Weighted: values sorted (stably), cumulative
    weights ``cdf``, ``pos`` the first index with ``cdf > q * total``; the
    first or last value at the ends, else interpolated between values
    ``pos - 1`` and ``pos`` when ``cdf[pos] - cdf[pos - 1] >= 1`` and value
    ``pos - 1`` otherwise (LightGBM's WeightedPercentileFun, measured against
    LightGBM 4.7 in tests/test_lightgbm_agreement.py).
    """
    if len(values) == 0:
        return 0.0
    if weights is None:
        return float(np.quantile(values, q))
    order = np.argsort(values, kind="stable")
    v, w = values[order], weights[order]
    cdf = np.cumsum(w)
    if cdf[-1] <= 0:
        return float(np.quantile(values, q))
    threshold = cdf[-1] * q
    pos = min(int(np.searchsorted(cdf, threshold, side="right")), len(v) - 1)
    if pos == 0 or pos == len(v) - 1:
        return float(v[pos])
    step = cdf[pos] - cdf[pos - 1]
    if step >= 1.0:
        return float((threshold - cdf[pos - 1]) / step * (v[pos] - v[pos - 1]) + v[pos - 1])
    return float(v[pos - 1])


def short_number(value: float) -> str:
    """``value`` as C++'s default stream prints it (6 significant digits) when
    that reads back exactly, else in full (LightGBM's model text)."""
    text = f"{value:g}"
    return text if float(text) == value else repr(float(value))


def softmax(raw: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Row-wise softmax of raw scores (n, K), shifted by each row's largest score."""
    z = raw - raw.max(axis=1, keepdims=True)
    np.exp(z, out=z)
    z /= z.sum(axis=1, keepdims=True)
    return z


def _first(bad: npt.NDArray[np.bool_]) -> int | None:
    """The index of the first True in ``bad``, or None."""
    return int(np.flatnonzero(bad)[0]) if bad.any() else None


class Objective:
    """A built-in objective, built from the resolved params ``cfg``.

    The class attributes describe the objective: ``name`` and ``aliases``;
    ``code``, the kernel branch; ``default_metric``, evaluated when ``metric``
    is not given; ``multiclass``, one tree per class and round and the
    class-probability metrics; ``min_num_class`` / ``max_num_class`` (None: no
    bound), checked in params and model files; ``renews_leaves``, whether
    :meth:`renew_leaf_values` recomputes leaf values after a tree is grown;
    ``model_params``, the params a model saves (its ``objective_params``).
    """

    name: ClassVar[str] = ""
    aliases: ClassVar[tuple[str, ...]] = ()
    code: ClassVar[int] = -1
    default_metric: ClassVar[str] = ""
    multiclass: ClassVar[bool] = False
    min_num_class: ClassVar[int] = 1
    max_num_class: ClassVar[int | None] = 1
    renews_leaves: ClassVar[bool] = False
    model_params: ClassVar[tuple[str, ...]] = ("sigmoid", "alpha")
    #: the params the gradients scale with (what the boosting loop names when
    #: the first gradients are not finite)
    gradient_params: ClassVar[tuple[str, ...]] = ()
    #: reg_sqrt applies (LightGBM's RegressionL2loss and the losses built on it
    #: without turning it off)
    takes_sqrt = False
    #: the loss is over query groups: set_queries gives it the training set's
    uses_queries = False

    def __init__(self, cfg: Mapping[str, Any]) -> None:
        self.num_class: int = cfg["num_class"]
        self.num_model_per_iteration = self.num_class if self.multiclass else 1
        self.alpha = cfg["alpha"]
        self.sigmoid = cfg["sigmoid"]
        self.extra = self._extra(cfg)
        self.sqrt = bool(cfg["reg_sqrt"]) and self.takes_sqrt
        self.params = self.saved_params(cfg)
        self.label_weights = np.ones(2 * self.num_model_per_iteration)
        self.unit_weights = True  # no weights, or all 1 (set_label_weights decides)
        self.verbosity: int = cfg["verbosity"]
        #: LightGBM's "[name:BoostFromScore]: ..." line of each class, set by
        #: init_score where LightGBM's objective logs one (the loop prints it)
        self.boost_from_score_notes: list[str] = []
        # (the label array, its fitted labels), computed once per label array
        self._fit_labels: tuple[np.ndarray | None, Any] = (None, None)

    def _extra(self, cfg: Mapping[str, Any]) -> float:
        """The kernel's third parameter (fair_c, tweedie_variance_power, ...); 0 if none."""
        return 0.0

    @classmethod
    def check_params(cls, cfg: Mapping[str, Any]) -> None:
        """Refuse parameter values this objective is not defined for (ValueError)."""
        if cls.renews_leaves and cfg["monotone_constraints"] is not None:
            # LightGBM's gbdt.cpp: the renewed leaf values (quantiles of residuals)
            # ignore the bounds that keep predictions monotone
            raise ValueError(
                f"Cannot use monotone_constraints with objective {cls.name!r}: its leaf "
                "values are renewed after each tree, ignoring them (as LightGBM)"
            )
        if cfg["reg_sqrt"] and not cls.takes_sqrt:
            warnings.warn(
                f"reg_sqrt is ignored by objective {cls.name!r} (as LightGBM: it applies "
                "to regression, regression_l1, quantile, mape and fair)",
                UserWarning,
                stacklevel=4,
            )

    @classmethod
    def saved_params(cls, cfg: Mapping[str, Any]) -> dict[str, Any]:
        """The ``objective_params`` a model of this objective saves (reg_sqrt only
        when set, so models without it keep their bytes)."""
        params = {key: cfg[key] for key in cls.model_params}
        if cls.takes_sqrt and cfg["reg_sqrt"]:
            params["reg_sqrt"] = 1.0
        return params

    def fit_label(self, label: np.ndarray) -> np.ndarray:
        """The labels the loss is fitted to: ``sign(y) sqrt(|y|)`` (float32, as
        LightGBM's trans_label_) with reg_sqrt, else ``label`` itself."""
        if not self.sqrt:
            return label
        if self._fit_labels[0] is not label:
            y = np.asarray(label, np.float32)
            self._fit_labels = (label, (np.sign(y) * np.sqrt(np.abs(y))).astype(np.float64))
        return self._fit_labels[1]

    @classmethod
    def num_class_error(cls, num_class: int) -> str | None:
        """What ``num_class`` must be (``"must be 1"``) when it does not fit, else None."""
        lo, hi = cls.min_num_class, cls.max_num_class
        if lo == hi:
            return None if num_class == lo else f"must be {lo}"
        if num_class < lo:
            return f"must be >= {lo}"
        return None if hi is None or num_class <= hi else f"must be <= {hi}"

    @classmethod
    def output(cls, raw: npt.NDArray[np.float64], params: Mapping[str, Any]) -> np.ndarray:
        """Raw scores (n, K) -> predictions, (n,) or (n, K); ``params`` are the
        model's ``objective_params``."""
        return raw[:, 0]

    @classmethod
    def lightgbm_text(cls, params: Mapping[str, Any], num_class: int) -> str | None:
        """The ``objective=`` line's value in LightGBM's model text (its
        ObjectiveFunction::ToString), or None where LightGBM writes no line."""
        return cls.name

    def check_labels(self, label: np.ndarray | None, weight: np.ndarray | None) -> None:
        """Local checks of this rank's labels (no communication)."""
        if label is None:
            raise ValueError("Training data has no label")
        self._check_label_values(label)

    def _check_label_values(self, label: np.ndarray) -> None:
        """Refuse labels the loss is not defined for (any real number by default)."""

    def set_label_weights(
        self, label: np.ndarray, weight: np.ndarray | None, comm: SerialComm
    ) -> None:
        """Global checks, and the class weights of objectives that have them.

        Sums are over every rank's rows, exact (dgbdt.distributed.exact_sum), so all ranks
        agree and get the same values whatever the number of ranks.
        """
        ww = np.ones_like(label) if weight is None else weight
        # LightGBM drops weights that are all 1 (its weighted median differs)
        self.unit_weights = comm.every_rank(weight is None or bool(np.all(weight == 1.0)))
        rows, pos_w, neg_w = global_exact_sums(
            comm, [np.ones(len(label)), ww[label > 0], ww[label <= 0]]
        )
        if rows == 0:
            raise ValueError("The training data has no rows")
        if not pos_w + neg_w > 0:
            raise ValueError(
                "The sample weights sum to zero: at least one row needs a positive weight"
            )
        self._set_class_weights(label, comm)
        self._log_init(label, weight)

    def _log_init(self, label: np.ndarray, weight: np.ndarray | None) -> None:
        """LightGBM's log lines of its objective's Init, from this rank's rows as
        each LightGBM machine's (none by default)."""

    def _set_class_weights(self, label: np.ndarray, comm: SerialComm) -> None:
        """``label_weights`` (weight of label <= 0, of label > 0): none by default."""

    def init_score(
        self, label: np.ndarray, weight: np.ndarray | None, comm: SerialComm
    ) -> npt.NDArray[np.float64]:
        """The starting score of boost_from_average (one per class), from
        global statistics: the same on any number of ranks."""
        raise NotImplementedError

    def gradients(
        self,
        scores: npt.NDArray[np.float64],
        label: np.ndarray,
        weight: np.ndarray | None,
        gradients: npt.NDArray[np.float32],
        hessians: npt.NDArray[np.float32],
        iteration: int = 0,
    ) -> None:
        """Gradients and hessians (k, n) float32 of the (k, n) raw ``scores`` at
        boosting round ``iteration``."""
        # LightGBM drops weights that are all 1 (its unweighted branches differ
        # for cross_entropy_lambda; the others give the same numbers)
        compute_gradients(
            self.code,
            scores,
            self.fit_label(label),
            _EMPTY if weight is None or self.unit_weights else weight,
            self.alpha,
            self.sigmoid,
            self.extra,
            self.label_weights,
            gradients,
            hessians,
        )

    def transform(self, raw: npt.NDArray[np.float64]) -> np.ndarray:
        """Raw scores (n, K) -> predictions: (n,) or (n, K)."""
        return self.output(raw, self.params)


@OBJECTIVES.add
class Regression(Objective):
    """L2 loss; starts from the weighted mean of the labels."""

    name = "regression"
    aliases: ClassVar[tuple[str, ...]] = (
        "regression_l2",
        "l2",
        "mean_squared_error",
        "mse",
        "l2_root",
        "root_mean_squared_error",
        "rmse",
    )
    code = common.OBJ_REGRESSION
    default_metric = "l2"
    takes_sqrt = True

    @classmethod
    def output(cls, raw: npt.NDArray[np.float64], params: Mapping[str, Any]) -> np.ndarray:
        if params.get("reg_sqrt"):
            # |raw| beyond 1e154 would square to infinity: predictions stay finite
            r = np.clip(raw[:, 0], -_SQRT_MAX, _SQRT_MAX)
            return np.sign(r) * r * r
        return raw[:, 0]

    @classmethod
    def lightgbm_text(cls, params: Mapping[str, Any], num_class: int) -> str | None:
        return f"{cls.name} sqrt" if params.get("reg_sqrt") else cls.name

    def init_score(
        self, label: np.ndarray, weight: np.ndarray | None, comm: SerialComm
    ) -> npt.NDArray[np.float64]:
        label = self.fit_label(label)
        ww = np.ones_like(label) if weight is None else weight
        s_wy, s_w = global_exact_sums(comm, [ww * label, ww])
        return np.array([s_wy / s_w])


@OBJECTIVES.add
class RegressionL1(Regression):
    """L1 loss.  Its starting score and, after each tree, every leaf's value
    are the weighted ``quantile`` (the median) of the residuals, as in
    LightGBM; a quantile-like objective changes ``quantile``."""

    name = "regression_l1"
    aliases: ClassVar[tuple[str, ...]] = ("l1", "mean_absolute_error", "mae")
    code = common.OBJ_REGRESSION_L1
    default_metric = "l1"
    renews_leaves = True
    quantile = 0.5

    def _quantile_weights(self, label: np.ndarray, weight: np.ndarray | None) -> np.ndarray | None:
        """The weights of the weighted quantiles (this rank's rows), or None when all are 1."""
        return None if self.unit_weights else weight

    def _all_weights(
        self,
        label: np.ndarray,
        weight: np.ndarray | None,
        comm: SerialComm,
        rows: slice | np.ndarray = slice(None),
    ) -> np.ndarray | None:
        """Every rank's quantile weights of ``rows`` (gathered), or None when all are 1."""
        w = self._quantile_weights(label, weight)
        return None if w is None else comm.concat(w[rows])

    def init_score(
        self, label: np.ndarray, weight: np.ndarray | None, comm: SerialComm
    ) -> npt.NDArray[np.float64]:
        label = self.fit_label(label)
        all_label = comm.concat(label)
        all_weight = self._all_weights(label, weight, comm)
        return np.array([weighted_quantile(all_label, all_weight, self.quantile)])

    def renew_leaf_values(
        self,
        tree: Tree,
        grower: TreeGrower,
        label: np.ndarray,
        scores: npt.NDArray[np.float64],
        weight: np.ndarray | None,
        comm: SerialComm,
    ) -> None:
        """A leaf's value becomes the weighted quantile of its residuals over
        every rank's rows (gathered: one residual per row per tree); the rows
        of leaf ``k`` are ``grower``'s sample_indices from leaf_begin[k] on."""
        n_leaves, begin, count = tree.n_leaves, grower.leaf_begin, grower.leaf_count
        leaf_of = np.repeat(np.arange(n_leaves), count[:n_leaves])
        rows = np.concatenate(
            [grower.sample_indices[begin[k] : begin[k] + count[k]] for k in range(n_leaves)]
        )
        leaf_of = comm.concat(leaf_of, np.int64)
        label = self.fit_label(label)
        residual = comm.concat(label[rows] - scores[rows])
        w = self._all_weights(label, weight, comm, rows)
        order = np.argsort(leaf_of, kind="stable")
        bounds = np.searchsorted(leaf_of[order], np.arange(n_leaves + 1))
        for leaf in range(n_leaves):
            sel = order[bounds[leaf] : bounds[leaf + 1]]
            if len(sel):
                tree.leaf_value[leaf] = weighted_quantile(
                    residual[sel], None if w is None else w[sel], self.quantile
                )


@OBJECTIVES.add
class Huber(Regression):
    """Huber loss with delta ``alpha``; starts from the weighted mean, as L2."""

    name = "huber"
    aliases = ()
    code = common.OBJ_HUBER
    default_metric = "huber"
    gradient_params = ("alpha",)
    takes_sqrt = False


@OBJECTIVES.add
class Quantile(RegressionL1):
    """Pinball loss of the ``alpha`` quantile: starts from the labels' weighted
    ``alpha`` quantile and renews every leaf to its residuals' (LightGBM's
    RegressionQuantileloss, whose alpha is a float32)."""

    name = "quantile"
    aliases = ()
    code = common.OBJ_QUANTILE
    default_metric = "quantile"
    model_params = ("alpha",)

    def __init__(self, cfg: Mapping[str, Any]) -> None:
        super().__init__(cfg)
        self.quantile = float(np.float32(cfg["alpha"]))

    @classmethod
    def check_params(cls, cfg: Mapping[str, Any]) -> None:
        super().check_params(cfg)
        if not 0.0 < cfg["alpha"] < 1.0:
            raise ValueError(
                f"Parameter 'alpha' must be in (0, 1) for objective 'quantile' (the "
                f"quantile to fit), got {cfg['alpha']!r}"
            )


@OBJECTIVES.add
class Mape(RegressionL1):
    """Mean absolute percentage error: L1 with each row weighted by
    1 / max(1, |label|) (float32, LightGBM's label_weight_); starts from, and
    renews leaves to, the medians weighted so."""

    name = "mape"
    aliases = ("mean_absolute_percentage_error",)
    code = common.OBJ_MAPE
    default_metric = "mape"
    model_params = ()

    def _log_init(self, label: np.ndarray, weight: np.ndarray | None) -> None:
        if np.any(np.abs(self.fit_label(label)) < 1):
            log_lightgbm_warning(
                "Some label values are < 1 in absolute value. MAPE is unstable with such "
                "values, so LightGBM rounds them to 1.0 when calculating MAPE.",
                self.verbosity,
            )

    def _quantile_weights(self, label: np.ndarray, weight: np.ndarray | None) -> np.ndarray | None:
        y = np.abs(np.asarray(label, np.float32))
        lw = np.float32(1.0) / np.maximum(np.float32(1.0), y)
        if weight is not None and not self.unit_weights:
            lw = lw * np.asarray(weight, np.float32)
        return lw.astype(np.float64)


@OBJECTIVES.add
class Fair(Regression):
    """Fair loss c^2 (|x|/c - log(1 + |x|/c)) with c = ``fair_c``; starts from
    the weighted mean, as L2."""

    name = "fair"
    aliases = ()
    code = common.OBJ_FAIR
    default_metric = "fair"
    model_params = ()
    gradient_params = ("fair_c",)

    def _extra(self, cfg: Mapping[str, Any]) -> float:
        return cfg["fair_c"]


def _check_non_negative(name: str, label: np.ndarray) -> None:
    """Poisson-family labels: none negative (LightGBM's Init)."""
    i = _first(label < 0)
    if i is not None:
        raise ValueError(
            f"objective={name!r} needs non-negative labels; row {i} has label {label[i]}"
        )


class _LogLink(Objective):
    """Poisson, gamma and tweedie: the score is log(mean); predictions are
    exp(score); they start from log of the weighted mean label (LightGBM's
    RegressionPoissonLoss and the two built on it)."""

    model_params = ()

    @classmethod
    def output(cls, raw: npt.NDArray[np.float64], params: Mapping[str, Any]) -> np.ndarray:
        # exp(709) is near the largest float: beyond, the prediction would be
        # infinite, so it is capped there (no fitted model gets near it)
        return np.exp(np.minimum(raw[:, 0], _LOG_MAX))

    def _check_label_values(self, label: np.ndarray) -> None:
        _check_non_negative(self.name, label)

    def _set_class_weights(self, label: np.ndarray, comm: SerialComm) -> None:
        (total,) = global_exact_sums(comm, [label])
        if total == 0:
            raise ValueError(f"objective={self.name!r}: the sum of the labels is zero")

    def init_score(
        self, label: np.ndarray, weight: np.ndarray | None, comm: SerialComm
    ) -> npt.NDArray[np.float64]:
        ww = np.ones_like(label) if weight is None else weight
        s_wy, s_w = global_exact_sums(comm, [ww * label, ww])
        if not s_wy > 0:
            raise ValueError(
                f"objective={self.name!r}: the weighted mean label is zero (log(0) "
                "cannot start the model; set boost_from_average=false)"
            )
        return np.array([np.log(s_wy / s_w)])


@OBJECTIVES.add
class Poisson(_LogLink):
    """Poisson regression; hessians scaled by exp(``poisson_max_delta_step``)."""

    name = "poisson"
    aliases = ()
    code = common.OBJ_POISSON
    default_metric = "poisson"
    gradient_params = ("poisson_max_delta_step",)

    def _extra(self, cfg: Mapping[str, Any]) -> float:
        return float(np.exp(cfg["poisson_max_delta_step"]))


@OBJECTIVES.add
class Gamma(_LogLink):
    """Gamma regression (log link)."""

    name = "gamma"
    aliases = ()
    code = common.OBJ_GAMMA
    default_metric = "gamma"


@OBJECTIVES.add
class Tweedie(_LogLink):
    """Tweedie regression (log link) with variance power ``tweedie_variance_power``."""

    name = "tweedie"
    aliases = ()
    code = common.OBJ_TWEEDIE
    default_metric = "tweedie"

    def _extra(self, cfg: Mapping[str, Any]) -> float:
        return cfg["tweedie_variance_power"]


def _check_unit_interval(name: str, label: np.ndarray) -> None:
    """Cross-entropy labels: in [0, 1] (LightGBM's CheckElementsIntervalClosed)."""
    i = _first((label < 0) | (label > 1) | np.isnan(label))
    if i is not None:
        raise ValueError(f"objective={name!r} needs labels in [0, 1]; row {i} has label {label[i]}")


@OBJECTIVES.add
class CrossEntropy(Objective):
    """Cross-entropy of probability labels in [0, 1] with p = sigmoid(score);
    starts from the log-odds of the weighted mean label."""

    name = "cross_entropy"
    aliases = ("xentropy",)
    code = common.OBJ_CROSS_ENTROPY
    default_metric = "cross_entropy"
    model_params = ()

    @classmethod
    def output(cls, raw: npt.NDArray[np.float64], params: Mapping[str, Any]) -> np.ndarray:
        return 1.0 / (1.0 + np.exp(-raw[:, 0]))

    def _check_label_values(self, label: np.ndarray) -> None:
        _check_unit_interval(self.name, label)

    def _log_init(self, label: np.ndarray, weight: np.ndarray | None) -> None:
        # set_label_weights runs after check_labels: the labels passed it
        log_lightgbm_info(
            f"[{self.name}:Init]: (objective) labels passed interval [0, 1] check", self.verbosity
        )

    def _mean_label(self, label: np.ndarray, weight: np.ndarray | None, comm: SerialComm) -> float:
        ww = np.ones_like(label) if weight is None else weight
        s_wy, s_w = global_exact_sums(comm, [ww * label, ww])
        return s_wy / s_w

    def init_score(
        self, label: np.ndarray, weight: np.ndarray | None, comm: SerialComm
    ) -> npt.NDArray[np.float64]:
        p = min(max(self._mean_label(label, weight, comm), _EPSILON), 1.0 - _EPSILON)
        score = np.log(p / (1.0 - p))
        self.boost_from_score_notes = [
            f"[{self.name}:BoostFromScore]: pavg = {p:f} -> initscore = {score:f}"
        ]
        return np.array([score])


@OBJECTIVES.add
class CrossEntropyLambda(CrossEntropy):
    """Cross-entropy with p = 1 - exp(-w lambda), lambda = log(1 + exp(score))
    (weights are exposures, all > 0); predictions are lambda; starts from
    log(expm1(weighted mean label))."""

    name = "cross_entropy_lambda"
    aliases = ("xentlambda",)
    code = common.OBJ_CROSS_ENTROPY_LAMBDA
    default_metric = "cross_entropy_lambda"

    @classmethod
    def output(cls, raw: npt.NDArray[np.float64], params: Mapping[str, Any]) -> np.ndarray:
        # log(1 + e^x) rounds to x itself from x = 40 on: no overflow there
        x = raw[:, 0]
        return np.where(x > 40.0, x, np.log1p(np.exp(np.minimum(x, 40.0))))

    def check_labels(self, label: np.ndarray | None, weight: np.ndarray | None) -> None:
        # (negative weights are refused by every Dataset)
        super().check_labels(label, weight)
        if weight is None:
            return
        i = _first(weight <= 0)
        if i is not None:
            raise ValueError(
                f"objective={self.name!r} needs positive weights; row {i} has weight {weight[i]}"
            )

    def _log_init(self, label: np.ndarray, weight: np.ndarray | None) -> None:
        super()._log_init(label, weight)
        if weight is not None and not self.unit_weights and len(weight):
            # (this rank's weights, as LightGBM's line on each machine; its
            # weights and their ratio are float32)
            lo, hi = np.float32(weight.min()), np.float32(weight.max())
            log_lightgbm_info(
                f"[{self.name}:Init]: min, max weights = {lo:f}, {hi:f}; ratio = {hi / lo:f}",
                self.verbosity,
            )

    def init_score(
        self, label: np.ndarray, weight: np.ndarray | None, comm: SerialComm
    ) -> npt.NDArray[np.float64]:
        h = self._mean_label(label, weight, comm)
        with np.errstate(divide="ignore"):
            score = np.log(np.expm1(h))
        self.boost_from_score_notes = [
            f"[{self.name}:BoostFromScore]: havg = {h:f} -> initscore = {score:f}"
        ]
        return np.array([score])


@OBJECTIVES.add
class Binary(Objective):
    """Log loss of ``sigmoid(sigmoid_param * score)``; the positive class is label > 0."""

    name = "binary"
    code = common.OBJ_BINARY
    default_metric = "binary_logloss"
    gradient_params = ("sigmoid", "scale_pos_weight")

    def __init__(self, cfg: Mapping[str, Any]) -> None:
        super().__init__(cfg)
        self._scale_pos_weight = cfg["scale_pos_weight"]
        self._is_unbalance = cfg["is_unbalance"]

    @classmethod
    def output(cls, raw: npt.NDArray[np.float64], params: Mapping[str, Any]) -> np.ndarray:
        sigmoid = params.get("sigmoid", 1.0)
        return 1.0 / (1.0 + np.exp(-sigmoid * raw[:, 0]))

    @classmethod
    def lightgbm_text(cls, params: Mapping[str, Any], num_class: int) -> str | None:
        return f"binary sigmoid:{short_number(params.get('sigmoid', 1.0))}"

    def _check_label_values(self, label: np.ndarray) -> None:
        # LightGBM's positive class is label > 0 (binary_objective.hpp): 0/1, -1/+1
        # and any integers (0/10) train as such.  It silently takes fractions too
        # (0.3 is positive): refused here, almost always a regression target.
        i = _first(label != np.round(label))
        if i is not None:
            raise ValueError(
                f"objective='binary' needs labels 0 or 1 (or -1 and +1); row {i} "
                f"has label {label[i]}, a fraction (integer labels > 0 are the "
                "positive class, as in LightGBM)"
            )

    def _positives(self, label: np.ndarray) -> list[npt.NDArray[np.bool_]]:
        """One boolean row mask per model: which rows are its positive class."""
        return [label > 0]

    def _set_class_weights(self, label: np.ndarray, comm: SerialComm) -> None:
        # is_unbalance weighs the classes by their row counts, as LightGBM
        # (not by their weight sums)
        masks = self._positives(label)
        counts = global_exact_sums(
            comm,
            [np.ones(int(np.sum(m))) for m in masks] + [np.ones(int(np.sum(~m))) for m in masks],
        )
        k = len(masks)
        for i in range(k):
            # LightGBM's BinaryLogloss::Init (one per class of multiclassova)
            if counts[i] == 0 or counts[k + i] == 0:
                log_lightgbm_warning("Contains only one class", self.verbosity)
            log_lightgbm_info(
                f"Number of positive: {int(counts[i])}, number of negative: {int(counts[k + i])}",
                self.verbosity,
            )
        self.label_weights = np.concatenate(
            [self._class_weights(counts[i], counts[k + i]) for i in range(k)]
        )

    def _class_weights(self, pos: float, neg: float) -> npt.NDArray[np.float64]:
        """(weight of the negatives, of the positives) of one binary model.  A
        model whose rows are all of one class is not trained (LightGBM's
        need_train_): zero weights give zero gradients and hessians, so its
        trees cannot split and it stays at its starting score."""
        if pos == 0 or neg == 0:
            return np.zeros(2)
        if self._is_unbalance:
            return np.array([pos / neg, 1.0]) if pos > neg else np.array([1.0, neg / pos])
        return np.array([1.0, self._scale_pos_weight])

    def init_score(
        self, label: np.ndarray, weight: np.ndarray | None, comm: SerialComm
    ) -> npt.NDArray[np.float64]:
        # the log-odds of the weighted share of positives; is_unbalance /
        # scale_pos_weight do not enter it (LightGBM's BoostFromScore)
        ww = np.ones_like(label) if weight is None else weight
        masks = self._positives(label)
        sums = global_exact_sums(comm, [ww[m] for m in masks] + [ww])
        p = np.clip(np.array(sums[:-1]) / sums[-1], _EPSILON, 1 - _EPSILON)
        score = np.log(p / (1.0 - p)) / self.sigmoid
        # the binary objective's name: multiclassova's classes are binary ones
        self.boost_from_score_notes = [
            f"[binary:BoostFromScore]: pavg={a:f} -> initscore={b:f}"
            for a, b in zip(p, score, strict=True)
        ]
        return score


@OBJECTIVES.add
class Multiclass(Objective):
    """Softmax cross-entropy over ``num_class`` >= 2 classes (labels 0 .. K-1)."""

    name = "multiclass"
    aliases = ("softmax",)
    code = common.OBJ_MULTICLASS
    default_metric = "multi_logloss"
    multiclass = True
    min_num_class, max_num_class = 2, None

    @classmethod
    def output(cls, raw: npt.NDArray[np.float64], params: Mapping[str, Any]) -> np.ndarray:
        return softmax(raw)

    @classmethod
    def lightgbm_text(cls, params: Mapping[str, Any], num_class: int) -> str | None:
        return f"multiclass num_class:{num_class}"

    def _check_label_values(self, label: np.ndarray) -> None:
        _check_class_labels(self, label)

    def init_score(
        self, label: np.ndarray, weight: np.ndarray | None, comm: SerialComm
    ) -> npt.NDArray[np.float64]:
        # the log of the (weighted) class priors
        ww = np.ones_like(label) if weight is None else weight
        counts = np.array(global_exact_sums(comm, [ww[label == k] for k in range(self.num_class)]))
        return np.log(np.maximum(counts / counts.sum(), 1e-15))


@OBJECTIVES.add
class MulticlassOva(Binary):
    """One-vs-all: ``num_class`` binary models, model k's positives the rows of
    class k (labels 0 .. K-1); predictions are each model's sigmoid, not
    normalised (LightGBM's MulticlassOVA)."""

    name = "multiclassova"
    aliases = ("multiclass_ova", "ova", "ovr")
    code = common.OBJ_MULTICLASS_OVA
    default_metric = "multi_logloss"
    multiclass = True
    min_num_class, max_num_class = 2, None

    @classmethod
    def output(cls, raw: npt.NDArray[np.float64], params: Mapping[str, Any]) -> np.ndarray:
        return 1.0 / (1.0 + np.exp(-params.get("sigmoid", 1.0) * raw))

    @classmethod
    def lightgbm_text(cls, params: Mapping[str, Any], num_class: int) -> str | None:
        return f"multiclassova num_class:{num_class} sigmoid:{short_number(params.get('sigmoid', 1.0))}"

    def _check_label_values(self, label: np.ndarray) -> None:
        _check_class_labels(self, label)

    def _positives(self, label: np.ndarray) -> list[npt.NDArray[np.bool_]]:
        classes = label.astype(np.int64)
        return [classes == k for k in range(self.num_class)]


def _check_class_labels(objective: Multiclass | MulticlassOva, label: np.ndarray) -> None:
    """Class labels: integers in [0, num_class) (both multiclass objectives)."""
    k = objective.num_class
    i = _first((label < 0) | (label >= k) | (label != np.floor(label)))
    if i is not None:
        raise ValueError(
            f"objective={objective.name!r} with num_class={k} needs integer "
            f"labels in [0, {k - 1}]; row {i} has label {label[i]}"
        )


class _Ranking(Objective):
    """A learning-to-rank loss over each query's documents (labels: relevance
    grades).  Needs the training set's queries (:meth:`set_queries`); its
    raw scores are the predictions, and it starts from 0 (LightGBM's
    BoostFromScore of ranking objectives)."""

    default_metric = "ndcg"
    model_params = ()
    uses_queries = True

    def __init__(self, cfg: Mapping[str, Any]) -> None:
        super().__init__(cfg)
        self.label_gain = default_label_gain(cfg["label_gain"])
        # set by set_queries before any gradients are asked for
        self.queries: Queries = None  # type: ignore[assignment]
        # (the label array, its float32 copy), converted once per label array
        self._labels: tuple[np.ndarray | None, Any] = (None, None)

    def set_queries(
        self,
        queries: Queries,
        label: np.ndarray,
        position: np.ndarray | None,
        comm: SerialComm,
    ) -> None:
        """This rank's queries (dgbdt.objective.ranking.Queries) of the training set."""
        self.queries = queries

    def _float_labels(self, label: np.ndarray) -> npt.NDArray[np.float32]:
        """The labels as float32 (LightGBM's label_t), converted once."""
        if self._labels[0] is not label:
            self._labels = (label, np.ascontiguousarray(label, np.float32))
        return self._labels[1]

    def init_score(
        self, label: np.ndarray, weight: np.ndarray | None, comm: SerialComm
    ) -> npt.NDArray[np.float64]:
        return np.zeros(1)

    @staticmethod
    def _weights(weight: np.ndarray | None) -> npt.NDArray[np.float32]:
        return _EMPTY32 if weight is None else np.ascontiguousarray(weight, np.float32)


@OBJECTIVES.add
class LambdaRank(_Ranking):
    """LambdaRank (LambdaMART with NDCG, LightGBM's LambdarankNDCG): over the
    pairs of a query with different labels and one document in the top
    ``lambdarank_truncation_level`` positions, the logistic pair loss weighted
    by |delta NDCG| of swapping them; ``lambdarank_norm`` normalises each
    query's lambdas.  With Dataset positions it also learns a bias factor per
    position (unbiased lambdarank), from sums over every rank's rows."""

    name = "lambdarank"
    gradient_params = ("sigmoid",)

    def __init__(self, cfg: Mapping[str, Any]) -> None:
        super().__init__(cfg)
        self.truncation = cfg["lambdarank_truncation_level"]
        self.kernel_cfg = np.array(
            [cfg["sigmoid"], self.truncation, 1.0 if cfg["lambdarank_norm"] else 0.0]
        )
        self.table = np.empty(rank_kernels.SIGMOID_BINS, np.float64)
        self.table_params = np.array(rank_kernels.sigmoid_table(cfg["sigmoid"], self.table))
        self.discount = discounts()
        self.inv_max: npt.NDArray[np.float64] | None = None
        self.bias_params = (cfg["learning_rate"], cfg["lambdarank_position_bias_regularization"])
        self.bias: PositionBias | None = None  # with Dataset positions

    def _check_label_values(self, label: np.ndarray) -> None:
        check_ranking_labels(label, self.label_gain, "lambdarank")

    def set_queries(
        self,
        queries: Queries,
        label: np.ndarray,
        position: np.ndarray | None,
        comm: SerialComm,
    ) -> None:
        super().set_queries(queries, label, position, comm)
        self.inv_max = np.empty(queries.n_queries, np.float64)
        rank_kernels.inverse_max_dcgs(
            self.truncation,
            self._float_labels(label),
            queries.boundaries,
            self.label_gain,
            self.discount,
            self.inv_max,
        )
        self.bias = None if position is None else PositionBias(position, *self.bias_params, comm)

    def gradients(
        self,
        scores: npt.NDArray[np.float64],
        label: np.ndarray,
        weight: np.ndarray | None,
        gradients: npt.NDArray[np.float32],
        hessians: npt.NDArray[np.float32],
        iteration: int = 0,
    ) -> None:
        raw = scores[0] if self.bias is None else self.bias.adjusted(scores[0])
        rank_kernels.lambdarank_gradients(
            raw,
            self._float_labels(label),
            self.queries.boundaries,
            self.inv_max,
            self.label_gain,
            self.discount,
            self.table,
            self.table_params,
            self.kernel_cfg,
            self._weights(weight),
            gradients[0],
            hessians[0],
        )
        if self.bias is not None:
            self.bias.update(gradients[0], hessians[0])


@OBJECTIVES.add
class RankXendcg(_Ranking):
    """rank_xendcg (XE-NDCG, Bruch 2020, LightGBM's RankXENDCG): the cross
    entropy between each query's softmax of scores and a target distribution
    of ``2^label - u`` with uniform noise u; its draws are keyed on
    (objective_seed, iteration, global query index) through LightGBM's own
    generator, so the gradients are LightGBM's in a fresh run on any number
    of ranks."""

    name = "rank_xendcg"
    aliases = ("xendcg", "xe_ndcg", "xe_ndcg_mart", "xendcg_mart")

    def __init__(self, cfg: Mapping[str, Any]) -> None:
        super().__init__(cfg)
        self.seed = cfg["objective_seed"]

    def _check_label_values(self, label: np.ndarray) -> None:
        bad = (np.asarray(label) < 0) | (np.asarray(label) >= 1024)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"rank_xendcg: label {label[i]:g} at row {i}: its target weighs 2^label, "
                "so labels must be relevance grades in [0, 1024)"
            )

    def gradients(
        self,
        scores: npt.NDArray[np.float64],
        label: np.ndarray,
        weight: np.ndarray | None,
        gradients: npt.NDArray[np.float32],
        hessians: npt.NDArray[np.float32],
        iteration: int = 0,
    ) -> None:
        q = self.queries
        rank_kernels.xendcg_gradients(
            scores[0],
            self._float_labels(label),
            q.boundaries,
            self.seed,
            q.first,
            iteration,
            self._weights(weight),
            gradients[0],
            hessians[0],
        )


class CustomObjective(Objective):
    """The objective of a model trained with a callable objective: it only
    loads and predicts (raw scores, any number of them per row).  Not in
    ``OBJECTIVES``: ``train`` takes the callable itself."""

    name = "custom"
    max_num_class = None

    @classmethod
    def output(cls, raw: npt.NDArray[np.float64], params: Mapping[str, Any]) -> np.ndarray:
        return raw if raw.shape[1] > 1 else raw[:, 0]

    @classmethod
    def lightgbm_text(cls, params: Mapping[str, Any], num_class: int) -> str | None:
        return None  # LightGBM writes no objective for a callable one


#: LightGBM's spellings of "no objective" (objective=none): the gradients come
#: from a callable given to Booster.update(fobj=...) instead.
NO_OBJECTIVE_NAMES = ("none", "null", "custom", "na")


def no_objective(preds: Any, train_data: Any) -> Any:
    """The custom objective of ``objective="none"`` (LightGBM's null objective):
    training needs a callable from ``Booster.update(fobj=...)``; without one it
    is LightGBM's error."""
    raise DGBDTError("Cannot update due to null objective function.")


def make_objective(cfg: Mapping[str, Any]) -> Objective | None:
    """The objective of resolved params ``cfg``; None for a callable (custom) one."""
    if callable(cfg["objective"]):
        return None
    return OBJECTIVES.entries[cfg["objective"]](cfg)


def model_objective_names() -> list[str]:
    """The objectives a model file may name, sorted."""
    return sorted([*OBJECTIVES.entries, CustomObjective.name])


def model_objective(name: str) -> type[Objective]:
    """The class of a model's objective (a name from :func:`model_objective_names`)."""
    return CustomObjective if name == CustomObjective.name else OBJECTIVES.entries[name]
