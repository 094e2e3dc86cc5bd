"""The one parameter table of dgbdt: names, defaults, aliases and constraints.

Each row of ``PARAMS`` is a :class:`Param`, using LightGBM's canonical name and
default. Validation (:func:`resolve_params`), the CLI help and the README table
(:func:`params_table_markdown`) all read this table, so a parameter is added or
changed in exactly one place. Values are coerced from strings because the CLI
passes ``key=value`` text; cross-parameter rules live in :func:`_check_combination`.
"""

from __future__ import annotations

import difflib
import math
import numbers
import re
import textwrap
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numba
import numpy as np

from ..data.categorical import parse_categorical_spec
from ..log import DGBDTError, log_lightgbm_warning
from ..objective.metrics import METRIC_ALIASES, METRICS
from ..objective.objectives import NO_OBJECTIVE_NAMES, OBJECTIVES, no_objective
from ..registry import Registry
from .lightgbm_keys import DEFAULTS as LIGHTGBM_DEFAULTS
from .lightgbm_keys import (
    HARMLESS,
    LIGHTGBM_ONLY_METRICS,
    LIGHTGBM_ONLY_OBJECTIVES,
    PREDICT_KEYS,
    is_lightgbm_default,
    lightgbm_canonical,
    parse_bool,
)

#: Parameters that decide a Dataset's bins (``seed`` picks the bin-finding
#: sample, so it matters only when the sample is not every row).
BINNING_KEYS = (
    "max_bin",
    "max_bin_by_feature",
    "min_data_in_bin",
    "bin_construct_sample_cnt",
    "seed",
    "use_missing",
    "zero_as_missing",
    "enable_bundle",
    "is_enable_sparse",
    "feature_pre_filter",
)


def threads_for(cfg: Mapping, ranks_on_machine: int) -> int:
    """The threads a training uses: ``num_threads``, or (when <= 0) this
    machine's cores shared by its ``ranks_on_machine`` ranks."""
    n = cfg["num_threads"]
    available = numba.config.NUMBA_NUM_THREADS
    if n <= 0:
        return max(1, available // ranks_on_machine)
    return min(n, available)


__all__ = [
    "Param",
    "PARAMS",
    "ALIASES",
    "OBJECTIVE_ALIASES",
    "METRIC_ALIASES",
    "canonical_name",
    "resolve_params",
    "default_metric",
    "params_table_markdown",
    "params_table_text",
]


@dataclass(frozen=True, eq=False)
class Param:
    """One parameter.

    ``kind`` is the type a value is coerced to (``int``, ``float``, ``bool`` or
    ``str``). Constraints are declarative where possible: ``lo``/``hi`` bound
    numbers (``lo_open``/``hi_open`` exclude the bound), ``choices`` maps every
    accepted string (value aliases included) to its canonical value. ``check``
    is an extra ``value -> error text or None`` test run after coercion, and
    ``convert`` replaces the generic coercion entirely (objective, metric).
    """

    name: str
    default: object
    kind: type
    aliases: tuple[str, ...] = ()
    doc: str = ""
    lo: float | None = None
    hi: float | None = None
    lo_open: bool = False
    hi_open: bool = False
    choices: Mapping[str, str] | None = None
    check: Callable[[object], str | None] | None = None
    convert: Callable[[Param, object], object] | None = None

    @property
    def allowed(self) -> str:
        """What values are allowed, as a phrase: 'an integer in [2, 131072]'."""
        if self.name == "auc_mu_weights":
            return "a list of finite numbers, or comma-separated text of them"
        if self.name == "label_gain":
            return "a list of finite numbers (the gain of each label), or comma-separated text"
        if self.name == "eval_at":
            return "a list of positive integers, or comma-separated text of them"
        if self.name == "monotone_constraints":
            return "a list of -1, 0, 1 (one per feature), or comma-separated text"
        if self.name == "interaction_constraints":
            return "a list of lists of feature indices or names, or text '[0,1],[2,3]'"
        if self.name == "max_bin_by_feature":
            return "a list of integers in [2, 65535] (one per feature), or comma-separated text"
        if self.choices is not None:
            canon = list(dict.fromkeys(self.choices.values()))
            text = "one of " + ", ".join(repr(c) for c in canon)
            if self.name == "objective":
                text = "a callable or " + text + " (or an alias of one)"
            elif self.name == "metric":
                text = (
                    "a metric name, a comma-separated string or list of them, "
                    "or 'None' for no metric; metrics: " + ", ".join(canon)
                )
            return text
        noun = {
            int: "an integer",
            float: "a number",
            bool: "a boolean (true/false/1/0)",
            str: "a string",
        }[self.kind]
        if self.lo is not None and self.hi is not None:
            return (
                f"{noun} in {'(' if self.lo_open else '['}{_fmt(self.lo)}, "
                f"{_fmt(self.hi)}{')' if self.hi_open else ']'}"
            )
        if self.lo is not None:
            return f"{noun} {'>' if self.lo_open else '>='} {_fmt(self.lo)}"
        if self.hi is not None:
            return f"{noun} {'<' if self.hi_open else '<='} {_fmt(self.hi)}"
        return noun


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(x)


def _error(p: Param, value: object, exc: type[Exception] = DGBDTError) -> Exception:
    """A bad value: DGBDTError (a ValueError, LightGBM's LightGBMError), or ``exc``."""
    return exc(f"Parameter '{p.name}' must be {p.allowed}, got {value!r}")


# --------------------------------------------------------------------------- #
# Objective and metric values
# --------------------------------------------------------------------------- #
#: Every accepted objective spelling -> its canonical name, from the registry
#: in dgbdt.objective.objectives (METRIC_ALIASES: the same from dgbdt.objective.metrics).
OBJECTIVE_ALIASES: dict[str, str] = OBJECTIVES.aliases

_NO_METRIC = ("none", "na", "null", "custom")


def default_metric(objective: str) -> str:
    """The metric evaluated when ``metric`` is not given (the objective's class states it)."""
    canon = OBJECTIVES.canonical(objective)
    if canon is None:
        raise _error(PARAMS["objective"], objective)
    return OBJECTIVES.entries[canon].default_metric


def _convert_objective(p: Param, value: object) -> object:
    if callable(value):  # custom objective: (preds, dataset) -> (grad, hess)
        return value
    if not isinstance(value, str):
        raise _error(p, value, TypeError)
    assert p.choices is not None  # objective's: the objective registry's spellings
    if value.strip().lower() in NO_OBJECTIVE_NAMES:
        return no_objective  # LightGBM's objective=none: Booster.update(fobj=...) trains
    canon = p.choices.get(value.strip().lower())
    if canon is None and value.strip().lower() in LIGHTGBM_ONLY_OBJECTIVES:
        have = ", ".join(repr(c) for c in dict.fromkeys(p.choices.values()))
        raise ValueError(
            f"Parameter 'objective': LightGBM objective {value.strip()!r} is not "
            f"supported by dgbdt yet (dgbdt has {have})"
        )
    if canon is None:
        error = _error(p, value)
        close = difflib.get_close_matches(value.strip().lower(), list(p.choices), n=1)
        if close:
            error = ValueError(f"{error}. Did you mean {close[0]!r}?")
        raise error
    return canon


def _convert_float_list(p: Param, value: object) -> tuple[float, ...] | None:
    """A list of finite numbers, or comma-separated text of them; "" / None / [] -> None."""
    if value is None or (isinstance(value, str) and value.strip() == ""):
        return None
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, (list, tuple, np.ndarray)):
        raise _error(p, value, TypeError)
    out = []
    for item in items:
        try:
            x = float(item.strip() if isinstance(item, str) else item)
        except (TypeError, ValueError):
            raise _error(p, value) from None
        if isinstance(item, bool) or not math.isfinite(x):
            raise _error(p, value)
        out.append(x)
    return tuple(out) or None


