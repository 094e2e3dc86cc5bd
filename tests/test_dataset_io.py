"""The rest of LightGBM's Dataset API: ``subset``, ``save_binary`` / ``Dataset(binary)``
and ``Dataset(path)`` of text files; the command line's ``task=save_binary`` and
training from the ``.bin`` file; on 2 ranks (tests/mpi/dataset_io.py).

"The same model" is the model text, byte for byte: a subset trains as a Dataset
of those rows built with the parent's bins, a loaded file as the Dataset it was
saved from, a text file as its arrays.  The loader is fuzzed: every truncated or
mutated file loads consistently or raises a ValueError naming the file.
"""

import hashlib
import json
import os
import struct
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from mpi_launch import run_mpi
from test_distributed import assert_same_trees

import dgbdt
from dgbdt.cli.commands import run
from dgbdt.data import binary_file as dataset_file

FUZZ = settings(
    deadline=None,
    max_examples=int(os.environ.get("DGBDT_FUZZ_EXAMPLES", 60)),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
BINARY = {"objective": "binary", "num_leaves": 7, "min_data_in_leaf": 5, "verbosity": -1}
REGRESSION = {**BINARY, "objective": "regression"}
RANKING = {"objective": "lambdarank", "num_leaves": 7, "min_data_in_leaf": 2, "verbosity": -1}


def model(params, dataset, rounds=4):
    return dgbdt.train(params, dataset, rounds).model_to_string()


def dense_data(n=400, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    X[rng.random(X.shape) < 0.1] = np.nan
    y = (np.nan_to_num(X[:, 0]) + 0.5 * np.nan_to_num(X[:, 1]) > 0).astype(float)
    return X, y, rng.uniform(0.5, 2.0, n), rng.normal(0, 0.1, n)


def bundled_data(n=400, seed=1):
    """One-hot columns (an EFB bundle), rare columns (the sparse part), dense ones."""
    rng = np.random.default_rng(seed)
    one_hot = np.eye(6)[rng.integers(0, 6, n)] * rng.random((n, 1)).round(1)
    rare = sp.random(n, 5, density=0.04, random_state=seed).toarray()
    X = np.hstack([one_hot, rare, rng.normal(size=(n, 2))])
    return X, X[:, 0] + X[:, -1] + rng.normal(0, 0.1, n)


def ranking_data(sizes=(8, 12, 10, 6, 14), seed=2):
    rng = np.random.default_rng(seed)
    n = sum(sizes)
    X = rng.normal(size=(n, 3))
    return X, rng.integers(0, 3, n).astype(float), np.array(sizes), rng.integers(0, 4, n)


def some_rows(n, seed=3, share=0.6):
    return np.random.default_rng(seed).permutation(n)[: int(n * share)]  # unsorted


# -- subset ---------------------------------------------------------------------
@pytest.mark.parametrize("when", ["before construct", "after construct"])
def test_subset_trains_the_model_of_a_dataset_of_those_rows(when):
    X, y, w, init = dense_data()
    rows = some_rows(len(y))
    parent = dgbdt.Dataset(X, y, weight=w, init_score=init, params=BINARY)
    if when == "after construct":
        parent.construct()
        assert parent.get_data() is None  # raw data freed: the subset reads the bin store
    subset = parent.subset(rows)
    got = model(BINARY, subset)
    kept = np.sort(rows)  # LightGBM sorts used_indices
    np.testing.assert_array_equal(subset.get_label(), y[kept])
    np.testing.assert_array_equal(subset.get_weight(), w[kept])
    np.testing.assert_array_equal(subset.get_init_score(), init[kept])
    reference = dgbdt.Dataset(X, y, params=BINARY)
    direct = dgbdt.Dataset(X[kept], y[kept], weight=w[kept], init_score=init[kept])
    direct.reference, direct.params = reference, BINARY
    assert got == model(BINARY, direct)
    assert subset.bin_mapper is parent.bin_mapper


@pytest.mark.parametrize("kind", ["bundles", "sparse", "frame"])
def test_subset_of_stored_bundles_sparse_columns_and_categories(kind):
    if kind == "frame":
        rng = np.random.default_rng(4)
        X = pd.DataFrame(
            {
                "city": pd.Categorical(rng.choice(["a", "b", "c", "d"], 400)),
                "x": rng.normal(size=400),
            }
        )
        y = (X["city"] == "b") + X["x"] + rng.normal(0, 0.1, 400)
    else:
        X, y = bundled_data()
        X = sp.csr_matrix(X) if kind == "sparse" else X
    rows = np.sort(some_rows(400))
    for freed in (False, True):
        parent = dgbdt.Dataset(X, y, params=REGRESSION)
        if freed:
            parent.construct()
        reference = dgbdt.Dataset(X, y, params=REGRESSION)
        taken = X.iloc[rows] if kind == "frame" else X[rows]
        direct = dgbdt.Dataset(taken, y[rows], reference=reference, params=REGRESSION)
        assert model(REGRESSION, parent.subset(rows)) == model(REGRESSION, direct)
    if kind == "bundles":
        assert parent.store.bundles and parent.store.n_sparse  # both parts were read


def test_subset_takes_whole_queries_and_their_positions():
    X, y, group, position = ranking_data()
    parent = dgbdt.Dataset(X, y, group=group, position=position, params=RANKING)
    rows = np.r_[8:20, 30:36]  # queries 1 and 3
    subset = parent.subset(rows)
    np.testing.assert_array_equal(subset.get_group(), [12, 6])
    np.testing.assert_array_equal(subset.get_position(), position[rows])
    direct = dgbdt.Dataset(
        X[rows], y[rows], group=[12, 6], position=position[rows], reference=parent
    )
    assert model(RANKING, subset, 3) == model(RANKING, direct, 3)
    with pytest.raises(ValueError, match=r"takes 4 of the 12 rows of query 1 \(rows 8..19\)"):
        parent.subset(np.r_[0:12])
    with pytest.raises(ValueError, match="repeats row 8"):
        parent.subset(np.r_[8:20, 8])


def test_subset_argument_errors():
    X, y, _, _ = dense_data(50)
    ds = dgbdt.Dataset(X, y)
    with pytest.raises(ValueError, match="holds row 50; the Dataset has rows 0..49"):
        ds.subset([3, 50])
    with pytest.raises(ValueError, match="used_indices must be a 1-D list of row numbers"):
        ds.subset(np.ones(50, bool))
    assert ds.subset([5, 5, 1]).num_data() == 3  # repeats are allowed without queries


# -- save_binary / Dataset(binary) -------------------------------------------------
def _round_trip(tmp_path, dataset, params, rounds=4, name="d.bin"):
    path = tmp_path / name
    dataset.save_binary(path)
    assert dataset_file.is_dataset_file(path)
    loaded = dgbdt.Dataset(path)
    assert model(params, loaded, rounds) == model(params, dataset, rounds)
    return loaded


def test_save_binary_round_trip_gives_the_same_model(tmp_path):
    X, y, w, init = dense_data()
    ds = dgbdt.Dataset(X, y, weight=w, init_score=init, params={**BINARY, "max_bin": 63})
    loaded = _round_trip(tmp_path, ds, BINARY)
    for name in ("label", "weight", "init_score"):
        np.testing.assert_array_equal(getattr(loaded, name), getattr(ds, name))
    assert loaded.params["max_bin"] == 63 and loaded.raw_data is None
    assert loaded.get_data() == str(tmp_path / "d.bin")  # (LightGBM: the file's path)
    assert loaded.get_feature_name() == ds.get_feature_name()
    # arguments given with the file replace its fields
    again = dgbdt.Dataset(tmp_path / "d.bin", label=1 - y, feature_name=list("abcde"))
    np.testing.assert_array_equal(again.get_label(), 1 - y)
    assert again.get_feature_name() == list("abcde")


@pytest.mark.parametrize("kind", ["bundles", "sparse", "categorical", "ranking"])
def test_save_binary_round_trip_of_stores_categories_and_queries(tmp_path, kind):
    if kind == "ranking":
        X, y, group, position = ranking_data()
        ds = dgbdt.Dataset(X, y, group=group, position=position, params=RANKING)
        loaded = _round_trip(tmp_path, ds, RANKING, 3)
        np.testing.assert_array_equal(loaded.get_group(), group)
        np.testing.assert_array_equal(loaded.get_position(), position)
        return
    if kind == "categorical":
        rng = np.random.default_rng(5)
        X = pd.DataFrame(
            {"c": pd.Categorical(rng.choice(["x", "y", "z"], 400)), "n": rng.integers(0, 6, 400)}
        )
        X["v"] = rng.normal(size=400)
        y = (X["c"] == "x") + (X["n"] == 2) + X["v"]
        ds = dgbdt.Dataset(X, y, categorical_feature=["c", "n"], params=REGRESSION)
        loaded = _round_trip(tmp_path, ds, REGRESSION)
        assert loaded.pandas_categorical == [["x", "y", "z"]]
        np.testing.assert_array_equal(loaded.bin_mapper.is_categorical, [True, True, False])
        booster = dgbdt.train(REGRESSION, loaded, 4)
        np.testing.assert_array_equal(booster.predict(X), dgbdt.train(REGRESSION, ds, 4).predict(X))
        return
    X, y = bundled_data()
    ds = dgbdt.Dataset(sp.csr_matrix(X) if kind == "sparse" else X, y, params=REGRESSION)
    loaded = _round_trip(tmp_path, ds, REGRESSION)
    assert loaded.store.bundles == ds.store.bundles and loaded.store.n_sparse == ds.store.n_sparse
    # a subset of a loaded file (cv's folds) reads its store
    rows = np.sort(some_rows(400))
    direct = dgbdt.Dataset(X[rows], y[rows], reference=ds, params=REGRESSION)
    assert model(REGRESSION, loaded.subset(rows)) == model(REGRESSION, direct)


def test_loaded_validation_file_keeps_the_training_bins(tmp_path):
    X, y, _, _ = dense_data()
    train = dgbdt.Dataset(X[:300], y[:300], params=BINARY)
    valid = train.create_valid(X[300:], y[300:])
    expected = dgbdt.train(BINARY, train, 3, valid_sets=[valid]).model_to_string()
    valid.save_binary(tmp_path / "valid.bin")
    loaded = dgbdt.Dataset(tmp_path / "valid.bin", reference=train)
    record = {}
    got = dgbdt.train(
        BINARY, train, 3, valid_sets=[loaded], callbacks=[dgbdt.record_evaluation(record)]
    )
    assert got.model_to_string() == expected and len(record["valid_0"]["binary_logloss"]) == 3


def _resigned(data, header=None, payload=None):
    """A file with its header or payload replaced and the digests recomputed."""
    prefix = dataset_file._PREFIX
    fields = list(prefix.unpack(data[: prefix.size]))
    old_header = data[prefix.size : prefix.size + fields[3]]
    header = old_header if header is None else header
    payload = data[prefix.size + fields[3] :] if payload is None else payload
    fields[3], fields[4] = len(header), len(payload)
    fields[5], fields[6] = hashlib.sha256(header).digest(), hashlib.sha256(payload).digest()
    return prefix.pack(*fields) + header + payload


def test_version_magic_and_corruption_errors_name_the_file(tmp_path):
    X, y, _, _ = dense_data(100)
    path = tmp_path / "d.bin"
    dgbdt.Dataset(X, y).save_binary(path)
    data = path.read_bytes()
    bad = tmp_path / "bad.bin"
    newer = bytearray(data)
    struct.pack_into("<I", newer, 16, dataset_file.FORMAT_VERSION + 1)
    cases = [
        (bytes(newer), "format version 2, written by a newer dgbdt; .* upgrade dgbdt"),
        (data[:-10], "truncated, or bytes added"),
        (data + b"x", "truncated, or bytes added"),
        (data[:50], "truncated"),
        (data[:-1] + bytes([data[-1] ^ 1]), "the arrays' checksum does not match"),
        (data[:120] + b"?" + data[121:], "the header's checksum does not match"),
        (b"______LightGBM_Binary_File_Token______\n" + bytes(64), "LightGBM binary Dataset"),
    ]
    for content, message in cases:
        bad.write_bytes(content)
        with pytest.raises(ValueError, match=f"{bad}.*{message}|{message}.*{bad}"):
            dataset_file.read_container(str(bad))
    # a consistent file with an inconsistent field: named
    prefix = dataset_file._PREFIX.unpack(data[: dataset_file._PREFIX.size])
    doc = json.loads(data[dataset_file._PREFIX.size : dataset_file._PREFIX.size + prefix[3]])
    doc["dataset"]["feature_name"] = ["a"] * 5
    bad.write_bytes(_resigned(data, json.dumps(doc).encode()))
    with pytest.raises(ValueError, match=f"{bad}: .*5 distinct names"):
        dgbdt.Dataset(bad)
    bad.write_bytes(cases[-1][0])  # Dataset(path) of LightGBM's file: said so, not parsed
    with pytest.raises(ValueError, match="LightGBM binary Dataset file, which dgbdt does not"):
        dgbdt.Dataset(bad)
    assert not dataset_file.is_dataset_file(tmp_path)  # a folder is no file


@pytest.fixture(scope="module")
def saved_files(tmp_path_factory):
    """Bytes of saved files: dense with everything, bundles + sparse, categorical, ranking."""
    folder = tmp_path_factory.mktemp("saved")
    X, y, w, init = dense_data(60)
    Xb, yb = bundled_data(80)
    Xr, yr, group, position = ranking_data()
    frame = pd.DataFrame({"c": pd.Categorical(list("abcab") * 12), "v": np.arange(60.0)})
    sets = [
        dgbdt.Dataset(X, y, weight=w, init_score=init, params=BINARY),
        dgbdt.Dataset(sp.csr_matrix(Xb), yb, params=REGRESSION),
        dgbdt.Dataset(frame, y, params={**REGRESSION, "min_data_in_leaf": 3}),
        dgbdt.Dataset(Xr, yr, group=group, position=position, params=RANKING),
    ]
    files = _Files()
    for i, ds in enumerate(sets):
        ds.save_binary(folder / f"{i}.bin")
        files.append((folder / f"{i}.bin").read_bytes())
    return files


class _Files(list):
    def __repr__(self):  # (hypothesis prints the fixtures of a failing example)
        return f"<{len(self)} saved files>"


def _check_loaded(path):
    """Load ``path``: a consistent Dataset (it trains), or a ValueError naming it."""
    if not dataset_file.is_dataset_file(path):  # its magic is gone: text, not this loader's
        event("no magic")
        return
    try:
        ds = dgbdt.Dataset(path)
    except ValueError as exc:
        assert str(path) in str(exc), exc
        event("refused")
        return
    event("loaded")
    assert ds.store.n_samples == ds.n_samples == len(ds.label)
    params = {"num_leaves": 3, "verbosity": -1, "min_data_in_leaf": 1}
    params["objective"] = "lambdarank" if ds.group is not None else "regression"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            dgbdt.train(params, ds, 1)
        except ValueError:  # e.g. labels a ranking objective refuses, or 1e300
            event("loaded, then refused by train")


@FUZZ
@given(data=st.data())
def test_truncated_or_mutated_files_load_or_are_refused(tmp_path, saved_files, data):
    original = data.draw(st.sampled_from(saved_files))
    how = data.draw(st.sampled_from(["truncate", "bytes", "header", "payload"]))
    path = tmp_path / "fuzz.bin"
    if how == "truncate":
        content = original[: data.draw(st.integers(len(dataset_file.MAGIC), len(original) - 1))]
    elif how == "bytes":
        content = bytearray(original)
        for _ in range(data.draw(st.integers(1, 4))):
            at = data.draw(st.integers(0, len(content) - 1))
            content[at] = data.draw(st.integers(0, 255))
        content = bytes(content)
    else:  # mutate a field and re-sign: the field checks must catch it
        content = _mutated_and_resigned(original, how, data)
    path.write_bytes(content)
    _check_loaded(path)


def _mutated_and_resigned(original, how, data):
    size = dataset_file._PREFIX.size
    n_header = dataset_file._PREFIX.unpack(original[:size])[3]
    header, payload = original[size : size + n_header], bytearray(original[size + n_header :])
    doc = json.loads(header)
    if how == "payload":
        for _ in range(data.draw(st.integers(1, 3))):
            if payload:
                payload[data.draw(st.integers(0, len(payload) - 1))] = data.draw(
                    st.integers(0, 255)
                )
        return _resigned(original, payload=bytes(payload))
    fields = doc["dataset"]
    key = data.draw(st.sampled_from(sorted(fields) + ["arrays"]))
    junk = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-3, 10**6),
        st.text(max_size=3),
        st.lists(st.integers(-2, 5), max_size=4),
        st.floats(allow_nan=False),
    )
    if key == "arrays":
        entry = data.draw(st.sampled_from(doc["arrays"]))
        field = data.draw(st.sampled_from(sorted(entry)))
        entry[field] = data.draw(junk | st.sampled_from(["<f8", "|u1", "<i8", "F", [3, 2]]))
    elif data.draw(st.integers(0, 9)) == 0:
        del fields[key]
    elif isinstance(fields[key], dict) and fields[key] and data.draw(st.booleans()):
        sub = data.draw(st.sampled_from(sorted(fields[key])))
        fields[key][sub] = data.draw(junk)
    else:
        fields[key] = data.draw(junk)
    return _resigned(original, header=json.dumps(doc).encode())


