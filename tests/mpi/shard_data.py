"""Data and row shards shared by the MPI rank scripts and the tests."""

import numpy as np
from dgbdt.datasets import make_higgs_like


def make_data(n=3000, n_valid=1000):
    X, y = make_higgs_like(n + n_valid, seed=5)
    X = X.astype(np.float64)
    X[::17, 3] = np.nan  # a feature with missing values
    return X[:n], y[:n], X[n:], y[n:]


def shard_bounds(n, k):
    """Unequal row shards; with k >= 3 one of them is empty."""
    fractions = {1: [1.0], 2: [0.3, 0.7], 3: [0.5, 0.0, 0.5], 4: [0.1, 0.4, 0.0, 0.5]}[k]
    cuts = np.concatenate([[0], np.round(np.cumsum(fractions) * n).astype(int)])
    cuts[-1] = n
    return [(int(cuts[r]), int(cuts[r + 1])) for r in range(k)]
