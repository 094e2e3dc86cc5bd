"""Reading LightGBM's text models (versions v2 to v4) into dgbdt's model.

``dgbdt.Booster(model_file=...)`` / ``Booster(model_str=...)`` tell the
format apart by content (dgbdt.models.json_file) and come here for LightGBM's.  The
result is what a dgbdt model file gives: a header and trees, which predict
what LightGBM predicts and can start a training (``init_model``; the model
has no bins, so the starting scores come from the raw values).

How LightGBM's decisions map onto dgbdt's nodes (``x <= threshold`` goes
left, NaN to the default side): missing type NaN is the same rule; missing
type None (LightGBM treats NaN as 0.0) sends NaN where 0.0 goes; missing
type Zero (zero and NaN are missing) sets the node's zero-is-missing bit
(``default_left`` bit 1: values within LightGBM's kZeroThreshold of 0 take
the default side too).  A categorical split (its bitset in ``cat_boundaries``
/ ``cat_threshold``, LightGBM's layout) sets bit 2 and keeps its bitset index
as the threshold (native.predict).  Linear trees and averaged (random-forest)
outputs are refused with a message naming the tree.

Every field is checked; anything else is a ModelFormatError naming the field
(and the tree), never a traceback.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple, NoReturn

import numpy as np
import numpy.typing as npt

from ..native.predict import ZERO_THRESHOLD
from ..objective.objectives import OBJECTIVES, model_objective
from ..params.table import PARAMS
from .json_file import ModelFormatError, check_links, check_pandas_categorical, check_score_bound
from .lightgbm_export import DEFAULT_LEFT_MASK, MODEL_KEY, NAMES_KEY
from .tree import CATEGORICAL, LARGEST, NODE_FIELDS, ZERO_IS_MISSING, Tree

VERSIONS = ("v2", "v3", "v4")
_MISSING_NONE, _MISSING_ZERO, _MISSING_NAN = 0, 1, 2
_INT32_MAX = 2**31 - 1


class _Source:
    """Where a problem is: the model's source and, inside a tree, the tree."""

    def __init__(self, source: str, where: str = "") -> None:
        self.source, self.where = source, where

    def fail(self, msg: str) -> NoReturn:
        raise ModelFormatError(f"{self.source}: {self.where}{msg}")

    def tree(self, i: int) -> _Source:
        return _Source(self.source, f"tree {i}: ")


def _key_values(lines: Sequence[tuple[int, str]], src: _Source, what: str) -> dict[str, str]:
    """``key=value`` lines as a dict (a key given twice is refused)."""
    out: dict[str, str] = {}
    for n, line in lines:
        key, sep, value = line.partition("=")
        if not sep and key != "average_output":
            src.fail(f"line {n} of the {what} is not key=value: {line[:80]!r}")
        if key in out:
            src.fail(f"field {key!r} appears twice in the {what} (line {n})")
        out[key] = value
    return out


def _split(
    text: str, src: _Source
) -> tuple[
    list[tuple[int, str]], list[tuple[int, str, list[tuple[int, str]]]], list[tuple[int, str]]
]:
    """(header lines, [(Tree index, its lines)], tail lines), each line numbered."""
    # only \n (and \r\n) end a line, as in LightGBM: names may hold \x0b, \u2028...
    # (trailing blanks dropped first: a string padded to 2 GB splits into small lines)
    lines = list(enumerate(text.lstrip("\ufeff").rstrip(" \t\r\n").split("\n"), start=1))
    blocks: list[tuple[int, str, list[tuple[int, str]]]] = []
    header: list[tuple[int, str]] = []
    tail: list[tuple[int, str]] | None = None
    current: list[tuple[int, str]] | None = None
    for n, raw in lines:
        line = raw.strip(" \t\r")
        if tail is not None:
            tail.append((n, line))
        elif line.startswith("Tree="):
            current = []
            blocks.append((n, line[len("Tree=") :], current))
        elif line == "end of trees":
            tail = []
        elif line:
            (current if current is not None else header).append((n, line))
    if tail is None:
        src.fail("no 'end of trees' line: the model text is truncated")
    return header, blocks, tail


def _int(src: _Source, field: str, text: str | int, lo: int, hi: int) -> int:
    try:
        value = int(text)
    except (TypeError, ValueError):
        src.fail(f"field {field!r} = {str(text)[:40]!r} is not an integer")
    if not lo <= value <= hi:
        src.fail(f"field {field!r} = {value} is outside [{lo}, {hi}]")
    return value


