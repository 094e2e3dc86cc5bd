"""The boosting loop: one training's state, and what one round does.

Per round: reset_parameter's new params (agreed over ranks), gradients from
the current scores, the round's bag (dgbdt.boosting.sampling), one tree per class
(grown, renewed, shrunk, added to the training and the validation scores),
evaluation (dgbdt.boosting.evaluation), callbacks and the agreed early stop.

A training Booster keeps its loop: :meth:`Boosting.update` is one more round
without callbacks, :meth:`Boosting.rollback` takes the last one off the
scores (LightGBM's RollbackOneIter).  ``refit_leaf_values`` replays a model's
rounds on new data (LightGBM's RefitTree).
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numba
import numpy as np
import numpy.typing as npt

from ..data.store import splittable_features
from ..distributed.comm import SerialComm, agreed
from ..log import log_lightgbm_info, log_lightgbm_warning
from ..models.lightgbm_export import tree_shrinkage
from ..native import common
from ..native.histogram import BLOCK_FEATURES, feature_blocks
from ..native.partition import add_leaf_values
from ..objective.objectives import make_objective
from ..objective.ranking import Queries, query_boundaries
from ..params.table import ALIASES, PARAMS, threads_for
from ..treelearner.grower import TreeGrower
from ..treelearner.learners import make_learner, shards_rows
from ..treelearner.quantization import GradientQuantizer, renew_leaf_values
from . import callbacks as cb
from .consistency import PER_PROCESS_KEYS, check_same_rows
from .evaluation import (
    EvalSet,
    Evaluator,
    init_model_scores,
    make_eval_sets,
    same_bins,
    score_dict,
    start_scores,
)
from .sampling import Sampler

if TYPE_CHECKING:
    from ..data.binning import BinMapper, WideBinMapper
    from ..data.dataset import Dataset
    from ..data.store import BinStore
    from ..models.model import Model
    from ..models.tree import Tree
    from ..objective.objectives import Objective
    from ..treelearner.learners.serial import SerialLearner
    from .consistency import Feval

# From this many features, column-layout data keeps a blocked copy (4 blocks).
BLOCKED_MIN_FEATURES = 4 * BLOCK_FEATURES
# LightGBM's kEpsilon: a starting score closer to 0 is not announced
_K_EPSILON = 1e-15
_NO_SPLIT = "Stopped training because there are no more leaves that meet the split requirements"


class TrainingRun:
    """What one call of train() decided before boosting: the resolved params
    (``cfg``) and train's own (``params``), the training set, the objective (or
    the custom one), the outputs per row, and the communicators."""

    def __init__(
        self,
        cfg: dict[str, Any],
        params: dict[str, Any],
        train_set: Dataset,
        objective: Objective | None,
        custom_objective: Callable[..., Any] | None,
        k_out: int,
        comm: SerialComm,
    ) -> None:
        self.cfg, self.params, self.train_set = cfg, params, train_set
        self.objective, self.custom_objective, self.k_out = objective, custom_objective, k_out
        self.comm = comm
        # Sums over rows (bins, init scores, metrics) go over the ranks only
        # when rows are sharded; feature-parallel ranks hold the same rows.
        self.row_comm = comm if shards_rows(cfg["tree_learner"]) else SerialComm()


class TrainingData:
    """What the grower and learners see of a constructed Dataset, and the
    training's own label, weight and init score.

    Binned arrays, offsets and NaN bins describe this rank's columns; with
    feature-parallel column blocks these are a block of the global features,
    and ``global_mapper`` / ``owner_of`` / ``feature_names`` describe all of
    them.  ``weight`` and ``init_score`` are the Dataset's, or unit weights
    and zeros where other ranks have them and this one has none: the user's
    Dataset is left as it is.
    """

    # What the grower and the learners read, declared (mypy meets these in an
    # import cycle with the tree learners, where it cannot infer them).
    store: BinStore
    layout: str | None
    row_offset: int
    n_samples: int
    n_features: int
    n_features_global: int
    total_bins: int
    binned: np.ndarray
    columns: np.ndarray
    feature_offsets: np.ndarray
    most_freq_bins: np.ndarray
    recovered: np.ndarray
    nan_bins: np.ndarray
    zero_bins: np.ndarray
    missing_bins: np.ndarray
    categorical: np.ndarray | None
    global_mapper: BinMapper | WideBinMapper
    global_feature_indices: np.ndarray
    owner_of: np.ndarray | None

    def __init__(
        self,
        dataset: Dataset,
        blocks: tuple[BinMapper, list[str], np.ndarray] | None,
        weight: np.ndarray | None,
        init_score: np.ndarray | None,
    ) -> None:
        mapper = dataset.bin_mapper
        # a constructed Dataset with a label (agree_on_inputs checked it)
        assert mapper is not None and dataset.store is not None and dataset.label is not None
        self.label, self.weight, self.init_score = dataset.label, weight, init_score
        # this rank's queries (dgbdt.objective.ranking.Queries) where the objective or
        # bagging_by_query needs them (set by the engine), else None
        self.queries: Queries | None = None
        # This rank's rows are global rows row_offset ... row_offset + n_samples - 1.
        self.row_offset = dataset.row_offset
        store = self.store = dataset.store  # dgbdt.data.store.BinStore
        # (n_samples, n_columns): every feature when the store is plain
        self.binned = store.dense
        self.layout = dataset.layout
        # Partitioning reads one feature of scattered rows: from a row-major
        # array every read is a cache miss on a 28-byte-strided column, so keep
        # a column-major copy (LightGBM keeps both too).  Measured on 1M x 28:
        # partition 40 -> 12 ms per 255-leaf tree.
        self.columns = store.dense if dataset.layout == "col" else np.asfortranarray(store.dense)
        # Wide column-layout data also keeps feature blocks: a leaf's histogram
        # then reads one cache line per row and block (native.histogram).
        self.blocks: np.ndarray | None = None
        if store.plain and dataset.layout == "col" and store.n_features >= BLOCKED_MIN_FEATURES:
            self.blocks = feature_blocks(store.dense)
        self.most_freq_bins = store.most_freq_bins
        self.recovered = store.recovered
        self.bin_mapper = mapper
        self.n_samples = dataset.n_samples
        self.n_features = store.n_features  # (a wide Dataset's: the columns it binned)
        # Histogram layout: the store's (features it does not keep take no bins)
        self.feature_offsets = store.feature_offsets
        self.nan_bins = mapper.nan_bins.astype(np.int32)
        # uint8 per (local) feature, 1 for categorical ones; None: none is
        is_cat = mapper.is_categorical
        self.categorical = is_cat.astype(np.uint8) if is_cat.any() else None
        # Zero-type features (zero_as_missing): the bin of 0.0 is missing; the
        # bin whose rows follow a split's default side, NaN or zero
        self.zero_bins = mapper.zero_bins
        self.missing_bins = mapper.missing_bins
        self.total_bins = int(self.feature_offsets[-1])
        self.global_mapper, self.owner_of = mapper, None
        self.feature_names = dataset.feature_name
        self.global_feature_indices = np.arange(self.n_features)
        if blocks is not None:
            self.global_mapper, self.feature_names, self.owner_of = blocks
            assert dataset.feature_indices is not None  # a block of columns
            self.global_feature_indices = dataset.feature_indices
        self.n_features_global = self.global_mapper.n_features


def split_params_vector(cfg: dict[str, Any]) -> np.ndarray:
    """The split-finding parameters as the kernels' float64 vector (native.common)."""
    v = np.zeros(common.SPLIT_PARAMS_SIZE, np.float64)
    v[common.SP_LAMBDA_L1] = cfg["lambda_l1"]
    v[common.SP_LAMBDA_L2] = cfg["lambda_l2"]
    v[common.SP_MIN_GAIN_TO_SPLIT] = cfg["min_gain_to_split"]
    v[common.SP_MIN_DATA_IN_LEAF] = cfg["min_data_in_leaf"]
    v[common.SP_MIN_SUM_HESSIAN] = cfg["min_sum_hessian_in_leaf"]
    v[common.SP_MAX_DELTA_STEP] = cfg["max_delta_step"]
    v[common.SP_MAX_CAT_TO_ONEHOT] = cfg["max_cat_to_onehot"]
    v[common.SP_MAX_CAT_THRESHOLD] = cfg["max_cat_threshold"]
    v[common.SP_CAT_SMOOTH] = cfg["cat_smooth"]
    v[common.SP_CAT_L2] = cfg["cat_l2"]
    v[common.SP_MIN_DATA_PER_GROUP] = cfg["min_data_per_group"]
    v[common.SP_CAT_HIGH_ROWS] = cfg["cat_high_cardinality_rows"]
    v[common.SP_PATH_SMOOTH] = cfg["path_smooth"]
    v[common.SP_USE_MC] = 1.0 if cfg["monotone_constraints"] is not None else 0.0
    return v


