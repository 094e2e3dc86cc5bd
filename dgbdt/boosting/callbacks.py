"""LightGBM-compatible training callbacks (users import them from
dgbdt.callback, which lists the public ones).

The boosting loop calls every callback after each iteration with a
:class:`CallbackEnv`, sorted by the callback's ``order`` attribute (callbacks
with ``before_iteration = True`` run before the iteration instead), and
catches :class:`EarlyStopException`.  A callback may also define
``begin_training(env)``, called once before the first iteration (with
``env.iteration == env.begin_iteration``): :func:`log_progress` starts its
clock there.

``evaluation_result_list`` holds ``(dataset_name, metric_name, value,
is_higher_better)`` tuples, dataset-major (all metrics of the first dataset,
then the next dataset), as in LightGBM. Entries of the training data (named
``"training"``, or ``model._train_data_name`` when the model has it) are never
used for early stopping.

:func:`reset_parameter`'s callbacks are run by the boosting loop itself, before
the other before-iteration callbacks: it validates their values, agrees on
them over the ranks and rebuilds what reads them (dgbdt.boosting.loop).

All printing goes through :func:`_log`, so a distributed runner can make only
rank 0 print by replacing that one function.
"""

from __future__ import annotations

import os
import time
from collections import namedtuple
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

from ..log import log_info, log_warning, logging_rank
from ..params.lightgbm_keys import lightgbm_canonical
from ..params.table import ALIASES, BINNING_KEYS, canonical_name, resolve_params

if TYPE_CHECKING:
    from ..models.model import Model
    from ..objective.objectives import Objective

TRAIN_DATA_NAME = "training"

CallbackEnv = namedtuple(
    "CallbackEnv",
    ["model", "params", "iteration", "begin_iteration", "end_iteration", "evaluation_result_list"],
)

#: What the public functions below return: called with a CallbackEnv after (or,
#: with ``before_iteration``, before) each iteration.
_Callback = Callable[[CallbackEnv], None]


class EarlyStopException(Exception):
    """Raised by a callback to stop training.

    Parameters
    ----------
    best_iteration : int
        0-based index of the best iteration.
    best_score : list of tuple
        The ``evaluation_result_list`` of that iteration.
    """

    def __init__(self, best_iteration: int, best_score: list[tuple[Any, ...]]) -> None:
        super().__init__(best_iteration, best_score)
        self.best_iteration = best_iteration
        self.best_score = best_score


def _log(msg: str) -> None:
    """One message (rank 0 only): through dgbdt.log, so a registered logger gets it."""
    log_info(msg)


def _format_eval_result(item: Sequence[Any], show_stdv: bool = True) -> str:
    """``"valid_0's l2: 0.123456"``, with ``" + stdv"`` for 5-tuples (cv)."""
    out = f"{item[0]}'s {item[1]}: {item[2]:g}"
    if show_stdv and len(item) == 5 and item[4] is not None:
        out += f" + {item[4]:g}"
    return out


class _LogEvaluationCallback:
    def __init__(self, period: int = 1, show_stdv: bool = True, show_comm: bool = False) -> None:
        self.order = 10
        self.before_iteration = False
        self.period = period
        self.show_stdv = show_stdv
        self.show_comm = show_comm

    def __call__(self, env: CallbackEnv) -> None:
        results = env.evaluation_result_list
        if (
            self.period > 0
            and (results or self.show_comm)
            and (env.iteration + 1) % self.period == 0
        ):
            text = "\t".join(_format_eval_result(x, self.show_stdv) for x in results or [])
            if self.show_comm:
                per_tree = env.model.comm_stats().get("bytes_per_tree") or [0]
                text += f"\tsent {per_tree[-1] / 1e3:.1f} kB/tree"
            _log(f"[{env.iteration + 1}]\t{text.lstrip()}")


