"""Every parameter name and alias of LightGBM 4.x, as static data.

``dgbdt train`` takes LightGBM's ``key=value`` command line and config files
unchanged. Such files often set keys that dgbdt does not implement (``task``,
``save_binary``, ``gpu_device_id``, ...). This table tells those apart from
typos: a key LightGBM knows gets a warning that dgbdt ignores it, naming its
LightGBM canonical name, while a key nobody knows is an error with a
"did you mean" hint (:func:`dgbdt.params.table.canonical_name`).

The data covers all sections of LightGBM's Parameters docs (core, learning
control, IO: dataset / predict / convert, objective, metric, network, GPU). It
was generated from LightGBM 4.7's own alias dump (``LGBM_DumpParamAliases``)
and is written out here so that lightgbm is never imported at runtime;
tests/test_lightgbm_keys.py checks it against the installed lightgbm.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

__all__ = [
    "DEFAULTS",
    "PREDICT_KEYS",
    "HARMLESS",
    "LIGHTGBM_ALIASES",
    "LIGHTGBM_ONLY_METRICS",
    "LIGHTGBM_ONLY_OBJECTIVES",
    "LIGHTGBM_PARAMS",
    "is_lightgbm_default",
    "lightgbm_canonical",
    "parse_bool",
]

# canonical name -> its aliases, in the order of LightGBM's docs sections
LIGHTGBM_PARAMS: dict[str, tuple[str, ...]] = {
    # Core
    "config": ("config_file",),
    "task": ("task_type",),
    "objective": ("app", "loss", "application", "objective_type"),
    "boosting": ("boost", "boosting_type"),
    "data_sample_strategy": (),
    "data": ("train", "train_data", "data_filename", "train_data_file"),
    "valid": (
        "test",
        "test_data",
        "valid_data",
        "test_data_file",
        "valid_data_file",
        "valid_filenames",
    ),
    "num_iterations": (
        "n_iter",
        "nrounds",
        "max_iter",
        "num_tree",
        "num_round",
        "num_trees",
        "num_rounds",
        "n_estimators",
        "num_iteration",
        "num_boost_round",
    ),
    "learning_rate": ("eta", "shrinkage_rate"),
    "num_leaves": ("max_leaf", "num_leaf", "max_leaves", "max_leaf_nodes"),
    "tree_learner": ("tree", "tree_type", "tree_learner_type"),
    "num_threads": ("n_jobs", "nthread", "nthreads", "num_thread"),
    "device_type": ("device",),
    "seed": ("random_seed", "random_state"),
    "deterministic": (),
    # Learning control
    "force_col_wise": (),
    "force_row_wise": (),
    "histogram_pool_size": ("hist_pool_size",),
    "max_depth": (),
    "min_data_in_leaf": ("min_data", "min_samples_leaf", "min_child_samples", "min_data_per_leaf"),
    "min_sum_hessian_in_leaf": (
        "min_hessian",
        "min_sum_hessian",
        "min_child_weight",
        "min_sum_hessian_per_leaf",
    ),
    "bagging_fraction": ("bagging", "sub_row", "subsample"),
    "pos_bagging_fraction": ("pos_bagging", "pos_sub_row", "pos_subsample"),
    "neg_bagging_fraction": ("neg_bagging", "neg_sub_row", "neg_subsample"),
    "bagging_freq": ("subsample_freq",),
    "bagging_seed": ("bagging_fraction_seed",),
    "bagging_by_query": (),
    "feature_fraction": ("sub_feature", "colsample_bytree"),
    "feature_fraction_bynode": ("colsample_bynode", "sub_feature_bynode"),
    "feature_fraction_seed": (),
    "extra_trees": ("extra_tree",),
    "extra_seed": (),
    "early_stopping_round": ("early_stopping", "n_iter_no_change", "early_stopping_rounds"),
    "early_stopping_min_delta": (),
    "first_metric_only": (),
    "max_delta_step": ("max_leaf_output", "max_tree_output"),
    "lambda_l1": ("reg_alpha", "l1_regularization"),
    "lambda_l2": ("lambda", "reg_lambda", "l2_regularization"),
    "linear_lambda": (),
    "min_gain_to_split": ("min_split_gain",),
    "drop_rate": ("rate_drop",),
    "max_drop": (),
    "skip_drop": (),
    "xgboost_dart_mode": (),
    "uniform_drop": (),
    "drop_seed": (),
    "top_rate": (),
    "other_rate": (),
    "min_data_per_group": (),
    "max_cat_threshold": (),
    "cat_l2": (),
    "cat_smooth": (),
    "max_cat_to_onehot": (),
    "top_k": ("topk",),
    "monotone_constraints": ("mc", "monotonic_cst", "monotone_constraint"),
    "monotone_constraints_method": ("mc_method", "monotone_constraining_method"),
    "monotone_penalty": ("mc_penalty", "ms_penalty", "monotone_splits_penalty"),
    "feature_contri": ("fc", "fp", "feature_contrib", "feature_penalty"),
    "forcedsplits_filename": (
        "fs",
        "forced_splits",
        "forced_splits_file",
        "forced_splits_filename",
    ),
    "refit_decay_rate": (),
    "cegb_tradeoff": (),
    "cegb_penalty_split": (),
    "cegb_penalty_feature_lazy": (),
    "cegb_penalty_feature_coupled": (),
    "path_smooth": (),
    "interaction_constraints": (),
    "verbosity": ("verbose",),
    "input_model": ("model_in", "model_input"),
    "output_model": ("model_out", "model_output"),
    "saved_feature_importance_type": (),
    "snapshot_freq": ("save_period",),
    "use_quantized_grad": (),
    "num_grad_quant_bins": (),
    "quant_train_renew_leaf": (),
    "stochastic_rounding": (),
    # IO: dataset
    "linear_tree": ("linear_trees",),
    "max_bin": ("max_bins",),
    "max_bin_by_feature": (),
    "min_data_in_bin": (),
    "bin_construct_sample_cnt": ("subsample_for_bin",),
    "data_random_seed": ("data_seed",),
    "is_enable_sparse": ("sparse", "is_sparse", "enable_sparse"),
    "enable_bundle": ("bundle", "is_enable_bundle"),
    "use_missing": (),
    "zero_as_missing": (),
    "feature_pre_filter": (),
    "pre_partition": ("is_pre_partition",),
    "two_round": ("two_round_loading", "use_two_round_loading"),
    "header": ("has_header",),
    "label_column": ("label",),
    "weight_column": ("weight",),
    "group_column": ("group", "query", "group_id", "query_id", "query_column"),
    "ignore_column": ("blacklist", "ignore_feature"),
    "categorical_feature": (
        "cat_column",
        "cat_feature",
        "categorical_column",
        "categorical_features",
    ),
    "forcedbins_filename": (),
    "save_binary": ("is_save_binary", "is_save_binary_file"),
    "precise_float_parser": (),
    "parser_config_file": (),
    # IO: predict
    "start_iteration_predict": (),
    "num_iteration_predict": (),
    "predict_raw_score": ("raw_score", "predict_rawscore", "is_predict_raw_score"),
    "predict_leaf_index": ("leaf_index", "is_predict_leaf_index"),
    "predict_contrib": ("contrib", "is_predict_contrib"),
    "predict_disable_shape_check": (),
    "pred_early_stop": (),
    "pred_early_stop_freq": (),
    "pred_early_stop_margin": (),
    "output_result": (
        "name_pred",
        "pred_name",
        "predict_name",
        "predict_result",
        "prediction_name",
        "prediction_result",
    ),
    # IO: convert
    "convert_model_language": (),
    "convert_model": ("convert_model_file",),
    # Objective
    "objective_seed": (),
    "num_class": ("num_classes",),
    "is_unbalance": ("unbalance", "unbalanced_sets"),
    "scale_pos_weight": (),
    "sigmoid": (),
    "boost_from_average": (),
    "reg_sqrt": (),
    "alpha": (),
    "fair_c": (),
    "poisson_max_delta_step": (),
    "tweedie_variance_power": (),
    "lambdarank_truncation_level": (),
    "lambdarank_norm": (),
    "label_gain": (),
    "lambdarank_position_bias_regularization": (),
    # Metric
    "metric": ("metrics", "metric_types"),
    "metric_freq": ("output_freq",),
    "is_provide_training_metric": ("train_metric", "training_metric", "is_training_metric"),
    "eval_at": ("map_at", "ndcg_at", "map_eval_at", "ndcg_eval_at"),
    "multi_error_top_k": (),
    "auc_mu_weights": (),
    # Network
    "num_machines": ("num_machine",),
    "local_listen_port": ("port", "local_port"),
    "time_out": (),
    "machine_list_filename": ("mlist", "machine_list", "machine_list_file"),
    "machines": ("nodes", "workers"),
    # GPU
    "gpu_platform_id": (),
    "gpu_device_id": (),
    "gpu_use_dp": (),
    "num_gpu": (),
    "gpu_device_id_list": (),
}

# every canonical name and alias -> canonical name
LIGHTGBM_ALIASES: dict[str, str] = {
    key: name for name, aliases in LIGHTGBM_PARAMS.items() for key in (name, *aliases)
}


def lightgbm_canonical(key: str) -> str | None:
    """LightGBM's canonical name of a parameter name or alias; None if LightGBM does not know it."""
    return LIGHTGBM_ALIASES.get(key.strip())


