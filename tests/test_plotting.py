"""Plots (issue 17): LightGBM's plotting functions for dgbdt models, with its
parameters and errors.  matplotlib draws on the Agg backend; the tree graphs
are checked in their graphviz source (rendering needs Graphviz's `dot`, run
only where it is installed)."""

import shutil
import sys
import warnings

import numpy as np
import pytest

import dgbdt

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

PARAMS = {"objective": "regression", "num_leaves": 5, "min_data_in_leaf": 10, "verbosity": -1}


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _data(seed=0, n=300):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    X[:, 4] = 0.0  # constant: never split on
    y = X[:, 0] + 0.5 * X[:, 1] + 0.1 * rng.normal(size=n)
    return X, y


@pytest.fixture(scope="module")
def trained():
    X, y = _data()
    Xv, yv = _data(1, 100)
    train = dgbdt.Dataset(X, y)
    valid = dgbdt.Dataset(Xv, yv, reference=train)
    record = {}
    booster = dgbdt.train(
        {**PARAMS, "metric": ["l2", "l1"]},
        train,
        num_boost_round=4,
        valid_sets=[train, valid],
        valid_names=["train", "valid"],
        callbacks=[dgbdt.record_evaluation(record)],
    )
    return booster, record, X


def _used_features(booster):
    return int(np.count_nonzero(booster.feature_importance()))


def test_plot_importance_bars(trained):
    booster, _, X = trained
    ax = dgbdt.plot_importance(booster)
    assert len(ax.patches) == _used_features(booster) < X.shape[1]
    assert ax.get_title() == "Feature importance" and ax.get_ylabel() == "Features"
    assert len(dgbdt.plot_importance(booster, max_num_features=1).patches) == 1
    ax = dgbdt.plot_importance(booster, ignore_zero=False, importance_type="gain")
    assert len(ax.patches) == X.shape[1]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels[-1] == "Column_0" and "Column_4" in labels  # most important at the top
    ax = dgbdt.plot_importance(
        booster, xlabel="@importance_type@ importance", importance_type="gain", precision=1
    )
    assert ax.get_xlabel() == "gain importance"
    texts = [t.get_text() for t in ax.texts]
    assert all(len(t.split(".")[1]) == 1 for t in texts)


def test_plot_importance_on_given_axes_and_limits(trained):
    booster = trained[0]
    _, ax = plt.subplots()
    out = dgbdt.plot_importance(booster, ax=ax, xlim=(0, 50), ylim=(-1, 9), title=None, grid=False)
    assert out is ax and ax.get_xlim() == (0, 50) and ax.get_ylim() == (-1, 9)
    assert ax.get_title() == ""
    fig_ax = dgbdt.plot_importance(booster, figsize=(4, 3), dpi=50)
    assert tuple(fig_ax.figure.get_size_inches()) == (4, 3)


def test_plot_importance_errors(trained):
    booster = trained[0]
    with pytest.raises(TypeError, match="booster must be Booster"):
        dgbdt.plot_importance("model")
    with pytest.raises(TypeError, match="xlim must be a tuple of 2 elements"):
        dgbdt.plot_importance(booster, xlim=[0, 1])
    with pytest.raises(TypeError, match="figsize must be a tuple of 2 elements"):
        dgbdt.plot_importance(booster, figsize=(1, 2, 3))
    with pytest.raises(ValueError, match="importance_type"):
        dgbdt.plot_importance(booster, importance_type="cover")
    X, y = _data()
    # one round without a split (train refuses 0 rounds, as LightGBM)
    empty = dgbdt.train({**PARAMS, "min_data_in_leaf": len(y)}, dgbdt.Dataset(X, y), 1)
    with pytest.raises(ValueError, match="No non-zero feature importances"):
        dgbdt.plot_importance(empty)


