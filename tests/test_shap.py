"""SHAP feature contributions (``pred_contrib=True``, dgbdt.native.shap).

* The kernel against a brute-force twin: the Shapley values of the
  path-dependent conditional expectation E[f(x) | x_S] (features in S follow
  the row's decision, the others average both children by data count),
  summed over every subset of the features a tree uses.
* Additivity: a row's contributions add up to its raw score, for each
  objective kind, with starting scores, categorical splits, zero-as-missing,
  and a model read from LightGBM.
* Agreement with LightGBM's ``pred_contrib`` on the exported model (dense and
  sparse input) and with shap's TreeExplainer.
* The estimators and the command line, single process and under mpiexec.
"""

import itertools
import math

import numpy as np
import pytest
import scipy.sparse as sp
from dgbdt.native.binning import K_ZERO_THRESHOLD
from mpi_launch import run_mpi

import dgbdt
from dgbdt.cli.commands import run
from dgbdt.models.tree import CATEGORICAL, LARGEST, ZERO_IS_MISSING

QUIET = {"verbosity": -1, "min_data_in_leaf": 5}
TOL = 1e-9


def _data(n=400, n_features=5, seed=0, nan=0.1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, n_features))
    X[rng.random(X.shape) < nan] = np.nan
    X[:, -1] = np.round(X[:, -1])  # zeros and few values
    z = np.nan_to_num(X)
    s = z[:, 0] + np.sin(2 * z[:, 1]) + 0.5 * np.isnan(X[:, 2]) + 0.3 * z[:, 0] * z[:, 3]
    return X, s + 0.1 * rng.normal(size=n)


# --------------------------------------------------------------------------- #
# the brute-force twin
# --------------------------------------------------------------------------- #
def _goes_left(tree, node, x):
    """The documented decision (dgbdt.native.predict), written out again."""
    d = int(tree.default_left[node])
    if d & CATEGORICAL:
        if not (x > -1 and x < 2**31):
            return False
        c, j = int(x), int(tree.threshold[node])
        lo, hi = tree.cat_boundaries[j], tree.cat_boundaries[j + 1]
        return c // 32 < hi - lo and bool((int(tree.cat_threshold[lo + c // 32]) >> (c % 32)) & 1)
    if math.isnan(x) or (d & ZERO_IS_MISSING and abs(x) <= K_ZERO_THRESHOLD):
        return bool(d & 1)
    threshold = math.inf if tree.threshold[node] >= LARGEST else tree.threshold[node]
    return x <= threshold


def _count(tree, child):
    return tree.internal_count[child] if child >= 0 else tree.leaf_count[~child]


def _expectation(tree, node, x, subset):
    """E[f(x) | x_S]: features in ``subset`` follow x, others average by count."""
    if node < 0:
        return tree.leaf_value[~node]
    left, right = tree.left_child[node], tree.right_child[node]
    if tree.split_feature[node] in subset:
        child = left if _goes_left(tree, node, x[tree.split_feature[node]]) else right
        return _expectation(tree, child, x, subset)
    return (
        _count(tree, left) * _expectation(tree, left, x, subset)
        + _count(tree, right) * _expectation(tree, right, x, subset)
    ) / tree.internal_count[node]


def brute_force_shap(tree, x, n_features):
    """Shapley values of E[f(x) | x_S] over the tree's features, then the bias."""
    phi = np.zeros(n_features + 1)
    if tree.n_leaves == 1:
        phi[-1] = tree.leaf_value[0]
        return phi
    used = sorted({int(f) for f in tree.split_feature})
    m = len(used)
    value = {
        s: _expectation(tree, 0, x, set(s))
        for r in range(m + 1)
        for s in itertools.combinations(used, r)
    }
    for i in used:
        others = [f for f in used if f != i]
        for r in range(m):
            weight = math.factorial(r) * math.factorial(m - r - 1) / math.factorial(m)
            for s in itertools.combinations(others, r):
                phi[i] += weight * (value[tuple(sorted(s + (i,)))] - value[s])
    phi[-1] = value[()]
    return phi


