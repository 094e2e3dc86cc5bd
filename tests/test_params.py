"""Tests of the parameter table: defaults, aliases, coercion, messages, docs."""

import re
import warnings

import numpy as np
import pytest

import dgbdt
from dgbdt.params.table import (
    ALIASES,
    METRIC_ALIASES,
    OBJECTIVE_ALIASES,
    PARAMS,
    Param,
    canonical_name,
    default_metric,
    params_table_markdown,
    resolve_params,
)


# --------------------------------------------------------------------------- #
# Defaults and names
# --------------------------------------------------------------------------- #
def test_defaults():
    p = resolve_params(None)
    assert list(p) == list(PARAMS)
    assert p["objective"] == "regression"
    assert p["boosting"] == "gbdt"
    assert p["num_iterations"] == 100
    assert p["learning_rate"] == 0.1
    assert p["num_leaves"] == 31
    assert p["tree_learner"] == "serial"
    assert p["max_depth"] == -1
    assert p["min_data_in_leaf"] == 20
    assert p["min_sum_hessian_in_leaf"] == 1e-3
    assert p["max_bin"] == 255
    assert p["bagging_seed"] == 3 and p["feature_fraction_seed"] == 2
    assert p["boost_from_average"] is True
    assert p["is_unbalance"] is False
    assert p["metric"] == ["l2"]  # the objective's default metric
    assert resolve_params({}) == p


def test_resolve_returns_new_dict_and_is_idempotent():
    given = {"eta": "0.3", "metric": "auc,binary", "objective": "binary"}
    before = dict(given)
    p = resolve_params(given)
    assert given == before  # input untouched
    assert p["learning_rate"] == 0.3 and p["metric"] == ["auc", "binary_logloss"]
    assert resolve_params(p) == p
    assert resolve_params(p) is not p


def test_default_types_match_kind():
    for p in PARAMS.values():
        if p.name != "metric":
            assert type(p.default) is p.kind, p.name
        assert isinstance(p, Param)


@pytest.mark.parametrize("alias,name", sorted(ALIASES.items()))
def test_every_alias_maps_to_its_canonical_name(alias, name):
    assert canonical_name(alias) == name
    assert alias == name or alias in PARAMS[name].aliases


def test_alias_table_is_complete_and_unambiguous():
    n_aliases = sum(len(p.aliases) for p in PARAMS.values())
    assert len(ALIASES) == len(PARAMS) + n_aliases  # no alias shared by two params
    for name in PARAMS:
        assert ALIASES[name] == name
    assert ALIASES["n_estimators"] == "num_iterations"
    assert ALIASES["reg_lambda"] == "lambda_l2"
    assert ALIASES["min_child_weight"] == "min_sum_hessian_in_leaf"
    assert ALIASES["colsample_bytree"] == "feature_fraction"


def test_alias_sets_value():
    p = resolve_params(
        {
            "n_estimators": 7,
            "max_leaf_nodes": 5,
            "random_state": 42,
            "subsample": 0.5,
            "subsample_freq": 1,
            "n_jobs": -1,
        }
    )
    assert (p["num_iterations"], p["num_leaves"], p["seed"]) == (7, 5, 42)
    assert (p["bagging_fraction"], p["bagging_freq"], p["num_threads"]) == (0.5, 1, -1)
    assert "n_estimators" not in p


def test_unknown_parameter_suggests(capsys):
    with pytest.raises(ValueError) as e:
        canonical_name("lerning_rate")
    assert str(e.value) == "Unknown parameter 'lerning_rate'. Did you mean 'learning_rate'?"
    # LightGBM warns about an unknown parameter in params and goes on (the hint is dgbdt's)
    assert resolve_params({"n_estimator": 3})["num_iterations"] == 100
    assert capsys.readouterr().out == (
        "[LightGBM] [Warning] Unknown parameter: n_estimator (Did you mean 'n_estimators' "
        "(alias of 'num_iterations')?)\n"
    )
    resolve_params({"zzzz": 1})
    assert capsys.readouterr().out == "[LightGBM] [Warning] Unknown parameter: zzzz\n"
    resolve_params({"zzzz": 1, "verbose": -1})
    assert capsys.readouterr().out == ""
    with pytest.raises(ValueError, match="Unknown parameter 'zzzz'"):
        canonical_name("zzzz")
    with pytest.raises(TypeError):
        canonical_name(3)


