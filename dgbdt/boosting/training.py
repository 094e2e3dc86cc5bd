"""Setup and teardown of a training: the params checked and resolved, the
communicator made, the training set constructed, the empty model and the init
model, the boosting loop (dgbdt.boosting.loop) ready to run; the training's threads
and logging rank while it runs, restored afterwards.  An error on one rank
ends every rank's training.

A training Booster (LightGBM's ``Booster(params, train_set)``, or
``train(..., keep_training_booster=True)``) keeps the loop: ``training_booster``
sets one up without running it, and ``training_step`` runs each of its later
updates, rollbacks and evaluations with the training's threads and rank.
"""

from __future__ import annotations

import contextlib
import numbers
import os
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numba
import numpy as np

from ..data.dataset import Dataset
from ..distributed.comm import (
    AgreedError,
    CommStats,
    SerialComm,
    abort_job,
    abort_on_exception,
    launched_size,
    world_comm,
)
from ..log import (
    log_lightgbm_info,
    log_lightgbm_warning,
    log_warning,
    logging_rank,
    set_logging_rank,
)
from ..models.model import Model
from ..objective.objectives import CustomObjective, make_objective
from ..objective.ranking import Queries
from ..params.table import ALIASES, PARAMS, threads_for
from ..treelearner.learners.feature_blocks import assemble_global_mapper
from .callbacks import should_enable_early_stopping
from .consistency import agree_on_inputs, check_same_rows
from .loop import Boosting, TrainingData, TrainingRun

if TYPE_CHECKING:
    from .consistency import Feval, InitModel


def training_booster(
    params: dict[str, Any],
    cfg: dict[str, Any],
    train_set: Dataset,
    *,
    model_class: type[Model],
    init_model: str | os.PathLike | Model | None = None,
    callbacks: Sequence[Callable] | None = None,
) -> Model:
    """A Booster without trees that keeps its training state (LightGBM's
    ``Booster(params, train_set)``): the training set constructed, the
    starting scores, the loop ready; :meth:`Booster.update` trains one
    iteration at a time; ``params``: the call's params (:func:`call_params`),
    ``cfg`` the same resolved; ``model_class``: the model's class (dgbdt.Booster).
    ``init_model``: a model it continues (what LightGBM
    gives through the Dataset's predictor); ``callbacks``: only
    ``reset_parameter``'s are used (each update applies its round's values)."""
    run = start_run(params, cfg, train_set)
    init_model = from_lightgbm_object(init_model)
    with training_context(run.cfg, run.comm):
        agree_on_inputs(run, [], [], None, init_model, callbacks)
        loop = setup_loop(run, [], [], None, init_model, callbacks, model_class)
    loop.booster._loop = loop  # type: ignore[attr-defined]  # model_class keeps it (Booster)
    return loop.booster


def training_step(loop: Boosting, step: Callable[[], Any]) -> Any:
    """``step()`` (an update, a rollback, an evaluation of a training Booster's
    ``loop``) with the training's threads and logging rank; an error on one of
    several ranks ends every rank, as in train()."""
    with training_context(loop.cfg, loop.comm):
        return step()


@contextlib.contextmanager
def training_context(cfg: dict[str, Any], comm: SerialComm) -> Iterator[None]:
    """The training's Numba threads and logging rank while the block runs, the
    previous ones restored afterwards; an exception ends every rank (they may
    be inside collectives) unless every rank raises it alike (AgreedError)."""
    old_threads, old_rank = numba.get_num_threads(), logging_rank()
    numba.set_num_threads(threads_for(cfg, comm.local_size))
    set_logging_rank(comm.rank)
    try:
        yield
    except BaseException as exc:
        # BaseException: sys.exit() or Ctrl-C on one rank never reaches sys.excepthook.
        if comm.size > 1 and not isinstance(exc, AgreedError):
            abort_on_exception(comm, exc)
        raise
    finally:
        numba.set_num_threads(old_threads)
        set_logging_rank(old_rank)


