"""Regression tests of issue 10's data and API inputs: each one ended in a traceback,
a huge allocation or silently wrong output, and is now a clear error (or, for the
labels predict ignores, no error at all)."""

import os
import signal
import tracemalloc
from contextlib import contextmanager

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import dgbdt
from dgbdt.cli.commands import run
from dgbdt.io import (
    MAX_SPARSE_COLUMNS,
    DataFormatError,
    delimited,
    filebytes,
    libsvm,
    parse_text,
    read_data,
)


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


@contextmanager
def peak_memory_below(limit_bytes):
    """Fails when Python and numpy allocate more than ``limit_bytes`` at once inside."""
    tracemalloc.start()
    try:
        yield
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < limit_bytes, f"peak allocation {peak / 2**20:.0f} MiB"


@contextmanager
def no_blocking(seconds=20):
    """A FIFO opened for reading blocks until a writer comes: fail instead of hanging."""

    def fail(*_):
        raise AssertionError(f"blocked for {seconds} s")

    old = signal.signal(signal.SIGALRM, fail)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def assert_names(exc_info, *parts):
    msg = str(exc_info.value)
    for part in parts:
        assert str(part) in msg, msg


# ------------------------------------------------------------------ LibSVM index cap


@pytest.mark.parametrize("zero_based", [True, False])
def test_libsvm_index_2000000000_is_an_error_not_15_gib(tmp_path, zero_based):
    p = write(tmp_path, "wide.svm", "1 1:1\n\n0 2000000000:1 3:4\n")
    with peak_memory_below(64 << 20), pytest.raises(DataFormatError) as e:
        read_data(p, zero_based=zero_based)
    assert_names(e, "wide.svm", "line 3", "2000000000:1", MAX_SPARSE_COLUMNS)


def test_libsvm_index_cap_is_the_last_column(tmp_path):
    last = MAX_SPARSE_COLUMNS - 1  # zero-based: the widest file allowed
    p = write(tmp_path, "edge.svm", f"1 1:1\n0 {last}:2\n")
    assert read_data(p).X.shape == (2, MAX_SPARSE_COLUMNS)
    assert read_data(p, zero_based=False).X.shape == (2, MAX_SPARSE_COLUMNS - 1)
    p = write(tmp_path, "over.svm", f"1 1:1\n0 {last + 1}:2\n")
    with pytest.raises(DataFormatError) as e:
        read_data(p)
    assert_names(e, "over.svm", "line 2", f"{last + 1}:2")
    assert read_data(p, zero_based=False).X.shape == (2, MAX_SPARSE_COLUMNS)
    with pytest.raises(ValueError, match=f"n_features={MAX_SPARSE_COLUMNS + 1}"):
        read_data(p, n_features=MAX_SPARSE_COLUMNS + 1)


def test_sparse_matrix_of_2e9_columns_is_refused_by_dataset():
    X = sp.csr_matrix((3, 2_000_000_001))
    with peak_memory_below(64 << 20), pytest.raises(ValueError) as e:
        dgbdt.Dataset(X, np.zeros(3))
    assert_names(e, "(3, 2000000001)", MAX_SPARSE_COLUMNS)


def test_sparse_matrix_beyond_memory_is_refused_by_dataset():
    X = sp.csc_matrix((1 << 50, 2))  # 28 PiB of per-row buffers, 24 bytes of pointers
    with pytest.raises(ValueError) as e:
        dgbdt.Dataset(X)
    assert_names(e, f"({1 << 50}, 2)", "28.0 PiB", "memory")
    ds = dgbdt.Dataset(
        sp.random(50, 300, density=0.05, format="csr", random_state=0), np.arange(50) % 2
    )
    assert ds.num_feature() == 300


# ------------------------------------------------------------------ repeated LibSVM indices


