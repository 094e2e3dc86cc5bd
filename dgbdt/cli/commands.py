"""``dgbdt train`` / ``dgbdt predict``: LightGBM's command line, on one machine or K ranks.

Configuration as in LightGBM: ``config=FILE`` (``key = value`` lines, ``#``
comments) and ``key=value`` arguments that override the file; the task comes
from the command (``dgbdt train``) or from ``task=train|predict``.  Model
parameters go through the one parameter table (dgbdt.params.table), so names,
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

``task=save_binary`` (LightGBM's) reads ``data`` and ``valid_data`` as training
would and writes each one binned, as ``<data>.bin`` (dgbdt.data.binary_file; under
mpiexec each rank its own share, ``<data>.<rank>.bin``); ``data=`` (and
``valid_data=``) then take such a file, recognised by its magic bytes, and, as
in LightGBM, ``data=train.csv`` reads ``train.csv.bin`` when it exists.
"""

from __future__ import annotations

import contextlib
import difflib
import functools
import os
import sys
import textwrap
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TextIO

import numpy as np

from .. import Dataset, checkpoint, log_evaluation, log_progress, train
from ..booster import Booster
from ..callback import CallbackEnv
from ..data.binary_file import is_dataset_file, is_lightgbm_binary, rank_path
from ..distributed import comm as comm_module
from ..distributed.comm import (
    AgreedError,
    MPIComm,
    SerialComm,
    agreed,
    launched_rank,
    launched_size,
    world_comm,
)
from ..files import check_regular_file, check_writable_target
from ..io import (
    DataFormatError,
    LoadedData,
    first_row_width,
    read_data,
    read_row_part,
    run_agreed,
    write_parts_in_order,
)
from ..io.columns import COLUMN_KEYS
from ..io.options import read_for_learner, read_options
from ..models.json_file import ModelFormatError, model_file_format, write_atomic
from ..params.lightgbm_keys import lightgbm_canonical, parse_bool
from ..params.table import ALIASES, lightgbm_only_key, params_table_text, resolve_params

if TYPE_CHECKING:
    import scipy.sparse as sp

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
    "predict_contrib": ("is_predict_contrib", "contrib"),
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
    "predict_contrib": "false",
    "num_iteration_predict": "-1",
    "start_iteration_predict": "0",
    "snapshot_freq": "-1",
    "pre_partition": "false",
    "zero_based": "true",
}
#: what model_format may say (Booster.save_model's formats)
MODEL_FORMATS = ("lightgbm", "json", "dgbdt")
IO_HELP = {
    "task": "train, predict, convert_model, save_binary or refit (or give it as the command: "
    "dgbdt train ...); save_binary writes data (and valid_data) binned, as <data>.bin, which "
    "train then reads instead of <data> (or give data=<data>.bin); refit refits input_model's "
    "leaf values on data (refit_decay_rate) into output_model",
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
    "predict_contrib": "predict SHAP feature contributions (exact TreeSHAP, as LightGBM): per "
    "class one column per feature, then the expected raw score; a row's values sum to its "
    "raw score",
    "num_iteration_predict": "predict with the first N iterations (<= 0: all, or the best)",
    "start_iteration_predict": "predict from this iteration on (clamped to the model's iterations; "
    "with a start > 0 every later iteration is used, not the best ones)",
    "snapshot_freq": "write <output_model>.snapshot_iter_<i> every N iterations (<= 0: never)",
    "pre_partition": "under mpiexec: each rank reads its own file (data=train.{rank}.csv) "
    "instead of its byte range of one file",
    "zero_based": "LibSVM feature indices start at 0 (false: at 1)",
    "model_format": "the model file train and convert_model write: lightgbm (the default; "
    "LightGBM's text model, for LightGBM, treelite, ONNX, shap, with dgbdt's whole model on a "
    "line LightGBM skips) or json (dgbdt's JSON model; dgbdt is its older name; the default "
    "for an output file named *.json)",
    "convert_model": "task=convert_model: where to write input_model in model_format "
    "(default: the format input_model is not in)",
    "convert_model_language": "LightGBM's if-else code output: not supported (dgbdt "
    "converts between model formats)",
}
_IO_ALIAS = {a: k for k, aliases in IO_KEYS.items() for a in (k, *aliases)}

