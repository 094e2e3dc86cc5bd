"""dgbdt train / predict on files, LightGBM-style configuration (first part of the CLI)."""

import re

import numpy as np
import pytest

import dgbdt
from dgbdt.__main__ import main
from dgbdt.cli.commands import run
from dgbdt.io import read_data
from dgbdt.params.table import PARAMS

BINARY_CONF = """# written like LightGBM's examples/binary_classification/train.conf
task = train
objective = binary
metric = binary_logloss,auc
metric_freq = 10
data = {data}
valid_data = {valid}
num_trees = 30
learning_rate = 0.1
num_leaves = 63
min_data_in_leaf = 50
min_sum_hessian_in_leaf = 5.0
output_model = {model}
"""


def test_config_file_train_and_predict_equal_python_api(shared_datasets, tmp_path, capsys):
    train_file = shared_datasets / "lightgbm" / "binary.train"
    test_file = shared_datasets / "lightgbm" / "binary.test"
    conf = tmp_path / "train.conf"
    conf.write_text(BINARY_CONF.format(data=train_file, valid=test_file, model=tmp_path / "m.json"))
    assert run([f"config={conf}"]) == 0
    assert "binary.test's auc" in capsys.readouterr().out
    out = tmp_path / "pred.txt"
    assert (
        run(
            [
                "predict",
                f"data={test_file}",
                f"input_model={tmp_path / 'm.json'}",
                f"output_result={out}",
            ]
        )
        == 0
    )
    got = np.loadtxt(out)
    # The same training through the Python API (the .weight side file included).
    tr = read_data(train_file)
    booster = dgbdt.train(
        {
            "objective": "binary",
            "learning_rate": 0.1,
            "num_leaves": 63,
            "min_data_in_leaf": 50,
            "min_sum_hessian_in_leaf": 5.0,
        },
        dgbdt.Dataset(tr.X, tr.label, weight=tr.weight),
        30,
    )
    np.testing.assert_allclose(got, booster.predict(read_data(test_file).X), rtol=1e-15)


def test_agaricus_libsvm_error_figures(shared_datasets, tmp_path):
    folder = shared_datasets / "xgboost"
    model = tmp_path / "m.json"
    assert (
        run(
            [
                "train",
                f"data={folder / 'agaricus.txt.train'}",
                "zero_based=false",
                "objective=binary",
                "max_depth=2",
                "learning_rate=1",
                "lambda_l2=1",
                "min_sum_hessian_in_leaf=1",
                "min_data_in_leaf=0",
                "num_trees=2",
                f"output_model={model}",
            ]
        )
        == 0
    )
    for name, expected in (("agaricus.txt.train", 0.022263), ("agaricus.txt.test", 0.021726)):
        out = tmp_path / f"{name}.pred"
        assert (
            run(
                [
                    "predict",
                    f"data={folder / name}",
                    f"input_model={model}",
                    f"output_result={out}",
                    "zero_based=false",
                ]
            )
            == 0
        )
        label = read_data(folder / name).label
        error = np.mean((np.loadtxt(out) > 0.5) != (label > 0))
        assert round(error, 6) == expected


def _csv(tmp_path, text):
    path = tmp_path / "d.csv"
    path.write_text(text)
    return path


def test_bad_input_gives_one_clear_message_and_no_output(tmp_path, capsys):
    good = _csv(tmp_path, "".join(f"{i % 2},{i},{i * 0.5}\n" for i in range(60)))
    model = tmp_path / "m.json"
    # unknown parameter: named, with the closest valid one
    assert run(["train", f"data={good}", "lerning_rate=0.1", f"output_model={model}"]) == 1
    assert "Did you mean 'learning_rate'" in capsys.readouterr().err
    assert not model.exists()
    # missing file
    assert run(["train", f"data={tmp_path / 'nope.csv'}", f"output_model={model}"]) == 1
    assert "nope.csv" in capsys.readouterr().err
    assert not model.exists()
    # malformed line: file, line number and text
    bad = _csv(tmp_path, "1,2,3\n0,4,abc\n")
    assert run(["train", f"data={bad}", f"output_model={model}"]) == 1
    err = capsys.readouterr().err
    assert "d.csv" in err and "line 2" in err and "abc" in err
    assert not model.exists()
    # corrupt model file at predict time; no result file is written
    model.write_text("{not json")
    out = tmp_path / "pred.txt"
    assert run(["predict", f"data={good}", f"input_model={model}", f"output_result={out}"]) == 1
    assert "m.json" in capsys.readouterr().err
    assert not out.exists()
    # a config line without '='
    conf = tmp_path / "c.conf"
    conf.write_text("task = train\nnum_trees 10\n")
    assert run([f"config={conf}"]) == 1
    assert "c.conf, line 2" in capsys.readouterr().err


