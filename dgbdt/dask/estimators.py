"""scikit-learn estimators on Dask collections (lightgbm.dask's DaskLGBM*).

``fit`` trains the local estimator's ``fit`` on every rank's partitions (the
group installed as MPI world); the fitted attributes of rank 0's estimator are
copied here.  ``predict`` / ``predict_proba`` return dask arrays computed
partition by partition with the local estimator (``to_local()``).
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
from distributed import default_client
from sklearn.exceptions import NotFittedError

from ..log import DGBDTDeprecationWarning
from ..sklearn import DGBDTClassifier, DGBDTModel, DGBDTRanker, DGBDTRegressor
from .collections import is_dask_collection, map_predictions
from .driver import plan_training, run
from .jobs import fit_job

_LOCAL_ONLY = ("client", "max_restarts")


def _first_rows(X: Any) -> Any:
    """One row of X, computed (to learn a prediction's width and type)."""
    if not is_dask_collection(X):
        raise TypeError(
            f"dgbdt.dask: X must be a dask Array or DataFrame, got {type(X).__name__}; "
            "use to_local() to predict on local data"
        )
    if hasattr(X, "numblocks"):
        return X[:1].compute()
    return X.head(1, npartitions=-1)


def _predict_part(
    part: Any,
    *,
    model: DGBDTModel,
    method: str,
    kwargs: dict[str, Any],
    width: int | None = None,
    dtype: Any = np.float64,
) -> Any:
    """Predictions of one partition (an empty one: ``width`` columns, or one value
    per row, of the predictions' ``dtype``)."""
    if part.shape[0] == 0:
        return np.empty((0,) if width is None else (0, width), dtype=dtype)
    return getattr(model, method)(part, **kwargs)


class _DaskModel(DGBDTModel):
    """What the three Dask estimators share (first in their bases, before the
    local class): the local estimator's arguments and ``client`` (None: the
    default client; not pickled); the keyword ``max_restarts`` (restarts from
    snapshots after a lost worker, with ``snapshot_freq``; 2 by default);
    ``tree_learner`` "serial", the default, means "data"."""

    _local_class: type[DGBDTModel]

    def __init__(
        self,
        *,
        boosting_type: str = "gbdt",
        num_leaves: int = 31,
        max_depth: int = -1,
        learning_rate: float = 0.1,
        n_estimators: int = 100,
        subsample_for_bin: int = 200000,
        objective: Any = None,
        class_weight: Any = None,
        min_split_gain: float = 0.0,
        min_child_weight: float = 1e-3,
        min_child_samples: int = 20,
        subsample: float = 1.0,
        subsample_freq: int = 0,
        colsample_bytree: float = 1.0,
        reg_alpha: float = 0.0,
        reg_lambda: float = 0.0,
        random_state: Any = None,
        n_jobs: int | None = None,
        max_bin: int = 255,
        tree_learner: str = "serial",
        verbosity: int = -1,
        importance_type: str = "split",
        client: Any = None,
        **kwargs: Any,
    ) -> None:
        # the local estimator's arguments, then client (as lightgbm.dask)
        self.client = client
        given = {k: v for k, v in locals().items() if k not in ("self", "client", "kwargs")}
        given.pop("__class__", None)
        super().__init__(**given, **kwargs)

    def _max_restarts(self) -> int:
        """Restarts from snapshots after a lost worker (``snapshot_freq``): the
        ``max_restarts`` keyword, 2 by default."""
        return int(self._other_params.get("max_restarts", 2))

    @property
    def client_(self) -> Any:
        """The Dask client the estimator uses (``client``, or the default one)."""
        if not getattr(self, "fitted_", False):
            raise NotFittedError("Cannot access property client_ before calling fit().")
        return self.client if self.client is not None else default_client()

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["client"] = None  # a client is not picklable
        return state

    def _local_params(self) -> dict[str, Any]:
        params = self.get_params()
        for name in _LOCAL_ONLY:
            params.pop(name, None)
        return params

    def _copy_fitted(self, source: Any, dest: Any) -> None:
        names = set(source.get_params()) | set(_LOCAL_ONLY)
        for name, value in source.__dict__.items():
            if name not in names and name != "_other_params":
                setattr(dest, name, value)

    def to_local(self) -> DGBDTModel:
        """The fitted model as the local estimator (no Dask needed to use it)."""
        local = self._local_class(**self._local_params())
        self._copy_fitted(self, local)
        return local

    def _dask_fit(
        self, X: Any, y: Any, fields: dict[str, Any], evals: list[tuple], fit_kwargs: dict[str, Any]
    ) -> Any:
        client = self.client if self.client is not None else default_client()
        train_fields = (
            X,
            y,
            fields.get("sample_weight"),
            fields.get("group"),
            fields.get("init_score"),
        )
        plan, rank_params = plan_training(
            client,
            fit_job,
            self._local_params(),
            train_fields,
            evals,
            self._max_restarts(),
            serial_means_data=True,
        )
        local = self._local_class(**rank_params)
        plan.job = functools.partial(
            fit_job,
            training=plan.training,
            estimator=local,
            fit_kwargs={k: v for k, v in fit_kwargs.items() if v is not None},
            snapshot_freq=plan.snapshot_freq,
            training_at=plan.training_at,
        )
        fitted = run(client, plan)
        self._copy_fitted(fitted, self)
        return self

    def _dask_predict(self, X: Any, method: str, **kwargs: Any) -> Any:
        local = self.to_local()
        predict = functools.partial(_predict_part, model=local, method=method, kwargs=kwargs)
        rows = _first_rows(X)
        if rows.shape[0] == 0:  # no row at all: a row of zeros tells the width and type
            rows = np.zeros((1, local.n_features_in_))
            predict = functools.partial(predict, kwargs={**kwargs, "validate_features": False})
        sample = predict(rows)
        predict = functools.partial(predict, kwargs=kwargs)
        if isinstance(sample, list):  # sparse contributions, one matrix per class
            raise NotImplementedError(
                "dgbdt.dask: pred_contrib on sparse input with several classes (one sparse "
                "matrix per class) is not supported; predict with to_local() or on dense input"
            )
        width = None if np.ndim(sample) == 1 else int(np.shape(sample)[1])
        dtype = np.asarray(sample).dtype
        predict = functools.partial(predict, width=width, dtype=dtype)
        return map_predictions(predict, X, width, dtype)


def _eval_fields(
    eval_set: Sequence[tuple[Any, Any]] | None,
    sample_weight: Sequence[Any] | None,
    group: Sequence[Any] | None,
    init_score: Sequence[Any] | None,
) -> list[tuple]:
    """(data, label, weight, group, init score) of each validation set."""
    sets = list(eval_set or [])

    def nth(values: Sequence[Any] | None, i: int) -> Any:
        return values[i] if values is not None and i < len(values) else None

    return [
        (X, y, nth(sample_weight, i), nth(group, i), nth(init_score, i))
        for i, (X, y) in enumerate(sets)
    ]


def _eval_pairs(eval_set: Any, eval_X: Any, eval_y: Any) -> Any:
    """LightGBM 4.7's eval_X / eval_y as the eval_set pairs (eval_set warns, once
    here rather than on every rank)."""
    if eval_set is not None:
        warnings.warn(
            "The argument 'eval_set' is deprecated, use 'eval_X' and 'eval_y' instead.",
            DGBDTDeprecationWarning,
            stacklevel=3,
        )
    if eval_X is None:
        return eval_set
    xs = eval_X if isinstance(eval_X, tuple) else (eval_X,)
    ys = eval_y if isinstance(eval_y, tuple) else (eval_y,)
    return list(zip(xs, ys, strict=True))


class DaskDGBDTRegressor(_DaskModel, DGBDTRegressor):
    """:class:`dgbdt.DGBDTRegressor` on Dask collections (lightgbm.dask's
    DaskLGBMRegressor).  ``client``: the Dask client (None: the default one,
    not pickled); the keyword ``max_restarts``: restarts from snapshots when a
    worker is lost (with ``snapshot_freq``); ``tree_learner``: "serial" (the
    default) means "data"."""

    _local_class = DGBDTRegressor

    def fit(  # type: ignore[override]  # (lightgbm.dask's arguments)
        self,
        X: Any,
        y: Any,
        sample_weight: Any = None,
        init_score: Any = None,
        eval_set: Any = None,
        eval_names: Any = None,
        eval_sample_weight: Any = None,
        eval_init_score: Any = None,
        eval_metric: Any = None,
        *,
        eval_X: Any = None,
        eval_y: Any = None,
        **kwargs: Any,
    ) -> DaskDGBDTRegressor:
        """Fit on dask collections (arguments as :meth:`dgbdt.DGBDTRegressor.fit`)."""
        evals = _eval_fields(
            _eval_pairs(eval_set, eval_X, eval_y), eval_sample_weight, None, eval_init_score
        )
        fields = {"sample_weight": sample_weight, "init_score": init_score}
        extra = {"eval_names": eval_names, "eval_metric": eval_metric, **kwargs}
        return self._dask_fit(X, y, fields, evals, extra)

    def predict(self, X: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        """Predictions as a dask array, computed partition by partition."""
        return self._dask_predict(X, "predict", **kwargs)


class DaskDGBDTClassifier(_DaskModel, DGBDTClassifier):
    """:class:`dgbdt.DGBDTClassifier` on Dask collections (lightgbm.dask's
    DaskLGBMClassifier); ``client``, ``max_restarts`` and ``tree_learner`` as
    :class:`DaskDGBDTRegressor`."""

    _local_class = DGBDTClassifier

    def fit(  # type: ignore[override]  # (lightgbm.dask's arguments)
        self,
        X: Any,
        y: Any,
        sample_weight: Any = None,
        init_score: Any = None,
        eval_set: Any = None,
        eval_names: Any = None,
        eval_sample_weight: Any = None,
        eval_class_weight: Any = None,
        eval_init_score: Any = None,
        eval_metric: Any = None,
        *,
        eval_X: Any = None,
        eval_y: Any = None,
        **kwargs: Any,
    ) -> DaskDGBDTClassifier:
        """Fit on dask collections (arguments as :meth:`dgbdt.DGBDTClassifier.fit`)."""
        evals = _eval_fields(
            _eval_pairs(eval_set, eval_X, eval_y), eval_sample_weight, None, eval_init_score
        )
        fields = {"sample_weight": sample_weight, "init_score": init_score}
        extra = {
            "eval_names": eval_names,
            "eval_class_weight": eval_class_weight,
            "eval_metric": eval_metric,
            **kwargs,
        }
        return self._dask_fit(X, y, fields, evals, extra)

    def predict(self, X: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        """Predicted classes (or raw scores, leaves, contributions) as a dask array."""
        return self._dask_predict(X, "predict", **kwargs)

    def predict_proba(self, X: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        """Class probabilities as a dask array, computed partition by partition."""
        return self._dask_predict(X, "predict_proba", **kwargs)


class DaskDGBDTRanker(_DaskModel, DGBDTRanker):
    """:class:`dgbdt.DGBDTRanker` on Dask collections (lightgbm.dask's
    DaskLGBMRanker): ``group`` is a dask array with one chunk of query sizes
    per partition of X (a query lies in one partition)."""

    _local_class = DGBDTRanker

    def fit(  # type: ignore[override]  # (lightgbm.dask's arguments)
        self,
        X: Any,
        y: Any,
        sample_weight: Any = None,
        init_score: Any = None,
        group: Any = None,
        eval_set: Any = None,
        eval_names: Any = None,
        eval_sample_weight: Any = None,
        eval_init_score: Any = None,
        eval_group: Any = None,
        eval_metric: Any = None,
        eval_at: Sequence[int] = (1, 2, 3, 4, 5),
        *,
        eval_X: Any = None,
        eval_y: Any = None,
        **kwargs: Any,
    ) -> DaskDGBDTRanker:
        """Fit on dask collections (arguments as :meth:`dgbdt.DGBDTRanker.fit`)."""
        evals = _eval_fields(
            _eval_pairs(eval_set, eval_X, eval_y), eval_sample_weight, eval_group, eval_init_score
        )
        fields = {"sample_weight": sample_weight, "init_score": init_score, "group": group}
        extra = {"eval_names": eval_names, "eval_metric": eval_metric, "eval_at": eval_at, **kwargs}
        return self._dask_fit(X, y, fields, evals, extra)

    def predict(self, X: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        """Relevance scores as a dask array, computed partition by partition."""
        return self._dask_predict(X, "predict", **kwargs)
