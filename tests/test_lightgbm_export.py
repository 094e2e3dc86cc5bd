"""dgbdt models written in LightGBM's text format (dgbdt.models.lightgbm_export):
LightGBM itself loads them and predicts dgbdt's raw scores.

The comparison is within 1e-12 (both sum the same doubles in the same tree
order; the starting score folded into the first tree of a class adds the
same two numbers).  Test rows include NaN, +-inf and values beyond the
training range, so every default direction and the outermost thresholds are
exercised.
"""

import json

import numpy as np
import pytest

import dgbdt
from dgbdt.models.lightgbm_export import lightgbm_feature_names

lgb = pytest.importorskip("lightgbm")

TOL = 1e-12
BASE = {"num_leaves": 15, "min_data_in_leaf": 5, "learning_rate": 0.2, "verbosity": -1}


def _data(kind, n=1500, n_features=6, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, n_features))
    X[rng.random(X.shape) < 0.08] = np.nan
    X[:, 4] = np.round(X[:, 4])  # a column with zeros and few values
    s = np.nan_to_num(X[:, 0]) + np.sin(np.nan_to_num(X[:, 1]) * 2) + 0.5 * np.isnan(X[:, 2])
    if kind == "binary":
        y = (s + 0.3 * rng.normal(size=n) > 0).astype(np.float64)
    elif kind == "multiclass":
        y = np.digitize(s, [-0.5, 0.7]).astype(np.float64)
    else:
        y = s + 0.2 * rng.normal(size=n)
    return X, y


def _test_rows(X, seed=1):
    """Rows of X with columns shuffled independently, NaN, +-inf and far values."""
    rng = np.random.default_rng(seed)
    T = np.column_stack([rng.permutation(c) for c in X.T])
    extra = np.array([[np.nan] * X.shape[1], [np.inf] * X.shape[1], [-np.inf] * X.shape[1]])
    far = np.array([[1e300] * X.shape[1], [-1e300] * X.shape[1], [0.0] * X.shape[1]])
    return np.vstack([T, extra, far])


def _lightgbm_raw(text, X):
    return lgb.Booster(model_str=text).predict(X, raw_score=True)


def _dgbdt_raw(booster, X, **kw):
    return booster.predict(X, raw_score=True, **kw)


OBJECTIVES = {
    "regression": ("regression", {}),
    "regression_l1": ("regression", {}),
    "huber": ("regression", {"alpha": 0.7}),
    "binary": ("binary", {}),
    "multiclass": ("multiclass", {"num_class": 3}),
}


@pytest.mark.parametrize("objective", OBJECTIVES)
def test_lightgbm_predicts_the_exported_model(objective):
    kind, extra = OBJECTIVES[objective]
    X, y = _data(kind)
    params = {**BASE, "objective": objective, **extra}
    booster = dgbdt.train(params, dgbdt.Dataset(X, y), 25)
    text = booster.model_to_string(format="lightgbm")
    T = _test_rows(X)
    np.testing.assert_allclose(_lightgbm_raw(text, T), _dgbdt_raw(booster, T), rtol=0, atol=TOL)
    np.testing.assert_allclose(_lightgbm_raw(text, X), _dgbdt_raw(booster, X), rtol=0, atol=TOL)
    # LightGBM's own objective transform on top: its predict equals dgbdt's
    np.testing.assert_allclose(
        lgb.Booster(model_str=text).predict(T), booster.predict(T), rtol=1e-12, atol=1e-15
    )