def _convert_eval_at(p: Param, value: object) -> tuple[int, ...]:
    """eval_at: positive integers, a list or comma-separated text; "" / None -> 1..5."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        value = [value]
    numbers = _convert_float_list(p, value)
    if numbers is None:
        return (1, 2, 3, 4, 5)
    if any(x != int(x) or x < 1 for x in numbers):
        raise _error(p, value)
    return tuple(sorted(int(x) for x in numbers))  # LightGBM sorts them


def _convert_max_bins(p: Param, value: object) -> tuple[int, ...] | None:
    """max_bin_by_feature: integers in [2, 65535], a list or comma-separated
    text; "" / None / [] -> None (max_bin for every feature)."""
    numbers = _convert_float_list(p, value)
    if numbers is None:
        return None
    if any(x != int(x) or not 2 <= x <= 65535 for x in numbers):
        raise _error(p, value)
    return tuple(int(x) for x in numbers)


def _convert_monotone(p: Param, value: object) -> tuple[int, ...] | None:
    """monotone_constraints: -1 / 0 / 1 per feature, a list or comma-separated
    text; "" / None / [] -> None (no constraints)."""
    numbers = _convert_float_list(p, value)
    if numbers is None:
        return None
    if any(x not in (-1.0, 0.0, 1.0) for x in numbers):
        raise ValueError(
            f"Parameter 'monotone_constraints' must hold -1, 0 or 1 per feature, got {value!r}"
        )
    return tuple(int(x) for x in numbers)


def _check_monotone_method(value: object) -> str | None:
    if value == "advanced":
        return (
            "cannot be 'advanced' (not implemented by dgbdt; 'intermediate' is the "
            "closest: LightGBM's advanced method bounds each threshold separately)"
        )
    return None


def _interaction_item(p: Param, item: object, value: object) -> int | str:
    if isinstance(item, str):
        text = item.strip()
        return int(text) if text.lstrip("-").isdigit() else text
    if isinstance(item, (bool, np.bool_)) or not isinstance(item, (int, np.integer)):
        raise _error(p, value, TypeError)
    return int(item)


def _convert_interactions(p: Param, value: object) -> tuple[tuple, ...] | None:
    """interaction_constraints: lists of feature indices or names, or LightGBM's
    text "[0,1,2],[2,3]"; "" / None / [] -> None (no constraints)."""
    if value is None or (isinstance(value, str) and value.strip() == ""):
        return None
    if isinstance(value, str):
        groups = re.findall(r"\[([^\[\]]*)\]", value)
        rest = re.sub(r"\[[^\[\]]*\]", "", value).replace(",", "").strip()
        if not groups or rest:
            raise _error(p, value)
        value = [[x for x in g.split(",") if x.strip()] for g in groups]
    if not isinstance(value, (list, tuple)):
        raise _error(p, value, TypeError)
    out = []
    for group in value:
        if not isinstance(group, (list, tuple, set, frozenset, np.ndarray)):
            raise _error(p, value, TypeError)
        out.append(tuple(_interaction_item(p, item, value) for item in group))
    if any(isinstance(i, int) and i < 0 for g in out for i in g):
        raise ValueError(
            f"Parameter 'interaction_constraints' has a negative feature index: {value!r}"
        )
    return tuple(out) or None


def _convert_categorical(p: Param, value: object) -> tuple | str:
    """categorical_feature: column indices or names (a list, "0,3" or LightGBM's
    "name:a,b"), "auto", or nothing ("" / None / [])."""
    try:
        return parse_categorical_spec(value)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"Parameter 'categorical_feature': {exc}") from None


def _convert_metric(p: Param, value: object) -> list[str] | None:
    """Parse a metric value; returns None for "use the objective's default":
    as LightGBM, which joins a list with commas, a blank string or an empty
    list means the default, and "None" (na, null, custom) means no metric."""
    if isinstance(value, (set, frozenset)) and all(isinstance(v, str) for v in value):
        # LightGBM joins a set in its iteration order, which Python's string
        # hashing makes differ per process (per rank): sorted here, one order
        value = sorted(value)
    if isinstance(value, str):
        tokens = value.split(",")
    elif isinstance(value, (list, tuple)):
        tokens = []
        for v in value:
            if not isinstance(v, str):
                raise _error(p, value, TypeError)
            tokens.extend(v.split(","))
    else:
        raise _error(p, value, TypeError)
    if all(t.strip() == "" for t in tokens):
        return None
    assert p.choices is not None  # metric's: the metric registry's spellings
    out: list[str] = []
    for tok in (t.strip().lower() for t in tokens):
        if tok == "" or tok in _NO_METRIC:
            continue
        canon = p.choices.get(tok)
        if canon is None and tok in LIGHTGBM_ONLY_METRICS:
            have = ", ".join(dict.fromkeys(p.choices.values()))
            raise ValueError(
                f"Parameter 'metric': LightGBM metric {tok!r} is not supported by "
                f"dgbdt yet (dgbdt has {have})"
            )
        if canon is None:
            close = difflib.get_close_matches(tok, list(p.choices), n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise ValueError(
                f"Parameter 'metric' got unknown metric {tok!r} in {value!r}."
                f"{hint} Valid metrics: " + ", ".join(dict.fromkeys(p.choices.values()))
            )
        if canon not in out:
            out.append(canon)
    return out


# --------------------------------------------------------------------------- #
# The table
# --------------------------------------------------------------------------- #
_INF = math.inf
_ROWS = [
    # core
    Param(
        "objective",
        "regression",
        str,
        ("objective_type", "app", "application", "loss"),
        "Loss to minimise; a callable (preds, train_data) -> (grad, hess) is a custom objective.",
        choices=OBJECTIVE_ALIASES,
        convert=_convert_objective,
    ),
    Param(
        "boosting",
        "gbdt",
        str,
        ("boosting_type", "boost"),
        "Boosting algorithm; only gradient-boosted trees (rf and dart are not implemented). "
        "'goss' is LightGBM's deprecated spelling of boosting='gbdt' with "
        "data_sample_strategy='goss' (taken so, with a warning).",
        choices={"gbdt": "gbdt", "gbrt": "gbdt", "goss": "gbdt"},
    ),
    Param(
        "num_iterations",
        100,
        int,
        (
            "num_iteration",
            "n_iter",
            "num_tree",
            "num_trees",
            "num_round",
            "num_rounds",
            "nrounds",
            "num_boost_round",
            "n_estimators",
            "max_iter",
        ),
        "Number of boosting rounds (trees per class).",
        lo=0,
    ),
    Param(
        "learning_rate",
        0.1,
        float,
        ("shrinkage_rate", "eta"),
        "Shrinkage applied to every new tree's leaf values.",
        lo=0,
        lo_open=True,
    ),
    Param(
        "num_leaves",
        31,
        int,
        ("num_leaf", "max_leaves", "max_leaf", "max_leaf_nodes"),
        "Maximum number of leaves per tree (trees grow leaf-wise, best first).",
        lo=2,
        hi=131072,
    ),
    Param(
        "tree_learner",
        "serial",
        str,
        ("tree", "tree_type", "tree_learner_type"),
        "How tree learning is distributed over MPI ranks.",
        choices={
            "serial": "serial",
            "feature": "feature",
            "feature_parallel": "feature",
            "data": "data",
            "data_parallel": "data",
            "voting": "voting",
            "voting_parallel": "voting",
        },
    ),
    Param(
        "num_threads",
        0,
        int,
        ("num_thread", "nthread", "nthreads", "n_jobs"),
        "Number of threads per process; <= 0 means all cores.",
    ),
    Param("seed", 0, int, ("random_seed", "random_state"), "Master random seed (None means 0)."),
    Param("deterministic", False, bool, (), "Favour bit-reproducible results over speed."),
    # learning control
    Param("max_depth", -1, int, (), "Maximum tree depth; <= 0 means no limit."),
    Param(
        "min_data_in_leaf",
        20,
        int,
        ("min_data_per_leaf", "min_data", "min_child_samples", "min_samples_leaf"),
        "Minimum number of samples in a leaf.",
        lo=0,
    ),
    Param(
        "min_sum_hessian_in_leaf",
        1e-3,
        float,
        ("min_sum_hessian_per_leaf", "min_sum_hessian", "min_hessian", "min_child_weight"),
        "Minimum sum of hessians in a leaf.",
        lo=0,
    ),
    Param(
        "bagging_fraction",
        1.0,
        float,
        ("sub_row", "subsample", "bagging"),
        "Fraction of rows sampled (without replacement) for each bagging round.",
        lo=0,
        hi=1,
        lo_open=True,
    ),
    Param(
        "bagging_freq",
        0,
        int,
        ("subsample_freq",),
        "Re-sample rows every k iterations; 0 disables bagging.",
        lo=0,
    ),
    Param(
        "pos_bagging_fraction",
        1.0,
        float,
        ("pos_sub_row", "pos_subsample", "pos_bagging"),
        "Binary: fraction of the positive rows (label > 0) in each bag (balanced bagging, "
        "with neg_bagging_fraction; needs bagging_freq > 0).",
        lo=0,
        hi=1,
        lo_open=True,
    ),
    Param(
        "neg_bagging_fraction",
        1.0,
        float,
        ("neg_sub_row", "neg_subsample", "neg_bagging"),
        "Binary: fraction of the negative rows (label <= 0) in each bag (see "
        "pos_bagging_fraction).",
        lo=0,
        hi=1,
        lo_open=True,
    ),
    Param(
        "bagging_by_query",
        False,
        bool,
        (),
        "Ranking: bag whole queries (each kept with bagging_fraction, keyed on the "
        "global query index) instead of rows.",
    ),
    Param("bagging_seed", 3, int, ("bagging_fraction_seed",), "Random seed for bagging."),
    Param(
        "data_sample_strategy",
        "bagging",
        str,
        (),
        "How each round's rows are sampled: 'bagging' (bagging_fraction / bagging_freq) "
        "or 'goss' (Gradient-based One-Side Sampling: the top_rate rows of largest "
        "|gradient x hessian| and an other_rate sample of the rest, amplified).",
        choices={"bagging": "bagging", "goss": "goss"},
    ),
    Param(
        "top_rate",
        0.2,
        float,
        (),
        "GOSS: the fraction of rows of largest |gradient x hessian| always kept.",
        lo=0,
        hi=1,
    ),
    Param(
        "other_rate",
        0.1,
        float,
        (),
        "GOSS: the fraction of rows sampled from the rest (their gradients and "
        "hessians multiplied by (1 - top_rate) / other_rate).",
        lo=0,
        hi=1,
    ),
    Param(
        "feature_fraction",
        1.0,
        float,
        ("sub_feature", "colsample_bytree"),
        "Fraction of features sampled for each tree.",
        lo=0,
        hi=1,
        lo_open=True,
    ),
    Param("feature_fraction_seed", 2, int, (), "Random seed for feature_fraction."),
    Param(
        "feature_fraction_bynode",
        1.0,
        float,
        ("sub_feature_bynode", "colsample_bynode"),
        "Fraction of the tree's features each node may split on (drawn per node, keyed "
        "on (seed, tree, leaf)).",
        lo=0,
        hi=1,
        lo_open=True,
    ),
    Param(
        "extra_trees",
        False,
        bool,
        ("extra_tree",),
        "Extremely randomised trees: each feature tries one random threshold per node "
        "(keyed on (seed, tree, leaf, feature), the same on every rank).",
    ),
    Param("extra_seed", 6, int, (), "Random seed for extra_trees' thresholds."),
    Param(
        "path_smooth",
        0.0,
        float,
        (),
        "Smooths each child's output toward its parent's: w * output / (w + 1) + "
        "parent / (w + 1), w = rows / path_smooth (0: off).",
        lo=0,
    ),
    Param(
        "monotone_constraints",
        "",
        str,
        ("mc", "monotone_constraint", "monotonic_cst"),
        "One of -1, 0, 1 per feature (a list, or comma-separated): predictions are "
        "non-increasing / free / non-decreasing in that feature.",
        convert=_convert_monotone,
    ),
    Param(
        "monotone_constraints_method",
        "basic",
        str,
        ("monotone_constraining_method", "mc_method"),
        "How monotone constraints bound the leaves: 'basic' (a split's children on each "
        "side of their mean) or 'intermediate' (tighter bounds from neighbouring leaves, "
        "whose splits are then re-computed).",
        choices={"basic": "basic", "intermediate": "intermediate", "advanced": "advanced"},
        check=_check_monotone_method,
    ),
    Param(
        "monotone_penalty",
        0.0,
        float,
        ("monotone_splits_penalty", "ms_penalty", "mc_penalty"),
        "Penalises splits on constrained features near the root: the gain is scaled "
        "by 1 - p / 2^depth (p <= 1), 1 - 2^(p - 1 - depth) (p > 1), ~0 from depth p - 1.",
        lo=0,
    ),
    Param(
        "interaction_constraints",
        "",
        str,
        (),
        "Sets of features that may appear together on a branch: a list of lists of "
        "feature indices or names, or text such as '[0,1,2],[2,3]'.  A feature in no "
        "set is never used (as LightGBM).",
        convert=_convert_interactions,
    ),
    Param(
        "lambda_l1",
        0.0,
        float,
        ("reg_alpha", "l1_regularization"),
        "L1 regularisation of leaf values.",
        lo=0,
    ),
    Param(
        "lambda_l2",
        0.0,
        float,
        ("reg_lambda", "lambda", "l2_regularization"),
        "L2 regularisation of leaf values.",
        lo=0,
    ),
    Param(
        "min_gain_to_split",
        0.0,
        float,
        ("min_split_gain",),
        "Minimum gain needed to split a leaf.",
        lo=0,
    ),
    Param(
        "max_cat_to_onehot",
        4,
        int,
        (),
        "Categorical features of at most this many bins (the missing/other bin "
        "included) split one category against the rest.",
        lo=1,
    ),
    Param(
        "max_cat_threshold",
        32,
        int,
        (),
        "Most categories on the side a many-vs-many categorical split gathers.",
        lo=1,
    ),
    Param(
        "cat_smooth",
        10.0,
        float,
        (),
        "Categorical splits: categories with fewer rows are left out, and it is "
        "added to the hessians sorting the rest (sum_gradient / (sum_hessian + cat_smooth)).",
        lo=0,
    ),
    Param(
        "cat_l2",
        10.0,
        float,
        (),
        "L2 regularisation added to lambda_l2 in many-vs-many categorical splits.",
        lo=0,
    ),
    Param(
        "cat_high_cardinality_rows",
        100.0,
        float,
        (),
        "dgbdt's high-cardinality rule: when more categories than max_cat_threshold "
        "pass the cat_smooth filter in a leaf, a many-vs-many split moves at most "
        "max(1, m / cat_high_cardinality_rows, min_data_per_group / m rounded up) of "
        "them, m their mean rows; 0 is "
        "LightGBM's rule (max_cat_threshold alone).",
        lo=0,
    ),
    Param(
        "min_data_per_group",
        100,
        int,
        (),
        "Minimum rows per group of categories in a categorical split (and on its right side).",
        lo=1,
    ),
    Param(
        "max_delta_step",
        0.0,
        float,
        ("max_tree_output", "max_leaf_output"),
        "Cap on the absolute leaf output; <= 0 means no limit.",
    ),
    Param(
        "top_k",
        20,
        int,
        ("topk",),
        "Features each rank proposes per leaf in voting-parallel learning.",
        lo=1,
    ),
    Param(
        "voting_rule",
        "votes",
        str,
        (),
        "How voting-parallel elects features: 'votes' = PV-Tree's 2*top_k features with "
        "the most votes (ties: summed gain, then feature index); 'weighted_gain' = "
        "LightGBM's top_k features by vote-count-weighted gain.  Where the election would "
        "take every feature, no vote is held: every feature is scanned (the single-process "
        "model).",
        choices={"votes": "votes", "weighted_gain": "weighted_gain"},
    ),
    Param(
        "check_consistency",
        False,
        bool,
        (),
        "After distributed training, verify with a hash that every rank holds the same model.",
    ),
    Param(
        "use_quantized_grad",
        False,
        bool,
        (),
        "Quantized training: gradients and hessians become a few integer levels (stochastic "
        "rounding), histograms are integers: faster, 2-4x fewer bytes in data- and "
        "voting-parallel training, and the same model on any number of ranks.",
    ),
    Param(
        "num_grad_quant_bins",
        4,
        int,
        (),
        "Integer levels of quantized gradients: hessians 0..B, gradients -(B // 2)..B // 2 "
        "(LightGBM's scales).",
        lo=2,
        hi=126,
    ),
    Param(
        "quant_train_renew_leaf",
        False,
        bool,
        (),
        "With quantized training, compute leaf values from the original float gradients "
        "(summed over all ranks).",
    ),
    Param(
        "stochastic_rounding",
        True,
        bool,
        (),
        "Round quantized gradients stochastically (unbiased) rather than to the nearest level.",
    ),
    Param(
        "early_stopping_round",
        0,
        int,
        ("early_stopping_rounds", "early_stopping", "n_iter_no_change"),
        "Stop when no validation metric improved for this many rounds; 0 or less "
        "disables (as LightGBM).",
    ),
    Param(
        "early_stopping_min_delta",
        0.0,
        float,
        (),
        "Minimum improvement that counts for early stopping.",
        lo=0,
    ),
    Param("first_metric_only", False, bool, (), "Early stopping looks at the first metric only."),
    Param(
        "force_col_wise",
        False,
        bool,
        (),
        "Force the column-wise (feature-parallel) histogram layout.",
    ),
    Param(
        "force_row_wise",
        False,
        bool,
        (),
        "Force the row-wise (row-block-parallel) histogram layout.",
    ),
    Param("verbosity", 1, int, ("verbose",), "< 0 fatal only, 0 warnings, 1 info, > 1 debug."),
    # dataset
    Param(
        "max_bin", 255, int, ("max_bins",), "Maximum number of bins per feature.", lo=2, hi=65535
    ),
    Param(
        "max_bin_by_feature",
        "",
        str,
        (),
        "Maximum number of bins of each feature (a list, or comma-separated), "
        'one per feature; "" means max_bin for all.',
        convert=_convert_max_bins,
    ),
    Param("min_data_in_bin", 3, int, (), "Minimum number of samples in a bin.", lo=1),
    Param(
        "categorical_feature",
        "",
        str,
        ("cat_feature", "categorical_column", "cat_column", "categorical_features"),
        "Categorical columns: indices, or names after LightGBM's 'name:' prefix "
        "('0,3' or 'name:carrier,origin'); a Dataset's own categorical_feature "
        "and pandas category columns come first.",
        convert=_convert_categorical,
    ),
    Param(
        "use_missing",
        True,
        bool,
        (),
        "NaN is a missing value: its own bin, sent to the side the split finds best; "
        "false: NaN is 0.0 (in binning and prediction), as LightGBM.",
    ),
    Param(
        "zero_as_missing",
        False,
        bool,
        (),
        "Zero is a missing value (LightGBM's missing type Zero): 0.0, NaN and the "
        "values a sparse matrix or LibSVM file leaves out all follow a split's "
        "default side.",
    ),
    Param(
        "enable_bundle",
        True,
        bool,
        ("is_enable_bundle", "bundle"),
        "Exclusive feature bundling: features never off their most frequent bin in "
        "the same row share one dense column (lossless; a storage choice, the model "
        "is the same).",
    ),
    Param(
        "is_enable_sparse",
        True,
        bool,
        ("is_sparse", "enable_sparse", "sparse"),
        "Keep features (and bundles) off their most frequent bin in under 40% of the "
        "rows sparse: only those rows are stored (a storage choice, the model is "
        "the same).",
    ),
    Param(
        "feature_pre_filter",
        True,
        bool,
        (),
        "Leave out of training the features no threshold 'bins up to t | the rest' "
        "splits with min_data_in_leaf rows on each side (LightGBM's NeedFilter, on "
        "every row's bins).",
    ),
    Param(
        "bin_construct_sample_cnt",
        200000,
        int,
        ("subsample_for_bin",),
        "Rows sampled to find bin boundaries.",
        lo=1,
    ),
    # objective
    Param(
        "num_class",
        1,
        int,
        ("num_classes",),
        "Number of classes; >= 2 for multiclass, 1 otherwise.",
        lo=1,
    ),
    Param(
        "is_unbalance",
        False,
        bool,
        ("unbalance", "unbalanced_sets"),
        "Binary: re-weight classes to balance them (exclusive with scale_pos_weight).",
    ),
    Param(
        "scale_pos_weight",
        1.0,
        float,
        (),
        "Binary: weight of the positive class.",
        lo=0,
        lo_open=True,
    ),
    Param("sigmoid", 1.0, float, (), "Binary: slope of the sigmoid.", lo=0, lo_open=True),
    Param(
        "alpha",
        0.9,
        float,
        (),
        "Huber: delta, where the loss turns from quadratic to linear; quantile: the "
        "quantile to fit (in (0, 1)).",
        lo=0,
        lo_open=True,
    ),
    Param(
        "fair_c",
        1.0,
        float,
        (),
        "Fair loss: its scale c (the loss is c^2 (|x|/c - log(1 + |x|/c))).",
        lo=0,
        lo_open=True,
    ),
    Param(
        "poisson_max_delta_step",
        0.7,
        float,
        (),
        "Poisson: the hessians are scaled by exp(this), to safeguard the optimisation.",
        lo=0,
        lo_open=True,
    ),
    Param(
        "tweedie_variance_power",
        1.5,
        float,
        (),
        "Tweedie: the variance power; near 2 the loss is gamma-like, near 1 Poisson-like.",
        lo=1,
        hi=2,
        hi_open=True,
    ),
    Param(
        "refit_decay_rate",
        0.9,
        float,
        (),
        "refit: a refitted leaf is this times its old value plus (1 - this) times the new data's.",
        lo=0,
        hi=1,
    ),
    Param(
        "objective_seed",
        5,
        int,
        (),
        "rank_xendcg: seed of its random draws (keyed on (seed, iteration, global "
        "query)); when only seed is given, derived from it as LightGBM does.",
    ),
    Param(
        "lambdarank_truncation_level",
        30,
        int,
        ("max_position",),
        "lambdarank: pairs need a document in the top this many positions, and the "
        "maximal DCG is taken at it (max_position: LightGBM 2's name).",
        lo=1,
    ),
    Param(
        "lambdarank_norm",
        True,
        bool,
        (),
        "lambdarank: normalise each query's lambdas (and weigh pairs by 1 / (0.01 + "
        "|score difference|)); false is the original algorithm.",
    ),
    Param(
        "label_gain",
        "",
        str,
        (),
        'Ranking: the gain of each label (a list, or comma-separated); "" means 2^i - 1 '
        "for labels 0..30.",
        convert=_convert_float_list,
    ),
    Param(
        "lambdarank_position_bias_regularization",
        0.0,
        float,
        (),
        "lambdarank with Dataset positions: L2 regularisation of the position bias factors.",
        lo=0,
    ),
    Param(
        "reg_sqrt",
        False,
        bool,
        (),
        "regression, regression_l1, quantile, mape, fair: fit sign(y) sqrt(|y|) and "
        "square the predictions back.",
    ),
    Param(
        "boost_from_average",
        True,
        bool,
        (),
        "Start from the label average (log-odds for binary) instead of 0.",
    ),
    # metric
    Param(
        "metric",
        "",
        str,
        ("metrics", "metric_types"),
        "Metrics to evaluate; \"\" means the objective's default, 'None' means none.",
        choices=METRIC_ALIASES,
        convert=_convert_metric,
    ),
    Param(
        "auc_mu_weights",
        "",
        str,
        (),
        "Row-major num_class x num_class weights of the auc_mu metric (a list, or comma-"
        'separated); "" means 1 off the diagonal. Its diagonal is taken as zero.',
        convert=_convert_float_list,
    ),
    Param(
        "multi_error_top_k",
        1,
        int,
        (),
        "multi_error: a row is right when its true class is among the k classes "
        "scored highest (ties with the true class count against it).",
        lo=1,
    ),
    Param(
        "eval_at",
        "1,2,3,4,5",
        str,
        ("ndcg_eval_at", "ndcg_at", "map_eval_at", "map_at"),
        "ndcg and map: the positions k evaluated, reported as ndcg@k, map@k.",
        convert=_convert_eval_at,
    ),
    Param("metric_freq", 1, int, ("output_freq",), "Evaluate metrics every k iterations.", lo=1),
    Param(
        "is_provide_training_metric",
        False,
        bool,
        ("training_metric", "is_training_metric", "train_metric"),
        "Also evaluate metrics on the training data.",
    ),
    # network
    Param(
        "num_machines",
        1,
        int,
        ("num_machine",),
        "Accepted for LightGBM configs; dgbdt takes the number of processes from "
        "mpiexec (a different value is warned about).",
        lo=1,
    ),
    Param(
        "comm_pipeline",
        -1,
        int,
        (),
        "Data-parallel: build the histogram of a leaf in this many pieces of features, "
        "each piece's reduce-scatter sent by a communication thread while the next is "
        "built (the same sums and bytes). -1 chooses: when the ranks span machines and a "
        "histogram is at least 256 KiB, the first 32 histograms are timed and 4 pieces "
        "are used if their exchanges took longer than their builds; 0 or 1 turns it off.",
        lo=-1,
        hi=64,
    ),
    Param(
        "time_out",
        120.0,
        float,
        (),
        "Minutes a rank waits in one collective before the job ends with a message naming "
        "it and the ranks that did not join (LightGBM's key; floats accepted). A cold "
        "compile, gzip decompression on rank 0 and snapshot writes wait at least 30 "
        "minutes.",
        lo=0,
        lo_open=True,
    ),
]

_TABLE: Registry[Param] = Registry()
for _row in _ROWS:
    _TABLE.add(_row)
PARAMS: dict[str, Param] = _TABLE.entries
ALIASES: dict[str, str] = _TABLE.aliases
del _ROWS, _row


# --------------------------------------------------------------------------- #
# Names
# --------------------------------------------------------------------------- #
def canonical_name(key: str) -> str:
    """The canonical name of a parameter name or alias; ValueError if unknown."""
    if not isinstance(key, str):
        raise TypeError(f"Parameter names must be strings, got {key!r}")
    name = ALIASES.get(key.strip())
    if name is not None:
        return name
    hint = _closest_name(key) or "See dgbdt.params.table.PARAMS for the parameters."
    raise DGBDTError(f"Unknown parameter {key!r}. {hint}")


def _closest_name(key: str) -> str:
    """ "Did you mean 'x' (alias of 'y')?" for an unknown parameter name, or ""."""
    close = difflib.get_close_matches(key.strip(), list(ALIASES), n=1)
    if not close:
        return ""
    alias_of = f" (alias of {ALIASES[close[0]]!r})" if ALIASES[close[0]] != close[0] else ""
    return f"Did you mean {close[0]!r}{alias_of}?"


def lightgbm_only_key(key: str, value: object) -> str:
    """For a LightGBM key dgbdt does not implement: the warning text when it
    changes nothing (hardware, speed and socket keys, keys of refused features,
    LightGBM's default value, command-line keys given to the Python API);
    ValueError naming it when it would change the model or the output."""
    name = lightgbm_canonical(key)
    shown = repr(key.strip()) + (f" ({name})" if name != key.strip() else "")
    if name in LIGHTGBM_DEFAULTS:
        if is_lightgbm_default(name, value):
            return (
                f"LightGBM parameter {shown} is not supported by dgbdt yet; its value "
                f"{value!r} is LightGBM's default, which is what dgbdt does"
            )
        raise ValueError(
            f"LightGBM parameter {shown}={value!r} is not supported by dgbdt yet, "
            "and it would change the model or its output: remove it (LightGBM's "
            f"default is {LIGHTGBM_DEFAULTS[name]!r})"
        )
    if name in PREDICT_KEYS:
        return (
            f"LightGBM parameter {shown} acts at prediction (Booster.predict and the "
            "estimators' predict read it); training ignores it"
        )
    if name in HARMLESS:
        return (
            f"LightGBM parameter {shown} is not supported by dgbdt yet; ignored (it changes "
            "neither the model nor its output)"
        )
    return f"LightGBM parameter {shown} is a command-line key; ignored by the Python API"


# --------------------------------------------------------------------------- #
# Values
# --------------------------------------------------------------------------- #
#: LightGBM reads integer parameters into C ints.
_INT32 = (-(2**31), 2**31 - 1)


def _not_a_number(p: Param, value: str) -> DGBDTError:
    """Text that is no number, for a numeric parameter: LightGBM's words (config.h
    GetInt / GetDouble), then what is allowed."""
    kind = "int" if p.kind is int else "double"
    return DGBDTError(
        f'Parameter {p.name} should be of type {kind}, got "{value}" (it must be {p.allowed})'
    )


def _coerce(p: Param, value: object) -> Any:
    """Coerce one value to ``p.kind`` and check it; raise naming the parameter."""
    if p.convert is not None:
        return p.convert(p, value)
    is_bool = isinstance(value, (bool, np.bool_))
    if p.kind is bool:
        out: Any = parse_bool(value)  # the value as p.kind, in every branch
        if out is not None:
            return out
        raise _error(p, value, ValueError if isinstance(value, (str, numbers.Real)) else TypeError)
    if p.kind is str:
        if not isinstance(value, str):
            raise _error(p, value, TypeError)
        out = value.strip()
        if p.choices is not None:
            out = p.choices.get(out.lower())
            if out is None:
                raise _error(p, value)
    else:  # int or float
        if is_bool or not isinstance(value, (str, numbers.Real)):
            raise _error(p, value, TypeError)
        x: Any = value
        if isinstance(value, str):
            try:  # int() first: exact for big integers; float() takes "1e3", "5.0"
                x = int(value) if p.kind is int else float(value)
            except ValueError:
                try:
                    x = float(value)
                except ValueError:
                    raise _not_a_number(p, value) from None
        if p.kind is int and isinstance(x, numbers.Integral):
            out = int(x)
            if not _INT32[0] <= out <= _INT32[1]:
                raise ValueError(
                    f"Parameter '{p.name}' must fit a 32-bit integer (as in "
                    f"LightGBM), got {value!r}"
                )
        else:
            try:
                out = float(x)  # OverflowError for ints beyond float range
            except OverflowError:
                raise _error(p, value) from None
            if not math.isfinite(out) or (p.kind is int and not out.is_integer()):
                raise _error(p, value)
            if p.kind is int:
                out = int(out)
                if not _INT32[0] <= out <= _INT32[1]:
                    raise ValueError(
                        f"Parameter '{p.name}' must fit a 32-bit integer (as in "
                        f"LightGBM), got {value!r}"
                    )
        if p.lo is not None and (out < p.lo or (p.lo_open and out == p.lo)):
            raise _error(p, value)
        if p.hi is not None and (out > p.hi or (p.hi_open and out == p.hi)):
            raise _error(p, value)
    if p.check is not None:
        problem = p.check(out)
        if problem:
            raise ValueError(f"Parameter '{p.name}' {problem}, got {value!r}")
    return out


def _chosen(name: str, given: list[tuple[str, object]]) -> int:
    """Which of several spellings of one parameter counts, as in LightGBM: the
    canonical name, else the first one given."""
    names = [key for key, _ in given]
    return names.index(name) if name in names else 0


def _pick(name: str, given: list[tuple[str, object]], notes: list[str]) -> object:
    """Choose among several spellings of one parameter (:func:`_chosen`); a
    spelling ignored with another value adds LightGBM's warning text to ``notes``."""
    w = _chosen(name, given)
    p = PARAMS[name]
    (kept, kept_value) = given[w]

    def coerce(value: object) -> object:
        return _coerce(p, p.default if value is None else value)

    for i, (key, value) in enumerate(given):
        if i == w:
            continue
        try:
            same = coerce(value) == coerce(kept_value)
        except (TypeError, ValueError):
            same = False
        if not same:  # LightGBM's words (config.h KeyAliasTransform)
            was = "set" if kept == name else f"set with {kept}"
            notes.append(
                f"{name} is {was}={_text(kept_value)}, {key}={_text(value)} will be ignored. "
                f"Current value: {name}={_text(kept_value)}"
            )
    return kept_value


