"""``dgbdt.cv``: LightGBM's cross-validation, its ``CVBooster``, and keyed folds.

As LightGBM 4.7's ``lightgbm.cv``: the training set is constructed once, each
fold trains a Booster of its own (``Booster(params, fold_train)`` with the
fold's rows of it as the validation set ``"valid"``, and the training rows as
``"train"`` with ``eval_train_metric``), one :meth:`Booster.update` per fold
and round; each round's results are the mean and the standard deviation over
the folds, ``"valid <metric>-mean"`` / ``"valid <metric>-stdv"``.  Early
stopping watches the fold means and cuts the results at the best iteration.

The folds:

* one process: LightGBM's exactly, so results compare with ``lightgbm.cv``:
  a ranking objective splits whole queries (scikit-learn's GroupKFold),
  ``stratified`` uses StratifiedKFold(shuffle, seed), otherwise
  ``np.random.RandomState(seed).permutation`` (or the row order without
  ``shuffle``) cut in ``nfold`` parts; ``folds`` (an iterable of
  (train_idx, test_idx), or a scikit-learn splitter) are used as given, each
  part checked to be a non-empty array of integer row indices in range (where
  LightGBM reads a boolean mask as rows 0 and 1, truncates float indices and
  fails or gives NaN metrics on an empty part); ``nfold`` must be >= 2.
* under mpiexec (a distributed ``tree_learner`` on several ranks), where each
  rank holds its own rows, the folds are keyed: a row's fold is a hash of
  (seed, its global row index) (of its global query index for ranking,
  queries staying whole), :class:`KeyedKFold`, the same on any number of
  ranks.  ``stratified`` and ``shuffle`` do not apply (a row's fold does not
  depend on its label; the folds hold about, not exactly, n / nfold rows).
  Other ``folds`` are refused.  On one process ``folds=KeyedKFold(nfold,
  seed)`` gives the folds and results of a distributed run.
"""

from __future__ import annotations

import json
import os
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from .booster import Booster
from .boosting import callbacks as cb
from .boosting.loop import agreed_stop, prepare_callbacks
from .boosting.training import (
    call_params,
    check_rounds,
    make_comm,
    training_booster,
    training_context,
)
from .data.dataset import Dataset
from .data.inputs import is_lazy_frame
from .distributed.comm import SerialComm, agreed
from .native.random import uniform_fill
from .params.table import ALIASES, resolve_params
from .streams import STREAM_CV_FOLDS
from .treelearner.learners import shards_rows

__all__ = ["CVBooster", "KeyedKFold", "cv"]

#: the objectives whose folds hold whole queries (LightGBM's list, by canonical name)
RANKING_OBJECTIVES = ("lambdarank", "rank_xendcg")


