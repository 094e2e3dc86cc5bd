"""Sparse data shared by the sparse rank scripts and tests: one-hot blocks of
three categoricals (exclusive: EFB bundles them), two dense columns, rare
sparse columns, a column 80% at 5.0 (its most frequent bin is not the bin of
0.0) and one with NaN."""

import numpy as np
import scipy.sparse as sp


def make_sparse_data(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    cats = [rng.integers(0, k, n) for k in (5, 12, 30)]
    blocks = [np.eye(k)[c] * rng.random((n, 1)) for k, c in zip((5, 12, 30), cats, strict=True)]
    dense = rng.normal(size=(n, 2))
    rare = sp.random(n, 40, density=0.01, random_state=seed + 3).toarray()
    mostly_five = np.where(rng.random(n) < 0.8, 5.0, rng.random(n))
    with_nan = np.where(rng.random(n) < 0.1, np.nan, 0.0) + (rng.random(n) < 0.05)
    X = np.hstack(
        [dense[:, :1]] + blocks + [dense[:, 1:], rare, mostly_five[:, None], with_nan[:, None]]
    )
    y = (X[:, 0] + (cats[1] % 3 == 0) + X[:, 2] + 0.3 * rng.normal(size=n) > 0.8).astype(float)
    return sp.csr_matrix(X), y


def store_summary(store):
    """What must be the same on any number of ranks: bundles, kept features,
    each feature's place (dense column, group bins) and most frequent bin."""
    return {
        "bundles": store.bundles,
        "kept": store.kept.astype(int).tolist(),
        "feature_map": store.feature_map.tolist(),
        "most_freq_bins": store.most_freq_bins.tolist(),
        "feature_offsets": store.feature_offsets.tolist(),
    }
