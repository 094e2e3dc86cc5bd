"""dgbdt train / predict on files, LightGBM-style configuration (first part of the CLI)."""
import numpy as np

import dgbdt
from dgbdt.cli import run
from dgbdt.readers import read_data

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
    assert run(["predict", f"data={test_file}", f"input_model={tmp_path / 'm.json'}",
                f"output_result={out}"]) == 0
    got = np.loadtxt(out)
    # The same training through the Python API (the .weight side file included).
    tr = read_data(train_file)
    booster = dgbdt.train({"objective": "binary", "learning_rate": 0.1, "num_leaves": 63,
                           "min_data_in_leaf": 50, "min_sum_hessian_in_leaf": 5.0},
                          dgbdt.Dataset(tr.X, tr.label, weight=tr.weight), 30)
    np.testing.assert_allclose(got, booster.predict(read_data(test_file).X), rtol=1e-15)


def test_agaricus_libsvm_error_figures(shared_datasets, tmp_path):
    folder = shared_datasets / "xgboost"
    model = tmp_path / "m.json"
    assert run(["train", f"data={folder / 'agaricus.txt.train'}", "objective=binary", "max_depth=2",
                "learning_rate=1", "lambda_l2=1", "min_sum_hessian_in_leaf=1", "min_data_in_leaf=0",
                "num_trees=2", f"output_model={model}"]) == 0
    for name, expected in (("agaricus.txt.train", 0.022263), ("agaricus.txt.test", 0.021726)):
        out = tmp_path / f"{name}.pred"
        assert run(["predict", f"data={folder / name}", f"input_model={model}",
                    f"output_result={out}"]) == 0
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
    conf.write_text(f"task = train\nobjective = binary\nnum_trees = 50\ndata = {data}\n"
                    f"output_model = {tmp_path / 'a.json'}\nmin_data_in_leaf = 5\n")
    assert run([f"config={conf}", "num_trees=3"]) == 0
    assert dgbdt.Booster(model_file=tmp_path / "a.json").num_trees() == 3