# --------------------------------------------------------------------------- #
# Coercion
# --------------------------------------------------------------------------- #
def test_cli_strings_are_coerced():
    p = resolve_params(
        {
            "num_leaves": "10",
            "learning_rate": "0.05",
            "boost_from_average": "false",
            "deterministic": "TRUE",
            "force_row_wise": "1",
            "max_depth": "-1",
            "min_sum_hessian_in_leaf": "1e-2",
            "num_iterations": " 12 ",
            "tree_learner": "Data_Parallel",
            "boosting": "gbrt",
        }
    )
    assert p["num_leaves"] == 10 and type(p["num_leaves"]) is int
    assert p["learning_rate"] == 0.05 and type(p["learning_rate"]) is float
    assert p["boost_from_average"] is False
    assert p["deterministic"] is True and p["force_row_wise"] is True
    assert p["max_depth"] == -1 and p["min_sum_hessian_in_leaf"] == 0.01
    assert p["num_iterations"] == 12
    assert p["tree_learner"] == "data" and p["boosting"] == "gbdt"


def test_numpy_and_integral_values():
    p = resolve_params(
        {
            "num_leaves": np.int64(7),
            "learning_rate": np.float32(0.5),
            "num_iterations": 5.0,
            "deterministic": np.bool_(True),
            "first_metric_only": 0,
            "lambda_l2": 2,
        }
    )
    assert p["num_leaves"] == 7 and type(p["num_leaves"]) is int
    assert p["learning_rate"] == 0.5 and type(p["learning_rate"]) is float
    assert p["num_iterations"] == 5 and type(p["num_iterations"]) is int
    assert p["deterministic"] is True and p["first_metric_only"] is False
    assert p["lambda_l2"] == 2.0 and type(p["lambda_l2"]) is float


def test_none_means_default():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # equal values (None == default) do not warn
        p = resolve_params({"seed": None, "random_state": None, "metric": None})
    assert p["seed"] == 0 and p["metric"] == ["l2"]


@pytest.mark.parametrize(
    "key,value,exc",
    [
        ("num_leaves", 1.5, ValueError),
        ("num_leaves", "ten", ValueError),
        ("num_leaves", True, TypeError),
        ("num_leaves", [3], TypeError),
        ("learning_rate", "fast", ValueError),
        ("learning_rate", float("nan"), ValueError),
        ("learning_rate", float("inf"), ValueError),
        ("deterministic", "maybe", ValueError),
        ("deterministic", 2, ValueError),
        ("deterministic", [True], TypeError),
        ("tree_learner", 3, TypeError),
    ],
)
def test_uncoercible_values(key, value, exc):
    with pytest.raises(exc) as e:
        resolve_params({key: value})
    msg = str(e.value)
    if isinstance(value, str) and key in ("num_leaves", "learning_rate"):
        # text that is no number: LightGBM's words (a DGBDTError, its LightGBMError)
        kind = "int" if key == "num_leaves" else "double"
        assert msg.startswith(f'Parameter {key} should be of type {kind}, got "{value}"'), msg
        assert isinstance(e.value, dgbdt.DGBDTError) and "must be" in msg
    else:
        assert f"Parameter '{key}'" in msg and repr(value) in msg and "must be" in msg


# --------------------------------------------------------------------------- #
# Range and choice messages
# --------------------------------------------------------------------------- #
def test_out_of_range_message_exact():
    with pytest.raises(ValueError) as e:
        resolve_params({"num_leaves": 1})
    assert str(e.value) == "Parameter 'num_leaves' must be an integer in [2, 131072], got 1"
    with pytest.raises(ValueError) as e:
        resolve_params({"bagging_fraction": 0})
    assert str(e.value) == "Parameter 'bagging_fraction' must be a number in (0, 1], got 0"
    with pytest.raises(ValueError) as e:
        resolve_params({"eta": -0.1})  # the message names the canonical parameter
    assert str(e.value) == "Parameter 'learning_rate' must be a number > 0, got -0.1"


@pytest.mark.parametrize(
    "key,bad,good",
    [
        ("num_iterations", -1, 0),
        ("learning_rate", 0.0, 1e-9),
        ("num_leaves", 131073, 131072),
        ("min_data_in_leaf", -1, 0),
        ("min_sum_hessian_in_leaf", -1e-9, 0.0),
        ("bagging_fraction", 1.01, 1.0),
        ("bagging_freq", -1, 0),
        ("feature_fraction", 0.0, 0.01),
        ("lambda_l1", -1.0, 0.0),
        ("lambda_l2", -1.0, 0.0),
        ("min_gain_to_split", -1.0, 0.0),
        ("max_bin", 1, 2),
        ("max_bin", 65536, 65535),
        ("min_data_in_bin", 0, 1),
        ("bin_construct_sample_cnt", 0, 1),
        ("num_class", 0, 1),
        ("sigmoid", 0.0, 0.5),
        ("alpha", 0.0, 0.5),
        ("scale_pos_weight", 0.0, 2.0),
        ("metric_freq", 0, 1),
        ("early_stopping_min_delta", -0.5, 0.0),
        ("top_k", 0, 1),
        ("num_machines", 0, 1),
    ],
)
def test_bounds(key, bad, good):
    with pytest.raises(
        ValueError, match=rf"^Parameter '{key}' must be .*, got {re.escape(repr(bad))}$"
    ):
        resolve_params({key: bad})
    assert resolve_params({key: good})[key] == good