def test_plot_metric_lines(trained):
    _, record, _ = trained
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ax = dgbdt.plot_metric(record)
    assert any("More than one metric" in str(w.message) for w in caught)
    assert len(ax.get_lines()) == 2
    assert ax.get_ylabel() == "l1"  # LightGBM's pick: the last metric recorded
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["train", "valid"]
    ax = dgbdt.plot_metric(record, metric="l2", dataset_names=["valid"])
    (line,) = ax.get_lines()
    np.testing.assert_allclose(line.get_ydata(), record["valid"]["l2"])
    assert ax.get_ylabel() == "l2" and ax.get_xlim() == (0, 4)


def test_plot_metric_errors(trained):
    booster, record, _ = trained
    with pytest.raises(TypeError, match="record_evaluation"):
        dgbdt.plot_metric(booster)
    with pytest.raises(TypeError, match="booster must be"):
        dgbdt.plot_metric([1, 2])
    with pytest.raises(ValueError, match="cannot be empty"):
        dgbdt.plot_metric({})
    with pytest.raises(KeyError, match="No given metric"):
        dgbdt.plot_metric(record, metric="auc")
    with pytest.raises(ValueError, match="dataset_names"):
        dgbdt.plot_metric(record, dataset_names="valid")
    with pytest.raises(ValueError, match="dataset_names"):
        dgbdt.plot_metric(record, dataset_names=[])


def test_plots_of_an_estimator():
    X, y = _data()
    model = dgbdt.DGBDTRegressor(
        n_estimators=3, num_leaves=5, importance_type="gain", verbosity=-1
    ).fit(X, y, eval_set=[(X[:100], y[:100])])
    ax = dgbdt.plot_importance(model)
    assert len(ax.patches) == _used_features(model.booster_)
    assert ax.texts[0].get_text().count(".") == 1  # gain values, from the estimator
    assert len(dgbdt.plot_metric(model).get_lines()) == 1
    assert len(dgbdt.plot_split_value_histogram(model, 0).patches) >= 1
    with pytest.raises(Exception, match="fit"):
        dgbdt.plot_importance(dgbdt.DGBDTRegressor())


def test_plot_split_value_histogram_bins(trained):
    booster = trained[0]
    hist, _ = booster.get_split_value_histogram(0)
    ax = dgbdt.plot_split_value_histogram(booster, 0)
    assert len(ax.patches) == len(hist)
    assert ax.get_title() == "Split value histogram for feature with index 0"
    ax = dgbdt.plot_split_value_histogram(booster, "Column_0", bins=2)
    assert len(ax.patches) == 2
    assert [p.get_height() for p in ax.patches] == list(
        booster.get_split_value_histogram(0, bins=2)[0]
    )
    assert ax.get_title() == "Split value histogram for feature with name Column_0"
    with pytest.raises(ValueError, match="was not used in splitting"):
        dgbdt.plot_split_value_histogram(booster, 4)
    with pytest.raises(TypeError, match="ylim"):
        dgbdt.plot_split_value_histogram(booster, 0, ylim=3)


def test_a_missing_plotting_package_says_what_to_install(trained, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError, match="plot_importance needs matplotlib: pip install"):
        dgbdt.plot_importance(trained[0])
    monkeypatch.setitem(sys.modules, "graphviz", None)
    with pytest.raises(ImportError, match="create_tree_digraph needs graphviz: pip install"):
        dgbdt.create_tree_digraph(trained[0])


# -- tree graphs ------------------------------------------------------------------
def _counts(graph):
    lines = [line.strip() for line in graph.source.splitlines()]
    nodes = [line for line in lines if line.startswith(("split", "leaf")) and "->" not in line]
    edges = [line for line in lines if "->" in line]
    return nodes, edges


def test_create_tree_digraph_nodes_and_edges(trained):
    pytest.importorskip("graphviz")
    booster = trained[0]
    tree = booster.trees[1]
    graph = dgbdt.create_tree_digraph(booster, tree_index=1, name="t1")
    nodes, edges = _counts(graph)
    assert len(nodes) == 2 * tree.n_leaves - 1 and len(edges) == 2 * (tree.n_leaves - 1)
    assert sum("label=yes" in e for e in edges) == tree.n_leaves - 1
    assert "rankdir=LR" in graph.source and graph.name == "t1"
    graph = dgbdt.create_tree_digraph(
        booster, show_info=["split_gain", "leaf_count", "data_percentage"], orientation="vertical"
    )
    assert "rankdir=TB" in graph.source and " gain" in graph.source
    assert "count: " in graph.source and "% of data" in graph.source