def brute_force_contributions(booster, X):
    k, n_features = booster.num_class, booster.num_feature()
    out = np.zeros((len(X), k * (n_features + 1)))
    out[:, n_features :: n_features + 1] += booster.init_score
    for t, tree in enumerate(booster.trees):
        c = t % k
        for i, x in enumerate(X):
            out[i, c * (n_features + 1) : (c + 1) * (n_features + 1)] += brute_force_shap(
                tree, x, n_features
            )
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_kernel_equals_the_brute_force_shapley_values(seed):
    X, y = _data(n=300, n_features=4, seed=seed)
    params = {**QUIET, "num_leaves": 6 + 3 * seed, "learning_rate": 0.5}
    booster = dgbdt.train(params, dgbdt.Dataset(X, y), 3)
    rows = np.vstack([X[:12], [[np.nan] * 4, [0.0] * 4, [np.inf] * 4]])
    got = booster.predict(rows, pred_contrib=True)
    np.testing.assert_allclose(got, brute_force_contributions(booster, rows), rtol=0, atol=TOL)


def test_brute_force_twin_with_categorical_splits_and_zero_as_missing():
    X, y = _data(n=400, n_features=4, seed=3)
    rng = np.random.default_rng(3)
    X[:, 0] = rng.integers(0, 6, len(X))
    X[rng.random(len(X)) < 0.05, 0] = np.nan
    y = y + 2.0 * np.isin(X[:, 0], [1, 4])
    for params, cat, bit in (
        ({}, [0], CATEGORICAL),
        ({"zero_as_missing": True}, [], ZERO_IS_MISSING),
    ):
        data = dgbdt.Dataset(X, y, categorical_feature=cat)
        booster = dgbdt.train({**QUIET, "num_leaves": 8, **params}, data, 2)
        assert any(np.any(t.default_left & bit) for t in booster.trees)
        rows = np.vstack([X[:10], [[np.nan, 0.0, 0.0, 0.0], [7.0, np.nan, 1e-40, -0.0]]])
        got = booster.predict(rows, pred_contrib=True)
        np.testing.assert_allclose(got, brute_force_contributions(booster, rows), atol=TOL)


# --------------------------------------------------------------------------- #
# additivity
# --------------------------------------------------------------------------- #
def _assert_sums_to_raw(booster, X, **kw):
    contrib = booster.predict(X, pred_contrib=True, **kw)
    raw = booster.predict(X, raw_score=True, **kw).reshape(len(X), -1)
    k = raw.shape[1]
    assert contrib.shape == (len(X), k * (booster.num_feature() + 1))
    np.testing.assert_allclose(contrib.reshape(len(X), k, -1).sum(axis=2), raw, rtol=0, atol=TOL)
    return contrib


@pytest.mark.parametrize(
    "objective, extra",
    [
        ("regression", {}),
        ("regression", {"boost_from_average": False}),
        ("binary", {}),
        ("multiclass", {"num_class": 3}),
    ],
)
def test_contributions_add_up_to_the_raw_score(objective, extra):
    X, y = _data(seed=4)
    if objective == "binary":
        y = (y > 0).astype(float)
    elif objective == "multiclass":
        y = np.digitize(y, [-0.5, 0.7]).astype(float)
    params = {**QUIET, "objective": objective, "num_leaves": 15, **extra}
    booster = dgbdt.train(params, dgbdt.Dataset(X, y), 5)
    assert extra or np.any(booster.init_score != 0)  # boost_from_average: a starting score
    _assert_sums_to_raw(booster, X)
    _assert_sums_to_raw(booster, X, start_iteration=2, num_iteration=2)
    assert booster.predict(X[:0], pred_contrib=True).shape == (0, booster.num_class * 6)


def test_init_score_in_the_dataset_is_not_part_of_the_model():
    X, y = _data(seed=5)
    booster = dgbdt.train(QUIET, dgbdt.Dataset(X, y, init_score=np.full(len(y), 3.0)), 3)
    _assert_sums_to_raw(booster, X)


def test_a_model_read_from_lightgbm(tmp_path):
    lgb = pytest.importorskip("lightgbm")
    X, y = _data(seed=6)
    rng = np.random.default_rng(6)
    X[:, 0] = rng.integers(0, 6, len(X))
    y = y + 2.0 * np.isin(X[:, 0], [1, 4])
    params = {"verbosity": -1, "num_leaves": 12, "min_data_in_leaf": 5, "zero_as_missing": True}
    lgb_booster = lgb.train(params, lgb.Dataset(X, y, categorical_feature=[0]), 5)
    booster = dgbdt.Booster(model_str=lgb_booster.model_to_string())
    assert any(np.any(t.default_left & CATEGORICAL) for t in booster.trees)
    assert any(np.any(t.default_left & ZERO_IS_MISSING) for t in booster.trees)
    contrib = _assert_sums_to_raw(booster, X)
    np.testing.assert_allclose(contrib, lgb_booster.predict(X, pred_contrib=True), atol=TOL)


