"""Objectives: label checks, initial scores, gradients and output transforms.

Gradients come from the Numba kernel ``native.objective.compute_gradients``,
selected by an integer code.  A custom objective is a callable
``fobj(preds, train_data) -> (grad, hess)`` as in LightGBM.
"""

import numpy as np

from .exact_sum import global_exact_sums
from .native import common
from .native.objective import compute_gradients

_CODES = {
    "regression": common.OBJ_REGRESSION,
    "regression_l1": common.OBJ_REGRESSION_L1,
    "huber": common.OBJ_HUBER,
    "binary": common.OBJ_BINARY,
    "multiclass": common.OBJ_MULTICLASS,
}
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


def softmax(raw):
    z = raw - raw.max(axis=1, keepdims=True)
    np.exp(z, out=z)
    z /= z.sum(axis=1, keepdims=True)
    return z


class Objective:
    """A built-in objective.

    ``num_model_per_iteration`` trees are grown per boosting round (K classes
    for multiclass, otherwise one).
    """

    def __init__(self, cfg):
        self.name = cfg["objective"]
        self.code = _CODES[self.name]
        self.num_class = cfg["num_class"]
        self.num_model_per_iteration = self.num_class if self.name == "multiclass" else 1
        self.alpha = cfg["alpha"]
        self.sigmoid = cfg["sigmoid"]
        self.label_weights = np.ones(2)
        self.unit_weights = True  # no weights, or all 1 (set_label_weights decides)
        self._scale_pos_weight = cfg["scale_pos_weight"]
        self._is_unbalance = cfg["is_unbalance"]
        self.renews_leaves = self.name == "regression_l1"

    def check_labels(self, label, weight):
        """Local checks of this rank's labels (no communication)."""
        if label is None:
            raise ValueError("Training data has no label")
        if self.name == "binary":
            # LightGBM's positive class is label > 0 (binary_objective.hpp), so 0/1 and
            # -1/+1 give one model.  It takes any other value too (0.3 or 2 is silently
            # positive, {1, 2} one class); those are refused here: almost always the
            # wrong objective or an unmapped class.
            bad = ~np.isin(label, (-1.0, 0.0, 1.0))
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                raise ValueError(
                    f"objective='binary' needs labels 0 or 1 (or -1 and +1); row {i} "
                    f"has label {label[i]}"
                )
        elif self.name == "multiclass":
            bad = (label < 0) | (label >= self.num_class) | (label != np.floor(label))
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                raise ValueError(
                    f"objective='multiclass' with num_class={self.num_class} needs integer "
                    f"labels in [0, {self.num_class - 1}]; row {i} has label {label[i]}"
                )

    def set_label_weights(self, label, weight, comm):
        """Global checks and the binary label weights (is_unbalance, scale_pos_weight).

        Sums are over every rank's rows, exact (dgbdt.exact_sum), so all ranks
        agree and get the same values whatever the number of ranks.
        """
        ww = np.ones_like(label) if weight is None else weight
        # LightGBM drops weights that are all 1 (its weighted median differs)
        mine = np.array([weight is None or bool(np.all(weight == 1.0))], np.int64)
        self.unit_weights = bool(comm.allreduce(mine, op="min")[0])
        rows, pos_w, neg_w = global_exact_sums(
            comm, [np.ones(len(label)), ww[label > 0], ww[label <= 0]]
        )
        if rows == 0:
            raise ValueError("The training data has no rows")
        if not pos_w + neg_w > 0:
            raise ValueError(
                "The sample weights sum to zero: at least one row needs a positive weight"
            )
        if self.name == "binary":
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
        """The starting score of boost_from_average, as LightGBM's BoostFromScore:
        the weighted mean (L2, huber), median (L1), log-odds of the weighted
        positive share (binary; class weights left out) or log class priors,
        from exact global sums (and a global weighted median for L1): the same
        on any number of ranks."""
        ww = np.ones_like(label) if weight is None else weight
        if self.name in ("regression", "huber"):
            s_wy, s_w = global_exact_sums(comm, [ww * label, ww])
            return np.array([s_wy / s_w])
        if self.name == "regression_l1":
            all_label, _ = comm.allgatherv(np.asarray(label, np.float64))
            all_weight = (
                None if self.unit_weights else comm.allgatherv(np.asarray(weight, np.float64))[0]
            )
            return np.array([weighted_quantile(all_label, all_weight, 0.5)])
        if self.name == "binary":
            # the weighted share of positives; is_unbalance / scale_pos_weight do
            # not enter it (LightGBM's BoostFromScore)
            pos, neg = global_exact_sums(comm, [ww[label > 0], ww[label <= 0]])
            p = np.clip(pos / (pos + neg), 1e-15, 1 - 1e-15)
            return np.array([np.log(p / (1 - p)) / self.sigmoid])
        # multiclass: log of the class priors
        counts = np.array(global_exact_sums(comm, [ww[label == k] for k in range(self.num_class)]))
        return np.log(np.maximum(counts / counts.sum(), 1e-15))

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
        return transform_by_name(self.name, raw, self.sigmoid)

    def renew_leaf_values(
        self, tree, sample_indices, leaf_begin, leaf_count, label, scores, weight, comm
    ):
        """L1: a leaf's value becomes the weighted median of its residuals over
        every rank's rows (gathered: one residual per row per tree)."""
        n_leaves = tree.n_leaves
        leaf_of = np.repeat(np.arange(n_leaves), leaf_count[:n_leaves])
        rows = np.concatenate(
            [sample_indices[leaf_begin[k] : leaf_begin[k] + leaf_count[k]] for k in range(n_leaves)]
        )
        leaf_of, _ = comm.allgatherv(leaf_of.astype(np.int64))
        residual, _ = comm.allgatherv(label[rows] - scores[rows])
        w = None if self.unit_weights else comm.allgatherv(np.asarray(weight[rows], np.float64))[0]
        order = np.argsort(leaf_of, kind="stable")
        bounds = np.searchsorted(leaf_of[order], np.arange(n_leaves + 1))
        for leaf in range(n_leaves):
            sel = order[bounds[leaf] : bounds[leaf + 1]]
            if len(sel):
                tree.leaf_value[leaf] = weighted_quantile(
                    residual[sel], None if w is None else w[sel], 0.5
                )


def transform_by_name(name, raw, sigmoid=1.0):
    """Transform raw scores of a loaded model (objective given by name)."""
    if name == "binary":
        return 1.0 / (1.0 + np.exp(-sigmoid * raw[:, 0]))
    if name == "multiclass":
        return softmax(raw)
    if name == "custom":
        return raw if raw.shape[1] > 1 else raw[:, 0]
    return raw[:, 0]
