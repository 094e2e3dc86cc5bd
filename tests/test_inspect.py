"""Booster inspection (issue 17): trees_to_dataframe, dump_model in
LightGBM's schema, get_leaf_output, lower/upper_bound and
get_split_value_histogram equal LightGBM's on the exported model
(``model_to_string(format="lightgbm")`` read by lightgbm.Booster)."""

import math

import numpy as np
import pandas as pd
import pytest

import dgbdt

lgb = pytest.importorskip("lightgbm")

BASE = {"num_leaves": 7, "min_data_in_leaf": 10, "verbosity": -1, "learning_rate": 0.3}


def _data(seed=0, n=300):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    y = X[:, 0] + 0.5 * X[:, 1] ** 2 + 0.1 * rng.normal(size=n)
    X[rng.random(n) < 0.1, 2] = np.nan
    return X, y


def _train(params, X, y, rounds=3, **dataset):
    return dgbdt.train({**BASE, **params}, dgbdt.Dataset(X, y, **dataset), num_boost_round=rounds)


def _models():
    X, y = _data()
    rng = np.random.default_rng(1)
    Xc = X.copy()
    Xc[:, 3] = rng.integers(0, 8, len(y))
    yc = y + 2.0 * (Xc[:, 3] % 3 == 0)
    Xz = X.copy()
    Xz[rng.random(len(y)) < 0.3, 0] = 0.0
    return {
        "regression": _train({"objective": "regression"}, X, y),
        "binary": _train({"objective": "binary"}, X, (y > 0.5).astype(float)),
        "multiclass": _train(
            {"objective": "multiclass", "num_class": 3, "num_leaves": 4},
            X,
            np.digitize(y, [0.0, 1.0]).astype(float),
            rounds=2,
        ),
        "categorical": _train(
            {"objective": "regression", "min_data_per_group": 5, "cat_smooth": 1.0},
            Xc,
            yc,
            categorical_feature=[3],
        ),
        "zero_as_missing": _train({"objective": "regression", "zero_as_missing": True}, Xz, y),
        "no_missing": _train({"objective": "regression", "use_missing": False}, X, y),
    }


@pytest.fixture(scope="module")
def models():
    return _models()


def _lightgbm(booster, **kwargs):
    return lgb.Booster(model_str=booster.model_to_string(format="lightgbm", **kwargs))


def _assert_same(ours, theirs, path=""):
    """Equal documents: same keys, types and values; floats to 1e-14 (LightGBM
    reads internal values with its fast, not exactly rounding, parser)."""
    assert type(ours) is type(theirs), (path, ours, theirs)
    if isinstance(ours, dict):
        assert list(ours) == list(theirs), path
        for key in ours:
            _assert_same(ours[key], theirs[key], f"{path}/{key}")
    elif isinstance(ours, list):
        assert len(ours) == len(theirs), path
        for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
            _assert_same(a, b, f"{path}[{i}]")
    elif isinstance(ours, float):
        assert math.isclose(ours, theirs, rel_tol=1e-14, abs_tol=1e-300), (path, ours, theirs)
    else:
        assert ours == theirs, (path, ours, theirs)


@pytest.mark.parametrize(
    "name",
    ["regression", "binary", "multiclass", "categorical", "zero_as_missing", "no_missing"],
)
def test_dump_and_dataframe_equal_lightgbms(models, name):
    booster = models[name]
    theirs = _lightgbm(booster)
    _assert_same(booster.dump_model(format="lightgbm"), theirs.dump_model())
    pd.testing.assert_frame_equal(
        booster.trees_to_dataframe(), theirs.trees_to_dataframe(), rtol=1e-14
    )
    assert booster.lower_bound() == theirs.lower_bound()
    assert booster.upper_bound() == theirs.upper_bound()
    for method in ("num_trees", "current_iteration", "num_model_per_iteration", "feature_name"):
        assert getattr(booster, method)() == getattr(theirs, method)(), method


def test_the_settings_show_in_the_dump(models):
    def splits(booster):
        frame = booster.trees_to_dataframe()
        return frame[frame["split_feature"].notna()]

    categorical = splits(models["categorical"])
    assert (categorical["decision_type"] == "==").any()
    assert (
        categorical.loc[categorical["decision_type"] == "==", "threshold"]
        .str.contains(r"\|\|")
        .all()
    )
    assert set(splits(models["zero_as_missing"])["missing_type"]) == {"Zero"}
    assert set(splits(models["regression"])["missing_type"]) == {"NaN"}


def test_dump_ranges_and_importance_equal_lightgbms(models):
    booster = models["multiclass"]
    theirs = _lightgbm(booster)
    for kwargs in (
        {"num_iteration": 1},
        {"start_iteration": 1},
        {"num_iteration": 1, "start_iteration": 1, "importance_type": "gain"},
    ):
        _assert_same(booster.dump_model(format="lightgbm", **kwargs), theirs.dump_model(**kwargs))
    dump = booster.dump_model(format="lightgbm", start_iteration=1)
    assert [t["tree_index"] for t in dump["tree_info"]] == [3, 4, 5]


def test_dump_model_default_and_options(models):
    booster = models["regression"]
    # LightGBM's JSON by default, dgbdt's by name
    assert "tree_info" in booster.dump_model() and "trees" not in booster.dump_model()
    assert "trees" in booster.dump_model(format="json")
    hooked = booster.dump_model(format="lightgbm", object_hook=lambda d: {**d, "seen": 1})
    assert hooked["seen"] == 1 and hooked["tree_info"][0]["tree_structure"]["seen"] == 1
    with pytest.raises(ValueError, match="format must be"):
        booster.dump_model(format="xgboost")
    with pytest.raises(ValueError, match="importance_type"):
        booster.dump_model(importance_type="cover")
    with pytest.raises(ValueError, match="start_iteration"):
        booster.dump_model(format="json", start_iteration=1)  # (LightGBM's dump takes it)