class Boosting:
    """The boosting loop of one training: its state (scores, gradients, learner,
    grower, sampler, evaluator, callbacks, iterations) and one round.

    ``run`` is the TrainingRun, ``data`` the TrainingData, ``booster`` the
    model the trees go into, ``init_booster`` the model this training
    continues (or None).  ``comm`` connects the learners; ``row_comm`` sums
    over rows (the same as ``comm`` when rows are sharded, serial otherwise).
    """

    def __init__(
        self,
        run: TrainingRun,
        data: TrainingData,
        booster: Model,
        *,
        init_booster: Model | None,
        valid_sets: Sequence[Dataset] | None,
        valid_names: Sequence[str] | None,
        feval: Feval,
        callbacks: Iterable[Any] | None,
    ) -> None:
        self.cfg, self.train_set, self.data, self.booster = run.cfg, run.train_set, data, booster
        self.objective, self.custom_objective = run.objective, run.custom_objective
        self.k_out, self.comm, self.row_comm = run.k_out, run.comm, run.row_comm
        # kept for what a training Booster asks later (add_valid, update)
        self.training_run, self.init_booster = run, init_booster
        self.from_average = False  # (the starting scores are boost_from_average's)
        self.fobj_announced = False  # (boost_round: a callable objective was announced)
        self.scores = self._starting_scores(init_booster)
        eval_sets = make_eval_sets(
            run, data, self.scores, valid_sets, valid_names, booster, init_booster
        )
        if self.cfg["tree_learner"] == "feature" and self.comm.size > 1:
            # Replicated rows: metrics are computed by each rank on its own copy.
            for es in eval_sets:
                if es.dataset is not self.train_set:
                    check_same_rows(self.comm, es.dataset, f"validation set {es.name!r}")
        self.valid_evals = [es for es in eval_sets if es.dataset is not self.train_set]
        # LightGBM's valid sets of a training Booster (eval_valid), in order: train's
        # validation sets but the training set, then those of add_valid
        self.valid_list = list(self.valid_evals)
        self.evaluator = Evaluator(
            eval_sets, self.cfg, self.objective, self.k_out, self.row_comm, feval
        )
        self._prepare(callbacks, resumed=init_booster is not None)
        self._prepare_schedule(init_booster)
        self._log_start()

    def _starting_scores(self, init_booster: Model | None) -> np.ndarray:
        """Raw scores (k_out, n): init_score, or an init model's raw predictions,
        or boost_from_average."""
        cfg, data, train_set, booster = self.cfg, self.data, self.train_set, self.booster
        scores = start_scores(data.init_score, data.n_samples, self.k_out)
        if init_booster is not None:
            booster.trees = _continued_trees(init_booster, cfg["learning_rate"])
            booster.init_score = init_booster.init_score.copy()
            if data.init_score is None:
                scores += init_model_scores(init_booster, train_set, self.k_out)
            if not same_bins(init_booster.bin_mapper, train_set.model_mapper):
                # The init model's trees have bin thresholds of other bins: the model
                # claims no bins at all, so it is never replayed on bins again.
                booster.bin_mapper = None
            train_set.release_raw_data()
        elif self.objective and cfg["boost_from_average"] and data.init_score is None:
            booster.init_score = self.objective.init_score(data.label, data.weight, self.row_comm)
            scores += booster.init_score[:, None]
            self.from_average = True
        return scores

    def _log_start(self) -> None:
        """LightGBM's info lines of a training's start, in its order: the metrics
        set up on the training data, the used features and their bins (GBDT::Init;
        this rank's rows, as each LightGBM machine's), the metrics set up on each
        validation set, then each class's starting score (BoostFromAverage)."""
        verbosity = self.cfg["verbosity"]
        if verbosity < 1:
            return
        data, train_set = self.data, self.train_set
        group = None if train_set.group is None else query_boundaries(train_set.group)
        self._log_metric_init(data.label, data.weight, group)
        # (no collective: verbosity may differ between ranks)
        # column blocks (feature-parallel): the global mapper is a BinMapper
        mapper: Any = data.global_mapper
        bins = np.diff(data.store.bin_offsets) if data.owner_of is None else mapper.n_bins
        log_lightgbm_info(f"Total Bins {int(np.sum(bins[self.splittable]))}", verbosity)
        log_lightgbm_info(
            f"Number of data points in the train set: {data.n_samples}, "
            f"number of used features: {len(self.splittable)}",
            verbosity,
        )
        for es in self.valid_evals:
            self._log_metric_init(es.label, es.weight, es.queries)
        if not self.from_average:
            return
        notes = self.objective.boost_from_score_notes  # type: ignore[union-attr]  # (from_average)
        for k, value in enumerate(self.booster.init_score):
            if k < len(notes):
                log_lightgbm_info(notes[k], verbosity)
            if abs(value) > _K_EPSILON:
                log_lightgbm_info(f"Start training from score {value:f}", verbosity)

    def _log_metric_init(
        self, label: np.ndarray, weight: np.ndarray | None, queries: np.ndarray | None
    ) -> None:
        """What LightGBM's metrics log when set up on a data set."""
        for metric in self.evaluator.metrics:
            for line in metric.init_log(label, weight, queries):
                log_lightgbm_info(line, self.cfg["verbosity"])

    def _splittable_features(self) -> np.ndarray:
        """The global features training may split on (dgbdt.data.store.splittable_features);
        feature-parallel column blocks: each rank flags its own."""
        data, cfg = self.data, self.cfg
        store = data.store
        if store.counts is None:
            local = np.diff(store.bin_offsets) > 1
        else:
            local = store.kept & splittable_features(
                store.counts, store.bin_offsets, cfg["min_data_in_leaf"], cfg["feature_pre_filter"]
            )
        if data.owner_of is None:
            return np.flatnonzero(local).astype(np.int32)
        flags = np.zeros(data.n_features_global, np.int64)
        flags[data.global_feature_indices] = local
        return np.flatnonzero(self.comm.total_int(flags)).astype(np.int32)

    def _prepare(self, callbacks: Iterable[Any] | None, resumed: bool) -> None:
        """The learner, grower, quantizer, buffers, sampler and callbacks of the loop."""
        cfg, data, k_out, n = self.cfg, self.data, self.k_out, self.data.n_samples
        self.gradients = np.empty((k_out, n), common.GRAD_DTYPE)
        self.hessians = np.empty((k_out, n), common.GRAD_DTYPE)
        # The Dataset's splittable features (feature_pre_filter): fixed for the training.
        self.splittable = self._splittable_features()
        self._build_parts()
        callbacks = prepare_callbacks(callbacks, cfg)
        self.before = [c for c in callbacks if getattr(c, "before_iteration", False)]
        self.after = [c for c in callbacks if not getattr(c, "before_iteration", False)]
        booster = self.booster
        self.first_iter = booster.current_iteration() if resumed else 0
        self.start_from_stump = (
            self.objective is not None
            and not cfg["boost_from_average"]
            and data.init_score is None
            and not resumed
        )
        self.end_iter = self.first_iter + cfg["num_iterations"]
        booster.best_iteration = 0
        for c in callbacks:
            if hasattr(c, "begin_training"):  # e.g. log_progress starts its clock
                c.begin_training(
                    cb.CallbackEnv(
                        booster, cfg, self.first_iter, self.first_iter, self.end_iter, None
                    )
                )

    def _build_parts(self) -> None:
        """What reads the tree and sampling parameters when it is built: the
        learner (with its split-params vector), the grower (constraints, the
        histogram kind), the quantizer and the sampler.  Built again when
        reset_parameter changes one of those parameters."""
        cfg, data, n = self.cfg, self.data, self.data.n_samples
        self.learner = make_learner(cfg, data, split_params_vector(cfg), self.comm)
        self.grower = TreeGrower(self.learner, data, cfg)
        self.quantizer = (
            GradientQuantizer(cfg, n, data.row_offset, self.row_comm)
            if cfg["use_quantized_grad"]
            else None
        )
        self.sampler = Sampler(
            cfg,
            n,
            data.row_offset,
            self.splittable,
            label=data.label,
            row_comm=self.row_comm,
            queries=data.queries,
        )

    def _prepare_schedule(self, init_booster: Model | None) -> None:
        """The reset_parameter callbacks, which the loop runs itself (before the
        other before-iteration callbacks), and the global iterations their
        rounds count over: this training's, or when resuming a snapshot of an
        interrupted training, from that training's first iteration on
        (dgbdt.boosting.callbacks.reset_parameter)."""
        self.resets, self.before = cb.split_resets(self.before)
        self.schedule, self.resumed_schedule = (self.first_iter, self.end_iter), False
        # with a learning-rate schedule each tree records its own (LightGBM's shrinkage=)
        self.records_shrinkage = any("learning_rate" in c.names for c in self.resets)
        if not self.resets:
            return
        interrupted = cb.interrupted_schedule(init_booster)
        if interrupted is not None:
            self.schedule, self.resumed_schedule = (interrupted[0], self.end_iter), True
        # until training ends: what a snapshot resumes from
        self.booster.config[cb.SCHEDULE_KEY] = list(self.schedule)

    def _scheduled_values(self, it: int) -> tuple[dict[str, Any], dict[str, Any]]:
        """(changed, scheduled) parameters of iteration ``it`` by the reset_parameter
        callbacks, validated (dgbdt.boosting.callbacks.resolve_reset)."""
        first, end = self.schedule
        values: dict[str, Any] = {}
        for c in self.resets:
            values.update(c.values_at(it - first, end - first, self.resumed_schedule))
        try:
            return cb.resolve_reset(self.cfg, values, self.objective)
        except (ValueError, TypeError) as exc:
            raise type(exc)(f"reset_parameter, iteration {it}: {exc}") from exc

    def _reset_parameters(self, it: int) -> None:
        """reset_parameter's values for iteration ``it``: computed, validated, agreed
        over the ranks (one collective), and applied."""
        if not self.resets:
            return
        if self.comm.size == 1:
            changed, _ = self._scheduled_values(it)
        else:
            changed = _agreed_reset(self.comm, it, self._scheduled_values)
        if changed:
            self.apply_reset(it, changed)
            # LightGBM's reset_parameter callback updates Booster.params too (its names)
            for c in self.resets:
                given = zip(c.names, c.kwargs, strict=True)
                self.booster.params.update({k: changed[n] for n, k in given if n in changed})

    def apply_reset(self, it: int, changed: dict[str, Any]) -> None:
        """From iteration ``it`` on, the ``changed`` resolved values
        (dgbdt.boosting.callbacks.resolve_reset): in the params (env.params of
        the callbacks), the model's record, and what was built from them."""
        self.cfg.update(changed)
        self.booster.config.update(changed)
        if any(k in cb.REBUILT_KEYS for k in changed):
            self._build_parts()
            if not self.sampler.goss:
                # The bag of iteration it is the one of it - it % bagging_freq at the
                # current fraction: drawn now, as a run resumed here draws it.
                self.sampler.start_round(it, it)
        if "num_threads" in changed:
            numba.set_num_threads(threads_for(self.cfg, self.comm.local_size))
        if "time_out" in changed:
            self.comm.set_time_out(self.cfg["time_out"])

    def run(self) -> Model:
        """Every round, until the last one or a stop; returns the booster."""
        # The first iteration compiles kernels on a cold Numba cache: its collectives
        # wait at least the slow-phase allowance, whatever time_out says.
        first_phase = contextlib.ExitStack()
        first_phase.enter_context(
            self.comm.slow_phase("the first iteration (a cold Numba compile)")
        )
        with first_phase:
            for it in range(self.first_iter, self.end_iter):
                if it == self.first_iter + 1:
                    first_phase.close()
                if self.one_iteration(it):
                    break
        self.booster.config.pop(cb.SCHEDULE_KEY, None)  # finished: nothing to resume
        return self.booster

    def one_iteration(self, it: int) -> bool:
        """One boosting round; True when training ends here."""
        booster = self.booster
        self._reset_parameters(it)
        env = cb.CallbackEnv(booster, self.cfg, it, self.first_iter, self.end_iter, None)
        for c in self.before:
            c(env)
        new_trees, stumps = self.boost_round(it)
        if not (stumps and booster.trees):
            # Nothing left to split: LightGBM keeps these stumps only when the model
            # has no trees yet (asking the model, not this run's first iteration,
            # makes a resumed run do what an uninterrupted one does).  Its Python
            # train() goes on all the same: evaluation, callbacks, and the next
            # rounds try again (a new bag or feature sample may split).
            booster.add_trees(new_trees)
        return self.after_iteration(it)

    def boost_round(
        self, it: int, fobj: Callable[..., Any] | None = None, redraw: bool = False
    ) -> tuple[list[Tree], bool]:
        """Round ``it``'s gradients (of ``fobj(preds, train_set)`` when given, else
        the objective's), bag and trees, added to the scores but not yet to the
        model; returns (trees, whether every one is a stump).  ``redraw`` draws
        the round's bag even between bagging rounds (Booster.update: a rolled-back
        iteration may have crossed one)."""
        fobj = fobj or self.custom_objective
        if fobj and not self.fobj_announced:
            # LightGBM's Python Booster sets objective=none at its first update with
            # a callable, and its C++ Booster says so
            log_lightgbm_info("Using self-defined objective function", self.cfg["verbosity"])
            self.fobj_announced = True
        if fobj:
            _custom_gradients(
                fobj, self.scores, self.train_set, self.k_out, self.gradients, self.hessians
            )
        else:
            # (no custom objective: an objective)
            self.objective.gradients(  # type: ignore[union-attr]
                self.scores,
                self.data.label,
                self.data.weight,
                self.gradients,
                self.hessians,
                iteration=it,
            )
        if it == self.first_iter:
            _check_first_gradients(self, custom=fobj is not None)
        # GOSS amplifies rows of the gradients in place: after they are computed
        # (custom objectives' too), before any tree quantizes or grows on them.
        first = it if redraw else self.first_iter
        self.sampler.start_round(it, first, self.gradients, self.hessians)
        new_trees = [self.grow_tree(it * self.k_out + k, k) for k in range(self.k_out)]
        stumps = all(t.n_leaves == 1 for t in new_trees)
        if stumps:  # LightGBM's GBDT::TrainOneIter, every such round
            log_lightgbm_warning(_NO_SPLIT, self.cfg["verbosity"])
        return new_trees, stumps

    def grow_tree(self, tree_index: int, k: int) -> Tree:
        """Tree ``k`` of this round: grown, renewed, shrunk, and added to the scores."""
        cfg, grower, comm, data = self.cfg, self.grower, self.comm, self.data
        g, h = self.gradients[k], self.hessians[k]
        comm.stats.begin_tree()
        features = self.sampler.features(tree_index)
        quant = self.quantizer.quantize(g, h, tree_index) if self.quantizer else None
        tree = grower.grow(g, h, self.sampler.bag, features, quant, tree_index)
        if quant is not None and cfg["quant_train_renew_leaf"] and tree.n_leaves > 1:
            renew_leaf_values(tree, grower, g, h, self.row_comm, cfg)
        objective = self.objective
        if objective is not None and objective.renews_leaves and tree.n_leaves > 1:
            # (renews_leaves: the objective has renew_leaf_values)
            objective.renew_leaf_values(  # type: ignore[attr-defined]
                tree, grower, data.label, self.scores[k], data.weight, self.row_comm
            )
        if tree.n_leaves == 1:
            # A tree that cannot split adds nothing (LightGBM never fits its leaf; a
            # first one is a constant tree at the starting score, which dgbdt keeps
            # apart in init_score).
            tree.leaf_value[0] = 0.0
            if not self.booster.trees and self.start_from_stump:
                self._start_from_stump(k)
        tree.scale(cfg["learning_rate"])
        if self.records_shrinkage:
            tree.shrinkage = float(cfg["learning_rate"])
        _update_scores(tree, grower, self.learner, data, self.sampler.bagged, self.scores[k])
        comm.stats.end_tree()  # validation traffic counts in the totals, not per tree
        for es in self.valid_evals:
            # (validation sets are constructed: they have a store)
            self.learner.add_tree_scores(tree, es.dataset.store, data.missing_bins, es.scores[k])  # type: ignore[arg-type]
        return tree

    def _start_from_stump(self, k: int) -> None:
        """A first tree that cannot split without boost_from_average: LightGBM then
        starts class ``k`` from the objective's automatic score after all (gbdt.cpp
        TrainOneIter), for the training and the validation scores."""
        data = self.data
        # (start_from_stump: an objective)
        value = self.objective.init_score(data.label, data.weight, self.row_comm)[k]  # type: ignore[union-attr]
        notes = self.objective.boost_from_score_notes  # type: ignore[union-attr]
        if k < len(notes):  # LightGBM's BoostFromScore logs it on this path too
            log_lightgbm_info(notes[k], self.cfg["verbosity"])
        self.booster.init_score[k] = value
        self.scores[k] += value
        for es in self.valid_evals:
            es.scores[k] += value

    def after_iteration(self, it: int) -> bool:
        """Evaluation, the after-iteration callbacks and the agreed early stop; True
        when training stops here."""
        cfg, booster, comm = self.cfg, self.booster, self.comm
        results = self.evaluator.results()
        env = cb.CallbackEnv(booster, cfg, it, self.first_iter, self.end_iter, results)
        stop = None
        try:
            for c in self.after:
                c(env)
        except cb.EarlyStopException as exc:
            stop = exc
        # Rank 0 may still be writing a snapshot: the others wait longer for it.
        writing = any(c.writes_at(it) for c in self.after if hasattr(c, "writes_at"))
        with comm.slow_phase("rank 0 writing a snapshot") if writing else contextlib.nullcontext():
            stop_at = agreed_stop(comm, stop)
        if stop_at is not None:
            booster.best_iteration = stop_at + 1
            booster.best_score = score_dict(stop.best_score if stop else results)
            return True
        booster.best_score = score_dict(results)  # LightGBM: the last round's results
        return False

    # -- a training Booster's requests (dgbdt.Booster.update & co.) -----------------
    def update(self, fobj: Callable[..., Any] | None = None) -> bool:
        """One more iteration, LightGBM's Booster.update: the next iteration of
        the model, with ``fobj``'s gradients when given; no callbacks, no
        evaluation.  Returns True when every new tree is a stump: those are
        added only to a model without trees (LightGBM's TrainOneIter)."""
        it = self.booster.current_iteration()
        self._reset_parameters(it)
        phase = (
            self.comm.slow_phase("the first iteration (a cold Numba compile)")
            if it == self.first_iter
            else contextlib.nullcontext()
        )
        with phase:
            new_trees, stumps = self.boost_round(it, fobj, redraw=True)
        if stumps and self.booster.trees:
            return True
        self.booster.add_trees(new_trees)
        return stumps

    def rollback(self) -> None:
        """Remove the last iteration's trees and take them off the training and
        validation scores (LightGBM's GBDT::RollbackOneIter); the iterations of
        an init model stay, as LightGBM's do."""
        booster, k_out = self.booster, self.k_out
        if booster.current_iteration() <= self.first_iter:
            return
        for k, tree in enumerate(booster.trees[-k_out:]):
            negated = copy.copy(tree)
            negated.leaf_value = -tree.leaf_value
            missing = self.data.missing_bins
            self.learner.add_tree_scores(negated, self.data.store, missing, self.scores[k])
            for es in self.valid_evals:
                # (validation sets are constructed: they have a store)
                self.learner.add_tree_scores(negated, es.dataset.store, missing, es.scores[k])  # type: ignore[arg-type]
        del booster.trees[-k_out:]
        booster.add_trees([])  # forgets the flattened trees

    def add_valid(self, dataset: Dataset, name: str) -> None:
        """Evaluate ``dataset`` as validation set ``name`` from now on (LightGBM's
        Booster.add_valid): binned with the training bins, its scores those of
        the model so far (its init_score, or the init model's and the starting
        score, then this training's trees)."""
        if dataset is self.train_set:
            es = self.training_eval_set(name)
        else:
            if self.cfg["tree_learner"] == "feature" and self.comm.size > 1:
                check_same_rows(self.comm, dataset, f"validation set {name!r}")
            es = make_eval_sets(
                self.training_run,
                self.data,
                self.scores,
                [dataset],
                [name],
                self.booster,
                self.init_booster,
            )[-1]
            first_tree = 0 if self.init_booster is None else self.init_booster.num_trees()
            trees = self.booster.trees[first_tree:]
            for i, tree in enumerate(trees):
                k = (first_tree + i) % self.k_out
                self.learner.add_tree_scores(
                    tree,
                    dataset.store,  # type: ignore[arg-type]  # constructed by make_eval_sets
                    self.data.missing_bins,
                    es.scores[k],
                )
            self.valid_evals.append(es)
        self.valid_list.append(es)

    def training_eval_set(self, name: str) -> EvalSet:
        """The training set as an evaluated set named ``name`` (live scores)."""
        data, group = self.data, self.train_set.group
        queries = None if group is None else query_boundaries(group)
        return EvalSet(name, self.train_set, self.scores, data.label, data.weight, queries)

    def evaluate(
        self, eval_sets: list[EvalSet], feval: Feval = None
    ) -> list[tuple[str, str, float, bool]]:
        """The metrics (and ``feval``) on ``eval_sets`` now, over every rank's rows."""
        evaluator = Evaluator(eval_sets, self.cfg, self.objective, self.k_out, self.row_comm, feval)
        return evaluator.results()


