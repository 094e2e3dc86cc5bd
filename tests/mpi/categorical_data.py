"""Data with categorical columns for the categorical tests and their rank
scripts: column 0 has 3 categories (one-vs-rest), column 2 has 40 (many-vs-
many, some rare), both with missing values; columns 1 and 3 are numeric."""

import numpy as np

CATEGORICAL = [0, 2]


def make_categorical_data(n=4000, seed=0):
    rng = np.random.default_rng(seed)
    small = rng.integers(0, 3, n).astype(np.float64)
    large = np.minimum(rng.zipf(1.3, n) - 1, 39).astype(np.float64)
    x1, x3 = rng.normal(size=n), rng.normal(size=n)
    effect = rng.normal(size=40)
    logit = effect[large.astype(int)] + (small == 1) * 1.2 + 0.8 * x1
    y = (logit + rng.logistic(size=n) * 0.5 > 0).astype(np.float64)
    small[rng.random(n) < 0.03] = np.nan
    large[rng.random(n) < 0.03] = -1  # negative: missing, as NaN
    return np.column_stack([small, x1, large, x3]), y


def as_frame(X, order_seed=None):
    """X as a DataFrame whose categorical columns are pandas categories named
    'c<code>', listed in a shuffled order when ``order_seed`` is given."""
    import pandas as pd

    df = pd.DataFrame({f"f{j}": X[:, j] for j in range(X.shape[1])})
    for j in CATEGORICAL:
        codes = X[:, j]
        values = np.where(codes >= 0, codes, np.nan)
        names = np.array([None if np.isnan(v) else f"c{int(v)}" for v in values], dtype=object)
        cats = sorted({n for n in names if n is not None})
        if order_seed is not None:
            np.random.default_rng(order_seed).shuffle(cats)
        df[f"f{j}"] = pd.Categorical(names, categories=cats)
    return df