def test_libsvm_repeated_index_is_an_error_naming_file_line_index(tmp_path):
    p = write(tmp_path, "dup.svm", "# c\n1 0:1 2:5\n0 3:1 1:0 3:2\n")
    with pytest.raises(DataFormatError) as e:
        read_data(p)
    assert_names(e, "dup.svm", "line 3", "feature index 3 repeated", "'3:2'")
    p = write(tmp_path, "dup1.svm", "1 qid:1 1:1 1:1\n")  # one-based, same value
    with pytest.raises(DataFormatError) as e:
        read_data(p, zero_based=False)
    assert_names(e, "dup1.svm", "line 1", "feature index 1 repeated")


def test_libsvm_repeated_index_fast_and_exact_parsers_agree(tmp_path):
    # scikit-learn's loader (the fast path) refuses repeats; the exact parser names them
    text = b"1 0:1 2:5\n0 3:1 3:2\n"
    with pytest.raises(DataFormatError) as fast:
        parse_text("f.svm", text, fmt="libsvm", sep=None)
    with pytest.raises(DataFormatError) as exact:
        libsvm._parse_libsvm_python("f.svm", text, True, None)
    assert str(fast.value) == str(exact.value)


@pytest.mark.parametrize("n_parts", [2, 3])
def test_libsvm_repeated_index_in_a_part_names_the_file_line(tmp_path, n_parts):
    lines = [f"{i % 2} {i % 5}:1 7:{i}" for i in range(300)]
    lines[250] = "1 4:1 4:2"
    p = write(tmp_path, "parts.svm", "\n".join(lines) + "\n")
    first_line, errors = 1, []
    for part in range(n_parts):  # what each rank of read_row_part parses
        data = filebytes.read_part(p, part, n_parts)
        try:
            parse_text(str(p), data, fmt="libsvm", sep=None, first_line=first_line)
        except DataFormatError as exc:
            errors.append(str(exc))
        first_line += filebytes.count_lines(data)
    assert len(errors) == 1 and "parts.svm, line 251: feature index 4 repeated" in errors[0]