def log_evaluation(period: int = 1, show_stdv: bool = True, show_comm: bool = False) -> _Callback:
    """Log the evaluation results every ``period`` iterations.

    Parameters
    ----------
    period : int, default=1
        Log when ``(iteration + 1) % period == 0``; ``period <= 0`` disables.
    show_stdv : bool, default=True
        Append the standard deviation when results carry one (cv).
    show_comm : bool, default=False
        Append the bytes this rank handed to collectives (its send buffers) for the
        last tree (distributed training).

    Returns
    -------
    callable
    """
    return _LogEvaluationCallback(period=period, show_stdv=show_stdv, show_comm=show_comm)


class _RecordEvaluationCallback:
    def __init__(self, eval_result: dict[str, dict[str, list[Any]]]) -> None:
        if not isinstance(eval_result, dict):
            raise TypeError(f"eval_result should be a dictionary, got {type(eval_result).__name__}")
        self.order = 20
        self.before_iteration = False
        self.eval_result = eval_result

    @staticmethod
    def _keys(item: Sequence[Any]) -> list[tuple[str, Any]]:
        if len(item) == 5:  # cv(): mean and standard deviation
            return [(f"{item[1]}-mean", item[2]), (f"{item[1]}-stdv", item[4])]
        return [(item[1], item[2])]

    def __call__(self, env: CallbackEnv) -> None:
        if env.evaluation_result_list is None:
            raise RuntimeError(
                "record_evaluation() callback enabled but no evaluation results found"
            )
        if env.iteration == env.begin_iteration:
            self.eval_result.clear()
        for item in env.evaluation_result_list:
            per_data = self.eval_result.setdefault(item[0], {})
            for key, value in self._keys(item):
                per_data.setdefault(key, []).append(value)


def record_evaluation(eval_result: dict[str, dict[str, list[Any]]]) -> _Callback:
    """Record the evaluation history into ``eval_result``.

    Parameters
    ----------
    eval_result : dict
        Cleared at the first iteration, then filled as
        ``eval_result[dataset_name][metric_name] = [value, ...]``.

    Returns
    -------
    callable

    Raises
    ------
    TypeError
        If ``eval_result`` is not a dict.
    """
    return _RecordEvaluationCallback(eval_result)


def should_enable_early_stopping(stopping_rounds: object) -> bool:
    """Whether ``stopping_rounds`` (``early_stopping_round``) asks for early
    stopping: an int > 0; 0 or less disables it, as in LightGBM; TypeError
    (LightGBM's text) for anything but an int."""
    if isinstance(stopping_rounds, bool) or not isinstance(stopping_rounds, int):
        raise TypeError(
            f"early_stopping_round should be an integer. Got '{type(stopping_rounds).__name__}'"
        )
    return stopping_rounds > 0


def _is_train_set(dataset_name: str, env: CallbackEnv) -> bool:
    return dataset_name == getattr(env.model, "_train_data_name", TRAIN_DATA_NAME)


