"""``dgbdt train`` / ``dgbdt predict``: LightGBM's command line, on one machine or K ranks.

Configuration as in LightGBM: ``config=FILE`` (``key = value`` lines, ``#``
comments) and ``key=value`` arguments that override the file; the task comes
from the command (``dgbdt train``) or from ``task=train|predict``.  Model
parameters go through the one parameter table (dgbdt.params), so names,
aliases and errors are those of the Python API.  A LightGBM key dgbdt does
not support yet is named in a warning; any other unknown key is an error.

Under ``mpiexec -n K`` with ``tree_learner=data|voting`` each rank reads only
its own byte range of the data file (``pre_partition=true``: its own file,
``data=train.{rank}.csv``); with ``tree_learner=feature`` each rank reads every
row but keeps only its own block of columns.  Prediction under mpiexec reads
by byte range too and writes one file in input order.

Query groups (ranking) come from ``group_column``, LibSVM ``qid:`` fields or a
``<data>.query`` file, positions from a ``<data>.position`` file; validation files
have their own.  Byte ranges are cut at query boundaries, so each query is on one
rank (dgbdt.io.querycuts).
"""

import contextlib
import os
import sys
import warnings
from typing import Any, Dict, List, Sequence, Tuple

import numpy as np

from .comm import AgreedError, agreed, launched_rank, launched_size

# I/O keys of LightGBM's CLI (canonical name: aliases); everything else is a model parameter.
IO_KEYS = {
    "task": ("task_type",),
    "data": ("train", "train_data", "train_data_file", "data_filename"),
    "valid_data": (
        "valid",
        "test",
        "test_data",
        "valid_data_file",
        "test_data_file",
        "valid_filenames",
    ),
    "output_model": ("model_output", "model_out"),
    "input_model": ("model_input", "model_in"),
    "output_result": (
        "predict_result",
        "prediction_result",
        "predict_name",
        "prediction_name",
        "pred_name",
        "name_pred",
    ),
    "header": ("has_header",),
    "label_column": ("label",),
    "weight_column": ("weight",),
    "group_column": ("group", "group_id", "query_column", "query", "query_id"),
    "ignore_column": ("ignore_feature", "blacklist"),
    "predict_raw_score": ("is_predict_raw_score", "predict_rawscore", "raw_score"),
    "predict_leaf_index": ("is_predict_leaf_index", "leaf_index"),
    "num_iteration_predict": (),
    "start_iteration_predict": (),
    "snapshot_freq": ("save_period",),
    "pre_partition": ("is_pre_partition",),
    "zero_based": (),  # dgbdt's: LibSVM indices start at 0 (LightGBM) or 1 (XGBoost data)
    "model_format": (),  # dgbdt's: the format train and convert_model write
    "convert_model": ("convert_model_file",),
    "convert_model_language": (),
}
IO_DEFAULTS = {
    "task": "train",
    "output_model": "LightGBM_model.txt",
    "output_result": "LightGBM_predict_result.txt",
    "header": "false",
    "label_column": "0",
    "predict_raw_score": "false",
    "predict_leaf_index": "false",
    "num_iteration_predict": "-1",
    "start_iteration_predict": "0",
    "snapshot_freq": "-1",
    "pre_partition": "false",
    "zero_based": "true",
}
#: what model_format may say (Booster.save_model's formats)
MODEL_FORMATS = ("dgbdt", "lightgbm")
IO_HELP = {
    "task": "train, predict or convert_model (or give it as the command: dgbdt train ...)",
    "data": "training data, or the data to predict: CSV, TSV, whitespace or LibSVM text, "
    "gzip allowed; side files <data>.weight, <data>.init, <data>.query, <data>.position "
    "are read",
    "valid_data": "comma-separated validation files (metrics each metric_freq iterations)",
    "output_model": "where train writes the model (in model_format)",
    "input_model": "model to continue training from (train) or to predict with (predict)",
    "output_result": "where predict writes one line per input row",
    "header": "the first line holds column names",
    "label_column": "label column: index or name:col (LibSVM: always the first token)",
    "weight_column": "weight column: index (not counting the label column) or name:col",
    "group_column": "query id column: index (not counting the label column) or name:col; "
    "a query's rows must be contiguous (LibSVM: qid: fields; or a <data>.query file of "
    "query sizes)",
    "ignore_column": "columns to drop: indices (not counting the label column) or name:a,b",
    "predict_raw_score": "predict raw scores instead of probabilities",
    "predict_leaf_index": "predict the leaf index of every tree",
    "num_iteration_predict": "predict with the first N iterations (<= 0: all, or the best)",
    "start_iteration_predict": "predict from this iteration on (clamped to the model's iterations; "
    "with a start > 0 every later iteration is used, not the best ones)",
    "snapshot_freq": "write <output_model>.snapshot_iter_<i> every N iterations (<= 0: never)",
    "pre_partition": "under mpiexec: each rank reads its own file (data=train.{rank}.csv) "
    "instead of its byte range of one file",
    "zero_based": "LibSVM feature indices start at 0 (false: at 1)",
    "model_format": "the model file train and convert_model write: dgbdt (JSON, the default: "
    "it keeps the bins, for exact continued training) or lightgbm (LightGBM's text model, "
    "for LightGBM, treelite, ONNX, shap)",
    "convert_model": "task=convert_model: where to write input_model in model_format "
    "(default: the format input_model is not in)",
    "convert_model_language": "LightGBM's if-else code output: not supported (dgbdt "
    "converts between model formats)",
}
_IO_ALIAS = {a: k for k, aliases in IO_KEYS.items() for a in (k, *aliases)}

