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

import numpy as np

from .exact_sum import global_exact_sums
from .native import common
from .native.objective import compute_gradients
from .registry import Registry

__all__ = [
    "OBJECTIVES",
    "Objective",
    "CustomObjective",
    "make_objective",
    "model_objective",
    "model_objective_names",
    "weighted_quantile",
]

#: The objectives ``train`` accepts, by canonical name (``OBJECTIVES.aliases``:
#: every accepted spelling).
OBJECTIVES = Registry()
_EMPTY = np.zeros(0, np.float64)


def weighted_quantile(values, weights, q):
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


def short_number(value):
    """``value`` as C++'s default stream prints it (6 significant digits) when
    that reads back exactly, else in full (LightGBM's model text)."""
    text = f"{value:g}"
    return text if float(text) == value else repr(float(value))


def softmax(raw):
    """Row-wise softmax of raw scores (n, K), shifted by each row's largest score."""
    z = raw - raw.max(axis=1, keepdims=True)
    np.exp(z, out=z)
    z /= z.sum(axis=1, keepdims=True)
    return z


def _first(bad):
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

    name = ""
    aliases = ()
    code = -1
    default_metric = ""
    multiclass = False
    min_num_class = max_num_class = 1
    renews_leaves = False
    model_params = ("sigmoid", "alpha")

    def __init__(self, cfg):
        self.num_class = cfg["num_class"]
        self.num_model_per_iteration = self.num_class if self.multiclass else 1
        self.alpha = cfg["alpha"]
        self.sigmoid = cfg["sigmoid"]
        self.params = self.saved_params(cfg)
        self.label_weights = np.ones(2)
        self.unit_weights = True  # no weights, or all 1 (set_label_weights decides)

    @classmethod
    def saved_params(cls, cfg):
        """The ``objective_params`` a model of this objective saves."""
        return {key: cfg[key] for key in cls.model_params}

    @classmethod
    def num_class_error(cls, num_class):
        """What ``num_class`` must be (``"must be 1"``) when it does not fit, else None."""
        lo, hi = cls.min_num_class, cls.max_num_class
        if lo == hi:
            return None if num_class == lo else f"must be {lo}"
        if num_class < lo:
            return f"must be >= {lo}"
        return None if hi is None or num_class <= hi else f"must be <= {hi}"

    @classmethod
    def output(cls, raw, params):
        """Raw scores (n, K) -> predictions, (n,) or (n, K); ``params`` are the
        model's ``objective_params``."""
        return raw[:, 0]

    @classmethod
    def lightgbm_text(cls, params, num_class):
        """The ``objective=`` line's value in LightGBM's model text (its
        ObjectiveFunction::ToString), or None where LightGBM writes no line."""
        return cls.name

    def check_labels(self, label, weight):
        """Local checks of this rank's labels (no communication)."""
        if label is None:
            raise ValueError("Training data has no label")
        self._check_label_values(label)

    def _check_label_values(self, label):
        """Refuse labels the loss is not defined for (any real number by default)."""

    def set_label_weights(self, label, weight, comm):
        """Global checks, and the class weights of objectives that have them.

        Sums are over every rank's rows, exact (dgbdt.exact_sum), so all ranks
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

    def _set_class_weights(self, label, comm):
        """``label_weights`` (weight of label <= 0, of label > 0): none by default."""

    def init_score(self, label, weight, comm):
        """The starting score of boost_from_average (one per class), from
        global statistics: the same on any number of ranks."""
        raise NotImplementedError

    def gradients(self, scores, label, weight, gradients, hessians):
        compute_gradients(
            self.code,
            scores,
            label,
            _EMPTY if weight is None else weight,
            self.alpha,
            self.sigmoid,
            self.label_weights,
            gradients,
            hessians,
        )

    def transform(self, raw):
        """Raw scores (n, K) -> predictions: (n,) or (n, K)."""
        return self.output(raw, self.params)


@OBJECTIVES.add
class Regression(Objective):
    """L2 loss; starts from the weighted mean of the labels."""

    name = "regression"
    aliases = (
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

    def init_score(self, label, weight, comm):
        ww = np.ones_like(label) if weight is None else weight
        s_wy, s_w = global_exact_sums(comm, [ww * label, ww])
        return np.array([s_wy / s_w])


@OBJECTIVES.add
class RegressionL1(Objective):
    """L1 loss.  Its starting score and, after each tree, every leaf's value
    are the weighted ``quantile`` (the median) of the residuals, as in
    LightGBM; a quantile-like objective changes ``quantile``."""

    name = "regression_l1"
    aliases = ("l1", "mean_absolute_error", "mae")
    code = common.OBJ_REGRESSION_L1
    default_metric = "l1"
    renews_leaves = True
    quantile = 0.5

    def _all_weights(self, weight, comm, rows=slice(None)):
        """Every rank's weights of ``rows`` (gathered), or None when all weights are 1."""
        if self.unit_weights:
            return None
        return comm.concat(weight[rows])

    def init_score(self, label, weight, comm):
        all_label = comm.concat(label)
        all_weight = self._all_weights(weight, comm)
        return np.array([weighted_quantile(all_label, all_weight, self.quantile)])

    def renew_leaf_values(self, tree, grower, label, scores, weight, comm):
        """A leaf's value becomes the weighted quantile of its residuals over
        every rank's rows (gathered: one residual per row per tree); the rows
        of leaf ``k`` are ``grower``'s sample_indices from leaf_begin[k] on."""
        n_leaves, begin, count = tree.n_leaves, grower.leaf_begin, grower.leaf_count
        leaf_of = np.repeat(np.arange(n_leaves), count[:n_leaves])
        rows = np.concatenate(
            [grower.sample_indices[begin[k] : begin[k] + count[k]] for k in range(n_leaves)]
        )
        leaf_of = comm.concat(leaf_of, np.int64)
        residual = comm.concat(label[rows] - scores[rows])
        w = self._all_weights(weight, comm, rows)
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


