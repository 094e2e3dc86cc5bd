"""LightGBM drop-in (issue 28): model files, Booster methods and predict as LightGBM's."""

from __future__ import annotations

import copy
import json
import pickle

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.datasets import dump_svmlight_file

import dgbdt
from dgbdt.log import DGBDTError

QUIET = {"verbose": -1, "num_leaves": 7, "min_data_in_leaf": 5}


def _data(n: int = 300, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    X[:, 3] = rng.integers(0, 12, n)  # a categorical column
    y = X[:, 0] + 3 * (X[:, 3] % 3 == 1) + rng.normal(0, 0.1, n)
    X[rng.random(n) < 0.05, 0] = np.nan
    return X, y


def _train(objective: str, rounds: int = 6, **extra: object) -> tuple[dgbdt.Booster, np.ndarray]:
    X, y = _data()
    params: dict[str, object] = {**QUIET, "objective": objective, **extra}
    kwargs: dict[str, object] = {"categorical_feature": [3]}
    if objective in ("binary", "cross_entropy"):
        y = (y > np.nanmedian(y)).astype(float)
    elif objective in ("multiclass", "multiclassova"):
        y = np.digitize(np.nan_to_num(y), [-1, 1]).astype(float)
        params["num_class"] = 3
    elif objective in ("lambdarank", "rank_xendcg"):
        y = np.digitize(np.nan_to_num(y), [-1, 0, 1]).astype(float)
        kwargs["group"] = [30] * 10
    elif objective in ("poisson", "gamma", "tweedie"):
        y = np.exp(np.nan_to_num(y) / 4)
    ds = dgbdt.Dataset(X, y, **kwargs)  # type: ignore[arg-type]
    return dgbdt.train(params, ds, rounds), X


OBJECTIVES = [
    "regression",
    "regression_l1",
    "huber",
    "quantile",
    "poisson",
    "tweedie",
    "binary",
    "cross_entropy",
    "multiclass",
    "multiclassova",
    "lambdarank",
    "rank_xendcg",
]


@pytest.mark.parametrize("objective", OBJECTIVES)
def test_saved_text_model_predicts_alike_in_lightgbm(tmp_path, objective):
    """LightGBM: ``booster.save_model("model.txt")`` writes LightGBM's text
    model, which ``lightgbm.Booster(model_file=...)`` loads; its raw scores
    are dgbdt's (categorical splits, ranking and multiclass included)."""
    lgb = pytest.importorskip("lightgbm")
    booster, X = _train(objective)
    path = tmp_path / "model.txt"
    booster.save_model(path)
    assert path.read_text().startswith("tree\nversion=v4\n")
    theirs = lgb.Booster(model_file=str(path))
    np.testing.assert_allclose(
        theirs.predict(X, raw_score=True), booster.predict(X, raw_score=True), rtol=0, atol=1e-12
    )


@pytest.mark.parametrize("objective", ["regression", "binary", "multiclass", "lambdarank"])
def test_text_round_trip_equals_json_round_trip(tmp_path, objective):
    """The text model (LightGBM's, the default) loses nothing of dgbdt's JSON
    model: what LightGBM has no field for rides on a line LightGBM skips."""
    booster, X = _train(objective, bin_construct_sample_cnt=200, learning_rate=0.3)
    booster.best_iteration = 4
    booster.pandas_categorical = None
    booster.save_model(tmp_path / "m.txt", num_iteration=-1)
    booster.save_model(tmp_path / "m.json", num_iteration=-1)
    assert json.loads((tmp_path / "m.json").read_text())["format"] == "dgbdt-model"
    from_text = dgbdt.Booster(model_file=tmp_path / "m.txt")
    from_json = dgbdt.Booster(model_file=tmp_path / "m.json")
    assert from_text.model_to_string(format="json") == from_json.model_to_string(format="json")
    assert from_text.model_to_string(format="json") == booster.model_to_string(format="json")
    assert from_text.best_iteration == 4 and from_text.params == from_json.params
    assert from_text.feature_name() == booster.feature_name()
    for kw in ({"raw_score": True}, {"pred_contrib": True}, {"pred_leaf": True}):
        np.testing.assert_array_equal(from_text.predict(X, **kw), booster.predict(X, **kw))


def test_text_model_keeps_names_lightgbm_cannot_hold():
    """Feature names with spaces (LightGBM writes ``_``) come back as given."""
    X, y = _data()
    names = ["a,b", "c:d", "e[0]", "f", "g"]
    booster = dgbdt.train(QUIET, dgbdt.Dataset(X, y, feature_name=names), 3)
    text = booster.model_to_string()
    assert "feature_names=a_b c_d e_0_ f g" in text
    assert dgbdt.Booster(model_str=text).feature_name() == names


def test_edited_text_model_is_read_as_lightgbm_model():
    """A text whose trees changed after dgbdt wrote it (here: one leaf
    value) is LightGBM's model: its trees count, with a warning."""
    booster, X = _train("regression")
    text = booster.model_to_string()
    start = text.index("leaf_value=") + len("leaf_value=")
    edited = text[:start] + "1000" + text[text.index(" ", start) :]
    with pytest.warns(UserWarning, match="trees differ from those its dgbdt_model: line"):
        loaded = dgbdt.Booster(model_str=edited)
    assert loaded.predict(X).max() > 500


def test_json_by_name_and_by_file_name(tmp_path):
    """dgbdt's JSON model is asked for by name (format="json") or by a
    ``.json`` file name; the default text and dump are LightGBM's."""
    booster, _ = _train("regression")
    assert json.loads(booster.model_to_string(format="json"))["format"] == "dgbdt-model"
    assert "tree_info" in booster.dump_model()
    assert "trees" in booster.dump_model(format="json")
    booster.save_model(tmp_path / "x.json")
    assert (tmp_path / "x.json").read_text().startswith("{")
    with pytest.raises(ValueError, match="format must be 'lightgbm' or 'json', got 'xml'"):
        booster.model_to_string(format="xml")


def test_pickle_and_copy_keep_the_json_model():
    """Pickles and copies hold the whole model (dgbdt's JSON, by name)."""
    booster, X = _train("binary")
    for other in (pickle.loads(pickle.dumps(booster)), copy.copy(booster), copy.deepcopy(booster)):
        assert other.model_to_string(format="json") == booster.model_to_string(format="json")
    state = booster.__getstate__()
    assert json.loads(state["model"])["format"] == "dgbdt-model"


def test_model_from_string_replaces_the_model():
    """LightGBM: ``Booster.model_from_string(text)`` loads the model in place, returns self."""
    a, X = _train("regression", rounds=3)
    b, _ = _train("binary", rounds=5)
    assert a.model_from_string(b.model_to_string()) is a
    assert a.num_trees() == 5
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    with pytest.raises(TypeError, match="model_str must be a str"):
        a.model_from_string(3)  # type: ignore[arg-type]


def test_set_leaf_output():
    """LightGBM: set_leaf_output(tree, leaf, get_leaf_output(tree, leaf) + 1)
    adds 1 to the predictions of that leaf's rows."""
    X, y = _data()
    booster = dgbdt.train({**QUIET, "num_leaves": 2}, dgbdt.Dataset(X, y), 1)
    before = booster.predict(X)
    for leaf in range(2):
        value = booster.get_leaf_output(tree_id=0, leaf_id=leaf)
        assert booster.set_leaf_output(tree_id=0, leaf_id=leaf, value=value + 1) is booster
    np.testing.assert_allclose(booster.predict(X), before + 1)
    with pytest.raises(IndexError, match="leaf_id=5 is out of range"):
        booster.set_leaf_output(0, 5, 1.0)
    with pytest.raises(ValueError, match="value must be finite"):
        booster.set_leaf_output(0, 0, float("nan"))


def test_predict_from_a_data_file(tmp_path):
    """LightGBM: Booster.predict(path) reads a LibSVM, CSV or TSV file (label
    in column 0; a CSV of the model's width has none); a file of another
    width is LightGBM's "number of features" error."""
    booster, X = _train("binary")
    X = np.nan_to_num(X)
    want = booster.predict(X)
    svm = tmp_path / "d.svm"
    dump_svmlight_file(X, np.zeros(len(X)), str(svm))
    np.testing.assert_allclose(booster.predict(svm), want)
    np.testing.assert_allclose(booster.predict(str(svm)), want)
    csv = tmp_path / "d.csv"
    np.savetxt(csv, np.column_stack([np.zeros(len(X)), X]), delimiter=",")
    np.testing.assert_allclose(booster.predict(csv), want)
    np.savetxt(csv, X, delimiter=",")
    np.testing.assert_allclose(booster.predict(csv), want)
    np.savetxt(csv, X, delimiter=",", header="a,b,c,d,e", comments="")
    np.testing.assert_allclose(booster.predict(csv, header=True), want)
    dump_svmlight_file(X, np.zeros(len(X)), str(svm), zero_based=False)
    with pytest.raises(DGBDTError, match=r"number of features in data \(6\).*training data \(5\)"):
        booster.predict(svm)


def test_shape_check_and_predict_disable_shape_check():
    """LightGBM: data of another width is an error naming both widths, unless
    predict_disable_shape_check=True (extra columns ignored, missing ones 0)."""
    booster, X = _train("regression")
    X = np.nan_to_num(X)
    for bad in (X[:, 1:], sp.csr_matrix(X[:, 1:]), sp.csc_matrix(X[:, 1:])):
        with pytest.raises(DGBDTError, match=r"The number of features in data \(4\)"):
            booster.predict(bad)
    wide = np.column_stack([X, np.ones(len(X))])
    np.testing.assert_array_equal(
        booster.predict(wide, predict_disable_shape_check=True), booster.predict(X)
    )
    narrow = X.copy()
    narrow[:, 4] = 0.0
    np.testing.assert_array_equal(
        booster.predict(X[:, :4], predict_disable_shape_check=True), booster.predict(narrow)
    )


def _early_stop_reference(booster, X, freq, margin):
    """LightGBM's GBDT::PredictRaw with prediction early stopping, row by row."""
    k, iters = booster.num_model_per_iteration(), booster.current_iteration()
    out = np.zeros((len(X), k))
    for r in range(len(X)):
        for i in range(iters):
            for c in range(k):
                # (the starting score comes with the first iteration's trees)
                out[r, c] += booster.predict(
                    X[r : r + 1], start_iteration=i, num_iteration=1, raw_score=True
                ).reshape(-1, k)[0, c]
            if (i + 1) % freq == 0:
                top = np.sort(out[r])[::-1]
                m = 2 * abs(top[0]) if k == 1 else top[0] - top[1]
                if m > margin:
                    break
    return out


@pytest.mark.parametrize("objective", ["binary", "multiclass"])
def test_prediction_early_stopping(objective):
    """LightGBM: pred_early_stop stops a row's prediction after every
    pred_early_stop_freq iterations once its margin passes
    pred_early_stop_margin (binary: 2|score|; multiclass: top two apart)."""
    booster, X = _train(objective, rounds=12, learning_rate=0.5)
    X = X[:25]
    got = booster.predict(
        X, raw_score=True, pred_early_stop=True, pred_early_stop_freq=3, pred_early_stop_margin=1.0
    )
    want = _early_stop_reference(booster, X, 3, 1.0)
    np.testing.assert_allclose(got.reshape(len(X), -1), want, rtol=1e-12, atol=1e-12)
    assert not np.allclose(got, booster.predict(X, raw_score=True))
    with pytest.raises(ValueError, match="pred_early_stop_freq must be a positive integer"):
        booster.predict(X, pred_early_stop=True, pred_early_stop_freq=0)


def test_prediction_early_stopping_is_ignored_for_regression():
    """LightGBM: regression needs accurate predictions: pred_early_stop does nothing."""
    booster, X = _train("regression")
    np.testing.assert_array_equal(
        booster.predict(X, pred_early_stop=True, pred_early_stop_margin=0.0), booster.predict(X)
    )


def test_validate_features_message():
    """LightGBM: validate_features=True names the first misplaced feature."""
    X, y = _data()
    df = pd.DataFrame(X, columns=["x1", "x2", "x3", "x4", "x5"])
    booster = dgbdt.train(QUIET, dgbdt.Dataset(df, y), 3)
    with pytest.raises(DGBDTError, match="Expected 'x3' at position 2 but found 'z'"):
        booster.predict(df.rename(columns={"x3": "z"}), validate_features=True)
    booster.predict(df.rename(columns={"x3": "z"}), validate_features=False)


def test_split_value_histogram_of_a_categorical_feature():
    """LightGBM: a categorical feature's split values are a LightGBMError."""
    booster, _ = _train("regression")
    with pytest.raises(DGBDTError, match="categorical feature 3"):
        booster.get_split_value_histogram(3)


def test_dump_model_is_lightgbm_schema():
    """LightGBM: dump_model() has tree_info whose nodes' weights and counts
    add up (tests/python_package_test/utils.py assert_all_trees_valid)."""
    booster, _ = _train("regression")
    dump = booster.dump_model()

    def check(node):
        if "leaf_count" in node:
            return node["leaf_weight"], node["leaf_count"]
        lw, lc = check(node["left_child"])
        rw, rc = check(node["right_child"])
        assert abs(node["internal_weight"] - (lw + rw)) <= 1e-3
        assert node["internal_count"] == lc + rc
        return node["internal_weight"], node["internal_count"]

    for i, tree in enumerate(dump["tree_info"]):
        assert tree["tree_index"] == i
        check(tree["tree_structure"])