def test_best_iteration_is_dumped_as_lightgbm(models):
    booster = dgbdt.Booster(model_str=models["regression"].model_to_string())
    booster.best_iteration = 2
    theirs = _lightgbm(booster, num_iteration=-1)
    theirs.best_iteration = 2
    _assert_same(booster.dump_model(format="lightgbm"), theirs.dump_model())
    assert booster.trees_to_dataframe()["tree_index"].max() == 1


def test_a_model_without_trees():
    X, y = _data()
    # (train refuses 0 rounds, as LightGBM; Booster(params, train_set) has no trees)
    booster = dgbdt.Booster({**BASE, "objective": "regression"}, dgbdt.Dataset(X, y))
    theirs = _lightgbm(booster)
    _assert_same(booster.dump_model(format="lightgbm"), theirs.dump_model())
    assert booster.lower_bound() == booster.upper_bound() == theirs.lower_bound()
    assert booster.lower_bound() == pytest.approx(np.mean(y))
    with pytest.raises(ValueError, match="no trees"):
        booster.trees_to_dataframe()


def test_pandas_categorical_and_feature_names():
    rng = np.random.default_rng(3)
    n = 300
    df = pd.DataFrame(
        {
            "size": rng.normal(size=n),
            "colour": pd.Categorical(rng.choice(["red", "green", "blue"], n)),
        }
    )
    y = df["size"].to_numpy() + 2.0 * (df["colour"] == "red").to_numpy()
    booster = _train({"objective": "regression", "min_data_per_group": 5}, df, y)
    theirs = _lightgbm(booster)
    _assert_same(booster.dump_model(format="lightgbm"), theirs.dump_model())
    assert booster.dump_model(format="lightgbm")["pandas_categorical"] == [["blue", "green", "red"]]
    assert set(booster.trees_to_dataframe()["split_feature"].dropna()) == {"size", "colour"}


def test_names_lightgbm_cannot_hold_are_kept():
    X, y = _data()
    # (a space the Dataset already turns into "_", as LightGBM's does)
    df = pd.DataFrame(X, columns=["a:b", "c", "d", "e"])
    booster = _train({"objective": "regression"}, df, y)
    assert booster.dump_model(format="lightgbm")["feature_names"][0] == "a:b"
    assert "a:b" in set(booster.trees_to_dataframe()["split_feature"])
    assert _lightgbm(booster).feature_name()[0] == "a_b"  # LightGBM's own rule


def test_leaf_outputs_equal_lightgbms_and_sum_to_the_raw_score(models):
    X, _ = _data()
    for name in ("binary", "multiclass"):
        booster = models[name]
        theirs = _lightgbm(booster)
        for t, tree in enumerate(booster.trees):
            for leaf in range(tree.n_leaves):
                assert booster.get_leaf_output(t, leaf) == theirs.get_leaf_output(t, leaf)
        leaves = booster.predict(X, pred_leaf=True)
        k = booster.num_model_per_iteration()
        outputs = np.array(
            [
                [booster.get_leaf_output(t, int(leaf)) for t, leaf in enumerate(row)]
                for row in leaves
            ]
        )
        by_class = outputs.reshape(len(X), -1, k).sum(axis=1)
        raw = booster.predict(X, raw_score=True).reshape(len(X), k)
        np.testing.assert_allclose(by_class, raw, rtol=1e-12, atol=1e-12)
        assert booster.lower_bound() <= raw.sum(axis=1).min()


def test_leaf_output_errors(models):
    booster = models["regression"]
    with pytest.raises(IndexError, match="tree_id"):
        booster.get_leaf_output(3, 0)
    with pytest.raises(IndexError, match="leaf_id"):
        booster.get_leaf_output(0, 7)
    with pytest.raises(TypeError, match="tree_id"):
        booster.get_leaf_output(0.5, 0)


@pytest.mark.parametrize(
    "feature, kwargs",
    [
        (0, {}),
        ("Column_1", {"bins": 3}),
        (0, {"bins": "auto"}),
        (1, {"bins": 2, "xgboost_style": True}),
        (0, {"xgboost_style": True}),
        (3, {}),  # never split on: one empty bin
    ],
)
def test_split_value_histogram_equals_lightgbms(models, feature, kwargs):
    booster = models["regression"]
    ours = booster.get_split_value_histogram(feature, **kwargs)
    theirs = _lightgbm(booster).get_split_value_histogram(feature, **kwargs)
    if kwargs.get("xgboost_style"):
        pd.testing.assert_frame_equal(ours, theirs)
    else:
        np.testing.assert_array_equal(ours[0], theirs[0])
        np.testing.assert_array_equal(ours[1], theirs[1])


def test_split_value_histogram_errors(models):
    with pytest.raises(ValueError, match="categorical"):
        models["categorical"].get_split_value_histogram(3)
    with pytest.raises(ValueError, match="not one of"):
        models["regression"].get_split_value_histogram("nope")
    with pytest.raises(ValueError, match="out of range"):
        models["regression"].get_split_value_histogram(4)
    with pytest.raises(TypeError, match="feature"):
        models["regression"].get_split_value_histogram(1.0)