USAGE = """usage: dgbdt train key=value ... [config=FILE]
       dgbdt predict data=FILE input_model=MODEL [output_result=FILE] [key=value ...]
       dgbdt convert_model input_model=MODEL convert_model=OUT [model_format=lightgbm|json]
       dgbdt task=save_binary data=FILE [valid_data=FILES] [key=value ...]  (writes FILE.bin)
       dgbdt config=FILE [key=value ...]        (task=train|predict in the file)
       mpiexec -n K dgbdt train tree_learner=data|voting|feature ...

Keys and values as in LightGBM's config files; key=value arguments override the file.
"""


class CliError(Exception):
    """A user error: printed as one line, exit status 1."""


def _flag(io: dict[str, Any], key: str) -> bool:
    """A boolean I/O key: true/false (LightGBM's +/-, and 1/0, yes/no: the one
    parser of dgbdt.params.lightgbm_keys); anything else is an error naming the key."""
    value = parse_bool(str(io[key]))
    if value is None:
        raise CliError(f"{key} must be true or false, got {io[key]!r}")
    return value


def _int(io: dict[str, Any], key: str) -> int:
    try:
        return int(io[key])
    except ValueError:
        raise CliError(f"{key} must be an integer, got {io[key]!r}") from None


def help_text(width: int = 100) -> str:
    """Usage, the I/O keys and every model parameter (from the one parameter table)."""
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