def test_repeated_index_and_bad_labels_under_mpiexec(tmp_path):
    from mpi_launch import run_mpi

    lines = [f"{i % 2} {i % 5}:1 7:{i}" for i in range(300)]
    clean = write(tmp_path, "clean.svm", "\n".join(lines) + "\n")
    model = tmp_path / "m.json"
    assert (
        run(
            [
                "train",
                f"data={clean}",
                "objective=binary",
                "num_trees=2",
                "min_data_in_leaf=5",
                f"output_model={model}",
                "verbosity=-1",
            ]
        )
        == 0
    )
    assert (
        run(
            [
                "predict",
                f"data={clean}",
                f"input_model={model}",
                f"output_result={tmp_path / 'serial.txt'}",
            ]
        )
        == 0
    )
    bad = list(lines)
    for i, label in ((1, "abc"), (150, "nan"), (299, "inf")):
        bad[i] = label + bad[i][1:]
    bad_labels = write(tmp_path, "labels.svm", "\n".join(bad) + "\n")
    result = run_mpi(
        2,
        "cli.py",
        "predict",
        f"data={bad_labels}",
        f"input_model={model}",
        f"output_result={tmp_path / 'dist.txt'}",
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert (tmp_path / "dist.txt").read_text() == (tmp_path / "serial.txt").read_text()
    lines[250] = "1 4:1 4:2"
    dup = write(tmp_path, "dup.svm", "\n".join(lines) + "\n")
    result = run_mpi(
        2,
        "cli.py",
        "train",
        f"data={dup}",
        "objective=binary",
        "num_trees=2",
        "tree_learner=data",
        f"output_model={tmp_path / 'd.json'}",
        timeout=60,
    )
    assert result.returncode != 0
    assert "dup.svm, line 251: feature index 4 repeated on the line: '4:2'" in result.stderr
    assert not (tmp_path / "d.json").exists()


# ------------------------------------------------------------------ not a regular file


def test_directory_fifo_and_dev_null_are_not_regular_files(tmp_path):
    folder = tmp_path / "folder.csv"
    folder.mkdir()
    fifo = tmp_path / "fifo.csv"
    os.mkfifo(fifo)
    with no_blocking():
        for path, kind in ((folder, "a directory"), (fifo, "a FIFO"), ("/dev/null", "a device")):
            with pytest.raises(ValueError) as e:
                read_data(path)
            assert_names(e, path, "is not a regular file", kind)
    with pytest.raises(FileNotFoundError, match="not found"):
        read_data(tmp_path / "missing.csv")


@pytest.mark.parametrize(
    "suffix, what",
    [(".weight", "weight file"), (".init", "init score file"), (".query", "query file")],
)
def test_side_file_that_is_a_directory_or_fifo_is_an_error(tmp_path, suffix, what):
    p = write(tmp_path, "d.csv", "1,0.5\n0,1.5\n")
    side = tmp_path / ("d.csv" + suffix)
    side.mkdir()
    with pytest.raises(ValueError) as e:
        read_data(p)
    assert_names(e, side, what, "not a regular file (a directory)")
    side.rmdir()
    os.mkfifo(side)
    with no_blocking(), pytest.raises(ValueError) as e:
        read_data(p)
    assert_names(e, side, "a FIFO")
    assert read_data(p, side_files=False).X.shape == (2, 1)
    side.unlink()
    side.symlink_to(tmp_path / "gone")  # a broken link: not skipped either
    with pytest.raises(FileNotFoundError, match=what):
        read_data(p)


def test_cli_data_that_is_a_directory_says_so(tmp_path, capsys):
    (tmp_path / "d.csv").mkdir()
    assert run(["train", f"data={tmp_path / 'd.csv'}", f"output_model={tmp_path / 'm'}"]) == 1
    assert "is not a regular file (a directory)" in capsys.readouterr().err


# ------------------------------------------------------------------ side-file values


@pytest.mark.parametrize(
    "text, line, bad",
    [
        ("0.1\nnan\n0.3\n", 2, "'nan'"),
        ("0.1\n0.2\n-inf\n", 3, "'-inf'"),
        ("0.1\n\n1e999\n0\n", 3, "'1e999'"),
        ("0.1 1\n0.2 NaN\n0 0\n", 2, "'NaN'"),
    ],
)
def test_non_finite_init_file_is_refused_when_read(tmp_path, text, line, bad):
    p = write(tmp_path, "d.csv", "1,0.5\n0,1.5\n1,2.5\n")
    write(tmp_path, "d.csv.init", text)
    with pytest.raises(DataFormatError) as e:
        read_data(p)
    assert_names(e, "d.csv.init", f"line {line}", "non-finite init score", bad)


def test_non_finite_init_file_stops_cli_training_before_it_starts(tmp_path, capsys):
    p = write(tmp_path, "d.csv", "".join(f"{i % 2},{i}\n" for i in range(40)))
    write(tmp_path, "d.csv.init", "0\n" * 20 + "nan\n" + "0\n" * 19)
    model = tmp_path / "m.json"
    assert run(["train", f"data={p}", "objective=binary", f"output_model={model}"]) == 1
    err = capsys.readouterr().err
    assert "d.csv.init, line 21: non-finite init score 'nan'" in err
    assert "JSON" not in err and not model.exists()


@pytest.mark.parametrize(
    "text, line, what",
    [
        ("1\nnan\n", 2, "non-finite weight 'nan'"),
        ("inf\n1\n", 1, "non-finite weight 'inf'"),
        ("1\n-2\n", 2, "negative weight '-2'"),
    ],
)
def test_bad_weight_file_names_file_and_line(tmp_path, text, line, what):
    p = write(tmp_path, "d.csv", "1,0.5\n0,1.5\n")
    write(tmp_path, "d.csv.weight", text)
    with pytest.raises(DataFormatError) as e:
        read_data(p)
    assert_names(e, "d.csv.weight", f"line {line}", what)


def test_non_finite_query_file(tmp_path):
    p = write(tmp_path, "d.csv", "1,0.5\n0,1.5\n")
    write(tmp_path, "d.csv.query", "1\ninf\n")
    with pytest.raises(DataFormatError) as e:
        read_data(p)
    assert_names(e, "d.csv.query", "line 2", "'inf'")


# ------------------------------------------------------------------ init_score in the API


@pytest.mark.parametrize(
    "init, where",
    [
        ([0, 1, np.nan, 2], "init_score[2] is nan"),
        (np.array([[0, 1], [1, 2], [3, np.inf], [0, 0]]), "init_score[2, 1] is inf"),
        (np.array([0, 1, 2, 1e4000], np.longdouble), "init_score[3] is inf"),  # beyond float64
        ([0, 1, 10**400, 2], "init_score holds a number beyond float64"),
    ],
)
def test_non_finite_init_score_is_refused(init, where):
    X, y = np.arange(8.0).reshape(4, 2), np.array([0, 1, 0, 1.0])
    with pytest.raises(ValueError, match=rf"{where.replace('[', '.').replace(']', '.')}"):
        dgbdt.Dataset(X, y, init_score=init)
    ds = dgbdt.Dataset(X, y)
    with pytest.raises(ValueError, match="init_score"):
        ds.set_init_score(init)
    assert ds.get_init_score() is None
    ds.set_init_score([0.5, 0, 0, 1])
    np.testing.assert_array_equal(ds.get_init_score(), [0.5, 0, 0, 1])


def test_nan_init_score_no_longer_trains_then_fails_to_save(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 3))
    y = (X[:, 0] > 0).astype(float)
    init = np.zeros(100)
    init[7] = np.nan
    with pytest.raises(ValueError, match=r"init_score\[7\] is nan"):
        dgbdt.train({"objective": "binary", "verbosity": -1}, dgbdt.Dataset(X, y, init_score=init))