def test_command_line_arguments_override_the_config_file(tmp_path):
    data = _csv(tmp_path, "".join(f"{i % 2},{i % 7},{(i * 13) % 11}\n" for i in range(200)))
    conf = tmp_path / "c.conf"
    conf.write_text(
        f"task = train\nobjective = binary\nnum_trees = 50\ndata = {data}\n"
        f"output_model = {tmp_path / 'a.json'}\nmin_data_in_leaf = 5\n"
    )
    assert run([f"config={conf}", "num_trees=3"]) == 0
    assert dgbdt.Booster(model_file=tmp_path / "a.json").num_trees() == 3


def test_help_lists_every_parameter_and_io_key(capsys):
    from dgbdt.cli.commands import IO_KEYS

    for argv in (["--help"], ["train", "--help"]):
        assert main(argv) == 0
        out = capsys.readouterr().out
        for name in [*PARAMS, *IO_KEYS]:
            assert re.search(rf"^{name}\b", out, re.M), (argv, name)


def test_lightgbm_keys_not_supported_warn_and_unknown_keys_fail(tmp_path, capsys):
    data = _csv(tmp_path, "".join(f"{i % 2},{i % 7},{(i * 13) % 11}\n" for i in range(100)))
    model = tmp_path / "m.json"
    assert (
        run(
            [
                "train",
                f"data={data}",
                "two_round=true",
                "use_two_round_loading=false",
                "num_trees=2",
                f"output_model={model}",
            ]
        )
        == 0
    )
    err = capsys.readouterr().err
    assert "dgbdt: warning: LightGBM parameter 'two_round' is not supported by dgbdt yet" in err
    assert "'use_two_round_loading' (two_round) is not supported" in err
    assert model.exists()
    model.unlink()
    assert run(["train", f"data={data}", "num_treez=2", f"output_model={model}"]) == 1
    assert (
        "unknown parameter 'num_treez'. Did you mean 'num_tree' (alias of 'num_iterations')?"
        in capsys.readouterr().err
    )
    assert run(["train", f"data={data}", "outptu_model=x"]) == 1
    assert "Did you mean 'output_model'?" in capsys.readouterr().err
    assert not model.exists()


