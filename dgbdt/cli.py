"""``dgbdt train`` / ``dgbdt predict``: LightGBM-style command line (first part).

Configuration as in LightGBM: ``config=FILE`` (``key = value`` lines, ``#``
comments) and ``key=value`` arguments that override the file; the task comes
from the command (``dgbdt train``) or from ``task=train|predict``.  Model
parameters go through the one parameter table (dgbdt.params), so names,
aliases and errors are those of the Python API.  Not done yet: sharded
reading under mpiexec, checkpoints, warnings for unsupported LightGBM keys.
"""
import os
import sys

import numpy as np

# I/O keys of LightGBM's CLI (canonical name: aliases); everything else is a model parameter.
IO_KEYS = {
    "task": ("task_type",),
    "data": ("train", "train_data", "train_data_file", "data_filename"),
    "valid_data": ("valid", "test", "test_data", "valid_data_file", "test_data_file",
                   "valid_filenames"),
    "output_model": ("model_output", "model_out"),
    "input_model": ("model_input", "model_in"),
    "output_result": ("predict_result", "prediction_result", "predict_name", "prediction_name",
                      "pred_name", "name_pred"),
    "header": ("has_header",),
    "label_column": ("label",),
    "weight_column": ("weight",),
    "group_column": ("group", "group_id", "query_column", "query", "query_id"),
    "ignore_column": ("ignore_feature", "blacklist"),
    "predict_raw_score": ("is_predict_raw_score", "predict_rawscore", "raw_score"),
    "predict_leaf_index": ("is_predict_leaf_index", "leaf_index"),
}
IO_DEFAULTS = {"task": "train", "output_model": "LightGBM_model.txt",
               "output_result": "LightGBM_predict_result.txt", "header": "false",
               "label_column": "0", "predict_raw_score": "false", "predict_leaf_index": "false"}
_IO_ALIAS = {a: k for k, aliases in IO_KEYS.items() for a in (k, *aliases)}


class CliError(Exception):
    """A user error: printed as one line, exit status 1."""


def _truthy(value):
    return str(value).strip().lower() in ("true", "1", "yes", "+")


def read_config_file(path):
    try:
        with open(path, encoding="utf-8") as fh:
            lines = fh.read().splitlines()
    except FileNotFoundError:
        raise CliError(f"config file not found: {path}") from None
    pairs = []
    for number, line in enumerate(lines, 1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        if "=" not in text:
            raise CliError(f"{path}, line {number}: expected 'key = value', got {line.strip()!r}")
        key, value = text.split("=", 1)
        pairs.append((key.strip(), value.strip()))
    return pairs


def parse_arguments(argv):
    """(io settings, model params) from ``key=value`` arguments and config files."""
    pairs = []
    for arg in argv:
        if "=" not in arg:
            raise CliError(f"expected key=value, got {arg!r}")
        key, value = arg.split("=", 1)
        pairs.append((key.strip(), value.strip()))
    # A config file's values come first; command-line arguments override them.
    from_file = []
    for key, value in pairs:
        if key in ("config", "config_file"):
            from_file.extend(read_config_file(value))
    io, params = dict(IO_DEFAULTS), {}
    for key, value in from_file + [(k, v) for k, v in pairs if k not in ("config", "config_file")]:
        if key in _IO_ALIAS:
            io[_IO_ALIAS[key]] = value
        else:
            params[key] = value
    return io, params


def _read(path, io):
    from .readers import read_data
    ignore = io.get("ignore_column")
    return read_data(path, header=_truthy(io["header"]), label_column=io["label_column"],
                     weight_column=io.get("weight_column"), group_column=io.get("group_column"),
                     ignore_columns=ignore.split(",") if ignore and not ignore.startswith("name:")
                     else (ignore or ()))


def run_train(io, params):
    from . import Dataset, log_evaluation, train
    from .params import resolve_params
    if "data" not in io:
        raise CliError("no training data: give data=FILE")
    cfg = resolve_params(params)                 # unknown names and bad values fail here
    loaded = _read(io["data"], io)
    train_set = Dataset(loaded.X, loaded.label, weight=loaded.weight, init_score=loaded.init_score,
                        feature_name=loaded.feature_names or "auto")
    valid_sets, valid_names = [], []
    for path in filter(None, (io.get("valid_data") or "").split(",")):
        v = _read(path.strip(), io)
        valid_sets.append(Dataset(v.X, v.label, weight=v.weight, init_score=v.init_score,
                                  reference=train_set))
        valid_names.append(os.path.basename(path.strip()))
    if _truthy(params.get("is_provide_training_metric", params.get("is_training_metric", "false"))):
        valid_sets.insert(0, train_set)
        valid_names.insert(0, "training")
    booster = train(params, train_set, valid_sets=valid_sets or None, valid_names=valid_names or None,
                    callbacks=[log_evaluation(cfg["metric_freq"])])
    booster.save_model(io["output_model"])
    print(f"dgbdt: trained {booster.current_iteration()} iterations; model written to "
          f"{io['output_model']}")


def run_predict(io, params):
    from . import Booster
    from .model_io import write_atomic
    if "data" not in io or "input_model" not in io:
        raise CliError("predict needs data=FILE and input_model=FILE")
    booster = Booster(model_file=io["input_model"])
    X = _read(io["data"], io).X
    n_model = booster.num_feature()
    if hasattr(X, "tocsr") and X.shape[1] < n_model:       # LibSVM rows may stop early
        X = X.tocsr().copy()
        X.resize((X.shape[0], n_model))
    pred = booster.predict(X, raw_score=_truthy(io["predict_raw_score"]),
                           pred_leaf=_truthy(io["predict_leaf_index"]))
    pred = np.asarray(pred).reshape(X.shape[0], -1)
    fmt = "%d" if _truthy(io["predict_leaf_index"]) else "%.17g"
    lines = ["\t".join(fmt % v for v in row) for row in pred]
    write_atomic(io["output_result"], "\n".join(lines) + ("\n" if lines else ""))
    print(f"dgbdt: {len(lines)} predictions written to {io['output_result']}")


def run(argv):
    """``dgbdt [train|predict] key=value ... [config=FILE]``; returns the exit status."""
    from .readers import DataFormatError
    from .model_io import ModelFormatError
    args = list(argv)
    task = None
    if args and "=" not in args[0]:
        task = args.pop(0)
    try:
        io, params = parse_arguments(args)
        task = task or io["task"]
        if task == "train":
            run_train(io, params)
        elif task == "predict":
            run_predict(io, params)
        else:
            raise CliError(f"unknown task {task!r}: use train or predict")
    except (CliError, DataFormatError, ModelFormatError, FileNotFoundError, ValueError, TypeError) as exc:
        print(f"dgbdt: error: {exc}", file=sys.stderr)
        return 1
    return 0