# -- LightGBM keys dgbdt does not implement: which are harmless -------------------
#: Keys that change neither the model nor the output: hardware, speed, sockets,
#: file caching, and keys that only act together with a feature that is itself
#: refused (dart's, goss's, categorical, ranking and other objectives' settings).
#: They are accepted with a warning.
HARMLESS: frozenset[str] = frozenset(
    {
        "config",
        "device_type",
        "histogram_pool_size",
        "two_round",
        "save_binary",
        "precise_float_parser",
        "local_listen_port",
        "machine_list_filename",
        "machines",
        "gpu_platform_id",
        "gpu_device_id",
        "gpu_use_dp",
        "num_gpu",
        "gpu_device_id_list",
        "linear_lambda",
        "drop_rate",
        "max_drop",
        "skip_drop",
        "xgboost_dart_mode",
        "uniform_drop",
        "drop_seed",
        "cegb_tradeoff",
        "convert_model_language",
        "convert_model",
    }
)

#: LightGBM's defaults (include/LightGBM/config.h, 4.7) of the other keys dgbdt
#: does not implement: set to its default, such a key changes nothing and is
#: accepted with a warning; any other value changes the model or the output
#: and is refused.  "" stands for an empty list (constraints, file names).
DEFAULTS: dict[str, object] = {
    "feature_contri": "",
    "forcedsplits_filename": "",
    "cegb_penalty_split": 0.0,
    "cegb_penalty_feature_lazy": "",
    "cegb_penalty_feature_coupled": "",
    "saved_feature_importance_type": 0,
    "linear_tree": False,
    "max_bin_by_feature": "",
    "data_random_seed": 1,
    "use_missing": True,
    "forcedbins_filename": "",
    "parser_config_file": "",
}

