"""dgbdt.datasets: synthetic generators and the shared example loader."""

import numpy as np
import pytest
from dgbdt.datasets import (
    DISCRETE_FEATURES,
    find_shared_datasets,
    load_lightgbm_example,
    make_higgs_like,
    make_multiclass_like,
    make_regression_like,
)

GENERATORS = [make_higgs_like, make_regression_like, make_multiclass_like]


@pytest.mark.parametrize("make", GENERATORS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_shapes_and_dtypes(make, dtype):
    X, y = make(1000, dtype=dtype)
    assert X.shape == (1000, 28) and X.dtype == dtype and X.flags["C_CONTIGUOUS"]
    assert y.shape == (1000,) and y.dtype == np.float64
    assert np.isfinite(X).all() and np.isfinite(y).all()


@pytest.mark.parametrize("make", GENERATORS)
def test_deterministic_and_seed_dependent(make):
    X1, y1 = make(2000, seed=7)
    X2, y2 = make(2000, seed=7)
    X3, _ = make(2000, seed=8)
    np.testing.assert_array_equal(X1, X2)
    np.testing.assert_array_equal(y1, y2)
    assert not np.array_equal(X1, X3)


@pytest.mark.parametrize("make", GENERATORS)
def test_prefix_and_n_features_stable(make):
    # Chunks have their own streams: more rows or more columns never change
    # the rows and columns already there.
    n = 40_000  # crosses a chunk boundary
    X_small, y_small = make(n, seed=3)
    X_big, y_big = make(n + 5000, n_features=31, seed=3)
    np.testing.assert_array_equal(X_big[:n, :28], X_small)
    np.testing.assert_array_equal(y_big[:n], y_small)
    X_few, y_few = make(n, n_features=5, seed=3)
    np.testing.assert_array_equal(X_few, X_small[:, :5])
    np.testing.assert_array_equal(y_few, y_small)


def test_higgs_like_labels_and_discrete_columns():
    X, y = make_higgs_like(50_000)
    assert set(np.unique(y)) == {0.0, 1.0}
    assert 0.45 < y.mean() < 0.55
    for j in DISCRETE_FEATURES:
        values = np.unique(X[:, j])
        assert len(values) == 3
        assert 0.4 < np.mean(X[:, j] == 0) < 0.65
    assert (X[:, 21:] >= 0).all()  # masses


def test_higgs_like_is_learnable_but_noisy():
    from sklearn.metrics import roc_auc_score
    from sklearn.tree import DecisionTreeClassifier

    X, y = make_higgs_like(30_000, seed=1)
    tree = DecisionTreeClassifier(max_leaf_nodes=63, min_samples_leaf=20, random_state=0)
    tree.fit(X[:20_000], y[:20_000])
    auc = roc_auc_score(y[20_000:], tree.predict_proba(X[20_000:])[:, 1])
    assert 0.7 < auc < 0.95


def test_multiclass_labels_balanced():
    for n_classes in (3, 5):
        _, y = make_multiclass_like(30_000, n_classes=n_classes)
        counts = np.bincount(y.astype(np.int64), minlength=n_classes)
        assert len(counts) == n_classes
        assert (np.abs(counts / len(y) - 1.0 / n_classes) < 0.03).all()
        np.testing.assert_array_equal(y, np.round(y))


def test_regression_target():
    _, y = make_regression_like(20_000)
    assert abs(y.mean()) < 0.2 and 2.5 < y.std() < 3.6


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"n_samples": -1}, "n_samples"),
        ({"n_samples": 10, "n_features": 0}, "n_features"),
        ({"n_samples": 10, "seed": -3}, "seed"),
    ],
)
def test_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_higgs_like(**kwargs)


def test_bad_dtype_and_classes():
    with pytest.raises(TypeError, match="dtype"):
        make_higgs_like(10, dtype=np.int32)
    with pytest.raises(ValueError, match="n_classes"):
        make_multiclass_like(10, n_classes=1)


def test_zero_rows():
    X, y = make_higgs_like(0)
    assert X.shape == (0, 28) and y.shape == (0,)


def test_loader_rejects_unknown_name(tmp_path):
    with pytest.raises(ValueError, match="name"):
        load_lightgbm_example("rank", root=tmp_path)
    with pytest.raises(FileNotFoundError, match="binary.train"):
        load_lightgbm_example("binary", root=tmp_path)


SHARED = find_shared_datasets()
needs_shared = pytest.mark.skipif(SHARED is None, reason="shared/datasets not beside this checkout")


@needs_shared
@pytest.mark.parametrize(
    "name, n_classes, has_weight, has_init",
    [
        ("binary", 2, True, False),
        ("regression", None, False, True),
        ("multiclass", 5, False, False),
    ],
)
def test_load_lightgbm_example(name, n_classes, has_weight, has_init):
    d = load_lightgbm_example(name)
    assert d["X_train"].shape == (7000, 28) and d["X_test"].shape == (500, 28)
    assert d["y_train"].shape == (7000,) and d["y_test"].shape == (500,)
    assert d["X_train"].dtype == np.float64
    if n_classes is not None:
        assert set(np.unique(d["y_train"])) == set(range(n_classes))
    assert ("weight_train" in d) == has_weight and ("weight_test" in d) == has_weight
    assert ("init_score_train" in d) == has_init
    if has_weight:
        assert d["weight_train"].shape == (7000,) and d["weight_test"].shape == (500,)
    # The same folder passed explicitly, at either level, loads the same data.
    d2 = load_lightgbm_example(name, root=SHARED / "lightgbm")
    np.testing.assert_array_equal(d2["X_test"], d["X_test"])