def test_unbounded_ints_accept_negatives():
    p = resolve_params(
        {"num_threads": -1, "max_depth": -5, "verbosity": -1, "seed": -7, "max_delta_step": -1.0}
    )
    assert (p["num_threads"], p["max_depth"], p["verbosity"], p["seed"]) == (-1, -5, -1, -7)
    assert p["max_delta_step"] == -1.0


def test_wrong_choice_message():
    with pytest.raises(ValueError) as e:
        resolve_params({"tree_learner": "gpu"})
    assert str(e.value) == (
        "Parameter 'tree_learner' must be one of 'serial', 'feature', 'data', 'voting', got 'gpu'"
    )
    with pytest.raises(ValueError, match=r"Parameter 'boosting' must be one of 'gbdt', got 'dart'"):
        resolve_params({"boosting_type": "dart"})


# --------------------------------------------------------------------------- #
# Conflicting spellings
# --------------------------------------------------------------------------- #
def test_canonical_name_wins_over_alias_with_warning(capsys):
    # LightGBM's log line (config.h KeyAliasTransform), printed at verbosity >= 0
    p = resolve_params({"reg_lambda": 2.0, "lambda_l2": 1.0})
    assert p["lambda_l2"] == 1.0
    assert capsys.readouterr().out == (
        "[LightGBM] [Warning] lambda_l2 is set=1.0, reg_lambda=2.0 will be ignored. "
        "Current value: lambda_l2=1.0\n"
    )
    resolve_params({"reg_lambda": 2.0, "lambda_l2": 1.0, "verbosity": -1})
    assert capsys.readouterr().out == ""


def test_first_alias_wins_when_no_canonical(capsys):
    p = resolve_params({"eta": 0.2, "shrinkage_rate": 0.3})
    assert p["learning_rate"] == 0.2
    assert (
        "learning_rate is set with eta=0.2, shrinkage_rate=0.3 will be ignored. "
        "Current value: learning_rate=0.2" in capsys.readouterr().out
    )


def test_equal_values_under_two_names_do_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p = resolve_params(
            {"num_leaves": 10, "max_leaves": "10", "objective": "mse", "loss": "regression"}
        )
    assert p["num_leaves"] == 10


def test_ignored_invalid_alias_only_warns(capsys):
    p = resolve_params({"num_leaves": 10, "max_leaves": "nonsense"})
    assert p["num_leaves"] == 10
    assert "max_leaves=nonsense will be ignored" in capsys.readouterr().out


# --------------------------------------------------------------------------- #
# Objective and metric
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("alias,canon", sorted(OBJECTIVE_ALIASES.items()))
def test_objective_aliases(alias, canon):
    extra = {"num_class": 3} if canon in ("multiclass", "multiclassova") else {}
    assert resolve_params({"objective": alias, **extra})["objective"] == canon
    assert resolve_params({"application": alias.upper(), **extra})["objective"] == canon


def test_objective_alias_table():
    for a in (
        "regression_l2",
        "l2",
        "mean_squared_error",
        "mse",
        "l2_root",
        "root_mean_squared_error",
        "rmse",
    ):
        assert OBJECTIVE_ALIASES[a] == "regression"
    for a in ("l1", "mean_absolute_error", "mae"):
        assert OBJECTIVE_ALIASES[a] == "regression_l1"
    assert OBJECTIVE_ALIASES["softmax"] == "multiclass"
    for a in ("multiclass_ova", "ova", "ovr"):
        assert OBJECTIVE_ALIASES[a] == "multiclassova"
    assert OBJECTIVE_ALIASES["xentropy"] == "cross_entropy"
    assert OBJECTIVE_ALIASES["xentlambda"] == "cross_entropy_lambda"
    assert OBJECTIVE_ALIASES["mean_absolute_percentage_error"] == "mape"
    assert set(OBJECTIVE_ALIASES.values()) == {
        "regression",
        "regression_l1",
        "huber",
        "binary",
        "multiclass",
        "quantile",
        "mape",
        "fair",
        "poisson",
        "gamma",
        "tweedie",
        "cross_entropy",
        "cross_entropy_lambda",
        "multiclassova",
        "lambdarank",
        "rank_xendcg",
    }
    for a in ("xendcg", "xe_ndcg", "xe_ndcg_mart", "xendcg_mart"):
        assert OBJECTIVE_ALIASES[a] == "rank_xendcg"


