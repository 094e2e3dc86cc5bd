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
    X[rng.random(X.shape) < 0.15] = np.nan          # NaN in training and prediction data
    X[:, 5] = np.round(X[:, 5])                    # a discrete column too
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
    for pa, pb in zip(_predictions(a, X), _predictions(b, X)):
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
    d = b.dump_model()
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
    assert len(b.dump_model(num_iteration=2)["trees"]) == 2 * b.num_model_per_iteration()


# --------------------------------------------------------------------------- #
# bad files
# --------------------------------------------------------------------------- #
@pytest.fixture(scope="module")
def model_text():
    X, y, params = _data("binary")
    return dgbdt.train(params, dgbdt.Dataset(X, y), 3).model_to_string()


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


@pytest.mark.parametrize("edit, words", [
    (lambda d: d.pop("trees"), ["trees"]),
    (lambda d: d["trees"][0].pop("leaf_value"), ["leaf_value"]),
    (lambda d: d["trees"][0]["leaf_value"].pop(), ["leaf_value"]),
    (lambda d: d["trees"][0]["split_feature"].__setitem__(0, 99), ["feature"]),
    (lambda d: d["trees"][0]["left_child"].__setitem__(0, 0), ["child"]),
    (lambda d: d["trees"][0]["leaf_value"].__setitem__(0, "x"), ["leaf_value", "not a number"]),
    (lambda d: d.__setitem__("init_score", []), ["init_score"]),
])
def test_invalid_model_content(model_text, edit, words):
    doc = json.loads(model_text)
    edit(doc)
    with pytest.raises(ValueError) as info:
        dgbdt.Booster(model_str=json.dumps(doc))
    for w in words:
        assert w in str(info.value)


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
    assert sorted(os.listdir(folder)) == ["m.json"]     # no temp files left
    assert path.read_text() == model_text
    # saving over it again, then a failing save, leaves only the good file
    b.save_model(str(path))
    assert sorted(os.listdir(folder)) == ["m.json"]
    with pytest.raises(OSError):
        b.save_model(folder)                           # a folder cannot be replaced by a file
    assert sorted(os.listdir(folder)) == ["m.json"]
    assert path.read_text() == model_text
    dgbdt.Booster(model_file=path)


def test_saved_files_get_ordinary_permissions(tmp_path):
    import os
    import stat
    from dgbdt.model_io import write_atomic
    path = tmp_path / "m.json"
    write_atomic(path, "{}")
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o666 & ~umask