def _continued_trees(init_booster: Model, learning_rate: float) -> list[Tree]:
    """The init model's trees, each keeping its own shrinkage when this training's
    learning rate is another (copies: the init model is left as it is)."""
    own_rate = init_booster.config.get("learning_rate")
    if own_rate is None or own_rate == learning_rate:
        return list(init_booster.trees)
    trees = []
    for tree in init_booster.trees:
        if tree.shrinkage is None:
            tree = copy.copy(tree)
            tree.shrinkage = float(own_rate)
        trees.append(tree)
    return trees


def _custom_gradients(
    fobj: Callable[..., Any],
    scores: np.ndarray,
    train_set: Dataset,
    k_out: int,
    gradients: np.ndarray,
    hessians: np.ndarray,
) -> None:
    """Gradients and hessians of a custom objective ``fobj(preds, train_set)``,
    checked, into the (k_out, n) buffers."""
    preds = scores[0] if k_out == 1 else scores.T.copy()
    out = fobj(preds, train_set)
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        raise TypeError(
            f"The custom objective {getattr(fobj, '__name__', fobj)!r} must return "
            f"(grad, hess), got {type(out).__name__}"
        )
    grad, hess = (
        _numeric(part, what) for part, what in zip(out, ("gradients", "hessians"), strict=True)
    )
    if not (np.all(np.isfinite(grad)) and np.all(np.isfinite(hess))):
        raise ValueError("The custom objective returned non-finite gradients or hessians")
    n = scores.shape[1]
    if (
        hess.shape != grad.shape
        or grad.size != n * k_out
        or grad.shape not in ((n,), (n, k_out), (n * k_out,))
    ):
        # LightGBM's words (Booster.__boost), then the shapes accepted
        raise ValueError(
            f"Lengths of gradient ({grad.size}) and Hessian ({hess.size}) don't match "
            f"training data length ({n}) * number of models per one iteration ({k_out}): "
            f"the custom objective returned shapes {grad.shape} and {hess.shape}; "
            f"expected ({n},) or ({n}, {k_out})"
        )
    if grad.ndim == 1 and k_out > 1:
        # LightGBM's flat layout: class-major, all rows of class 0 first
        gradients[:], hessians[:] = grad.reshape(k_out, n), hess.reshape(k_out, n)
    else:
        gradients[:] = grad.reshape(n, k_out).T
        hessians[:] = hess.reshape(n, k_out).T


