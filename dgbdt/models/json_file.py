"""The model file: one versioned JSON document, readable without pickle.

Layout (version 3; versions 1 (no categorical features) and 2 (the first five
objectives only) still load; version 4 is version 3 plus ``used_features``,
written only for a model of a wide Dataset, see below; version 5 is version 4
plus category lists, written only for a model that has one, see below)::

    {
      "format": "dgbdt-model",          # identifies the file
      "version": 3,
      "objective": "binary",            # a name of dgbdt.objective.objectives.OBJECTIVES, or custom
      "objective_params": {"sigmoid": 1.0, "alpha": 0.9},  # what the objective's output
                                        # needs (reg_sqrt: 1.0 when set)
      "num_class": 1,                   # raw outputs per row
      "num_tree_per_iteration": 1,      # trees per boosting round (num_class for multiclass)
      "init_score": [0.0],              # added to the raw score, one per class
      "num_features": 28,
      "feature_names": ["Column_0", ...],
      "bin_upper_bounds": [[...], ...], # per feature, the real-valued bin boundaries (last +inf omitted)
      "nan_bins": [-1, ...],            # per feature, its NaN bin or -1
      "value_ranges": [[lo, hi], ...],  # optional: per feature, the bin sample's range or null
      "bin_categories": [null, [3, 0, 7], ...],  # optional: per feature null (numeric) or
                                        # the categories of bins 1, 2, ... (categorical)
      "pandas_categorical": [[...], ...],  # optional: pandas category lists (LightGBM's)
      "best_iteration": 0,              # 0 = none (1-based as in LightGBM)
      "params": {...},                  # training parameters, for the record
      "trees": [ {tree}, ... ]          # see dgbdt.models.tree.Tree.to_dict
    }

A model of a wide Dataset (dgbdt.data.binning.WideBinMapper: hashed text of 2**24
columns) is written as version 4: ``"used_features": [...]`` (sorted) are
the columns whose bins ``bin_upper_bounds``, ``nan_bins`` and ``value_ranges``
hold, one entry each; every other column has one bin and the value range
``"empty_value_range"`` ([lo, hi] or null); ``feature_names`` may be null
(the default ``Column_i`` names).  Such a file grows with the used columns,
not the width (3 trees at 2**24 columns: 25 kB, not 559 MB).

Tree arrays: split_feature, threshold, threshold_bin, default_left,
left_child, right_child (``c < 0`` is leaf ``~c``), split_gain,
internal_value, internal_weight, internal_count (one per internal node);
leaf_value, leaf_weight, leaf_count, leaf_depth (one per leaf); a tree with
categorical splits (``default_left`` bit 2, threshold and threshold_bin the
index of the node's bitset) adds LightGBM's ``cat_boundaries`` and
``cat_threshold`` (bitsets of the categories going left).  A categorical node
with ``default_left`` bit 3 too (version 5) has its categories going left as a
sorted list in those words instead of a bitset: dgbdt keeps a split with a
category from dgbdt.models.tree.BITSET_CATEGORY_LIMIT up (codes up to
2**31 - 1) so, as its bitset would take up to 67M words.  Floats are
written with Python's shortest round-trip repr, so a reloaded model predicts
bit-identically.  Files are written atomically (temp file + rename).

Loading validates every field and raises :class:`ModelFormatError` (a
``ValueError``) naming the field, and the tree for tree fields, for anything
else: integers must be JSON integers (not ``3.0``, not ``true``) within their
dtype and meaning, floats finite numbers (the JSON extensions ``NaN`` and
``Infinity``, and ``1e400``, are refused), child links must make each tree a
tree (every node and leaf reached once from the root), and the raw score
``|init_score| + sum of each tree's largest |leaf_value|`` must stay below
half the largest float, so a loaded model predicts finite values for finite
input.  A model file must be a regular UTF-8 file of at most
:data:`MAX_MODEL_BYTES` bytes; unknown top-level keys are ignored (kept for
later versions).
"""

from __future__ import annotations

import json
import math
import os
import reprlib
import stat
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NoReturn

import numpy as np
import numpy.typing as npt

from ..files import check_regular_file, publish, temp_beside
from ..io.columns import COLUMN_KEYS
from ..objective.objectives import model_objective, model_objective_names
from .tree import CATEGORICAL, CATEGORY_LIST, LARGEST, LEAF_FIELDS, NODE_FIELDS, Tree

FORMAT_NAME = "dgbdt-model"
FORMAT_VERSION = 5  # the newest version read; see model_to_json for the one written
_REQUIRED = (
    "objective",
    "num_class",
    "num_tree_per_iteration",
    "init_score",
    "num_features",
    "feature_names",
    "trees",
)

#: The largest model file read (bytes): far above any real model (a 10,000-tree
#: model of 255 leaves is about 0.5 GB), and a bound on what a wrong path reads.
MAX_MODEL_BYTES = 1 << 30

