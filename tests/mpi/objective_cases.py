"""The objectives the distributed tests train, with labels each can take
(shared by tests/mpi/train_objectives.py and tests/test_distributed_objectives.py)."""

import numpy as np
from shard_data import make_data

#: name -> params (the objective and its own settings)
CASES = {
    "quantile": {"objective": "quantile", "alpha": 0.8},
    "mape": {"objective": "mape"},
    "fair": {"objective": "fair", "fair_c": 0.5},
    "poisson": {"objective": "poisson"},
    "gamma": {"objective": "gamma"},
    "tweedie": {"objective": "tweedie"},
    "cross_entropy": {"objective": "cross_entropy"},
    "cross_entropy_lambda": {"objective": "cross_entropy_lambda"},
    "multiclassova": {"objective": "multiclassova", "num_class": 3},
    "regression_sqrt": {"objective": "regression", "reg_sqrt": True},
    "regression_l1": {"objective": "regression_l1"},
    "huber": {"objective": "huber"},
}


def _labels(name, X, y):
    z = np.nan_to_num(X[:, 0]) + 0.5 * np.nan_to_num(X[:, 1]) + 0.5 * y
    if name in ("poisson", "gamma", "tweedie", "mape", "regression_sqrt"):
        return np.exp(0.5 * z)
    if name in ("cross_entropy", "cross_entropy_lambda"):
        return 1.0 / (1.0 + np.exp(-z))
    if name == "multiclassova":
        return np.digitize(z, np.quantile(z, [0.33, 0.66])).astype(np.float64)
    return z


def case_data(name, n=1500, n_valid=500):
    """(X, y, weight, X_valid, y_valid): float32-representable labels and weights."""
    X, y, Xv, yv = make_data(n, n_valid)
    label = _labels(name, X, y).astype(np.float32).astype(np.float64)
    valid = _labels(name, Xv, yv).astype(np.float32).astype(np.float64)
    w = np.random.default_rng(3).uniform(0.5, 2.0, n).astype(np.float32).astype(np.float64)
    return X, label, w, Xv, valid


def case_params(name, quantized):
    params = {
        **CASES[name],
        "num_leaves": 7,
        "learning_rate": 0.2,
        "min_data_in_leaf": 20,
        "verbosity": -1,
        "bagging_fraction": 0.8,
        "bagging_freq": 1,
    }
    if quantized:
        params.update(use_quantized_grad=True, num_grad_quant_bins=8, quant_train_renew_leaf=True)
    return params