def _text(value: object) -> str:
    """A value as LightGBM's python package passes it to its C++ (lists comma-joined)."""
    if isinstance(value, (list, tuple)):
        return ",".join(map(str, value))
    return str(value)


def resolve_params(params: Mapping[str, object] | None = None) -> dict[str, Any]:
    """Validate ``params`` and return a NEW dict with every canonical name.

    Keys may be canonical names or aliases; values may be strings (as the CLI
    gives them) and are coerced to each parameter's kind. ``None`` as a value
    means "use the default", as in LightGBM's Python package. The result is
    ordered like ``PARAMS`` and resolving it again gives the same dict
    (but a resolved ``metric=[]``: see below).

    ``objective`` is a canonical objective name, or the callable as given.
    ``metric`` is always a list of canonical metric names, duplicates removed
    in order: not given / ``""`` / ``[]`` / ``None`` ->
    ``[default_metric(objective)]`` (``[]`` for a callable objective), as
    LightGBM; ``"None"``, ``"na"``, ``"null"`` and ``"custom"`` -> ``[]`` (no
    metric). So a resolved ``[]`` (no metric) must be given again as "None".
    """
    if params is None:
        params = {}
    if not isinstance(params, Mapping):
        raise TypeError(f"params must be a dict, got {type(params).__name__}")
    given: dict[str, list[tuple[str, object]]] = {}
    unknown: list[str] = []
    notes: list[str] = []  # spellings ignored
    for key, value in params.items():
        if isinstance(key, str) and key.strip() not in ALIASES and lightgbm_canonical(key):
            warnings.warn(lightgbm_only_key(key, value), UserWarning, stacklevel=2)
            continue
        try:
            name = canonical_name(key)
        except DGBDTError:  # (canonical_name: a str key)
            hint = _closest_name(key)
            unknown.append(key.strip() + (f" ({hint})" if hint else ""))
            continue
        given.setdefault(name, []).append((key.strip(), value))
    out: dict[str, Any] = {}
    boosting_goss = False
    for name, p in PARAMS.items():
        value = _pick(name, given[name], notes) if name in given else None
        out[name] = _coerce(p, p.default if value is None else value)
        if name == "boosting":
            boosting_goss = isinstance(value, str) and value.strip().lower() == "goss"
        elif name == "seed":
            seed_given = value is not None
    if boosting_goss:
        _boosting_goss(out)
    if "objective_seed" not in given and seed_given:
        out["objective_seed"] = lightgbm_derived_seed(out["seed"], 4)
    if out["metric"] is None:
        obj = out["objective"]
        out["metric"] = [] if callable(obj) else [default_metric(obj)]
    _check_combination(out)
    for text in unknown:
        # LightGBM warns and goes on (config.h KeyAliasTransform); the hint is dgbdt's
        log_lightgbm_warning(f"Unknown parameter: {text}", out["verbosity"])
    for text in notes:
        log_lightgbm_warning(text, out["verbosity"])
    return out


