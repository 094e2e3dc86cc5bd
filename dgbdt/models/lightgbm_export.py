"""LightGBM's text model format (``version=v4``): a dgbdt model written in it.

The layout is LightGBM's own (GBDT::SaveModelToString, Tree::ToString): a
header (``tree``, ``version``, ``num_class``, ``num_tree_per_iteration``,
``label_index``, ``max_feature_idx``, ``objective``, ``feature_names``,
``feature_infos``, ``tree_sizes``), one ``Tree=i`` block per tree, ``end of
trees``, the split-count feature importances, the ``parameters:`` section and
``pandas_categorical:null``.  LightGBM, treelite, onnxmltools and shap read it.

How dgbdt's model maps onto it:

* a node sends ``x <= threshold`` left and NaN to its default side: LightGBM's
  decision with missing type NaN (``decision_type`` bits 2-3 = 2) and the
  default-left bit (bit 1) from dgbdt, so both predict alike for every input
  (+inf thresholds are written ``inf``, which LightGBM reads back);
* LightGBM has no starting score: dgbdt's ``init_score`` is added to the leaf
  and internal values of the first tree of each class, and a model without
  trees is written as one constant tree per class;
* feature names LightGBM cannot hold (whitespace, control characters, or one
  of ``"``, ``,``, ``:``, ``[``, ``]``, ``{``, ``}``, which its JSON dump would break on) are
  written with ``_`` in their place, made unique; the original names follow
  ``end of parameters`` on a ``dgbdt_feature_names:`` line (JSON), which
  LightGBM skips;
* ``feature_infos`` is ``[min:max]`` of each feature's bin sample (LightGBM's
  ``min_val`` / ``max_val``), ``none`` for a feature LightGBM would drop as
  trivial (no value, or one value and no NaN);
* a categorical split is LightGBM's bitset over category values: one that
  dgbdt keeps as a list of categories (dgbdt.models.tree.BITSET_CATEGORY_LIMIT)
  is written as a bitset when its categories are below
  :data:`LIGHTGBM_CATEGORY_LIMIT`, else the model is refused with a
  ``ValueError`` naming the feature and the category (dgbdt's JSON keeps it).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from ..log import DGBDTError
from ..objective.objectives import model_objective
from ..params.lightgbm_keys import LIGHTGBM_PARAMS
from ..params.table import parse_param
from .tree import CATEGORICAL, CATEGORY_LIST, LARGEST, ZERO_IS_MISSING, Tree, bitset_words

if TYPE_CHECKING:
    from ..data.binning import BinMapper, WideBinMapper
    from .model import Model

VERSION = "v4"
#: decision_type bits (LightGBM's Tree: kCategoricalMask 1, kDefaultLeftMask 2,
#: missing type in bits 2-3: None 0, Zero 1, NaN 2)
DEFAULT_LEFT_MASK = 2
MISSING_ZERO = 1 << 2
MISSING_NAN = 2 << 2
#: what LightGBM refuses in a feature name (its JSON dump) or splits names on
_BAD_NAME_CHARS = re.compile(r'[\s",:\[\]{}\x00-\x1f\x7f-\x9f]')
NAMES_KEY = "dgbdt_feature_names:"
#: the line (after ``end of parameters``, which LightGBM skips) holding what
#: LightGBM's text has no field for (dgbdt.models.text_file)
MODEL_KEY = "dgbdt_model:"
#: The categories a split written as LightGBM's bitset may hold: below this, a
#: bitset takes at most 32,768 words (a 330 kB line); LightGBM would read a
#: larger one, but one holding 2**31 - 2 is 67M words (0.7 GB of text a split).
LIGHTGBM_CATEGORY_LIMIT = 2**20


def _full(value: float) -> str:
    """A double in full (round-trip) precision, as LightGBM's ``ArrayToString<true>``."""
    value = float(value)
    if np.isinf(value):
        return "inf" if value > 0 else "-inf"
    return repr(value)


def _join(values: Iterable[Any], fmt: Callable[[Any], str] = _full) -> str:
    return " ".join(fmt(v) for v in values)


def _int(value: float) -> str:
    return str(int(value))


