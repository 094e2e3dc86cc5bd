"""Monotone and interaction constraints, path_smooth, extra_trees and
feature_fraction_bynode: against LightGBM 4.7 on pre-binned data (the same
trees: see tests/test_lightgbm_agreement.py), and against their definitions
where LightGBM's random draws cannot be matched."""

import sys

import numpy as np
import pytest
from dgbdt.native.predict import CATEGORICAL
from dgbdt.native.random import uniform_fill
from mpi_launch import TESTS
from prebinned import BASE as _SHARED
from prebinned import LGB_ONLY, prebinned

import dgbdt
from dgbdt.streams import STREAM_BYNODE, STREAM_EXTRA_TREES, stream_key

sys.path.insert(0, str(TESTS / "mpi"))
from constraint_cases import SWEEP_MONO, sweep_data  # noqa: E402

BASE = {**_SHARED, "metric": "None"}


MONO = [1, -1, 0, 1, 0, -1]
LIGHTGBM_CASES = [
    {"path_smooth": 5.0},
    {"path_smooth": 50.0, "lambda_l1": 0.3, "max_delta_step": 0.8},
    {"monotone_constraints": MONO},
    {"monotone_constraints": MONO, "monotone_constraints_method": "intermediate"},
    {"monotone_constraints": [1, 1, 1, -1, -1, 1], "monotone_constraints_method": "intermediate"},
    {"monotone_constraints": MONO, "monotone_penalty": 1.5},
    {"monotone_constraints": MONO, "monotone_penalty": 0.5, "path_smooth": 3.0},
    {"monotone_constraints": [0] * 6},  # all free: LightGBM still takes its constrained path
    {"interaction_constraints": [[0, 1], [1, 2, 3], [4]]},
    {"interaction_constraints": "[0,5],[2,3]"},
    {"interaction_constraints": [[0, 1, 2, 3, 4, 5]], "monotone_constraints": MONO},
]


@pytest.mark.parametrize("extra", LIGHTGBM_CASES, ids=[str(c) for c in LIGHTGBM_CASES])
@pytest.mark.parametrize("objective", ["regression", "binary"])
@pytest.mark.parametrize("rounds, learning_rate", [(1, 1.0), (5, 0.1)])
def test_equal_to_lightgbm(extra, objective, rounds, learning_rate):
    lgb = pytest.importorskip("lightgbm")
    X, y = prebinned(objective)
    params = {**BASE, **extra, "objective": objective, "learning_rate": learning_rate}
    lgb_params = {**params, **LGB_ONLY}
    theirs = lgb.train(lgb_params, lgb.Dataset(X, y, params=lgb_params), rounds)
    ours = dgbdt.train({**params, "verbosity": -1}, dgbdt.Dataset(X, y), rounds)
    leaves = [t["num_leaves"] for t in theirs.dump_model()["tree_info"]]
    assert [t["num_leaves"] for t in ours.dump_model(format="json")["trees"]] == leaves
    rng = np.random.default_rng(1)
    shuffled = np.column_stack([rng.permutation(c) for c in X.T])
    for rows in (X, shuffled):
        a, b = theirs.predict(rows, raw_score=True), ours.predict(rows, raw_score=True)
        assert np.max(np.abs(a - b) / np.maximum(np.abs(a), 1.0)) <= 1e-6
    assert np.ptp(ours.predict(X, raw_score=True)) > 0.05


def test_intermediate_differs_from_basic_and_fits_better():
    X, y = _sweep_data()
    fits = {}
    for method in ("basic", "intermediate"):
        model = _train_monotone(X, y, {"monotone_constraints_method": method})
        fits[method] = np.mean((model.predict(X) - y) ** 2)
    assert fits["intermediate"] < fits["basic"]


# -- monotonicity --------------------------------------------------------------------
_sweep_data = sweep_data


def _train_monotone(X, y, extra):
    params = {
        "objective": "regression",
        "num_leaves": 31,
        "learning_rate": 0.1,
        "monotone_constraints": SWEEP_MONO,
        "verbosity": -1,
        **extra,
    }
    return dgbdt.train(params, dgbdt.Dataset(X, y), 30)