def read_config_file(path: str) -> list[tuple[str, str]]:
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
        bad_line = data[: exc.start].count(b"\n") + 1
        raise CliError(
            f"{path}, line {bad_line}: not UTF-8 text (byte 0x{data[exc.start]:02x})"
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


def _unquote(text: str) -> str:
    """LightGBM's RemoveQuotationSymbol: quotes around a key or value are not part of it."""
    return text.strip().strip("'\"")


def _pair(text: str) -> tuple[str, str]:
    key, value = text.split("=", 1)
    return _unquote(key), _unquote(value)


def parse_arguments(argv: Sequence[str]) -> tuple[dict[str, Any], dict[str, str]]:
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
    given: dict[str, str] = {}
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


def _split_io_and_params(given: dict[str, str]) -> tuple[dict[str, Any], dict[str, str]]:
    io: dict[str, Any] = dict(IO_DEFAULTS)
    params: dict[str, str] = {}
    spellings: dict[str, list[tuple[str, str]]] = {}  # I/O key -> [(spelling, value), ...]
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


def _is_model_param(key: str) -> bool:
    return key in ALIASES


def _unsupported_or_unknown(key: str, value: str) -> None:
    """A LightGBM key dgbdt does not support: warned about when it changes
    nothing, an error when it changes the model or the output (the Python
    API's rule, dgbdt.params.table.lightgbm_only_key); any other key is an error
    naming the closest valid key."""
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


def _record_columns(columns: dict[str, str]) -> Callable[[CallbackEnv], None]:
    """A callback writing the column keys into the model before each iteration,
    so that snapshots (``snapshot_freq``) predict like the final model."""

    def record(env: CallbackEnv) -> None:
        env.model.config.update(columns)

    record.before_iteration = True  # type: ignore[attr-defined]  # the callback protocol's flag
    return record


def _with_model_columns(io: dict[str, Any], booster: Booster) -> dict[str, Any]:
    """``io`` with the column keys of the model's training where not given."""
    recorded = {
        k: booster.config[k]
        for k in COLUMN_KEYS
        if k in booster.config and k not in io.get("_given", ())
    }
    return {**io, **recorded}


def _without_label_if_narrow(
    io: dict[str, Any], with_columns: dict[str, Any], n_model: int
) -> dict[str, Any]:
    """LightGBM's predict reads a delimited file whose lines hold exactly the
    model's features as having no label (parser.cpp GetLabelIdxForCSV): so
    here, unless label_column is given or other columns have roles."""
    if (
        "label_column" in io.get("_given", ())
        or not with_columns.get("label_column")
        or any(with_columns.get(k) for k in ("weight_column", "group_column", "ignore_column"))
    ):
        return with_columns
    if first_row_width(io["data"], header=_flag(with_columns, "header")) != n_model:
        return with_columns
    return {**with_columns, "label_column": ""}


def _read_options(io: dict[str, Any]) -> dict[str, Any]:
    """read_data's options from the column keys (dgbdt.io.options: the mapping
    ``Dataset(path, params=...)`` uses too)."""
    return read_options(io)


def _world(n_ranks: int, time_out: float) -> MPIComm | None:
    """The MPI world when launched on several ranks, else None (no MPI initialised);
    its collectives wait ``time_out`` minutes."""
    if n_ranks <= 1:
        return None
    return world_comm(time_out)


def _check_output(path: str, comm: SerialComm | None) -> None:
    """Refuse an output path that cannot be written before any work is done
    (rank 0 writes outputs; every rank then raises alike)."""
    if comm is None:
        check_writable_target(path)
    else:
        run_agreed(comm, lambda: check_writable_target(path) if comm.rank == 0 else None)


def _read_for_training(
    path: str, io: dict[str, Any], comm: SerialComm | None, tree_learner: str, rank_files: bool
) -> tuple[LoadedData, np.ndarray | None]:
    """(LoadedData, feature_indices or None) of this rank's share of ``path``."""
    options = _read_options(io)
    if comm is None:
        return read_data(path, **options, need_rows=True), None
    # Reading is legitimately uneven (rank 0 decompresses a gzip file for all).
    with comm.slow_phase(f"reading {path}"):
        return _read_share(path, options, comm, tree_learner, rank_files)


def _read_share(
    path: str, options: dict[str, Any], comm: SerialComm, tree_learner: str, rank_files: bool
) -> tuple[LoadedData, np.ndarray | None]:
    return read_for_learner(path, options, comm, tree_learner, rank_files)


def _model_format(io: dict[str, Any]) -> str:
    """``model_format`` checked (before any work); when not given LightGBM's
    text, or dgbdt's JSON for an output_model named *.json."""
    default = "json" if str(io.get("output_model", "")).lower().endswith(".json") else "lightgbm"
    fmt = io.get("model_format", default)
    if fmt not in MODEL_FORMATS:
        raise CliError(f"model_format={fmt!r}: use one of {', '.join(MODEL_FORMATS)}")
    io["model_format"] = fmt
    return fmt


def run_convert(io: dict[str, Any], params: dict[str, Any], cfg: dict[str, Any]) -> None:
    """``task=convert_model``: write ``input_model`` to ``convert_model`` in
    ``model_format`` (by default the format the input is not in)."""
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
        io["model_format"] = "json" if loaded == "lightgbm" else "lightgbm"
    fmt = io["model_format"]
    if launched_rank() == 0:  # under mpiexec every rank converts; one writes
        booster.save_model(io["convert_model"], format=fmt)


def _training_world(
    io: dict[str, Any], cfg: dict[str, Any], check_output: bool = True
) -> MPIComm | None:
    """The world communicator (or None) of a training run (``cfg``: its
    resolved params), its arguments and output path checked before any data
    is read."""
    if "data" not in io:
        raise CliError("no training data: give data=FILE")
    if check_output:
        _model_format(io)
    size = launched_size()
    if size > 1 and cfg["tree_learner"] == "serial":
        raise CliError(
            f"started on {size} ranks but tree_learner=serial: set "
            "tree_learner=data, voting or feature"
        )
    comm = _world(size if cfg["tree_learner"] != "serial" else 1, cfg["time_out"])
    if check_output:
        _check_output(io["output_model"], comm)
    return comm


def _training_sets(
    io: dict[str, Any], cfg: dict[str, Any], comm: SerialComm | None
) -> tuple[Dataset, list[Dataset], list[str]]:
    """(train_set, valid_sets, valid_names): this rank's share of the training
    data and of each ``valid_data`` file (the training data itself first under
    ``is_provide_training_metric``)."""
    rank_files = _flag(io, "pre_partition")
    train_set = _data_set(io["data"], io, cfg, comm, rank_files)
    valid_sets: list[Dataset] = []
    valid_names: list[str] = []
    for path in filter(None, (p.strip() for p in (io.get("valid_data") or "").split(","))):
        # Validation rows are sharded like the training rows ({rank} files only if named so).
        rank_file = rank_files and "{rank}" in path
        valid_sets.append(_data_set(path, io, cfg, comm, rank_file, reference=train_set))
        valid_names.append(os.path.basename(path))
    if cfg["is_provide_training_metric"]:
        valid_sets.insert(0, train_set)
        valid_names.insert(0, "training")
    return train_set, valid_sets, valid_names


def _data_set(
    path: str,
    io: dict[str, Any],
    cfg: dict[str, Any],
    comm: SerialComm | None,
    rank_files: bool,
    reference: Dataset | None = None,
) -> Dataset:
    """This rank's Dataset of the data file ``path`` (validation data: binned as
    ``reference``): a binary Dataset file (dgbdt.data.binary_file) when ``path`` is
    one or task=save_binary wrote one beside it, else its text."""
    binary = _binary_input(path, comm)
    if binary is not None:
        return _load_binary(path, binary, cfg, comm, reference)
    loaded, block = _read_for_training(path, io, comm, cfg["tree_learner"], rank_files)
    if reference is None:
        names = loaded.feature_names or "auto"
        dataset = _dataset(loaded, feature_name=names, feature_indices=block)
    else:
        if block is None:  # LibSVM rows may stop before the training data's last feature
            loaded.X = _fit_width(loaded.X, reference.n_features, path, io["data"], "training data")
        dataset = _dataset(loaded, reference=reference, feature_indices=block)
    dataset.read_params = {k: io[k] for k in COLUMN_KEYS if io.get(k) is not None}
    return dataset


def _binary_output(path: str, comm: SerialComm | None) -> str:
    """Where task=save_binary writes this rank's Dataset of the data file ``path``:
    ``<path>.bin`` (LightGBM's name), or ``<path>.<rank>.bin`` for one rank's share
    of one file read by K ranks (``{rank}`` in ``path``: this rank's own file)."""
    if comm is None or comm.size == 1 or "{rank}" in path:
        return rank_path(path) + ".bin"
    return f"{path}.{comm.rank}.bin"


def _binary_input(path: str, comm: SerialComm | None) -> str | None:
    """The binary Dataset file to read for ``path`` (None: read the text): ``path``
    itself (``{rank}`` replaced) when it is one, else the one task=save_binary
    wrote beside it (LightGBM's command line reads ``<data>.bin`` when it exists).
    Under mpiexec every rank must find its own, or none."""
    own = rank_path(path)
    if is_lightgbm_binary(own):
        raise CliError(
            f"{own} is a LightGBM binary Dataset file, which dgbdt does not read: give the "
            "text data, or a file dgbdt's task=save_binary wrote"
        )
    found = own if is_dataset_file(own) else None
    if found is None and is_dataset_file(_binary_output(path, comm)):
        found = _binary_output(path, comm)
    if comm is not None and comm.size > 1:
        n_found = int(comm.total_int([found is not None])[0])
        if n_found not in (0, comm.size):
            raise agreed(
                CliError(
                    f"{n_found} of the {comm.size} ranks found a binary Dataset file for "
                    f"{path}: every rank needs its own (task=save_binary on as many ranks), "
                    "or none"
                )
            )
    return found


def _load_binary(
    path: str,
    binary: str,
    cfg: dict[str, Any],
    comm: SerialComm | None,
    reference: Dataset | None,
) -> Dataset:
    """The Dataset of a binary file (its rank checked by dgbdt.data.binary_file); its
    bins must have been found on as many ranks as the training shards rows over."""
    if binary != path and cfg["verbosity"] >= 1 and (comm is None or comm.rank == 0):
        print(f"dgbdt: reading {binary} (a binary Dataset file) instead of {path}", flush=True)
    dataset = Dataset(binary, reference=reference)
    row_ranks = comm.size if comm is not None and cfg["tree_learner"] in ("data", "voting") else 1
    assert dataset._binning is not None  # a binary file holds the bins' settings
    saved = dataset._binning["ranks"] or 1
    if reference is None and saved != row_ranks:
        raise CliError(
            f"{binary} holds bins found on {saved} rank(s) but tree_learner="
            f"{cfg['tree_learner']} shards rows over {row_ranks}: save each rank's file with "
            f"task=save_binary on as many ranks and the same tree_learner"
        )
    return dataset


def _dataset(loaded: LoadedData, **kwargs: Any) -> Dataset:
    """The Dataset of a read file (a :class:`dgbdt.io.LoadedData`): its side files'
    weights, init scores, query sizes and positions, and the query ids where the
    file names them (group_column, qid:), for the check that no query spans two
    ranks (dgbdt.objective.ranking)."""
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


def _training_callbacks(
    io: dict[str, Any], cfg: dict[str, Any], columns: dict[str, str]
) -> list[Callable]:
    """The logging callbacks (verbosity >= 1) and, with ``snapshot_freq``, the
    snapshot callbacks (snapshots record the column keys too)."""
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


def _write_model(
    booster: Booster, io: dict[str, Any], cfg: dict[str, Any], comm: SerialComm | None
) -> None:
    """Rank 0 writes the model to ``output_model`` (and says so at verbosity >= 1)."""
    if comm is None or comm.rank == 0:
        booster.save_model(io["output_model"], format=io["model_format"])
        if cfg["verbosity"] >= 1:
            print(
                f"dgbdt: trained {booster.current_iteration()} iterations; model written to "
                f"{io['output_model']}",
                flush=True,
            )


def run_train(io: dict[str, Any], params: dict[str, Any], cfg: dict[str, Any]) -> None:
    """``dgbdt train``: train on ``io["data"]`` (this rank's share under mpiexec)
    and write the model to ``io["output_model"]``."""
    comm = _training_world(io, cfg)
    train_set, valid_sets, valid_names = _training_sets(io, cfg, comm)
    columns = _recorded_columns(io, train_set)
    booster = train(
        params,
        train_set,
        valid_sets=valid_sets or None,
        valid_names=valid_names or None,
        init_model=io.get("input_model"),
        callbacks=_training_callbacks(io, cfg, columns),
    )
    booster.config.update(columns)
    _write_model(booster, io, cfg, comm)


def _recorded_columns(io: dict[str, Any], train_set: Dataset) -> dict[str, str]:
    """The column keys the model records: those given, else those the training
    data was read with (a binary file keeps the keys of the text it was saved
    from), else the defaults."""
    columns = {k: io[k] for k in COLUMN_KEYS if io.get(k) is not None}
    for key, value in (train_set.read_params or {}).items():
        if key in COLUMN_KEYS and key not in io.get("_given", ()):
            if isinstance(value, (list, tuple)):
                value = ",".join(map(str, value))
            columns[key] = str(value).lower() if isinstance(value, bool) else str(value)
    return columns


def run_refit(io: dict[str, Any], params: dict[str, Any], cfg: dict[str, Any]) -> None:
    """``task=refit`` (LightGBM's): the trees of ``input_model`` with their leaf
    values refitted on ``data`` (its label, weight, init score and query side
    files read as training reads them) with ``refit_decay_rate``
    (Booster.refit), written to ``output_model``.  One process."""
    if "data" not in io or "input_model" not in io:
        raise CliError("refit needs data=FILE and input_model=FILE")
    if launched_size() > 1:
        raise CliError("task=refit runs on one process: run it without mpiexec")
    _model_format(io)
    _check_output(io["output_model"], None)
    booster = Booster(model_file=io["input_model"])
    with_columns = _with_model_columns(io, booster)
    with _naming_recorded_keys(io, with_columns, io["input_model"]):
        data = read_data(io["data"], **_read_options(with_columns))
    x = _fit_width(data.X, booster.num_feature(), io["data"], io["input_model"])
    refitted = booster.refit(
        x,
        data.label,
        cfg["refit_decay_rate"],
        weight=data.weight,
        group=data.group,
        init_score=data.init_score,
        # lambda_l1 / l2, max_delta_step, path_smooth... over the model's (the trees stay)
        dataset_params={k: v for k, v in params.items() if k != "refit_decay_rate"},
    )
    refitted.save_model(io["output_model"], format=io["model_format"])
    if cfg["verbosity"] >= 1:
        print(f"dgbdt: refitted model written to {io['output_model']}", flush=True)


def run_save_binary(io: dict[str, Any], params: dict[str, Any], cfg: dict[str, Any]) -> None:
    """``task=save_binary`` (LightGBM's): read ``data`` and each ``valid_data`` file
    (binned with the training data's bins) as training would, and write each one's
    binary Dataset file beside it (``_binary_output``: ``<data>.bin``); as in
    LightGBM, a file that exists already is left as it is, with a warning.
    Under mpiexec each rank writes its own share's file."""
    if "data" not in io:
        raise CliError("no data to save: give data=FILE")
    comm = _training_world(io, cfg, check_output=False)
    train_set, valid_sets, _ = _training_sets(io, cfg, comm)
    paths = [io["data"]] + [p.strip() for p in (io.get("valid_data") or "").split(",") if p.strip()]
    sets = [train_set] + [v for v in valid_sets if v is not train_set]
    row_comm = comm if cfg["tree_learner"] in ("data", "voting") else None
    for path, dataset in zip(paths, sets, strict=True):
        out = _binary_output(path, comm)
        if _saved_already(path, out, comm):
            continue
        dataset.construct(params, row_comm if dataset is train_set else None)
        save = functools.partial(dataset.save_binary, out)
        save() if comm is None else run_agreed(comm, save)
        if cfg["verbosity"] >= 1 and (comm is None or comm.rank == 0):
            where = "" if comm is None else f" (each of the {comm.size} ranks wrote its own)"
            print(f"dgbdt: binary Dataset file {out} written{where}", flush=True)


def _saved_already(path: str, out: str, comm: SerialComm | None) -> bool:
    """Whether ``path`` is a binary Dataset file itself or ``out`` exists (on any
    rank: every rank skips alike), with LightGBM's warning."""
    binary, exists = is_dataset_file(rank_path(path)), os.path.exists(out)
    if comm is not None and comm.size > 1:
        binary, exists = comm.any_rank(binary), comm.any_rank(exists)
    if binary:
        warnings.warn(f"{path} is a binary Dataset file already: nothing to save", stacklevel=2)
    elif exists:
        warnings.warn(f"File {out} exists, cannot save binary to it", stacklevel=2)
    return binary or exists


def _fit_width(
    X: np.ndarray | sp.spmatrix,
    n_model: int,
    data_path: str,
    model_path: str,
    what: str = "the model",
) -> np.ndarray | sp.spmatrix:
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


def _output_kind(io: dict[str, Any]) -> tuple[bool, bool]:
    """(predict_leaf_index, predict_contrib) of a predict task: at most one."""
    leaf_index, contrib = _flag(io, "predict_leaf_index"), _flag(io, "predict_contrib")
    if leaf_index and contrib:
        raise CliError("predict_leaf_index and predict_contrib are both true: choose one")
    return leaf_index, contrib


def _format_predictions(
    pred: np.ndarray | sp.spmatrix | list[sp.spmatrix], n_rows: int, leaf_index: bool
) -> bytes:
    if n_rows == 0:  # an empty file, or an empty part under mpiexec
        return b""
    if isinstance(pred, list) or hasattr(pred, "toarray"):
        # contributions of sparse rows: one sparse matrix per class, written in
        # full as LightGBM's command line does (class after class)
        pred = np.hstack([m.toarray() for m in (pred if isinstance(pred, list) else [pred])])
    pred = np.asarray(pred).reshape(n_rows, -1)
    fmt = "%d" if leaf_index else "%.17g"
    return "".join("\t".join(fmt % v for v in row) + "\n" for row in pred).encode()


@contextlib.contextmanager
def _naming_recorded_keys(
    io: dict[str, Any], with_columns: dict[str, Any], model_path: str
) -> Iterator[None]:
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


def run_predict(io: dict[str, Any], params: dict[str, Any], cfg: dict[str, Any]) -> None:
    if "data" not in io or "input_model" not in io:
        raise CliError("predict needs data=FILE and input_model=FILE")
    comm = _world(launched_size(), cfg["time_out"])
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
    leaf_index, contrib = _output_kind(io)
    n_iter = _int(io, "num_iteration_predict")

    def predict() -> bytes:
        x = _fit_width(X, booster.num_feature(), io["data"], io["input_model"])
        pred = booster.predict(
            x,
            raw_score=_flag(io, "predict_raw_score"),
            pred_leaf=leaf_index,
            pred_contrib=contrib,
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

    seen: set[str]
    pending: list[str]
    verbosity: int | None

    def __init__(self) -> None:
        self.seen, self.pending, self.verbosity = set(), [], None
        warnings.simplefilter("always")
        warnings.showwarning = self.show

    def show(
        self,
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        file: TextIO | None = None,
        line: str | None = None,
    ) -> None:
        if self.verbosity is None:
            self.pending.append(str(message))
        else:
            self._print(str(message))

    def _print(self, text: str) -> None:
        assert self.verbosity is not None  # set before anything is printed
        if text not in self.seen and launched_rank() == 0 and self.verbosity >= 0:
            self.seen.add(text)
            print(f"dgbdt: warning: {text}", file=sys.stderr, flush=True)

    def set_verbosity(self, params: dict[str, str]) -> None:
        """From the raw params (LightGBM's verbosity key or alias; 1 when absent or
        not a number), then print what waited."""
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
TASKS["save_binary"] = "save_binary"
TASKS["refit"] = TASKS["refit_tree"] = "refit"  # LightGBM's alias
LIGHTGBM_ONLY_TASKS = ()


def _the_task(command: str | None, io: dict[str, Any]) -> str:
    """The task from the command word and/or task=; they must agree."""
    given = io["task"] if "task" in io.get("_given", ()) else None
    names = [TASKS.get(t, t) for t in (command, given) if t is not None]
    if len(set(names)) > 1:
        raise CliError(f"the command says {command!r} but task={given!r}: give one of them")
    task = names[0] if names else TASKS.get(io["task"], io["task"])
    if task in LIGHTGBM_ONLY_TASKS:
        raise CliError(f"LightGBM's task {task!r} is not supported by dgbdt yet")
    if task not in ("train", "predict", "convert_model", "save_binary", "refit"):
        raise CliError(
            f"unknown task {task!r}: use train, predict, convert_model, save_binary or refit"
        )
    return task


def _run_task(command: str | None, args: list[str], printer: _WarningPrinter) -> int:
    distributed = launched_size() > 1  # train and predict both run on every rank
    try:
        try:
            io, params = parse_arguments(args)
        except BaseException:
            printer.set_verbosity({})
            raise
        printer.set_verbosity(params)
        task = _the_task(command, io)
        cfg = resolve_params(params)  # once per command; bad values fail before any work
        runs = {"train": run_train, "predict": run_predict, "convert_model": run_convert}
        runs["save_binary"], runs["refit"] = run_save_binary, run_refit
        runs[task](io, params, cfg)
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


def _abort_others(is_agreed: bool, exc: BaseException, distributed: bool) -> None:
    """Under mpiexec the other ranks may be waiting in a collective, or in
    MPI_Init when this rank failed before starting MPI: end them."""
    if is_agreed:
        return
    if not comm_module.abort_world(1) and distributed:
        comm_module.abort_job(exc, with_traceback=False)  # already printed
