"""native.predict against a pure-Python tree walk."""

import numpy as np
import pytest
from dgbdt.native import common
from dgbdt.native.binning import map_to_bins
from dgbdt.native.predict import PREDICT_BLOCK, add_tree_binned, predict_leaf_index, predict_raw

import dgbdt
from dgbdt.models.tree import Tree

# (cat_boundaries, cat_threshold) of trees without categorical splits
NO_CATEGORIES = (np.zeros(1, np.int64), np.zeros(0, np.uint32))

# add_tree_binned's categories of trees without categorical splits
BINNED_NO_CATEGORIES = (
    np.zeros(1, np.int64),
    np.zeros(0, np.uint32),
    np.zeros(1, np.int64),
    np.zeros(0, np.int64),
)

SEEDS = [0, 1, 2]


# -- random trees over random bin boundaries -------------------------------------------


def random_bounds(rng, n_features, n_value_bins):
    return [
        np.append(
            np.sort(rng.choice(np.linspace(-2, 2, 401), n_value_bins - 1, replace=False)), np.inf
        )
        for _ in range(n_features)
    ]


def random_tree(rng, n_leaves, bounds, nan_bins):
    """A random tree built through Tree.split; thresholds are bin upper bounds."""
    tree = Tree(n_leaves)
    while tree.n_leaves < n_leaves:
        leaf = int(rng.integers(0, tree.n_leaves))
        f = int(rng.integers(0, len(bounds)))
        tb = int(rng.integers(0, len(bounds[f]) - 1)) if len(bounds[f]) > 1 else 0
        if nan_bins[f] >= 0:
            default_left = bool(rng.integers(0, 2))
        else:
            default_left = bool(0.0 <= bounds[f][tb])  # NaN goes where 0.0 goes (grower's rule)
        tree.split(
            leaf,
            feature=f,
            threshold_bin=tb,
            threshold=bounds[f][tb],
            default_left=default_left,
            gain=1.0,
            parent=(0.0, 1.0, 1.0),
            left=(rng.normal(), 1.0, 1.0),
            right=(rng.normal(), 1.0, 1.0),
        )
    tree.leaf_value[: tree.n_leaves] = rng.normal(size=tree.n_leaves)
    return tree.finish()


def walk(tree, x_row, binned_row=None, nan_bins=None):
    """Leaf index reached by one row (raw values, or bins when binned_row is given)."""
    if tree.n_leaves == 1:
        return 0
    node = 0
    while node >= 0:
        f = tree.split_feature[node]
        if binned_row is None:
            if np.isnan(x_row[f]):
                left = bool(tree.default_left[node])
            else:
                left = x_row[f] <= tree.threshold[node]
        else:
            b = binned_row[f]
            left = (
                bool(tree.default_left[node]) if b == nan_bins[f] else b <= tree.threshold_bin[node]
            )
        node = tree.left_child[node] if left else tree.right_child[node]
    return ~node


def flatten(trees):
    def cat(name, dtype):
        return np.ascontiguousarray(np.concatenate([getattr(t, name) for t in trees]), dtype=dtype)

    flat = {
        "node_offsets": np.concatenate([[0], np.cumsum([t.n_leaves - 1 for t in trees])]).astype(
            np.int64
        ),
        "leaf_offsets": np.concatenate([[0], np.cumsum([t.n_leaves for t in trees])]).astype(
            np.int64
        ),
        "split_feature": cat("split_feature", common.FEATURE_INDEX_DTYPE),
        "threshold": cat("threshold", np.float64),
        "default_left": cat("default_left", np.uint8),
        "left_child": cat("left_child", common.NODE_INDEX_DTYPE),
        "right_child": cat("right_child", common.NODE_INDEX_DTYPE),
        "leaf_value": cat("leaf_value", common.SCORE_DTYPE),
    }
    flat["children"] = np.stack([flat["left_child"], flat["right_child"]], axis=1)
    return flat