def _numeric(values: Any, what: str) -> np.ndarray:
    """A custom objective's gradients or hessians as float64 (complex refused)."""
    arr = np.asarray(values)
    if arr.dtype.kind not in "biuf":
        raise TypeError(
            f"The custom objective's {what} must be real numbers, got dtype {arr.dtype}"
        )
    return arr.astype(np.float64)


#: A weight from which a float32 gradient (at most about 3.4e38) leaves less
#: than 1e18 for the loss's own derivative.
_HUGE_WEIGHT = 1e20
#: An objective parameter this many times its default (in size) is a suspect.
_FAR_FROM_DEFAULT = 100.0


def _check_first_gradients(loop: Boosting, custom: bool) -> None:
    """Gradients are float32: the first round's must be finite (LightGBM would
    grow empty trees silently); the error names what most likely overflowed
    them (``custom``: a custom objective computed them)."""
    finite = np.isfinite(loop.gradients).all(axis=0) & np.isfinite(loop.hessians).all(axis=0)
    if finite.all():
        return
    rows = np.flatnonzero(~finite)
    raise ValueError(
        "The starting scores give non-finite gradients (float32: beyond about 3.4e38) at "
        f"{len(rows)} of {loop.gradients.shape[1]} rows (the first: row "
        f"{loop.data.row_offset + int(rows[0])}): check "
        + "; ".join(_overflow_causes(loop, custom, rows))
    )