def lightgbm_feature_names(names: Sequence[str]) -> tuple[Sequence[str], bool]:
    """(names LightGBM can hold, whether any changed): bad characters become
    ``_``, and a name made equal to an earlier one gets a ``_2``, ``_3``... suffix."""
    if getattr(names, "clean", False):  # default names (dgbdt.data.dataset.ColumnNames)
        return names, False
    out: list[str] = []
    seen: set[str] = set()
    for name in names:
        clean = _BAD_NAME_CHARS.sub("_", name) or "_"
        candidate, k = clean, 1
        while candidate in seen:
            k += 1
            candidate = f"{clean}_{k}"
        seen.add(candidate)
        out.append(candidate)
    return out, out != list(names)


def feature_infos(booster: Model) -> list[str]:
    """``feature_infos`` of a model: from its bin mapper's ranges, or as read
    from a LightGBM model."""
    mapper = booster.bin_mapper
    if (mapper is None or mapper.value_ranges is None) and booster.lightgbm_feature_infos:
        return list(booster.lightgbm_feature_infos)
    if hasattr(mapper, "used"):  # a wide Dataset's (dgbdt.data.binning.WideBinMapper)
        # Its empty columns are "none" (no values, or the one value 0.0).
        infos = ["none"] * booster.num_feature()
        wide = cast("WideBinMapper", mapper)
        used = wide.used.tolist()
        for f, info in zip(used, _range_infos(wide.inner, len(wide.used)), strict=True):
            infos[f] = info
        return infos
    return _range_infos(mapper, booster.num_feature())


def _range_infos(mapper: BinMapper | WideBinMapper | None, n_features: int) -> list[str]:
    """LightGBM's ``feature_infos``: ``[min:max]`` per feature, ``none`` for a
    feature LightGBM drops as trivial, one without values or with one value
    and no NaN (and for every feature of a model that does not know its ranges)."""
    if mapper is None or mapper.value_ranges is None:
        return ["none"] * n_features
    infos = []
    cats = mapper.categories or [None] * n_features
    for f, (lo, hi) in enumerate(mapper.value_ranges):
        cat = cats[f]
        if cat is not None:  # a categorical feature: its categories, in bin order
            infos.append(":".join(str(int(c)) for c in cat) if len(cat) else "none")
        elif np.isnan(lo) or (lo == hi and mapper.nan_bins[f] < 0):
            infos.append("none")
        else:
            infos.append(f"[{lo:.17g}:{hi:.17g}]")
    return infos


def _decision_types(tree: Tree) -> tuple[np.ndarray, np.ndarray]:
    """(LightGBM's decision_type per node, whether each node is categorical)."""
    d = np.asarray(tree.default_left)
    # default_left bit 1: zero is missing too (LightGBM's Zero type); bit 2: a
    # categorical split, whose threshold is its bitset's index
    categorical = (d & CATEGORICAL) != 0
    missing = np.where(d & ZERO_IS_MISSING, MISSING_ZERO, MISSING_NAN)
    decision = np.where(categorical, 1 + MISSING_NAN, missing + DEFAULT_LEFT_MASK * (d & 1))
    return decision, categorical


def _node_lines(tree: Tree) -> list[str]:
    """split_feature ... right_child of a tree with internal nodes."""
    decision, categorical = _decision_types(tree)
    threshold = np.where(tree.threshold >= LARGEST, np.inf, tree.threshold)  # +inf, as stored
    thresholds = [_int(t) if c else _full(t) for t, c in zip(threshold, categorical, strict=True)]
    return [
        f"split_feature={_join(tree.split_feature, _int)}",
        f"split_gain={_join(tree.split_gain)}",
        "threshold=" + " ".join(thresholds),
        f"decision_type={_join(decision, _int)}",
        f"left_child={_join(tree.left_child, _int)}",
        f"right_child={_join(tree.right_child, _int)}",
    ]


def _listed_nodes(tree: Tree) -> np.ndarray:
    """The categorical nodes whose categories dgbdt keeps as a list."""
    return np.flatnonzero(np.asarray(tree.default_left[: tree.n_leaves - 1]) & CATEGORY_LIST)


def _check_bitset_sizes(trees: Sequence[Tree], first: int, names: Sequence[str]) -> None:
    """ValueError naming the first split (tree ``first + i``) whose categories
    LightGBM's text cannot hold as a bitset (LIGHTGBM_CATEGORY_LIMIT)."""
    for i, tree in enumerate(trees):
        for k in _listed_nodes(tree).tolist():
            largest = int(tree.left_categories(k)[-1])
            if largest < LIGHTGBM_CATEGORY_LIMIT:
                continue
            f = int(tree.split_feature[k])
            raise ValueError(
                f"cannot write this model in LightGBM's text format: tree {first + i} splits "
                f"categorical feature {names[f]!r} (column {f}) on category {largest}, and "
                "LightGBM stores a split's categories as a bitset over their values "
                f"({largest // 32 + 1} words; it takes categories below "
                f"{LIGHTGBM_CATEGORY_LIMIT} here); save it in dgbdt's JSON format "
                "(format='json'), which keeps them, or renumber the categories 0, 1, ..."
            )