def make_case(rng, n_value_bins, with_nan, n_samples=2 * PREDICT_BLOCK + 37, n_features=4):
    bounds = random_bounds(rng, n_features, n_value_bins)
    nan_bins = np.array(
        [n_value_bins if (with_nan and f % 2 == 0) else -1 for f in range(n_features)], np.int32
    )
    X = rng.normal(scale=1.5, size=(n_samples, n_features))
    X[rng.random(X.shape) < 0.1] = 0.0
    for f in range(n_features):  # exactly on a threshold
        on_bound = rng.random(n_samples) < 0.1
        X[on_bound, f] = rng.choice(bounds[f][:-1], size=on_bound.sum())
    if with_nan:
        X[rng.random(X.shape) < 0.15] = np.nan
    binned = np.empty((n_features, n_samples), common.bin_dtype_for(n_value_bins + 1))
    for f in range(n_features):
        map_to_bins(np.ascontiguousarray(X[:, f]), bounds[f], int(nan_bins[f]), binned[f])
    return bounds, nan_bins, X, binned


@pytest.mark.parametrize("n_value_bins", [3, 32, 255, 300])
@pytest.mark.parametrize("with_nan", [False, True])
@pytest.mark.parametrize("seed", SEEDS)
def test_predict_kernels_match_tree_walk(n_value_bins, with_nan, seed):
    rng = np.random.default_rng(seed)
    bounds, nan_bins, X, binned = make_case(rng, n_value_bins, with_nan)
    n_classes = 3
    trees = [random_tree(rng, int(rng.integers(1, 9)), bounds, nan_bins) for _ in range(7)]
    trees[1] = random_tree(rng, 1, bounds, nan_bins)  # a single-leaf tree
    flat = flatten(trees)
    n = X.shape[0]

    leaves = np.array([[walk(t, X[i]) for t in trees] for i in range(n)], dtype=np.int64)
    leaves_binned = np.array(
        [[walk(t, X[i], binned[:, i], nan_bins) for t in trees] for i in range(n)], dtype=np.int64
    )
    # Binned and raw walks agree (bin <= tb  <=>  x <= upper_bounds[tb]).
    np.testing.assert_array_equal(leaves, leaves_binned)

    for n_trees in (len(trees), 4, 0):
        out = np.zeros((n, n_trees), np.int32)
        predict_leaf_index(
            X,
            flat["node_offsets"][: n_trees + 1],
            flat["split_feature"],
            flat["threshold"],
            flat["default_left"],
            flat["children"],
            *NO_CATEGORIES,
            n_trees,
            out,
        )
        np.testing.assert_array_equal(out, leaves[:, :n_trees])

        start = rng.normal(size=(n, n_classes))
        out = start.copy()
        predict_raw(
            X,
            flat["node_offsets"],
            flat["leaf_offsets"],
            flat["split_feature"],
            flat["threshold"],
            flat["default_left"],
            flat["children"],
            *NO_CATEGORIES,
            flat["leaf_value"],
            n_trees,
            n_classes,
            out,
        )
        expected = start.copy()
        for t in range(n_trees):
            expected[:, t % n_classes] += trees[t].leaf_value[leaves[:, t]]
        np.testing.assert_allclose(out, expected, rtol=1e-14, atol=1e-14)

    for t, tree in enumerate(trees):
        scores = rng.normal(size=n)
        expected = scores + tree.leaf_value[leaves[:, t]]
        add_tree_binned(
            binned,
            nan_bins,
            tree.split_feature,
            tree.threshold_bin,
            tree.default_left,
            tree.left_child,
            tree.right_child,
            tree.leaf_value,
            scores,
            BINNED_NO_CATEGORIES,
        )
        np.testing.assert_array_equal(scores, expected)