class _EarlyStoppingCallback:
    def __init__(
        self,
        stopping_rounds: int,
        first_metric_only: bool = False,
        verbose: bool = True,
        min_delta: float | list[float] = 0.0,
    ) -> None:
        # LightGBM: a non-positive patience disables early stopping, not an error
        self.enabled = should_enable_early_stopping(stopping_rounds)
        self.order = 30
        self.before_iteration = False
        self.stopping_rounds = stopping_rounds
        self.first_metric_only = first_metric_only
        self.verbose = verbose
        self.min_delta = min_delta

    def _deltas(self, results: list[tuple[Any, ...]]) -> list[float]:
        """One min_delta per entry; a list gives one per metric (LightGBM 4)."""
        n_metrics = len({r[1] for r in results})
        n_datasets = len(results) // n_metrics
        if not isinstance(self.min_delta, list):
            if self.min_delta < 0:
                raise ValueError(
                    f"Early stopping min_delta must be non-negative, got {self.min_delta}"
                )
            return [self.min_delta] * len(results)
        if any(t < 0 for t in self.min_delta):
            raise ValueError(
                f"Values for early stopping min_delta must be non-negative, got {self.min_delta}"
            )
        if len(self.min_delta) == 0:
            return [0.0] * len(results)
        if len(self.min_delta) == 1:
            return self.min_delta * len(results)
        if len(self.min_delta) != n_metrics:
            raise ValueError(
                f"Must provide a single value for min_delta or as many as metrics "
                f"({n_metrics}), got {len(self.min_delta)}"
            )
        return self.min_delta * n_datasets

    def _init(self, env: CallbackEnv) -> None:
        results = env.evaluation_result_list
        if not results:
            raise ValueError(
                "For early stopping, at least one dataset and eval metric is required for evaluation"
            )
        if all(_is_train_set(r[0], env) for r in results):
            # As LightGBM: the training data alone does not stop training.
            self.enabled = False
            log_warning("Only training set found, disabling early stopping.")
            return
        boosting = (
            {env.params.get(k) for k in ("boosting", "boosting_type", "boost")}
            if env.params
            else set()
        )
        if (
            "dart" in boosting
        ):  # train refuses dart; an env built by hand may say it (LightGBM's rule)
            self.enabled = False
            log_warning("Early stopping is not available in dart mode")
            return
        if self.verbose:
            _log(
                f"Training until validation scores don't improve for {self.stopping_rounds} rounds"
            )
        self.first_metric = results[0][1]
        # the pairs that can stop training, in order (the first one is reported
        # when training ends without an early stop)
        self._tracked = [
            i
            for i, r in enumerate(results)
            if not _is_train_set(r[0], env)
            and (not self.first_metric_only or r[1] == self.first_metric)
        ]
        self.best_score: list[float] = []
        self.best_iter: list[int] = []
        self.best_score_list: list[Any] = []  # each pair's best iteration's results
        self.cmp_op: list[Callable[[float, float], bool]] = []
        # (strict=False: a metric name given twice leaves fewer deltas, as before)
        for item, delta in zip(results, self._deltas(results), strict=False):
            self.best_iter.append(0)
            self.best_score_list.append(None)
            if item[3]:
                self.best_score.append(float("-inf"))
                self.cmp_op.append(partial(lambda cur, best, d: cur > best + d, d=delta))
            else:
                self.best_score.append(float("inf"))
                self.cmp_op.append(partial(lambda cur, best, d: cur < best - d, d=delta))

    def _stop(self, i: int, message: str, metric_name: str) -> None:
        if self.verbose:
            best = "\t".join(_format_eval_result(x) for x in self.best_score_list[i])
            _log(f"{message}\n[{self.best_iter[i] + 1}]\t{best}")
            if self.first_metric_only:
                _log(f"Evaluated only: {metric_name}")
        raise EarlyStopException(self.best_iter[i], self.best_score_list[i])

    def __call__(self, env: CallbackEnv) -> None:
        if not self.enabled:
            return  # disabled by stopping_rounds <= 0, or at the first iteration
        if env.iteration == env.begin_iteration:
            self._init(env)
        if not self.enabled:
            return
        results = env.evaluation_result_list
        first_time = env.iteration == env.begin_iteration
        for i, (data_name, metric_name, value, *_) in enumerate(results):
            if first_time or self.cmp_op[i](value, self.best_score[i]):
                self.best_score[i] = value
                self.best_iter[i] = env.iteration
                self.best_score_list[i] = results
            if self.first_metric_only and metric_name != self.first_metric:
                continue
            if _is_train_set(data_name, env):
                continue
            if env.iteration - self.best_iter[i] >= self.stopping_rounds:
                self._stop(i, "Early stopping, best iteration is:", metric_name)
            # As LightGBM: the last iteration reports the first tracked metric's best.
            if env.iteration == env.end_iteration - 1:
                self._stop(i, "Did not meet early stopping. Best iteration is:", metric_name)