def monotone_violation(model, X, constraints, n_rows=1000, n_grid=61):
    """The largest step against its direction of any prediction along a grid
    sweep of each constrained feature, over ``n_rows`` rows (0 if none)."""
    worst = 0.0
    base = X[:n_rows]
    for f, direction in enumerate(constraints):
        if direction == 0:
            continue
        grid = np.linspace(X[:, f].min() - 0.5, X[:, f].max() + 0.5, n_grid)
        Z = np.repeat(base, n_grid, axis=0)
        Z[:, f] = np.tile(grid, len(base))
        steps = np.diff(model.predict(Z).reshape(len(base), n_grid), axis=1) * direction
        worst = max(worst, float(-steps.min()))
    return worst


@pytest.mark.parametrize(
    "extra",
    [
        {},
        {"monotone_constraints_method": "intermediate"},
        {"monotone_penalty": 2.0},
        {"path_smooth": 10.0, "lambda_l1": 1.0},
        {"use_quantized_grad": True},
        {"extra_trees": True},
        {"feature_fraction_bynode": 0.5, "bagging_fraction": 0.7, "bagging_freq": 1},
    ],
    ids=str,
)
def test_predictions_are_monotone_in_each_constrained_feature(extra):
    X, y = _sweep_data()
    model = _train_monotone(X, y, extra)
    assert monotone_violation(model, X, SWEEP_MONO) == 0.0
    free = _train_monotone(X, y, {**extra, "monotone_constraints": None})
    assert monotone_violation(free, X, SWEEP_MONO) > 0.0  # the data needs the constraint


def test_monotone_penalty_keeps_constrained_features_off_the_top():
    X, y = _sweep_data()
    model = _train_monotone(X, y, {"monotone_penalty": 2.0})
    # depth 0 and 1 (p >= depth + 1): a constrained split's gain is ~0
    for tree in model.trees:
        assert SWEEP_MONO[tree.split_feature[0]] == 0


# -- interaction constraints ---------------------------------------------------------
def _branches(tree):
    """The features on the path to every leaf (node -> features above it)."""
    out, stack = [], [(0, [])]
    while stack:
        node, path = stack.pop()
        features = [*path, int(tree.split_feature[node])]
        for child in (tree.left_child[node], tree.right_child[node]):
            if child < 0:
                out.append(features)
            else:
                stack.append((int(child), features))
    return out


@pytest.mark.parametrize(
    "groups", [[[0, 1], [1, 2, 3]], [["f0", "f5"], ["f2", "f3", "f4"]], [[6]]], ids=str
)
def test_every_branch_stays_within_one_interaction_set(groups):
    X, y = _sweep_data()
    names = [f"f{i}" for i in range(7)]
    ds = dgbdt.Dataset(X, y, feature_name=names)
    params = {"num_leaves": 31, "verbosity": -1, "interaction_constraints": groups}
    model = dgbdt.train(params, ds, 20)
    sets = [{names.index(i) if isinstance(i, str) else i for i in g} for g in groups]
    used = set()
    for tree in model.trees:
        if tree.n_leaves == 1:
            continue
        for branch in _branches(tree):
            used |= set(branch)
            assert any(set(branch) <= s for s in sets), branch
    assert used <= set().union(*sets)  # a feature in no set is never used
    assert len(used) > 1 or len(set().union(*sets)) == 1


# -- extra_trees and feature_fraction_bynode against their definitions -------------
def _split_leaf(tree, node):
    """(leaf, depth) the node split: its left subtree's leftmost leaf keeps the
    index; its depth is its number of ancestors."""
    child = node
    while child >= 0:
        child = int(tree.left_child[child])
    depth, k = 0, node
    while k != 0:
        k = next(
            p for p in range(tree.n_leaves - 1) if k in (tree.left_child[p], tree.right_child[p])
        )
        depth += 1
    return ~child, depth


def _draws(seed, stream, tree_index, node, n_features, num_leaves=15):
    """The draws of one node, keyed on (seed, tree, leaf, depth)."""
    leaf, depth = node
    out = np.empty(n_features)
    counter = (leaf + num_leaves * depth) * n_features
    uniform_fill(seed, stream_key(stream, tree_index), counter, out)
    return out