def test_nan_follows_default_left():
    # One feature with upper bounds [0.5, inf] and a NaN bin: bin 0 is x <= 0.5,
    # bin 1 is x > 0.5, bin 2 is NaN.
    nan_bins = np.array([2], np.int32)
    X = np.array([[np.nan], [0.0], [1.0]])
    binned = np.array([[2, 0, 1]], common.BIN_DTYPE_SMALL)
    for default_left, nan_leaf in ((True, 0), (False, 1)):
        tree = Tree(2)
        tree.split(
            0,
            feature=0,
            threshold_bin=0,
            threshold=0.5,
            default_left=default_left,
            gain=1.0,
            parent=(0.0, 1.0, 3.0),
            left=(-1.0, 1.0, 1.0),
            right=(1.0, 1.0, 1.0),
        )
        tree.finish()
        flat = flatten([tree])
        out = np.zeros((3, 1), np.int32)
        predict_leaf_index(
            X,
            flat["node_offsets"],
            flat["split_feature"],
            flat["threshold"],
            flat["default_left"],
            flat["children"],
            *NO_CATEGORIES,
            1,
            out,
        )
        assert list(out[:, 0]) == [nan_leaf, 0, 1]
        scores = np.zeros(3)
        add_tree_binned(
            binned,
            nan_bins,
            tree.split_feature,
            tree.threshold_bin,
            tree.default_left,
            tree.left_child,
            tree.right_child,
            tree.leaf_value,
            scores,
            BINNED_NO_CATEGORIES,
        )
        np.testing.assert_array_equal(scores, tree.leaf_value[[nan_leaf, 0, 1]])


# -- trained models: predicting raw data equals walking the binned data ----------------------


@pytest.mark.parametrize(
    "objective, num_class, max_bin",
    [
        ("regression", 1, 32),
        ("binary", 1, 255),
        ("multiclass", 3, 300),
        ("regression", 1, 3),
    ],
)
@pytest.mark.parametrize("with_nan", [False, True])
@pytest.mark.parametrize("layout", ["force_row_wise", "force_col_wise"])
def test_trained_model_binned_equals_raw(objective, num_class, max_bin, with_nan, layout):
    rng = np.random.default_rng(11)
    n = 600
    X = rng.normal(size=(n, 5))
    X[:, 3] = np.round(X[:, 3])  # a few distinct values
    if with_nan:
        X[rng.random(X.shape) < 0.1] = np.nan
    score = np.nan_to_num(X[:, 0] + X[:, 1] * X[:, 2], nan=1.0)
    if objective == "regression":
        y = score
    elif objective == "binary":
        y = (score > 0).astype(float)
    else:
        y = np.digitize(score, [-0.5, 0.5]).astype(float)
    params = {
        "objective": objective,
        "num_leaves": 15,
        "min_data_in_leaf": 5,
        "max_bin": max_bin,
        "min_data_in_bin": 1,
        "verbosity": -1,
        layout: True,
    }
    if objective == "multiclass":
        params["num_class"] = num_class
    # A plain store: the binned (n_samples, n_features) matrix the kernel reads.
    ds = dgbdt.Dataset(X, label=y, params={"enable_bundle": False, "is_enable_sparse": False})
    booster = dgbdt.train(params, ds, num_boost_round=5)
    assert any(t.n_leaves > 1 for t in booster.trees)
    if max_bin > 255:
        assert ds.binned.dtype == common.BIN_DTYPE_LARGE
    nan_bins = ds.bin_mapper.nan_bins.astype(np.int32)
    # Dataset.binned is (n_samples, n_features) in C or F order; the kernel
    # takes (n_features, n_samples), as the engine passes it.
    binned_cols = ds.binned.T
    assert binned_cols.shape == (5, n)

    k = booster.num_tree_per_iteration
    binned_scores = np.tile(booster.init_score[:, None], (1, n))
    for i, tree in enumerate(booster.trees):
        add_tree_binned(
            binned_cols,
            nan_bins,
            tree.split_feature,
            tree.threshold_bin,
            tree.default_left,
            tree.left_child,
            tree.right_child,
            tree.leaf_value,
            binned_scores[i % k],
            BINNED_NO_CATEGORIES,
        )
    raw = booster.predict(X, raw_score=True)
    raw = raw.reshape(n, -1)
    np.testing.assert_allclose(raw, binned_scores.T, rtol=1e-12, atol=1e-12)

    leaves = booster.predict(X, pred_leaf=True)
    expected = np.array([[walk(t, X[i]) for t in booster.trees] for i in range(0, n, 7)])
    np.testing.assert_array_equal(leaves[::7], expected)