def early_stopping(
    stopping_rounds: int,
    first_metric_only: bool = False,
    verbose: bool = True,
    min_delta: float | list[float] = 0.0,
) -> _Callback:
    """Stop training when a validation metric stops improving (LightGBM 4).

    Every (dataset, metric) pair except the training data is tracked; training
    stops as soon as ANY tracked pair has not improved by more than
    ``min_delta`` for ``stopping_rounds`` iterations, raising
    :class:`EarlyStopException` with that pair's best iteration and the
    results of that iteration. At the last iteration it raises too (with the
    first tracked pair's best), so the loop always learns ``best_iteration``.
    Does nothing in dart mode.

    Parameters
    ----------
    stopping_rounds : int
        Patience, > 0. (LightGBM silently disables early stopping for
        values <= 0; here it is an error.)
    first_metric_only : bool, default=False
        Track only the first metric name of ``evaluation_result_list``.
    verbose : bool, default=True
        Log the start and the stopping point.
    min_delta : float or list of float, default=0.0
        Minimum improvement; a list gives one value per metric.

    Returns
    -------
    callable

    Raises
    ------
    TypeError
        If ``stopping_rounds`` is not an int.
    ValueError
        If ``stopping_rounds <= 0``, if ``min_delta`` is invalid, or (at the
        first iteration) if there is no validation result to track.
    """
    return _EarlyStoppingCallback(stopping_rounds, first_metric_only, verbose, min_delta)


class _CheckpointCallback:
    def __init__(self, path: str | os.PathLike, freq: int) -> None:
        if isinstance(freq, bool) or not isinstance(freq, int):
            raise TypeError(f"freq should be an integer, got {type(freq).__name__}")
        # After the evaluation callbacks, before early stopping (order 30), so
        # the iteration at which training stops is saved too.
        self.order = 25
        self.before_iteration = False
        self.path = os.fspath(path)
        self.freq = freq

    def writes_at(self, iteration: int) -> bool:
        """Whether rank 0 writes a snapshot after ``iteration`` (the other ranks
        then wait for it with a slow phase's allowance)."""
        return self.freq > 0 and (iteration + 1) % self.freq == 0

    def __call__(self, env: CallbackEnv) -> None:
        done = env.iteration + 1  # iterations in the model, init model's included
        if self.writes_at(env.iteration) and logging_rank() == 0:
            # Every rank holds the same model (distributed training); one writes it.
            env.model.save_model(
                f"{self.path}.snapshot_iter_{done}", num_iteration=-1, format="json"
            )


def checkpoint(path: str | os.PathLike, freq: int) -> _Callback:
    """Save the model every ``freq`` iterations, as LightGBM's CLI snapshots.

    The file ``f"{path}.snapshot_iter_{iteration + 1}"`` holds the first
    ``iteration + 1`` iterations (init model included), written atomically
    (temp file + rename, so a crash never leaves a half-written snapshot) and,
    in distributed training, by rank 0 only.  Resume with
    ``dgbdt.train(params, train_set, num_boost_round=N - done, init_model=file)``:
    the result equals an uninterrupted N-iteration training.

    Parameters
    ----------
    path : str or path-like
        Prefix of the snapshot files (LightGBM: ``output_model``).
    freq : int
        Save when ``(iteration + 1) % freq == 0``; ``freq <= 0`` disables
        (LightGBM's ``snapshot_freq=-1``).

    Returns
    -------
    callable
    """
    return _CheckpointCallback(path, freq)


class _LogProgressCallback:
    def __init__(self, period: int = 1) -> None:
        self.order = 15
        self.before_iteration = False
        self.period = period
        self.start = time.perf_counter()  # reset by train(); this serves other loops

    def begin_training(self, env: CallbackEnv) -> None:
        self.start = time.perf_counter()

    def __call__(self, env: CallbackEnv) -> None:
        done = env.iteration + 1
        if self.period <= 0 or done % self.period:
            return
        per_iter = (time.perf_counter() - self.start) / (done - env.begin_iteration)
        left = per_iter * (env.end_iteration - done)
        _log(f"[{done}/{env.end_iteration}] {per_iter:.3g} s/iter, {left:.1f} s left")


def log_progress(period: int = 1) -> _Callback:
    """Log progress every ``period`` iterations: ``[40/100] 0.213 s/iter, 12.8 s left``.

    Iterations are counted as in the model (a resumed run starts at the init
    model's count); seconds per iteration are the mean over this run's
    iterations (wall clock since training began, JIT compilation included),
    and the time left assumes the remaining iterations cost the same.

    Parameters
    ----------
    period : int, default=1
        Log when ``(iteration + 1) % period == 0``; ``period <= 0`` disables.

    Returns
    -------
    callable
    """
    return _LogProgressCallback(period)