def _overflow_causes(loop: Boosting, custom: bool, rows: np.ndarray) -> list[str]:
    """What most likely made the gradients of ``rows`` non-finite: the given
    starting scores, a custom objective, the objective's parameters far from
    their defaults (name=value), huge weights at those rows."""
    causes = []
    if loop.data.init_score is not None:
        causes.append("init_score (values beyond about 3.4e38?)")
    elif loop.init_booster is not None:
        causes.append("the init model's scores")
    if custom or loop.objective is None:
        causes.append("the custom objective's gradients and hessians")
    else:
        for name in loop.objective.gradient_params:
            value, default = loop.cfg[name], PARAMS[name].default
            if isinstance(default, float) and abs(value) >= _FAR_FROM_DEFAULT * abs(default):
                causes.append(f"{name}={value!r} (default {default!r})")
    weight = loop.data.weight
    if weight is not None:
        largest = float(np.abs(weight[rows]).max())
        if largest >= _HUGE_WEIGHT:
            causes.append(f"the sample weights (up to {largest:g} at those rows)")
    return causes or ["the labels (huge values?)"]


def _update_scores(
    tree: Tree,
    grower: TreeGrower,
    learner: SerialLearner,
    data: TrainingData,
    bagged: bool,
    scores: np.ndarray,
) -> None:
    if bagged:
        # Out-of-bag rows were not partitioned: walk the tree for every row.
        learner.add_tree_scores(tree, data.store, data.missing_bins, scores)
    else:
        add_leaf_values(
            scores,
            grower.sample_indices,
            grower.leaf_begin[: tree.n_leaves],
            grower.leaf_count[: tree.n_leaves],
            tree.leaf_value,
        )