# ------------------------------------------------------------------ complex input


X4 = np.arange(8.0).reshape(4, 2)
Y4 = np.array([0, 1, 0, 1.0])


@pytest.mark.parametrize(
    "make, name",
    [
        (lambda: dgbdt.Dataset(X4 + 1j, Y4), "data is complex (complex128)"),
        (lambda: dgbdt.Dataset((X4 + 0j).tolist(), Y4), "data is complex"),
        (lambda: dgbdt.Dataset(X4.astype(np.complex64), Y4), "data is complex (complex64)"),
        (
            lambda: dgbdt.Dataset(pd.DataFrame({"a": X4[:, 0], "b": X4[:, 1] + 2j}), Y4),
            "data column 'b' is complex",
        ),
        (lambda: dgbdt.Dataset(sp.csr_matrix(X4 + 1j), Y4), "data is complex"),
        (lambda: dgbdt.Dataset(X4, Y4 + 1j), "label is complex"),
        (lambda: dgbdt.Dataset(X4, pd.Series(Y4 + 1j)), "label is complex"),
        (lambda: dgbdt.Dataset(X4, pd.DataFrame({"y": Y4 + 1j})), "label column 'y' is complex"),
        (lambda: dgbdt.Dataset(X4, Y4, weight=Y4 + 1j), "weight is complex"),
        (lambda: dgbdt.Dataset(X4, Y4, init_score=Y4 * 1j), "init_score is complex"),
        (lambda: dgbdt.Dataset(X4, Y4).set_label(Y4 + 1j), "label is complex"),
        (lambda: dgbdt.Dataset(X4, Y4).set_weight(Y4 + 1j), "weight is complex"),
        (lambda: dgbdt.Dataset(X4, Y4).set_init_score(Y4 + 1j), "init_score is complex"),
    ],
)
def test_complex_input_is_a_type_error_naming_it(make, name):
    with pytest.raises(TypeError, match=rf"^{name.replace('(', '.').replace(')', '.')}"):
        make()


def test_complex_input_to_the_sklearn_estimators():
    from dgbdt.sklearn import DGBDTClassifier, DGBDTRegressor

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    y = (X[:, 0] > 0).astype(int)
    for est in (DGBDTRegressor(n_estimators=2), DGBDTClassifier(n_estimators=2)):
        # scikit-learn's check_complex_data: a ValueError from fit
        with pytest.raises(ValueError, match="Complex data not supported"):
            est.fit(X + 1j, y)
        with pytest.raises(TypeError, match="init_score is complex"):
            est.fit(X, y, init_score=np.zeros(40) + 1j)


# ------------------------------------------------------------------ labels predict ignores


