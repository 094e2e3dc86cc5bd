"""LightGBM drop-in behaviour of ``Booster.params`` (issue 28): the user's
params of a training (with the Dataset's), a loaded model's recorded ones, and
``Booster.reset_parameter``; dgbdt's full resolved configuration is
``Booster.config``, which the model file records.  Each test names the
LightGBM behaviour it mirrors; where LightGBM is the reference for a value it
is compared with ``lightgbm`` directly."""

import inspect
import pickle
import re

import numpy as np
import pytest
from test_dropin_training import _data, _l2

import dgbdt


def _both(make):
    """``make(lib)`` with dgbdt and with lightgbm."""
    lgb = pytest.importorskip("lightgbm")
    return make(dgbdt), make(lgb)


# --------------------------------------------------------------------------- #
# a training's params
# --------------------------------------------------------------------------- #
def test_train_params_are_the_callers_with_the_datasets():
    """LightGBM train(): Booster.params is train's params (num_iterations under
    its main name for an alias, objective None when not given) with the
    Dataset's params, train's winning for the same key."""
    X, y = _data()

    def make(lib):
        ds = lib.Dataset(X, y, params={"max_bin": 63, "min_data_in_bin": 2, "verbose": -1})
        params = {"verbose": -1, "max_bin": 100, "n_estimators": 3, "num_leaves": 7}
        return lib.train(params, ds).params

    ours, theirs = _both(make)
    assert ours == theirs
    assert ours == {
        "verbose": -1,
        "max_bin": 100,
        "num_iterations": 3,
        "num_leaves": 7,
        "objective": None,
        "min_data_in_bin": 2,
    }


def test_train_params_keep_out_defaults_and_keep_the_resolved_config():
    """LightGBM: Booster.params holds only what was given (no defaults); dgbdt's
    resolved configuration (every parameter) is Booster.config."""
    X, y = _data()
    b = dgbdt.train({"verbose": -1, "eta": 0.2}, dgbdt.Dataset(X, y), 2)
    assert "num_leaves" not in b.params and b.params["eta"] == 0.2
    assert b.config["num_leaves"] == 31 and b.config["learning_rate"] == 0.2


def test_callable_objective_is_none_in_params():
    """LightGBM train(): a callable objective is params["objective"] = "none"."""
    X, y = _data()

    def make(lib):
        return lib.train({"verbose": -1, "objective": _l2}, lib.Dataset(X, y), 2).params

    ours, theirs = _both(make)
    assert ours == theirs == {"verbose": -1, "objective": "none", "num_iterations": 2}


def test_early_stopping_round_none_is_not_in_params():
    """LightGBM test_early_stopping_is_not_enabled_for_non_positive_stopping_rounds
    [None]: early_stopping_round=None is dropped from Booster.params."""
    X, y = _data()
    Xv, yv = _data(seed=1)
    ds = dgbdt.Dataset(X, y)
    params = {"num_trees": 3, "verbose": -1, "early_stopping_round": None}
    b = dgbdt.train(params, ds, valid_sets=[dgbdt.Dataset(Xv, yv, reference=ds)])
    assert "early_stopping_round" not in b.params and b.num_trees() == 3
    assert "num_trees" not in b.params and b.params["num_iterations"] == 3


def test_booster_with_train_set_params_are_given_ones_and_datasets():
    """LightGBM Booster(params, train_set): params as given (no num_iterations
    added), updated by the Dataset's get_params() (the Dataset's win)."""
    X, y = _data()

    def make(lib):
        ds = lib.Dataset(X, y, params={"max_bin": 30})
        return lib.Booster({"num_leaves": 7, "max_bin": 20, "verbose": -1}, ds).params

    ours, theirs = _both(make)
    assert ours == theirs == {"num_leaves": 7, "max_bin": 30, "verbose": -1}


def test_pickle_keeps_params():
    """LightGBM pickles a Booster's attributes: params survive a pickle round trip."""
    X, y = _data()
    b = dgbdt.train({"verbose": -1, "num_leaves": 5}, dgbdt.Dataset(X, y), 2)
    again = pickle.loads(pickle.dumps(b))
    assert again.params == b.params and again.config["num_leaves"] == 5


# --------------------------------------------------------------------------- #
# a loaded model's params; the model file
# --------------------------------------------------------------------------- #
def test_model_file_records_the_full_config_and_loaded_params_are_it(tmp_path):
    """LightGBM: the model text's parameters block is the whole configuration,
    and a loaded Booster's params are that block (_get_loaded_param)."""
    X, y = _data()
    b = dgbdt.train({"verbose": -1, "num_leaves": 5}, dgbdt.Dataset(X, y), 2)
    text = b.model_to_string()
    assert "[num_leaves: 5]" in text and "[min_data_in_leaf: 20]" in text
    loaded = dgbdt.Booster(model_str=text)
    assert loaded.params == loaded.config
    assert loaded.params["num_leaves"] == 5 and loaded.params["min_data_in_leaf"] == 20
    path = tmp_path / "m.json"
    b.save_model(path)
    assert dgbdt.Booster(model_file=path).config == loaded.config


def test_params_with_a_model_file_are_ignored_with_a_warning(tmp_path):
    """LightGBM: Booster(params, model_file=...) warns "Ignoring params argument,
    using parameters from model file." and uses the file's."""
    X, y = _data()
    path = tmp_path / "m.txt"
    dgbdt.train({"verbose": -1, "num_leaves": 5}, dgbdt.Dataset(X, y), 2).save_model(path)
    with pytest.warns(
        UserWarning, match="Ignoring params argument, using parameters from model file"
    ):
        b = dgbdt.Booster({"num_leaves": 9}, model_file=path)
    assert b.params["num_leaves"] == 5