def agreed_stop(comm: SerialComm, stop: cb.EarlyStopException | None) -> int | None:
    """The iteration every rank stops at, or None: any rank's early stop (with
    global metrics they all stop together) ends every rank's loop at the
    earliest best iteration, so no rank is left in a collective alone."""
    if comm.size == 1:
        return None if stop is None else stop.best_iteration
    flag, best = comm.least_int(
        [
            -1 if stop is not None else 0,
            stop.best_iteration if stop is not None else np.iinfo(np.int64).max,
        ]
    )
    return None if flag == 0 else int(best)


def _agreed_reset(
    comm: SerialComm,
    it: int,
    scheduled_values: Callable[[int], tuple[dict[str, Any], dict[str, Any]]],
) -> dict[str, Any]:
    """The changed parameters of ``scheduled_values(it)``, the same on every rank:
    each rank's values (or the error it raised) are compared as one 8-byte
    digest per rank; on a difference every rank raises the same ValueError
    naming the parameter, the iteration and the ranks, and an error every rank
    raised alike is raised as agreed (dgbdt.distributed.comm.agreed): none aborts."""
    error: Exception | None
    mine: dict[str, Any] | None
    changed: dict[str, Any]
    error, mine, changed = None, None, {}
    try:
        changed, scheduled = scheduled_values(it)
        # per-process settings (threads, logging, time_out) may differ
        mine = {k: v for k, v in scheduled.items() if k not in PER_PROCESS_KEYS}
        text = repr(sorted(mine.items()))
    except Exception as exc:
        error, text = exc, f"error {type(exc).__name__}: {exc}"
    digest = np.frombuffer(hashlib.sha256(text.encode()).digest()[:8], np.int64)
    every = comm.per_rank(int(digest[0]))
    if np.any(every != every[0]):
        outcome = ("gave", mine) if error is None else ("raised", f"{error!r}")
        raise agreed(ValueError(_reset_mismatch(it, every, comm.per_rank_objects(outcome))))
    if error is not None:
        raise agreed(error)
    return changed