def _model(tmp_path, text, name="train.csv", **io):
    data = write(tmp_path, name, text)
    model = tmp_path / "m.json"
    extra = [f"{k}={v}" for k, v in io.items()]
    assert (
        run(
            [
                "train",
                f"data={data}",
                "objective=binary",
                "num_trees=3",
                "min_data_in_leaf=5",
                f"output_model={model}",
                "verbosity=-1",
                *extra,
            ]
        )
        == 0
    )
    return data, model


def _predict(tmp_path, data, model, name):
    out = tmp_path / name
    assert run(["predict", f"data={data}", f"input_model={model}", f"output_result={out}"]) == 0
    return out.read_text()


@pytest.mark.parametrize("sep", [",", "\t"])
def test_predict_does_not_validate_labels_it_ignores(tmp_path, sep):
    rows = [[i % 2, i * 0.5, (i * 7) % 11] for i in range(60)]
    text = "".join(sep.join(map(str, r)) + "\n" for r in rows)
    data, model = _model(tmp_path, text)
    expected = _predict(tmp_path, data, model, "clean.txt")
    for k, bad in enumerate(["abc", "nan", "", "inf", "-inf", "NA", "1e999"]):
        rows[3 * k + 1][0] = bad
    bad_file = write(tmp_path, "bad.csv", "".join(sep.join(map(str, r)) + "\n" for r in rows))
    assert _predict(tmp_path, bad_file, model, "bad.txt") == expected
    with pytest.raises(DataFormatError, match="line 2: non-finite label|line 2: cannot parse"):
        read_data(bad_file)  # training still checks them


def test_predict_still_checks_the_features(tmp_path, capsys):
    data, model = _model(tmp_path, "".join(f"{i % 2},{i},{i % 3}\n" for i in range(60)))
    bad = write(tmp_path, "bad.csv", "abc,1,2\nx,3,oops\n")
    out = tmp_path / "p.txt"
    assert run(["predict", f"data={bad}", f"input_model={model}", f"output_result={out}"]) == 1
    err = capsys.readouterr().err
    assert "bad.csv, line 2: cannot parse number 'oops'" in err and not out.exists()


def test_predict_ignores_labels_of_libsvm_and_lines_without_one(tmp_path):
    lines = [f"{i % 2} 0:{i} 2:{i % 3}" for i in range(60)]
    data, model = _model(tmp_path, "\n".join(lines) + "\n", name="train.svm")
    expected = _predict(tmp_path, data, model, "clean.txt")
    lines[1] = "abc" + lines[1][1:]
    lines[5] = "nan" + lines[5][1:]
    lines[9] = lines[9][2:]  # no label at all
    lines[13] = "1 qid:x" + lines[13][1:]  # qids are not used either
    bad = write(tmp_path, "bad.svm", "\n".join(lines) + "\n")
    assert _predict(tmp_path, bad, model, "bad.txt") == expected


def test_features_only_chunked_equals_serial(tmp_path, monkeypatch):
    rows = [
        f"{'abc' if i % 7 == 0 else i % 2},{i * 0.25},{'' if i % 5 == 0 else i}" for i in range(400)
    ]
    p = write(tmp_path, "d.csv", "\n".join(rows) + "\n")
    serial = read_data(p, features_only=True)
    assert serial.label is None and serial.X.shape == (400, 2)
    monkeypatch.setattr(delimited, "_PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(delimited, "_CHUNK_BYTES", 100)
    chunked = read_data(p, features_only=True)
    np.testing.assert_array_equal(serial.X, chunked.X)
    rows[250] = "abc,0.5,oops"
    p.write_text("\n".join(rows) + "\n")
    with pytest.raises(DataFormatError, match="line 251: cannot parse number 'oops'"):
        read_data(p, features_only=True)


def test_rescan_names_the_converted_field_not_an_ignored_one(tmp_path):
    p = write(tmp_path, "d.csv", "1,junk,2\n0,x,oops\n")
    with pytest.raises(DataFormatError, match="line 2: cannot parse number 'oops'"):
        read_data(p, ignore_columns="0")