def _lightgbm_bitsets(tree: Tree) -> tuple[np.ndarray, np.ndarray]:
    """(cat_boundaries, cat_threshold) as LightGBM's text has them: every
    category list as a bitset (_check_bitset_sizes has bounded them)."""
    bounds, words = np.asarray(tree.cat_boundaries, np.int64), tree.cat_threshold
    listed = _listed_nodes(tree)
    if not len(listed):
        return bounds, words
    parts = [words[bounds[j] : bounds[j + 1]] for j in range(len(bounds) - 1)]
    for k in listed.tolist():
        parts[int(tree.threshold[k])] = bitset_words(tree.left_categories(k))
    sizes = np.cumsum([len(p) for p in parts])
    return np.concatenate([[0], sizes]).astype(np.int64), np.concatenate(parts)


def tree_text(tree: Tree, shrinkage: float, bias: float = 0.0) -> str:
    """One tree's block (without its ``Tree=i`` line), ``bias`` added to its
    leaf and internal values (the folded starting score)."""
    n = tree.n_leaves
    bounds = getattr(tree, "cat_boundaries", np.zeros(1))
    lines = [f"num_leaves={n}", f"num_cat={len(bounds) - 1}"]
    if n > 1:
        lines += _node_lines(tree)
    lines += [
        f"leaf_value={_join(np.asarray(tree.leaf_value) + bias)}",
        f"leaf_weight={_join(tree.leaf_weight)}",
        f"leaf_count={_join(tree.leaf_count, _int)}",
    ]
    if n > 1:
        lines += [
            f"internal_value={_join(np.asarray(tree.internal_value) + bias)}",
            f"internal_weight={_join(tree.internal_weight)}",
            f"internal_count={_join(tree.internal_count, _int)}",
        ]
    if len(bounds) > 1:
        bounds, words = _lightgbm_bitsets(tree)
        lines += [
            f"cat_boundaries={_join(bounds, _int)}",
            f"cat_threshold={_join(words, _int)}",
        ]
    lines += ["is_linear=0", f"shrinkage={_full(shrinkage)}"]
    return "\n".join(lines) + "\n\n"


class _Constant:
    """A one-leaf tree holding a value (a model without trees, per class)."""

    n_leaves = 1

    def __init__(self, value: float) -> None:
        self.leaf_value = np.array([value])
        self.leaf_weight = np.zeros(1)
        self.leaf_count = np.zeros(1)


def exported_trees(booster: Model, first: int, end: int) -> list[tuple[Tree, float]]:
    """(tree, bias) of trees [first, end): the starting score folded into the
    first tree of each class, or constant trees when there is none."""
    k = booster.num_tree_per_iteration
    trees = booster.trees[first:end]
    init = booster.init_score if first == 0 else np.zeros(k)
    if not trees:
        # (a one-leaf stand-in: it has the fields a one-leaf Tree's readers here use)
        return [(_Constant(float(init[c])), 0.0) for c in range(k)]  # type: ignore[misc]
    return [(t, float(init[i]) if i < k else 0.0) for i, t in enumerate(trees)]


#: LightGBM's kEpsilon (1e-15f): a starting score above it is added to the first trees
_BIAS_EPSILON = float(np.float32(1e-15))


def tree_shrinkage(tree: Tree, bias: float, learning_rate: float) -> float:
    """A tree's shrinkage in LightGBM's terms: 1 for a tree that carries the
    starting score ``bias`` (LightGBM's Tree::AddBias sets it so), else its own
    (a tree read from LightGBM, or trained under a learning-rate schedule or
    continued from a model of another rate), else the training's ``learning_rate``."""
    if abs(bias) > _BIAS_EPSILON:
        return 1.0
    own = getattr(tree, "shrinkage", None)
    return learning_rate if own is None else own


