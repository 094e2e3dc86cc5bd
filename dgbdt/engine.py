"""The boosting loop: ``dgbdt.train``.

Per round: gradients from the current scores, optional bagging and feature
sub-sampling (keyed on (seed, iteration, row/feature), see native.random),
one tree per class, shrinkage, score updates for training and validation
data, evaluation, callbacks.
"""

import contextlib
import os
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from types import SimpleNamespace

import numpy as np

import numba

from . import callback as cb
from .booster import Booster
from .comm import (
    AgreedError,
    CommStats,
    SerialComm,
    abort_job,
    abort_on_exception,
    agree_on_errors,
    agreed,
)
from .dataset import BINNING_KEYS, Dataset
from .grower import TreeGrower
from .learners import make_learner, shards_rows
from .learners.feature_blocks import assemble_global_mapper
from .metrics import get_metric
from .native import common
from .native.partition import add_leaf_values
from .native.predict import add_tree_binned
from .native.random import uniform_fill
from .objectives import CustomObjective, make_objective
from .params import ALIASES, PARAMS, resolve_params
from .quantization import GradientQuantizer, renew_leaf_values
from .streams import STREAM_BAGGING, STREAM_FEATURE_FRACTION, stream_key


class TrainingData:
    """What the grower and learners see of a constructed Dataset.

    Binned arrays, offsets and NaN bins describe this rank's columns; with
    feature-parallel column blocks these are a block of the global features,
    and ``global_mapper`` / ``owner_of`` describe all of them.
    """

    def __init__(self, dataset, comm, blocks=None):
        mapper = dataset.bin_mapper
        # This rank's rows are global rows row_offset ... row_offset + n_samples - 1.
        self.row_offset = dataset.row_offset
        self.binned = dataset.binned  # (n_samples, n_features)
        self.layout = dataset.layout
        # Partitioning reads one feature of scattered rows: from a row-major
        # array every read is a cache miss on a 28-byte-strided column, so keep
        # a column-major copy (LightGBM keeps both too).  Measured on 1M x 28:
        # partition 40 -> 12 ms per 255-leaf tree.
        self.columns = (
            dataset.binned if dataset.layout == "col" else np.asfortranarray(dataset.binned)
        )
        self.bin_mapper = mapper
        self.n_samples = dataset.n_samples
        self.n_features = dataset.n_features
        self.feature_offsets = mapper.feature_offsets
        self.nan_bins = mapper.nan_bins.astype(np.int32)
        self.total_bins = int(self.feature_offsets[-1])
        self.global_mapper, self.owner_of = mapper, None
        self.global_feature_indices = np.arange(self.n_features)
        if blocks is not None:
            self.global_mapper, _, self.owner_of = blocks
            self.global_feature_indices = dataset.feature_indices
        self.n_features_global = self.global_mapper.n_features


def split_params_vector(cfg):
    v = np.zeros(common.SPLIT_PARAMS_SIZE, np.float64)
    v[common.SP_LAMBDA_L1] = cfg["lambda_l1"]
    v[common.SP_LAMBDA_L2] = cfg["lambda_l2"]
    v[common.SP_MIN_GAIN_TO_SPLIT] = cfg["min_gain_to_split"]
    v[common.SP_MIN_DATA_IN_LEAF] = cfg["min_data_in_leaf"]
    v[common.SP_MIN_SUM_HESSIAN] = cfg["min_sum_hessian_in_leaf"]
    v[common.SP_MAX_DELTA_STEP] = cfg["max_delta_step"]
    return v


def bagged_rows(n_samples, fraction, seed, iteration, row_offset=0):
    """Local rows kept in this round's bag: each with probability ``fraction``,
    decided by a hash of (seed, iteration, global row)."""
    draws = np.empty(n_samples, np.float64)
    uniform_fill(seed, stream_key(STREAM_BAGGING, iteration), row_offset, draws)
    return np.flatnonzero(draws < fraction).astype(common.INDEX_DTYPE)


def sampled_features(n_features, fraction, seed, tree_index):
    """Features a tree may use: the ``round(fraction * n)`` with the smallest draws."""
    all_features = np.arange(n_features, dtype=np.int32)
    if fraction >= 1.0:
        return all_features
    n_used = max(1, int(fraction * n_features + 0.5))
    draws = np.empty(n_features, np.float64)
    uniform_fill(seed, stream_key(STREAM_FEATURE_FRACTION, tree_index), 0, draws)
    return np.sort(np.argsort(draws, kind="stable")[:n_used]).astype(np.int32)


def make_comm(cfg):
    """SerialComm for tree_learner=serial (no collectives: per-rank serial jobs
    are legitimate); otherwise MPI's world (initialises MPI) with cfg's time_out."""
    if cfg["tree_learner"] == "serial":
        return SerialComm()
    try:
        from .comm import world_comm

        return world_comm(cfg["time_out"])
    except ImportError as exc:
        raise ImportError(
            f"tree_learner={cfg['tree_learner']!r} needs mpi4py and an MPI library: "
            "pip install 'dgbdt[mpi]'"
        ) from exc