def test_create_tree_digraph_equals_lightgbms(trained):
    pytest.importorskip("graphviz")
    lgb = pytest.importorskip("lightgbm")
    booster, _, X = trained
    theirs = lgb.Booster(model_str=booster.model_to_string(format="lightgbm"))
    for kwargs in ({}, {"tree_index": 2, "show_info": ["internal_count", "leaf_weight"]}):
        kwargs["example_case"] = X[5:6]
        ours = dgbdt.create_tree_digraph(booster, **kwargs)
        assert ours.source == lgb.create_tree_digraph(theirs, **kwargs).source


def test_the_example_path_is_highlighted(trained):
    pytest.importorskip("graphviz")
    booster, _, X = trained
    leaf = int(booster.predict(X[7:8], pred_leaf=True)[0, 0])
    graph = dgbdt.create_tree_digraph(booster, example_case=X[7:8])
    _, edges = _counts(graph)
    blue = [e for e in edges if "color=blue" in e]
    assert any(e.split("->")[1].split()[0] == f"leaf{leaf}" for e in blue)
    tree = booster.trees[0]
    assert len(blue) == tree.leaf_depth[leaf]


def test_create_tree_digraph_errors(trained):
    pytest.importorskip("graphviz")
    booster, _, X = trained
    with pytest.raises(IndexError, match="tree_index is out of range"):
        dgbdt.create_tree_digraph(booster, tree_index=4)
    with pytest.raises(ValueError, match="single row"):
        dgbdt.create_tree_digraph(booster, example_case=X[:2])
    with pytest.raises(ValueError, match="2-D"):
        dgbdt.create_tree_digraph(booster, example_case=X[0])
    with pytest.raises(ValueError, match="orientation"):
        dgbdt.create_tree_digraph(booster, orientation="diagonal")
    with pytest.raises(TypeError, match="booster must be"):
        dgbdt.create_tree_digraph({"tree_info": []})
    Xs, y = _data()
    stump = dgbdt.train({**PARAMS, "min_data_in_leaf": 1000}, dgbdt.Dataset(Xs, y), 1)
    with pytest.raises(ValueError, match="no split"):
        dgbdt.create_tree_digraph(stump)


def test_digraph_of_categorical_and_constrained_trees():
    pytest.importorskip("graphviz")
    rng = np.random.default_rng(2)
    X, y = _data()
    X[:, 3] = rng.integers(0, 12, len(y))
    y = y + 3.0 * np.isin(X[:, 3], [0, 2, 5, 7, 9])
    params = {**PARAMS, "min_data_per_group": 5, "cat_smooth": 1.0}
    params["monotone_constraints"] = [1, -1, 0, 0, 0]
    booster = dgbdt.train(params, dgbdt.Dataset(X, y, categorical_feature=[3]), 2)
    graph = dgbdt.create_tree_digraph(booster, max_category_values=2, example_case=X[:1])
    assert "<B>Column_3</B> =" in graph.source and "||...||" in graph.source
    assert "tooltip=" in graph.source and "Monotone constraints" in graph.source
    assert 'fillcolor="#ddffdd"' in graph.source or 'fillcolor="#ffdddd"' in graph.source


def test_plot_tree(trained):
    pytest.importorskip("graphviz")
    booster = trained[0]
    if shutil.which("dot") is None:
        with pytest.raises(RuntimeError, match="`dot` program"):
            dgbdt.plot_tree(booster)
        return
    ax = dgbdt.plot_tree(booster, tree_index=1, figsize=(3, 3), show_info=["split_gain"])
    assert len(ax.images) == 1 and not ax.axison