def _reset_mismatch(it: int, every: np.ndarray, outcomes: list[tuple[str, Any]]) -> str:
    """The message of ranks whose reset_parameter values differ from rank 0's."""
    ranks = [r for r in range(len(every)) if every[r] != every[0]]
    r = ranks[0]
    (kind0, v0), (kind, v) = outcomes[0], outcomes[r]
    if kind0 == "raised" or kind == "raised":
        show = {"raised": "raised {}", "gave": "gave {}"}
        detail = f"rank 0 {show[kind0].format(v0)}, rank {r} {show[kind].format(v)}"
    else:
        name = next(k for k in [*v0, *v] if repr(v0.get(k)) != repr(v.get(k)))
        detail = f"{name!r} is {v0.get(name)!r} on rank 0 but {v.get(name)!r} on rank {r}"
    return (
        f"reset_parameter gave ranks {ranks} other values than rank 0 at iteration {it}: "
        f"{detail}. Every rank must get the same values: make the schedule depend on "
        "the round only"
    )


def prepare_callbacks(callbacks: Iterable[Any] | None, cfg: dict[str, Any]) -> list[Any]:
    """The user's callbacks, with early stopping when the params ask for it, in
    their order."""
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


# --------------------------------------------------------------------------- #
# refit (LightGBM's GBDT::RefitTree and SerialTreeLearner::FitByExistingTree)
# --------------------------------------------------------------------------- #
#: LightGBM's kEpsilon: the hessian sum of a refitted leaf starts from it
K_EPSILON = 1e-15