def _ranks_unlike_rank0(comm, text):
    """Ranks whose ``text`` hashes differently from rank 0's (every rank gets the same list)."""
    import hashlib

    digest = np.frombuffer(hashlib.sha256(text.encode()).digest(), dtype=np.uint8)
    digests = comm.allgather(digest)
    return [r for r in range(comm.size) if not np.array_equal(digests[r], digests[0])]


def check_same_rows(comm, dataset, what="the training set"):
    """Feature-parallel ranks must hold the same rows (LightGBM's replicated mode)."""
    label = dataset.label if dataset.label is not None else np.zeros(0)
    blocks = dataset.feature_indices is not None
    mine = np.array([dataset.n_samples, 0 if blocks else dataset.n_features, float(np.sum(label))])
    every = comm.allgather(mine)
    if not np.all(every == every[0]):
        raise agreed(
            ValueError(
                f"tree_learner='feature' needs the same rows of {what} on every rank (all columns, "
                "or a block of columns with Dataset(feature_indices=...)); got (rows, columns, "
                f"label sum) = {every.tolist()}"
            )
        )


def check_same_model(comm, booster):
    """Every rank must hold the same model (hash of the model file compared)."""
    bad = _ranks_unlike_rank0(comm, booster.model_to_string(-1))
    if bad:
        raise agreed(RuntimeError(f"check_consistency: ranks {bad} hold another model than rank 0"))