def _shrinkage(booster: Model, tree: Tree, bias: float) -> float:
    rate = booster.config.get("learning_rate", 1.0)
    # (a loaded model's params are a record: one that is no rate writes 1, as LightGBM's default)
    valid = isinstance(rate, (int, float)) and not isinstance(rate, bool) and 0 < rate < np.inf
    return tree_shrinkage(tree, bias, rate if valid else 1.0)


def _interaction_text(groups: Any, names: Sequence[str] | None) -> str:
    """interaction_constraints as LightGBM writes them, ``[0,1],[2]``: feature
    names as their indices (LightGBM's Python package reads the line as JSON)."""
    try:
        if isinstance(groups, str):
            groups = parse_param("interaction_constraints", groups)
        valid = not groups or all(isinstance(g, (list, tuple)) for g in groups)
    except (DGBDTError, TypeError):
        valid = False
    # (a loaded model's params are a record: one that is no constraint list writes none)
    if not groups or not valid:
        return ""
    index = {name: i for i, name in enumerate(names or ())}
    return ",".join("[" + ",".join(str(index.get(f, f)) for f in group) + "]" for group in groups)


def _parameters(params: Mapping[str, Any], names: Sequence[str] = ()) -> list[str]:
    """The ``parameters:`` lines: dgbdt's training params that LightGBM knows,
    as LightGBM writes them (``[key: value]``, booleans 0/1, lists with commas)."""
    lines = []
    for key, value in params.items():
        if key not in LIGHTGBM_PARAMS or value is None:
            continue
        if key == "interaction_constraints":
            lines.append(f"[{key}: {_interaction_text(value, names)}]")
            continue
        if isinstance(value, bool):
            value = int(value)
        elif isinstance(value, (list, tuple)):
            value = ",".join(map(str, value))
        text = str(value)
        if "\n" in text or "]" in text:
            continue  # not representable on one bracketed line
        lines.append(f"[{key}: {text}]")
    return lines


def _importances(booster: Model, first: int, end: int, names: Sequence[str]) -> list[str]:
    """``name=count`` of the features the written trees split on, most used
    first (ties in feature order, LightGBM's stable sort)."""
    counts = np.zeros(booster.num_feature(), np.int64)
    for tree in booster.trees[first:end]:
        np.add.at(counts, np.asarray(tree.split_feature, np.int64), 1)
    used = np.flatnonzero(counts > 0)
    order = used[np.argsort(-counts[used], kind="stable")]  # ties: by feature
    return [f"{names[i]}={int(counts[i])}" for i in order.tolist()]


def to_lightgbm_text(booster: Model, first: int, end: int) -> str:
    """Trees [first, end) of ``booster`` as LightGBM's model text."""
    k = booster.num_tree_per_iteration
    _check_bitset_sizes(booster.trees[first:end], first, booster.feature_names)
    names, renamed = lightgbm_feature_names(booster.feature_names)
    blocks = [
        f"Tree={i}\n" + tree_text(tree, _shrinkage(booster, tree, bias), bias) + "\n"
        for i, (tree, bias) in enumerate(exported_trees(booster, first, end))
    ]
    header = ["tree", f"version={VERSION}", f"num_class={booster.num_class}"]
    header += [f"num_tree_per_iteration={k}", "label_index=0"]
    header.append(f"max_feature_idx={booster.num_feature() - 1}")
    objective = model_objective(booster.objective).lightgbm_text(
        booster.objective_params, booster.num_class
    )
    if objective is not None:
        header.append(f"objective={objective}")
    header.append("feature_names=" + " ".join(names))
    header.append("feature_infos=" + " ".join(feature_infos(booster)))
    header.append("tree_sizes=" + " ".join(str(len(b.encode())) for b in blocks))
    tail = ["end of trees", "", "feature_importances:", *_importances(booster, first, end, names)]
    tail += [
        "",
        "parameters:",
        *_parameters(booster.config, booster.feature_names),
        "end of parameters",
        "",
    ]
    if renamed:
        tail.append(NAMES_KEY + json.dumps(list(booster.feature_names)))
    tail.append("pandas_categorical:" + json.dumps(booster.pandas_categorical))
    return "\n".join(header) + "\n\n" + "".join(blocks) + "\n".join(tail) + "\n"


# -- LightGBM's JSON dump (Booster.dump_model(format="lightgbm")) ---------------
#
# GBDT::DumpModel / Tree::ToJSON write doubles with 17 significant digits (exact)
# and the Python package parses them with json: integral values come back as
# int, split gains as LightGBM keeps them (float), +-inf thresholds and ranges
# as +-1e300 (Common::AvoidInf).  The values are those of the exported model:
# dgbdt's starting score is in the first tree of each class.