USAGE = """usage: dgbdt train key=value ... [config=FILE]
       dgbdt predict data=FILE input_model=MODEL [output_result=FILE] [key=value ...]
       dgbdt convert_model input_model=MODEL convert_model=OUT [model_format=dgbdt|lightgbm]
       dgbdt config=FILE [key=value ...]        (task=train|predict in the file)
       mpiexec -n K dgbdt train tree_learner=data|voting|feature ...

Keys and values as in LightGBM's config files; key=value arguments override the file.
"""


class CliError(Exception):
    """A user error: printed as one line, exit status 1."""


def _flag(io, key):
    """A boolean I/O key: true/false (LightGBM's +/-, and 1/0, yes/no: the one
    parser of dgbdt.lightgbm_keys); anything else is an error naming the key."""
    from .lightgbm_keys import parse_bool

    value = parse_bool(str(io[key]))
    if value is None:
        raise CliError(f"{key} must be true or false, got {io[key]!r}")
    return value


def _int(io, key):
    try:
        return int(io[key])
    except ValueError:
        raise CliError(f"{key} must be an integer, got {io[key]!r}") from None


def help_text(width: int = 100) -> str:
    """Usage, the I/O keys and every model parameter (from the one parameter table)."""
    import textwrap
    from .params import params_table_text

    io = []
    for key, aliases in IO_KEYS.items():
        head = key + (f" (aliases: {', '.join(aliases)})" if aliases else "")
        io.append(
            textwrap.fill(
                f"{head}  default: {IO_DEFAULTS.get(key, '')}".rstrip(),
                width,
                subsequent_indent="        ",
            )
        )
        io.append(
            textwrap.fill(IO_HELP[key], width, initial_indent="    ", subsequent_indent="    ")
        )
    return (
        f"{USAGE}\nInput/output keys:\n"
        + "\n".join(io)
        + f"\n\nModel parameters:\n{params_table_text(width)}"
    )


CONFIG_MAX_BYTES = 1 << 24