@OBJECTIVES.add
class Binary(Objective):
    """Log loss of ``sigmoid(sigmoid_param * score)``; the positive class is label > 0."""

    name = "binary"
    code = common.OBJ_BINARY
    default_metric = "binary_logloss"

    def __init__(self, cfg):
        super().__init__(cfg)
        self._scale_pos_weight = cfg["scale_pos_weight"]
        self._is_unbalance = cfg["is_unbalance"]

    @classmethod
    def output(cls, raw, params):
        sigmoid = params.get("sigmoid", 1.0)
        return 1.0 / (1.0 + np.exp(-sigmoid * raw[:, 0]))

    @classmethod
    def lightgbm_text(cls, params, num_class):
        return f"binary sigmoid:{short_number(params.get('sigmoid', 1.0))}"

    def _check_label_values(self, label):
        # LightGBM's positive class is label > 0 (binary_objective.hpp), so 0/1 and
        # -1/+1 give one model.  It takes any other value too (0.3 or 2 is silently
        # positive, {1, 2} one class); those are refused here: almost always the
        # wrong objective or an unmapped class.
        i = _first(~np.isin(label, (-1.0, 0.0, 1.0)))
        if i is not None:
            raise ValueError(
                f"objective='binary' needs labels 0 or 1 (or -1 and +1); row {i} "
                f"has label {label[i]}"
            )

    def _set_class_weights(self, label, comm):
        # is_unbalance weighs the classes by their row counts, as LightGBM
        # (not by their weight sums)
        pos, neg = global_exact_sums(
            comm, [np.ones(int(np.sum(label > 0))), np.ones(int(np.sum(label <= 0)))]
        )
        if self._is_unbalance and pos > 0 and neg > 0:
            self.label_weights = (
                np.array([pos / neg, 1.0]) if pos > neg else np.array([1.0, neg / pos])
            )
        else:
            self.label_weights = np.array([1.0, self._scale_pos_weight])

    def init_score(self, label, weight, comm):
        # the log-odds of the weighted share of positives; is_unbalance /
        # scale_pos_weight do not enter it (LightGBM's BoostFromScore)
        ww = np.ones_like(label) if weight is None else weight
        pos, neg = global_exact_sums(comm, [ww[label > 0], ww[label <= 0]])
        p = np.clip(pos / (pos + neg), 1e-15, 1 - 1e-15)
        return np.array([np.log(p / (1 - p)) / self.sigmoid])


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
    def output(cls, raw, params):
        return softmax(raw)

    @classmethod
    def lightgbm_text(cls, params, num_class):
        return f"multiclass num_class:{num_class}"

    def _check_label_values(self, label):
        k = self.num_class
        i = _first((label < 0) | (label >= k) | (label != np.floor(label)))
        if i is not None:
            raise ValueError(
                f"objective='multiclass' with num_class={k} needs integer "
                f"labels in [0, {k - 1}]; row {i} has label {label[i]}"
            )

    def init_score(self, label, weight, comm):
        # the log of the (weighted) class priors
        ww = np.ones_like(label) if weight is None else weight
        counts = np.array(global_exact_sums(comm, [ww[label == k] for k in range(self.num_class)]))
        return np.log(np.maximum(counts / counts.sum(), 1e-15))


class CustomObjective(Objective):
    """The objective of a model trained with a callable objective: it only
    loads and predicts (raw scores, any number of them per row).  Not in
    ``OBJECTIVES``: ``train`` takes the callable itself."""

    name = "custom"
    max_num_class = None

    @classmethod
    def output(cls, raw, params):
        return raw if raw.shape[1] > 1 else raw[:, 0]

    @classmethod
    def lightgbm_text(cls, params, num_class):
        return None  # LightGBM writes no objective for a callable one


def make_objective(cfg):
    """The objective of resolved params ``cfg``; None for a callable (custom) one."""
    if callable(cfg["objective"]):
        return None
    return OBJECTIVES.entries[cfg["objective"]](cfg)


def model_objective_names():
    """The objectives a model file may name, sorted."""
    return sorted([*OBJECTIVES.entries, CustomObjective.name])


def model_objective(name):
    """The class of a model's objective (a name from :func:`model_objective_names`)."""
    return CustomObjective if name == CustomObjective.name else OBJECTIVES.entries[name]