_MISSING_NAMES = {0: "None", 1: "Zero", 2: "NaN"}


def _number(value: float) -> float:
    """A double as LightGBM's dump gives it back: integral values as int."""
    value = float(value)
    return int(value) if value.is_integer() and abs(value) < 1e17 else value


def _avoid_inf(value: float, limit: float = 1e300) -> float:
    """Common::AvoidInf: NaN as 0, beyond +-limit as +-limit."""
    value = float(value)
    return 0.0 if np.isnan(value) else max(-limit, min(limit, value))


def _gain(value: float) -> float:
    """A split gain as LightGBM stores it (float) and dumps it (AvoidInf(float))."""
    return _number(_avoid_inf(np.float32(value), float(np.float32(1e38))))


def _categories(tree: Tree, k: int) -> str:
    """The categories going left at categorical node ``k``, ascending, as "a||b"."""
    return "||".join(map(str, tree.left_categories(k).tolist()))


def _split_json(
    tree: Tree, k: int, bias: float, decision: np.ndarray, categorical: np.ndarray
) -> dict[str, Any]:
    """Node k's record (without its children), as Tree::NodeToJSON."""
    threshold: str | float
    if categorical[k]:
        threshold, operator = _categories(tree, k), "=="
    else:
        threshold, operator = _number(_avoid_inf(tree.threshold[k])), "<="
    return {
        "split_index": k,
        "split_feature": int(tree.split_feature[k]),
        "split_gain": _gain(tree.split_gain[k]),
        "threshold": threshold,
        "decision_type": operator,
        "default_left": bool(decision[k] & DEFAULT_LEFT_MASK),
        "missing_type": _MISSING_NAMES[int(decision[k]) >> 2 & 3],
        "internal_value": _number(tree.internal_value[k] + bias),
        "internal_weight": _number(tree.internal_weight[k]),
        "internal_count": int(tree.internal_count[k]),
    }


def _tree_structure(tree: Tree, bias: float) -> dict[str, Any]:
    """A tree's ``tree_structure``: nested split and leaf records."""
    values = np.asarray(tree.leaf_value, np.float64) + bias
    if tree.n_leaves == 1:
        return {"leaf_value": _number(values[0]), "leaf_count": int(tree.leaf_count[0])}
    leaves = [
        {
            "leaf_index": i,
            "leaf_value": _number(values[i]),
            "leaf_weight": _number(tree.leaf_weight[i]),
            "leaf_count": int(tree.leaf_count[i]),
        }
        for i in range(tree.n_leaves)
    ]
    decision, categorical = _decision_types(tree)
    nodes = [_split_json(tree, k, bias, decision, categorical) for k in range(tree.n_leaves - 1)]
    for k, node in enumerate(nodes):
        for side in ("left_child", "right_child"):
            child = int(getattr(tree, side)[k])
            node[side] = nodes[child] if child >= 0 else leaves[~child]
    return nodes[0]


def _json_feature_infos(infos: Sequence[str], names: Sequence[str]) -> dict[str, dict[str, Any]]:
    """``feature_infos`` as the dump has them: {name: {min_value, max_value,
    values}} for the features LightGBM keeps (not the ``none`` ones)."""
    out = {}
    for name, info in zip(names, infos, strict=True):
        if info.startswith("["):
            lo, hi = (_number(_avoid_inf(float(v))) for v in info[1:-1].split(":"))
            out[name] = {"min_value": lo, "max_value": hi, "values": []}
        elif info != "none":  # a categorical feature: its categories
            values = [int(v) for v in info.split(":")]
            out[name] = {"min_value": min(values), "max_value": max(values), "values": values}
    return out


def _monotone(booster: Model) -> list[int]:
    """The training's monotone constraints, one int per feature, or []."""
    given: Any = booster.config.get("monotone_constraints")
    if isinstance(given, str):
        given = parse_param("monotone_constraints", given)
    return [int(c) for c in given] if given else []


