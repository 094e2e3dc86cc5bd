"""Data and settings of the agreement tests with LightGBM on pre-binned data (see
tests/test_lightgbm_agreement.py for why such data gives both libraries the
same histograms): integer features of at most 50 values, LightGBM's own
switches, and the tree settings both share."""

import numpy as np

#: LightGBM only: one thread, deterministic sums, every row binned, no pre-filter
LGB_ONLY = {
    "verbosity": -1,
    "deterministic": True,
    "force_col_wise": True,
    "num_threads": 1,
    "feature_pre_filter": False,
    "seed": 0,
    "bin_construct_sample_cnt": 1_000_000,
}
#: both libraries: small leaves allowed, every distinct value its own bin
BASE = {
    "num_leaves": 15,
    "min_data_in_leaf": 1,
    "min_sum_hessian_in_leaf": 1e-3,
    "lambda_l2": 0.5,
    "max_bin": 255,
    "min_data_in_bin": 1,
}


def prebinned(objective, n=2000, n_features=6, nan_fraction=0.0, seed=0):
    rng = np.random.default_rng(seed)
    n_values = rng.integers(5, 51, size=n_features)
    X = np.column_stack([rng.integers(0, k, size=n) for k in n_values]).astype(np.float64)
    s = np.sin(X[:, 0] / 5) + 0.05 * X[:, 1] - 0.3 * (X[:, 2] % 3 == 0) + 0.001 * X[:, 3] * X[:, 4]
    if nan_fraction:
        missing = rng.random(X.shape) < nan_fraction
        X[missing] = np.nan
        s = s + 0.5 * missing[:, 1]
    if objective == "binary":
        y = (rng.random(n) < 1 / (1 + np.exp(-3 * (s - s.mean())))).astype(np.float64)
    elif objective == "multiclass":
        y = np.digitize(s + 0.2 * rng.normal(size=n), np.quantile(s, [0.33, 0.66]))
        y = y.astype(np.float64)
    else:
        # float32-representable: LightGBM keeps labels as float32
        y = (s + 0.3 * rng.normal(size=n)).astype(np.float32).astype(np.float64)
    return X, y
