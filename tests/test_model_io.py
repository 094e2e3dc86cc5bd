"""Model files: JSON round trips, validation of bad files, atomic saves, pickling."""

import json
import os
import pickle

import numpy as np
import pytest

import dgbdt

QUIET = {"verbosity": -1}


def _data(objective, n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 6))
    X[rng.random(X.shape) < 0.15] = np.nan  # NaN in training and prediction data
    X[:, 5] = np.round(X[:, 5])  # a discrete column too
    signal = np.nan_to_num(X[:, 0]) + np.isnan(X[:, 1]) - np.nan_to_num(X[:, 2]) ** 2
    if objective == "binary":
        y = (signal + 0.5 * rng.normal(size=n) > 0).astype(float)
        params = {"objective": "binary"}
    elif objective == "multiclass":
        y = np.digitize(signal + 0.3 * rng.normal(size=n), [-1.0, 0.0, 1.0]).astype(float)
        params = {"objective": "multiclass", "num_class": 4}
    else:
        y = signal + 0.1 * rng.normal(size=n)
        params = {"objective": objective}
    return X, y, {**QUIET, **params, "num_leaves": 7}


@pytest.fixture(scope="module", params=["regression", "regression_l1", "binary", "multiclass"])
def trained(request):
    X, y, params = _data(request.param)
    booster = dgbdt.train(params, dgbdt.Dataset(X, y), 8)
    X_new, _, _ = _data(request.param, n=200, seed=1)
    return booster, np.vstack([X, X_new])


def _predictions(b, X):
    return (b.predict(X), b.predict(X, raw_score=True), b.predict(X, pred_leaf=True))


def _assert_identical(a, b, X):
    for pa, pb in zip(_predictions(a, X), _predictions(b, X), strict=True):
        assert pa.dtype == pb.dtype
        assert np.array_equal(pa, pb)


def test_save_load_file_round_trip(trained, tmp_path):
    b, X = trained
    path = tmp_path / "model.json"
    assert b.save_model(path) is b
    loaded = dgbdt.Booster(model_file=path)
    _assert_identical(b, loaded, X)
    loaded_str_path = dgbdt.Booster(model_file=str(path))
    _assert_identical(b, loaded_str_path, X)
    assert loaded.num_trees() == b.num_trees()
    assert loaded.feature_name() == b.feature_name()
    assert loaded.num_model_per_iteration() == b.num_model_per_iteration()
    # saving the reloaded model gives the same file
    path2 = tmp_path / "again.json"
    loaded.save_model(path2)
    assert path2.read_text() == path.read_text()


def test_model_string_round_trip(trained):
    b, X = trained
    text = b.model_to_string()
    assert isinstance(text, str)
    loaded = dgbdt.Booster(model_str=text)
    _assert_identical(b, loaded, X)
    assert loaded.model_to_string() == text


def test_pickle_and_joblib_round_trip(trained, tmp_path):
    b, X = trained
    b2 = pickle.loads(pickle.dumps(b))
    _assert_identical(b, b2, X)
    joblib = pytest.importorskip("joblib")
    path = tmp_path / "model.joblib"
    joblib.dump(b, path)
    _assert_identical(b, joblib.load(path), X)


def test_copy_round_trip(trained):
    import copy

    b, X = trained
    _assert_identical(b, copy.copy(b), X)
    _assert_identical(b, copy.deepcopy(b), X)


def test_saved_num_iteration_truncates(tmp_path):
    X, y, params = _data("binary")
    b = dgbdt.train(params, dgbdt.Dataset(X, y), 8)
    path = tmp_path / "m.json"
    b.save_model(path, num_iteration=3)
    loaded = dgbdt.Booster(model_file=path)
    assert loaded.current_iteration() == 3
    assert np.array_equal(loaded.predict(X), b.predict(X, num_iteration=3))
    short = dgbdt.Booster(model_str=b.model_to_string(num_iteration=5))
    assert np.array_equal(short.predict(X), b.predict(X, num_iteration=5))


def test_dump_model_structure(trained):
    b, _ = trained
    d = b.dump_model(format="json")
    assert isinstance(d, dict)
    assert d["format"] == "dgbdt-model"
    assert isinstance(d["version"], int) and d["version"] >= 1
    assert isinstance(d["trees"], list) and len(d["trees"]) == b.num_trees()
    assert d["num_features"] == 6 and len(d["feature_names"]) == 6
    t = d["trees"][0]
    n = t["num_leaves"]
    assert len(t["leaf_value"]) == n and len(t["split_feature"]) == n - 1
    # the dict is plain JSON data
    json.dumps(d, allow_nan=False)
    # dump_model(num_iteration) limits the trees
    assert (
        len(b.dump_model(num_iteration=2, format="json")["trees"])
        == 2 * b.num_model_per_iteration()
    )


# --------------------------------------------------------------------------- #
# bad files
# --------------------------------------------------------------------------- #
@pytest.fixture(scope="module")
def model_text():
    X, y, params = _data("binary")
    return dgbdt.train(params, dgbdt.Dataset(X, y), 3).model_to_string(format="json")