# --------------------------------------------------------------------------- #
# LightGBM and shap
# --------------------------------------------------------------------------- #
@pytest.mark.filterwarnings("ignore:Converting data to scipy sparse matrix")
@pytest.mark.parametrize("objective", ["regression", "binary", "multiclass"])
def test_equal_to_lightgbm_on_the_exported_model(objective):
    lgb = pytest.importorskip("lightgbm")
    X, y = _data(seed=7)
    extra = {"num_class": 3} if objective == "multiclass" else {}
    if objective != "regression":
        y = np.digitize(y, [-0.5, 0.7] if extra else [0.0]).astype(float)
    params = {**QUIET, "objective": objective, "num_leaves": 31, **extra}
    booster = dgbdt.train(params, dgbdt.Dataset(X, y), 6)
    theirs = lgb.Booster(model_str=booster.model_to_string(format="lightgbm"))
    T = np.vstack([X, [[np.nan] * 5, [np.inf] * 5, [-np.inf] * 5]])
    for kw in ({}, {"start_iteration": 1, "num_iteration": 3}):
        ours = booster.predict(T, pred_contrib=True, **kw)
        np.testing.assert_allclose(ours, theirs.predict(T, pred_contrib=True, **kw), atol=TOL)
    S = sp.random(50, 5, density=0.4, format="csr", random_state=1)
    for data in (S, S.tocsc(), S.astype(np.float32), S.tocoo()):
        ours, ref = (
            booster.predict(data, pred_contrib=True),
            theirs.predict(data, pred_contrib=True),
        )
        ours, ref = (ours, ref) if extra else ([ours], [ref])
        assert len(ours) == len(ref)
        for a, b in zip(ours, ref, strict=True):
            assert type(a) is type(b) and a.shape == b.shape and a.dtype == b.dtype
            np.testing.assert_allclose(
                a.toarray(), b.toarray(), atol=1e-6 if a.dtype == np.float32 else TOL
            )
    dense = booster.predict(S.toarray(), pred_contrib=True)
    ours = booster.predict(S, pred_contrib=True)
    np.testing.assert_array_equal(
        np.hstack([m.toarray() for m in (ours if extra else [ours])]), dense
    )


@pytest.mark.filterwarnings("ignore:LightGBM binary classifier with TreeExplainer")
@pytest.mark.parametrize("objective", ["regression", "binary", "multiclass"])
def test_equal_to_shap_tree_explainer(objective):
    shap = pytest.importorskip("shap")
    lgb = pytest.importorskip("lightgbm")
    X, y = _data(seed=8)
    extra = {"num_class": 3} if objective == "multiclass" else {}
    if objective != "regression":
        y = np.digitize(y, [-0.5, 0.7] if extra else [0.0]).astype(float)
    booster = dgbdt.train({**QUIET, "objective": objective, **extra}, dgbdt.Dataset(X, y), 4)
    theirs = lgb.Booster(model_str=booster.model_to_string(format="lightgbm"))
    explainer = shap.TreeExplainer(theirs)
    values = np.asarray(explainer.shap_values(X))
    ours = booster.predict(X, pred_contrib=True).reshape(len(X), booster.num_class, 6)
    # shap 0.51: (n, features) for one output, (n, features, classes) for several
    values = values[:, None, :] if values.ndim == 2 else values.transpose(0, 2, 1)
    np.testing.assert_allclose(ours[:, :, :5], values, atol=1e-6)
    expected = np.reshape(explainer.expected_value, -1)
    np.testing.assert_allclose(ours[0, :, 5], expected, atol=1e-6)