def to_lightgbm_json(
    booster: Model, first: int, end: int, importance: np.ndarray
) -> dict[str, Any]:
    """Trees [first, end) of ``booster`` as LightGBM's ``dump_model()`` dict,
    with the feature ``importance`` array (split counts or gains)."""
    names = list(booster.feature_names)
    doc: dict[str, Any] = {"name": "tree", "version": VERSION, "num_class": booster.num_class}
    doc["num_tree_per_iteration"] = booster.num_tree_per_iteration
    doc.update(label_index=0, max_feature_idx=booster.num_feature() - 1)
    objective = model_objective(booster.objective).lightgbm_text(
        booster.objective_params, booster.num_class
    )
    if objective is not None:
        doc["objective"] = objective
    doc.update(
        average_output=False, feature_names=list(names), monotone_constraints=_monotone(booster)
    )
    doc["feature_infos"] = _json_feature_infos(feature_infos(booster), names)
    doc["tree_info"] = [
        {
            "tree_index": first + i,
            "num_leaves": int(tree.n_leaves),
            "num_cat": len(getattr(tree, "cat_boundaries", [0])) - 1,
            "shrinkage": _number(_shrinkage(booster, tree, bias)),
            "tree_structure": _tree_structure(tree, bias),
        }
        for i, (tree, bias) in enumerate(exported_trees(booster, first, end))
    ]
    # GBDT::DumpModel: the importances truncated to integers, the non-zero ones
    doc["feature_importances"] = {
        name: int(v) for name, v in zip(names, importance, strict=True) if int(v) > 0
    }
    doc["pandas_categorical"] = json.loads(json.dumps(booster.pandas_categorical))
    return doc


def node_records(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The rows of ``Booster.trees_to_dataframe()`` from a LightGBM dump
    ``doc``: every node of every tree, depth first, left before right
    (LightGBM's ``trees_to_dataframe``)."""
    names = doc["feature_names"]
    rows = []
    for tree in doc["tree_info"]:
        stack = [(tree["tree_structure"], 1, None)]
        while stack:
            node, depth, parent = stack.pop()
            row = _node_record(node, tree["tree_index"], depth, parent, names)
            rows.append(row)
            if "split_index" in node:
                stack.append((node["right_child"], depth + 1, row["node_index"]))
                stack.append((node["left_child"], depth + 1, row["node_index"]))
    return rows


def _node_index(node: Mapping[str, Any], tree_index: int) -> str:
    split = "split_index" in node
    number = node.get("split_index" if split else "leaf_index", 0)  # one-leaf tree: L0
    return f"{tree_index}-{'S' if split else 'L'}{number}"


def _node_record(
    node: Mapping[str, Any],
    tree_index: int,
    depth: int,
    parent: str | None,
    names: Sequence[str],
) -> dict[str, Any]:
    """One row of trees_to_dataframe (LightGBM's ``create_node_record``)."""
    split = "split_index" in node
    row = dict.fromkeys(
        ("tree_index", "node_depth", "node_index", "left_child", "right_child", "parent_index")
        + ("split_feature", "split_gain", "threshold", "decision_type", "missing_direction")
        + ("missing_type", "value", "weight", "count")
    )
    row.update(tree_index=tree_index, node_depth=depth, node_index=_node_index(node, tree_index))
    row["parent_index"] = parent
    if split:
        row.update(
            left_child=_node_index(node["left_child"], tree_index),
            right_child=_node_index(node["right_child"], tree_index),
            split_feature=names[node["split_feature"]],
            split_gain=node["split_gain"],
            threshold=node["threshold"],
            decision_type=node["decision_type"],
            missing_direction="left" if node["default_left"] else "right",
            missing_type=node["missing_type"],
            value=node["internal_value"],
            weight=node["internal_weight"],
            count=node["internal_count"],
        )
    else:
        row["value"] = node["leaf_value"]
        if "leaf_weight" in node:  # not in a one-leaf tree
            row.update(weight=node["leaf_weight"], count=node["leaf_count"])
    return row


def split_values(doc: Mapping[str, Any], feature: int | str) -> list[float]:
    """The thresholds of the numerical splits on ``feature`` (an index, or a
    name) in a LightGBM dump ``doc``; a categorical split on it is a ValueError."""
    names = doc["feature_names"]
    values = []
    for tree in doc["tree_info"]:
        stack = [tree["tree_structure"]]
        while stack:
            node = stack.pop()
            if "split_index" not in node:
                continue
            used = node["split_feature"]
            if (names[used] if isinstance(feature, str) else used) == feature:
                if isinstance(node["threshold"], str):
                    raise DGBDTError(
                        "Cannot compute split value histogram for the categorical feature "
                        f"{feature!r}"
                    )
                values.append(node["threshold"])
            stack += [node["right_child"], node["left_child"]]
    return values