def check_params(params: Mapping[str, object]) -> None:
    """Raise what :func:`resolve_params` raises for ``params``, keeping nothing:
    for parameters stored with data (a Dataset file's), checked when read; a
    call's parameters are resolved once, by its entry point."""
    resolve_params(params)


def parse_param(name: str, value: object) -> Any:
    """One parameter's value checked and converted as :func:`resolve_params`
    converts it (``None``: its default), without the checks that combine
    parameters: for one value read where no call's parameters are resolved
    (a model's recorded constraints, a reader's tree_learner)."""
    p = PARAMS[canonical_name(name)]
    return _coerce(p, p.default if value is None else value)


def given_param(params: Mapping[str, object], name: str) -> Any:
    """``name``'s value in raw ``params`` under any of its spellings (the
    canonical name first, else the first alias, as :func:`resolve_params`
    picks), parsed by :func:`parse_param`; its default when not given."""
    given = [(str(k).strip(), v) for k, v in params.items() if ALIASES.get(str(k).strip()) == name]
    return parse_param(name, given[_chosen(name, given)][1] if given else None)


def lightgbm_derived_seed(seed: int, k: int) -> int:
    """The ``k``-th (0-based) seed LightGBM derives from a given ``seed`` (config.cpp:
    Random(seed).NextShort(0, 32767) for data_random_seed, bagging_seed, drop_seed,
    feature_fraction_seed, objective_seed, extra_seed in that order)."""
    x = seed & 0xFFFFFFFF
    for _ in range(k + 1):
        x = (214013 * x + 2531011) & 0xFFFFFFFF
    return ((x >> 16) & 0x7FFF) % 32767


