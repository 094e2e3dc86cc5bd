"""LightGBM-compatible training callbacks.

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

All printing goes through :func:`_log`, so a distributed runner can make only
rank 0 print by replacing that one function.
"""

from __future__ import annotations

import os
import time
from collections import namedtuple
from functools import partial
from typing import Any, Callable, Dict, List, Tuple, Union

__all__ = [
    "CallbackEnv",
    "EarlyStopException",
    "log_evaluation",
    "record_evaluation",
    "early_stopping",
    "checkpoint",
    "log_progress",
]

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

    def __init__(self, best_iteration: int, best_score: List[Tuple[Any, ...]]) -> None:
        super().__init__(best_iteration, best_score)
        self.best_iteration = best_iteration
        self.best_score = best_score


_LOGGING_RANK = 0


def set_logging_rank(rank: int) -> None:
    """In distributed training only rank 0 prints (the engine sets this)."""
    global _LOGGING_RANK
    _LOGGING_RANK = rank


def logging_rank() -> int:
    """The rank set by :func:`set_logging_rank`: callbacks that write files do
    so only where it is 0, as only rank 0 prints."""
    return _LOGGING_RANK


def _log(msg: str) -> None:
    """Print one message to stdout: the only place callbacks print."""
    if _LOGGING_RANK == 0:
        print(msg, flush=True)


def _format_eval_result(item, show_stdv=True) -> str:
    """``"valid_0's l2: 0.123456"``, with ``" + stdv"`` for 5-tuples (cv)."""
    out = f"{item[0]}'s {item[1]}: {item[2]:g}"
    if show_stdv and len(item) == 5 and item[4] is not None:
        out += f" + {item[4]:g}"
    return out


class _LogEvaluationCallback:
    def __init__(self, period=1, show_stdv=True, show_comm=False):
        self.order = 10
        self.before_iteration = False
        self.period = period
        self.show_stdv = show_stdv
        self.show_comm = show_comm

    def __call__(self, env):
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
    def __init__(self, eval_result):
        if not isinstance(eval_result, dict):
            raise TypeError(f"eval_result should be a dictionary, got {type(eval_result).__name__}")
        self.order = 20
        self.before_iteration = False
        self.eval_result = eval_result

    @staticmethod
    def _keys(item):
        if len(item) == 5:  # cv(): mean and standard deviation
            return [(f"{item[1]}-mean", item[2]), (f"{item[1]}-stdv", item[4])]
        return [(item[1], item[2])]

    def __call__(self, env):
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


def record_evaluation(eval_result: Dict[str, Dict[str, List[Any]]]) -> _Callback:
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


def _is_train_set(dataset_name, env) -> bool:
    return dataset_name == getattr(env.model, "_train_data_name", TRAIN_DATA_NAME)


class _EarlyStoppingCallback:
    def __init__(self, stopping_rounds, first_metric_only=False, verbose=True, min_delta=0.0):
        if isinstance(stopping_rounds, bool) or not isinstance(stopping_rounds, int):
            raise TypeError(
                f"stopping_rounds should be an integer, got {type(stopping_rounds).__name__}"
            )
        if stopping_rounds <= 0:
            raise ValueError(f"stopping_rounds should be greater than zero, got {stopping_rounds}")
        self.order = 30
        self.before_iteration = False
        self.stopping_rounds = stopping_rounds
        self.first_metric_only = first_metric_only
        self.verbose = verbose
        self.min_delta = min_delta
        self.enabled = True

    def _deltas(self, results):
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

    def _init(self, env):
        results = env.evaluation_result_list
        if not results:
            raise ValueError(
                "For early stopping, at least one dataset and eval metric is required for evaluation"
            )
        if all(_is_train_set(r[0], env) for r in results):
            # As LightGBM: the training data alone does not stop training.
            self.enabled = False
            _log("[Warning] Only training set found, disabling early stopping.")
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
            _log("[Warning] Early stopping is not available in dart mode")
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
        self.best_score = []
        self.best_iter = []
        self.best_score_list = []
        self.cmp_op = []
        for item, delta in zip(results, self._deltas(results), strict=True):
            self.best_iter.append(0)
            self.best_score_list.append(None)
            if item[3]:
                self.best_score.append(float("-inf"))
                self.cmp_op.append(partial(lambda cur, best, d: cur > best + d, d=delta))
            else:
                self.best_score.append(float("inf"))
                self.cmp_op.append(partial(lambda cur, best, d: cur < best - d, d=delta))

    def best_so_far(self, end_iteration):
        """(best iteration, its results) that this callback would report if the
        metrics stayed as they are until ``end_iteration``, or None.  Training
        that ends for another reason (nothing left to split) thus learns its best
        iteration as LightGBM's loop, which keeps evaluating frozen metrics, does:
        the first tracked pair with the earliest best iteration stops it, unless
        the last iteration comes first (then the first tracked pair's best)."""
        if not self.enabled or not getattr(self, "_tracked", None):
            return None
        earliest = min(self.best_iter[i] for i in self._tracked)
        if earliest + self.stopping_rounds < end_iteration - 1:
            i = next(i for i in self._tracked if self.best_iter[i] == earliest)
        else:
            i = self._tracked[0]
        return self.best_iter[i], self.best_score_list[i]

    def _stop(self, i, message, metric_name):
        if self.verbose:
            best = "\t".join(_format_eval_result(x) for x in self.best_score_list[i])
            _log(f"{message}\n[{self.best_iter[i] + 1}]\t{best}")
            if self.first_metric_only:
                _log(f"Evaluated only: {metric_name}")
        raise EarlyStopException(self.best_iter[i], self.best_score_list[i])

    def __call__(self, env):
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
    min_delta: Union[float, List[float]] = 0.0,
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
    def __init__(self, path, freq):
        if isinstance(freq, bool) or not isinstance(freq, int):
            raise TypeError(f"freq should be an integer, got {type(freq).__name__}")
        # After the evaluation callbacks, before early stopping (order 30), so
        # the iteration at which training stops is saved too.
        self.order = 25
        self.before_iteration = False
        self.path = os.fspath(path)
        self.freq = freq

    def writes_at(self, iteration):
        """Whether rank 0 writes a snapshot after ``iteration`` (the other ranks
        then wait for it with a slow phase's allowance)."""
        return self.freq > 0 and (iteration + 1) % self.freq == 0

    def __call__(self, env):
        done = env.iteration + 1  # iterations in the model, init model's included
        if self.writes_at(env.iteration) and logging_rank() == 0:
            # Every rank holds the same model (distributed training); one writes it.
            env.model.save_model(f"{self.path}.snapshot_iter_{done}", num_iteration=-1)


def checkpoint(path: Union[str, os.PathLike], freq: int) -> _Callback:
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
    def __init__(self, period=1):
        self.order = 15
        self.before_iteration = False
        self.period = period
        self.start = time.perf_counter()  # reset by train(); this serves other loops

    def begin_training(self, env):
        self.start = time.perf_counter()

    def __call__(self, env):
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