def call_params(params: Mapping[str, Any] | None, num_boost_round: int) -> dict[str, Any]:
    """A training call's params, as LightGBM's train() leaves them: a copy, with
    ``objective``, ``num_iterations`` (``num_boost_round`` unless the params give
    it) and ``early_stopping_round`` under their main names, their aliases
    removed (the main name wins, else the first alias in LightGBM's order), a
    None value dropped; TypeError unless a dict (or
    None), or when ``early_stopping_round`` is not an integer (LightGBM's text)."""
    if params is not None and not isinstance(params, Mapping):
        raise TypeError(f"params must be a dict, got {type(params).__name__}")
    params = dict(params or {})
    given = {k: v for k, v in params.items() if ALIASES.get(k) == "num_iterations"}
    params = choose_param_value(params, "objective")
    params = choose_param_value(params, "num_iterations", num_boost_round)
    if any(v != params["num_iterations"] for v in given.values()):
        shown = ", ".join(f"{k}={v}" for k, v in given.items())
        log_warning(
            f"Found conflicting values for num_iterations provided via 'params': {shown}. "
            f"LightGBM will perform up to {params['num_iterations']} boosting rounds. To be "
            "confident in the maximum number of boosting rounds LightGBM will perform and "
            "to suppress this warning, modify 'params' so that only one of those is present."
        )
    params = choose_param_value(params, "early_stopping_round")
    patience = params.get("early_stopping_round")
    # integer text (a config file's, the CLI's) is the table's to read
    if patience is not None and not (
        isinstance(patience, str) and patience.strip().lstrip("+-").isdigit()
    ):
        should_enable_early_stopping(patience)
    return params


def check_rounds(params: Mapping[str, Any]) -> None:
    """train() and cv() need at least one boosting round (LightGBM's ValueError)."""
    n = params["num_iterations"]
    if isinstance(n, numbers.Real) and not isinstance(n, bool) and n <= 0:
        raise ValueError(f"Number of boosting rounds must be greater than 0. Got {n}.")


def choose_param_value(params: dict[str, Any], name: str, default: Any = None) -> dict[str, Any]:
    """``params`` with ``name`` given once, under its main name (LightGBM's
    _choose_param_value): the main name's value, else the first alias's in the
    table's (LightGBM's) order, else ``default``; the aliases removed.  A None
    value means "not given" (no key)."""
    spellings = [name, *PARAMS[name].aliases]
    value = next((params[k] for k in spellings if k in params), None)
    value = default if value is None else value
    out = {k: v for k, v in params.items() if k not in spellings}
    if value is not None:
        out[name] = value
    return out


@contextlib.contextmanager
def ending_every_rank_on_error(params: object) -> Iterator[None]:
    """Before any collective, an error ends a distributed job's every rank (the
    others would wait for this one until their deadline)."""
    try:
        yield
    except BaseException as exc:
        if _asks_for_ranks(params):
            abort_job(exc)
        raise


def start_run(params: dict[str, Any], cfg: dict[str, Any], train_set: Dataset) -> TrainingRun:
    """The TrainingRun of a call (``params`` from :func:`call_params`, ``cfg``
    the same resolved by the entry point): the objective made, the communicator
    made (its statistics this training's)."""
    with ending_every_rank_on_error(params):
        if not isinstance(train_set, Dataset):
            raise TypeError(f"train_set must be a dgbdt.Dataset, got {type(train_set).__name__}")
        objective = make_objective(cfg)
        k_out = objective.num_model_per_iteration if objective else cfg["num_class"]
        comm = make_comm(cfg)
    custom_objective = cfg["objective"] if callable(cfg["objective"]) else None
    comm.stats = CommStats()  # this training's communication only
    _warn_depth_without_leaves(params, cfg)
    if cfg["num_machines"] > 1 and cfg["num_machines"] != comm.size and comm.rank == 0:
        warnings.warn(
            f"num_machines={cfg['num_machines']} but {comm.size} process(es) run; "
            "dgbdt uses the processes mpiexec started",
            stacklevel=3,
        )
    return TrainingRun(cfg, params, train_set, objective, custom_objective, k_out, comm)


def _warn_depth_without_leaves(params: Mapping[str, Any], cfg: Mapping[str, Any]) -> None:
    """LightGBM's warning (config.cpp) when max_depth allows more leaves than
    the default num_leaves that the params leave in place."""
    depth = cfg["max_depth"]
    leaves_given = any(ALIASES.get(k) == "num_leaves" and v is not None for k, v in params.items())
    if depth > 0 and not leaves_given and 2**depth > cfg["num_leaves"]:
        log_lightgbm_warning(
            f"Provided parameters constrain tree depth (max_depth={depth}) without explicitly "
            "setting 'num_leaves'. This can lead to underfitting. To resolve this warning, pass "
            f"'num_leaves' (<={2**depth}) in params. Alternatively, pass (max_depth=-1) and just "
            "use 'num_leaves' to constrain model complexity.",
            cfg["verbosity"],
        )