def _check_combination(p: dict[str, Any]) -> None:
    """Rules that involve more than one parameter."""
    if p["min_data_in_leaf"] <= 0 and p["min_sum_hessian_in_leaf"] <= float(np.float32(1e-15)):
        # LightGBM's fix-up (config.cpp): otherwise empty sides would split
        warnings.warn(
            "Cannot set both min_data_in_leaf and min_sum_hessian_in_leaf to 0; "
            "min_data_in_leaf is set to 1 (as LightGBM)",
            UserWarning,
            stacklevel=3,
        )
        p["min_data_in_leaf"] = 1
    if p["path_smooth"] > float(np.float32(1e-15)) and p["min_data_in_leaf"] < 2:
        # LightGBM's rule (config.cpp): a side's row count is estimated from
        # hessians, so "1 row" may be none, and path_smooth's gain can be
        # positive at zero gradients and hessians
        warnings.warn(
            "min_data_in_leaf has been increased to 2 because this is required when "
            "path smoothing is active (as LightGBM)",
            UserWarning,
            stacklevel=3,
        )
        p["min_data_in_leaf"] = 2
    if p["max_depth"] > 0 and p["monotone_penalty"] >= p["max_depth"]:
        warnings.warn(
            f"monotone_penalty={p['monotone_penalty']} is at least max_depth="
            f"{p['max_depth']}: monotone features won't be used (as LightGBM)",
            UserWarning,
            stacklevel=3,
        )
    if p["is_unbalance"] and p["scale_pos_weight"] != 1.0:
        raise ValueError(
            "Parameters 'is_unbalance'=True and 'scale_pos_weight'="
            f"{p['scale_pos_weight']!r} cannot be used together; use one of them"
        )
    if p["force_col_wise"] and p["force_row_wise"]:
        raise ValueError("Parameters 'force_col_wise' and 'force_row_wise' cannot both be true")
    _check_objective_fit(p)
    _check_auc_mu_weights(p)
    _check_sampling(p)