def test_unknown_objective_lists_valid_ones():
    with pytest.raises(ValueError) as e:
        resolve_params({"objective": "lambdamart"})
    msg = str(e.value)
    assert "Parameter 'objective'" in msg and "'lambdamart'" in msg
    for o in (
        "'regression'",
        "'regression_l1'",
        "'huber'",
        "'binary'",
        "'multiclass'",
        "'tweedie'",
    ):
        assert o in msg
    with pytest.raises(TypeError, match="Parameter 'objective'"):
        resolve_params({"objective": 3})


def test_callable_objective_kept():
    def my_obj(preds, data):
        return preds, preds

    p = resolve_params({"objective": my_obj, "num_class": 4})
    assert p["objective"] is my_obj
    assert p["metric"] == []  # no default metric for a custom objective
    assert resolve_params({"objective": my_obj, "metric": "l1"})["metric"] == ["l1"]


@pytest.mark.parametrize("alias,canon", sorted(METRIC_ALIASES.items()))
def test_metric_aliases(alias, canon):
    objective = (
        {"objective": "multiclass", "num_class": 3}
        if canon.startswith("multi") or canon == "auc_mu"
        else {}
    )
    assert resolve_params({"metric": alias, **objective})["metric"] == [canon]


@pytest.mark.parametrize(
    "objective, metric",
    [
        ("binary", "multi_logloss"),
        ("regression", "ova"),
        ("multiclass", "auc"),
        ("multiclass", "binary_logloss"),
        ("multiclass", "l2"),
    ],
)
def test_metrics_must_fit_the_objective(objective, metric):
    # LightGBM refuses these at once ("Multiclass objective and metrics don't match")
    extra = {"num_class": 3} if objective == "multiclass" else {}
    with pytest.raises(ValueError, match="does not fit objective"):
        resolve_params({"objective": objective, "metric": metric, **extra})


def test_metric_forms():
    r = lambda m, **kw: resolve_params({"metric": m, **kw})["metric"]  # noqa: E731
    assert r("l2,auc") == ["l2", "auc"]
    assert r(" MSE , l2_root ") == ["l2", "rmse"]
    assert r(["mae", "l1", "regression_l1"]) == ["l1"]  # duplicates removed
    assert r(("binary_error", "binary,auc")) == ["binary_error", "binary_logloss", "auc"]
    assert r("rmse,l2,rmse") == ["rmse", "l2"]  # order kept
    for none in ("None", "none", "na", "null", "custom", ["None"], "None,"):
        assert r(none) == [], none
    assert r("l2,None") == ["l2"]
    assert r("") == ["l2"]
    assert r([]) == ["l2"]  # LightGBM: an empty list is the objective's default
    assert r("", objective="binary") == ["binary_logloss"]
    assert r("", objective="softmax", num_class=3) == ["multi_logloss"]
    assert resolve_params({"metrics": "multiclassova", "objective": "multiclass", "num_class": 3})[
        "metric"
    ] == ["multi_logloss"]


def test_unknown_metric_suggests():
    with pytest.raises(ValueError) as e:
        resolve_params({"metric": "l2,acu"})
    msg = str(e.value)
    assert "Parameter 'metric'" in msg and "'acu'" in msg and "Did you mean 'auc'?" in msg
    assert "binary_logloss" in msg
    with pytest.raises(TypeError, match="Parameter 'metric'"):
        resolve_params({"metric": 5})
    with pytest.raises(TypeError, match="Parameter 'metric'"):
        resolve_params({"metric": ["l2", 5]})


def test_default_metric():
    assert default_metric("regression") == "l2"
    assert default_metric("regression_l1") == "l1"
    assert default_metric("huber") == "huber"
    assert default_metric("binary") == "binary_logloss"
    assert default_metric("multiclass") == "multi_logloss"
    assert default_metric("mae") == "l1"
    for objective in ("quantile", "mape", "fair", "poisson", "gamma", "tweedie", "cross_entropy"):
        assert default_metric(objective) == objective
    assert default_metric("xentlambda") == "cross_entropy_lambda"
    assert default_metric("multiclassova") == "multi_logloss"
    assert default_metric("lambdarank") == default_metric("xendcg") == "ndcg"
    with pytest.raises(ValueError, match="'lambdamart'"):
        default_metric("lambdamart")