def _load_error(path):
    with pytest.raises((ValueError, OSError)) as info:
        dgbdt.Booster(model_file=path)
    return str(info.value)


def test_missing_file(tmp_path):
    path = tmp_path / "nowhere" / "model.json"
    with pytest.raises(FileNotFoundError) as info:
        dgbdt.Booster(model_file=path)
    assert str(path) in str(info.value)


def test_truncated_file(tmp_path, model_text):
    path = tmp_path / "truncated.json"
    path.write_text(model_text[: len(model_text) // 2])
    msg = _load_error(path)
    assert str(path) in msg
    assert "JSON" in msg or "truncated" in msg


def test_empty_file(tmp_path):
    path = tmp_path / "empty.json"
    path.write_text("")
    assert str(path) in _load_error(path)


def test_corrupted_json(tmp_path, model_text):
    path = tmp_path / "corrupt.json"
    path.write_text(model_text.replace('"trees":', '"trees" ', 1))
    msg = _load_error(path)
    assert str(path) in msg and "JSON" in msg


def test_json_that_is_not_a_model(tmp_path):
    for i, doc in enumerate([{"hello": "world"}, [1, 2, 3], "text", {"format": "xgboost"}]):
        path = tmp_path / f"other{i}.json"
        path.write_text(json.dumps(doc))
        msg = _load_error(path)
        assert str(path) in msg and "not a dgbdt model" in msg


def test_binary_garbage(tmp_path):
    path = tmp_path / "garbage.bin"
    path.write_bytes(bytes(range(256)) * 4)
    assert str(path) in _load_error(path)


@pytest.mark.parametrize("version", [999, 0, "1", None])
def test_wrong_version(tmp_path, model_text, version):
    doc = json.loads(model_text)
    doc["version"] = version
    path = tmp_path / "future.json"
    path.write_text(json.dumps(doc))
    msg = _load_error(path)
    assert str(path) in msg and "version" in msg


@pytest.mark.parametrize(
    "edit, words",
    [
        (lambda d: d.pop("trees"), ["trees"]),
        (lambda d: d["trees"][0].pop("leaf_value"), ["leaf_value"]),
        (lambda d: d["trees"][0]["leaf_value"].pop(), ["leaf_value"]),
        (lambda d: d["trees"][0]["split_feature"].__setitem__(0, 99), ["feature"]),
        (lambda d: d["trees"][0]["left_child"].__setitem__(0, 0), ["child"]),
        (lambda d: d["trees"][0]["leaf_value"].__setitem__(0, "x"), ["leaf_value", "not a number"]),
        (lambda d: d.__setitem__("init_score", []), ["init_score"]),
    ],
)
def test_invalid_model_content(model_text, edit, words):
    doc = json.loads(model_text)
    edit(doc)
    with pytest.raises(ValueError) as info:
        dgbdt.Booster(model_str=json.dumps(doc))
    for w in words:
        assert w in str(info.value)


def test_a_threshold_off_its_bin_is_refused(model_text):
    # Predict follows 'threshold', init_model's binned replay 'threshold_bin':
    # a file where they disagree would give two different models.
    doc = json.loads(model_text)
    tree = doc["trees"][0]
    tree["threshold"][0] = tree["threshold"][0] + 0.125
    with pytest.raises(
        ModelFormatError,
        match=r"tree 0: field 'threshold'\[0\] = .* is not the "
        "upper bound of its bin",
    ):
        dgbdt.Booster(model_str=json.dumps(doc))


def test_a_key_given_twice_is_refused(model_text):
    # json.loads keeps the last value silently: an appended key would change the model.
    doubled = model_text.rstrip()[:-1] + ', "objective": "regression"}'
    with pytest.raises(ModelFormatError, match="key 'objective' appears twice"):
        dgbdt.Booster(model_str=doubled)


def test_a_lightgbm_text_model_is_read(tmp_path):
    # (it was refused, naming its format, before dgbdt read LightGBM's models)
    lgb = pytest.importorskip("lightgbm")
    X, y, _ = _data("binary")
    path = tmp_path / "lgb.txt"
    lgb.train({"objective": "binary", "verbosity": -1}, lgb.Dataset(X, y), 2).save_model(path)
    ours = dgbdt.Booster(model_file=str(path))
    np.testing.assert_allclose(ours.predict(X), lgb.Booster(model_file=str(path)).predict(X))


def test_a_file_of_neither_format_names_both(tmp_path):
    path = tmp_path / "model.txt"
    path.write_text("num_leaves=3\nsomething else\n")
    msg = _load_error(path)
    assert "neither a dgbdt model (JSON) nor a LightGBM text model" in msg and str(path) in msg


def test_bad_model_string():
    with pytest.raises(ValueError, match="JSON"):
        dgbdt.Booster(model_str="{not json")


# --------------------------------------------------------------------------- #
# atomic saving
# --------------------------------------------------------------------------- #
def test_save_is_atomic_and_replaces(tmp_path, model_text):
    folder = tmp_path / "models"
    folder.mkdir()
    path = folder / "m.json"
    path.write_text("old content that is not a model")
    b = dgbdt.Booster(model_str=model_text)
    b.save_model(path)
    assert sorted(os.listdir(folder)) == ["m.json"]  # no temp files left
    assert path.read_text() == model_text
    # saving over it again, then a failing save, leaves only the good file
    b.save_model(str(path))
    assert sorted(os.listdir(folder)) == ["m.json"]
    with pytest.raises(OSError):
        b.save_model(folder)  # a folder cannot be replaced by a file
    assert sorted(os.listdir(folder)) == ["m.json"]
    assert path.read_text() == model_text
    dgbdt.Booster(model_file=path)


def test_saved_files_get_ordinary_permissions(tmp_path):
    import os
    import stat

    from dgbdt.models.json_file import write_atomic

    path = tmp_path / "m.json"
    write_atomic(path, "{}")
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o666 & ~umask


# --------------------------------------------------------------------------- #
# hostile model files (issue 10): every malformed file is a ModelFormatError
# naming the field (and tree); nothing else escapes, nothing is accepted wrongly
# --------------------------------------------------------------------------- #
from dgbdt.models.json_file import MAX_MODEL_BYTES, ModelFormatError  # noqa: E402

_TOKEN = "@@raw@@"


def _edited(model_text, edit, raw=None):
    """The model text after ``edit(doc)``; a field set to _TOKEN becomes the raw
    JSON text ``raw`` (NaN, Infinity, 1e400: tokens json.dumps cannot write)."""
    doc = json.loads(model_text)
    edit(doc)
    text = json.dumps(doc)
    return text if raw is None else text.replace(json.dumps(_TOKEN), raw)


def _refused(text, *words):
    with pytest.raises(ModelFormatError) as info:
        dgbdt.Booster(model_str=text)
    msg = str(info.value)
    for w in words:
        assert w in msg, msg
    return msg


def _set(path, value):
    """An edit setting doc[path[0]][path[1]]... = value."""

    def edit(doc):
        target = doc
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return edit


@pytest.mark.parametrize(
    "path, value, words",
    [
        (
            ("trees", 0, "split_feature", 0),
            2**31,
            ["tree 0", "'split_feature'[0] = 2147483648", "outside [0, 6)"],
        ),
        (("trees", 1, "left_child", 0), -100, ["tree 1", "'left_child'[0] = -100", "outside"]),
        (("trees", 0, "default_left", 0), 256, ["tree 0", "'default_left'[0] = 256", "0 to 15"]),
        (("nan_bins", 0), 2**40, ["'nan_bins'[0] = 1099511627776"]),
        (("trees", 0, "threshold", 0), [1], ["tree 0", "'threshold'[0] = [1]", "not a number"]),
        (("num_class",), 0, ["'num_class' = 0"]),
        (("trees", 0, "threshold_bin", 0), 2**63, ["tree 0", "'threshold_bin'[0]"]),
        (("trees", 0, "right_child", 0), -1, ["tree 0", "child"]),
        (("trees", 0, "leaf_depth", 0), -1, ["tree 0", "'leaf_depth'[0] = -1"]),
        (("trees", 0, "num_leaves"), 2**63, ["tree 0", "'num_leaves'"]),
    ],
)
def test_integers_out_of_range(model_text, path, value, words):
    _refused(_edited(model_text, _set(path, value)), *words)


def test_nested_threshold_list(model_text):
    # [[1]]: a list of lists where numbers belong (it reached Numba as a 2-D array)
    _refused(_edited(model_text, _set(("trees", 0, "threshold"), [[1]] * 6)), "'threshold'[0]")


@pytest.mark.parametrize("field", ["split_feature", "threshold_bin", "left_child", "default_left"])
@pytest.mark.parametrize("value", [3.7, 3.0, True, "3", None])
def test_floats_and_others_in_integer_fields(model_text, field, value):
    # 3.7 used to become 3 silently
    _refused(
        _edited(model_text, _set(("trees", 0, field, 0), value)),
        "tree 0",
        f"'{field}'[0]",
        "not an integer",
    )


@pytest.mark.parametrize(
    "key, value",
    [("num_class", 1.0), ("num_features", 6.0), ("num_tree_per_iteration", True), ("version", 1.0)],
)
def test_floats_in_integer_header_fields(model_text, key, value):
    _refused(_edited(model_text, _set((key,), value)), key)


@pytest.mark.parametrize(
    "raw", ["NaN", "Infinity", "-Infinity", "1e400", "null", '"0.5"', "[0.5]", "true"]
)
def test_thresholds_must_be_finite_numbers(model_text, raw):
    _refused(
        _edited(model_text, _set(("trees", 2, "threshold", 1), _TOKEN), raw),
        "tree 2",
        "'threshold'[1]",
    )


@pytest.mark.parametrize("raw", ["NaN", "Infinity", "1e400", "null", '"0"', "[0]"])
def test_init_score_must_be_finite(model_text, raw):
    # init_score [NaN] was accepted: predict wrote nan with exit status 0
    _refused(_edited(model_text, _set(("init_score", 0), _TOKEN), raw), "'init_score'[0]")


@pytest.mark.parametrize("value", ["x", [0.0, 1.0], {"a": 1}])
def test_init_score_wrongly_typed(model_text, value):
    _refused(_edited(model_text, _set(("init_score",), value)), "init_score")


@pytest.mark.parametrize("raw", ["NaN", "1e400", '"big"'])
def test_leaf_values_must_be_finite(model_text, raw):
    _refused(
        _edited(model_text, _set(("trees", 1, "leaf_value", 2), _TOKEN), raw),
        "tree 1",
        "'leaf_value'[2]",
    )


@pytest.mark.parametrize("value", ["lambdamart", "Binary", "", 1, None, ["binary"]])
def test_unknown_or_non_string_objective(model_text, value):
    _refused(_edited(model_text, _set(("objective",), value)), "'objective'", "known objective")


@pytest.mark.parametrize(
    "value, words",
    [
        ("x", ["'objective_params'", "object"]),
        ([1.0], ["'objective_params'"]),
        ({"sigmoid": "1"}, ["'objective_params'['sigmoid']", "not a finite number"]),
        ({"alpha": None}, ["'objective_params'['alpha']"]),
        ({"sigmoid": 0}, ["'objective_params'['sigmoid'] = 0", "> 0"]),
        ({"sigmoid": -1.5}, ["'objective_params'['sigmoid']", "> 0"]),
    ],
)
def test_objective_params_and_sigmoid(model_text, value, words):
    _refused(_edited(model_text, _set(("objective_params",), value)), *words)


def test_sigmoid_nan_token(model_text):
    _refused(
        _edited(model_text, _set(("objective_params", "sigmoid"), _TOKEN), "NaN"),
        "'objective_params'['sigmoid']",
    )


@pytest.mark.parametrize("value", ["1", 1.0, -1, 4, True, None])
def test_best_iteration(model_text, value):
    # the model has 3 iterations: 0..3 are valid
    _refused(_edited(model_text, _set(("best_iteration",), value)), "'best_iteration'")


def test_best_iteration_in_range_loads(model_text):
    b = dgbdt.Booster(model_str=_edited(model_text, _set(("best_iteration",), 3)))
    assert b.best_iteration == 3


@pytest.mark.parametrize(
    "value, words",
    [
        ("x", ["'bin_upper_bounds'", "list"]),
        ([[0.0]] * 5, ["'bin_upper_bounds'", "6 values"]),
        ([1.0] * 6, ["'bin_upper_bounds'[0]", "list"]),
        ([["a"]] * 6, ["'bin_upper_bounds'[0][0]", "not a number"]),
        ([[2.0, 1.0]] * 6, ["'bin_upper_bounds'[0]", "not sorted"]),
    ],
)
def test_bin_upper_bounds(model_text, value, words):
    _refused(_edited(model_text, _set(("bin_upper_bounds",), value)), *words)


def test_bin_mapper_both_or_neither(model_text):
    _refused(_edited(model_text, lambda d: d.pop("nan_bins")), "'nan_bins'", "both or neither")
    _refused(_edited(model_text, lambda d: d.pop("bin_upper_bounds")), "'bin_upper_bounds'")
    neither = _edited(model_text, lambda d: (d.pop("nan_bins"), d.pop("bin_upper_bounds")))
    assert dgbdt.Booster(model_str=neither).bin_mapper is None


def test_nan_bins_must_follow_the_value_bins(model_text):
    doc = json.loads(model_text)
    n_bounds = len(doc["bin_upper_bounds"][0])
    for bad in (0, n_bounds, n_bounds + 2, -2, 1.0):
        _refused(_edited(model_text, _set(("nan_bins", 0), bad)), "'nan_bins'[0]")


def test_threshold_bin_within_the_feature_bins(model_text):
    doc = json.loads(model_text)
    f = doc["trees"][0]["split_feature"][0]
    n_value_bins = len(doc["bin_upper_bounds"][f]) + 1
    _refused(
        _edited(model_text, _set(("trees", 0, "threshold_bin", 0), n_value_bins)),
        "tree 0",
        "'threshold_bin'[0]",
        f"feature {f}",
    )


@pytest.mark.parametrize(
    "value, words",
    [
        ("x", ["'params'", "object"]),
        ({"a": {"b": 1}}, ["'params'['a']"]),
        ({"metric": [["auc"]]}, ["'params'['metric']"]),
        ({"ignore_column": 5}, ["'params'['ignore_column'] = 5", "string"]),
        ({"label_column": 0}, ["'params'['label_column']"]),
        ({"zero_based": True}, ["'params'['zero_based']"]),
    ],
)
def test_params(model_text, value, words):
    _refused(_edited(model_text, _set(("params",), value)), *words)


def test_stored_ignore_column_not_a_string_is_one_cli_line(model_text, tmp_path, capsys):
    # it was an AttributeError traceback from the command line
    from dgbdt.cli.commands import run

    model = tmp_path / "m.json"
    model.write_text(_edited(model_text, _set(("params", "ignore_column"), 5)))
    data = tmp_path / "x.csv"
    data.write_text("0,1,2,3,4,5,6\n")
    assert (
        run(
            [
                "predict",
                f"data={data}",
                f"input_model={model}",
                f"output_result={tmp_path / 'p.txt'}",
            ]
        )
        == 1
    )
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "'params'['ignore_column'] = 5" in err
    assert not (tmp_path / "p.txt").exists()


def test_nan_init_score_cli_predict_exits_1(model_text, tmp_path, capsys):
    # it wrote nan predictions with exit status 0
    from dgbdt.cli.commands import run

    model = tmp_path / "m.json"
    model.write_text(_edited(model_text, _set(("init_score", 0), _TOKEN), "NaN"))
    data = tmp_path / "x.csv"
    data.write_text("0,1,2,3,4,5,6\n")
    assert (
        run(
            [
                "predict",
                f"data={data}",
                f"input_model={model}",
                f"output_result={tmp_path / 'p.txt'}",
            ]
        )
        == 1
    )
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "'init_score'[0] = NaN" in err and str(model) in err
    assert not (tmp_path / "p.txt").exists()


@pytest.mark.parametrize(
    "key, value",
    [
        ("num_class", 2),
        ("num_tree_per_iteration", 2),
        ("num_class", 2**31),
        ("num_features", -1),
        ("feature_names", ["a"] * 6 + [1]),
        ("feature_names", [1, 2, 3, 4, 5, 6]),
    ],
)
def test_header_consistency(model_text, key, value):
    _refused(_edited(model_text, _set((key,), value)), key)


def test_multiclass_needs_two_classes(model_text):
    edit = _set(("objective",), "multiclass")
    _refused(_edited(model_text, edit), "'num_class' = 1", "multiclass")


@pytest.mark.parametrize("depth", [100, 100_000])
def test_deep_nesting(model_text, depth):
    # 100,000 levels used to be a RecursionError
    nested = "[" * depth + "]" * depth
    for text in (
        nested,
        model_text.replace('"init_score":[', '"init_score":[' + "[" * depth, 1),
        model_text.replace('"threshold":[', '"threshold":[' + nested + ",", 1),
    ):
        with pytest.raises(ModelFormatError):
            dgbdt.Booster(model_str=text)
    # an unknown top-level key is ignored (later versions), unless too deep to parse
    extra = model_text.replace('"params":', f'"deep":{nested},"params":', 1)
    if depth > 1000:
        _refused(extra, "nested too deeply")
    else:
        dgbdt.Booster(model_str=extra)


def test_huge_integer_literals(model_text):
    text = model_text.replace('"num_class":1', '"num_class":' + "9" * 5000, 1)
    _refused(text)
    text = _edited(model_text, _set(("trees", 0, "threshold", 0), _TOKEN), "9" * 400)
    _refused(text, "'threshold'[0]", "not a finite number")


def test_cyclic_and_shared_child_links(model_text):
    doc = json.loads(model_text)
    tree = next(i for i, t in enumerate(doc["trees"]) if t["num_leaves"] >= 4)
    t = doc["trees"][tree]
    node = next(k for k in range(1, t["num_leaves"] - 1))
    # a link back to the root, to the node itself, and a second link to one node
    for k, side, c in (
        (node, "left_child", 0),
        (node, "right_child", node),
        (0, "left_child", t["right_child"][0] if t["right_child"][0] >= 0 else node),
    ):
        edited = _edited(model_text, _set(("trees", tree, side, k), c))
        if edited != model_text:
            _refused(edited, f"tree {tree}", "child")
    # a cycle away from the root: every node keeps one parent, but 1 and 2
    # only reach each other
    cyc = {
        "num_leaves": 4,
        "split_feature": [0, 0, 0],
        "threshold": [0.0] * 3,
        "threshold_bin": [0] * 3,
        "default_left": [0] * 3,
        "left_child": [-1, 2, 1],
        "right_child": [-2, -3, -4],
        "split_gain": [0.0] * 3,
        "internal_value": [0.0] * 3,
        "internal_weight": [0.0] * 3,
        "internal_count": [0.0] * 3,
        "leaf_value": [0.0] * 4,
        "leaf_weight": [0.0] * 4,
        "leaf_count": [0.0] * 4,
        "leaf_depth": [1, 1, 2, 2],
    }
    _refused(_edited(model_text, _set(("trees", 0), cyc)), "tree 0", "child")


@pytest.mark.parametrize("value", [1e308, 5e307])
def test_raw_scores_must_stay_finite(model_text, value):
    # each value is finite, their sum is not (or leaves no room): predictions would be inf/nan
    def edit(doc):
        for t in doc["trees"]:
            t["leaf_value"] = [value] * len(t["leaf_value"])

    _refused(_edited(model_text, edit), "raw scores", "finite")
    _refused(_edited(model_text, _set(("init_score", 0), 1e308)), "'init_score'[0]")


def test_largest_scores_allowed_predict_finite_without_warnings(model_text):
    import warnings

    def edit(doc):
        doc["objective_params"]["sigmoid"] = 1e300
        for t in doc["trees"]:
            t["leaf_value"] = [v * 1e306 for v in t["leaf_value"]]

    b = dgbdt.Booster(model_str=_edited(model_text, edit))
    X = np.random.default_rng(0).normal(size=(50, 6))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for out in (b.predict(X), b.predict(X, raw_score=True)):
            assert np.all(np.isfinite(out))


def test_largest_float_threshold_is_infinity(model_text):
    # the largest float64 stands for +inf in thresholds (the last bin's bound): legitimate
    def last_bin(d):
        tree = d["trees"][0]
        tree["threshold"][0] = float(np.finfo(np.float64).max)
        tree["threshold_bin"][0] = len(d["bin_upper_bounds"][tree["split_feature"][0]])

    b = dgbdt.Booster(model_str=_edited(model_text, last_bin))
    assert np.isinf(b._flat_trees()["threshold"][0])


def test_missing_tree_fields_and_wrong_containers(model_text):
    _refused(_edited(model_text, lambda d: d["trees"][1].pop("num_leaves")), "tree 1", "num_leaves")
    _refused(_edited(model_text, lambda d: d["trees"][1].pop("leaf_depth")), "tree 1", "leaf_depth")
    _refused(_edited(model_text, _set(("trees", 1), [])), "tree 1")
    _refused(_edited(model_text, _set(("trees",), {"0": {}})), "'trees'")
    _refused(_edited(model_text, _set(("trees", 1, "leaf_value"), "x")), "tree 1", "leaf_value")
    _refused(
        _edited(
            model_text,
            lambda d: (
                d["trees"].append(d["trees"][0])
                if d["num_tree_per_iteration"] > 1
                else d.__setitem__("num_tree_per_iteration", 2)
            ),
        )
    )


def test_model_str_type():
    with pytest.raises(TypeError, match="model_str"):
        dgbdt.Booster(model_str=12)
    with pytest.raises(ModelFormatError, match="UTF-8"):
        dgbdt.Booster(model_str=b"\xff\xfe")


# -- files that are not regular, too large, or not UTF-8 ------------------------
def _load_in_thread(path):
    """Booster(model_file=path) in a thread: a FIFO used to block in open()."""
    import threading

    result = {}

    def load():
        try:
            dgbdt.Booster(model_file=path)
        except Exception as exc:  # noqa: BLE001
            result["exc"] = exc

    thread = threading.Thread(target=load, daemon=True)
    thread.start()
    thread.join(20)
    if thread.is_alive():
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)  # release the blocked reader
        os.close(fd)
        pytest.fail(f"loading {path} blocked")
    return result.get("exc")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_fifo_model_file_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "model.fifo"
    os.mkfifo(fifo)
    exc = _load_in_thread(fifo)
    assert isinstance(exc, ModelFormatError) and "not a regular file (a FIFO)" in str(exc)


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero")
def test_dev_zero_model_is_refused_without_reading():
    # it was read without bound: MemoryError
    with pytest.raises(ModelFormatError, match="not a regular file"):
        dgbdt.Booster(model_file="/dev/zero")


def test_directory_model_is_refused(tmp_path):
    with pytest.raises(ModelFormatError, match="not a regular file .a directory"):
        dgbdt.Booster(model_file=tmp_path)


def test_model_file_size_limit(tmp_path, model_text, monkeypatch):
    import dgbdt.models.json_file as model_io

    assert MAX_MODEL_BYTES >= 1 << 30
    path = tmp_path / "m.json"
    path.write_text(model_text)
    monkeypatch.setattr(model_io, "MAX_MODEL_BYTES", len(model_text) - 1)
    with pytest.raises(ModelFormatError, match="larger than"):
        dgbdt.Booster(model_file=path)
    monkeypatch.setattr(model_io, "MAX_MODEL_BYTES", len(model_text))
    dgbdt.Booster(model_file=path)


def test_model_file_not_utf8(tmp_path, model_text):
    path = tmp_path / "m.json"
    path.write_bytes(model_text.encode().replace(b'"Column_0"', b'"Column_\xe9"', 1))
    with pytest.raises(ModelFormatError, match="not UTF-8"):
        dgbdt.Booster(model_file=path)


# -- saving: refused before anything is written; an existing file survives --------
def test_save_model_to_a_directory_or_missing_folder(tmp_path, model_text):
    b = dgbdt.Booster(model_str=model_text)
    with pytest.raises(IsADirectoryError, match="is a directory"):
        b.save_model(tmp_path)
    assert os.listdir(tmp_path) == []
    with pytest.raises(FileNotFoundError, match="does not exist"):
        b.save_model(tmp_path / "nowhere" / "m.json")
    assert os.listdir(tmp_path) == []


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_save_model_over_a_fifo_is_refused(tmp_path, model_text):
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    with pytest.raises(OSError, match="not a regular file .a FIFO"):
        dgbdt.Booster(model_str=model_text).save_model(fifo)
    assert sorted(os.listdir(tmp_path)) == ["out.fifo"]


def test_failed_save_keeps_the_existing_file(tmp_path, model_text, monkeypatch):
    path = tmp_path / "m.json"
    path.write_text("the old model")

    def broken_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        dgbdt.Booster(model_str=model_text).save_model(path)
    assert path.read_text() == "the old model"
    assert sorted(os.listdir(tmp_path)) == ["m.json"]


# --------------------------------------------------------------------------- #
# Booster.predict: LightGBM's argument order, clear TypeErrors, feature names
# --------------------------------------------------------------------------- #
@pytest.fixture(scope="module")
def named():
    pd = pytest.importorskip("pandas")
    X, y, params = _data("regression")
    df = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    return dgbdt.train(params, dgbdt.Dataset(df, y), 4), df


def test_predict_positional_order_is_lightgbms(named):
    b, df = named
    X = df.to_numpy()
    # predict(data, start_iteration, num_iteration, raw_score, pred_leaf)
    np.testing.assert_array_equal(
        b.predict(X, 1, 2), b.predict(X, start_iteration=1, num_iteration=2)
    )
    np.testing.assert_array_equal(b.predict(X, 0, None, True), b.predict(X, raw_score=True))
    np.testing.assert_array_equal(b.predict(X, 0, None, False, True), b.predict(X, pred_leaf=True))
    np.testing.assert_array_equal(b.predict(data=X), b.predict(X))
    np.testing.assert_array_equal(  # LightGBM's 6th is pred_contrib
        b.predict(X, 0, None, False, False, True), b.predict(X, pred_contrib=True)
    )


@pytest.mark.parametrize(
    "kw, name",
    [
        ({"num_iteration": "a"}, "num_iteration"),
        ({"start_iteration": "a"}, "start_iteration"),
        ({"num_iteration": 2.5}, "num_iteration"),
        ({"start_iteration": True}, "start_iteration"),
    ],
)
def test_predict_iteration_arguments_name_the_parameter(named, kw, name):
    b, df = named
    with pytest.raises(TypeError, match=name):
        b.predict(df, **kw)


def test_iteration_arguments_elsewhere(named):
    b, _ = named
    with pytest.raises(TypeError, match="iteration"):
        b.feature_importance(iteration="a")
    with pytest.raises(TypeError, match="num_iteration"):
        b.model_to_string(num_iteration="a")
    assert b.predict(np.zeros((1, 6)), num_iteration=np.int64(2)).shape == (1,)


def test_predict_unknown_keyword_arguments(named):
    b, df = named
    with pytest.raises(TypeError, match="'num_treads'"):
        b.predict(df, num_treads=2)
    with pytest.raises(TypeError, match="num_threads must be an integer"):
        b.predict(df, num_threads="2")
    with pytest.raises(TypeError, match="num_threads and n_jobs"):
        b.predict(df, num_threads=1, n_jobs=1)


def test_predict_num_threads_applies_while_predicting_and_is_restored(named, monkeypatch):
    """LightGBM's predict takes num_threads through **kwargs; <= 0 is all cores."""
    import numba

    import dgbdt.models.model as booster_module

    b, df = named
    seen, kernel = [], booster_module.predict_raw

    def spy(*args):
        seen.append(numba.get_num_threads())
        return kernel(*args)

    monkeypatch.setattr(booster_module, "predict_raw", spy)
    most = numba.config.NUMBA_NUM_THREADS
    before = numba.get_num_threads()
    expected = b.predict(df)
    for kw, threads in (
        ({"num_threads": 1}, 1),
        ({"num_threads": 0}, most),
        ({"n_jobs": -1}, most),
        ({"nthread": 10**6}, most),
    ):
        seen.clear()
        np.testing.assert_array_equal(b.predict(df, **kw), expected)
        assert seen == [threads] and numba.get_num_threads() == before, kw


def test_predict_num_threads_with_two_threads_available(tmp_path):
    """The same with two threads available (the tests run with one)."""
    import subprocess
    import sys

    script = (
        "import numba, numpy as np, dgbdt\n"
        "rng = np.random.default_rng(0); X = rng.normal(size=(300, 3))\n"
        "b = dgbdt.train({'verbosity': -1}, dgbdt.Dataset(X, X[:, 0]), 3)\n"
        "numba.set_num_threads(2)\n"
        "import dgbdt.models.model as m; seen = []; k = m.predict_raw\n"
        "m.predict_raw = lambda *a: (seen.append(numba.get_num_threads()), k(*a))[1]\n"
        "p = b.predict(X, num_threads=1); q = b.predict(X, num_threads=-1)\n"
        "assert seen == [1, 2] and numba.get_num_threads() == 2, seen\n"
        "assert np.array_equal(p, q)\n"
    )
    env = {**os.environ, "NUMBA_NUM_THREADS": "2"}
    proc = subprocess.run(
        [sys.executable, "-c", script],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]


def test_predict_refuses_category_columns_as_training_does(named):
    pd = pytest.importorskip("pandas")
    b, df = named
    coded = df.assign(f5=pd.Categorical(df["f5"]))
    with pytest.raises(TypeError, match="Column 'f5' of X is a category column.*\\.cat\\.codes"):
        b.predict(coded)


def test_predict_refuses_a_dataset(named):
    b, df = named
    for ds in (dgbdt.Dataset(df, np.zeros(len(df))), dgbdt.Dataset(df.to_numpy())):
        with pytest.raises(TypeError, match="not a dgbdt.Dataset.*use raw data instead"):
            b.predict(ds)


def test_predict_complex_input_is_a_type_error(named):
    import scipy.sparse as sp

    b, df = named
    X = df.to_numpy()[:5] + 1j
    # the imaginary part used to be dropped
    for bad in (X, sp.csr_matrix(X), X.astype(object), df.head(5).astype(complex)):
        with pytest.raises(TypeError, match="complex|numeric"):
            b.predict(bad)


def test_predict_dataframe_columns_must_be_the_models(named):
    b, df = named
    reordered = df[list(df.columns[::-1])]
    with pytest.raises(ValueError, match=r"Expected 'f0' at position 0 but found 'f5'"):
        b.predict(reordered)
    renamed = df.rename(columns={"f3": "x"})
    with pytest.raises(
        ValueError, match=r"Expected 'f3' at position 3 but found 'x'.*validate_features=False"
    ):
        b.predict(renamed)
    # positional use on request; the same columns in order are fine
    np.testing.assert_array_equal(
        b.predict(reordered, validate_features=False), b.predict(reordered.to_numpy())
    )
    np.testing.assert_array_equal(b.predict(df), b.predict(df.to_numpy()))
    with pytest.raises(ValueError, match=r"features in data \(7\)"):  # the width error first
        b.predict(df.assign(extra=1.0))


def test_model_without_feature_names_takes_any_dataframe():
    pd = pytest.importorskip("pandas")
    X, y, params = _data("regression")
    b = dgbdt.train(params, dgbdt.Dataset(X, y), 2)
    df = pd.DataFrame(X, columns=list("abcdef"))
    np.testing.assert_array_equal(b.predict(df), b.predict(X))


def test_dataframe_with_non_numeric_column(named):
    b, df = named
    with pytest.raises(TypeError, match="numeric"):
        b.predict(df.assign(f2="text"))


def test_predict_from_a_missing_path_names_it(named, tmp_path):
    """LightGBM's predict reads a data file given by its path (issue 28; see
    tests/test_dropin_models.py): a missing one is named."""
    b, _ = named
    for path in (str(tmp_path / "x.csv"), tmp_path / "x.csv"):
        with pytest.raises(FileNotFoundError, match="x.csv"):
            b.predict(path)


def test_value_ranges_round_trip_and_are_optional(model_text):
    doc = json.loads(model_text)
    assert len(doc["value_ranges"]) == doc["num_features"]
    assert all(r is None or (len(r) == 2 and r[0] <= r[1]) for r in doc["value_ranges"])
    again = dgbdt.Booster(model_str=model_text).model_to_string(format="json")
    assert json.loads(again)["value_ranges"] == doc["value_ranges"]
    del doc["value_ranges"]  # a model written before the field existed
    old = dgbdt.Booster(model_str=json.dumps(doc))
    assert "value_ranges" not in json.loads(old.model_to_string(format="json"))
    infos = next(
        line
        for line in old.model_to_string(format="lightgbm").splitlines()
        if line.startswith("feature_infos=")
    )
    assert set(infos[len("feature_infos=") :].split()) == {"none"}


@pytest.mark.parametrize(
    "value, words",
    [
        ([[0.0, 1.0]], ["value_ranges"]),  # too short
        ("x", ["value_ranges"]),
        ([[2.0, 1.0]] * 6, ["value_ranges'[0]", "larger"]),
        ([[0.0, "a"]] * 6, ["value_ranges'[0]", "not a number"]),
        ([[0.0]] * 6, ["value_ranges'[0]"]),
    ],
)
def test_bad_value_ranges_are_refused(model_text, value, words):
    assert json.loads(model_text)["num_features"] == 6
    _refused(_edited(model_text, _set(["value_ranges"], value)), *words)


@pytest.mark.parametrize(
    "edit, words",
    [
        (lambda d: d.__setitem__("lightgbm_feature_infos", ["none"]), ["lightgbm_feature_infos"]),
        (lambda d: d.__setitem__("lightgbm_feature_infos", ["a b"] * 6), ["one word per feature"]),
        (lambda d: d["trees"][0].__setitem__("shrinkage", -1.0), ["shrinkage", "positive"]),
        (lambda d: d["trees"][0].__setitem__("shrinkage", "x"), ["shrinkage"]),
        (lambda d: d["trees"][0].__setitem__("cat_boundaries", [0, 1]), ["cat_threshold"]),
        (lambda d: d.__setitem__("pandas_categorical", [1, 2]), ["pandas_categorical"]),
    ],
)
def test_bad_fields_of_models_read_from_lightgbm_are_refused(model_text, edit, words):
    _refused(_edited(model_text, edit), *words)


def test_a_categorical_node_in_a_model_with_bins_is_refused(model_text):
    def edit(doc):
        doc["trees"][0]["default_left"][0] = 4
        doc["trees"][0]["cat_boundaries"] = [0, 1]
        doc["trees"][0]["cat_threshold"] = [5]
        doc["trees"][0]["threshold"][0] = 0.0
        doc["trees"][0]["threshold_bin"][0] = 0

    _refused(_edited(model_text, edit), "node 0 is a categorical split", "bins say is numeric")