def test_the_export_stops_at_the_best_iteration():
    X, y = _data("binary")
    Xv, yv = _data("binary", n=500, seed=5)
    train = dgbdt.Dataset(X, y)
    booster = dgbdt.train(
        {**BASE, "objective": "binary", "learning_rate": 0.5, "num_leaves": 31},
        train,
        200,
        valid_sets=[dgbdt.Dataset(Xv, yv, reference=train)],
        callbacks=[dgbdt.early_stopping(5, verbose=False)],
        keep_training_booster=True,  # (else train() returns the model cut at its best iteration)
    )
    assert 0 < booster.best_iteration < booster.current_iteration()
    text = booster.model_to_string(format="lightgbm")
    loaded = lgb.Booster(model_str=text)
    assert loaded.num_trees() == booster.best_iteration
    T = _test_rows(X)
    np.testing.assert_allclose(loaded.predict(T, raw_score=True), _dgbdt_raw(booster, T), atol=TOL)
    everything = booster.model_to_string(-1, format="lightgbm")
    assert lgb.Booster(model_str=everything).num_trees() == booster.current_iteration()


def test_a_continued_model_exports_with_its_first_trees():
    X, y = _data("regression")
    first = dgbdt.train({**BASE, "objective": "regression"}, dgbdt.Dataset(X, y), 10)
    more = dgbdt.train(
        {**BASE, "objective": "regression"}, dgbdt.Dataset(X, y), 10, init_model=first
    )
    assert more.current_iteration() == 20
    text = more.model_to_string(format="lightgbm")
    T = _test_rows(X)
    np.testing.assert_allclose(_lightgbm_raw(text, T), _dgbdt_raw(more, T), rtol=0, atol=TOL)


@pytest.mark.parametrize("kind, extra", [("binary", {}), ("multiclass", {"num_class": 3})])
def test_a_model_without_trees_is_its_starting_score(kind, extra):
    X, y = _data(kind)
    booster = dgbdt.Booster({**BASE, "objective": kind, **extra}, dgbdt.Dataset(X, y))
    assert booster.num_trees() == 0
    text = booster.model_to_string(format="lightgbm")
    loaded = lgb.Booster(model_str=text)
    assert loaded.num_trees() == booster.num_model_per_iteration()
    T = _test_rows(X)
    np.testing.assert_allclose(loaded.predict(T, raw_score=True), _dgbdt_raw(booster, T), atol=TOL)


def test_lightgbm_reads_the_header_as_it_writes_it():
    X, y = _data("multiclass")
    names = [f"f{i}" for i in range(X.shape[1])]
    booster = dgbdt.train(
        {**BASE, "objective": "multiclass", "num_class": 3},
        dgbdt.Dataset(X, y, feature_name=names),
        5,
    )
    text = booster.model_to_string(format="lightgbm")
    loaded = lgb.Booster(model_str=text)
    assert loaded.feature_name() == names
    assert loaded.num_model_per_iteration() == 3
    header = dict(line.split("=", 1) for line in text.split("\n\n")[0].splitlines()[1:])
    assert header["version"] == "v4" and header["objective"] == "multiclass num_class:3"
    assert header["num_class"] == header["num_tree_per_iteration"] == "3"
    assert header["max_feature_idx"] == str(X.shape[1] - 1)
    # split counts, as LightGBM counts them on the same trees
    importances = dict(zip(names, loaded.feature_importance("split"), strict=True))
    assert importances == dict(zip(names, booster.feature_importance("split"), strict=True))
    assert text.rstrip().endswith("pandas_categorical:null")


def test_feature_infos_are_lightgbms():
    # On the same data (every row in the bin sample) LightGBM writes the same ranges.
    X, y = _data("regression", n=800)
    # LightGBM drops (and writes none for) a feature of one value or none at all;
    # zeros and NaN are two bins.
    X[:, 3] = 3.0
    X[:, 5] = np.nan
    X[:, 2] = np.where(np.arange(len(X)) % 2, 0.0, np.nan)
    params = {**BASE, "objective": "regression"}
    ours = dgbdt.train(params, dgbdt.Dataset(X, y), 3).model_to_string(format="lightgbm")
    theirs = lgb.train({**params, "min_data_in_bin": 3}, lgb.Dataset(X, y), 3).model_to_string()

    def infos(text):
        return next(line for line in text.splitlines() if line.startswith("feature_infos="))

    assert infos(ours) == infos(theirs)
    assert infos(ours).split()[3] == infos(ours).split()[5] == "none"
    assert infos(ours).split()[2] == "[0:0]"