def _boosting_goss(p: dict[str, Any]) -> None:
    """LightGBM's backwards compatibility (config.cpp): boosting=goss means
    boosting=gbdt with data_sample_strategy=goss."""
    warnings.warn(
        "Found boosting='goss': as LightGBM, dgbdt takes it as boosting='gbdt', "
        "data_sample_strategy='goss'; set data_sample_strategy='goss' instead",
        UserWarning,
        stacklevel=3,
    )
    p["data_sample_strategy"] = "goss"


def _check_sampling(p: dict[str, Any]) -> None:
    """GOSS and balanced bagging against the other sampling parameters, as
    LightGBM's GOSSStrategy / BaggingSampleStrategy (errors where it stops,
    warnings where it silently ignores a parameter)."""
    balanced = p["pos_bagging_fraction"] < 1.0 or p["neg_bagging_fraction"] < 1.0
    ignored = "Parameters 'pos_bagging_fraction' / 'neg_bagging_fraction' (balanced bagging)"
    if p["data_sample_strategy"] == "goss":
        _check_goss(p)
        if balanced:
            warnings.warn(
                f"{ignored} are ignored with data_sample_strategy='goss' (as in LightGBM)",
                UserWarning,
                stacklevel=4,
            )
        return
    obj = p["objective"]
    if balanced and obj != "binary":
        name = getattr(obj, "__name__", "custom") if callable(obj) else obj
        warnings.warn(
            f"{ignored} apply to objective 'binary' only (as in LightGBM); ignored "
            f"for objective {name!r}",
            UserWarning,
            stacklevel=4,
        )
    elif balanced and p["bagging_freq"] <= 0:
        warnings.warn(
            f"{ignored} need 'bagging_freq' > 0 (as in LightGBM); ignored with "
            f"bagging_freq={p['bagging_freq']}",
            UserWarning,
            stacklevel=4,
        )