class KeyedKFold:
    """K folds keyed on (seed, row): row ``i``'s fold is
    ``floor(nfold * u)``, ``u`` the counter-based uniform draw of (seed,
    dgbdt.streams.STREAM_CV_FOLDS, i) (dgbdt.native.random), so a row's fold
    does not depend on how the rows are spread over ranks.  A scikit-learn
    style splitter: ``split(X, y=None, groups=None)`` yields (train_idx,
    test_idx); with ``groups`` a group's rows share the fold keyed on the
    group's index among the sorted distinct groups.  :func:`cv` keys ranking
    data on the global query index, and other data on the global row index.
    """

    def __init__(self, n_splits: int = 5, seed: int = 0) -> None:
        if isinstance(n_splits, bool) or not isinstance(n_splits, (int, np.integer)):
            raise TypeError(f"n_splits must be an integer, got {n_splits!r}")
        if n_splits < 2:
            raise ValueError(f"n_splits must be at least 2, got {n_splits}")
        self.n_splits, self.seed = int(n_splits), int(seed)

    def __repr__(self) -> str:
        return f"KeyedKFold(n_splits={self.n_splits}, seed={self.seed})"

    def get_n_splits(self, X: Any = None, y: Any = None, groups: Any = None) -> int:
        """The number of folds (scikit-learn's splitter API)."""
        return self.n_splits

    def fold_ids(self, n: int, first: int = 0) -> np.ndarray:
        """The folds (int64) of keys ``first`` ... ``first + n - 1``."""
        draws = np.empty(n, np.float64)
        uniform_fill(self.seed & 0x7FFFFFFF, STREAM_CV_FOLDS, int(first), draws)
        return np.minimum((draws * self.n_splits).astype(np.int64), self.n_splits - 1)

    def split(
        self, X: Any, y: Any = None, groups: Any = None
    ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Yield (train_idx, test_idx) of each fold of the rows of ``X``."""
        n = X.shape[0] if hasattr(X, "shape") else len(X)
        if groups is None:
            ids = self.fold_ids(n)
        else:
            _, inverse = np.unique(np.asarray(groups), return_inverse=True)
            ids = self.fold_ids(int(inverse.max(initial=-1)) + 1)[inverse.ravel()]
        for k in range(self.n_splits):
            yield np.flatnonzero(ids != k), np.flatnonzero(ids == k)


class CVBooster:
    """The Boosters of :func:`cv`, one per fold (LightGBM's ``CVBooster``).

    Any other method is called on every Booster and gives the list of their
    results (``cvbooster.predict(X)`` is one prediction per fold), except
    ``model_from_string``, ``model_to_string`` and ``save_model`` (one JSON
    text of every Booster's model).

    Attributes
    ----------
    boosters : list of Booster
    best_iteration : int
        The best iteration early stopping found, else -1.
    """

    #: what callbacks see as the training data's name: cv's ``"train"`` results
    #: (eval_train_metric) never stop training, as in LightGBM
    _train_data_name = "train"

    def __init__(self, model_file: str | os.PathLike | None = None) -> None:
        self.boosters: list[Booster] = []
        self.best_iteration = -1
        if model_file is not None:
            with open(model_file, encoding="utf-8") as fh:
                self._from_dict(json.load(fh))

    def _from_dict(self, models: dict[str, Any]) -> None:
        self.best_iteration = models["best_iteration"]
        self.boosters = [Booster(model_str=text) for text in models["boosters"]]

    def _to_dict(
        self, num_iteration: int | None, start_iteration: int, importance_type: str
    ) -> dict[str, Any]:
        if start_iteration:
            raise ValueError("CVBooster models are saved from their first iteration")
        texts = [b.model_to_string(num_iteration, format="json") for b in self.boosters]
        return {"boosters": texts, "best_iteration": self.best_iteration}

    def __getattr__(self, name: str) -> Callable[..., list]:
        if name.startswith("__") or name in ("boosters", "best_iteration"):
            raise AttributeError(name)

        def handler_function(*args: Any, **kwargs: Any) -> list:
            """Call ``name`` on each Booster; the list of their results."""
            return [getattr(b, name)(*args, **kwargs) for b in self.boosters]

        return handler_function

    def __getstate__(self) -> dict:
        return vars(self)

    def __setstate__(self, state: dict) -> None:
        vars(self).update(state)

    def model_from_string(self, model_str: str) -> CVBooster:
        """Load the Boosters from :meth:`model_to_string`'s text; returns self."""
        self._from_dict(json.loads(model_str))
        return self

    def model_to_string(
        self,
        num_iteration: int | None = None,
        start_iteration: int = 0,
        importance_type: str = "split",
    ) -> str:
        """Every Booster's model (dgbdt's JSON, ``num_iteration`` as
        :meth:`Booster.model_to_string`) and the best iteration, as JSON text.
        ``importance_type`` is LightGBM's argument (dgbdt's models do not store
        importances); ``start_iteration`` must be 0."""
        return json.dumps(self._to_dict(num_iteration, start_iteration, importance_type))

    def save_model(
        self,
        filename: str | os.PathLike,
        num_iteration: int | None = None,
        start_iteration: int = 0,
        importance_type: str = "split",
    ) -> CVBooster:
        """Write :meth:`model_to_string`'s text to ``filename``; returns self."""
        with open(filename, "w", encoding="utf-8") as fh:
            json.dump(self._to_dict(num_iteration, start_iteration, importance_type), fh)
        return self


def _check_train_set(train_set: Any) -> None:
    if not isinstance(train_set, Dataset):
        lazy = " (a polars LazyFrame: collect it first, .collect())"
        raise TypeError(
            f"cv() only accepts Dataset object, train_set has type "
            f"'{type(train_set).__name__}'.{lazy if is_lazy_frame(train_set) else ''}"
        )


def cv(
    params: dict[str, Any],
    train_set: Dataset,
    num_boost_round: int = 100,
    folds: Iterable[tuple[np.ndarray, np.ndarray]] | Any | None = None,
    nfold: int = 5,
    stratified: bool = True,
    shuffle: bool = True,
    metrics: str | list[str] | None = None,
    feval: Callable | list[Callable] | None = None,
    init_model: str | os.PathLike | Booster | None = None,
    fpreproc: Callable | None = None,
    seed: int = 0,
    callbacks: Sequence[Callable] | None = None,
    eval_train_metric: bool = False,
    return_cvbooster: bool = False,
) -> dict[str, Any]:
    """Cross-validation (LightGBM's ``cv``, its arguments and results).

    Returns ``{"valid <metric>-mean": [...], "valid <metric>-stdv": [...], ...}``,
    one value per round (``"train ..."`` entries too with ``eval_train_metric``),
    cut at the best iteration when early stopping (the ``early_stopping``
    callback, or ``early_stopping_round`` in ``params``) stops; with
    ``return_cvbooster``, the :class:`CVBooster` under ``"cvbooster"``.

    ``metrics`` replaces the params' metric (``"None"``: none, for ``feval``
    only).  ``fpreproc(train, valid, params) -> (train, valid, params)``
    prepares each fold.  ``init_model``: a model every fold continues.  The
    folds (``folds``, ``nfold``, ``stratified``, ``shuffle``, ``seed``) are
    LightGBM's on one process and keyed under mpiexec (see dgbdt.cv).  The
    arguments after ``metrics`` are keyword-only here.
    """
    _check_train_set(train_set)
    params, cfg = _cv_params(params, num_boost_round, metrics)
    comm, row_comm = _comms(cfg)
    # threads and logging rank of the training; an error on one rank ends every rank
    with training_context(cfg, comm):
        _check_folds(folds, nfold, comm)
        if isinstance(init_model, (str, os.PathLike)):
            init_model = Booster(model_file=init_model)
        _construct_full(train_set, params, row_comm, init_model)
        folds = _make_folds(
            train_set, folds, (nfold, stratified, shuffle, seed), cfg, row_comm, comm
        )
        resets, others = cb.split_resets(prepare_callbacks(callbacks, cfg))
        cvbooster = CVBooster()
        for train_idx, test_idx in folds:
            train, valid, fold = _fold_sets(train_set, (train_idx, test_idx), fpreproc, params, cfg)
            booster = _fold_booster(fold, train, init_model, resets)
            _add_fold_valid(booster, train, valid, eval_train_metric)
            cvbooster.boosters.append(booster)
        train_set.release_raw_data()  # every fold is binned (free_raw_data decides)
        results = _boost_folds(cvbooster, params, cfg["num_iterations"], others, (feval, comm))
    if return_cvbooster:
        results["cvbooster"] = cvbooster
    return results


def _fold_booster(
    fold: tuple[dict[str, Any], dict[str, Any]],
    train: Dataset,
    init_model: Booster | None,
    resets: Sequence[Callable],
) -> Booster:
    """A fold's training Booster (its reset_parameter callbacks applied by each
    update); ``fold``: its (params, the same resolved), from :func:`_fold_sets`."""
    params, cfg = fold
    return training_booster(  # type: ignore[return-value]  # a model_class (Booster)
        params, cfg, train, model_class=Booster, init_model=init_model, callbacks=resets
    )


def _add_fold_valid(
    booster: Booster, train: Dataset, valid: Dataset, eval_train_metric: bool
) -> None:
    """A fold Booster's evaluated sets, as LightGBM's: "train" (its training
    rows, with eval_train_metric), then "valid"."""
    if eval_train_metric:
        booster.add_valid(train, "train")
    booster.add_valid(valid, "valid")


def _cv_params(
    params: dict[str, Any] | None, num_boost_round: int, metrics: str | list[str] | None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(cv's params: a copy, num_iterations and metrics set; resolved), and the
    rounds checked, as LightGBM."""
    params = call_params(params, num_boost_round)
    check_rounds(params)
    if metrics is not None:
        params = {k: v for k, v in params.items() if ALIASES.get(k) != "metric"}
        params["metric"] = metrics
    return params, resolve_params(params)


def _comms(cfg: dict[str, Any]) -> tuple[SerialComm, SerialComm]:
    """(communicator, row communicator) of cv: serial unless a distributed
    tree_learner runs on several ranks (then rows are sharded, except for
    feature-parallel ranks, which hold every row)."""
    comm = make_comm(cfg)
    row_comm = comm if comm.size > 1 and shards_rows(cfg["tree_learner"]) else SerialComm()
    return comm, row_comm


def _construct_full(
    train_set: Dataset, params: dict[str, Any], row_comm: SerialComm, init_model: Booster | None
) -> None:
    """The training set binned once (over every rank's rows), as LightGBM's cv
    does: each fold is binned with its bins.  Its raw data stays until every
    fold is binned (subsets and init-model predictions read it)."""
    lists = None if init_model is None else getattr(init_model, "pandas_categorical", None)
    with row_comm.slow_phase("constructing the Dataset (binning; a cold Numba compile)"):
        train_set.construct(params, row_comm, keep_raw_data=True, category_lists=lists)


#: what ``folds`` must be (LightGBM's words), repeated by every error about a fold's form
FOLDS_ARE = (
    "folds should be a generator or iterator of (train_idx, test_idx) tuples "
    "or scikit-learn splitter object with split method"
)


def _check_folds(folds: Any, nfold: Any, comm: SerialComm) -> None:
    """``folds`` must be an iterable or a splitter instance (LightGBM's
    AttributeError), and without folds ``nfold`` an integer >= 2; under mpiexec
    only keyed folds.  Every rank has the same arguments: each raises alike."""
    if folds is None:
        _check_nfold(nfold)
    elif isinstance(folds, type):
        raise agreed(
            TypeError(f"folds is the class {folds.__name__}: give an instance of it ({FOLDS_ARE})")
        )
    elif isinstance(folds, (str, bytes)):  # (str.split is not a splitter's split)
        raise agreed(TypeError(f"folds is the string {folds[:40]!r}: {FOLDS_ARE}"))
    elif not hasattr(folds, "__iter__") and not hasattr(folds, "split"):
        raise agreed(AttributeError(FOLDS_ARE))
    if comm.size > 1 and folds is not None and not isinstance(folds, KeyedKFold):
        raise agreed(
            ValueError(
                "cv(folds=...) under mpiexec: each rank holds its own rows, so the folds "
                "are keyed on (seed, global row) by dgbdt (see dgbdt.cv); pass folds=None "
                "or a dgbdt.KeyedKFold (a single process gets the same folds with "
                "folds=dgbdt.KeyedKFold(nfold, seed))"
            )
        )


def _check_nfold(nfold: Any) -> None:
    """``nfold`` an integer >= 2 (LightGBM's errors are numpy's: a TypeError for a
    float, a ValueError for 0 or 1)."""
    if isinstance(nfold, bool) or not isinstance(nfold, (int, np.integer)):
        raise agreed(TypeError(f"nfold must be an integer >= 2, got {nfold!r}"))
    if nfold < 2:
        raise agreed(
            ValueError(
                f"nfold must be >= 2, got {nfold}: each fold trains on the other folds' "
                "rows and validates on its own"
            )
        )


def _checked_folds(folds: Iterable[Any], n: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Every fold of ``folds`` as sorted int64 (train rows, test rows) of the
    ``n`` rows, each part checked (:func:`_fold_rows`); at least one fold.
    LightGBM reads a boolean mask as rows 0 and 1, truncates float indices and
    trains on an empty part (NaN metrics or a failed check): dgbdt refuses them."""
    checked = []
    for k, fold in enumerate(folds):
        try:
            train_idx, test_idx = fold
        except (TypeError, ValueError):  # not a pair (an array of rows, an int, ...)
            raise ValueError(
                f"folds[{k}] is {_shown(fold)}, not a (train_idx, test_idx) pair: {FOLDS_ARE}"
            ) from None
        train = _fold_rows(train_idx, f"folds[{k}]: train_idx", n)
        checked.append((train, _fold_rows(test_idx, f"folds[{k}]: test_idx", n)))
    if not checked:
        raise ValueError(f"folds holds no fold: {FOLDS_ARE}")
    return checked


def _fold_rows(part: Any, where: str, n: int) -> np.ndarray:
    """One part of a fold (``where`` names it) as sorted int64 rows: a non-empty
    1-D array of integer indices in 0 .. n - 1."""
    try:
        rows = np.asarray(part)
    except (TypeError, ValueError):  # ragged lists and the like
        raise ValueError(f"{where} is {_shown(part)}, not an array of row indices") from None
    if rows.ndim != 1:
        got = f"shape {rows.shape}" if rows.ndim else f"the scalar {_shown(part)}"
        raise ValueError(f"{where} must be a 1-D array of row indices, got {got}")
    if rows.size == 0:
        raise ValueError(f"{where} is empty: every fold needs training and test rows")
    if rows.dtype.kind == "b":
        raise TypeError(f"{where} is a boolean mask; give its row indices (np.flatnonzero(mask))")
    if rows.dtype.kind not in "iu":
        # (LightGBM truncates float indices: 2.7 would be row 2)
        cast = "; cast whole numbers with .astype(int)" if rows.dtype.kind == "f" else ""
        raise TypeError(f"{where} must hold integer row indices, got dtype {rows.dtype}{cast}")
    low, high = rows.min(), rows.max()
    if low < 0 or high >= n:
        raise ValueError(
            f"{where} holds row {low if low < 0 else high}, out of range: the Dataset has "
            f"rows 0..{n - 1}"
        )
    return np.sort(rows.astype(np.int64), kind="stable")


def _shown(value: Any) -> str:
    """A short description of a value for an error message."""
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape}"
    if isinstance(value, np.generic):  # a numpy scalar, shown as Python's
        value = value.item()
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 60 else text[:60] + '...'}"


def _make_folds(
    train_set: Dataset,
    folds: Any,
    how: tuple[int, bool, bool, int],
    cfg: dict[str, Any],
    row_comm: SerialComm,
    comm: SerialComm,
) -> Iterable[tuple[np.ndarray, np.ndarray]]:
    """(train_idx, test_idx) of each fold, this rank's rows."""
    nfold, stratified, shuffle, seed = how
    ranking = cfg["objective"] in RANKING_OBJECTIVES
    if comm.size > 1 or isinstance(folds, KeyedKFold):
        splitter = folds if folds is not None else KeyedKFold(nfold, seed)
        return _keyed_folds(train_set, splitter, ranking, row_comm)
    if folds is not None:
        return _checked_folds(_given_folds(train_set, folds), train_set.num_data())
    made = _lightgbm_folds(train_set, nfold, stratified, shuffle, seed, ranking)
    return _checked_folds(made, train_set.num_data())


def _given_folds(train_set: Dataset, folds: Any) -> Iterable[tuple[np.ndarray, np.ndarray]]:
    """The user's folds: an iterable of (train_idx, test_idx), or a scikit-learn
    splitter, split with the query groups (LightGBM's flattened group ids, or
    zeros without groups)."""
    if not hasattr(folds, "split"):
        return folds
    n = train_set.num_data()
    group = train_set.get_group()
    if group is not None:
        groups = np.repeat(np.arange(len(group)), np.asarray(group, np.int64))
    else:
        groups = np.zeros(n, np.int32)
    return folds.split(X=np.empty(n), y=train_set.get_label(), groups=groups)


def _lightgbm_folds(
    train_set: Dataset, nfold: int, stratified: bool, shuffle: bool, seed: int, ranking: bool
) -> Iterable[tuple[np.ndarray, np.ndarray]]:
    """LightGBM 4.7's folds (engine.py _make_n_folds)."""
    from sklearn.model_selection import GroupKFold, StratifiedKFold  # noqa: PLC0415 - import dgbdt does not load scikit-learn (import time)

    n = train_set.num_data()
    if ranking:
        group = train_set.get_group()
        if group is None:
            raise ValueError(
                "cv with a ranking objective needs query groups (Dataset(group=...)): "
                "its folds hold whole queries"
            )
        groups = np.repeat(np.arange(len(group)), np.asarray(group, np.int64))
        return GroupKFold(n_splits=nfold).split(X=np.empty(n), groups=groups)
    if stratified:
        splitter = StratifiedKFold(n_splits=nfold, shuffle=shuffle, random_state=seed)
        return splitter.split(X=np.empty(n), y=train_set.get_label())
    if nfold > n:
        raise ValueError(f"nfold={nfold} is more folds than the {n} rows of train_set")
    order = np.random.RandomState(seed).permutation(n) if shuffle else np.arange(n)
    test = np.array_split(order, nfold)
    train = [np.concatenate([test[i] for i in range(nfold) if i != k]) for k in range(nfold)]
    return list(zip(train, test, strict=True))


def _keyed_folds(
    train_set: Dataset, splitter: KeyedKFold, ranking: bool, row_comm: SerialComm
) -> list[tuple[np.ndarray, np.ndarray]]:
    """The keyed folds of this rank's rows: each row's (or, ranking, each query's)
    fold from its global index; every fold must have rows on some rank."""
    n, k = train_set.num_data(), splitter.n_splits
    group = train_set.get_group()
    if ranking and group is None:
        raise agreed(ValueError("cv with a ranking objective needs query groups"))
    if ranking and group is not None:  # (checked above: ranking has groups)
        first = _first_global(row_comm, len(group))
        ids = np.repeat(splitter.fold_ids(len(group), first), np.asarray(group, np.int64))
    else:
        ids = splitter.fold_ids(n, _first_global(row_comm, n))
    sizes = np.bincount(ids, minlength=k)
    if row_comm.size > 1:
        sizes = row_comm.total_int(sizes)
    if np.any(sizes == 0) or np.any(sizes == sizes.sum()):
        raise agreed(
            ValueError(
                f"cv: keyed folds of sizes {sizes.tolist()} leave a fold without rows "
                "(too few rows or queries for nfold)"
            )
        )
    return [(np.flatnonzero(ids != f), np.flatnonzero(ids == f)) for f in range(k)]


def _first_global(row_comm: SerialComm, n_local: int) -> int:
    """The global index of this rank's first row (query): ranks in order."""
    if row_comm.size == 1:
        return 0
    return int(row_comm.per_rank(n_local)[: row_comm.rank].sum())


def _fold_sets(
    full: Dataset,
    rows: tuple[np.ndarray, np.ndarray],
    fpreproc: Callable | None,
    params: dict[str, Any],
    cfg: dict[str, Any],
) -> tuple[Dataset, Dataset, tuple[dict[str, Any], dict[str, Any]]]:
    """(train set, validation set, (params, the same resolved)) of one fold:
    the rows of ``full`` (train rows, test rows) binned with its bins, prepared
    by ``fpreproc``; cv's params and a copy of its ``cfg`` (a fold's loop
    updates its own: reset_parameter), or fpreproc's params resolved."""
    train, valid = full.subset(rows[0]), full.subset(rows[1])  # (checked folds)
    if fpreproc is None:
        return train, valid, (params, dict(cfg))
    train, valid, fold_params = fpreproc(train, valid, dict(params))
    return train, valid, (fold_params, resolve_params(fold_params))


def _boost_folds(
    cvbooster: CVBooster,
    params: dict[str, Any],
    n_rounds: int,
    callbacks: list[Callable],
    how: tuple[Callable | list[Callable] | None, SerialComm],
) -> dict[str, Any]:  # cv's results: lists of floats (cv adds "cvbooster")
    """cv's loop: each round, one update of every fold, the fold means and
    standard deviations, the callbacks (early stopping agreed over the ranks);
    returns the results dict, cut at the best iteration on an early stop."""
    feval, comm = how
    before = [c for c in callbacks if getattr(c, "before_iteration", False)]
    after = [c for c in callbacks if not getattr(c, "before_iteration", False)]
    results: defaultdict[str, list[float]] = defaultdict(list)
    for c in callbacks:
        if hasattr(c, "begin_training"):
            c.begin_training(cb.CallbackEnv(cvbooster, params, 0, 0, n_rounds, None))
    for i in range(n_rounds):
        env = cb.CallbackEnv(cvbooster, params, i, 0, n_rounds, None)
        for c in before:
            c(env)
        for booster in cvbooster.boosters:
            booster.update()
        res = _agg_cv_result([b.eval_valid(feval) for b in cvbooster.boosters])
        for data_name, metric_name, mean, _, std in res:
            results[f"{data_name} {metric_name}-mean"].append(mean)
            results[f"{data_name} {metric_name}-stdv"].append(std)
        stop = _after_callbacks(after, env._replace(evaluation_result_list=res))
        # every rank has the same (global) metrics: agreed anyway, one collective
        best = agreed_stop(comm, stop)
        if best is not None:
            _stop_at(cvbooster, results, best + 1)
            break
    return dict(results)


def _after_callbacks(
    callbacks: list[Callable], env: cb.CallbackEnv
) -> cb.EarlyStopException | None:
    """Run the after-iteration callbacks; the EarlyStopException one raised, or None."""
    try:
        for c in callbacks:
            c(env)
    except cb.EarlyStopException as exc:
        return exc
    return None


def _stop_at(cvbooster: CVBooster, results: dict[str, list[float]], best_iteration: int) -> None:
    """Early stopping's best iteration on every Booster, the results cut there."""
    cvbooster.best_iteration = best_iteration
    for booster in cvbooster.boosters:
        booster.best_iteration = best_iteration
    for key in results:
        results[key] = results[key][:best_iteration]


def _agg_cv_result(
    raw_results: list[list[tuple[str, str, float, bool]]],
) -> list[tuple[str, str, float, bool, float]]:
    """(data name, metric name, mean, is_higher_better, standard deviation) of
    each (data, metric) over the folds, in order of appearance (LightGBM's
    _agg_cv_result: numpy's mean and population standard deviation)."""
    higher_better: OrderedDict[tuple[str, str], bool] = OrderedDict()
    values: OrderedDict[tuple[str, str], list[float]] = OrderedDict()
    for one_fold in raw_results:
        for data_name, metric_name, value, is_higher_better in one_fold:
            key = (data_name, metric_name)
            higher_better[key] = is_higher_better
            values.setdefault(key, []).append(value)
    return [
        (k[0], k[1], float(np.mean(v)), higher_better[k], float(np.std(v)))
        for k, v in values.items()
    ]