_INT32_MAX = int(np.iinfo(np.int32).max)
# Raw scores must stay below half the largest float: softmax subtracts the
# largest score, which cannot overflow then, and rounding has room.
_SAFE_SCORE = LARGEST / 2
_NUMBER_TYPES = {int, float}
_SHOW = reprlib.Repr()
_SHOW.maxstring, _SHOW.maxother, _SHOW.maxlist, _SHOW.maxdict, _SHOW.maxlevel = 40, 40, 4, 4, 2


class ModelFormatError(ValueError):
    """A model file or string that is not a valid dgbdt model."""


def write_atomic(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` to ``path`` through a temp file in the same folder + rename.

    A directory, FIFO or device at ``path`` and a missing folder are refused
    before anything is written; a failed write leaves an existing file as it
    was, and temp files of killed writers are removed (dgbdt.files).
    """
    path = os.fspath(path)
    fd, tmp = temp_beside(path)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        publish(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


# --------------------------------------------------------------------------- #
# parsing
# --------------------------------------------------------------------------- #
class _Token:
    """A JSON extension token (NaN, Infinity, -Infinity): kept as text so that
    the field holding it is refused by name, as any other non-number."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def _show(value: object) -> str:
    """A short JSON-like rendering of a value for error messages."""
    if value is None or isinstance(value, bool):
        return {None: "null", True: "true", False: "false"}[value]
    return _SHOW.repr(value)


def _fail(source: str, msg: str) -> NoReturn:
    raise ModelFormatError(f"{source}: {msg}")


def lightgbm_text_version(text: str) -> str | None:
    """LightGBM's text model starts with a line ``tree``, then ``version=v4``
    among the header lines; returns the version, or None for other text."""
    lines = text[:4096].lstrip("\ufeff").splitlines()
    if not lines or lines[0].strip() != "tree":
        return None
    return next(
        (
            line.strip()[len("version=") :]
            for line in lines[1:20]
            if line.strip().startswith("version=v")
        ),
        None,
    )


def model_file_format(path: str | os.PathLike[str]) -> str:
    """ "lightgbm" for a LightGBM text model file, else "dgbdt" (by content)."""
    with open(path, "rb") as fh:
        head = fh.read(4096).decode("utf-8", errors="replace")
    return "lightgbm" if lightgbm_text_version(head) is not None else "dgbdt"


def _unique_keys(source: str) -> Callable[[list[tuple[str, Any]]], dict[str, Any]]:
    """object_pairs_hook refusing a key given twice in one object: json.loads
    would keep the last silently (an appended "objective" changed predictions)."""

    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        d = dict(pairs)
        if len(d) != len(pairs):
            seen: set[str] = set()
            for key, _ in pairs:  # the first key met a second time
                if key in seen:
                    break
                seen.add(key)
            _fail(
                source,
                f"key {key!r} appears twice in one JSON object (a model names each "
                "field once; which value counts would be a guess)",
            )
        return d

    return hook


def parse_json(text: str, source: str) -> Any:
    """``text`` parsed as JSON (ModelFormatError naming the problem): a key given
    twice in an object, NaN and Infinity are refused (see the module text)."""
    try:
        return json.loads(text, parse_constant=_Token, object_pairs_hook=_unique_keys(source))
    except json.JSONDecodeError as exc:
        if not text.lstrip("\ufeff \t\r\n").startswith(("{", "[")):
            _fail(
                source,
                "neither a dgbdt model (JSON) nor a LightGBM text model (a first line "
                "'tree', then version=v2..v4): dgbdt reads these two formats",
            )
        hint = (
            " (the file looks truncated)"
            if "Expecting" in exc.msg and exc.pos >= len(text) - 1
            else ""
        )
        _fail(source, f"not valid JSON{hint}: {exc.msg} at line {exc.lineno} column {exc.colno}")
    except RecursionError:
        _fail(source, "not a dgbdt model: JSON nested too deeply")
    except MemoryError:
        _fail(source, "not a dgbdt model: too large to parse in memory")
    except ModelFormatError:
        raise
    except ValueError as exc:  # e.g. an integer of more than 4300 digits
        _fail(source, f"not valid JSON: {exc}")


# --------------------------------------------------------------------------- #
# field checks: each names the field (``where`` names the tree) and the value
# --------------------------------------------------------------------------- #
def _range_text(lo: int, hi: int | None) -> str:
    return f"[{lo}, {hi})" if hi is not None else f">= {lo}"


def _quoted(name: str, *index: object) -> str:
    """A field's name in messages: 'split_feature', 'bin_upper_bounds'[3]."""
    return repr(name) + "".join(f"[{i!r}]" for i in index)


def _int_value(
    source: str, where: str, field: str, value: Any, lo: int, hi: int | None = None
) -> int:
    """A JSON integer in [lo, hi) (hi None: no upper bound).  ``where`` is ""
    or "tree i: "; ``field`` the quoted field name."""
    if type(value) is not int:
        _fail(source, f"{where}field {field} = {_show(value)} is not an integer")
    if value < lo or (hi is not None and value >= hi):
        _fail(source, f"{where}field {field} = {value} is outside {_range_text(lo, hi)}")
    return value


def _list_value(
    source: str, where: str, field: str, values: Any, length: int | None = None
) -> list[Any]:
    if type(values) is not list:
        _fail(source, f"{where}field {field} must be a list, got {_show(values)}")
    if length is not None and len(values) != length:
        _fail(source, f"{where}field {field} must be a list of {length} values, got {len(values)}")
    return values


def _int_array(
    source: str,
    where: str,
    field: str,
    values: Sequence[Any],
    lo: int,
    hi: int,
    dtype: npt.DTypeLike,
    why: str = "",
) -> np.ndarray:
    """int array of JSON integers in [lo, hi); ``why`` explains the range."""
    if values and (not set(map(type, values)) <= {int} or min(values) < lo or max(values) >= hi):
        for k, v in enumerate(values):
            if type(v) is not int:
                _fail(source, f"{where}field {field}[{k}] = {_show(v)} is not an integer")
            if not lo <= v < hi:
                _fail(source, f"{where}field {field}[{k}] = {v} is outside [{lo}, {hi}){why}")
    return np.array(values, dtype=np.int64).astype(dtype)


def _finite_number(v: object) -> bool:
    return (type(v) is float and math.isfinite(v)) or (
        type(v) is int and abs(v) <= sys.float_info.max
    )


def _float_array(
    source: str, where: str, field: str, values: Sequence[Any]
) -> npt.NDArray[np.float64]:
    """float64 array of finite JSON numbers."""
    arr = None
    if set(map(type, values)) <= _NUMBER_TYPES:
        try:
            arr = np.array(values, dtype=np.float64)
        except OverflowError:  # an integer beyond the float range
            pass
    if arr is None or not np.isfinite(arr).all():
        for k, v in enumerate(values):
            if not _finite_number(v):
                what = "not a number" if type(v) not in _NUMBER_TYPES else "not a finite number"
                _fail(source, f"{where}field {field}[{k}] = {_show(v)} is {what}")
    assert arr is not None  # (a value that is no finite number failed above)
    return arr


# --------------------------------------------------------------------------- #
# the header
# --------------------------------------------------------------------------- #
def _check_kind(source: str, doc: Any) -> None:
    if not isinstance(doc, dict) or doc.get("format") != FORMAT_NAME:
        _fail(source, f'not a dgbdt model file (expected "format": "{FORMAT_NAME}")')
    version = doc.get("version")
    if type(version) is not int or not 1 <= version <= FORMAT_VERSION:
        _fail(
            source,
            f"unsupported model format version {_show(version)} "
            f"(this dgbdt reads up to {FORMAT_VERSION})",
        )
    for key in _REQUIRED:
        if key not in doc:
            _fail(source, f"missing field {key!r}")


def _check_objective(source: str, doc: Mapping[str, Any]) -> tuple[int, npt.NDArray[np.float64]]:
    """The objective, its classes, trees per iteration, parameters and init score
    (checked together: they decide how raw scores become predictions)."""
    objective, known = doc["objective"], model_objective_names()
    if type(objective) is not str or objective not in known:
        _fail(
            source,
            f"field 'objective' = {_show(objective)} is not a known objective ({', '.join(known)})",
        )
    num_class = _int_value(source, "", "'num_class'", doc["num_class"], 1, _INT32_MAX)
    rule = model_objective(objective).num_class_error(num_class)
    if rule is not None:
        _fail(source, f"field 'num_class' = {num_class} {rule} for objective {objective!r}")
    k = _int_value(source, "", "'num_tree_per_iteration'", doc["num_tree_per_iteration"], 1)
    if k != num_class:
        _fail(
            source,
            f"field 'num_tree_per_iteration' = {k} must equal num_class = {num_class} "
            "(one tree per class and iteration)",
        )
    params = doc.get("objective_params", {})
    if type(params) is not dict:
        _fail(source, f"field 'objective_params' must be an object, got {_show(params)}")
    for key, value in params.items():
        if not _finite_number(value):
            _fail(
                source,
                f"field {_quoted('objective_params', key)} = {_show(value)} is not a finite number",
            )
    if "sigmoid" in params and not params["sigmoid"] > 0:
        _fail(
            source,
            f"field {_quoted('objective_params', 'sigmoid')} = {params['sigmoid']} must be > 0",
        )
    init = _list_value(source, "", "'init_score'", doc["init_score"], num_class)
    return k, _float_array(source, "", "'init_score'", init)


def _check_features(source: str, doc: Mapping[str, Any]) -> int:
    n = _int_value(source, "", "'num_features'", doc["num_features"], 0, _INT32_MAX)
    if doc["feature_names"] is None and "used_features" in doc:
        return n  # a wide model's default names Column_0, Column_1, ...
    names = _list_value(source, "", "'feature_names'", doc["feature_names"], n)
    if not set(map(type, names)) <= {str}:
        k = next(k for k, name in enumerate(names) if type(name) is not str)
        _fail(source, f"field {_quoted('feature_names', k)} = {_show(names[k])} is not a string")
    return n


def _check_bins(source: str, doc: Mapping[str, Any], n_features: int) -> _Bins | None:
    """The bin mapper (both fields or neither) as the tree checks need it
    (a _Bins), or None without a mapper."""
    keys = ("bin_upper_bounds", "nan_bins")
    given = [key for key in keys if key in doc]
    if not given:
        return None
    if len(given) == 1:
        missing = next(key for key in keys if key not in doc)
        _fail(
            source,
            f"field {missing!r} is missing while {given[0]!r} is given "
            "(a model has both or neither)",
        )
    bounds = _list_value(source, "", "'bin_upper_bounds'", doc["bin_upper_bounds"], n_features)
    for f, ub in enumerate(bounds):
        field = _quoted("bin_upper_bounds", f)
        arr = _float_array(source, "", field, _list_value(source, "", field, ub))
        down = np.flatnonzero(arr[1:] < arr[:-1])
        if len(down):
            _fail(
                source,
                f"field {field} is not sorted: [{down[0]}] = {float(arr[down[0]])!r} > "
                f"[{down[0] + 1}] = {float(arr[down[0] + 1])!r}",
            )
    n_value_bins = np.array([len(ub) + 1 for ub in bounds], dtype=np.int64)  # + the last, +inf
    nan_bins = _int_array(
        source,
        "",
        "'nan_bins'",
        _list_value(source, "", "'nan_bins'", doc["nan_bins"], n_features),
        -1,
        _INT32_MAX,
        np.int64,
    )
    bad = np.flatnonzero((nan_bins != -1) & (nan_bins != n_value_bins))
    if len(bad):
        f = bad[0]
        _fail(
            source,
            f"field {_quoted('nan_bins', int(f))} = {nan_bins[f]} must be -1 (no NaN bin) "
            f"or {n_value_bins[f]} (the bin after feature {f}'s {n_value_bins[f]} value bins)",
        )
    # each feature's bounds and the last bin's, +inf, stored as the largest float
    # as the grower records thresholds (BinMapper.threshold_value)
    flat = np.array([b for ub in bounds for b in (*ub, LARGEST)], dtype=np.float64)
    categorical = _check_bin_categories(source, doc, n_value_bins, nan_bins)
    return _Bins(
        n_value_bins,
        np.cumsum(n_value_bins) - n_value_bins,
        np.minimum(flat, LARGEST),
        categorical,
    )


def _check_used_features(source: str, doc: Mapping[str, Any], n_features: int) -> np.ndarray | None:
    """Optional ``used_features`` (version 4, a wide model): the sorted columns
    whose bins the bin fields hold, every other column an empty numeric one
    whose value range is ``empty_value_range``; None when absent."""
    if "used_features" not in doc:
        return None
    if doc["version"] < 4:
        _fail(source, f"field 'used_features' needs format version 4, not {doc['version']}")
    for key in ("bin_upper_bounds", "empty_value_range"):
        if key not in doc:
            _fail(source, f"field {key!r} is missing while 'used_features' is given")
    if "bin_categories" in doc:
        _fail(source, "field 'bin_categories' cannot go with 'used_features'")
    raw = _list_value(source, "", "'used_features'", doc["used_features"])
    why = f" (the model's {n_features} columns)"
    used = _int_array(source, "", "'used_features'", raw, 0, n_features, np.int64, why)
    if (np.diff(used) <= 0).any():
        _fail(source, "field 'used_features' must list distinct columns in increasing order")
    r = doc["empty_value_range"]
    if r is not None:
        field = "'empty_value_range'"
        lo, hi = _float_array(source, "", field, _list_value(source, "", field, r, 2))
        if not lo <= hi:
            _fail(
                source,
                f"field {field} = [{float(lo)!r}, {float(hi)!r}]: the smallest value is the larger",
            )
    return used


def _check_bin_categories(
    source: str, doc: Mapping[str, Any], n_value_bins: np.ndarray, nan_bins: np.ndarray
) -> npt.NDArray[np.bool_]:
    """Optional ``bin_categories``: per feature null or the distinct categories
    (integers in [0, 2**31)) of its bins 1, 2, ..., one per bin after bin 0 and
    no NaN bin; returns the categorical features' mask."""
    n_features = len(n_value_bins)
    if "bin_categories" not in doc:
        return np.zeros(n_features, bool)
    lists = _list_value(source, "", "'bin_categories'", doc["bin_categories"], n_features)
    for f, cats in enumerate(lists):
        if cats is None:
            continue
        field = _quoted("bin_categories", f)
        values = _int_array(
            source, "", field, _list_value(source, "", field, cats), 0, 1 << 31, np.int64
        )
        if len(np.unique(values)) != len(values):
            _fail(source, f"field {field} lists a category twice")
        if len(values) + 1 != n_value_bins[f] or nan_bins[f] != -1:
            _fail(
                source,
                f"field {field} lists {len(values)} categories but feature {f} has "
                f"{n_value_bins[f]} bins{' and a NaN bin' if nan_bins[f] != -1 else ''} "
                "(one per category after bin 0, no NaN bin)",
            )
    return np.array([c is not None for c in lists], bool)


def _check_value_ranges(source: str, doc: Mapping[str, Any], n_features: int) -> None:
    """Optional ``value_ranges``: per feature null (no values) or [lo, hi],
    finite numbers with lo <= hi."""
    if "value_ranges" not in doc:
        return
    ranges = _list_value(source, "", "'value_ranges'", doc["value_ranges"], n_features)
    for f, r in enumerate(ranges):
        if r is None:
            continue
        field = _quoted("value_ranges", f)
        lo, hi = _float_array(source, "", field, _list_value(source, "", field, r, 2))
        if not lo <= hi:
            _fail(source, f"field {field} = [{lo!r}, {hi!r}]: the smallest value is the larger")


def check_pandas_categorical(source: str, doc: Mapping[str, Any]) -> None:
    """Optional ``pandas_categorical`` (a model read from LightGBM): null or a
    list of category lists of JSON scalars."""
    value = doc.get("pandas_categorical")
    if value is None:
        return
    if type(value) is not list or not all(
        type(c) is list and all(map(_is_scalar, c)) for c in value
    ):
        _fail(source, "field 'pandas_categorical' must be null or a list of category lists")


def _check_lightgbm_infos(source: str, doc: Mapping[str, Any], n_features: int) -> None:
    """Optional ``lightgbm_feature_infos`` (a model read from LightGBM): one
    string without whitespace per feature."""
    infos = doc.get("lightgbm_feature_infos")
    if infos is None:
        return
    _list_value(source, "", "'lightgbm_feature_infos'", infos, n_features)
    if not all(type(i) is str and i and not any(c.isspace() for c in i) for i in infos):
        _fail(source, "field 'lightgbm_feature_infos' must hold one word per feature")


class _Bins:
    """The bin mapper as the tree checks need it: value bins per feature, and
    the threshold of each (feature, bin) at ``thresholds[offsets[f] + bin]``;
    the features are those of ``index``."""

    __slots__ = ("n_value_bins", "offsets", "thresholds", "categorical", "used")

    def __init__(
        self,
        n_value_bins: np.ndarray,
        offsets: np.ndarray,
        thresholds: np.ndarray,
        categorical: np.ndarray,
    ) -> None:
        self.n_value_bins, self.offsets, self.thresholds = n_value_bins, offsets, thresholds
        self.categorical = categorical
        self.used: np.ndarray | None = None

    def widened(self, used: np.ndarray) -> _Bins:
        """These bins as those of the used columns of a wide model, with one
        more entry, last, for every empty column (one bin, reaching +inf)."""
        self.n_value_bins = np.append(self.n_value_bins, 1)
        self.offsets = np.append(self.offsets, len(self.thresholds))
        self.thresholds = np.append(self.thresholds, LARGEST)
        self.categorical = np.append(self.categorical, False)
        self.used = used
        return self

    def index(self, feature: np.ndarray) -> np.ndarray:
        """The entries of the model's columns ``feature`` (int64 array)."""
        if self.used is None:
            return feature
        pos = np.searchsorted(self.used, feature)
        found = pos < len(self.used)
        found[found] = self.used[pos[found]] == feature[found]
        return np.where(found, pos, len(self.used))


def _is_scalar(value: object) -> bool:
    return type(value) in (str, int, bool, type(None)) or (
        type(value) is float and math.isfinite(value)
    )


def _check_params(source: str, doc: Mapping[str, Any]) -> None:
    """Training parameters: JSON scalars or lists of them; the column keys the
    CLI reads data files with (dgbdt.io.columns.COLUMN_KEYS) are strings."""
    params = doc.get("params", {})
    if type(params) is not dict:
        _fail(source, f"field 'params' must be an object, got {_show(params)}")
    for key, value in params.items():
        if not (_is_scalar(value) or (type(value) is list and all(map(_is_scalar, value)))):
            _fail(
                source,
                f"field {_quoted('params', key)} = {_show(value)} is not a JSON scalar "
                "or a list of them",
            )
    for key in COLUMN_KEYS:
        if key in params and type(params[key]) is not str:
            _fail(
                source,
                f"field {_quoted('params', key)} = {_show(params[key])} must be a string "
                "(how the command line reads data files for this model)",
            )


# --------------------------------------------------------------------------- #
# trees
# --------------------------------------------------------------------------- #
def check_links(
    source: str,
    where: str,
    left: Sequence[int] | np.ndarray,
    right: Sequence[int] | np.ndarray,
    n_leaves: int,
) -> None:
    """Every internal node and leaf reached exactly once from the root.  A walk
    with a stack (no recursion on deep trees); a cycle or a shared child is
    met a second time and stops it."""
    n_nodes = n_leaves - 1
    if n_nodes == 0:
        return
    node_seen, leaf_seen = bytearray(n_nodes), bytearray(n_leaves)
    node_seen[0] = 1
    stack = [0]
    while stack:
        k = stack.pop()
        for name, c in (("left_child", left[k]), ("right_child", right[k])):
            seen, j = (node_seen, c) if c >= 0 else (leaf_seen, ~c)
            if seen[j]:
                what = f"node {j}" if c >= 0 else f"leaf {j}"
                _fail(
                    source,
                    f"{where}field {name!r}[{k}] = {c} links {what} a second time "
                    "(a cycle or a shared child)",
                )
            seen[j] = 1
            if c >= 0:
                stack.append(c)
    for what, seen in (("node", node_seen), ("leaf", leaf_seen)):
        j = seen.find(0)
        if j >= 0:
            _fail(source, f"{where}{what} {j} is not reached from the root (broken child links)")


def _int_ranges(
    n_leaves: int, n_features: int, has_bins: bool = True
) -> dict[str, tuple[int, int, str]]:
    """(lo, hi, why) of each integer field of a tree of ``n_leaves`` leaves."""
    link = (
        -n_leaves,
        n_leaves - 1,
        f" (a child is a node in [1, {n_leaves - 1}) or a leaf ~l, l in [0, {n_leaves}))",
    )
    return {
        "split_feature": (0, n_features, f" (the model has {n_features} features)"),
        "threshold_bin": (0, _INT32_MAX, ""),
        # bit 0: NaN goes left; bit 1: zero is missing too (LightGBM's missing
        # type Zero); bit 2: a categorical split; bit 3: its categories listed
        "default_left": (
            0,
            16,
            " (0 to 15: bit 0 NaN goes left, bit 1 zero is missing, bit 2 categorical, "
            "bit 3 categories listed)",
        ),
        "left_child": link,
        "right_child": link,
        "leaf_depth": (0, n_leaves, ""),
    }


def _check_tree(source: str, i: int, d: Any, n_features: int, bins: _Bins | None) -> Tree:
    """Tree ``i`` checked field by field (the first problem named); a Tree."""
    where = f"tree {i}: "
    if type(d) is not dict:
        _fail(source, f"tree {i} is not a tree object, got {_show(d)}")
    if "num_leaves" not in d:
        _fail(source, f"{where}missing field 'num_leaves'")
    n = _int_value(source, where, "'num_leaves'", d["num_leaves"], 1, _INT32_MAX)
    for name in NODE_FIELDS + LEAF_FIELDS:
        if name not in d:
            _fail(source, f"{where}missing field {name!r}")
        _list_value(source, where, repr(name), d[name], n - 1 if name in NODE_FIELDS else n)
    ranges = _int_ranges(n, n_features, bins is not None)
    arrays: dict[str, Any] = {}
    for name in NODE_FIELDS + LEAF_FIELDS:
        if name in ranges:
            lo, hi, why = ranges[name]
            arrays[name] = _int_array(
                source, where, repr(name), d[name], lo, hi, Tree.INT_DTYPES[name], why
            )
        else:
            arrays[name] = _float_array(source, where, repr(name), d[name])
    check_links(source, where, d["left_child"], d["right_child"], n)
    for name in ("internal_count", "leaf_count"):  # (as LightGBM's text is read)
        negative = np.flatnonzero(arrays[name] < 0)
        if len(negative):
            _fail(source, f"{where}field {name!r}[{int(negative[0])}] is negative")
    arrays.update(_check_categories(source, where, d, arrays))
    if "shrinkage" in d:  # a tree read from LightGBM
        (shrinkage,) = _float_array(source, where, "'shrinkage'", [d["shrinkage"]])
        if not shrinkage > 0:
            _fail(source, f"{where}field 'shrinkage' = {shrinkage!r} must be positive")
        arrays["shrinkage"] = float(shrinkage)
    if bins is not None and n > 1:
        numeric = _check_categorical_nodes(source, where, arrays, bins)
        _check_thresholds(
            source,
            where,
            arrays["split_feature"][numeric],
            arrays["threshold_bin"][numeric],
            arrays["threshold"][numeric],
            bins,
        )
    return Tree.from_arrays(n, arrays)


def _check_categorical_nodes(
    source: str, where: str, arrays: Mapping[str, Any], bins: _Bins
) -> npt.NDArray[np.bool_]:
    """With bins, a categorical node splits a categorical feature and its
    threshold_bin is its bitset index (binned replay reads it); a numeric node
    a numeric feature.  Returns the numeric nodes' mask."""
    categorical = (arrays["default_left"] & CATEGORICAL) != 0
    on_categories = bins.categorical[bins.index(arrays["split_feature"].astype(np.int64))]
    bad = np.flatnonzero(categorical != on_categories)
    if len(bad):
        k = int(bad[0])
        kind = "categorical" if categorical[k] else "numeric"
        _fail(
            source,
            f"{where}node {k} is a {kind} split of feature {int(arrays['split_feature'][k])}, "
            f"which the model's bins say is {'numeric' if categorical[k] else 'categorical'}",
        )
    index = arrays["threshold"][categorical]
    bad = np.flatnonzero(arrays["threshold_bin"][categorical] != index)
    if len(bad):
        k = int(np.flatnonzero(categorical)[bad[0]])
        _fail(
            source,
            f"{where}field 'threshold_bin'[{k}] of a categorical node is not its bitset index",
        )
    return ~categorical


def _check_categories(
    source: str, where: str, d: Mapping[str, Any], arrays: Mapping[str, Any]
) -> dict[str, np.ndarray]:
    """Optional ``cat_boundaries`` / ``cat_threshold`` (LightGBM's bitsets) and
    the categorical nodes (``default_left`` bit 2) whose threshold indexes them."""
    categorical = (arrays["default_left"] & CATEGORICAL) != 0
    stray = np.flatnonzero(((arrays["default_left"] & CATEGORY_LIST) != 0) & ~categorical)
    if len(stray):
        _fail(
            source,
            f"{where}field 'default_left'[{int(stray[0])}] lists categories (bit 3) "
            "of a node that is not categorical (bit 2)",
        )
    if "cat_boundaries" not in d:
        if categorical.any():
            k = int(np.flatnonzero(categorical)[0])
            _fail(source, f"{where}node {k} is categorical but the tree has no 'cat_boundaries'")
        return {}
    for key in ("cat_boundaries", "cat_threshold"):
        if key not in d:
            _fail(source, f"{where}missing field {key!r}")
    raw = _list_value(source, where, "'cat_boundaries'", d["cat_boundaries"])
    bounds = _int_array(source, where, "'cat_boundaries'", raw, 0, _INT32_MAX, np.int64)
    if len(bounds) < 2 or bounds[0] != 0 or (np.diff(bounds) < 0).any():
        _fail(
            source,
            f"{where}field 'cat_boundaries' must start at 0, never decrease, "
            "and hold at least two offsets",
        )
    raw = _list_value(source, where, "'cat_threshold'", d["cat_threshold"], int(bounds[-1]))
    words = _int_array(source, where, "'cat_threshold'", raw, 0, 1 << 32, np.int64)
    index = arrays["threshold"][categorical]
    bad = np.flatnonzero((index != np.floor(index)) | (index < 0) | (index >= len(bounds) - 1))
    if len(bad):
        k = int(np.flatnonzero(categorical)[bad[0]])
        _fail(source, f"{where}field 'threshold'[{k}] of a categorical node is not a bitset index")
    _check_category_lists(source, where, arrays, bounds, words)
    return {"cat_boundaries": bounds, "cat_threshold": words.astype(np.uint32)}


def _check_category_lists(
    source: str, where: str, arrays: Mapping[str, Any], bounds: np.ndarray, words: np.ndarray
) -> None:
    """The words of a node with default_left bit 3 are a non-empty, strictly
    increasing list of categories in [0, 2**31)."""
    for k in np.flatnonzero(arrays["default_left"] & CATEGORY_LIST).tolist():
        j = int(arrays["threshold"][k])
        listed = words[bounds[j] : bounds[j + 1]]
        if not len(listed) or (np.diff(listed) <= 0).any() or listed[-1] > _INT32_MAX:
            _fail(
                source,
                f"{where}the categories of node {k} (field 'cat_threshold'"
                f"[{int(bounds[j])}:{int(bounds[j + 1])}]) are not a non-empty, increasing "
                "list of categories below 2**31",
            )


def _check_thresholds(
    source: str,
    where: str,
    feature: np.ndarray,
    threshold_bin: np.ndarray,
    threshold: np.ndarray,
    bins: _Bins,
) -> None:
    """threshold_bin within the feature's value bins, and threshold the bound of
    that bin: binned replay (init_model) follows the bin, predict the threshold."""
    feature = feature.astype(np.int64)
    entry = bins.index(feature)
    limit = bins.n_value_bins[entry]
    bad = np.flatnonzero(threshold_bin >= limit)
    if len(bad):
        k = int(bad[0])
        _fail(
            source,
            f"{where}field 'threshold_bin'[{k}] = {threshold_bin[k]} is outside "
            f"[0, {limit[k]}) (the value bins of feature {feature[k]})",
        )
    expected = bins.thresholds[bins.offsets[entry] + threshold_bin]
    bad = np.flatnonzero(threshold != expected)
    if len(bad):
        k = int(bad[0])
        _fail(
            source,
            f"{where}field 'threshold'[{k}] = {float(threshold[k])!r} is not the upper "
            f"bound of its bin: feature {feature[k]}'s bin {threshold_bin[k]} "
            f"('threshold_bin'[{k}]) ends at {float(expected[k])!r} "
            "('bin_upper_bounds'; the largest float for the last bin)",
        )


def _check_trees(
    source: str, doc: Mapping[str, Any], k: int, n_features: int, bins: _Bins | None
) -> list[Tree]:
    trees = _list_value(source, "", "'trees'", doc["trees"])
    if len(trees) % k:
        _fail(
            source,
            f"field 'trees' holds {len(trees)} trees, not a multiple of "
            f"num_tree_per_iteration = {k}",
        )
    return [_check_tree(source, i, t, n_features, bins) for i, t in enumerate(trees)]


def _check_lists_version(source: str, doc: Mapping[str, Any], trees: Sequence[Tree]) -> None:
    """Category lists (default_left bit 3) came with format version 5."""
    if doc["version"] >= 5:
        return
    for i, tree in enumerate(trees):
        listed = np.flatnonzero(tree.default_left & CATEGORY_LIST)
        if len(listed):
            _fail(
                source,
                f"tree {i}: field 'default_left'[{int(listed[0])}] lists categories (bit 3), "
                f"which needs format version 5, not {doc['version']}",
            )


def check_score_bound(
    source: str, init_score: Sequence[float] | np.ndarray, trees: Sequence[Tree], k: int
) -> None:
    """Refuse a model whose raw scores could overflow: |init_score| plus the
    largest |leaf_value| of each tree of the class, below half the largest float."""
    bound = [abs(float(v)) for v in init_score]
    for c, b in enumerate(bound):
        if not b < _SAFE_SCORE:
            _fail(
                source,
                f"field 'init_score'[{c}] = {float(init_score[c])!r} is too large "
                f"(raw scores must stay below {_SAFE_SCORE:.4g})",
            )
    for t, tree in enumerate(trees):
        c = t % k
        bound[c] += float(np.abs(tree.leaf_value).max())
        if not bound[c] < _SAFE_SCORE:
            _fail(
                source,
                f"tree {t}: the raw scores of class {c} could reach {bound[c]:.4g} "
                "(|init_score| plus each tree's largest |leaf_value|); a model must keep "
                f"them below {_SAFE_SCORE:.4g} so that its predictions are finite",
            )


def model_from_json(
    text: str | bytes | bytearray, source: str = "model string"
) -> tuple[dict[str, Any], list[Tree]]:
    """Parse and validate dgbdt's JSON model document; returns (header dict,
    list of Tree).  (dgbdt.models.loader reads either format, told by content.)

    Raises ModelFormatError naming the field (and tree) of the first problem.
    """
    if isinstance(text, (bytes, bytearray)):
        text = decode_model(bytes(text), source)
    if lightgbm_text_version(text) is not None:
        _fail(
            source, "a LightGBM text model (dgbdt.models.loader.model_from_text reads both formats)"
        )
    return model_from_doc(parse_json(text, source), source)


def model_from_doc(doc: Any, source: str = "model string") -> tuple[dict[str, Any], list[Tree]]:
    """(header dict, list of Tree) of a parsed JSON model document (a dict:
    dgbdt's JSON file, or the one dgbdt.models.text_file rebuilds from a
    LightGBM text model written by dgbdt), every field checked as
    :func:`model_from_json` does."""
    _check_kind(source, doc)
    k, init_score = _check_objective(source, doc)
    n_features = _check_features(source, doc)
    used = _check_used_features(source, doc, n_features)
    n_binned = n_features if used is None else len(used)
    bins = _check_bins(source, doc, n_binned)
    if used is not None:
        assert bins is not None  # (used_features needs the bin fields: checked above)
        bins = bins.widened(used)
    _check_value_ranges(source, doc, n_binned)
    check_pandas_categorical(source, doc)
    _check_lightgbm_infos(source, doc, n_features)
    _check_params(source, doc)
    trees = _check_trees(source, doc, k, n_features, bins)
    _check_lists_version(source, doc, trees)
    if "best_iteration" in doc:
        _int_value(source, "", "'best_iteration'", doc["best_iteration"], 0, len(trees) // k + 1)
    check_score_bound(source, init_score, trees, k)
    return doc, trees


def model_document(header: Mapping[str, Any], trees: Sequence[Tree]) -> dict[str, Any]:
    """The JSON model document (a dict) of ``header`` and ``trees``."""
    # versions 4 and 5 only where their fields are used, so that older dgbdt
    # reads the rest
    listed = any((t.default_left & CATEGORY_LIST).any() for t in trees)
    return {
        "format": FORMAT_NAME,
        "version": 5 if listed else 4 if "used_features" in header else 3,
        **header,
        "trees": [t.to_dict() for t in trees],
    }


def model_to_json(header: Mapping[str, Any], trees: Sequence[Tree]) -> str:
    return json.dumps(model_document(header, trees), separators=(",", ":"), allow_nan=False)


def decode_model(data: bytes, source: str) -> str:
    """A model file's bytes as text; ModelFormatError naming the first byte that
    is not UTF-8."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        _fail(
            source,
            f"not a dgbdt model file (not UTF-8 text: byte {exc.start} is {data[exc.start]:#04x})",
        )


def read_model_file(path: str | os.PathLike[str]) -> str:
    """The text of the model file ``path``; FileNotFoundError when it is
    missing, ModelFormatError for anything but a regular UTF-8 model file of at
    most MAX_MODEL_BYTES (a FIFO or device is refused without reading it)."""
    path = os.fspath(path)
    try:
        check_regular_file(path, "model file")
        # O_NONBLOCK: should the path become a FIFO after the check, open() does not wait.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except ValueError as exc:  # not a regular file; or a path os.stat refuses (a NUL)
        msg = str(exc)
        raise ModelFormatError(msg if path in msg else f"model file {path!r}: {msg}") from None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            _fail(path, "not a regular file")
        data = fh.read(MAX_MODEL_BYTES + 1)
    if len(data) > MAX_MODEL_BYTES:
        _fail(
            path,
            f"larger than {MAX_MODEL_BYTES} bytes, the most a model file may hold "
            "(dgbdt.models.json_file.MAX_MODEL_BYTES)",
        )
    return decode_model(data, path)