def _check_goss(p: dict[str, Any]) -> None:
    """LightGBM's checks of GOSS (goss.hpp ResetSampleConfig)."""
    top, other = p["top_rate"], p["other_rate"]
    if top + other > 1.0:
        raise ValueError(
            f"Parameters 'top_rate'={top!r} and 'other_rate'={other!r} must sum to at "
            "most 1 for data_sample_strategy='goss'"
        )
    if top <= 0.0 or other <= 0.0:
        raise ValueError(
            f"data_sample_strategy='goss' needs 'top_rate' > 0 and 'other_rate' > 0, got "
            f"top_rate={top!r}, other_rate={other!r}"
        )
    if p["bagging_freq"] > 0 and p["bagging_fraction"] != 1.0:
        raise ValueError(
            "Cannot use bagging with data_sample_strategy='goss' (as in LightGBM): "
            f"'bagging_fraction'={p['bagging_fraction']!r} with 'bagging_freq'="
            f"{p['bagging_freq']}; set bagging_fraction=1.0 or bagging_freq=0"
        )


def _check_objective_fit(p: dict[str, Any]) -> None:
    """num_class and the metrics against the objective's class (LightGBM's
    Config::CheckParamConflict): a callable objective counts as multiclass when
    num_class > 1."""
    obj = p["objective"]
    k = p["num_class"]
    if callable(obj):
        multiclass, what = k > 1, f"a callable objective with num_class={k}"
    else:
        spec = OBJECTIVES.entries[obj]
        spec.check_params(p)
        multiclass, what = spec.multiclass, f"objective {obj!r} with num_class={k}"
        rule = spec.num_class_error(k)
        if rule is not None:
            lead = (
                "Number of classes should be specified and greater than 1 for multiclass training"
                if multiclass
                else "Number of classes must be 1 for non-multiclass training"
            )
            raise DGBDTError(f"{lead}: Parameter 'num_class' {rule} for {what}")
    bad = sorted(m for m in set(p["metric"]) if METRICS[m].multiclass != multiclass)
    if bad:
        multi = " / ".join(name for name, m in METRICS.items() if m.multiclass)
        raise DGBDTError(
            f"Multiclass objective and metrics don't match: metric {bad[0]!r} does not fit "
            f"{what} (multiclass objectives take {multi} only)"
        )