def _asks_for_ranks(params: object) -> bool:
    """Whether raw (maybe invalid) params ask for a distributed tree learner
    under an MPI launcher of several ranks."""
    if launched_size() <= 1 or not isinstance(params, Mapping):
        return False
    # anything but "serial" (a typo included) asks for ranks
    choices = PARAMS["tree_learner"].choices
    assert choices is not None  # tree_learner is a choice
    return any(
        ALIASES.get(str(k).strip()) == "tree_learner"
        and choices.get(str(v).strip().lower()) != "serial"
        for k, v in params.items()
    )


def make_comm(cfg: dict[str, Any]) -> SerialComm:
    """SerialComm for tree_learner=serial (no collectives: per-rank serial jobs
    are legitimate); otherwise MPI's world (initialises MPI) with cfg's time_out."""
    if cfg["tree_learner"] == "serial":
        return SerialComm()
    try:
        return world_comm(cfg["time_out"])
    except ImportError as exc:
        raise ImportError(
            f"tree_learner={cfg['tree_learner']!r} needs mpi4py and an MPI library: "
            "pip install 'dgbdt[mpi]'"
        ) from exc


def setup_loop(
    run: TrainingRun,
    valid_sets: Sequence[Dataset] | None,
    valid_names: Sequence[str] | None,
    feval: Feval,
    init_model: InitModel,
    callbacks: Sequence[Callable] | None,
    model_class: type[Model],
) -> Boosting:
    """The training data, the empty model (a ``model_class``) and the init
    model: the boosting loop, ready to run."""
    init_booster = None if init_model is None else _as_booster(init_model)
    # the init model's trees were coded by its category lists: so is the data
    lists = None if init_booster is None else init_booster.pandas_categorical
    data = _training_data(run, keep_raw=init_model is not None, category_lists=lists)
    if run.objective:
        run.objective.set_label_weights(data.label, data.weight, run.row_comm)
    else:  # LightGBM's Booster, creating no objective function
        log_lightgbm_info("Using self-defined objective function", run.cfg["verbosity"])
    data.queries = _training_queries(run, data)
    booster = _new_booster(run, data, model_class)
    if init_booster is not None:
        _check_init_model(init_booster, booster, run.k_out)
    return Boosting(
        run,
        data,
        booster,
        init_booster=init_booster,
        valid_sets=valid_sets,
        valid_names=valid_names,
        feval=feval,
        callbacks=callbacks,
    )


def _training_data(
    run: TrainingRun, keep_raw: bool, category_lists: list[Any] | None = None
) -> TrainingData:
    """The training set constructed (binned over every rank's rows when rows are
    sharded) and the training's view of it (TrainingData); with ``keep_raw`` its
    raw data survives binning, for an init model's predictions."""
    cfg, train_set, comm, row_comm = run.cfg, run.train_set, run.comm, run.row_comm
    weight, init_score = _shared_weights(run)
    if cfg["tree_learner"] == "feature" and comm.size > 1:
        check_same_rows(comm, train_set)
    # The Dataset's own params, overridden by the ones given to train
    # (as in LightGBM): the raw params, not cfg, whose defaults would win.
    with comm.slow_phase("constructing the Dataset (binning; a cold Numba compile)"):
        train_set.construct(
            run.params, row_comm, keep_raw_data=keep_raw, category_lists=category_lists
        )
    blocks = None
    if train_set.feature_indices is not None and comm.size > 1:
        if cfg["tree_learner"] != "feature":
            raise ValueError("Dataset(feature_indices=...) is for tree_learner='feature'")
        if keep_raw:
            raise NotImplementedError("init_model with feature_indices column blocks")
        blocks = assemble_global_mapper(comm, train_set)
    return TrainingData(train_set, blocks, weight, init_score)


def _training_queries(run: TrainingRun, data: TrainingData) -> Queries | None:
    """The training set's queries (dgbdt.objective.ranking.Queries) where the objective or
    bagging_by_query needs them, handed to the objective; else None."""
    objective = run.objective
    ranks = objective is not None and objective.uses_queries
    if not ranks and not run.cfg["bagging_by_query"]:
        return None
    queries = Queries.of(run.train_set, run.row_comm)
    if ranks:
        # (uses_queries: a ranking objective, which has set_queries)
        objective.set_queries(  # type: ignore[union-attr]
            queries, data.label, run.train_set.position, run.row_comm
        )
    return queries