def test_progress_and_metrics_are_logged(tmp_path, capsys):
    data = _csv(tmp_path, "".join(f"{i % 2},{i % 7},{(i * 13) % 11}\n" for i in range(300)))
    assert (
        run(
            [
                "train",
                f"data={data}",
                "objective=binary",
                "num_trees=6",
                "metric_freq=3",
                "is_training_metric=true",
                "min_data_in_leaf=5",
                f"output_model={tmp_path / 'm.json'}",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert re.search(r"^\[3\]\ttraining's binary_logloss: ", out, re.M)
    assert re.search(r"^\[3/6\] [0-9.]+ s/iter, [0-9.]+ s left$", out, re.M)
    assert re.search(r"^\[6/6\] ", out, re.M)


def test_snapshots_and_resume_give_the_uninterrupted_model(tmp_path):
    data = _csv(
        tmp_path, "".join(f"{i % 2},{(i * 7) % 13},{(i * 13) % 11},{i % 5}\n" for i in range(500))
    )
    params = [
        f"data={data}",
        "objective=binary",
        "min_data_in_leaf=5",
        "bagging_fraction=0.7",
        "bagging_freq=3",
        "feature_fraction=0.7",
    ]
    full = tmp_path / "full.json"
    assert run(["train", *params, "num_trees=10", "snapshot_freq=4", f"output_model={full}"]) == 0
    assert sorted(p.name for p in tmp_path.glob("full.json.snapshot_iter_*")) == [
        "full.json.snapshot_iter_4",
        "full.json.snapshot_iter_8",
    ]
    resumed = tmp_path / "resumed.json"
    assert (
        run(
            [
                "train",
                *params,
                "num_trees=6",
                f"input_model={tmp_path / 'full.json.snapshot_iter_4'}",
                f"output_model={resumed}",
            ]
        )
        == 0
    )
    a, b = dgbdt.Booster(model_file=full), dgbdt.Booster(model_file=resumed)
    assert a.num_trees() == b.num_trees() == 10
    for ta, tb in zip(a.trees, b.trees, strict=True):
        np.testing.assert_array_equal(ta.split_feature, tb.split_feature)
        np.testing.assert_array_equal(ta.threshold, tb.threshold)
        np.testing.assert_array_equal(ta.leaf_value, tb.leaf_value)


def test_rank_train_loads_301_columns_and_201_groups(shared_datasets, tmp_path):
    from dgbdt.cli.commands import _read_for_training, parse_arguments

    path = shared_datasets / "lightgbm" / "rank.train"
    io, _ = parse_arguments([f"data={path}"])
    loaded, _ = _read_for_training(str(path), io, None, "serial", False)
    assert loaded.X.shape == (3005, 301) and len(loaded.group) == 201
    model = tmp_path / "m.json"
    assert run(["train", f"data={path}", "num_trees=2", f"output_model={model}"]) == 0
    assert dgbdt.Booster(model_file=model).num_feature() == 301


CSV_BAD = [
    ("1,2,3\n0,4\n", 2, "expected 3 fields, got 2", "0,4"),
    ("1,2,3\n0,4,5,6\n", 2, "expected 3 fields, got 4", "0,4,5,6"),
    ("1,2,3\n0,x1,5\n", 2, "cannot parse number", "x1"),
    ("1,2,3\n,4,5\n", 2, "missing or non-finite label", ""),
    ("1,2,3\n1,2,3\nnan,4,5\n", 3, "missing or non-finite label", "nan"),
    ("1,2,3\ninf,4,5\n", 2, "missing or non-finite label", "inf"),
]
SVM_BAD = [
    ("1 0:1\n0 1:x\n", 2, "cannot parse index:value pair", "1:x"),
    ("1 0:1\n0 1\n", 2, "cannot parse index:value pair", "1"),
    ("1 0:1\n0 -3:1\n", 2, "negative feature index", "-3:1"),
    ("1 0:1\n2:1 3:1\n", 2, "missing label before", "2:1"),
    ("1 0:1\nnan 1:1\n", 2, "non-finite label", "nan"),
    ("1 0:1\n# c\ninf 1:1\n", 3, "non-finite label", "inf"),
]


@pytest.mark.parametrize(
    "name, text, line, what, bad",
    [("d.csv", *case) for case in CSV_BAD] + [("d.svm", *case) for case in SVM_BAD],
)
def test_every_bad_line_exits_1_naming_file_line_text(
    tmp_path, capsys, name, text, line, what, bad
):
    path = tmp_path / name
    path.write_text(text)
    model = tmp_path / "m.json"
    assert run(["train", f"data={path}", "num_trees=1", f"output_model={model}"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("dgbdt: error: ")
    assert f"{name}, line {line}: {what}" in err and repr(bad) in err
    assert "Traceback" not in err
    assert not model.exists()


def test_predict_with_a_model_of_another_width(tmp_path, capsys):
    narrow = _csv(tmp_path, "".join(f"{i % 2},{i % 7},{(i * 13) % 11}\n" for i in range(100)))
    model = tmp_path / "m.json"
    assert run(["train", f"data={narrow}", "num_trees=2", f"output_model={model}"]) == 0
    wide = tmp_path / "wide.csv"
    wide.write_text("".join(f"{i % 2},{i % 7},{i % 3},{i % 5}\n" for i in range(10)))
    out = tmp_path / "p.txt"
    assert run(["predict", f"data={wide}", f"input_model={model}", f"output_result={out}"]) == 1
    err = capsys.readouterr().err
    assert "wide.csv has 3 feature columns but the model" in err and "has 2" in err
    assert not out.exists()


# -- found in review: predict reads files as training did, and edge cases ----------------


def _labelled_csv(path, X, y, label_at=0):
    rows = [np.insert(np.round(x, 4), label_at, t) for x, t in zip(X, y, strict=True)]
    path.write_text("".join(",".join(f"{v:g}" for v in r) + "\n" for r in rows))
    return path


def _xy(n=300, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return X, (X[:, 0] + X[:, 1] > 0).astype(float)


def test_predict_reads_the_columns_the_model_was_trained_with(tmp_path):
    # LightGBM keeps the label index in the model: a file with the label in
    # column 2 predicts right without saying label_column again.
    X, y = _xy()
    data = _labelled_csv(tmp_path / "lab2.csv", X, y, label_at=2)
    model, out = tmp_path / "m.json", tmp_path / "p.txt"
    assert (
        run(
            [
                "train",
                f"data={data}",
                "label_column=2",
                "objective=binary",
                "num_trees=5",
                f"output_model={model}",
                "verbosity=-1",
            ]
        )
        == 0
    )
    assert run(["predict", f"data={data}", f"input_model={model}", f"output_result={out}"]) == 0
    expected = dgbdt.Booster(model_file=str(model)).predict(X)
    np.testing.assert_allclose(np.loadtxt(out), expected, rtol=1e-15)


def test_predict_ignores_side_files_and_handles_an_empty_file(tmp_path):
    X, y = _xy()
    data = _labelled_csv(tmp_path / "d.csv", X, y)
    model, out = tmp_path / "m.json", tmp_path / "p.txt"
    assert (
        run(
            [
                "train",
                f"data={data}",
                "objective=binary",
                "num_trees=3",
                f"output_model={model}",
                "verbosity=-1",
            ]
        )
        == 0
    )
    (tmp_path / "d.csv.init").write_text("0\n" * 99)  # stale: 99 lines, 300 rows
    assert run(["predict", f"data={data}", f"input_model={model}", f"output_result={out}"]) == 0
    assert len(np.loadtxt(out)) == 300
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    assert run(["predict", f"data={empty}", f"input_model={model}", f"output_result={out}"]) == 0
    assert out.read_text() == ""


def test_width_hint_for_a_file_without_label(tmp_path, capsys):
    X, y = _xy()
    data = _labelled_csv(tmp_path / "d.csv", X, y)
    model = tmp_path / "m.json"
    assert (
        run(
            [
                "train",
                f"data={data}",
                "objective=binary",
                "num_trees=2",
                f"output_model={model}",
                "verbosity=-1",
            ]
        )
        == 0
    )
    # As LightGBM (GetLabelIdxForCSV): lines of exactly the model's features have no label.
    nolabel = tmp_path / "x.csv"
    nolabel.write_text("".join(",".join(f"{v:g}" for v in r) + "\n" for r in X))
    out, expected = tmp_path / "p.txt", dgbdt.Booster(model_file=str(model)).predict(X)
    for extra in ([], ["label_column="]):
        assert (
            run(
                [
                    "predict",
                    f"data={nolabel}",
                    f"input_model={model}",
                    *extra,
                    f"output_result={out}",
                ]
            )
            == 0
        )
        np.testing.assert_allclose(np.loadtxt(out), expected, rtol=1e-15)
    # a label column given on the command line is taken at its word: the hint remains
    assert (
        run(
            [
                "predict",
                f"data={nolabel}",
                f"input_model={model}",
                "label_column=0",
                f"output_result={out}",
            ]
        )
        == 1
    )
    assert "needs label_column= with no value" in capsys.readouterr().err


def test_libsvm_validation_rows_may_stop_before_the_last_feature(tmp_path):
    X, y = _xy(d=10)
    X[:, 8:] = np.where(np.abs(X[:, 8:]) > 1, X[:, 8:], 0)

    def libsvm(path, X, y):
        path.write_text(
            "".join(
                f"{int(t)} " + " ".join(f"{j}:{v:.4f}" for j, v in enumerate(r) if v) + "\n"
                for r, t in zip(X, y, strict=True)
            )
        )
        return path

    train = libsvm(tmp_path / "tr.svm", X, y)
    valid = libsvm(tmp_path / "va.svm", X[:50, :8], y[:50])  # highest index 7
    assert (
        run(
            [
                "train",
                f"data={train}",
                f"valid_data={valid}",
                "objective=binary",
                "num_trees=3",
                f"output_model={tmp_path / 'm.json'}",
                "verbosity=-1",
            ]
        )
        == 0
    )


def test_lightgbm_spellings_bom_and_silence(tmp_path, capsys):
    X, y = _xy()
    data = _labelled_csv(tmp_path / "d.csv", X, y)
    conf = tmp_path / "c.conf"
    conf.write_text(
        "\ufefftask = train\nobjective = binary\nnum_trees = 3\nverbosity = -1\n", encoding="utf-8"
    )
    assert run([f"config={conf}", f"data={data}", f"output_model={tmp_path / 'm.json'}"]) == 0
    assert capsys.readouterr().out == ""  # verbosity -1: silent
    assert (
        run(
            [
                f"data={data}",
                "task=prediction",
                f"input_model={tmp_path / 'm.json'}",
                f"output_result={tmp_path / 'p.txt'}",
            ]
        )
        == 0
    )
    assert (
        run(["train", f"data={data}", f"output_model={tmp_path / 'no' / 'm.json'}", "verbosity=-1"])
        == 1
    )
    assert f"folder {tmp_path / 'no'} does not exist" in capsys.readouterr().err


def test_predict_remembers_one_based_libsvm_and_hints_at_headers(tmp_path, capsys):
    X, y = _xy(d=5)
    one_based = tmp_path / "d.svm"
    one_based.write_text(
        "".join(
            f"{int(t)} " + " ".join(f"{j + 1}:{v:.4f}" for j, v in enumerate(r)) + "\n"
            for r, t in zip(X, y, strict=True)
        )
    )
    model = tmp_path / "m.json"
    assert (
        run(
            [
                "train",
                f"data={one_based}",
                "zero_based=false",
                "objective=binary",
                "num_trees=3",
                f"output_model={model}",
                "verbosity=-1",
            ]
        )
        == 0
    )
    for extra in ([], ["zero_based=false"]):
        out = tmp_path / f"p{len(extra)}.txt"
        assert (
            run(
                [
                    "predict",
                    f"data={one_based}",
                    f"input_model={model}",
                    f"output_result={out}",
                    *extra,
                ]
            )
            == 0
        )
    np.testing.assert_array_equal(np.loadtxt(tmp_path / "p0.txt"), np.loadtxt(tmp_path / "p1.txt"))
    with_header = tmp_path / "h.csv"
    with_header.write_text("y,a,b\n1,2,3\n0,1,1\n")
    assert run(["train", f"data={with_header}", f"output_model={model}"]) == 1
    err = capsys.readouterr().err
    assert "line 1: cannot parse number" in err and "header=true" in err


def test_snapshots_record_the_columns_too(tmp_path):
    X, y = _xy()
    data = _labelled_csv(tmp_path / "lab2.csv", X, y, label_at=2)
    model = tmp_path / "m.json"
    assert (
        run(
            [
                "train",
                f"data={data}",
                "label_column=2",
                "objective=binary",
                "num_trees=4",
                "snapshot_freq=2",
                f"output_model={model}",
                "verbosity=-1",
            ]
        )
        == 0
    )
    snapshot = tmp_path / "m.json.snapshot_iter_2"
    out = tmp_path / "p.txt"
    assert run(["predict", f"data={data}", f"input_model={snapshot}", f"output_result={out}"]) == 0
    np.testing.assert_allclose(
        np.loadtxt(out), dgbdt.Booster(model_file=str(snapshot)).predict(X), rtol=1e-15
    )


def test_a_label_less_file_with_a_header_or_no_rows(tmp_path):
    # The label-less rule reads the first data line, after the header; a file of
    # only a header has no width and gives no predictions.
    rows = "".join(f"{i % 2},{i * 0.1:.1f},{(i * 7) % 5}\n" for i in range(40))
    data = tmp_path / "t.csv"
    data.write_text("y,a,b\n" + rows)
    model, out = tmp_path / "m.json", tmp_path / "p.txt"
    assert (
        run(
            [
                "train",
                f"data={data}",
                "header=true",
                "num_trees=2",
                "min_data_in_leaf=1",
                f"output_model={model}",
                "verbosity=-1",
            ]
        )
        == 0
    )
    nolabel = tmp_path / "n.csv"
    nolabel.write_text("a,b\n0.1,2\n3.0,1\n")
    assert (
        run(
            [
                "predict",
                f"data={nolabel}",
                "header=true",
                f"input_model={model}",
                f"output_result={out}",
                "verbosity=-1",
            ]
        )
        == 0
    )
    expected = dgbdt.Booster(model_file=str(model)).predict(np.array([[0.1, 2], [3.0, 1]]))
    np.testing.assert_allclose(np.loadtxt(out), expected, rtol=1e-15)
    only_header = tmp_path / "h.csv"
    only_header.write_text("a,b\n")
    assert (
        run(
            [
                "predict",
                f"data={only_header}",
                "header=true",
                f"input_model={model}",
                f"output_result={out}",
                "verbosity=-1",
            ]
        )
        == 0
    )
    assert out.read_text() == ""