def test_names_lightgbm_cannot_hold_are_sanitised_and_kept():
    names = ["a b", 'q"x', "k:v", "a_b", "[x]", "ok"]
    clean, changed = lightgbm_feature_names(names)
    assert changed and clean == ["a_b", "q_x", "k_v", "a_b_2", "_x_", "ok"]
    # (the Dataset already turns a space into "_", as LightGBM's does)
    trained = ["a b", 'q"x', "k:v", "[x]", "ok"]
    X, y = _data("regression")
    X = X[:, : len(trained)]
    booster = dgbdt.train(
        {**BASE, "objective": "regression"}, dgbdt.Dataset(X, y, feature_name=trained), 5
    )
    text = booster.model_to_string(format="lightgbm")
    loaded = lgb.Booster(model_str=text)
    assert loaded.feature_name() == ["a_b", "q_x", "k_v", "_x_", "ok"]
    kept = next(line for line in text.splitlines() if line.startswith("dgbdt_feature_names:"))
    assert json.loads(kept[len("dgbdt_feature_names:") :]) == ["a_b", 'q"x', "k:v", "[x]", "ok"]
    T = _test_rows(X)
    np.testing.assert_allclose(loaded.predict(T, raw_score=True), _dgbdt_raw(booster, T), atol=TOL)
    assert lightgbm_feature_names(["x", "y"]) == (["x", "y"], False)


def test_an_all_values_left_nan_right_split_sends_infinity_left():
    # A feature whose only signal is NaN: its best split is "values left, NaN
    # right", at the last value bin's bound, +inf; LightGBM must read it back.
    rng = np.random.default_rng(3)
    X = rng.normal(size=(1000, 2))
    X[::3, 0] = np.nan
    y = np.isnan(X[:, 0]) * 2.0 + 0.01 * rng.normal(size=1000)
    booster = dgbdt.train(
        {**BASE, "objective": "regression", "num_leaves": 2}, dgbdt.Dataset(X, y), 1
    )
    text = booster.model_to_string(format="lightgbm")
    assert "threshold=inf" in text
    T = np.array([[np.inf, 0.0], [np.nan, 0.0], [1e308, 0.0], [-np.inf, 0.0]])
    np.testing.assert_allclose(_lightgbm_raw(text, T), _dgbdt_raw(booster, T), rtol=0, atol=TOL)


def test_save_model_writes_the_format_asked_for(tmp_path):
    X, y = _data("binary")
    booster = dgbdt.train({**BASE, "objective": "binary"}, dgbdt.Dataset(X, y), 5)
    path = tmp_path / "model.txt"
    booster.save_model(path, format="lightgbm")
    loaded = lgb.Booster(model_file=str(path))
    np.testing.assert_allclose(loaded.predict(X, raw_score=True), _dgbdt_raw(booster, X), atol=TOL)
    with pytest.raises(ValueError, match="format must be 'lightgbm' or 'json', got 'xgboost'"):
        booster.model_to_string(format="xgboost")


# --------------------------------------------------------------------------- #
# the command line: model_format=lightgbm and task=convert_model
# --------------------------------------------------------------------------- #
def _csv(path, X, y):
    rows = [np.insert(x, 0, t) for x, t in zip(X, y, strict=True)]
    path.write_text("".join(",".join(repr(float(v)) for v in r) + "\n" for r in rows))
    return path


