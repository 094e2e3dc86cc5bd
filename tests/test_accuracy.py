"""Accuracy on the shared example data against LightGBM's reference figures.

The figures are LightGBM 4's on the same data and settings (printed beside
dgbdt's in each test); the data lives in ``shared/datasets`` beside the
checkout and is absent from a user's clone, so every test here skips without
it.
"""

import numpy as np
import pytest

import dgbdt

QUIET = {"verbosity": -1}


@pytest.fixture(scope="module")
def shared(shared_datasets):
    """``shared/datasets`` (the fixture from conftest.py skips when it is absent)."""
    return shared_datasets


def _table(path):
    if not path.exists():
        pytest.skip(f"{path} is missing")
    a = np.loadtxt(path, delimiter="\t", dtype=np.float64)
    return a[:, 1:], a[:, 0]


def _lightgbm_example(root, name):
    X_train, y_train = _table(root / "lightgbm" / f"{name}.train")
    X_test, y_test = _table(root / "lightgbm" / f"{name}.test")
    return X_train, y_train, X_test, y_test


def _auc(y, score):
    """Mann-Whitney AUC with tied scores counted half."""
    from scipy.stats import rankdata

    ranks = rankdata(score)
    pos = y == 1
    n_pos, n_neg = pos.sum(), (~pos).sum()
    return (ranks[pos].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)


def test_binary_auc(shared):
    X, y, Xt, yt = _lightgbm_example(shared, "binary")
    w = np.loadtxt(shared / "lightgbm" / "binary.train.weight")
    params = {
        **QUIET,
        "objective": "binary",
        "learning_rate": 0.1,
        "num_leaves": 63,
        "min_data_in_leaf": 50,
        "min_sum_hessian_in_leaf": 5,
        "max_bin": 255,
    }
    b = dgbdt.train(params, dgbdt.Dataset(X, y, weight=w), 100)
    p = b.predict(Xt)
    auc = _auc(yt, p)
    logloss = -np.mean(yt * np.log(p) + (1 - yt) * np.log(1 - p))
    print(f"\nbinary.test AUC {auc:.4f} (LightGBM 0.8284), logloss {logloss:.4f} (LightGBM 0.5094)")
    assert auc >= 0.825
    assert logloss <= 0.52


def test_regression_l2(shared):
    X, y, Xt, yt = _lightgbm_example(shared, "regression")
    params = {
        **QUIET,
        "objective": "regression",
        "learning_rate": 0.05,
        "num_leaves": 31,
        "min_data_in_leaf": 100,
    }
    b = dgbdt.train(params, dgbdt.Dataset(X, y), 100)
    l2 = float(np.mean((b.predict(Xt) - yt) ** 2))
    print(f"\nregression.test L2 {l2:.4f} (LightGBM 0.1697)")
    assert l2 <= 0.175


def test_multiclass_logloss(shared):
    X, y, Xt, yt = _lightgbm_example(shared, "multiclass")
    params = {
        **QUIET,
        "objective": "multiclass",
        "num_class": 5,
        "learning_rate": 0.05,
        "num_leaves": 31,
    }
    b = dgbdt.train(params, dgbdt.Dataset(X, y), 100)
    p = b.predict(Xt)
    logloss = float(-np.mean(np.log(p[np.arange(len(yt)), yt.astype(int)])))
    error = float(np.mean(p.argmax(axis=1) != yt))
    print(
        f"\nmulticlass.test multi_logloss {logloss:.4f} (LightGBM 1.234), "
        f"error {error:.3f} (LightGBM 0.510)"
    )
    assert logloss <= 1.26
    assert error <= 0.54


def test_agaricus_exact_errors(shared):
    from sklearn.datasets import load_svmlight_file

    train = shared / "xgboost" / "agaricus.txt.train"
    test = shared / "xgboost" / "agaricus.txt.test"
    if not (train.exists() and test.exists()):
        pytest.skip("agaricus files missing")
    # XGBoost's LibSVM files are 1-based (indices 1..126): zero_based=False maps
    # them onto columns 0..125 for both files, whatever indices each contains.
    X, y = load_svmlight_file(str(train), n_features=126, zero_based=False)
    Xt, yt = load_svmlight_file(str(test), n_features=126, zero_based=False)
    assert X.shape == (6513, 126) and Xt.shape == (1611, 126)
    params = {
        **QUIET,
        "objective": "binary",
        "max_depth": 2,
        "learning_rate": 1.0,
        "lambda_l2": 1.0,
        "min_sum_hessian_in_leaf": 1.0,
        "min_data_in_leaf": 0,
    }
    b = dgbdt.train(params, dgbdt.Dataset(X, y), 2)  # the sparse matrix itself
    train_error = round(float(np.mean((b.predict(X) > 0.5) != y)), 6)
    test_error = round(float(np.mean((b.predict(Xt) > 0.5) != yt)), 6)
    print(
        f"\nagaricus train error {train_error} test error {test_error} "
        "(LightGBM/XGBoost 0.022263 / 0.021726)"
    )
    assert train_error == 0.022263
    assert test_error == 0.021726
    # dense input gives the same predictions
    np.testing.assert_array_equal(b.predict(Xt.toarray()), b.predict(Xt))