@pytest.mark.parametrize("quantized", [False, True])
def test_extra_trees_splits_at_the_drawn_threshold(quantized):
    X, y = _sweep_data(n=2000)
    params = {
        "num_leaves": 15,
        "verbosity": -1,
        "extra_trees": True,
        "extra_seed": 11,
        "seed": 3,
        "use_quantized_grad": quantized,
    }
    model = dgbdt.train(params, dgbdt.Dataset(X, y), 5)
    n_bins = [len(b) for b in model.bin_mapper.upper_bounds]  # the last is +inf; no NaN
    checked = 0
    for t, tree in enumerate(model.trees):
        for node in range(tree.n_leaves - 1):
            f = int(tree.split_feature[node])
            u = _draws(14, STREAM_EXTRA_TREES, t, _split_leaf(tree, node), 7)[f]
            assert tree.threshold_bin[node] == int(u * (n_bins[f] - 2))
            checked += 1
    assert checked > 30
    # every node draws afresh: a left child (same leaf index) does not reuse
    # its parent's thresholds, so one feature can split twice down a left chain
    chains = [
        [int(t.split_feature[k]) for k in range(t.n_leaves - 1) if _split_leaf(t, k)[0] == 0]
        for t in model.trees
    ]
    assert any(len(c) != len(set(c)) for c in chains)
    plain = dgbdt.train({**params, "extra_trees": False}, dgbdt.Dataset(X, y), 5)
    assert not np.array_equal(plain.predict(X), model.predict(X))


def test_feature_fraction_bynode_splits_on_the_drawn_features():
    X, y = _sweep_data(n=2000)
    params = {"num_leaves": 15, "verbosity": -1, "feature_fraction_bynode": 0.3, "seed": 1}
    model = dgbdt.train(params, dgbdt.Dataset(X, y), 5)
    n_used = int(7 * 0.3 + 0.5)  # LightGBM's GetCnt: 2 of 7
    used_on_left_chains = set()
    for t, tree in enumerate(model.trees):
        for node in range(tree.n_leaves - 1):
            where = _split_leaf(tree, node)
            draws = _draws(3, STREAM_BYNODE, t, where, 7)
            allowed = np.argsort(draws, kind="stable")[:n_used]
            assert tree.split_feature[node] in allowed
            if where[0] == 0:
                used_on_left_chains.add(int(tree.split_feature[node]))
    # nodes down the leftmost chain (leaf 0 at every depth) draw their own features
    assert len(used_on_left_chains) > n_used


def test_bynode_and_interactions_take_the_smaller_set():
    X, y = _sweep_data(n=2000)
    params = {
        "num_leaves": 15,
        "verbosity": -1,
        "feature_fraction_bynode": 0.9,
        "interaction_constraints": [[0, 1]],
    }
    model = dgbdt.train(params, dgbdt.Dataset(X, y), 3)
    assert {int(f) for t in model.trees for f in t.split_feature} <= {0, 1}


# -- parameter checks ---------------------------------------------------------------
@pytest.mark.parametrize(
    "params, message",
    [
        ({"monotone_constraints": [1, 0]}, "has 2 entries; the data has 7 features"),
        ({"monotone_constraints": [2, 0, 0, 0, 0, 0, 0]}, "-1, 0 or 1"),
        ({"monotone_constraints_method": "advanced"}, "'intermediate' is the closest"),
        ({"interaction_constraints": [[0, 9]]}, "feature index 9 is out of range"),
        ({"interaction_constraints": [["nope"]]}, "unknown feature name 'nope'"),
        ({"interaction_constraints": "[0,1"}, "interaction_constraints"),
        ({"monotone_penalty": -1}, "monotone_penalty"),
        ({"feature_fraction_bynode": 0}, "feature_fraction_bynode"),
        ({"path_smooth": -0.5}, "path_smooth"),
    ],
)
def test_bad_constraints_are_refused_naming_them(params, message):
    X, y = _sweep_data(n=200)
    with pytest.raises(ValueError, match=message.replace("(", "\\(").replace("[", "\\[")):
        dgbdt.train({"verbosity": -1, **params}, dgbdt.Dataset(X, y), 1)


def test_a_categorical_feature_cannot_be_constrained():
    X, y = _sweep_data(n=300)
    X[:, 6] = np.arange(300) % 5
    with pytest.raises(ValueError, match="feature 6 .* is categorical"):
        dgbdt.train(
            {"verbosity": -1, "monotone_constraints": [0] * 6 + [1]},
            dgbdt.Dataset(X, y, categorical_feature=[6]),
            1,
        )


