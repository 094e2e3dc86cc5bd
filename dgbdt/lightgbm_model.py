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
  trivial (no value, or one value and no NaN).
"""

import json
import re

import numpy as np

from .lightgbm_keys import LIGHTGBM_PARAMS
from .objectives import model_objective
from .tree import CATEGORICAL, LARGEST, ZERO_IS_MISSING

VERSION = "v4"
#: decision_type bits (LightGBM's Tree: kCategoricalMask 1, kDefaultLeftMask 2,
#: missing type in bits 2-3: None 0, Zero 1, NaN 2)
DEFAULT_LEFT_MASK = 2
MISSING_ZERO = 1 << 2
MISSING_NAN = 2 << 2
#: what LightGBM refuses in a feature name (its JSON dump) or splits names on
_BAD_NAME_CHARS = re.compile(r'[\s",:\[\]{}\x00-\x1f\x7f-\x9f]')
NAMES_KEY = "dgbdt_feature_names:"


def _full(value):
    """A double in full (round-trip) precision, as LightGBM's ``ArrayToString<true>``."""
    value = float(value)
    if np.isinf(value):
        return "inf" if value > 0 else "-inf"
    return repr(value)


def _join(values, fmt=_full):
    return " ".join(fmt(v) for v in values)


def _int(value):
    return str(int(value))


def lightgbm_feature_names(names):
    """(names LightGBM can hold, whether any changed): bad characters become
    ``_``, and a name made equal to an earlier one gets a ``_2``, ``_3``... suffix."""
    out, seen = [], set()
    for name in names:
        clean = _BAD_NAME_CHARS.sub("_", name) or "_"
        candidate, k = clean, 1
        while candidate in seen:
            k += 1
            candidate = f"{clean}_{k}"
        seen.add(candidate)
        out.append(candidate)
    return out, out != list(names)


def feature_infos(booster):
    """``feature_infos`` of a model: from its bin mapper's ranges, or as read
    from a LightGBM model."""
    mapper = booster.bin_mapper
    if (mapper is None or mapper.value_ranges is None) and booster.lightgbm_feature_infos:
        return list(booster.lightgbm_feature_infos)
    return _range_infos(mapper, booster.num_feature())


def _range_infos(mapper, n_features):
    """LightGBM's ``feature_infos``: ``[min:max]`` per feature, ``none`` for a
    feature LightGBM drops as trivial, one without values or with one value
    and no NaN (and for every feature of a model that does not know its ranges)."""
    if mapper is None or mapper.value_ranges is None:
        return ["none"] * n_features
    infos = []
    cats = mapper.categories or [None] * n_features
    for f, (lo, hi) in enumerate(mapper.value_ranges):
        if cats[f] is not None:  # a categorical feature: its categories, in bin order
            infos.append(":".join(str(int(c)) for c in cats[f]) if len(cats[f]) else "none")
        elif np.isnan(lo) or (lo == hi and mapper.nan_bins[f] < 0):
            infos.append("none")
        else:
            infos.append(f"[{lo:.17g}:{hi:.17g}]")
    return infos


def _node_lines(tree):
    """split_feature ... right_child of a tree with internal nodes."""
    d = np.asarray(tree.default_left)
    # default_left bit 1: zero is missing too (LightGBM's Zero type); bit 2: a
    # categorical split, whose threshold is its bitset's index
    categorical = (d & CATEGORICAL) != 0
    missing = np.where(d & ZERO_IS_MISSING, MISSING_ZERO, MISSING_NAN)
    decision = np.where(categorical, 1 + MISSING_NAN, missing + DEFAULT_LEFT_MASK * (d & 1))
    threshold = np.where(tree.threshold >= LARGEST, np.inf, tree.threshold)  # +inf, as stored
    thresholds = [_int(t) if c else _full(t) for t, c in zip(threshold, categorical)]
    return [
        f"split_feature={_join(tree.split_feature, _int)}",
        f"split_gain={_join(tree.split_gain)}",
        "threshold=" + " ".join(thresholds),
        f"decision_type={_join(decision, _int)}",
        f"left_child={_join(tree.left_child, _int)}",
        f"right_child={_join(tree.right_child, _int)}",
    ]


def tree_text(tree, shrinkage, bias=0.0):
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
        lines += [
            f"cat_boundaries={_join(bounds, _int)}",
            f"cat_threshold={_join(tree.cat_threshold, _int)}",
        ]
    lines += ["is_linear=0", f"shrinkage={_full(shrinkage)}"]
    return "\n".join(lines) + "\n\n"


class _Constant:
    """A one-leaf tree holding a value (a model without trees, per class)."""

    n_leaves = 1

    def __init__(self, value):
        self.leaf_value = np.array([value])
        self.leaf_weight = np.zeros(1)
        self.leaf_count = np.zeros(1)


def _exported_trees(booster, first, end):
    """(tree, bias) of trees [first, end): the starting score folded into the
    first tree of each class, or constant trees when there is none."""
    k = booster.num_tree_per_iteration
    trees = booster.trees[first:end]
    init = booster.init_score if first == 0 else np.zeros(k)
    if not trees:
        return [(_Constant(float(init[c])), 0.0) for c in range(k)]
    return [(t, float(init[i]) if i < k else 0.0) for i, t in enumerate(trees)]


def _interaction_text(groups, names):
    """interaction_constraints as LightGBM writes them, ``[0,1],[2]``: feature
    names as their indices (LightGBM's Python package reads the line as JSON)."""
    if isinstance(groups, str):
        from .params import resolve_params

        groups = resolve_params({"interaction_constraints": groups})["interaction_constraints"]
    if not groups:
        return ""
    index = {name: i for i, name in enumerate(names or ())}
    return ",".join("[" + ",".join(str(index.get(f, f)) for f in group) + "]" for group in groups)


def _parameters(params, names=()):
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


def _importances(booster, first, end, names):
    """``name=count`` of the features the written trees split on, most used
    first (ties in feature order, LightGBM's stable sort)."""
    counts = np.zeros(booster.num_feature(), np.int64)
    for tree in booster.trees[first:end]:
        np.add.at(counts, np.asarray(tree.split_feature, np.int64), 1)
    order = sorted((i for i in range(len(counts)) if counts[i] > 0), key=lambda i: -counts[i])
    return [f"{names[i]}={int(counts[i])}" for i in order]


def to_lightgbm_text(booster, first, end):
    """Trees [first, end) of ``booster`` as LightGBM's model text."""
    k = booster.num_tree_per_iteration
    names, renamed = lightgbm_feature_names(booster.feature_names)
    blocks = []
    shrinkage = booster.params.get("learning_rate", 1.0)
    for i, (tree, bias) in enumerate(_exported_trees(booster, first, end)):
        own = getattr(tree, "shrinkage", None)  # a tree read from LightGBM keeps its own
        blocks.append(
            f"Tree={i}\n" + tree_text(tree, shrinkage if own is None else own, bias) + "\n"
        )
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
        *_parameters(booster.params, booster.feature_names),
        "end of parameters",
        "",
    ]
    if renamed:
        tail.append(NAMES_KEY + json.dumps(list(booster.feature_names)))
    tail.append("pandas_categorical:" + json.dumps(booster.pandas_categorical))
    return "\n".join(header) + "\n\n" + "".join(blocks) + "\n".join(tail) + "\n"
