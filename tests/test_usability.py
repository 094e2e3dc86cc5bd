"""What a new user trips over: messages, warnings, LightGBM's keys and signatures."""

import inspect
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import dgbdt
from dgbdt.cli.commands import run

MULTICLASS_CONF = """# LightGBM's examples/multiclass_classification/train.conf, as written
task = train
boosting_type = gbdt
objective = multiclass
metric = multi_logloss,auc_mu
auc_mu_weights = 0,1,2,3,4,5,0,6,7,8,9,10,0,11,12,13,14,15,0,16,17,18,19,20,0
num_class = 5
metric_freq = 1
is_training_metric = true
label_column = 0
max_bin = 255
data = {data}
valid_data = {valid}
early_stopping = 10
num_trees = 100
learning_rate = 0.05
num_leaves = 31
output_model = {model}
"""


def _csv(tmp_path, n=120):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 3))
    y = (X[:, 0] > 0).astype(int)
    path = tmp_path / "d.csv"
    path.write_text(
        "".join(f"{t}," + ",".join(f"{v:.5f}" for v in r) + "\n" for t, r in zip(y, X, strict=True))
    )
    return path


def test_help_into_a_closed_pipe_has_no_traceback():
    result = subprocess.run(
        f"{sys.executable} -m dgbdt --help | head -1",
        shell=True,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.stdout.startswith("usage: dgbdt")
    assert "Traceback" not in result.stderr and "BrokenPipeError" not in result.stderr


def test_an_objective_typo_gets_did_you_mean(tmp_path, capsys):
    with pytest.raises(ValueError, match="Did you mean 'binary'"):
        dgbdt.train({"objective": "binar"}, dgbdt.Dataset(np.zeros((4, 1)), np.zeros(4)))
    assert run(["train", f"data={_csv(tmp_path)}", "objective=binar"]) == 1
    assert "Did you mean 'binary'?" in capsys.readouterr().err


def test_a_conflicting_alias_on_the_command_line_warns_once(tmp_path, capsys):
    model = tmp_path / "m.json"
    assert (
        run(
            [
                "train",
                f"data={_csv(tmp_path)}",
                "num_trees=3",
                "num_iterations=2",
                f"output_model={model}",
                "verbosity=0",
            ]
        )
        == 0
    )
    err = capsys.readouterr().err
    # LightGBM's train() warning (dgbdt's CLI trains through train())
    assert err.count("conflicting values for num_iterations") == 1, err
    assert err.startswith("dgbdt: warning: ") and "UserWarning" not in err
    assert dgbdt.Booster(model_file=model).current_iteration() == 2
    # verbosity < 0: fatal errors only, as LightGBM's CLI
    assert (
        run(
            [
                "train",
                f"data={_csv(tmp_path)}",
                "num_trees=3",
                "num_iterations=2",
                f"output_model={model}",
                "verbosity=-1",
            ]
        )
        == 0
    )
    assert capsys.readouterr() == ("", "")


def test_verbosity_minus_one_predict_prints_nothing(tmp_path, capsys):
    data, model = _csv(tmp_path), tmp_path / "m.json"
    assert (
        run(["train", f"data={data}", "num_trees=2", f"output_model={model}", "verbosity=-1"]) == 0
    )
    capsys.readouterr()
    assert (
        run(
            [
                "predict",
                f"data={data}",
                f"input_model={model}",
                "verbosity=-1",
                f"output_result={tmp_path / 'p.txt'}",
            ]
        )
        == 0
    )
    assert capsys.readouterr() == ("", "")
    assert (
        run(
            [
                "predict",
                f"data={data}",
                f"input_model={model}",
                f"output_result={tmp_path / 'p.txt'}",
            ]
        )
        == 0
    )
    assert "120 predictions written" in capsys.readouterr().out


def test_train_takes_lightgbms_parameter_order():
    lightgbm = pytest.importorskip("lightgbm")
    ours = list(inspect.signature(dgbdt.train).parameters)
    theirs = list(inspect.signature(lightgbm.train).parameters)
    assert ours == theirs
    # positional callers: keep_training_booster, then callbacks
    seen = []
    X = np.random.default_rng(0).normal(size=(60, 2))
    dgbdt.train(
        {"verbosity": -1},
        dgbdt.Dataset(X, X[:, 0]),
        2,
        None,
        None,
        None,
        None,
        False,
        [lambda env: seen.append(env.iteration)],
    )
    assert seen == [0, 1]


@pytest.mark.parametrize(
    "key, value",
    [
        ("cegb_penalty_split", "1"),
        ("feature_contri", "0.5,1,1"),
        ("forcedsplits_filename", "s.json"),
        ("linear_tree", "true"),
        ("data_random_seed", "5"),
    ],
)
def test_a_lightgbm_key_that_changes_the_model_is_an_error(tmp_path, capsys, key, value):
    model = tmp_path / "m.json"
    assert run(["train", f"data={_csv(tmp_path)}", f"{key}={value}", f"output_model={model}"]) == 1
    err = capsys.readouterr().err
    assert f"'{key}'={value!r} is not supported by dgbdt yet" in err
    assert "would change the model or its output" in err and not model.exists()
    with pytest.raises(ValueError, match=f"'{key}'.* is not supported by dgbdt yet"):
        dgbdt.train({key: value}, dgbdt.Dataset(np.zeros((4, 1)), np.zeros(4)))


@pytest.mark.parametrize(
    "key, value",
    [
        ("save_binary", "true"),
        ("gpu_device_id", "0"),
        ("local_listen_port", "12400"),
        ("machine_list_file", "mlist.txt"),
        ("device_type", "cpu"),
        ("histogram_pool_size", "-1"),
        ("cegb_penalty_feature_lazy", "0,0,0"),
    ],
)
def test_a_harmless_lightgbm_key_is_a_warning(tmp_path, capsys, key, value):
    model = tmp_path / "m.json"
    assert (
        run(
            [
                "train",
                f"data={_csv(tmp_path)}",
                f"{key}={value}",
                "num_trees=2",
                f"output_model={model}",
                "verbosity=0",
            ]
        )
        == 0
    )
    err = capsys.readouterr().err
    assert err.count("dgbdt: warning: LightGBM parameter") == 1 and model.exists()
    X = np.random.default_rng(0).normal(size=(60, 2))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        dgbdt.train({key: value, "verbosity": -1}, dgbdt.Dataset(X, X[:, 0]), 2)
    assert any("is not supported by dgbdt yet" in str(w.message) for w in caught)


def test_lightgbms_multiclass_example_config_runs_as_written(shared_datasets, tmp_path, capsys):
    folder = shared_datasets / "lightgbm"
    conf = tmp_path / "train.conf"
    model = tmp_path / "m.json"
    conf.write_text(
        MULTICLASS_CONF.format(
            data=folder / "multiclass.train", valid=folder / "multiclass.test", model=model
        )
    )
    assert run([f"config={conf}"]) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert "multiclass.test's auc_mu" in out and "training's auc_mu" in out
    last = [line for line in out.splitlines() if "multiclass.test's auc_mu" in line][-1]
    assert 0.6 < float(last.split("multiclass.test's auc_mu:")[1].split()[0]) < 1.0
    assert model.exists()


def test_boolean_io_keys_are_strict_and_config_files_are_checked(tmp_path, capsys):
    data = _csv(tmp_path)
    assert run(["train", f"data={data}", "header=maybe"]) == 1
    assert "header must be true or false, got 'maybe'" in capsys.readouterr().err
    bad = tmp_path / "bad.conf"
    bad.write_bytes(b"objective = binary\nnum_trees = \xff\n")
    assert run([f"config={bad}"]) == 1
    assert f"{bad}, line 2: not UTF-8 text" in capsys.readouterr().err
    fifo = tmp_path / "fifo.conf"
    os.mkfifo(fifo)
    assert run([f"config={fifo}"]) == 1  # refused, not blocked in open()
    assert "is not a regular file (a FIFO)" in capsys.readouterr().err
    assert run([f"config={tmp_path}"]) == 1
    assert "is not a regular file (a directory)" in capsys.readouterr().err


def test_vague_python_errors_name_what_is_wrong():
    X = np.random.default_rng(0).normal(size=(60, 2))
    train_set = dgbdt.Dataset(X, (X[:, 0] > 0).astype(float))
    with pytest.raises(TypeError, match="params must be a dict, got list"):
        dgbdt.train([1, 2], train_set)
    with pytest.raises(TypeError, match="must return \\(grad, hess\\), got NoneType"):
        dgbdt.train({"objective": lambda preds, data: None, "verbosity": -1}, train_set, 2)
    multi = dgbdt.train(
        {"objective": "multiclass", "num_class": 3, "verbosity": -1},
        dgbdt.Dataset(X, np.arange(60) % 3),
        2,
    )
    with pytest.raises(ValueError, match="init_model has 3 output.*this training has 1"):
        dgbdt.train({"objective": "binary", "verbosity": -1}, train_set, 2, init_model=multi)
    with pytest.raises(TypeError, match="init_model must be a Booster or a model file path"):
        dgbdt.train({"objective": "binary", "verbosity": -1}, train_set, 2, init_model=3)


def test_the_demo_mentions_compiling_only_when_it_compiled(capsys, monkeypatch):
    from dgbdt.cli import demo
    from dgbdt.cli.demo import run_demo

    counts = iter([0, 5])  # a run that compiled 5 kernel variants says so
    monkeypatch.setattr(demo, "kernels_compiled", lambda: next(counts))
    run_demo(["--ranks", "1", "--rows", "2000", "--rounds", "3", "--leaves", "7"])
    assert "(including compiling 5 kernels" in capsys.readouterr().out
    monkeypatch.undo()
    assert run_demo(["--ranks", "1", "--rows", "2000", "--rounds", "3", "--leaves", "7"]) == 0
    run_demo(["--ranks", "1", "--rows", "2000", "--rounds", "3", "--leaves", "7"])
    second = capsys.readouterr().out.split("dgbdt demo:")[-1]
    assert "compiling" not in second


def test_starting_scores_beyond_float32_are_refused():
    X = np.random.default_rng(0).normal(size=(100, 2))
    with pytest.raises(ValueError, match="starting scores give non-finite gradients"):
        dgbdt.train({"verbosity": -1}, dgbdt.Dataset(X, X[:, 0], init_score=np.full(100, 1e39)), 2)


@pytest.mark.parametrize(
    "key, value",
    [
        ("linear_tree", np.False_),
        ("data_random_seed", np.int64(1)),
        ("cegb_penalty_split", np.float32(0)),
        ("feature_contri", np.array([])),
        ("cegb_penalty_feature_lazy", [0, 0]),
        ("feature_contri", [1.0, 1.0]),
    ],
)
def test_lightgbm_defaults_given_as_python_values_are_accepted(key, value):
    from dgbdt.params.table import resolve_params

    with pytest.warns(UserWarning, match="is not supported by dgbdt yet"):
        resolve_params({key: value})


@pytest.mark.parametrize(
    "params, message",
    [
        ({"min_data_in_bin": "1e30"}, "'min_data_in_bin' must fit a 32-bit integer"),
        ({"num_class": 10**12, "objective": "multiclass"}, "'num_class' must fit a 32-bit integer"),
        ({"top_k": 2**31}, "'top_k' must fit a 32-bit integer"),
    ],
)
def test_lightgbm_only_objectives_and_huge_integers_are_named(params, message):
    from dgbdt.params.table import resolve_params

    with pytest.raises(ValueError, match=message.replace("(", "\\(")) as info:
        resolve_params(params)
    assert "Did you mean" not in str(info.value)


def test_one_boolean_parser_everywhere():
    from dgbdt.params.table import resolve_params

    for text, value in (("+", True), ("-", False), ("yes", True), ("no", False), ("1", True)):
        assert resolve_params({"deterministic": text})["deterministic"] is value


def test_the_first_value_of_a_key_wins_and_quotes_are_dropped(tmp_path, capsys):
    data, model = _csv(tmp_path), tmp_path / "m.json"
    conf = tmp_path / "c.conf"
    conf.write_text('num_trees = 5\nobjective = "binary"\nconfig = other.conf\n')
    assert (
        run(
            [
                f'data="{data}"',
                "num_trees=2",
                "num_trees=4",
                f"config={conf}",
                f"output_model={model}",
                "verbosity=0",
            ]
        )
        == 0
    )
    err = capsys.readouterr().err
    assert "num_trees is set=2, num_trees=4 will be ignored" in err  # LightGBM's words
    assert "num_trees is set=2, num_trees=5 will be ignored" in err  # the file comes later
    assert "inside the config file" in err
    booster = dgbdt.Booster(model_file=model)
    assert booster.num_trees() == 2 and booster.objective == "binary"
    assert (
        run(
            [
                f"data={data}",
                "label_column=0",
                "label=1",
                f"output_model={model}",
                "num_trees=1",
                "verbosity=0",
            ]
        )
        == 0
    )
    assert "Both 'label_column'='0' and 'label'='1' set 'label_column'" in capsys.readouterr().err


def test_the_task_of_the_command_and_of_task_must_agree(tmp_path, capsys):
    data, model = _csv(tmp_path), tmp_path / "m.json"
    assert run(["train", f"data={data}", "task=predict", f"input_model={model}"]) == 1
    assert "the command says 'train' but task='predict'" in capsys.readouterr().err
    assert not list(tmp_path.glob("*.txt")) and not model.exists()
    assert (
        run(
            [f"data={data}", "task=training", "num_trees=1", f"output_model={model}", "verbosity=0"]
        )
        == 0
    )  # LightGBM's alias
    assert run([f"data={data}", "task=refitt", f"input_model={model}"]) == 1
    assert "unknown task 'refitt'" in capsys.readouterr().err


def test_predict_checks_its_parameters_before_writing(tmp_path, capsys):
    data, model, out = _csv(tmp_path), tmp_path / "m.json", tmp_path / "p.txt"
    assert (
        run(["train", f"data={data}", "num_trees=1", f"output_model={model}", "verbosity=0"]) == 0
    )
    assert (
        run(
            [
                "predict",
                f"data={data}",
                f"input_model={model}",
                f"output_result={out}",
                "objective=binray",
            ]
        )
        == 1
    )
    assert not out.exists() and "Did you mean 'binary'?" in capsys.readouterr().err


def test_predict_names_the_column_keys_the_model_recorded(tmp_path, capsys):
    rng = np.random.default_rng(0)
    rows = "".join(f"{i % 2},{v:.4f},{w:.4f}\n" for i, (v, w) in enumerate(rng.random((80, 2))))
    data = tmp_path / "h.csv"
    data.write_text("y,a,b\n" + rows)
    model = tmp_path / "m.json"
    assert (
        run(
            [
                "train",
                f"data={data}",
                "header=true",
                "label_column=name:y",
                "num_trees=1",
                f"output_model={model}",
                "verbosity=0",
            ]
        )
        == 0
    )
    assert dgbdt.Booster(model_file=model).params["header"] == "true"  # recorded too
    plain = tmp_path / "plain.csv"
    plain.write_text(rows)
    assert (
        run(
            [
                "predict",
                f"data={plain}",
                f"input_model={model}",
                f"output_result={tmp_path / 'p.txt'}",
            ]
        )
        == 1
    )
    err = capsys.readouterr().err
    assert "as recorded in" in err and "header=true" in err and "label_column=name:y" in err


@pytest.mark.parametrize(
    "error, code",
    [(KeyboardInterrupt, 130), (BrokenPipeError, 141), (OSError(28, "No space left on device"), 1)],
)
def test_the_command_line_ends_without_a_traceback(monkeypatch, capsys, error, code):
    import dgbdt.__main__ as entry

    def fail(argv):
        raise error

    monkeypatch.setattr(entry, "_main", fail)
    monkeypatch.setattr(entry.os, "dup2", lambda *a: None)  # keep pytest's stdout
    monkeypatch.setattr(entry.os, "open", lambda *a: 0)
    assert entry.main(["train"]) == code
    assert "Traceback" not in capsys.readouterr().err


def test_train_output_into_a_closed_pipe_exits_quietly(tmp_path):
    data = _csv(tmp_path, n=400)
    result = subprocess.run(
        f"{sys.executable} -m dgbdt train data={data} num_trees=30 "
        f"output_model={tmp_path / 'm.json'} | head -1",
        shell=True,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert "Traceback" not in result.stderr and "Broken pipe" not in result.stderr


def test_more_of_lightgbms_python_api_shapes():
    X = np.random.default_rng(0).normal(size=(90, 3))
    y = np.arange(90) % 3
    train_set = dgbdt.Dataset(X, y)
    # one validation Dataset and one name, not lists
    rec = {}
    dgbdt.train(
        {"objective": "multiclass", "num_class": 3, "verbosity": -1},
        train_set,
        2,
        valid_sets=dgbdt.Dataset(X, y, reference=train_set),
        valid_names="v",
        callbacks=[dgbdt.record_evaluation(rec)],
    )
    assert list(rec) == ["v"]

    # a multiclass custom objective in LightGBM's flat, class-major layout
    def softmax_flat(preds, data):
        p = np.exp(preds - preds.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        onehot = np.eye(3)[data.label.astype(int)]
        return (p - onehot).T.ravel(), (2 * p * (1 - p)).T.ravel()

    def softmax_2d(preds, data):
        g, h = softmax_flat(preds, data)
        return g.reshape(3, -1).T, h.reshape(3, -1).T

    flat, two_d = (
        dgbdt.train({"objective": f, "num_class": 3, "verbosity": -1}, train_set, 3)
        for f in (softmax_flat, softmax_2d)
    )
    np.testing.assert_array_equal(flat.predict(X, raw_score=True), two_d.predict(X, raw_score=True))
    with pytest.raises(TypeError, match="must be real numbers, got dtype complex"):
        dgbdt.train(
            {"objective": lambda p, d: (p + 0j, np.ones_like(p)), "verbosity": -1},
            dgbdt.Dataset(X, X[:, 0]),
            2,
        )
    with pytest.raises(TypeError, match="feval 'nothing' must return \\(name, value"):

        def nothing(preds, data):
            return None

        dgbdt.train(
            {"verbosity": -1},
            dgbdt.Dataset(X, X[:, 0]),
            2,
            valid_sets=[dgbdt.Dataset(X, X[:, 0])],
            feval=nothing,
        )


@pytest.mark.parametrize("bad", ["abc", -1, 0])
def test_an_estimators_bad_time_out_is_named(bad):
    # The estimators resolve time_out before starting MPI (sharded learners).
    X = np.random.default_rng(0).random((60, 3))
    y = (X[:, 0] > 0.5).astype(int)
    # (text that is no number: LightGBM's "Parameter time_out should be of type double")
    with pytest.raises(ValueError, match="Parameter '?time_out'? .*must be a number > 0"):
        dgbdt.DGBDTClassifier(tree_learner="data", time_out=bad, verbose=-1).fit(X, y)