def _shared_weights(run: TrainingRun) -> tuple[np.ndarray | None, np.ndarray | None]:
    """(weight, init score) the training uses: the Dataset's, except that when
    some ranks have weights the others weigh their rows 1, so every rank takes
    the same (weighted) path through the collectives; likewise a missing
    init_score is zeros when other ranks have one.  The Dataset is not changed."""
    train_set, row_comm = run.train_set, run.row_comm
    weight, init_score = train_set.weight, train_set.init_score
    if row_comm.size > 1:
        has = row_comm.total_int([weight is not None, init_score is not None])
        if has[0] and weight is None:
            weight = np.ones(train_set.n_samples)
        if has[1] and init_score is None:
            init_score = np.zeros(train_set.n_samples * run.k_out)
    return weight, init_score


def _new_booster(run: TrainingRun, data: TrainingData, model_class: type[Model]) -> Model:
    """The model the trees go into: the objective (or the custom one's name),
    the global features and bins, the resolved params."""
    cfg, spec = run.cfg, run.objective or CustomObjective
    booster = model_class.for_training(
        objective=spec.name,
        objective_params=spec.saved_params(cfg),
        num_class=run.k_out,
        feature_names=data.feature_names,
        # (a wide Dataset's mapper describes the columns it binned; models, all)
        bin_mapper=data.global_mapper
        if run.train_set.used_features is None
        else run.train_set.model_mapper,
        # a callable objective is LightGBM's objective=none ("custom" in the model)
        config={k: v for k, v in cfg.items() if k != "objective"}
        | {"objective": "none" if run.objective is None else spec.name},
        params=user_params(run.params, run.train_set.get_params()),
        comm_stats=run.comm.stats,
    )
    # predict codes a DataFrame's category columns by the training's lists
    booster.pandas_categorical = run.train_set.pandas_categorical
    return booster


def user_params(params: Mapping[str, Any], dataset_params: Mapping[str, Any]) -> dict[str, Any]:
    """LightGBM's ``Booster.params`` of a train() call: train's ``params``
    (:func:`call_params`; a callable objective as "none", an objective not
    given as None) with the Dataset's params it does not give (train() merges
    its params into the Dataset's first, so the call's win)."""
    objective = params.get("objective")
    view = {**params, "objective": "none" if callable(objective) else objective}
    return view | {k: v for k, v in dataset_params.items() if k not in view}


def from_lightgbm_object(init_model: Any) -> Any:
    """A lightgbm.Booster (or a LightGBM estimator) as init_model: read through
    its model text, as a LightGBM model file would be."""
    model = getattr(init_model, "booster_", init_model)
    if type(model).__module__.startswith("lightgbm") and hasattr(model, "model_to_string"):
        # every tree, as LightGBM continues (not only up to its best iteration)
        return Model(model_str=model.model_to_string(num_iteration=-1))
    return init_model


def _as_booster(init_model: object) -> Model:
    """The init model as a Model."""
    if not isinstance(init_model, (Model, str, os.PathLike)):
        kind = f"{type(init_model).__module__}.{type(init_model).__qualname__}"
        raise TypeError(
            "init_model must be a Booster or a model file path (a dgbdt.Booster, a "
            f"lightgbm.Booster, or a file in dgbdt's or LightGBM's format), got {kind}"
        )
    return init_model if isinstance(init_model, Model) else Model(model_file=init_model)


def _check_init_model(init: Model, booster: Model, k_out: int) -> None:
    """Refuse an init model that cannot continue this training."""
    if init.num_tree_per_iteration != k_out or init.num_class != k_out:
        raise ValueError(
            f"init_model has {init.num_class} output(s) per row "
            f"({init.num_tree_per_iteration} trees per iteration, objective "
            f"{init.objective!r}) but this training has {k_out} (objective "
            f"{booster.objective!r}): continue a model with its own kind of objective"
        )
    if init.num_feature() != booster.num_feature():
        raise ValueError(
            f"init_model has {init.num_feature()} features but the training data has "
            f"{booster.num_feature()}"
        )