# --------------------------------------------------------------------------- #
# reset_parameter
# --------------------------------------------------------------------------- #
#: What reset_parameter may change that the loop reads as it goes: the
#: learning rate (each tree's shrinkage; GOSS's unsampled first rounds), and
#: per-process settings (threads, logging, the collectives' deadline).
LIVE_KEYS = (
    "learning_rate",
    "verbosity",
    "deterministic",
    "num_threads",
    "time_out",
    "num_machines",
    "check_consistency",
)
#: What reset_parameter may change that the loop rebuilds its tree learner,
#: grower (constraints, histogram kind), quantizer and sampler for.
REBUILT_KEYS = (
    "num_leaves",
    "max_depth",
    "min_data_in_leaf",
    "min_sum_hessian_in_leaf",
    "bagging_fraction",
    "bagging_freq",
    "pos_bagging_fraction",
    "neg_bagging_fraction",
    "bagging_seed",
    "data_sample_strategy",
    "top_rate",
    "other_rate",
    "feature_fraction",
    "feature_fraction_seed",
    "feature_fraction_bynode",
    "extra_trees",
    "extra_seed",
    "path_smooth",
    "monotone_constraints",
    "monotone_constraints_method",
    "monotone_penalty",
    "interaction_constraints",
    "lambda_l1",
    "lambda_l2",
    "min_gain_to_split",
    "max_cat_to_onehot",
    "max_cat_threshold",
    "cat_smooth",
    "cat_l2",
    "cat_high_cardinality_rows",
    "min_data_per_group",
    "max_delta_step",
    "top_k",
    "voting_rule",
    "comm_pipeline",
    "use_quantized_grad",
    "num_grad_quant_bins",
    "quant_train_renew_leaf",
    "stochastic_rounding",
)
#: Why the other parameters cannot change once training runs (the default:
#: the loop set it up when training started).
_FIXED_REASONS = {
    "num_iterations": "the number of rounds is set when training starts",
    "boosting": "the boosting algorithm is set when training starts",
    "tree_learner": "the tree learner and its communicator are set up when training starts",
    "bagging_by_query": "the queries are read when training starts",
    "num_class": "the objective and the model's outputs are set up when training starts",
    "objective": "the objective is set up when training starts (the model records it)",
    "metric": "the metrics are set up when training starts",
    "early_stopping_round": "early stopping is set up when training starts",
}
_OBJECTIVE_KEYS = (
    "is_unbalance",
    "scale_pos_weight",
    "sigmoid",
    "alpha",
    "fair_c",
    "poisson_max_delta_step",
    "tweedie_variance_power",
    "objective_seed",
    "lambdarank_truncation_level",
    "lambdarank_norm",
    "label_gain",
    "lambdarank_position_bias_regularization",
    "reg_sqrt",
    "boost_from_average",
)
_EVALUATION_KEYS = (
    "auc_mu_weights",
    "multi_error_top_k",
    "eval_at",
    "metric_freq",
    "is_provide_training_metric",
    "early_stopping_min_delta",
    "first_metric_only",
)
#: The model's record of an unfinished schedule (Booster.config, removed when
#: training ends, so only checkpoint snapshots carry it): ``[first, end]``, the
#: global iterations the schedule's rounds 0 ... end - first - 1 are.
SCHEDULE_KEY = "reset_parameter_rounds"


def _dataset_keys() -> tuple[str, ...]:
    # the binned layout is chosen when the Dataset is constructed too
    return (*BINNING_KEYS, "categorical_feature", "force_col_wise", "force_row_wise")


def _refusal(name: str) -> ValueError:
    """The ValueError for changing ``name`` mid-training (LightGBM's wording)."""
    if name in _dataset_keys():
        return ValueError(
            f"Cannot change {name} after constructed Dataset (reset_parameter): it is a "
            "binning parameter, used when the training data is binned; give it to the "
            "Dataset or to train() instead"
        )
    reason = _FIXED_REASONS.get(name, "the loop sets it up when training starts")
    if name in _OBJECTIVE_KEYS:
        reason = "a parameter of the objective, set up when training starts"
    elif name in _EVALUATION_KEYS:
        reason = "a parameter of evaluation or early stopping, set up when training starts"
    return ValueError(f"Cannot change {name} during training (reset_parameter): {reason}")