def read_config_file(path: str) -> List[Tuple[str, str]]:
    from .files import check_regular_file

    try:
        check_regular_file(path, "config file")  # a FIFO would block open()
        with open(path, "rb") as fh:
            data = fh.read(CONFIG_MAX_BYTES + 1)
    except (OSError, ValueError) as exc:
        raise CliError(str(exc)) from None
    if len(data) > CONFIG_MAX_BYTES:
        raise CliError(f"config file {path} is larger than {CONFIG_MAX_BYTES >> 20} MiB")
    try:
        text = data.decode("utf-8-sig")  # a BOM is not part of a key
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise CliError(
            f"{path}, line {line}: not UTF-8 text (byte 0x{data[exc.start]:02x})"
        ) from None
    lines = text.splitlines()
    pairs = []
    for number, line in enumerate(lines, 1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        if "=" not in text:
            raise CliError(f"{path}, line {number}: expected 'key = value', got {line.strip()!r}")
        pairs.append(_pair(text))
    return pairs


def _unquote(text):
    """LightGBM's RemoveQuotationSymbol: quotes around a key or value are not part of it."""
    return text.strip().strip("'\"")


def _pair(text):
    key, value = text.split("=", 1)
    return _unquote(key), _unquote(value)


def parse_arguments(argv: Sequence[str]) -> Tuple[Dict[str, Any], Dict[str, str]]:
    """(io settings, model params) from ``key=value`` arguments and config files.

    As LightGBM: the command line comes first, then the config file's lines,
    and the first value of a key wins (later ones are warned about); of two
    spellings of one key, the canonical name wins (warned about too).  LightGBM
    keys dgbdt does not support are warned about or refused (see
    ``_unsupported_or_unknown``); other unknown keys raise, naming the closest
    valid key.
    """
    pairs = []
    for arg in argv:
        if "=" not in arg:
            raise CliError(f"expected key=value, got {arg!r}")
        pairs.append(_pair(arg))
    config = [v for k, v in pairs if k in ("config", "config_file")]
    from_file = []
    if config:
        for key, value in read_config_file(config[0]):
            if key in ("config", "config_file"):
                warnings.warn(
                    f"{key}={value!r} inside the config file {config[0]} is ignored "
                    "(as in LightGBM)",
                    stacklevel=2,
                )
            else:
                from_file.append((key, value))
    given = {}
    for key, value in [p for p in pairs if p[0] not in ("config", "config_file")] + from_file:
        if key in given:
            if given[key] != value:
                warnings.warn(
                    f"{key} is set={given[key]}, {key}={value} will be ignored. "
                    f"Current value: {key}={given[key]}",
                    stacklevel=2,
                )
            continue
        given[key] = value
    return _split_io_and_params(given)


def _split_io_and_params(given):
    io, params = dict(IO_DEFAULTS), {}
    spellings = {}  # I/O key -> [(spelling, value), ...] in order
    for key, value in given.items():
        if key in _IO_ALIAS:
            spellings.setdefault(_IO_ALIAS[key], []).append((key, value))
        elif _is_model_param(key):
            params[key] = value
        else:
            _unsupported_or_unknown(key, value)
    for name, spelled in spellings.items():
        # as for model parameters: the canonical name wins, else the first spelling
        key, value = next((kv for kv in spelled if kv[0] == name), spelled[0])
        for other, other_value in spelled:
            if other != key and other_value != value:
                warnings.warn(
                    f"Both {key!r}={value!r} and {other!r}={other_value!r} set "
                    f"{name!r}; using {key!r}={value!r} and ignoring {other!r}",
                    stacklevel=3,
                )
        io[name] = value
    io["_given"] = set(spellings)  # I/O keys set by the user (not defaults)
    return io, params


def _is_model_param(key):
    from .params import ALIASES

    return key in ALIASES


def _unsupported_or_unknown(key, value):
    """A LightGBM key dgbdt does not support: warned about when it changes
    nothing, an error when it changes the model or the output (the Python
    API's rule, dgbdt.params.lightgbm_only_key); any other key is an error
    naming the closest valid key."""
    import difflib
    from .lightgbm_keys import lightgbm_canonical
    from .params import ALIASES, lightgbm_only_key

    if lightgbm_canonical(key) is not None:
        try:
            warnings.warn(lightgbm_only_key(key, value), stacklevel=2)
        except ValueError as exc:
            raise CliError(str(exc)) from None
        return
    close = difflib.get_close_matches(key, [*ALIASES, *_IO_ALIAS], n=1)
    hint = " See `dgbdt train --help`."
    if close:
        canonical = ALIASES.get(close[0], _IO_ALIAS.get(close[0]))
        alias_of = f" (alias of {canonical!r})" if canonical != close[0] else ""
        hint = f" Did you mean {close[0]!r}{alias_of}?"
    raise CliError(f"unknown parameter {key!r}.{hint}")


#: I/O keys that say how a data file's columns map to features (which are not
#: features; LibSVM's first index); training records them in the model, and
#: predict reads files the same way by default.
COLUMN_KEYS = (
    "header",
    "label_column",
    "weight_column",
    "group_column",
    "ignore_column",
    "zero_based",
)


def _record_columns(columns):
    """A callback writing the column keys into the model before each iteration,
    so that snapshots (``snapshot_freq``) predict like the final model."""

    def record(env):
        env.model.params.update(columns)

    record.before_iteration = True
    return record


def _with_model_columns(io, booster):
    """``io`` with the column keys of the model's training where not given."""
    recorded = {
        k: booster.params[k]
        for k in COLUMN_KEYS
        if k in booster.params and k not in io.get("_given", ())
    }
    return {**io, **recorded}


def _without_label_if_narrow(io, with_columns, n_model):
    """LightGBM's predict reads a delimited file whose lines hold exactly the
    model's features as having no label (parser.cpp GetLabelIdxForCSV): so
    here, unless label_column is given or other columns have roles."""
    from .io import first_row_width

    if (
        "label_column" in io.get("_given", ())
        or not with_columns.get("label_column")
        or any(with_columns.get(k) for k in ("weight_column", "group_column", "ignore_column"))
    ):
        return with_columns
    if first_row_width(io["data"], header=_flag(with_columns, "header")) != n_model:
        return with_columns
    return {**with_columns, "label_column": ""}


def _read_options(io):
    ignore = io.get("ignore_column")
    return dict(
        header=_flag(io, "header"),
        label_column=io["label_column"] or None,
        weight_column=io.get("weight_column"),
        group_column=io.get("group_column"),
        ignore_columns=ignore.split(",")
        if ignore and not ignore.startswith("name:")
        else (ignore or ()),
        zero_based=_flag(io, "zero_based"),
    )


def _world(n_ranks, params):
    """The MPI world when launched on several ranks, else None (no MPI initialised);
    its collectives wait ``time_out`` minutes (from the params)."""
    if n_ranks <= 1:
        return None
    from .comm import world_comm
    from .params import resolve_params

    return world_comm(resolve_params(params)["time_out"])


def _check_output(path, comm):
    """Refuse an output path that cannot be written before any work is done
    (rank 0 writes outputs; every rank then raises alike)."""
    from .files import check_writable_target

    if comm is None:
        check_writable_target(path)
    else:
        from .io import run_agreed

        run_agreed(comm, lambda: check_writable_target(path) if comm.rank == 0 else None)


def _read_for_training(path, io, comm, tree_learner, rank_files):
    """(LoadedData, feature_indices or None) of this rank's share of ``path``."""
    from .io import read_data

    options = _read_options(io)
    if comm is None:
        return read_data(path, **options), None
    # Reading is legitimately uneven (rank 0 decompresses a gzip file for all).
    with comm.slow_phase(f"reading {path}"):
        return _read_share(path, options, comm, tree_learner, rank_files)


def _read_share(path, options, comm, tree_learner, rank_files):
    from .io import read_column_block, read_data, read_row_part, run_agreed

    if tree_learner == "feature":
        return read_column_block(path, comm, options)
    if rank_files:
        own = path.replace("{rank}", str(comm.rank))
        return run_agreed(comm, lambda: read_data(own, **options)), None
    return read_row_part(path, comm, options), None


def _model_format(io):
    """``model_format`` checked (before any work); dgbdt's JSON when not given."""
    fmt = io.get("model_format", "dgbdt")
    if fmt not in MODEL_FORMATS:
        raise CliError(f"model_format={fmt!r}: use one of {', '.join(MODEL_FORMATS)}")
    io["model_format"] = fmt
    return fmt


def run_convert(io: Dict[str, Any], params: Dict[str, Any]) -> None:
    """``task=convert_model``: write ``input_model`` to ``convert_model`` in
    ``model_format`` (by default the format the input is not in)."""
    from .booster import Booster
    from .model_io import model_file_format

    if io.get("convert_model_language"):
        raise CliError(
            f"convert_model_language={io['convert_model_language']!r}: dgbdt converts "
            "between model formats (model_format=dgbdt|lightgbm), not to code"
        )
    for key in ("input_model", "convert_model"):
        if not io.get(key):
            raise CliError(f"task=convert_model needs {key}=FILE")
    if io.get("model_format") is not None:
        _model_format(io)
    if launched_rank() == 0:
        _check_output(io["convert_model"], None)
    booster = Booster(model_file=io["input_model"])  # checks the file first (no FIFO)
    if io.get("model_format") is None:  # (a given one was checked above)
        loaded = model_file_format(io["input_model"])
        io["model_format"] = "dgbdt" if loaded == "lightgbm" else "lightgbm"
    fmt = io["model_format"]
    if launched_rank() == 0:  # under mpiexec every rank converts; one writes
        booster.save_model(io["convert_model"], format=fmt)


def _training_world(io, params):
    """(resolved params, the world communicator or None) of a training run, its
    arguments and output path checked before any data is read."""
    from .params import resolve_params

    if "data" not in io:
        raise CliError("no training data: give data=FILE")
    _model_format(io)
    cfg = resolve_params(params)  # unknown names and bad values fail here
    size = launched_size()
    if size > 1 and cfg["tree_learner"] == "serial":
        raise CliError(
            f"started on {size} ranks but tree_learner=serial: set "
            "tree_learner=data, voting or feature"
        )
    comm = _world(size if cfg["tree_learner"] != "serial" else 1, params)
    _check_output(io["output_model"], comm)
    return cfg, comm


def _training_sets(io, cfg, comm):
    """(train_set, valid_sets, valid_names): this rank's share of the training
    data and of each ``valid_data`` file (the training data itself first under
    ``is_provide_training_metric``)."""
    learner = cfg["tree_learner"]
    rank_files = _flag(io, "pre_partition")
    loaded, block = _read_for_training(io["data"], io, comm, learner, rank_files)
    train_set = _dataset(loaded, feature_name=loaded.feature_names or "auto", feature_indices=block)
    valid_sets, valid_names = [], []
    for path in filter(None, (p.strip() for p in (io.get("valid_data") or "").split(","))):
        # Validation rows are sharded like the training rows ({rank} files only if named so).
        rank_file = rank_files and "{rank}" in path
        valid_sets.append(_valid_set(path, io, comm, learner, rank_file, train_set))
        valid_names.append(os.path.basename(path))
    if cfg["is_provide_training_metric"]:
        valid_sets.insert(0, train_set)
        valid_names.insert(0, "training")
    return train_set, valid_sets, valid_names


def _valid_set(path, io, comm, learner, rank_files, train_set):
    """This rank's share of the validation file ``path``, binned as ``train_set``."""
    v, v_block = _read_for_training(path, io, comm, learner, rank_files)
    if v_block is None:  # LibSVM rows may stop before the training data's last feature
        v.X = _fit_width(v.X, train_set.n_features, path, io["data"], "training data")
    return _dataset(v, reference=train_set, feature_indices=v_block)


def _dataset(loaded, **kwargs):
    """The Dataset of a read file (a :class:`dgbdt.io.LoadedData`): its side files'
    weights, init scores, query sizes and positions, and the query ids where the
    file names them (group_column, qid:), for the check that no query spans two
    ranks (dgbdt.ranking)."""
    from . import Dataset

    dataset = Dataset(
        loaded.X,
        loaded.label,
        weight=loaded.weight,
        init_score=loaded.init_score,
        group=loaded.group,
        position=loaded.position,
        **kwargs,
    )
    dataset.query_ids = loaded.query_ids
    return dataset


def _training_callbacks(io, cfg, columns):
    """The logging callbacks (verbosity >= 1) and, with ``snapshot_freq``, the
    snapshot callbacks (snapshots record the column keys too)."""
    from . import checkpoint, log_evaluation, log_progress

    # Metric and progress lines are information: verbosity >= 1, as LightGBM's
    callbacks = (
        [log_evaluation(cfg["metric_freq"]), log_progress(cfg["metric_freq"])]
        if cfg["verbosity"] >= 1
        else []
    )
    if _int(io, "snapshot_freq") > 0:
        callbacks.append(_record_columns(columns))  # snapshots carry them too
        callbacks.append(checkpoint(io["output_model"], _int(io, "snapshot_freq")))
    return callbacks


def _write_model(booster, io, cfg, comm):
    """Rank 0 writes the model to ``output_model`` (and says so at verbosity >= 1)."""
    if comm is None or comm.rank == 0:
        booster.save_model(io["output_model"], format=io["model_format"])
        if cfg["verbosity"] >= 1:
            print(
                f"dgbdt: trained {booster.current_iteration()} iterations; model written to "
                f"{io['output_model']}",
                flush=True,
            )


def run_train(io: Dict[str, Any], params: Dict[str, Any]) -> None:
    """``dgbdt train``: train on ``io["data"]`` (this rank's share under mpiexec)
    and write the model to ``io["output_model"]``."""
    from . import train

    cfg, comm = _training_world(io, params)
    train_set, valid_sets, valid_names = _training_sets(io, cfg, comm)
    columns = {k: io[k] for k in COLUMN_KEYS if io.get(k) is not None}
    booster = train(
        params,
        train_set,
        valid_sets=valid_sets or None,
        valid_names=valid_names or None,
        init_model=io.get("input_model"),
        callbacks=_training_callbacks(io, cfg, columns),
    )
    booster.params.update(columns)
    _write_model(booster, io, cfg, comm)


def _fit_width(X, n_model, data_path, model_path, what="the model"):
    """LibSVM rows may stop before the model's last feature; any other width is an
    error.  No rows (an empty file or part) have no width to check."""
    width = X.shape[1]
    if X.shape[0] == 0:
        return np.zeros((0, n_model))
    if hasattr(X, "tocsr") and width < n_model:
        X = X.tocsr().copy()
        X.resize((X.shape[0], n_model))
    elif width != n_model:
        hint = ""
        if width == n_model - 1:
            hint = " (a file without a label column needs label_column= with no value)"
        elif width > n_model:
            hint = (
                " (columns left out in training -- weight_column, group_column, "
                "ignore_column -- must be left out here too)"
            )
        raise CliError(
            f"{data_path} has {width} feature columns but {what} {model_path} has {n_model}{hint}"
        )
    return X


def _format_predictions(pred, n_rows, leaf_index):
    if n_rows == 0:  # an empty file, or an empty part under mpiexec
        return b""
    pred = np.asarray(pred).reshape(n_rows, -1)
    fmt = "%d" if leaf_index else "%.17g"
    return "".join("\t".join(fmt % v for v in row) + "\n" for row in pred).encode()


@contextlib.contextmanager
def _naming_recorded_keys(io, with_columns, model_path):
    """A read error that may come from column keys the model recorded at training
    (not given now) says so, with how to override them."""
    recorded = {
        k: with_columns[k]
        for k in COLUMN_KEYS
        if k in with_columns
        and k not in io.get("_given", ())
        and with_columns[k] != IO_DEFAULTS.get(k)
    }
    try:
        yield
    except (ValueError, CliError) as exc:
        if not recorded:
            raise
        keys = " ".join(f"{k}={v}" for k, v in recorded.items())
        error = CliError(
            f"{exc} (read with {keys} as recorded in {model_path} at training; "
            "give these keys to read the file otherwise)"
        )
        raise (agreed(error) if isinstance(exc, AgreedError) else error) from None


def run_predict(io: Dict[str, Any], params: Dict[str, Any]) -> None:
    from . import Booster
    from .io import read_data, read_row_part, run_agreed, write_parts_in_order
    from .model_io import write_atomic
    from .params import resolve_params

    if "data" not in io or "input_model" not in io:
        raise CliError("predict needs data=FILE and input_model=FILE")
    cfg = resolve_params(params)  # a bad parameter fails before anything is written
    comm = _world(launched_size(), params)
    _check_output(io["output_result"], comm)
    if comm is None:
        booster = Booster(model_file=io["input_model"])
    else:
        booster = run_agreed(comm, lambda: Booster(model_file=io["input_model"]))
    # The file's columns as in training unless said otherwise (LightGBM keeps
    # the label index in the model); side files (.weight, .init) are not used.
    with_columns = _without_label_if_narrow(
        io, _with_model_columns(io, booster), booster.num_feature()
    )
    options = {
        **_read_options(with_columns),
        "side_files": False,
        "features_only": True,
    }  # labels are not used: not checked either
    with _naming_recorded_keys(io, with_columns, io["input_model"]):
        if comm is None:
            X = read_data(io["data"], **options).X
        else:
            with comm.slow_phase(f"reading {io['data']}"):
                X = read_row_part(io["data"], comm, options).X
    leaf_index = _flag(io, "predict_leaf_index")
    n_iter = _int(io, "num_iteration_predict")

    def predict():
        x = _fit_width(X, booster.num_feature(), io["data"], io["input_model"])
        pred = booster.predict(
            x,
            raw_score=_flag(io, "predict_raw_score"),
            pred_leaf=leaf_index,
            num_iteration=n_iter if n_iter > 0 else None,
            start_iteration=_int(io, "start_iteration_predict"),
        )
        return _format_predictions(pred, x.shape[0], leaf_index)

    if comm is None:
        text = predict()
        write_atomic(io["output_result"], text.decode())
        n_rows = X.shape[0]
    else:
        text = run_agreed(comm, predict)
        write_parts_in_order(io["output_result"], text, comm)
        n_rows = int(comm.total_int([X.shape[0]])[0])
    if (comm is None or comm.rank == 0) and cfg["verbosity"] >= 1:
        print(f"dgbdt: {n_rows} predictions written to {io['output_result']}", flush=True)


def run(argv: Sequence[str]) -> int:
    """``dgbdt [train|predict] key=value ... [config=FILE]``; returns the exit status."""
    args = list(argv)
    task = None
    if args and "=" not in args[0] and args[0] not in ("-h", "--help"):
        task = args.pop(0)
    if "-h" in args or "--help" in args:
        print(help_text())
        return 0
    with warnings.catch_warnings():
        printer = _WarningPrinter()
        return _run_task(task, args, printer)


class _WarningPrinter:
    """Warnings as ``dgbdt: warning: ...`` lines, each text once, from rank 0 (the
    Python API's UserWarnings would print source lines, once per call); none at
    verbosity < 0, as LightGBM's CLI.  Until the verbosity is known (the
    arguments are being read) they wait."""

    def __init__(self):
        self.seen, self.pending, self.verbosity = set(), [], None
        warnings.simplefilter("always")
        warnings.showwarning = self.show

    def show(self, message, category, filename, lineno, file=None, line=None):
        if self.verbosity is None:
            self.pending.append(str(message))
        else:
            self._print(str(message))

    def _print(self, text):
        if text not in self.seen and launched_rank() == 0 and self.verbosity >= 0:
            self.seen.add(text)
            print(f"dgbdt: warning: {text}", file=sys.stderr, flush=True)

    def set_verbosity(self, params):
        """From the raw params (LightGBM's verbosity key or alias; 1 when absent or
        not a number), then print what waited."""
        from .params import ALIASES

        self.verbosity = 1
        for key, value in params.items():
            if ALIASES.get(key) == "verbosity":
                try:
                    self.verbosity = int(float(value))
                except ValueError:
                    pass
        for text in self.pending:
            self._print(text)
        self.pending = []


#: LightGBM's task names and aliases (config.cpp GetTaskType)
TASKS = {
    "train": "train",
    "training": "train",
    "predict": "predict",
    "prediction": "predict",
    "test": "predict",
}
TASKS["convert_model"] = "convert_model"
LIGHTGBM_ONLY_TASKS = ("refit", "refit_tree", "save_binary")


def _the_task(command, io):
    """The task from the command word and/or task=; they must agree."""
    given = io["task"] if "task" in io.get("_given", ()) else None
    names = [TASKS.get(t, t) for t in (command, given) if t is not None]
    if len(set(names)) > 1:
        raise CliError(f"the command says {command!r} but task={given!r}: give one of them")
    task = names[0] if names else TASKS.get(io["task"], io["task"])
    if task in LIGHTGBM_ONLY_TASKS:
        raise CliError(f"LightGBM's task {task!r} is not supported by dgbdt yet")
    if task not in ("train", "predict", "convert_model"):
        raise CliError(f"unknown task {task!r}: use train, predict or convert_model")
    return task


def _run_task(command, args, printer):
    from .model_io import ModelFormatError
    from .io import DataFormatError

    distributed = launched_size() > 1  # train and predict both run on every rank
    try:
        try:
            io, params = parse_arguments(args)
        except BaseException:
            printer.set_verbosity({})
            raise
        printer.set_verbosity(params)
        task = _the_task(command, io)
        {"train": run_train, "predict": run_predict, "convert_model": run_convert}[task](io, params)
    except BrokenPipeError:
        raise  # the reader of stdout left: __main__ ends quietly
    except (
        CliError,
        DataFormatError,
        ModelFormatError,
        OSError,
        ValueError,
        TypeError,
        RuntimeError,
        NotImplementedError,
        MemoryError,
    ) as exc:
        is_agreed = isinstance(exc, AgreedError)
        # Errors every rank meets alike (arguments, agreed errors) are printed once.
        if launched_rank() == 0 or not is_agreed:
            text = (
                str(exc)
                if not isinstance(exc, MemoryError)
                else f"out of memory ({exc or 'MemoryError'})"
            )
            print(f"dgbdt: error: {text}", file=sys.stderr, flush=True)
        _abort_others(is_agreed, exc, distributed)
        return 1
    return 0


def _abort_others(is_agreed, exc, distributed):
    """Under mpiexec the other ranks may be waiting in a collective, or in
    MPI_Init when this rank failed before starting MPI: end them."""
    from . import comm as comm_module

    if is_agreed:
        return
    if not comm_module.abort_world(1) and distributed:
        comm_module.abort_job(exc, with_traceback=False)  # already printed