def refit_leaf_values(
    booster: Model, data: Dataset, leaf_preds: npt.ArrayLike, cfg: dict[str, Any]
) -> list[np.ndarray]:
    """Each tree's new leaf values, refitted on the Dataset ``data`` (its label,
    weight, init_score, group), whose rows fall in leaves ``leaf_preds``
    (n, n_trees), with ``cfg`` (resolved by Booster.refit from
    :func:`refit_params`, its ``refit_decay_rate`` the refit's ``decay_rate``).

    As LightGBM's RefitTree: iteration by iteration, the objective's gradients
    at the current scores (the data's init_score, or 0, at the start), then
    each tree of the iteration: ``decay * old + (1 - decay) * output * shrinkage``
    per leaf, and the scores move by the new tree.  dgbdt keeps the starting
    score apart (``booster.init_score``); LightGBM has it in the first trees, so
    it is refitted with them here as there (and kept apart again)."""
    objective = _refit_objective(cfg, data)
    k, n = booster.num_tree_per_iteration, data.n_samples
    leaf_preds = np.asarray(leaf_preds, np.intp)
    scores = start_scores(data.init_score, n, k)
    gradients = np.empty((k, n), common.GRAD_DTYPE)
    hessians = np.empty((k, n), common.GRAD_DTYPE)
    values = []
    for it in range(booster.current_iteration()):
        # (_refit_objective refused data without a label)
        objective.gradients(scores, data.label, data.weight, gradients, hessians, iteration=it)  # type: ignore[arg-type]
        for c in range(k):
            i = it * k + c
            tree, leaves = booster.trees[i], leaf_preds[:, i]
            bias = float(booster.init_score[c]) if it == 0 else 0.0
            new = _refit_tree(tree, leaves, gradients[c], hessians[c], cfg, bias)
            scores[c] += new[leaves]
            values.append(new - bias)
    return values


def refit_params(booster: Model, dataset_params: dict[str, Any] | None) -> dict[str, Any]:
    """The parameters of a refit, not yet resolved: the model's params and
    objective, updated by ``dataset_params``."""
    if booster.objective in (None, "custom", "none"):
        raise ValueError(
            f"Cannot refit a model of objective {booster.objective!r}: refit needs the "
            "objective's gradients (LightGBM: cannot refit due to null objective function)"
        )
    known = {k: v for k, v in booster.config.items() if k in ALIASES}
    given = {**known, **booster.objective_params, **(dataset_params or {})}
    given.update(objective=booster.objective, num_class=booster.num_class)
    return given


def _refit_objective(cfg: dict[str, Any], data: Dataset) -> Objective:
    """The objective of a refit (``cfg`` resolved) ready for ``data``; one process."""
    if data.label is None:
        raise ValueError("refit needs the label of the new data")
    objective, comm = make_objective(cfg), SerialComm()
    assert objective is not None  # refit_params refused a custom objective
    objective.check_labels(data.label, data.weight)
    objective.set_label_weights(data.label, data.weight, comm)
    if objective.uses_queries:
        queries = Queries.of(data, comm, "the refit data")
        # (uses_queries: a ranking objective, which has set_queries)
        objective.set_queries(queries, data.label, data.position, comm)  # type: ignore[attr-defined]
    return objective


def _refit_tree(
    tree: Tree,
    leaves: np.ndarray,
    gradients: np.ndarray,
    hessians: np.ndarray,
    cfg: dict[str, Any],
    bias: float,
) -> np.ndarray:
    """One tree's refitted leaf values (the starting score ``bias`` in them)."""
    n_leaves = tree.n_leaves
    sum_g = np.bincount(leaves, weights=gradients.astype(np.float64), minlength=n_leaves)
    sum_h = K_EPSILON + np.bincount(leaves, weights=hessians.astype(np.float64), minlength=n_leaves)
    count = np.bincount(leaves, minlength=n_leaves).astype(np.float64)
    output = _leaf_output(sum_g, sum_h, count, tree, cfg)
    shrinkage = tree_shrinkage(tree, bias, cfg["learning_rate"])  # as LightGBM's model has it
    decay = cfg["refit_decay_rate"]
    return decay * (tree.leaf_value + bias) + (1.0 - decay) * (output * shrinkage)


def _leaf_output(
    sum_g: np.ndarray, sum_h: np.ndarray, count: np.ndarray, tree: Tree, cfg: dict[str, Any]
) -> np.ndarray:
    """LightGBM's CalculateSplittedLeafOutput<USE_L1, USE_MAX_OUTPUT, smoothing>:
    -ThresholdL1(G, l1) / (H + l2) (XGBoost eq. 5 with L1 soft-thresholding),
    capped at max_delta_step, then path-smoothed for leaves but leaf 0."""
    l1, l2 = cfg["lambda_l1"], cfg["lambda_l2"]
    g = np.sign(sum_g) * np.maximum(np.abs(sum_g) - l1, 0.0)
    output = -g / (sum_h + l2)
    mds = cfg["max_delta_step"]
    if mds > 0:
        output = np.where(np.abs(output) > mds, np.sign(output) * mds, output)
    smooth = cfg["path_smooth"]
    if smooth > K_EPSILON and tree.n_leaves > 1:
        # LightGBM (FitByExistingTree) passes tree->leaf_parent(i), the parent's
        # node *index*, where the parent's output belongs: followed here, so
        # that refitted models equal LightGBM's.
        parent = tree.leaf_parent.astype(np.float64)
        r = count / smooth
        smoothed = output * r / (r + 1) + parent / (r + 1)
        output = np.where(np.arange(len(output)) > 0, smoothed, output)
    return output