def _numbers(
    src: _Source, field: str, text: str, n: int, dtype: npt.DTypeLike = np.float64
) -> np.ndarray:
    """``n`` space-separated numbers of ``field``; integers for an int dtype."""
    parts = text.split() if text else []
    if len(parts) != n:
        src.fail(f"field {field!r} holds {len(parts)} values, not {n}")
    try:
        if np.dtype(dtype).kind == "f":
            arr = np.array([float(p) for p in parts], np.float64)
        else:
            arr = np.array([int(p) for p in parts], np.int64)
    except ValueError:
        bad = next(p for p in parts if not _parses(p, dtype))
        src.fail(f"field {field!r} has {bad[:40]!r}, not a number")
    except OverflowError:
        src.fail(f"field {field!r} holds an integer beyond 64 bits")
    if np.isnan(arr).any() if arr.dtype.kind == "f" else False:
        src.fail(f"field {field!r}[{int(np.flatnonzero(np.isnan(arr))[0])}] is NaN")
    return arr


def _parses(text: str, dtype: npt.DTypeLike) -> bool:
    try:
        (float if np.dtype(dtype).kind == "f" else int)(text)
        return True
    except ValueError:
        return False


def _objective(src: _Source, text: str | None, num_class: int) -> tuple[str, dict[str, Any]]:
    """(dgbdt objective name, objective_params) of LightGBM's ``objective=``
    value (``binary sigmoid:1``, ``multiclass num_class:3``, ...); a model
    without one (a callable objective) predicts raw scores: "custom"."""
    if text is None:
        return "custom", {}
    if not text.split():
        src.fail("field 'objective' is empty (a model of a callable objective has no such line)")
    name, *tokens = text.split()
    supported = tuple(OBJECTIVES.entries)  # (now: objectives registered after import too)
    if name not in supported:
        src.fail(
            f"objective {name!r}: dgbdt does not predict LightGBM's {name} models yet "
            f"(it reads {', '.join(supported)} and models without an objective)"
        )
    cls = model_objective(name)
    params = {key: PARAMS[key].default for key in cls.model_params}
    for token in tokens:
        key, sep, value = token.partition(":")
        if key == "sigmoid" and sep and "sigmoid" in params:
            params["sigmoid"] = _positive(src, "objective sigmoid", value)
        elif key == "num_class" and sep and cls.multiclass:
            if _int(src, "objective num_class", value, 1, _INT32_MAX) != num_class:
                src.fail(f"objective {text!r} disagrees with num_class={num_class}")
        elif token == "sqrt" and cls.takes_sqrt:
            params["reg_sqrt"] = 1.0
        else:
            src.fail(f"objective {text!r}: {token!r} is not read by dgbdt")
    error = cls.num_class_error(num_class)
    if error:
        src.fail(f"field 'num_class' = {num_class} {error} for objective {name}")
    return name, params