def _check_auc_mu_weights(p: dict[str, Any]) -> None:
    """LightGBM's rules (Config::GetAucMuWeights): num_class^2 values, non-zero
    off the diagonal; the diagonal is taken as zero."""
    weights = p["auc_mu_weights"]
    if weights is None:
        return
    k = p["num_class"]
    if len(weights) != k * k:
        raise ValueError(
            f"Parameter 'auc_mu_weights' must have num_class^2 = {k * k} values "
            f"(a row-major {k} x {k} matrix), got {len(weights)}"
        )
    for pos, w in enumerate(weights):
        if pos // k != pos % k and abs(w) < 1e-35:
            raise ValueError(
                f"Parameter 'auc_mu_weights' must be non-zero off the diagonal; "
                f"position {pos} (row {pos // k}, column {pos % k}) is {w!r}"
            )


# --------------------------------------------------------------------------- #
# Docs
# --------------------------------------------------------------------------- #
def _values(choices: Mapping[str, str], code: Callable[[str], str]) -> str:
    """{value alias: canonical} -> "`a` (aliases `x`, `y`), `b`" (``code`` quotes a value)."""
    parts = []
    for c in dict.fromkeys(choices.values()):
        alts = ", ".join(code(a) for a, v in choices.items() if v == c and a != c)
        parts.append(f"{code(c)} (aliases {alts})" if alts else code(c))
    return ", ".join(parts)


def _description(p: Param, code: Callable[[str], str]) -> str:
    """A parameter's doc followed by the values it allows."""
    if p.name == "objective":
        return f"{p.doc} One of {_values(OBJECTIVE_ALIASES, code)}."
    if p.name == "metric":
        return f"{p.doc} Comma-separated string or list of {_values(METRIC_ALIASES, code)}."
    if p.choices is not None:
        return f"{p.doc} One of {_values(p.choices, code)}."
    return f"{p.doc} Must be {p.allowed}."


def _default_text(p: Param) -> str:
    return '""' if p.default == "" else str(p.default)


def params_table_markdown() -> str:
    """A markdown table of all parameters: name | default | aliases | description."""

    def cell(text: str) -> str:
        return text.replace("|", "\\|")

    def code(text: str) -> str:
        return f"`{text}`"

    lines = ["| name | default | aliases | description |", "|---|---|---|---|"]
    for p in PARAMS.values():
        aliases = ", ".join(code(a) for a in p.aliases)
        lines.append(
            f"| `{p.name}` | `{cell(_default_text(p))}` | {cell(aliases)} | "
            f"{cell(_description(p, code))} |"
        )
    return "\n".join(lines) + "\n"


def params_table_text(width: int = 100) -> str:
    """A plain-text list of all parameters for ``dgbdt --help``, wrapped to ``width``.

    Each parameter is a line ``name (aliases: a, b)  default: X`` followed by
    its description, indented by four spaces.
    """
    out = []
    for p in PARAMS.values():
        aliases = f" (aliases: {', '.join(p.aliases)})" if p.aliases else ""
        out += textwrap.wrap(
            f"{p.name}{aliases}  default: {_default_text(p)}",
            width,
            subsequent_indent="        ",
            break_on_hyphens=False,
        )
        out += textwrap.wrap(
            _description(p, str),
            width,
            initial_indent="    ",
            subsequent_indent="    ",
            break_on_hyphens=False,
        )
    return "\n".join(out) + "\n"