#: Keys that act at prediction only: Booster.predict (and the estimators'
#: predict, from their params) reads them; training ignores them, as LightGBM's.
PREDICT_KEYS: frozenset[str] = frozenset(
    {
        "pred_early_stop",
        "pred_early_stop_freq",
        "pred_early_stop_margin",
        "predict_disable_shape_check",
    }
)

#: Per-feature list keys whose every entry at this value means "nothing" (a
#: monotone constraint of 0 constrains nothing), as their empty default does.
NEUTRAL_ENTRY: dict[str, float] = {
    "cegb_penalty_feature_lazy": 0,
    "cegb_penalty_feature_coupled": 0,
    "feature_contri": 1,
}

#: Boolean spellings: LightGBM's (true/false, +/-) and the usual others.
TRUE_WORDS, FALSE_WORDS = ("true", "+", "1", "yes"), ("false", "-", "0", "no")

#: LightGBM's objectives and metrics dgbdt does not have (with their aliases):
#: named as such, without a "did you mean" that would pick another loss.
LIGHTGBM_ONLY_OBJECTIVES: frozenset[str] = frozenset()
# (every LightGBM metric is in dgbdt.objective.metrics: none is left here)
LIGHTGBM_ONLY_METRICS: frozenset[str] = frozenset()


def parse_bool(value: object) -> bool | None:
    """True/False for a boolean spelling (text, bool, numpy bool, 0/1), else None."""
    if isinstance(value, str):
        text = value.strip().lower()
        return True if text in TRUE_WORDS else False if text in FALSE_WORDS else None
    if isinstance(value, (bool, np.bool_, numbers.Integral)):
        return bool(value) if value in (0, 1) else None
    if isinstance(value, numbers.Real) and value in (0.0, 1.0):
        return bool(value)
    return None


def is_lightgbm_default(key: str, value: object) -> bool:
    """Whether ``value`` (text from a config file, or a Python value: numpy scalars
    and arrays included; None means "the default", as LightGBM's Python package
    drops it) is LightGBM's default of the canonical ``key`` listed in :data:`DEFAULTS`."""
    default = DEFAULTS[key]
    if value is None:
        return True
    if isinstance(default, bool):
        return parse_bool(value) is default
    if isinstance(default, (int, float)):
        if isinstance(value, str):
            try:
                value = float(value.strip())
            except ValueError:
                return False
        return (
            isinstance(value, numbers.Real)
            and not isinstance(value, bool)
            and float(value) == default
        )
    # list-valued keys: empty, or every entry neutral (all-zero monotone constraints)
    items: Any = value.split(",") if isinstance(value, str) else value  # iterable or not
    if isinstance(value, str) and value.strip() == "":
        return True
    try:
        entries = [float(x) for x in items]
    except (TypeError, ValueError):
        return False
    return len(entries) == 0 or (
        key in NEUTRAL_ENTRY and all(x == NEUTRAL_ENTRY[key] for x in entries)
    )