def test_cli_train_writes_a_lightgbm_model(tmp_path):
    from dgbdt.cli.commands import run

    X, y = _data("binary", n=400)
    data, model = _csv(tmp_path / "train.csv", X, y), tmp_path / "model.txt"
    args = ["train", f"data={data}", "objective=binary", "num_trees=5", "verbosity=-1"]
    assert run([*args, f"output_model={model}", "model_format=lightgbm"]) == 0
    assert model.read_text().startswith("tree\nversion=v4\n")
    json_model = tmp_path / "model.json"
    assert run([*args, f"output_model={json_model}"]) == 0  # the default: dgbdt's JSON
    ours = dgbdt.Booster(model_file=str(json_model))
    np.testing.assert_allclose(
        lgb.Booster(model_file=str(model)).predict(X, raw_score=True),
        ours.predict(X, raw_score=True),
        rtol=0,
        atol=TOL,
    )


def test_cli_convert_model_writes_the_other_format(tmp_path, capsys):
    from dgbdt.cli.commands import run

    X, y = _data("regression", n=400)
    booster = dgbdt.train({**BASE, "objective": "regression"}, dgbdt.Dataset(X, y), 5)
    src, out = tmp_path / "m.json", tmp_path / "m.txt"
    booster.save_model(src)
    assert run(["convert_model", f"input_model={src}", f"convert_model={out}"]) == 0
    assert out.read_text() == booster.model_to_string(format="lightgbm")
    explicit = tmp_path / "again.json"
    args = ["task=convert_model", f"input_model={src}", f"convert_model={explicit}"]
    assert run([*args, "model_format=dgbdt"]) == 0
    assert explicit.read_text() == src.read_text()
    capsys.readouterr()
    assert run([*args, "model_format=onnx"]) == 1
    assert "model_format='onnx': use one of lightgbm, json, dgbdt" in capsys.readouterr().err
    assert run([*args, "convert_model_language=cpp"]) == 1
    assert "not to code" in capsys.readouterr().err
    assert run(["convert_model", f"input_model={src}"]) == 1
    assert "needs convert_model=FILE" in capsys.readouterr().err
    data = _csv(tmp_path / "t.csv", X, y)
    assert run(["train", f"data={data}", "model_format=txt", "verbosity=-1"]) == 1
    assert "model_format='txt'" in capsys.readouterr().err


def test_the_readme_deploy_examples_run(tmp_path, monkeypatch):
    import pathlib
    import re

    readme = (pathlib.Path(__file__).resolve().parents[1] / "README.md").read_text()
    section = readme[readme.index("## Deploy") :]
    section = section[: section.index("\n## ", 1)]
    blocks = re.findall(r"```python\n(.*?)\n```", section, flags=re.S)
    assert len(blocks) == 2
    monkeypatch.chdir(tmp_path)
    for code in blocks:
        exec(compile(code, "README.md, Deploy", "exec"), {})
    assert (tmp_path / "model.txt").read_text().startswith("tree\nversion=v4")


# --------------------------------------------------------------------------- #
# A feature name with a NUL character (review 12 of the LightGBM text-model
# export / import: the docstring tells the bug as it was found)
# --------------------------------------------------------------------------- #
QUIET = {"verbosity": -1, "verbose": -1}


def _xy(n=300, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return X, X[:, 0] + np.sin(2 * X[:, 1]) + 0.1 * rng.normal(size=n)


def test_an_exported_name_with_nul_loads_in_lightgbm():
    """LightGBM reads the model string as a C string: a NUL inside a feature
    name truncates it ("Wrong size of feature_names").  The sanitiser replaces
    whitespace and JSON characters but not NUL (nor other control characters)."""
    pd = pytest.importorskip("pandas")
    X, y = _xy()
    df = pd.DataFrame(X, columns=["a\x00b", "c", "d"])
    booster = dgbdt.train({**QUIET, "num_leaves": 4}, dgbdt.Dataset(df, y), 2)
    text = booster.model_to_string(format="lightgbm")
    theirs = lgb.Booster(model_str=text)
    np.testing.assert_array_equal(
        theirs.predict(X, raw_score=True), booster.predict(X, raw_score=True)
    )
