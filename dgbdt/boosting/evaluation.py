"""Evaluation: the data sets scored each round, their starting scores (init
score, init model), and the metrics and fevals over every rank's rows.

Additive metrics sum over the ranks (exact); AUC and custom fevals, which are
not sums over rows, gather labels, predictions and weights first (one helper,
``_all_rows``).  The ranking metrics (ndcg, map) are sums over queries, whole
on each rank: they add up over the ranks too.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..data.binning import WideBinMapper
from ..data.dataset import Dataset
from ..distributed.comm import agreed
from ..log import DGBDTError
from ..objective.metrics import get_metric
from ..objective.objectives import CustomObjective
from ..objective.ranking import query_boundaries

if TYPE_CHECKING:
    from ..data.binning import BinMapper
    from ..distributed.comm import SerialComm
    from ..models.model import Model
    from ..objective.metrics import Metric
    from ..objective.objectives import Objective
    from .loop import TrainingData, TrainingRun

#: One evaluation result: (data name, metric name, value, is_higher_better).
Result = tuple[str, str, float, bool]


class EvalSet:
    """One data set evaluated each round: its name, Dataset, label and weight
    (the training set's are the training's own view of them), its raw
    scores (k_out, n), updated as trees are added, and its query row
    boundaries ``queries`` (int64, this rank's queries; None without groups)."""

    def __init__(
        self,
        name: str,
        dataset: Dataset,
        scores: np.ndarray,
        label: np.ndarray,
        weight: np.ndarray | None,
        queries: np.ndarray | None = None,
    ) -> None:
        self.name, self.dataset, self.scores = name, dataset, scores
        self.label, self.weight, self.queries = label, weight, queries


def _queries(dataset: Dataset) -> np.ndarray | None:
    """The query row boundaries of a Dataset's group, or None without one."""
    return None if dataset.group is None else query_boundaries(dataset.group)


def make_eval_sets(
    run: TrainingRun,
    data: TrainingData,
    train_scores: np.ndarray,
    valid_sets: Sequence[Dataset] | None,
    valid_names: Sequence[str] | None,
    booster: Model,
    init_booster: Model | None,
) -> list[EvalSet]:
    """Data sets to evaluate each round; the training set (``data``: the training's
    view of it) shares the live training scores ``train_scores``."""
    train_set = run.train_set
    out = []
    for name, ds in _named_sets(run, valid_sets, valid_names, booster, init_booster):
        if ds is train_set:
            out.append(EvalSet(name, ds, train_scores, data.label, data.weight, _queries(ds)))
            continue
        scores = start_scores(ds.init_score, ds.n_samples, run.k_out)
        if ds.init_score is None:
            if init_booster is not None:
                scores = init_model_scores(init_booster, ds, run.k_out)
            else:
                scores += booster.init_score[:, None]
        ds.release_raw_data()
        assert ds.label is not None  # _construct_valid checked it
        out.append(EvalSet(name, ds, scores, ds.label, ds.weight, _queries(ds)))
    return out


def _named_sets(
    run: TrainingRun,
    valid_sets: Sequence[Dataset] | None,
    valid_names: Sequence[str] | None,
    booster: Model,
    init_booster: Model | None,
) -> list[tuple[str, Dataset]]:
    """(name, Dataset) of each evaluated set; validation sets constructed (binned
    like the training set)."""
    train_set = run.train_set
    sets = []
    if run.cfg["is_provide_training_metric"]:
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
            _construct_valid(vs, name, run, keep_raw=init_booster is not None)
        sets.append((name, vs))
    return sets


def _construct_valid(vs: Dataset, name: str, run: TrainingRun, keep_raw: bool) -> None:
    """Bin validation set ``vs`` with the training set's bins (its raw data kept
    for an init model's predictions when ``keep_raw``)."""
    train_set = run.train_set
    vs.use_training_bins(train_set)
    vs.construct(run.params, None, keep_raw_data=keep_raw)
    if vs.bin_mapper is not train_set.bin_mapper:
        raise ValueError(
            f"Validation set {name!r} was binned with another reference; "
            "create it with reference=train_set"
        )
    if vs.label is None:
        raise ValueError(f"Validation set {name!r} has no label")


def start_scores(init_score: Any, n: int, k_out: int) -> np.ndarray:
    """Raw scores (k_out, n) from an init score (None: zeros)."""
    scores = np.zeros((k_out, n), np.float64)
    if init_score is not None:
        init = np.asarray(init_score, np.float64)
        if init.size != n * k_out:
            raise ValueError(
                f"init_score has {init.size} values; expected {n * k_out} "
                f"({n} rows x {k_out} classes)"
            )
        # LightGBM's flat layout is class-major; a 2-D array is (n_samples, n_classes).
        scores += init.reshape(n, k_out).T if init.ndim == 2 else init.reshape(k_out, n)
    return scores


def same_bins(a: BinMapper | WideBinMapper | None, b: BinMapper | WideBinMapper | None) -> bool:
    """Whether two bin mappers (either may be None) bin alike: wide ones
    (dgbdt.data.binning.WideBinMapper) by their used columns and the bins of those."""
    if isinstance(a, WideBinMapper) or isinstance(b, WideBinMapper):
        return (
            isinstance(a, WideBinMapper)
            and isinstance(b, WideBinMapper)
            and a.n_features == b.n_features
            and np.array_equal(a.used, b.used)
            and same_bins(a.inner, b.inner)
        )
    return (
        a is not None
        and b is not None
        and a.n_features == b.n_features
        and np.array_equal(a.nan_bins, b.nan_bins)
        and all(np.array_equal(x, y) for x, y in zip(a.upper_bounds, b.upper_bounds, strict=True))
    )


def init_model_scores(init_booster: Model, dataset: Dataset, k_out: int) -> np.ndarray:
    """Raw scores of an init model on a constructed data set.

    Predicted from the raw values, kept until this point, as LightGBM does:
    the trees' bin thresholds mean something only for data binned like the
    model (replayed on the bins when the raw values were freed).
    """
    raw_data = dataset.raw_data  # (get_data gives a binary file's path)
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
    if same_bins(init_booster.bin_mapper, dataset.model_mapper):
        return _binned_raw_scores(init_booster, dataset, k_out)
    raise DGBDTError(  # (LightGBM's words, which has no bins to replay on)
        "Unknown format of training data: init_model was binned differently from this "
        "Dataset, whose raw data was "
        "freed: create the Dataset with free_raw_data=False"
    )


def _binned_raw_scores(booster: Model, dataset: Dataset, k_out: int) -> np.ndarray:
    """Raw scores of ``booster``'s trees on a binned data set."""
    scores = np.zeros((k_out, dataset.n_samples), np.float64)
    scores += booster.init_score[:, None]
    assert dataset.bin_mapper is not None and dataset.store is not None  # constructed
    missing_bins = dataset.bin_mapper.missing_bins
    for i, tree in enumerate(booster.trees):
        # (a wide store maps the trees' split columns to its features: BinStore.features_of)
        tree.add_binned_scores(dataset.store, missing_bins, scores[i % k_out])
    return scores


class Evaluator:
    """Each round's results, ``(data name, metric name, value, is_higher_better)``,
    of the metrics and fevals on every eval set, over every rank's rows
    (``comm``: the row communicator)."""

    def __init__(
        self,
        eval_sets: list[EvalSet],
        cfg: dict[str, Any],
        objective: Objective | None,
        k_out: int,
        comm: SerialComm,
        feval: Callable[..., Any] | Sequence[Callable[..., Any]] | None,
    ) -> None:
        self.eval_sets, self.cfg, self.objective, self.k_out = eval_sets, cfg, objective, k_out
        self.comm = comm
        self.metrics = [get_metric(m) for m in cfg["metric"]]
        self.names = [m.result_names(cfg) for m in self.metrics]
        _check_queries(comm, eval_sets, self.metrics)
        # (an empty list still gathers a distributed set's rows: what feval=[] costs)
        self.feval_given = feval is not None
        self.fevals: list[Any] = list(feval) if isinstance(feval, (list, tuple)) else [feval]

    def results(self) -> list[Result]:
        """This round's results on every eval set, in order."""
        results = []
        for es in self.eval_sets:
            results += self._results_on(es)
        return results

    def _results_on(self, es: EvalSet) -> list[Result]:
        objective, comm = self.objective, self.comm
        raw = es.scores.T
        preds = objective.transform(raw) if objective else CustomObjective.output(raw, {})
        results = []
        for m, names in zip(self.metrics, self.names, strict=True):
            kw = m.options_from(self.cfg)
            if m.queries:
                kw["queries"] = es.queries
            value = global_metric(comm, m, es.label, raw if m.raw_scores else preds, es.weight, kw)
            values = value if isinstance(value, list) else [value]
            results += [
                (es.name, n, v, m.higher_better) for n, v in zip(names, values, strict=True)
            ]
        if self.feval_given:
            fpreds = raw[:, 0] if self.k_out == 1 and objective is None else preds
            fdata = es.dataset
            if comm.size > 1:
                label, fpreds, weight = _all_rows(comm, es.label, fpreds, es.weight)
                group = _all_groups(comm, es.dataset.group)
                fdata = Dataset(np.empty((len(label), 0)), label=label, weight=weight, group=group)
            for fn in self.fevals:
                results += [(es.name, *r) for r in _feval_results(fn, fn(fpreds, fdata))]
        return results


def _check_queries(comm: SerialComm, eval_sets: list[EvalSet], metrics: list[Metric]) -> None:
    """A ranking metric needs query groups on every evaluated set, on every
    rank (one collective, agreed by all ranks, when there is such a metric)."""
    needing = [m for m in metrics if m.queries]
    if not needing or not eval_sets:
        return
    have = np.array([es.queries is not None for es in eval_sets], np.int64)
    every = comm.least_int(have) if comm.size > 1 else have
    for es, mine, all_ranks in zip(eval_sets, have, every, strict=True):
        if not all_ranks:
            where = "has none" if not mine else "has none on another rank"
            raise agreed(
                ValueError(
                    f"The {needing[0].name} metric needs query groups: {es.name!r} {where} "
                    "(Dataset(group=...), a .query file, group_column or qid: fields)"
                )
            )


def _feval_results(fn: Callable[..., Any], out: Any) -> list[tuple[str, float, bool]]:
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


def global_metric(
    comm: SerialComm,
    metric: Metric,
    label: np.ndarray,
    preds: np.ndarray,
    weight: np.ndarray | None,
    kw: dict[str, Any],
) -> float | list[float]:
    """A metric over every rank's rows: additive sums are allreduced (exact);
    AUC, which is not a sum, gathers labels, predictions and weights (n floats
    per evaluation).  A float, or a list of floats for a metric with several
    results (ndcg@k, map@k: ``kw`` then holds this rank's ``queries``)."""
    if comm.size == 1:
        return metric.compute(label, preds, weight, **kw)
    if metric.partial is not None:
        return metric.value_of(comm.total(metric.partial(label, preds, weight, **kw)))
    return metric.compute(*_all_rows(comm, label, preds, weight), **kw)


def _all_rows(
    comm: SerialComm, label: np.ndarray, preds: np.ndarray, weight: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Every rank's labels, predictions and weights, for what is not a sum over
    rows (AUC, a custom ``feval``): n floats each per evaluation.  A rank
    without weights weighs its rows 1 when another has weights; the weights
    are None when no rank has any.  Predictions (n, K) stay 2-D."""
    all_label = comm.concat(label)
    all_preds = comm.concat(preds)
    all_weight = None
    if comm.any_rank(weight is not None):
        all_weight = comm.concat(np.ones(len(label)) if weight is None else weight)
    if np.ndim(preds) == 2:
        all_preds = all_preds.reshape(len(all_label), -1)
    return all_label, all_preds, all_weight


def _all_groups(comm: SerialComm, group: np.ndarray | None) -> np.ndarray | None:
    """Every rank's query sizes in rank order (whole queries on each rank), or None
    when the set has none."""
    if not comm.every_rank(group is not None):
        return None
    return comm.concat(group, np.int64)  # type: ignore[arg-type]  # every rank has a group


def score_dict(result_list: Sequence[Sequence[Any]] | None) -> dict[str, dict[str, float]]:
    """Results as LightGBM's ``best_score``: {data name: {metric name: value}}."""
    best: dict[str, dict[str, float]] = {}
    for data_name, metric_name, value, _ in result_list or []:
        best.setdefault(data_name, {})[metric_name] = value
    return best