# -- Dataset(path) of text files ---------------------------------------------------
def write_table(path, X, y, sep=",", header=None, extra=None):
    """``y`` first, then ``extra`` columns (name: values) after the first feature."""
    extra = extra or {}
    columns = [("y", y), ("f0", X[:, 0]), *extra.items()]
    columns += [(f"f{j}", X[:, j]) for j in range(1, X.shape[1])]
    lines = [sep.join(name for name, _ in columns)] if header else []
    lines += [
        sep.join("" if np.isnan(v) else repr(float(v)) for v in row)
        for row in zip(*(values for _, values in columns), strict=True)
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_dataset_of_a_csv_with_header_label_and_weight_columns(tmp_path):
    X, y, w, _ = dense_data(300)
    X = X.round(4)
    path = write_table(tmp_path / "t.csv", X, y, header=True, extra={"w": w.round(3)})
    read = {"header": True, "label_column": "name:y", "weight_column": "name:w"}
    ds = dgbdt.Dataset(path, params={**read, **BINARY})
    assert ds.read_params == read and ds.params == BINARY  # read keys are not model params
    assert ds.get_feature_name() == [f"f{j}" for j in range(5)]
    expected = dgbdt.Dataset(X, y, weight=w.round(3), feature_name=ds.get_feature_name())
    assert model(BINARY, ds) == model(BINARY, expected)
    # LightGBM's aliases; a label given here replaces the file's
    ds = dgbdt.Dataset(str(path), 1 - y, params={"has_header": "true", "label": "name:y"})
    np.testing.assert_array_equal(ds.get_label(), 1 - y)
    assert ds.num_feature() == 6  # the weight column is a feature without weight_column


def test_dataset_of_a_tsv_with_side_files(tmp_path):
    X, y, w, init = dense_data(200)
    X = X.round(4)
    path = write_table(tmp_path / "t.tsv", X, y, sep="\t")
    (tmp_path / "t.tsv.weight").write_text("".join(f"{float(v)!r}\n" for v in w))
    (tmp_path / "t.tsv.init").write_text("".join(f"{float(v)!r}\n" for v in init))
    ds = dgbdt.Dataset(path, params=BINARY)
    np.testing.assert_array_equal(ds.get_weight(), w)
    np.testing.assert_array_equal(ds.get_init_score(), init)
    expected = dgbdt.Dataset(X, y, weight=w, init_score=init)
    assert model(BINARY, ds) == model(BINARY, expected)


def test_dataset_of_libsvm_with_qid_and_position_file(tmp_path):
    X, y, group, position = ranking_data()
    X = X.round(4)
    qid = np.repeat(np.arange(len(group)) + 7, group)
    lines = [
        f"{t:g} qid:{q} " + " ".join(f"{j}:{float(v)!r}" for j, v in enumerate(row))
        for t, q, row in zip(y, qid, X, strict=True)
    ]
    path = tmp_path / "r.svm"
    path.write_text("\n".join(lines) + "\n")
    (tmp_path / "r.svm.position").write_text("".join(f"{p}\n" for p in position))
    ds = dgbdt.Dataset(path, params=RANKING)
    np.testing.assert_array_equal(ds.get_group(), group)
    np.testing.assert_array_equal(ds.query_ids, np.arange(len(group)) + 7)
    np.testing.assert_array_equal(ds.get_position(), position)
    expected = dgbdt.Dataset(sp.csr_matrix(X), y, group=group, position=position)
    assert model(RANKING, ds, 3) == model(RANKING, expected, 3)
    # a subset keeps the ids of its whole queries
    assert ds.subset(np.r_[8:20]).query_ids.tolist() == [8]


def test_dataset_path_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.csv"):
        dgbdt.Dataset(tmp_path / "nope.csv")
    path = tmp_path / "t.csv"
    path.write_text("1,2\n0,3\n")
    with pytest.raises(ValueError, match="header must be true or false, got 'maybe'"):
        dgbdt.Dataset(path, params={"header": "maybe"})
    with pytest.raises(TypeError, match="or the path of a data file"):
        dgbdt.Dataset(b"1,2\n")
    with pytest.raises(ValueError, match="params give 'label_column' twice"):
        dgbdt.Dataset(path, params={"label": "0", "label_column": "1"})


# -- the command line: task=save_binary, training from the .bin --------------------
def test_cli_save_binary_then_train_from_the_binary_file(tmp_path, capsys):
    X, y, w, _ = dense_data(300)
    X = X.round(4)
    train = write_table(tmp_path / "train.csv", X[:200], y[:200], header=True)
    valid = write_table(tmp_path / "valid.csv", X[200:], y[200:], header=True)
    (tmp_path / "train.csv.weight").write_text("".join(f"{float(v)!r}\n" for v in w[:200]))
    keys = ["objective=binary", "num_leaves=7", "min_data_in_leaf=5", "num_trees=4"]
    text = tmp_path / "text.json"
    common = [f"data={train}", f"valid_data={valid}", "header=true", *keys, "verbosity=-1"]
    assert run(["train", *common, f"output_model={text}"]) == 0, capsys.readouterr().err
    assert run(["task=save_binary", *common]) == 0, capsys.readouterr().err
    assert dataset_file.is_dataset_file(f"{train}.bin")
    assert dataset_file.is_dataset_file(f"{valid}.bin")
    loaded = dgbdt.Dataset(f"{train}.bin")
    np.testing.assert_array_equal(loaded.get_weight(), w[:200])  # side files went in
    from_bin = tmp_path / "bin.json"
    args = [f"data={train}.bin", f"valid_data={valid}.bin", *keys, "verbosity=-1"]
    assert run(["train", *args, f"output_model={from_bin}"]) == 0, capsys.readouterr().err
    a, b = dgbdt.Booster(model_file=text), dgbdt.Booster(model_file=from_bin)
    assert_same_trees(a, b)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    assert b.params["header"] == "true"  # the keys the text was read with: predict reads it so
    # data=train.csv reads train.csv.bin, as LightGBM's command line does
    auto = tmp_path / "auto.json"
    assert run(["train", *common[:-1], "verbosity=1", f"output_model={auto}"]) == 0
    assert f"reading {train}.bin (a binary Dataset file) instead of {train}" in (
        capsys.readouterr().out
    )
    assert_same_trees(a, dgbdt.Booster(model_file=auto))
    # saving again leaves the file as it is (LightGBM's warning)
    assert run(["task=save_binary", *common[:-1]]) == 0
    assert f"File {train}.bin exists, cannot save binary to it" in capsys.readouterr().err


# -- 2 ranks -----------------------------------------------------------------------
def test_dataset_path_and_save_binary_on_two_ranks(tmp_path):
    X, y, w, _ = dense_data(600, seed=7)
    X = X.round(4)
    write_table(tmp_path / "train.csv", X, y, header=True, extra={"w": w.round(3)})
    Xr, yr, group, _ = ranking_data(sizes=(9, 14, 11, 6, 13, 8, 12, 7), seed=8)
    qid = np.repeat(np.arange(len(group), dtype=float), group)
    write_table(tmp_path / "rank.csv", Xr.round(4), yr, header=True, extra={"qid": qid})
    read = {"header": True, "label_column": "name:y", "weight_column": "name:w"}
    single = dgbdt.train(BINARY, dgbdt.Dataset(tmp_path / "train.csv", params=read), 5)
    rank_read = {"header": True, "label_column": "name:y", "group_column": "name:qid"}
    rank_single = dgbdt.train(RANKING, dgbdt.Dataset(tmp_path / "rank.csv", params=rank_read), 3)
    result = run_mpi(2, "dataset_io.py", tmp_path, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    ranks = [json.loads((tmp_path / f"rank{r}.json").read_text()) for r in range(2)]
    sizes = [r["n_samples"] for r in ranks]
    assert sum(sizes) == 600 and min(sizes) > 0  # each rank read its own rows
    assert all(r["whole_reads"] == [] for r in ranks)  # and never the whole file
    assert sum(len(r["groups"]) for r in ranks) == len(group)  # whole queries
    assert sorted(g for r in ranks for g in r["groups"]) == sorted(group.tolist())
    for name, expected, data in (
        ("text", single, X),
        ("binary", single, X),
        ("rank", rank_single, Xr),
    ):
        got = dgbdt.Booster(model_file=tmp_path / f"{name}_model.json")
        assert_same_trees(got, expected)
        np.testing.assert_allclose(
            got.predict(data, raw_score=True), expected.predict(data, raw_score=True), atol=1e-6
        )
    assert [r["loaded"] for r in ranks] == [[sizes[0], 0, 600], [sizes[1], sizes[0], 600]]
    for r, other in ((0, 1), (1, 0)):
        assert (
            f"holds rank {other}'s share of data saved on 2 ranks; this is rank {r}"
            in (ranks[r]["other_rank"])
        )
        assert "read every row of the file on each of the 2 ranks" in ranks[r]["whole"]


def test_cli_save_binary_on_two_ranks_then_train_from_each_ranks_file(tmp_path):
    X, y, _, _ = dense_data(500, seed=9)
    X = X.round(4)
    data = write_table(tmp_path / "train.csv", X, y, header=True)
    keys = ["objective=binary", "num_leaves=7", "min_data_in_leaf=5", "num_trees=4", "verbosity=-1"]
    single = tmp_path / "single.json"
    assert run(["train", f"data={data}", "header=true", *keys, f"output_model={single}"]) == 0
    save = ["task=save_binary", f"data={data}", "header=true", "tree_learner=data"]
    result = run_mpi(2, "cli.py", *save, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    assert all(dataset_file.is_dataset_file(f"{data}.{r}.bin") for r in range(2))
    model = tmp_path / "ranks.json"
    train = ["train", f"data={data}.{{rank}}.bin", "tree_learner=data", *keys]
    result = run_mpi(2, "cli.py", *train, f"output_model={model}", timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    assert_same_trees(dgbdt.Booster(model_file=model), dgbdt.Booster(model_file=single))


def test_save_binary_leaves_an_existing_file_and_says_so(tmp_path):
    X = np.random.default_rng(0).normal(size=(50, 3))
    target = tmp_path / "exists.bin"
    target.write_bytes(b"hello\n")
    with pytest.warns(UserWarning, match="exists, cannot save binary to it"):
        dgbdt.Dataset(X, X[:, 0]).save_binary(str(target))
    assert target.read_bytes() == b"hello\n"  # as LightGBM: nothing written


def test_a_binary_file_cut_inside_its_magic_or_rebinned_is_named(tmp_path):
    X = np.random.default_rng(0).normal(size=(50, 3))
    path = tmp_path / "a.bin"
    dgbdt.Dataset(X, X[:, 0]).save_binary(str(path))
    cut = tmp_path / "cut.bin"
    cut.write_bytes(path.read_bytes()[:10])
    with pytest.raises(ValueError, match="cut.bin.*truncated: 10 bytes"):
        dgbdt.Dataset(str(cut))
    with pytest.raises(ValueError, match="comes from the binary file .*a.bin.*bins are fixed"):
        dgbdt.train({"max_bin": 3, "verbosity": -1}, dgbdt.Dataset(str(path)), 1)