# --------------------------------------------------------------------------- #
# reset_parameter
# --------------------------------------------------------------------------- #
def test_reset_parameter_updates_params_and_returns_self():
    """LightGBM test_reset_params_works_with_metric_num_class_and_boosting:
    reset_parameter returns the Booster, its params updated by the new ones
    (unchanged objective / num_class / boosting / metric are accepted)."""
    X, y = _data()
    y = np.arange(len(y)) % 5
    booster_params = {
        "objective": "multiclass",
        "max_depth": 4,
        "bagging_fraction": 0.8,
        "metric": ["multi_logloss", "multi_error"],
        "boosting": "gbdt",
        "num_class": 5,
    }
    bst = dgbdt.Booster(booster_params, dgbdt.Dataset(X, y, params={"max_bin": 150}))
    assert bst.params == {"max_bin": 150, **booster_params}
    new_params = {**booster_params, "bagging_fraction": 0.9}
    assert bst.reset_parameter(new_params) is bst
    assert bst.params == {"max_bin": 150, **new_params}
    assert bst.config["bagging_fraction"] == 0.9


def test_reset_parameter_takes_effect_in_the_following_rounds():
    """LightGBM: Booster.reset_parameter on a training Booster changes the
    training from the next update on (here: fewer leaves per tree)."""
    X, y = _data(400)
    bst = dgbdt.Booster(
        {"verbose": -1, "num_leaves": 15, "min_data_in_leaf": 5}, dgbdt.Dataset(X, y)
    )
    bst.update()
    bst.reset_parameter({"num_leaves": 3})
    bst.update()
    leaves = [t["num_leaves"] for t in bst.dump_model()["tree_info"]]
    assert leaves[0] > 3 and leaves[1] == 3
    assert bst.config["num_leaves"] == 3 and bst.params["num_leaves"] == 3
    assert "[num_leaves: 3]" in bst.model_to_string()


def test_reset_parameter_refuses_a_change_training_cannot_take():
    """LightGBM: ResetConfig refuses changing the objective of a training
    Booster (an error naming it)."""
    X, y = _data()
    bst = dgbdt.Booster({"verbose": -1}, dgbdt.Dataset(X, y))
    with pytest.raises(ValueError, match="objective"):
        bst.reset_parameter({"objective": "huber"})


def test_reset_parameter_of_a_loaded_model_updates_its_record():
    """LightGBM: reset_parameter updates Booster.params (a loaded model: dgbdt
    records the resolved value in the config, so a saved model shows it)."""
    X, y = _data()
    text = dgbdt.train({"verbose": -1}, dgbdt.Dataset(X, y), 2).model_to_string()
    loaded = dgbdt.Booster(model_str=text)
    assert loaded.reset_parameter({"eta": "0.5"}) is loaded
    assert loaded.params["eta"] == "0.5" and loaded.config["learning_rate"] == 0.5
    assert re.search(r"\[learning_rate: 0.5\]", loaded.model_to_string())


def test_reset_parameter_callback_updates_params():
    """LightGBM: the reset_parameter callback calls Booster.reset_parameter, so
    the Booster's params hold the last round's value."""
    X, y = _data()

    def make(lib):
        return lib.train(
            {"verbose": -1, "learning_rate": 0.1},
            lib.Dataset(X, y),
            2,
            callbacks=[lib.reset_parameter(learning_rate=[0.2, 0.3])],
        ).params

    ours, theirs = _both(make)
    assert ours == theirs
    assert ours["learning_rate"] == 0.3


def _positional_names(function):
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return [p.name for p in inspect.signature(function).parameters.values() if p.kind in kinds]


def test_positional_parameters_are_lightgbms():
    """LightGBM users pass arguments by position (``cv(params, ds, 10, None, 3)``,
    ``booster.predict(X, 0, None, True)``): every positional parameter of
    LightGBM's train, cv, Booster methods, estimators and callbacks is dgbdt's
    at the same place (dgbdt's own come after, or keyword only)."""
    lgb = pytest.importorskip("lightgbm")
    pairs = [(dgbdt.train, lgb.train), (dgbdt.cv, lgb.cv)]
    for name in (
        "__init__",
        "predict",
        "refit",
        "save_model",
        "model_to_string",
        "dump_model",
        "update",
        "feature_importance",
        "reset_parameter",
        "set_leaf_output",
    ):
        pairs.append((getattr(dgbdt.Booster, name), getattr(lgb.Booster, name)))
    for ours, theirs in (
        (dgbdt.DGBDTRegressor, lgb.LGBMRegressor),
        (dgbdt.DGBDTClassifier, lgb.LGBMClassifier),
        (dgbdt.DGBDTRanker, lgb.LGBMRanker),
    ):
        for name in ("__init__", "fit", "predict"):
            pairs.append((getattr(ours, name), getattr(theirs, name)))
    pairs.append((dgbdt.DGBDTClassifier.predict_proba, lgb.LGBMClassifier.predict_proba))
    for name in ("early_stopping", "log_evaluation", "record_evaluation", "reset_parameter"):
        pairs.append((getattr(dgbdt, name), getattr(lgb, name)))
    for ours, theirs in pairs:
        want = _positional_names(theirs)
        assert _positional_names(ours)[: len(want)] == want, theirs.__qualname__