# --------------------------------------------------------------------------- #
# Cross-parameter rules
# --------------------------------------------------------------------------- #
def test_is_unbalance_with_scale_pos_weight():
    with pytest.raises(ValueError, match="'is_unbalance'.*'scale_pos_weight'"):
        resolve_params({"objective": "binary", "is_unbalance": True, "scale_pos_weight": 2})
    p = resolve_params({"objective": "binary", "is_unbalance": "true", "scale_pos_weight": 1})
    assert p["is_unbalance"] is True


def test_col_wise_and_row_wise():
    with pytest.raises(ValueError, match="'force_col_wise'.*'force_row_wise'"):
        resolve_params({"force_col_wise": True, "force_row_wise": "1"})
    assert resolve_params({"force_col_wise": True})["force_col_wise"] is True


def test_num_class_against_objective():
    with pytest.raises(ValueError) as e:
        resolve_params({"objective": "multiclass"})
    assert "'num_class'" in str(e.value) and "'multiclass'" in str(e.value)
    with pytest.raises(ValueError) as e:
        resolve_params({"objective": "binary", "num_class": 3})
    assert "'num_class'" in str(e.value) and "'binary'" in str(e.value)
    assert resolve_params({"objective": "softmax", "num_classes": "5"})["num_class"] == 5


# --------------------------------------------------------------------------- #
# Docs
# --------------------------------------------------------------------------- #
def test_markdown_table_lists_every_parameter():
    md = params_table_markdown()
    lines = md.strip().splitlines()
    assert lines[0] == "| name | default | aliases | description |"
    rows = lines[2:]
    assert len(rows) == len(PARAMS)
    for row, p in zip(rows, PARAMS.values(), strict=True):
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", row)[1:-1]]
        assert len(cells) == 4, row
        assert cells[0] == f"`{p.name}`"
        for a in p.aliases:
            assert f"`{a}`" in cells[2]
        assert p.doc.replace("|", "\\|") in cells[3]
    assert "| `num_leaves` | `31` |" in md
    assert "an integer in [2, 131072]" in md
    assert "`voting` (aliases `voting_parallel`)" in md


def test_every_param_has_doc_and_a_one_line_doc():
    for p in PARAMS.values():
        assert p.doc and "\n" not in p.doc, p.name


# --------------------------------------------------------------------------- #
# Agreement with LightGBM
# --------------------------------------------------------------------------- #
def test_names_aliases_and_defaults_match_lightgbm():
    lgb = pytest.importorskip("lightgbm")
    from lightgbm.basic import _ConfigAliases

    lgb_aliases = _ConfigAliases._get_all_param_aliases()
    dgbdt_only = {  # our own
        "voting_rule",
        "check_consistency",
        "cat_high_cardinality_rows",
        "comm_pipeline",
    }
    for name, p in PARAMS.items():
        if name in dgbdt_only:
            continue
        assert name in lgb_aliases, name
        # max_position: LightGBM 2's name of lambdarank_truncation_level, kept as an alias
        assert set(p.aliases) - {"max_position"} == set(lgb_aliases[name]) - {name}, name

    rng = np.random.default_rng(0)
    X, y = rng.random((50, 2)), rng.random(50)
    booster = lgb.train({"verbosity": -1}, lgb.Dataset(X, y), num_boost_round=1)
    text = booster.model_to_string()
    dumped = dict(re.findall(r"\[(\w+): ?(.*)\]", text[text.index("parameters:") :]))
    ours = resolve_params(None)
    checked = 0
    for name, value in ours.items():
        if name not in dumped or name in ("num_iterations", "verbosity", "metric"):
            continue
        expected = resolve_params({name: dumped[name]})[name]  # coerce LightGBM's text
        assert value == expected, (name, value, dumped[name])
        checked += 1
    assert checked >= 30


def test_one_value_read_alone_follows_resolve_params():
    from dgbdt.params.table import given_param, parse_param

    # the canonical name wins over an alias, else the first spelling, as resolve_params picks
    both = {"tree": "voting", "tree_learner": "data"}
    assert given_param(both, "tree_learner") == resolve_params(both)["tree_learner"] == "data"
    assert given_param({"tree": "feature", "tree_type": "voting"}, "tree_learner") == "feature"
    assert given_param({}, "time_out") == resolve_params({})["time_out"]
    assert parse_param("monotone_constraints", "1,-1,0") == (1, -1, 0)
    for bad in ({"time_out": "soon"}, {"tree_learner": "sideways"}):
        name = next(iter(bad))
        with pytest.raises(ValueError, match=name):
            given_param(bad, name)