def test_categorical_splits_respect_the_bounds_of_their_leaf():
    # a categorical split below a constrained one keeps its children within the
    # bounds (LightGBM clamps categorical outputs too): monotone overall
    X, y = _sweep_data()
    X[:, 6] = np.arange(len(X)) % 7
    y = y + X[:, 6] * (X[:, 0] > 0)
    model = dgbdt.train(
        {
            "num_leaves": 31,
            "verbosity": -1,
            "monotone_constraints": SWEEP_MONO,
            "min_data_per_group": 10,
            "cat_smooth": 1,
        },
        dgbdt.Dataset(X, y, categorical_feature=[6]),
        20,
    )
    assert any(t.default_left.max() & CATEGORICAL for t in model.trees)
    assert monotone_violation(model, X, SWEEP_MONO) == 0.0


def test_path_smooth_with_monotone_constraints_stays_monotone_where_lightgbm_does_not():
    # LightGBM gives a split against the constraint gain 0; with path_smooth the
    # leaf's own gain (at its output smoothed toward the parent's) can be
    # negative, so LightGBM takes it.  dgbdt refuses such splits.
    lgb = pytest.importorskip("lightgbm")
    X, y = _sweep_data()
    params = {
        "objective": "regression",
        "num_leaves": 31,
        "learning_rate": 0.1,
        "monotone_constraints": SWEEP_MONO,
        "path_smooth": 10.0,
        "verbose": -1,
    }
    theirs = lgb.train(params, lgb.Dataset(X, y), 30)
    ours = dgbdt.train(params, dgbdt.Dataset(X, y), 30)
    assert monotone_violation(theirs, X, SWEEP_MONO) > 0.01
    assert monotone_violation(ours, X, SWEEP_MONO) == 0.0


@pytest.mark.parametrize("objective", ["regression_l1", "quantile", "mape"])
def test_monotone_constraints_with_renewed_leaves_are_refused(objective):
    # LightGBM's gbdt.cpp: the leaf values these objectives renew ignore the bounds
    X, y = _sweep_data(n=200)
    with pytest.raises(ValueError, match=f"monotone_constraints with objective '{objective}'"):
        dgbdt.train(
            {"objective": objective, "monotone_constraints": SWEEP_MONO, "verbosity": -1},
            dgbdt.Dataset(X, np.abs(y) + 1),
            1,
        )


def test_path_smooth_raises_min_data_in_leaf_to_two_as_lightgbm():
    lgb = pytest.importorskip("lightgbm")
    rng = np.random.default_rng(3)
    X = rng.integers(0, 40, size=(60, 3)).astype(float)
    y = (X[:, 0] / 10 + rng.normal(size=60)).astype(np.float32).astype(float)
    y[5] += 20  # a lone outlier: a 1-row leaf, were it allowed
    params = {**BASE, "path_smooth": 0.5, "num_leaves": 31, "learning_rate": 1.0}
    lgb_params = {**params, **LGB_ONLY}
    theirs = lgb.train(lgb_params, lgb.Dataset(X, y, params=lgb_params), 3)
    with pytest.warns(UserWarning, match="min_data_in_leaf has been increased to 2"):
        ours = dgbdt.train({**params, "verbosity": -1}, dgbdt.Dataset(X, y), 3)
    np.testing.assert_allclose(ours.predict(X), theirs.predict(X), rtol=1e-6, atol=1e-9)


def test_a_monotone_penalty_beyond_max_depth_is_warned_about():
    X, y = _sweep_data(n=200)
    params = {"monotone_constraints": SWEEP_MONO, "monotone_penalty": 3, "max_depth": 3}
    with pytest.warns(UserWarning, match="monotone features won't be used"):
        dgbdt.train({**params, "verbosity": -1}, dgbdt.Dataset(X, y), 1)


@pytest.mark.parametrize("groups", [[[0, 1], [2]], "[0,1],[2]", [["f0", "f1"], ["f2"]]], ids=str)
def test_lightgbm_reads_the_exported_interaction_constraints(groups, tmp_path):
    lgb = pytest.importorskip("lightgbm")
    X, y = _sweep_data(n=500)
    names = [f"f{i}" for i in range(7)]
    params = {"interaction_constraints": groups, "verbosity": -1}
    model = dgbdt.train(params, dgbdt.Dataset(X, y, feature_name=names), 3)
    path = tmp_path / "m.txt"
    model.save_model(str(path), format="lightgbm")
    theirs = lgb.Booster(model_file=str(path))
    assert theirs.params["interaction_constraints"] == [[0, 1], [2]]
    np.testing.assert_array_equal(theirs.predict(X), model.predict(X))