def _canonical(key: str) -> str:
    """A parameter name's canonical name; a LightGBM-only key as given (it goes to
    resolve_params, which warns or refuses); ValueError for an unknown one."""
    if isinstance(key, str) and key.strip() not in ALIASES and lightgbm_canonical(key):
        return key.strip()
    return canonical_name(key)


def resolve_reset(
    cfg: dict[str, Any], values: dict[str, Any], objective: Objective | None = None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The parameters that ``values`` (parameter name or alias -> new value)
    change in the resolved params ``cfg``: ``(changed, scheduled)``, both
    dicts of canonical name -> resolved value; ``scheduled`` holds every
    parameter ``values`` names.  Values are validated by
    dgbdt.params.table.resolve_params with the rest of ``cfg`` (and by the
    objective's own checks); a parameter that cannot change mid-training
    raises ValueError naming it."""
    given = {_canonical(key): value for key, value in values.items()}
    # a resolved metric=[] is "no metric"; given as [] it would mean the default
    new = resolve_params({**cfg, "metric": cfg["metric"] or "None", **given})
    changed = {k: v for k, v in new.items() if not _same(v, cfg.get(k))}
    for name in changed:
        if name not in LIVE_KEYS and name not in REBUILT_KEYS:
            raise _refusal(name)
    if objective is not None and "monotone_constraints" in changed:
        objective.check_params(new)
    return changed, {k: new.get(k, v) for k, v in given.items()}


def _same(a: object, b: object) -> bool:
    return type(a) is type(b) and a == b if not callable(a) else a is b


class _ResetParameterCallback:
    def __init__(self, **kwargs: list | Callable) -> None:
        self.order = 10
        self.before_iteration = True
        names: dict[str, str] = {}
        for key, value in kwargs.items():
            if not isinstance(value, list) and not callable(value):
                raise ValueError(
                    "Only list and callable values are supported "
                    "as a mapping from boosting round index to new parameter value."
                )
            name = _canonical(key)
            if name in names:
                raise ValueError(
                    f"reset_parameter got both {names[name]!r} and {key!r}, which set "
                    f"parameter {name!r}: give one of them"
                )
            names[name] = key
        self.kwargs = kwargs
        #: the canonical names of the parameters this callback changes
        self.names = tuple(names)

    def values_at(self, round_index: int, n_rounds: int, resumed: bool = False) -> dict[str, Any]:
        """The values (by the names given) of round ``round_index`` of a schedule
        of ``n_rounds`` rounds; ``resumed``: the schedule is one an interrupted
        training began (its lists cover that training's rounds)."""
        out = {}
        for key, value in self.kwargs.items():
            if isinstance(value, list):
                if len(value) != n_rounds:
                    note = (
                        f" (resuming a checkpoint of an interrupted training: its schedule "
                        f"has {n_rounds} rounds)"
                        if resumed
                        else ""
                    )
                    raise ValueError(
                        f"Length of list {key!r} has to be equal to 'num_boost_round'.{note}"
                    )
                out[key] = value[round_index]
            else:
                out[key] = value(round_index)
        return out

    def __call__(self, env: CallbackEnv) -> None:
        # dgbdt.train applies the values itself (Boosting._reset_parameters); this is
        # LightGBM's step for other loops: the values that differ into env.params.
        values = self.values_at(
            env.iteration - env.begin_iteration, env.end_iteration - env.begin_iteration
        )
        env.params.update({k: v for k, v in values.items() if v != env.params.get(k)})


def split_resets(
    callbacks: Iterable[Any],
) -> tuple[list[_ResetParameterCallback], list[Any]]:
    """(reset_parameter callbacks, the others) of a list of callbacks, in order."""
    resets = [c for c in callbacks if isinstance(c, _ResetParameterCallback)]
    return resets, [c for c in callbacks if not isinstance(c, _ResetParameterCallback)]


def interrupted_schedule(model: Model | None) -> tuple[int, int] | None:
    """``(first, end)`` of the schedule an interrupted training was running when
    it wrote ``model`` (a checkpoint snapshot; see SCHEDULE_KEY), or None."""
    if model is None:
        return None
    rounds = model.config.get(SCHEDULE_KEY)
    if (
        not isinstance(rounds, (list, tuple))
        or len(rounds) != 2
        or not all(isinstance(r, int) and not isinstance(r, bool) for r in rounds)
    ):
        return None
    first, end = rounds
    return (first, end) if 0 <= first <= model.current_iteration() < end else None


def reset_parameter(**kwargs: list | Callable) -> _Callback:
    """Change parameters before each boosting round (LightGBM's ``reset_parameter``).

    Each keyword is a parameter name (or alias) with a list, one value per
    round (``lst[round]``; its length must be the number of rounds), or a
    function of the round, ``func(round)`` (e.g. a learning-rate decay).  A
    value takes effect from its round on (round 0 uses ``lst[0]``), is
    validated like train()'s params, and is recorded in the model's params (a
    saved model holds the last values, as LightGBM's model text; with a
    learning-rate schedule every tree records its own ``shrinkage``).

    **Rounds** count from this call's first iteration: with ``init_model`` the
    schedule starts again at round 0 (``iteration - begin_iteration``, as
    LightGBM).  Resuming a :func:`checkpoint` snapshot of an interrupted
    training continues its schedule instead (pass the same callback and
    ``num_boost_round = N - done``; lists keep the length N): the model equals
    the uninterrupted one.  A snapshot records its schedule in the model's
    params (``reset_parameter_rounds``), a finished model does not; delete
    that key from ``Booster.config`` to restart the schedule instead.

    **What can change**: the learning rate; tree shape and split search
    (``num_leaves``, ``max_depth``, ``min_data_in_leaf``,
    ``min_sum_hessian_in_leaf``, ``lambda_l1``/``l2``, ``min_gain_to_split``,
    ``max_delta_step``, ``path_smooth``, categorical splits, constraints,
    ``extra_trees``, ``feature_fraction_bynode``, voting's ``top_k`` and
    ``voting_rule``, quantized training); sampling (bagging and its balanced
    fractions and seed, GOSS, ``feature_fraction``): a new bagging fraction
    or frequency draws the round's bag again, the one of iteration ``it - it
    % bagging_freq`` at the new fraction, as a resumed run draws it (LightGBM
    keeps the old bag until its next draw); threads, verbosity, ``time_out``.
    Refused with a ValueError naming the parameter: binning parameters
    (``Cannot change max_bin after constructed Dataset``, as LightGBM), the
    objective and its parameters, ``num_class``, metrics, early stopping,
    ``boosting``, ``tree_learner``, ``num_iterations``, ``bagging_by_query``.
    Features the Dataset filtered out (``feature_pre_filter``) stay out.

    **Distributed training**: each round the values are agreed over the ranks
    (one 8-byte digest per rank); values that differ (a function of the rank)
    end training on every rank with one ValueError naming the parameter, the
    iteration and the ranks.  Every rank must pass the callback.

    Parameters
    ----------
    **kwargs : list or callable
        ``parameter=[value per round]`` or ``parameter=func(round) -> value``.

    Returns
    -------
    callable
        Runs before each iteration (``before_iteration = True``, ``order = 10``).

    Raises
    ------
    ValueError
        If a value is neither a list nor callable, a name is unknown, or two
        names set one parameter; in training, if a list's length is not the
        number of rounds, a value is invalid, or a parameter cannot change.
    """
    return _ResetParameterCallback(**kwargs)


def scheduled_parameters(callbacks: Iterable[Any] | None) -> list[list[str]]:
    """The parameter names each reset_parameter callback among ``callbacks``
    schedules, in order (what every rank's training must agree on)."""
    return [list(c.names) for c in callbacks or () if isinstance(c, _ResetParameterCallback)]