# --------------------------------------------------------------------------- #
# the estimators and the arguments
# --------------------------------------------------------------------------- #
def test_estimators_pass_pred_contrib_through():
    X, y = _data(n=300, seed=9)
    reg = dgbdt.DGBDTRegressor(n_estimators=4, num_leaves=7, verbose=-1).fit(X, y)
    np.testing.assert_array_equal(
        reg.predict(X, pred_contrib=True), reg.booster_.predict(X, pred_contrib=True)
    )
    for labels in ((y > 0).astype(int), np.digitize(y, [-0.5, 0.7])):
        clf = dgbdt.DGBDTClassifier(n_estimators=4, num_leaves=7, verbose=-1).fit(X, labels)
        want = clf.booster_.predict(X, pred_contrib=True)
        assert want.shape == (len(X), (1 if labels.max() == 1 else 3) * 6)
        np.testing.assert_array_equal(clf.predict(X, pred_contrib=True), want)
        np.testing.assert_array_equal(clf.predict_proba(X, pred_contrib=True), want)
    group = [100, 100, 100]
    rank = dgbdt.DGBDTRanker(n_estimators=3, num_leaves=7, verbose=-1)
    rank.fit(X, np.digitize(y, [0.0, 1.0]), group=group)
    contrib = rank.predict(X, pred_contrib=True)
    np.testing.assert_allclose(contrib.sum(axis=1), rank.predict(X, raw_score=True), atol=TOL)


def test_pred_contrib_arguments():
    X, y = _data(n=200, seed=10)
    booster = dgbdt.train(QUIET, dgbdt.Dataset(X, y), 2)
    # LightGBM's positional order: data, start_iteration, num_iteration, raw_score,
    # pred_leaf, pred_contrib
    np.testing.assert_array_equal(
        booster.predict(X, 0, None, False, False, True), booster.predict(X, pred_contrib=True)
    )
    with pytest.raises(ValueError, match="pred_leaf and pred_contrib"):
        booster.predict(X, pred_leaf=True, pred_contrib=True)
    one = booster.predict(X, pred_contrib=True, num_threads=1)
    np.testing.assert_array_equal(one, booster.predict(X, pred_contrib=True, num_threads=2))


# --------------------------------------------------------------------------- #
# the command line
# --------------------------------------------------------------------------- #
def _cli_model(tmp_path, objective="multiclass"):
    X, y = _data(n=501, seed=11)
    y = np.digitize(y, [-0.5, 0.7]).astype(float)
    data = tmp_path / "d.csv"
    lines = [
        f"{int(t)}," + ",".join("" if np.isnan(v) else repr(float(v)) for v in row)
        for t, row in zip(y, X, strict=True)
    ]
    data.write_text("\n".join(lines) + "\n")
    model = tmp_path / "m.json"
    args = ["train", f"data={data}", f"objective={objective}", "num_class=3", "num_trees=4"]
    assert run([*args, "num_leaves=7", "verbosity=-1", f"output_model={model}"]) == 0
    return data, model, X


def test_cli_predict_contrib_writes_the_contributions(tmp_path):
    data, model, X = _cli_model(tmp_path)
    out = tmp_path / "contrib.txt"
    for key in ("predict_contrib", "contrib", "is_predict_contrib"):
        args = ["predict", f"data={data}", f"input_model={model}", f"{key}=true"]
        assert run([*args, f"output_result={out}"]) == 0
        lines = out.read_text().splitlines()
        assert len(lines) == len(X) and all(len(line.split("\t")) == 18 for line in lines)
        want = dgbdt.Booster(model_file=model).predict(X, pred_contrib=True)
        np.testing.assert_array_equal(np.loadtxt(out, delimiter="\t"), want)
    args = ["predict", f"data={data}", f"input_model={model}", "contrib=true", "leaf_index=true"]
    assert run([*args, f"output_result={out}"]) == 1


def test_cli_predict_contrib_under_mpiexec_keeps_the_input_order(tmp_path):
    data, model, _ = _cli_model(tmp_path)
    common = ["predict", f"data={data}", f"input_model={model}", "predict_contrib=true"]
    assert run([*common, f"output_result={tmp_path / 'serial.txt'}"]) == 0
    result = run_mpi(2, "cli.py", *common, f"output_result={tmp_path / 'dist.txt'}")
    assert result.returncode == 0, result.stderr[-3000:]
    assert (tmp_path / "dist.txt").read_text() == (tmp_path / "serial.txt").read_text()


def test_zero_node_counts_give_nan_as_lightgbm_not_an_error():
    X, y = _data(n=200, n_features=4, seed=4)
    booster = dgbdt.train({**QUIET, "num_leaves": 4}, dgbdt.Dataset(X, y), 2)
    for tree in booster.trees:  # a hand-written or converted model without counts
        tree.internal_count[:] = 0
        tree.leaf_count[:] = 0
    booster._flat = None
    contrib = booster.predict(X[:5], pred_contrib=True)
    assert contrib.shape == (5, 5) and np.isnan(contrib).any()