def _positive(src: _Source, field: str, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        src.fail(f"{field} = {text[:40]!r} is not a number")
    if not (np.isfinite(value) and value > 0):
        src.fail(f"{field} = {text[:40]!r} must be a positive number")
    return value


def _header(src: _Source, lines: list[tuple[int, str]]) -> dict[str, Any]:
    """The model's header fields, checked: num_class, trees per iteration,
    features (names and infos), objective."""
    if not lines or lines[0][1] != "tree":
        src.fail("not a LightGBM text model: its first line is not 'tree'")
    h = _key_values(lines[1:], src, "header")
    for key in ("version", "num_class", "label_index", "max_feature_idx", "feature_names"):
        if key not in h:
            src.fail(f"the header has no {key!r} line")
    if h["version"] not in VERSIONS:
        src.fail(f"version={h['version'][:20]} is not read (dgbdt reads {', '.join(VERSIONS)})")
    if "average_output" in h:
        src.fail("average_output (boosting=rf): dgbdt sums its trees, it does not average them")
    k = _int(src, "num_class", h["num_class"], 1, 1 << 16)
    per_iteration = _int(src, "num_tree_per_iteration", h.get("num_tree_per_iteration", k), 1, k)
    if per_iteration != k:
        src.fail(f"num_tree_per_iteration={per_iteration} differs from num_class={k}")
    _int(src, "label_index", h["label_index"], 0, _INT32_MAX)
    n = _int(src, "max_feature_idx", h["max_feature_idx"], 0, _INT32_MAX - 1) + 1
    names = h["feature_names"].split(" ")
    if len(names) != n:
        src.fail(f"field 'feature_names' holds {len(names)} entries, not {n} (max_feature_idx + 1)")
    infos = h["feature_infos"].split(" ") if "feature_infos" in h else ["none"] * n
    if len(infos) != n:
        src.fail(f"field 'feature_infos' holds {len(infos)} entries, not {n} (max_feature_idx + 1)")
    # (words as dgbdt's model file keeps them: "\x0c" or "" would not load back)
    bad = next(
        (i for i, word in enumerate(infos) if not word or any(c.isspace() for c in word)), None
    )
    if bad is not None:
        src.fail(f"field 'feature_infos'[{bad}] = {infos[bad][:40]!r} is not one word")
    objective, params = _objective(src, h.get("objective"), k)
    return {
        "objective": objective,
        "objective_params": params,
        "num_class": k,
        "num_tree_per_iteration": k,
        "init_score": [0.0] * k,  # LightGBM's starting score is in its first trees
        "feature_names": names,
        "lightgbm_feature_infos": infos,
        "best_iteration": 0,
        "tree_sizes": h.get("tree_sizes"),
    }


def _node_arrays(
    src: _Source, f: Mapping[str, str], n: int, n_features: int, num_cat: int
) -> dict[str, np.ndarray]:
    """The internal-node fields of a tree of ``n`` > 1 leaves, checked."""
    m = n - 1
    for key in ("split_feature", "threshold", "left_child", "right_child"):
        if key not in f:
            src.fail(f"missing field {key!r}")
    feature = _numbers(src, "split_feature", f["split_feature"], m, np.int64)
    bad = np.flatnonzero((feature < 0) | (feature >= n_features))
    if len(bad):
        src.fail(
            f"field 'split_feature'[{bad[0]}] = {feature[bad[0]]} is not a feature "
            f"(the model has {n_features})"
        )
    decision = _numbers(src, "decision_type", f.get("decision_type", " ".join(["0"] * m)), m, int)
    bad = np.flatnonzero((decision < 0) | (decision > 15) | ((decision >> 2) & 3 == 3))
    if len(bad):
        src.fail(f"field 'decision_type'[{bad[0]}] = {decision[bad[0]]} is not a decision type")
    categorical = (decision & 1) != 0
    if categorical.any() and num_cat == 0:
        src.fail(
            f"node {int(np.flatnonzero(categorical)[0])} is a categorical split "
            "without cat_threshold (num_cat is 0)"
        )
    links: dict[str, np.ndarray] = {}
    for key in ("left_child", "right_child"):
        links[key] = _numbers(src, key, f[key], m, np.int64)
        bad = np.flatnonzero((links[key] < -n) | (links[key] >= m))
        if len(bad):
            src.fail(f"field {key!r}[{bad[0]}] = {links[key][bad[0]]} is not a node or leaf")
    check_links(src.source, src.where, links["left_child"], links["right_child"], n)
    threshold = _numbers(src, "threshold", f["threshold"], m)
    default_left = _default_sides(decision, threshold)
    if categorical.any():
        index = threshold[categorical]
        bad = np.flatnonzero((index != np.floor(index)) | (index < 0) | (index >= num_cat))
        if len(bad):
            k = int(np.flatnonzero(categorical)[bad[0]])
            src.fail(
                f"field 'threshold'[{k}] = {threshold[k]!r} of a categorical split is "
                f"not a bitset index in [0, {num_cat})"
            )
        default_left[categorical] = CATEGORICAL
    return {
        "split_feature": feature,
        "threshold": _zero_band(np.clip(threshold, -LARGEST, LARGEST), categorical),
        "threshold_bin": np.zeros(m, np.int64),  # no bins: never replayed on bins
        "default_left": default_left,
        **links,
        "split_gain": _optional(src, f, "split_gain", m),
        "internal_value": _optional(src, f, "internal_value", m),
        "internal_weight": _optional(src, f, "internal_weight", m),
        "internal_count": _optional(src, f, "internal_count", m, nonnegative=True),
    }


def _zero_band(threshold: np.ndarray, categorical: np.ndarray) -> np.ndarray:
    """Thresholds as dgbdt compares them: +-inf as +-max (dgbdt's model file),
    and a threshold within LightGBM's zero band [-kZeroThreshold, kZeroThreshold)
    moved to its edge, since LightGBM predicts values in the band as 0.0 (a
    dense row drops them): 0.0's side is the band's side."""
    band = (threshold >= -ZERO_THRESHOLD) & (threshold < ZERO_THRESHOLD) & ~categorical
    below = np.nextafter(-ZERO_THRESHOLD, -np.inf)
    return np.where(band, np.where(threshold >= 0, ZERO_THRESHOLD, below), threshold)


def _default_sides(decision: np.ndarray, threshold: np.ndarray) -> np.ndarray:
    """dgbdt's default_left of LightGBM's decision types (see the module text)."""
    missing = (decision >> 2) & 3
    left = (decision & DEFAULT_LEFT_MASK) != 0
    left = np.where(missing == _MISSING_NONE, 0.0 <= threshold, left)
    return left.astype(np.int64) + ZERO_IS_MISSING * (missing == _MISSING_ZERO)


def _optional(
    src: _Source, f: Mapping[str, str], key: str, n: int, nonnegative: bool = False
) -> np.ndarray:
    """An optional float field (zeros when absent, as LightGBM)."""
    if key not in f:
        return np.zeros(n)
    values = _numbers(src, key, f[key], n)
    if not np.isfinite(values).all():
        src.fail(f"field {key!r}[{int(np.flatnonzero(~np.isfinite(values))[0])}] is not finite")
    if nonnegative and (values < 0).any():
        src.fail(f"field {key!r}[{int(np.flatnonzero(values < 0)[0])}] is negative")
    return values


def _bitsets(src: _Source, f: Mapping[str, str], num_cat: int) -> dict[str, np.ndarray]:
    """``cat_boundaries`` (num_cat + 1 offsets from 0, non-decreasing) and
    ``cat_threshold`` (that many uint32 words): the categorical splits' bitsets."""
    for key in ("cat_boundaries", "cat_threshold"):
        if key not in f:
            src.fail(f"missing field {key!r} (num_cat is {num_cat})")
    bounds = _numbers(src, "cat_boundaries", f["cat_boundaries"], num_cat + 1, np.int64)
    if bounds[0] != 0 or (np.diff(bounds) < 0).any():
        src.fail("field 'cat_boundaries' must start at 0 and never decrease")
    words = _numbers(src, "cat_threshold", f["cat_threshold"], int(bounds[-1]), np.int64)
    if ((words < 0) | (words >= 1 << 32)).any():
        src.fail("field 'cat_threshold' holds a value outside the 32-bit words [0, 2**32)")
    return {"cat_boundaries": bounds, "cat_threshold": words.astype(np.uint32)}


def _leaf_depths(left: np.ndarray, right: np.ndarray, n: int) -> npt.NDArray[np.int64]:
    depth = np.zeros(n, np.int64)
    if n == 1:
        return depth
    stack = [(0, 0)]
    while stack:
        node, d = stack.pop()
        for c in (left[node], right[node]):
            if c < 0:
                depth[~c] = d + 1
            else:
                stack.append((c, d + 1))
    return depth


def _tree(src: _Source, lines: list[tuple[int, str]], n_features: int) -> Tree:
    """One ``Tree=i`` block as a dgbdt Tree."""
    f = _key_values(lines, src, "tree")
    for key in ("num_leaves", "num_cat", "leaf_value"):
        if key not in f:
            src.fail(f"missing field {key!r}")
    n = _int(src, "num_leaves", f["num_leaves"], 1, _INT32_MAX)
    num_cat = _int(src, "num_cat", f["num_cat"], 0, max(n - 1, 0))
    if f.get("is_linear", "0") != "0":
        src.fail(f"is_linear={f['is_linear'][:10]}: linear trees are not supported by dgbdt")
    if n == 1:
        # LightGBM reads a one-leaf tree's leaf_value, leaf_count, shrinkage and
        # is_linear only (it writes the other fields empty)
        f = {k: v for k, v in f.items() if k in ("leaf_value", "leaf_count", "shrinkage")}
        if not f.get("leaf_count", "").split():
            f.pop("leaf_count", None)
    arrays: dict[str, Any] = {
        "leaf_value": _optional(src, f, "leaf_value", n),
        "leaf_weight": _optional(src, f, "leaf_weight", n),
        "leaf_count": _optional(src, f, "leaf_count", n, nonnegative=True),
    }
    if num_cat:
        arrays.update(_bitsets(src, f, num_cat))
    if n > 1:
        arrays.update(_node_arrays(src, f, n, n_features, num_cat))
        arrays["leaf_depth"] = _leaf_depths(arrays["left_child"], arrays["right_child"], n)
    else:
        arrays.update({name: np.zeros(0) for name in NODE_FIELDS})
        arrays["leaf_depth"] = np.zeros(1, np.int64)
    if "shrinkage" in f:
        arrays["shrinkage"] = _positive(src, "shrinkage", f["shrinkage"])
    return Tree.from_arrays(n, arrays)


def _tail(
    src: _Source, lines: list[tuple[int, str]], n_features: int
) -> tuple[dict[str, str], list[str] | None, Any, str | None]:
    """The sections after the trees: ``parameters:`` (as params, values as
    text), dgbdt's original feature names, ``pandas_categorical``, and the
    text of dgbdt's model line (dgbdt.models.text_file) if any."""
    params: dict[str, str] = {}
    names: Any = None
    pandas: Any = None
    model: str | None = None
    inside = False
    for n, line in lines:
        # (anywhere: no parameter line starts so, and a lost "end of parameters"
        # must not drop dgbdt's model silently)
        if line.startswith(MODEL_KEY):
            model = line[len(MODEL_KEY) :]
        elif line == "parameters:":
            inside = True
        elif line == "end of parameters":
            inside = False
        elif inside and line.startswith("[") and line.endswith("]") and ": " in line:
            key, _, value = line[1:-1].partition(": ")
            params[key] = value
        elif line.startswith(NAMES_KEY):
            names = _json_line(src, n, line[len(NAMES_KEY) :])
            if not (
                isinstance(names, list)
                and len(names) == n_features
                and all(isinstance(x, str) for x in names)
            ):
                src.fail(f"line {n}: {NAMES_KEY} must list {n_features} names (strings)")
        elif line.startswith("pandas_categorical:"):
            pandas = _json_line(src, n, line[len("pandas_categorical:") :])
            check_pandas_categorical(src.source, {"pandas_categorical": pandas})
    return params, names, pandas, model


def _json_line(src: _Source, n: int, text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        src.fail(f"line {n}: not valid JSON: {text[:60]!r}")


class LightGBMText(NamedTuple):
    """A LightGBM text model as read: header and trees (as
    :func:`from_lightgbm_text` gives them), the digest of its tree blocks and
    the JSON text of dgbdt's model line (None in LightGBM's own files)."""

    header: dict[str, Any]
    trees: list[Tree]
    trees_digest: str
    dgbdt_model: str | None


def trees_digest(blocks: Sequence[tuple[int, str, list[tuple[int, str]]]]) -> str:
    """SHA-256 of the tree blocks' lines (blank lines and line ends left out):
    tells whether the trees are still those dgbdt's model line was written for."""
    digest = hashlib.sha256()
    for _, index, lines in blocks:
        digest.update(f"Tree={index}\n".encode())
        for _, line in lines:
            digest.update(line.encode("utf-8", "surrogatepass") + b"\n")
    return digest.hexdigest()


def from_lightgbm_text(
    text: str, source: str = "model string"
) -> tuple[dict[str, Any], list[Tree]]:
    """(header, trees) of a LightGBM text model, every field checked
    (ModelFormatError otherwise); the header as dgbdt.models.json_file gives it."""
    model = read_lightgbm_text(text, source)
    return model.header, model.trees


def read_lightgbm_text(text: str, source: str = "model string") -> LightGBMText:
    """A LightGBM text model read, every field checked (see :class:`LightGBMText`)."""
    src = _Source(source)
    header_lines, blocks, tail = _split(text, src)
    header = _header(src, header_lines)
    n_features, k = len(header["feature_names"]), header["num_class"]
    trees: list[Tree] = []
    for i, (line, index, lines) in enumerate(blocks):
        if index != str(i):
            src.fail(f"line {line}: 'Tree={index[:20]}' where tree {i} was expected")
        trees.append(_tree(src.tree(i), lines, n_features))
    if len(trees) % k:
        src.fail(f"{len(trees)} trees, not a multiple of num_tree_per_iteration = {k}")
    sizes = header.pop("tree_sizes")
    if sizes is not None and len(sizes.split()) != len(trees):
        src.fail(f"tree_sizes lists {len(sizes.split())} trees, the model has {len(trees)}")
    check_score_bound(source, header["init_score"], trees, k)
    params, names, pandas, dgbdt_model = _tail(src, tail, n_features)
    if params.get("label_column") == "":
        # LightGBM's default, the first column; dgbdt's CLI reads an empty
        # label_column as "no label column" (a model of dgbdt's never has one)
        del params["label_column"]
    header.update(params=params, pandas_categorical=pandas)
    if names is not None:
        header["feature_names"] = names
    return LightGBMText(header, trees, trees_digest(blocks), dgbdt_model)
