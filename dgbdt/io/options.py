"""A data file's read options from LightGBM's I/O keys (``header``, ``label_column``, ...).

One mapping for the command line (its ``key=value`` strings) and for
``dgbdt.Dataset(path, params=...)`` (Python values too: ``True``, ``0``,
``[1, 2]``), so that a file reads the same way through both.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..distributed.comm import launched_size, world_comm
from ..params.lightgbm_keys import LIGHTGBM_ALIASES, parse_bool
from ..params.table import ALIASES, given_param, parse_param
from .columns import COLUMN_KEYS
from .distributed import read_column_block, read_row_part, run_agreed
from .reading import read_data
from .values import LoadedData

if TYPE_CHECKING:
    import numpy as np

    from ..distributed.comm import SerialComm

#: Keys that say which rows a rank reads under mpiexec (not column options).
SHARE_KEYS = ("pre_partition",)
_DEFAULTS: dict[str, Any] = {"header": False, "label_column": "0", "zero_based": True}


def read_key(key: object) -> str | None:
    """The canonical name of a read key (``has_header``, ``label``, ``query``, ...:
    LightGBM's aliases), or None for any other parameter."""
    text = str(key).strip()
    name = "zero_based" if text == "zero_based" else LIGHTGBM_ALIASES.get(text)
    return name if name in COLUMN_KEYS + SHARE_KEYS else None


def split_read_params(
    params: Mapping[str, object],
) -> tuple[dict[str, object], dict[str, object]]:
    """``(read keys by canonical name, the other params)`` of Dataset params; two
    spellings of one key with different values are an error naming both."""
    keys: dict[str, object] = {}
    rest: dict[str, object] = {}
    spelled: dict[str, str] = {}
    for key, value in params.items():
        name = read_key(key)
        if name is None:
            rest[key] = value
            continue
        if name in keys and keys[name] != value:
            raise ValueError(
                f"params give {name!r} twice: {spelled[name]!r}={keys[name]!r} and "
                f"{key!r}={value!r}"
            )
        keys[name], spelled[name] = value, key
    return keys, rest


def flag(keys: Mapping[str, object], key: str, default: bool = False) -> bool:
    """A boolean key: true/false (LightGBM's +/-, 1/0, yes/no, or a bool); anything
    else is a ValueError naming the key."""
    value = keys.get(key)
    if value is None:
        return default
    out = parse_bool(value if not isinstance(value, str) else value.strip())
    if out is None:
        raise ValueError(f"{key} must be true or false, got {value!r}")
    return out


def read_options(keys: Mapping[str, object]) -> dict[str, Any]:
    """:func:`dgbdt.io.read_data`'s keyword arguments from the read keys (canonical
    names; the command line's strings or Python values): the label in column 0
    unless ``label_column`` says otherwise (empty: no label column), integer
    indices of the other columns not counting the label column (LightGBM's rule),
    ``ignore_column`` as ``"1,2"``, ``"name:a,b"`` or a list."""
    label = keys.get("label_column", _DEFAULTS["label_column"])
    ignore = keys.get("ignore_column")
    if isinstance(ignore, str):
        ignore = ignore if ignore.startswith("name:") else ignore.split(",")
    elif ignore is not None and not isinstance(ignore, (list, tuple)):
        ignore = [ignore]
    return {
        "header": flag(keys, "header", _DEFAULTS["header"]),
        "label_column": None if label is None or label == "" else label,
        "weight_column": keys.get("weight_column"),
        "group_column": keys.get("group_column"),
        "ignore_columns": ignore or (),
        "zero_based": flag(keys, "zero_based", _DEFAULTS["zero_based"]),
    }


def read_for_learner(
    path: str,
    options: Mapping[str, Any],
    comm: SerialComm,
    tree_learner: str,
    rank_files: bool,
) -> tuple[LoadedData, np.ndarray | None]:
    """``(LoadedData, feature_indices or None)``: this rank's share of ``path`` for
    ``tree_learner`` on the ranks of ``comm`` (the command line's and
    ``Dataset(path)``'s rule): a block of the columns of every row (feature),
    its own file ``path`` with ``{rank}`` replaced (``rank_files``:
    pre_partition), else its byte range of the file (data, voting)."""
    if tree_learner == "feature":
        return read_column_block(path, comm, options)
    if rank_files:
        own = path.replace("{rank}", str(comm.rank))
        return run_agreed(comm, lambda: read_data(own, **options)), None
    return read_row_part(path, comm, options), None


@dataclass
class TextRead:
    """How this rank read a text file for ``Dataset(path)``: ``mode`` "whole"
    (every row: one process, or mpiexec without a distributed tree_learner in
    the params), "rows" (its byte range), "own file" (pre_partition) or
    "columns" (its block of the columns, ``feature_indices``); ``n_ranks``
    ranks were launched, ``comm`` read it (None: no MPI)."""

    loaded: LoadedData | None  # None once the Dataset took its arrays
    keys: dict[str, object]
    params: dict[str, object]
    feature_indices: object
    mode: str
    path: str
    n_ranks: int
    comm: SerialComm | None = None

    @property
    def row_sharded(self) -> bool:
        return self.mode in ("rows", "own file")


def _distributed_learner(params: Mapping[str, object]) -> str | None:
    """The tree_learner the params give when it is not serial, else None."""
    given = [v for k, v in params.items() if ALIASES.get(str(k).strip()) == "tree_learner"]
    if not given:
        return None
    learner = parse_param("tree_learner", given[0])
    return None if learner == "serial" else learner


def read_text(path: str, params: Mapping[str, object], feature_indices: object = None) -> TextRead:
    """Read ``path`` for ``Dataset(path, params=...)``: the read keys of ``params``
    give the columns' roles, and under mpiexec of K ranks a distributed
    ``tree_learner`` in ``params`` says which share this rank reads (as
    ``dgbdt train`` does: :func:`read_for_learner`; that initialises MPI).
    Without one (or on one process) every rank reads every row."""
    keys, rest = split_read_params(params)
    options = read_options(keys)
    size, learner = launched_size(), _distributed_learner(rest)
    if size <= 1 or learner is None:
        loaded = read_data(path, **options, need_rows=True)  # the whole file: rows needed
        return TextRead(loaded, keys, rest, feature_indices, "whole", path, size)
    comm = world_comm(given_param(rest, "time_out"))
    rank_files = flag(keys, "pre_partition") and learner != "feature"
    with comm.slow_phase(f"reading {path}"):
        loaded, block = read_for_learner(path, options, comm, learner, rank_files)
    if block is not None:
        if feature_indices is not None:
            raise ValueError(
                "Dataset(path) with tree_learner=feature reads this rank's block of the "
                "columns itself: give no feature_indices"
            )
        feature_indices = block
    mode = "columns" if learner == "feature" else "own file" if rank_files else "rows"
    return TextRead(loaded, keys, rest, feature_indices, mode, path, size, comm)