def _num_threads(cfg, comm):
    """num_threads, or (when <= 0) this machine's cores shared by its ranks."""
    n = cfg["num_threads"]
    available = numba.config.NUMBA_NUM_THREADS
    if n <= 0:
        return max(1, available // comm.local_size)
    return min(n, available)


class _EvalSet:
    def __init__(self, name, dataset, scores):
        self.name, self.dataset, self.scores = name, dataset, scores


def _custom_gradients(fobj, scores, train_set, k_out, gradients, hessians):
    preds = scores[0] if k_out == 1 else scores.T.copy()
    out = fobj(preds, train_set)
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        raise TypeError(
            f"The custom objective {getattr(fobj, '__name__', fobj)!r} must return "
            f"(grad, hess), got {type(out).__name__}"
        )
    grad, hess = (_numeric(part, what) for part, what in zip(out, ("gradients", "hessians")))
    if not (np.all(np.isfinite(grad)) and np.all(np.isfinite(hess))):
        raise ValueError("The custom objective returned non-finite gradients or hessians")
    n = scores.shape[1]
    if (
        hess.shape != grad.shape
        or grad.size != n * k_out
        or grad.shape not in ((n,), (n, k_out), (n * k_out,))
    ):
        raise ValueError(
            f"Custom objective returned gradients of shape {grad.shape} and hessians of "
            f"shape {hess.shape}; expected ({n},) or ({n}, {k_out})"
        )
    if grad.ndim == 1 and k_out > 1:
        # LightGBM's flat layout: class-major, all rows of class 0 first
        gradients[:], hessians[:] = grad.reshape(k_out, n), hess.reshape(k_out, n)
    else:
        gradients[:] = grad.reshape(n, k_out).T
        hessians[:] = hess.reshape(n, k_out).T


def _numeric(values, what):
    """A custom objective's gradients or hessians as float64 (complex refused)."""
    arr = np.asarray(values)
    if arr.dtype.kind not in "biuf":
        raise TypeError(
            f"The custom objective's {what} must be real numbers, got dtype {arr.dtype}"
        )
    return arr.astype(np.float64)


def train(
    params: Mapping[str, Any],
    train_set: Dataset,
    num_boost_round: int = 100,
    valid_sets: Dataset | Sequence[Dataset] | None = None,
    valid_names: str | Sequence[str] | None = None,
    feval: Callable | Sequence[Callable] | None = None,
    init_model: str | os.PathLike | Booster | None = None,
    keep_training_booster: bool = False,
    callbacks: Sequence[Callable] | None = None,
) -> Booster:
    """Train a gradient-boosted tree model (LightGBM's ``train`` signature and order).

    ``num_iterations`` (or an alias) in ``params`` overrides ``num_boost_round``.
    ``params["objective"]`` may be a callable ``fobj(preds, train_data) -> (grad, hess)``;
    ``feval(preds, eval_data) -> (name, value, is_higher_better)`` or a list of them.
    ``keep_training_booster`` is accepted for LightGBM's signature (a dgbdt
    Booster is always a plain model).
    """
    try:
        params, cfg, objective, k_out = _check_call(params, train_set, num_boost_round)
        comm = make_comm(cfg)
    except BaseException as exc:
        # Before any collective: a distributed job's other ranks would wait for
        # this one until their deadline; end the job now instead.
        if _asks_for_ranks(params):
            abort_job(exc)
        raise
    custom_objective = cfg["objective"] if callable(cfg["objective"]) else None
    comm.stats = CommStats()  # this training's communication only
    if cfg["num_machines"] > 1 and cfg["num_machines"] != comm.size and comm.rank == 0:
        warnings.warn(
            f"num_machines={cfg['num_machines']} but {comm.size} process(es) run; "
            "dgbdt uses the processes mpiexec started",
            stacklevel=2,
        )
    old_threads = numba.get_num_threads()
    numba.set_num_threads(_num_threads(cfg, comm))
    cb.set_logging_rank(comm.rank)
    run = _Run(cfg, params, train_set, objective, custom_objective, k_out, comm)
    valid_sets, valid_names = _as_lists(valid_sets, valid_names)
    try:
        _agree_on_inputs(run, valid_sets, valid_names, feval, init_model)
        return _setup_and_boost(run, valid_sets, valid_names, feval, init_model, callbacks)
    except BaseException as exc:
        # Ranks may be inside collectives: bring them all down, unless every
        # rank raises this same error anyway.  BaseException: sys.exit() or
        # Ctrl-C on one rank never reaches sys.excepthook.
        if comm.size > 1 and not isinstance(exc, AgreedError):
            abort_on_exception(comm, exc)
        raise
    finally:
        numba.set_num_threads(old_threads)
        cb.set_logging_rank(0)


def _as_lists(valid_sets, valid_names):
    """LightGBM takes one Dataset (one name) where it takes lists of them."""
    if isinstance(valid_sets, Dataset):
        valid_sets = [valid_sets]
    if isinstance(valid_names, str):
        valid_names = [valid_names]
    return (
        None if valid_sets is None else list(valid_sets),
        None if valid_names is None else list(valid_names),
    )


def _check_call(params, train_set, num_boost_round):
    """(params with num_iterations, resolved cfg, Objective or None, outputs per row)."""
    if params is not None and not isinstance(params, Mapping):
        raise TypeError(f"params must be a dict, got {type(params).__name__}")
    params = dict(params or {})
    if not any(ALIASES.get(k) == "num_iterations" for k in params):
        params["num_iterations"] = num_boost_round
    cfg = resolve_params(params)
    if not isinstance(train_set, Dataset):
        raise TypeError(f"train_set must be a dgbdt.Dataset, got {type(train_set).__name__}")
    objective = make_objective(cfg)
    k_out = objective.num_model_per_iteration if objective else cfg["num_class"]
    return params, cfg, objective, k_out


def _asks_for_ranks(params):
    """Whether raw (maybe invalid) params ask for a distributed tree learner
    under an MPI launcher of several ranks."""
    from .comm import launched_size

    if launched_size() <= 1 or not isinstance(params, Mapping):
        return False
    # anything but "serial" (a typo included) asks for ranks
    choices = PARAMS["tree_learner"].choices
    return any(
        ALIASES.get(str(k).strip()) == "tree_learner"
        and choices.get(str(v).strip().lower()) != "serial"
        for k, v in params.items()
    )


class _Run:
    """What one call of train() decided before boosting (shared by its helpers)."""

    def __init__(self, cfg, params, train_set, objective, custom_objective, k_out, comm):
        self.cfg, self.params, self.train_set = cfg, params, train_set
        self.objective, self.custom_objective, self.k_out = objective, custom_objective, k_out
        self.comm = comm
        # Sums over rows (bins, init scores, metrics) go over the ranks only
        # when rows are sharded; feature-parallel ranks hold the same rows.
        self.row_comm = comm if shards_rows(cfg["tree_learner"]) else SerialComm()


def _agree_on_inputs(run, valid_sets, valid_names, feval, init_model):
    """Errors a rank finds in its own inputs, and what every rank must agree on,
    are settled before any other collective: every rank then raises the same
    error, none is left waiting."""
    error = None
    try:
        if run.train_set.label is None:
            raise ValueError("train_set has no label")
        if run.objective:
            run.objective.check_labels(run.train_set.label, run.train_set.weight)
    except (ValueError, TypeError) as exc:
        error = exc
    agree_on_errors(run.comm, error)
    if run.comm.size > 1:
        check_same_setup(
            run.comm, _setup_description(run, valid_sets, valid_names, feval, init_model)
        )


def _setup_description(run, valid_sets, valid_names, feval, init_model):
    """What must be the same on every rank, as a JSON-able dict."""
    cfg = run.cfg
    fevals = feval if isinstance(feval, (list, tuple)) else [feval] if feval is not None else []
    sets = valid_sets or []
    names = [
        valid_names[i] if valid_names and i < len(valid_names) else f"valid_{i}"
        for i in range(len(sets))
    ]
    return {
        "the validation set names": names,
        "which validation sets are train_set": [vs is run.train_set for vs in sets],
        "the number of feval functions": len(fevals),
        "a custom objective given": run.custom_objective is not None,
        "init_model": _init_model_digest(init_model),
        "train_set's feature names": _feature_names(run.train_set),
        "the binning (train_set's Dataset params with train's)": _binning(
            run.train_set, run.params
        ),
        "the validation sets' binning": [_binning(vs, run.params) for vs in sets],
        **{
            f"params[{k!r}]": v
            for k, v in cfg.items()
            if not callable(v) and k not in PER_PROCESS_KEYS
        },
    }


#: Parameters each process may set for itself (LightGBM's too: threads, logging,
#: the deadline, the local data layout): they do not change the model.
PER_PROCESS_KEYS = (
    "num_threads",
    "verbosity",
    "time_out",
    "num_machines",
    "force_col_wise",
    "force_row_wise",
)


def _init_model_digest(init_model):
    """None, or a hash of the init model (the same model must continue on every rank)."""
    import hashlib

    if init_model is None:
        return None
    if isinstance(init_model, Booster):
        text = init_model.model_to_string(-1)
    else:
        try:
            with open(init_model, "rb") as fh:
                text = fh.read().decode("utf-8", "replace")
        except (OSError, TypeError):
            return f"unreadable {init_model!r}"  # loading it reports why, on that rank
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _feature_names(dataset):
    """The names every rank must share; a block of columns (feature_indices) has
    its own, checked when the blocks are assembled."""
    if not isinstance(dataset, Dataset) or dataset.feature_indices is not None:
        return None
    return list(dataset.feature_name)


def _binning(dataset, params):
    """The binning a Dataset gets (its own params overridden by train's), resolved
    so that aliases and numpy scalars compare equal."""
    if not isinstance(dataset, Dataset):
        return None
    try:
        cfg = resolve_params({**(dataset.params or {}), **params})
    except (ValueError, TypeError) as exc:  # raised on every rank when the Dataset is built
        return f"invalid: {exc}"
    return {key: cfg[key] for key in BINNING_KEYS}


def check_same_setup(comm, description):
    """Every rank must call train() alike: its description (params, feval, fobj,
    validation sets, Dataset params, init_model) hashed and compared with rank
    0's; on a difference every rank raises the same error naming the first
    item that differs."""
    import json

    text = json.dumps(description, sort_keys=True, default=str)
    bad = _ranks_unlike_rank0(comm, text)
    if not bad:
        return
    texts = comm.allgather_object(text)
    mine, theirs = json.loads(texts[0]), json.loads(texts[bad[0]])
    key = next(k for k in [*description, *theirs] if mine.get(k) != theirs.get(k))
    mine, theirs = mine.get(key), theirs.get(key)
    if isinstance(mine, dict) and isinstance(theirs, dict):  # name the entry that differs
        sub = next(k for k in [*mine, *theirs] if mine.get(k) != theirs.get(k))
        key, mine, theirs = f"{key}[{sub!r}]", mine.get(sub), theirs.get(sub)
    raise agreed(
        ValueError(
            f"Ranks {bad} called train() unlike rank 0: {key} is {_short(theirs)} on rank "
            f"{bad[0]} but {_short(mine)} on rank 0. Every rank must call train() with the "
            "same params, feval, objective, validation sets (names and Dataset params) and "
            "init_model, on data with the same feature names"
        )
    )


def _short(value, width=120):
    text = repr(value)
    return text if len(text) <= width else text[: width - 3] + "..."


def _setup_and_boost(run, valid_sets, valid_names, feval, init_model, callbacks):
    cfg, train_set, comm, row_comm = run.cfg, run.train_set, run.comm, run.row_comm
    k_out, objective, custom_objective = run.k_out, run.objective, run.custom_objective
    if row_comm.size > 1:
        # When some ranks have weights, the others weigh their rows 1: every
        # rank then takes the same (weighted) path through the collectives.
        # Likewise a missing init_score is zeros when other ranks have one.
        has = row_comm.allreduce(
            np.array([train_set.weight is not None, train_set.init_score is not None], np.int64)
        )
        if has[0] and train_set.weight is None:
            train_set.weight = np.ones(train_set.n_samples)
        if has[1] and train_set.init_score is None:
            train_set.init_score = np.zeros(train_set.n_samples * k_out)
    blocks = None
    if cfg["tree_learner"] == "feature" and comm.size > 1:
        check_same_rows(comm, train_set)
    # The Dataset's own params, overridden by the ones given to train
    # (as in LightGBM): the raw params, not cfg, whose defaults would win.
    with comm.slow_phase("constructing the Dataset (binning; a cold Numba compile)"):
        _construct_keeping_raw(train_set, run.params, row_comm, keep=init_model is not None)
    if train_set.feature_indices is not None and comm.size > 1:
        if cfg["tree_learner"] != "feature":
            raise ValueError("Dataset(feature_indices=...) is for tree_learner='feature'")
        if init_model is not None:
            raise NotImplementedError("init_model with feature_indices column blocks")
        blocks = assemble_global_mapper(comm, train_set)
    if objective:
        objective.set_label_weights(train_set.label, train_set.weight, row_comm)
    spec = objective or CustomObjective
    booster = Booster.for_training(
        objective=spec.name,
        objective_params=spec.saved_params(cfg),
        num_class=k_out,
        feature_names=blocks[1] if blocks else train_set.feature_name,
        bin_mapper=blocks[0] if blocks else train_set.bin_mapper,
        params={k: v for k, v in cfg.items() if k != "objective"} | {"objective": spec.name},
        comm_stats=comm.stats,
    )
    booster = _boost(
        cfg,
        train_set,
        booster,
        objective,
        custom_objective,
        k_out,
        valid_sets,
        valid_names,
        feval,
        init_model,
        callbacks,
        comm,
        row_comm,
        blocks,
        run.params,
    )
    if cfg["check_consistency"] and comm.size > 1:
        check_same_model(comm, booster)
    return booster


def _boost(
    cfg,
    train_set,
    booster,
    objective,
    custom_objective,
    k_out,
    valid_sets,
    valid_names,
    feval,
    init_model,
    callbacks,
    comm,
    row_comm,
    blocks=None,
    params=None,
):
    """The boosting loop.  ``comm`` connects the learners; ``row_comm`` sums
    over rows (the same as ``comm`` when rows are sharded, serial otherwise);
    ``params`` are train's own (validation sets are constructed with them)."""
    data = TrainingData(train_set, comm, blocks)
    loop = SimpleNamespace(
        cfg=cfg,
        train_set=train_set,
        booster=booster,
        objective=objective,
        custom_objective=custom_objective,
        k_out=k_out,
        feval=feval,
        comm=comm,
        row_comm=row_comm,
        data=data,
    )
    loop.scores, init_booster = _starting_scores(loop, init_model)
    loop.eval_sets = _make_eval_sets(
        train_set, loop.scores, valid_sets, valid_names, cfg, booster, k_out, init_booster, params
    )
    if cfg["tree_learner"] == "feature" and comm.size > 1:
        # Replicated rows: metrics are computed by each rank on its own copy.
        for es in loop.eval_sets:
            if es.dataset is not train_set:
                check_same_rows(comm, es.dataset, f"validation set {es.name!r}")
    _prepare_loop(loop, callbacks, init_model)
    # The first iteration compiles kernels on a cold Numba cache: its collectives
    # wait at least the slow-phase allowance, whatever time_out says.
    first_phase = contextlib.ExitStack()
    first_phase.enter_context(comm.slow_phase("the first iteration (a cold Numba compile)"))
    with first_phase:
        for it in range(loop.first_iter, loop.end_iter):
            if it == loop.first_iter + 1:
                first_phase.close()
            if _one_iteration(loop, it):
                break
    return booster


def _starting_scores(loop, init_model):
    """(raw scores (k_out, n), the init model's Booster or None): init_score, or an
    init model's raw predictions, or boost_from_average."""
    cfg, train_set, booster, k_out = loop.cfg, loop.train_set, loop.booster, loop.k_out
    scores = _start_scores(train_set, k_out)
    init_booster = None
    if init_model is not None:
        init_booster = _load_init_model(init_model, booster, k_out)
        booster.trees = list(init_booster.trees)
        booster.init_score = init_booster.init_score.copy()
        if train_set.init_score is None:
            scores += _init_model_scores(init_booster, train_set, k_out)
        if not _same_bins(init_booster.bin_mapper, train_set.bin_mapper):
            # The init model's trees have bin thresholds of other bins: the model
            # claims no bins at all, so it is never replayed on bins again.
            booster.bin_mapper = None
        train_set.release_raw_data()
    elif loop.objective and cfg["boost_from_average"] and train_set.init_score is None:
        booster.init_score = loop.objective.init_score(
            train_set.label, train_set.weight, loop.row_comm
        )
        scores += booster.init_score[:, None]
    return scores, init_booster


def _prepare_loop(loop, callbacks, init_model):
    """The learner, grower, quantizer, buffers, seeds and callbacks of the loop."""
    cfg, data, k_out, n = loop.cfg, loop.data, loop.k_out, loop.data.n_samples
    loop.metrics = [get_metric(m) for m in cfg["metric"]]
    loop.learner = make_learner(cfg, data, split_params_vector(cfg), loop.comm)
    loop.grower = TreeGrower(loop.learner, data, cfg)
    loop.quantizer = (
        GradientQuantizer(cfg, n, data.row_offset, loop.row_comm)
        if cfg["use_quantized_grad"]
        else None
    )
    loop.gradients = np.empty((k_out, n), common.GRAD_DTYPE)
    loop.hessians = np.empty((k_out, n), common.GRAD_DTYPE)
    loop.all_rows = loop.bag = np.arange(n, dtype=common.INDEX_DTYPE)
    loop.bagging = cfg["bagging_freq"] > 0 and cfg["bagging_fraction"] < 1.0
    loop.bagging_seed = (cfg["bagging_seed"] + cfg["seed"]) & 0x7FFFFFFF
    loop.ff_seed = (cfg["feature_fraction_seed"] + cfg["seed"]) & 0x7FFFFFFF
    callbacks = _prepare_callbacks(callbacks, cfg)
    loop.before = [c for c in callbacks if getattr(c, "before_iteration", False)]
    loop.after = [c for c in callbacks if not getattr(c, "before_iteration", False)]
    booster = loop.booster
    loop.first_iter = booster.current_iteration() if init_model is not None else 0
    loop.start_from_stump = (
        loop.objective is not None
        and not cfg["boost_from_average"]
        and loop.train_set.init_score is None
        and init_model is None
    )
    loop.end_iter = loop.first_iter + cfg["num_iterations"]
    booster.best_iteration = 0
    for c in callbacks:
        if hasattr(c, "begin_training"):  # e.g. log_progress starts its clock
            c.begin_training(
                cb.CallbackEnv(booster, cfg, loop.first_iter, loop.first_iter, loop.end_iter, None)
            )


def _one_iteration(loop, it):
    """One boosting round; True when training ends here."""
    cfg, booster = loop.cfg, loop.booster
    env = cb.CallbackEnv(booster, cfg, it, loop.first_iter, loop.end_iter, None)
    for c in loop.before:
        c(env)
    if loop.custom_objective:
        _custom_gradients(
            loop.custom_objective,
            loop.scores,
            loop.train_set,
            loop.k_out,
            loop.gradients,
            loop.hessians,
        )
    else:
        loop.objective.gradients(
            loop.scores, loop.train_set.label, loop.train_set.weight, loop.gradients, loop.hessians
        )
    if it == loop.first_iter:
        _check_first_gradients(loop.gradients, loop.hessians)
    if loop.bagging and (it % cfg["bagging_freq"] == 0 or it == loop.first_iter):
        # Bags are keyed on the global iteration: the bag of iteration it is the
        # one drawn at the last multiple of bagging_freq, so a run resumed from a
        # model (init_model) at any iteration uses the same bags as one that
        # never stopped.
        loop.bag = bagged_rows(
            loop.data.n_samples,
            cfg["bagging_fraction"],
            loop.bagging_seed,
            it - it % cfg["bagging_freq"],
            loop.data.row_offset,
        )
    new_trees = [_grow_tree(loop, it * loop.k_out + k, k) for k in range(loop.k_out)]
    stumps = all(t.n_leaves == 1 for t in new_trees)
    if stumps and booster.trees:
        # Nothing left to split: LightGBM stops here too, and keeps these stumps
        # only when the model has no trees yet.  Asking the model, not this run's
        # first iteration, makes a resumed run stop where an uninterrupted one
        # does.  Early stopping still reports its best.
        for c in loop.after:
            best = c.best_so_far(loop.end_iter) if hasattr(c, "best_so_far") else None
            if best is not None:
                booster.best_iteration = best[0] + 1
                booster.best_score = _score_dict(best[1])
                break
        return True
    booster.add_trees(new_trees)
    return _after_iteration(loop, it) or stumps


def _grow_tree(loop, tree_index, k):
    """Tree ``k`` of this round: grown, renewed, shrunk, and added to the scores."""
    cfg, grower, comm = loop.cfg, loop.grower, loop.comm
    g, h = loop.gradients[k], loop.hessians[k]
    comm.stats.begin_tree()
    features = sampled_features(
        loop.data.n_features_global, cfg["feature_fraction"], loop.ff_seed, tree_index
    )
    quant = loop.quantizer.quantize(g, h, tree_index) if loop.quantizer else None
    tree = grower.grow(g, h, loop.bag, features, quant)
    if quant is not None and cfg["quant_train_renew_leaf"] and tree.n_leaves > 1:
        renew_leaf_values(tree, grower, g, h, loop.row_comm, cfg)
    objective = loop.objective
    if objective is not None and objective.renews_leaves and tree.n_leaves > 1:
        objective.renew_leaf_values(
            tree, grower, loop.train_set.label, loop.scores[k], loop.train_set.weight, loop.row_comm
        )
    if tree.n_leaves == 1:
        # A tree that cannot split adds nothing (LightGBM never fits its leaf; a
        # first one is a constant tree at the starting score, which dgbdt keeps
        # apart in init_score).
        tree.leaf_value[0] = 0.0
        if not loop.booster.trees and loop.start_from_stump:
            _start_from_stump(loop, k)
    tree.scale(cfg["learning_rate"])
    _update_scores(
        tree, grower, loop.learner, loop.data, loop.bag is not loop.all_rows, loop.scores[k]
    )
    comm.stats.end_tree()  # validation traffic counts in the totals, not per tree
    for es in loop.eval_sets:
        if es.dataset is not loop.train_set:
            loop.learner.add_tree_scores(tree, es.dataset.binned, loop.data.nan_bins, es.scores[k])
    return tree


def _start_from_stump(loop, k):
    """A first tree that cannot split without boost_from_average: LightGBM then
    starts class ``k`` from the objective's automatic score after all (gbdt.cpp
    TrainOneIter), for the training and the validation scores."""
    train_set = loop.train_set
    value = loop.objective.init_score(train_set.label, train_set.weight, loop.row_comm)[k]
    loop.booster.init_score[k] = value
    loop.scores[k] += value
    for es in loop.eval_sets:
        if es.dataset is not train_set:
            es.scores[k] += value


def _after_iteration(loop, it):
    """Evaluation, the after-iteration callbacks and the agreed early stop; True
    when training stops here."""
    cfg, booster, comm = loop.cfg, loop.booster, loop.comm
    results = _evaluate(
        loop.eval_sets, loop.metrics, loop.feval, cfg, loop.objective, loop.k_out, loop.row_comm
    )
    env = cb.CallbackEnv(booster, cfg, it, loop.first_iter, loop.end_iter, results)
    stop = None
    try:
        for c in loop.after:
            c(env)
    except cb.EarlyStopException as exc:
        stop = exc
    # Rank 0 may still be writing a snapshot: the others wait longer for it.
    writing = any(c.writes_at(it) for c in loop.after if hasattr(c, "writes_at"))
    with comm.slow_phase("rank 0 writing a snapshot") if writing else contextlib.nullcontext():
        stop_at = _agreed_stop(comm, stop)
    if stop_at is not None:
        booster.best_iteration = stop_at + 1
        booster.best_score = _score_dict(stop.best_score if stop else results)
        return True
    booster.best_score = _score_dict(results)  # LightGBM: the last round's results
    return False


def _load_init_model(init_model, booster, k_out):
    """The init model as a Booster, refused when it cannot continue this training."""
    if not isinstance(init_model, (Booster, str, os.PathLike)):
        raise TypeError(
            f"init_model must be a Booster or a model file path, got {type(init_model).__name__}"
        )
    init = init_model if isinstance(init_model, Booster) else Booster(model_file=init_model)
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
    return init


def _check_first_gradients(gradients, hessians):
    """Gradients are float32: starting scores beyond its range (an init_score of
    1e39) would give infinite gradients and silently empty trees."""
    if not (np.all(np.isfinite(gradients)) and np.all(np.isfinite(hessians))):
        raise ValueError(
            "The starting scores give non-finite gradients (float32): check "
            "init_score / the init model's scores (beyond about 3.4e38?)"
        )


def _start_scores(dataset, k_out):
    n = dataset.n_samples
    scores = np.zeros((k_out, n), np.float64)
    if dataset.init_score is not None:
        init = np.asarray(dataset.init_score, np.float64)
        if init.size != n * k_out:
            raise ValueError(
                f"init_score has {init.size} values; expected {n * k_out} "
                f"({n} rows x {k_out} classes)"
            )
        # LightGBM's flat layout is class-major; a 2-D array is (n_samples, n_classes).
        scores += init.reshape(n, k_out).T if init.ndim == 2 else init.reshape(k_out, n)
    return scores


def _binned_raw_scores(booster, dataset, k_out):
    """Raw scores of ``booster``'s trees on a binned data set."""
    scores = np.zeros((k_out, dataset.n_samples), np.float64)
    scores += booster.init_score[:, None]
    for i, tree in enumerate(booster.trees):
        _add_tree(tree, dataset, dataset.bin_mapper.nan_bins.astype(np.int32), scores[i % k_out])
    return scores


def _same_bins(a, b):
    return (
        a is not None
        and b is not None
        and a.n_features == b.n_features
        and np.array_equal(a.nan_bins, b.nan_bins)
        and all(np.array_equal(x, y) for x, y in zip(a.upper_bounds, b.upper_bounds))
    )


def _init_model_scores(init_booster, dataset, k_out):
    """Raw scores of an init model on a constructed data set.

    Predicted from the raw values, kept until this point, as LightGBM does:
    the trees' bin thresholds mean something only for data binned like the
    model (replayed on the bins when the raw values were freed).
    """
    raw_data = dataset.get_data()
    if raw_data is not None:
        raw = np.asarray(
            init_booster.predict(
                raw_data,
                raw_score=True,
                num_iteration=init_booster.current_iteration(),
                validate_features=False,
            ),  # by position, as LightGBM
            np.float64,
        )
        return raw.reshape(dataset.n_samples, k_out).T.copy()
    if _same_bins(init_booster.bin_mapper, dataset.bin_mapper):
        return _binned_raw_scores(init_booster, dataset, k_out)
    raise ValueError(
        "init_model was binned differently from this Dataset, whose raw data was "
        "freed: create the Dataset with free_raw_data=False"
    )


def _construct_keeping_raw(dataset, cfg, comm, keep):
    """Construct ``dataset``; with ``keep``, its raw data survives construction
    (for :func:`_init_model_scores`) and is freed afterwards by ``release_raw_data``."""
    dataset.construct(cfg, comm, keep_raw_data=keep)


def _add_tree(tree, dataset, nan_bins, scores):
    add_tree_binned(
        dataset.binned.T,
        nan_bins,
        tree.split_feature,
        tree.threshold_bin,
        tree.default_left,
        tree.left_child,
        tree.right_child,
        tree.leaf_value,
        scores,
    )


def _update_scores(tree, grower, learner, data, bagged, scores):
    if bagged:
        # Out-of-bag rows were not partitioned: walk the tree for every row.
        learner.add_tree_scores(tree, data.binned, data.nan_bins, scores)
    else:
        add_leaf_values(
            scores,
            grower.sample_indices,
            grower.leaf_begin[: tree.n_leaves],
            grower.leaf_count[: tree.n_leaves],
            tree.leaf_value,
        )


def _make_eval_sets(
    train_set, train_scores, valid_sets, valid_names, cfg, booster, k_out, init_booster, params=None
):
    """Data sets to evaluate each round; the training set shares the live training scores."""
    sets = []
    if cfg["is_provide_training_metric"]:
        sets.append(("training", train_set))
    for i, vs in enumerate(valid_sets or []):
        if not isinstance(vs, Dataset):
            raise TypeError(f"valid_sets[{i}] must be a dgbdt.Dataset, got {type(vs).__name__}")
        if vs is train_set:
            # LightGBM names it after valid_names when given; early stopping skips it by that name.
            name = valid_names[i] if valid_names and i < len(valid_names) else "training"
            sets = [(n, s) for n, s in sets if s is not train_set]
            booster.set_train_data_name(name)
        else:
            name = valid_names[i] if valid_names and i < len(valid_names) else f"valid_{i}"
            vs.use_training_bins(train_set)
            _construct_keeping_raw(vs, params, None, keep=init_booster is not None)
            if vs.bin_mapper is not train_set.bin_mapper:
                raise ValueError(
                    f"Validation set {name!r} was binned with another reference; "
                    "create it with reference=train_set"
                )
            if vs.label is None:
                raise ValueError(f"Validation set {name!r} has no label")
        sets.append((name, vs))
    out = []
    for name, ds in sets:
        if ds is train_set:
            out.append(_EvalSet(name, ds, train_scores))
            continue
        scores = _start_scores(ds, k_out)
        if ds.init_score is None:
            if init_booster is not None:
                scores = _init_model_scores(init_booster, ds, k_out)
            else:
                scores += booster.init_score[:, None]
        ds.release_raw_data()
        out.append(_EvalSet(name, ds, scores))
    return out


def _evaluate(eval_sets, metrics, feval, cfg, objective, k_out, comm):
    results = []
    for es in eval_sets:
        raw = es.scores.T
        preds = objective.transform(raw) if objective else CustomObjective.output(raw, {})
        for m in metrics:
            kw = m.options_from(cfg)
            value = global_metric(
                comm, m, es.dataset.label, raw if m.raw_scores else preds, es.dataset.weight, kw
            )
            results.append((es.name, m.name, value, m.higher_better))
        if feval is not None:
            fpreds = raw[:, 0] if k_out == 1 and objective is None else preds
            fdata = es.dataset
            if comm.size > 1:
                fdata, fpreds = _all_rows(comm, es.dataset, fpreds)
            for fn in feval if isinstance(feval, (list, tuple)) else [feval]:
                results += [(es.name, *r) for r in _feval_results(fn, fn(fpreds, fdata))]
    return results


def _feval_results(fn, out):
    """(name, value, is_higher_better) tuples of what a custom ``feval`` returned."""
    results = out if isinstance(out, list) else [out]
    checked = []
    for r in results:
        if not isinstance(r, tuple) or len(r) != 3 or not isinstance(r[0], str):
            raise TypeError(
                f"feval {getattr(fn, '__name__', fn)!r} must return (name, value, "
                f"is_higher_better) or a list of them, got {out!r}"[:300]
            )
        try:
            checked.append((r[0], float(r[1]), bool(r[2])))
        except (TypeError, ValueError):
            raise TypeError(
                f"feval {getattr(fn, '__name__', fn)!r} returned the value "
                f"{r[1]!r} for {r[0]!r}: not a number"
            ) from None
    return checked


def _all_rows(comm, dataset, preds):
    """Every rank's labels, weights and predictions, for a custom ``feval``
    (which cannot be summed over ranks): a Dataset without features, and the
    predictions.  n floats per evaluation, as for AUC."""
    label, _ = comm.allgatherv(np.asarray(dataset.label, np.float64))
    weight = None
    if comm.allreduce(np.array([dataset.weight is not None], np.int64))[0]:
        w = np.ones(dataset.n_samples) if dataset.weight is None else dataset.weight
        weight, _ = comm.allgatherv(np.asarray(w, np.float64))
    all_preds, _ = comm.allgatherv(np.asarray(preds, np.float64).ravel())
    if np.ndim(preds) == 2:
        all_preds = all_preds.reshape(len(label), -1)
    return Dataset(np.empty((len(label), 0)), label=label, weight=weight), all_preds


def _agreed_stop(comm, stop):
    """The iteration every rank stops at, or None: any rank's early stop (with
    global metrics they all stop together) ends every rank's loop at the
    earliest best iteration, so no rank is left in a collective alone."""
    if comm.size == 1:
        return None if stop is None else stop.best_iteration
    mine = np.array(
        [
            -1 if stop is not None else 0,
            stop.best_iteration if stop is not None else np.iinfo(np.int64).max,
        ],
        np.int64,
    )
    flag, best = comm.allreduce(mine, op="min")
    return None if flag == 0 else int(best)


def global_metric(comm, metric, label, preds, weight, kw):
    """A metric over every rank's rows: additive sums are allreduced (exact);
    AUC, which is not a sum, gathers labels, predictions and weights (n floats
    per evaluation)."""
    if comm.size == 1:
        return metric.compute(label, preds, weight, **kw)
    if metric.partial is not None:
        return float(metric.finalize(comm.allreduce(metric.partial(label, preds, weight, **kw))))
    all_label, _ = comm.allgatherv(np.asarray(label, np.float64))
    all_preds, _ = comm.allgatherv(np.asarray(preds, np.float64).ravel())
    all_weight = None
    if comm.allreduce(np.array([weight is not None], np.int64))[0]:
        w = np.ones(len(label)) if weight is None else np.asarray(weight, np.float64)
        all_weight, _ = comm.allgatherv(w)
    if np.ndim(preds) == 2:
        all_preds = all_preds.reshape(len(all_label), -1)
    return metric.compute(all_label, all_preds, all_weight, **kw)


def _score_dict(result_list):
    best = {}
    for data_name, metric_name, value, _ in result_list or []:
        best.setdefault(data_name, {})[metric_name] = value
    return best


def _prepare_callbacks(callbacks, cfg):
    callbacks = list(callbacks or [])
    if cfg["early_stopping_round"] > 0:
        callbacks.append(
            cb.early_stopping(
                cfg["early_stopping_round"],
                cfg["first_metric_only"],
                verbose=cfg["verbosity"] > 0,
                min_delta=cfg["early_stopping_min_delta"],
            )
        )
    return sorted(callbacks, key=lambda c: getattr(c, "order", 0))
