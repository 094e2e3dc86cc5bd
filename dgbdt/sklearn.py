"""scikit-learn estimators: ``DGBDTClassifier``, ``DGBDTRegressor`` and ``DGBDTRanker``.

Thin adapters over :func:`dgbdt.train`, shaped like LightGBM's sklearn API
(same parameter names and defaults, same ``fit``/``predict`` arguments, extra
keyword arguments passed through as training parameters). No learning logic
lives here: the estimators validate input the scikit-learn way, translate
parameters, build :class:`dgbdt.Dataset` objects and call ``train``.

Fitted attributes are plain attributes set by ``fit`` (so scikit-learn's
``check_is_fitted`` sees them); ``feature_importances_`` is a property because
it follows ``importance_type``, which may change after fitting.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import os
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, TypeAlias, TypeVar, Union

import numpy as np
from numpy.typing import ArrayLike
from scipy.sparse import spmatrix
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.preprocessing import LabelEncoder
from sklearn.utils import check_random_state
from sklearn.utils.class_weight import compute_sample_weight
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, check_is_fitted

from .booster import Booster
from .boosting.callbacks import record_evaluation
from .data.categorical import category_codes
from .data.dataset import Dataset
from .data.inputs import check_input
from .distributed.comm import SerialComm, agreed, world_comm
from .engine import train
from .log import DGBDTDeprecationWarning
from .objective.objectives import OBJECTIVES
from .params.lightgbm_keys import PREDICT_KEYS, lightgbm_canonical
from .params.table import ALIASES, PARAMS, default_metric, parse_param
from .treelearner.learners import shards_rows

try:  # scikit-learn >= 1.6
    from sklearn.utils.validation import validate_data as _sk_validate_data
except ImportError:  # pragma: no cover - older scikit-learn
    _sk_validate_data = None

__all__ = ["DGBDTModel", "DGBDTClassifier", "DGBDTRegressor", "DGBDTRanker"]

# float32 input stays float32 through validation (the Dataset bins column by
# column, so no float64 copy of the whole matrix is made); anything else becomes float64.
_X_DTYPES = [np.float64, np.float32]
_ACCEPT_SPARSE = ["csr", "csc", "coo"]

# scikit-learn checks dgbdt's estimators fail by design, with the reason (``_more_tags``,
# LightGBM's list).  The attribute one fails once set_params() has been given a
# training parameter outside the signature (as LightGBM's own test does).
_XFAIL_CHECKS: dict[str, str] = {
    "check_no_attributes_set_in_init": (
        "set_params() sets a training parameter given outside the constructor's signature "
        "(min_data_in_bin=1) as an attribute, as LightGBM; the check then counts it as set in "
        "__init__ (see https://github.com/microsoft/LightGBM/issues/2628)"
    ),
}
_SAMPLE_WEIGHT_REASON = (
    "A row of weight 0 is not the same as no row: it still counts in count-based limits "
    "(min_data_in_leaf) and in the bin boundaries found from the data, as in LightGBM "
    "(https://github.com/microsoft/LightGBM/issues/5626)."
)
# (the classifier fails these with LightGBM's test settings min_child_samples=1,
# min_data_in_bin=1; the regressor's outputs happen to match on scikit-learn's data)
_CLASSIFIER_XFAIL_CHECKS: dict[str, str] = {
    "check_sample_weight_equivalence_on_dense_data": _SAMPLE_WEIGHT_REASON,
    "check_sample_weight_equivalence_on_sparse_data": _SAMPLE_WEIGHT_REASON,
}

# Types of the public signatures, loosely LightGBM's (hints only: nothing checks them).
_MatrixLike: TypeAlias = ArrayLike | spmatrix  # arrays, lists of rows, DataFrames, scipy sparse
_CustomFunction = Callable[..., Any]  # func(y_true, y_pred[, weight[, group]])
_EvalSet = tuple[_MatrixLike, ArrayLike] | list[tuple[_MatrixLike, ArrayLike]]
_PerEvalSet = list[ArrayLike | None] | dict[int, ArrayLike]  # eval_* lists
_EvalMetric = str | _CustomFunction | list[str | _CustomFunction]
# (Union: the forward reference to DGBDTModel, a string, takes no "|")
_InitModel = Union[str, os.PathLike, Booster, "DGBDTModel"]  # noqa: UP007
_Objective: TypeAlias = str | _CustomFunction
# an estimator's private steps that return self, typed as the estimator's class
_Estimator = TypeVar("_Estimator", bound="DGBDTModel")


def _validate_data(estimator: BaseEstimator, X: Any, y: Any = "no_validation", **kw: Any) -> Any:
    """``sklearn.utils.validation.validate_data`` with a fallback for scikit-learn < 1.6."""
    if _sk_validate_data is not None:
        return _sk_validate_data(estimator, X, y, **kw)
    kw["force_all_finite"] = kw.pop("ensure_all_finite")  # pragma: no cover
    return estimator._validate_data(X, y, **kw)  # pragma: no cover


def _check_sample_weight_compat(sample_weight: ArrayLike, X: Any) -> np.ndarray:
    # Non-negative, one per row, float64; all-zero weights are an error (scikit-learn >= 1.9
    # raises "Sample weights must contain at least one non-zero number").
    try:
        sw = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)
    except TypeError:  # pragma: no cover - older signature
        sw = _check_sample_weight(sample_weight, X, dtype=np.float64)
    if not np.any(sw > 0):
        raise ValueError(
            "Sample weights must contain at least one non-zero number (all sample weights are zero)"
        )
    return sw


def _n_threads(n_jobs: int | None) -> int:
    """joblib's convention: None or -1 -> all cores (0 for the engine), -2 -> all but one."""
    if n_jobs is None:
        return 0
    n_jobs = int(n_jobs)
    if n_jobs < 0:
        return 0 if n_jobs == -1 else max((os.cpu_count() or 1) + 1 + n_jobs, 1)
    return n_jobs


def _seed(random_state: int | np.random.RandomState | np.random.Generator | None) -> int | None:
    """An int seed, or None (the engine's default) for random_state=None."""
    if random_state is None or isinstance(random_state, (int, np.integer)):
        return None if random_state is None else int(random_state)
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(np.iinfo(np.int32).max))
    return int(check_random_state(random_state).randint(np.iinfo(np.int32).max))


def _n_positional_args(func: _CustomFunction) -> int:
    """Number of positional parameters of a user callable (2, 3 or 4 as in LightGBM)."""
    try:
        params = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):
        return 2
    if any(p.kind == p.VAR_POSITIONAL for p in params):
        return 3
    return sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)


class _LabelFunctionWrapper:
    """A scikit-learn-style ``func(y_true, y_pred[, weight[, group]])`` as a
    train-level ``fn(preds, dataset)``; ``y_pred`` are raw scores: (n,) or
    (n, n_classes).  Wraps custom objectives (-> (grad, hess)) and custom eval
    metrics (-> (name, value, is_higher_better) or a list of them)."""

    def __init__(self, func: _CustomFunction, what: str) -> None:
        self.func = func
        self.argc = _n_positional_args(func)
        if self.argc < 2 or self.argc > 4:
            raise TypeError(
                f"{what} must take 2, 3 or 4 positional arguments "
                f"(y_true, y_pred[, weight[, group]]), got {self.argc}"
            )

    def __call__(self, preds: np.ndarray, dataset: Dataset) -> Any:
        labels = dataset.get_label()
        if self.argc == 2:
            return self.func(labels, preds)
        if self.argc == 3:
            return self.func(labels, preds, dataset.get_weight())
        # the query sizes, as LightGBM's Dataset.get_group (None without groups)
        return self.func(labels, preds, dataset.get_weight(), dataset.get_group())


def _eval_list(value: _PerEvalSet | None, name: str, n: int) -> list[Any]:
    """The i-th entry of an eval_* list (or None): as in LightGBM, a list may be
    shorter than eval_set (the last sets get None), or a dict by index."""
    if value is None:
        return [None] * n
    if isinstance(value, dict):
        return [value.get(i) for i in range(n)]
    if not isinstance(value, (list, tuple)) or len(value) > n:
        raise ValueError(
            f"{name} must be a list with at most one entry per eval_set entry ({n}), got {value!r}"
        )
    return list(value) + [None] * (n - len(value))


def _eval_set_of(eval_set: _EvalSet | None, eval_X: Any, eval_y: Any) -> list[Any] | None:
    """The validation pairs of a fit, from ``eval_X``/``eval_y`` (LightGBM 4.7's
    form: one X and one y, or tuples of them) or the deprecated ``eval_set``."""
    if eval_set is not None:
        warnings.warn(
            "The argument 'eval_set' is deprecated, use 'eval_X' and 'eval_y' instead.",
            DGBDTDeprecationWarning,
            stacklevel=4,  # the user's fit call
        )
        if eval_X is not None or eval_y is not None:
            raise ValueError("Specify either 'eval_set' or 'eval_X' and 'eval_y', but not both.")
        return [eval_set] if isinstance(eval_set, tuple) else list(eval_set)
    if (eval_X is None) != (eval_y is None):
        raise ValueError("You must specify eval_X and eval_y, not just one of them.")
    if eval_X is None:
        return None
    if isinstance(eval_X, tuple) != isinstance(eval_y, tuple) or (
        isinstance(eval_X, tuple) and len(eval_X) != len(eval_y)
    ):
        raise ValueError(
            "If eval_X is a tuple, y_val must be a tuple of same length, and vice versa."
        )
    return (
        list(zip(eval_X, eval_y, strict=True)) if isinstance(eval_X, tuple) else [(eval_X, eval_y)]
    )


@dataclasses.dataclass
class _FitArgs:
    """What the user gave to ``fit`` (X and y as given: the training pair is
    recognised inside ``eval_set`` by identity)."""

    X: Any
    y: Any
    sample_weight: ArrayLike | None = None
    init_score: ArrayLike | None = None
    group: ArrayLike | None = None  # ranker: query sizes
    eval_set: Any = None  # after ``of``: a list of (X, y) pairs, or None
    eval_names: list[str] | None = None
    eval_sample_weight: _PerEvalSet | None = None
    eval_class_weight: _PerEvalSet | None = None  # per eval_set entry, as class_weight
    eval_init_score: _PerEvalSet | None = None
    eval_group: _PerEvalSet | None = None  # ranker: query sizes of each eval_set entry
    eval_metric: _EvalMetric | None = None
    feature_name: Sequence[str] | Literal["auto"] | None = "auto"
    categorical_feature: Sequence[int | str] | Literal["auto"] | None = "auto"
    callbacks: list[Callable] | None = None
    init_model: _InitModel | None = None
    eval_X: Any = None
    eval_y: Any = None

    @classmethod
    def of(cls, values: Mapping[str, Any]) -> _FitArgs:
        """From a fit's ``locals()`` (a field the fit lacks keeps its default);
        ``eval_X``/``eval_y`` become ``eval_set``'s list of pairs."""
        args = cls(**{f.name: values.get(f.name, f.default) for f in dataclasses.fields(cls)})
        args.eval_set = _eval_set_of(args.eval_set, args.eval_X, args.eval_y)
        args.eval_X = args.eval_y = None
        return args


def _is_frame(X: Any) -> bool:
    """A pandas DataFrame (or alike: dtypes per column, positional iloc)."""
    return hasattr(X, "dtypes") and hasattr(X, "iloc") and getattr(X, "ndim", 0) == 2


def _has_category_columns(X: Any) -> bool:
    return _is_frame(X) and any(str(dtype) == "category" for dtype in X.dtypes)


def _category_codes_of(X: Any) -> Any:
    """What scikit-learn's checks see of ``X``: a DataFrame's category columns as
    their float codes (NaN: missing); any other X as it is.  What the Dataset
    and predict refuse is refused first (check_input): scikit-learn's checks
    would take dates as integers or fail without naming the column.  Sparse
    columns whose fill value is not 0 (NaN) are seen dense: scikit-learn's
    conversion to a COO matrix takes only fill value 0."""
    check_input(X, "X")
    if not _is_frame(X):
        return X
    recode = [i for i, dtype in enumerate(X.dtypes) if str(dtype) == "category"]
    densify = [i for i, dtype in enumerate(X.dtypes) if _sparse_fill_not_zero(dtype)]
    if not recode and not densify:
        return X
    out = X.copy()
    for i in recode:
        out.isetitem(i, category_codes(X.iloc[:, i]))
    for i in densify:
        out.isetitem(i, X.iloc[:, i].sparse.to_dense())
    return out


def _sparse_fill_not_zero(dtype: Any) -> bool:
    """A pandas SparseDtype whose fill value is not 0 (NaN, 1.5...)."""
    fill = getattr(dtype, "fill_value", 0) if str(dtype).startswith("Sparse[") else 0
    return bool(fill != 0)  # (NaN too)


def _metric_params(
    params: dict[str, Any],
    eval_metric: _EvalMetric | None,
    objective: _Objective,
    estimator_metric: str | None,
) -> list[_LabelFunctionWrapper]:
    """Sets ``params["metric"]``: the built-in metrics named in ``eval_metric``
    first, then the params' metric (or the objective's default, which the engine
    picks when "metric" is absent; for a custom objective the estimator's
    ``estimator_metric``, as LightGBM: l2, binary_logloss, ndcg...); returns the
    callables of ``eval_metric`` as fevals."""
    metrics = (
        eval_metric
        if isinstance(eval_metric, (list, tuple))
        else ([] if eval_metric is None else [eval_metric])
    )
    builtin = [m for m in metrics if isinstance(m, str)]
    fevals = [_LabelFunctionWrapper(m, "Custom eval metric") for m in metrics if callable(m)]
    metric_key = next((k for k in params if ALIASES.get(k) == "metric"), None)
    custom_default = callable(objective) and estimator_metric is not None and metric_key is None
    if builtin or custom_default:
        current = params.pop(metric_key) if metric_key else None
        if current is None or current == "":
            if callable(objective):
                current = [estimator_metric] if estimator_metric else []
            else:
                current = [default_metric(objective)]
        elif isinstance(current, str):
            current = current.split(",")
        params["metric"] = builtin + [m for m in current if m not in builtin]
    return fevals


def _multiclass_objective(objective: _Objective) -> bool:
    """Whether ``objective`` names a multiclass objective (softmax, ova...)."""
    return isinstance(objective, str) and OBJECTIVES.canonical(objective.strip().lower()) in (
        "multiclass",
        "multiclassova",
    )


def _classifier_metric_names(
    eval_metric: _EvalMetric | None, multiclass: bool
) -> _EvalMetric | None:
    """ "logloss"/"error" (and the other kind's names) as the binary or multiclass
    metric the model requires (multiclass: more than 2 classes or a multiclass
    objective, as LightGBM)."""
    if eval_metric is None or callable(eval_metric):
        return eval_metric
    names = list(eval_metric) if isinstance(eval_metric, (list, tuple)) else [eval_metric]
    if multiclass:
        rename = {
            "logloss": "multi_logloss",
            "binary_logloss": "multi_logloss",
            "error": "multi_error",
            "binary_error": "multi_error",
        }
    else:
        rename = {
            "logloss": "binary_logloss",
            "multi_logloss": "binary_logloss",
            "error": "binary_error",
            "multi_error": "binary_error",
        }
    return [rename.get(m, m) if isinstance(m, str) else m for m in names]


class DGBDTModel(BaseEstimator):
    """Shared base of the dgbdt scikit-learn estimators (LightGBM's ``LGBMModel`` shape).

    Parameters
    ----------
    boosting_type : str, default="gbdt"
    num_leaves : int, default=31
    max_depth : int, default=-1
        <= 0 means no limit.
    learning_rate : float, default=0.1
    n_estimators : int, default=100
        Number of boosting rounds.
    subsample_for_bin : int, default=200000
        Rows sampled to find the bin boundaries.
    objective : str, callable or None, default=None
        None means "regression" (regressor), "binary" or "multiclass"
        (classifier), "lambdarank" (ranker). A callable
        ``objective(y_true, y_pred) -> (grad, hess)`` (optionally with a third
        ``weight`` and a fourth ``group`` argument: the query sizes) is a custom
        objective; ``y_pred`` are raw scores, (n_samples,) or (n_samples, n_classes).
    class_weight : dict, "balanced" or None, default=None
        Weights per class, multiplied into ``sample_weight``; meant for the
        classifier (the others apply it to their label values, as LightGBM's).
    min_split_gain : float, default=0.0
    min_child_weight : float, default=1e-3
        Minimum sum of hessians in a leaf.
    min_child_samples : int, default=20
        Minimum number of samples in a leaf.
    subsample : float, default=1.0
        Bagging fraction (used when ``subsample_freq > 0``).
    subsample_freq : int, default=0
    colsample_bytree : float, default=1.0
    reg_alpha : float, default=0.0
        L1 regularisation.
    reg_lambda : float, default=0.0
        L2 regularisation.
    random_state : int, RandomState, Generator or None, default=None
        Seed; None uses the engine's default seed.
    n_jobs : int or None, default=None
        Threads; None or -1 means all cores, -2 all but one.
    max_bin : int, default=255
    tree_learner : str, default="serial"
    verbosity : int, default=-1
    importance_type : {"split", "gain"}, default="split"
        What ``feature_importances_`` counts.
    **kwargs
        Any other dgbdt/LightGBM training parameter (canonical name or alias),
        passed to :func:`dgbdt.train`; ``get_params`` includes them.
    """

    def __init__(
        self,
        *,
        boosting_type: str = "gbdt",
        num_leaves: int = 31,
        max_depth: int = -1,
        learning_rate: float = 0.1,
        n_estimators: int = 100,
        subsample_for_bin: int = 200000,
        objective: str | _CustomFunction | None = None,
        class_weight: dict[Any, float] | str | None = None,
        min_split_gain: float = 0.0,
        min_child_weight: float = 1e-3,
        min_child_samples: int = 20,
        subsample: float = 1.0,
        subsample_freq: int = 0,
        colsample_bytree: float = 1.0,
        reg_alpha: float = 0.0,
        reg_lambda: float = 0.0,
        random_state: int | np.random.RandomState | np.random.Generator | None = None,
        n_jobs: int | None = None,
        max_bin: int = 255,
        tree_learner: str = "serial",
        verbosity: int = -1,
        importance_type: str = "split",
        **kwargs: Any,
    ) -> None:
        self.boosting_type = boosting_type
        self.num_leaves = num_leaves
        self.max_depth = max_depth
        self.learning_rate = learning_rate
        self.n_estimators = n_estimators
        self.subsample_for_bin = subsample_for_bin
        self.objective = objective
        self.class_weight = class_weight
        self.min_split_gain = min_split_gain
        self.min_child_weight = min_child_weight
        self.min_child_samples = min_child_samples
        self.subsample = subsample
        self.subsample_freq = subsample_freq
        self.colsample_bytree = colsample_bytree
        self.reg_alpha = reg_alpha
        self.reg_lambda = reg_lambda
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.max_bin = max_bin
        self.tree_learner = tree_learner
        self.verbosity = verbosity
        self.importance_type = importance_type
        # Extra training parameters given as keyword arguments (private: scikit-learn's
        # check_no_attributes_set_in_init ignores names starting with "_").
        self._other_params: dict[str, Any] = {}
        self.set_params(**kwargs)

    # -- scikit-learn plumbing ------------------------------------------------
    @classmethod
    def _get_param_names(cls) -> list[str]:
        """Every constructor parameter along the class hierarchy: a subclass whose
        ``__init__`` takes ``**kwargs`` for its parent's keeps them (LightGBM's
        ``get_params`` walks the MRO the same way), so clone keeps them all."""
        names: set[str] = set()
        for klass in cls.__mro__:
            if issubclass(klass, DGBDTModel) and "__init__" in vars(klass):
                names.update(BaseEstimator._get_param_names.__func__(klass))
        return sorted(names)

    @classmethod
    def _signature_params(cls) -> set[str]:
        return set(cls._get_param_names())

    @classmethod
    def _subclass_params(cls) -> set[str]:
        """Constructor parameters a user's subclass adds (not dgbdt's estimators')."""
        return cls._signature_params() - set(DGBDTModel._get_param_names())

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """Parameters of the estimator, the extra ``**kwargs`` parameters included."""
        params = super().get_params(deep=deep)
        params.update(self._other_params)
        return params

    def set_params(self, **params: Any) -> DGBDTModel:
        """Set parameters; names that are not in the signature become extra training params."""
        known = self._signature_params()
        for key, value in params.items():
            setattr(self, key, value)
            if key not in known:
                self._other_params[key] = value
        return self

    def __sklearn_is_fitted__(self) -> bool:
        """Whether ``fit`` has completed (a clone is not fitted); an estimator
        pickled before ``fitted_`` existed is fitted when it holds its booster."""
        return bool(getattr(self, "fitted_", "booster_" in self.__dict__))

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.sparse = True
        tags.target_tags.one_d_labels = True
        return tags

    def _more_tags(self) -> dict[str, Any]:
        # scikit-learn < 1.6's tag hook, which LightGBM's users and tools still
        # read; "_xfail_checks" lists the checks dgbdt fails on purpose, with why.
        return {
            "allow_nan": True,
            "X_types": ["2darray", "sparse", "1dlabels"],
            "_xfail_checks": dict(_XFAIL_CHECKS),
        }

    # -- parameters -----------------------------------------------------------
    def _train_params(self, objective: _Objective) -> tuple[dict[str, Any], _Objective]:
        """The params dict given to dgbdt.train (n_estimators goes in num_boost_round)."""
        params = self.get_params(deep=False)
        for key in (
            "objective",
            "class_weight",
            "importance_type",
            "n_estimators",
            "random_state",
            "n_jobs",
        ):
            params.pop(key, None)
        # A subclass's own attributes are not training parameters (unless they are one).
        for key in self._subclass_params() - set(self._other_params):
            if ALIASES.get(key) is None:
                params.pop(key, None)
        # Every spelling goes to train, which keeps LightGBM's winner (the canonical
        # name, else its first alias: learning_rate=0.1 over eta=0.08) and logs the
        # others as LightGBM does; get_params and Booster.params keep them all.
        # An objective given in **kwargs under another name (e.g. "application") wins,
        # as in LightGBM.
        for key in list(params):
            if ALIASES.get(key) == "objective" and key in self._other_params:
                objective = params.pop(key)
        params["objective"] = (
            _LabelFunctionWrapper(objective, "Custom objective")
            if callable(objective)
            else objective
        )
        # random_state and n_jobs are aliases of seed and num_threads: a spelling given
        # in **kwargs wins (as in LightGBM) without a "both given" warning.
        seed = _seed(self.random_state)
        if seed is not None and not self._in_kwargs("seed"):
            params["seed"] = seed
        if not self._in_kwargs("num_threads"):
            params["num_threads"] = _n_threads(self.n_jobs)
        return params, objective

    def _in_kwargs(self, canonical: str) -> bool:
        return any(ALIASES.get(k) == canonical for k in self._other_params)

    # -- fit ------------------------------------------------------------------
    def fit(
        self: _Estimator,
        X: _MatrixLike,
        y: ArrayLike,
        sample_weight: ArrayLike | None = None,
        init_score: ArrayLike | None = None,
        group: ArrayLike | None = None,
        eval_set: _EvalSet | None = None,
        eval_names: list[str] | None = None,
        eval_sample_weight: _PerEvalSet | None = None,
        eval_class_weight: _PerEvalSet | None = None,
        eval_init_score: _PerEvalSet | None = None,
        eval_group: _PerEvalSet | None = None,
        eval_metric: _EvalMetric | None = None,
        feature_name: str | list[str] = "auto",
        categorical_feature: str | list[int | str] = "auto",
        callbacks: list[Callable] | None = None,
        init_model: _InitModel | None = None,
        *,
        eval_X: _MatrixLike | tuple[_MatrixLike, ...] | None = None,
        eval_y: ArrayLike | tuple[ArrayLike, ...] | None = None,
    ) -> _Estimator:
        """Fit the model (LightGBM's ``LGBMModel.fit``): the labels are trained on
        as given (numbers), with ``objective`` (default "regression"; give
        ``num_class`` for a multiclass objective).  The arguments are those of
        :meth:`DGBDTRegressor.fit`, and ``group``/``eval_group`` (query sizes,
        for a ranking objective) and ``eval_class_weight`` ("balanced" or
        {label: weight} per eval set, as ``class_weight``).

        Returns
        -------
        self
        """
        return self._fit_numeric(_FitArgs.of(locals()))

    def _fit_numeric(self: _Estimator, args: _FitArgs) -> _Estimator:
        """A fit on numeric labels as given (LGBMModel's and the regressor's)."""
        comm = self._sharded_comm()  # decided once per fit
        Xv, yv = self._validate_Xy(args.X, args.y, comm, y_numeric=True)
        yv = np.asarray(yv, dtype=np.float64)
        if self.class_weight is not None:  # LightGBM applies it for any estimator
            cw = self._row_class_weights(self.class_weight, yv)
            args.sample_weight = (
                cw
                if args.sample_weight is None
                else _check_sample_weight_compat(args.sample_weight, Xv) * cw
            )
        objective = self.objective if self.objective is not None else "regression"
        return self._fit(args, X=Xv, y=yv, objective=objective, extra_params={}, comm=comm)

    def _validate_X(self, X: Any, reset: bool, min_rows: int | None = None) -> Any:
        """X checked (``min_rows``: at least that many rows; by default 2 to fit, 1
        otherwise)."""
        checked = _validate_data(
            self,
            _category_codes_of(X),
            reset=reset,
            accept_sparse=_ACCEPT_SPARSE,
            dtype=_X_DTYPES,
            ensure_all_finite=False,
            ensure_min_samples=min_rows if min_rows is not None else 2 if reset else 1,
        )
        return X if _has_category_columns(X) else checked

    def _fit(
        self: _Estimator,
        args: _FitArgs,
        *,
        X: Any,
        y: np.ndarray,
        objective: _Objective,
        extra_params: dict[str, Any],
        comm: SerialComm | None,
        encode_y: Callable[[ArrayLike], np.ndarray] | None = None,
    ) -> _Estimator:
        """The fit shared by both estimators.

        ``args`` holds what the user gave to fit (``_FitArgs``); ``X``/``y`` are
        validated (``y`` encoded for classifiers); ``comm`` is the row-sharding
        communicator decided once for this fit (None when rows are not sharded).
        """
        sample_weight = args.sample_weight
        if sample_weight is not None:
            sample_weight = _check_sample_weight_compat(sample_weight, X)
        feature_name = args.feature_name
        if feature_name == "auto" and hasattr(self, "feature_names_in_"):
            feature_name = [str(c) for c in self.feature_names_in_]
        params, objective = self._train_params(objective)
        params.update(extra_params)
        fevals = _metric_params(params, args.eval_metric, objective, self._estimator_metric())
        train_set = Dataset(
            X,
            label=y,
            weight=sample_weight,
            group=args.group,
            init_score=args.init_score,
            feature_name=feature_name,
            categorical_feature=args.categorical_feature,
        )
        valid_sets, valid_names = self._valid_sets(
            args, train_set, feature_name, encode_y, sharded=comm is not None
        )
        init_model = args.init_model
        if isinstance(init_model, DGBDTModel):
            check_is_fitted(init_model)
            init_model = init_model.booster_
        callbacks = list(args.callbacks) if args.callbacks is not None else []
        evals_result: dict[str, dict[str, list[float]]] = {}
        callbacks.append(record_evaluation(evals_result))
        booster = train(
            params,
            train_set,
            num_boost_round=self.n_estimators,
            valid_sets=valid_sets,
            valid_names=valid_names,
            feval=fevals or None,
            init_model=init_model,
            callbacks=callbacks,
        )
        return self._record_fit(booster, objective, evals_result)

    def _valid_sets(
        self,
        args: _FitArgs,
        train_set: Dataset,
        feature_name: Sequence[str] | Literal["auto"] | None,
        encode_y: Callable[[ArrayLike], np.ndarray] | None,
        sharded: bool = False,
    ) -> tuple[list[Dataset], list[str]]:
        """(valid_sets, valid_names) of ``eval_set``: the training pair itself is
        train_set (evaluated on the training scores, skipped by early stopping,
        as in LightGBM).  With rows ``sharded`` over ranks a rank's share of an
        eval set may have no rows."""
        valid_sets: list[Dataset] = []
        valid_names: list[str] = []
        eval_set = args.eval_set
        if eval_set is None:
            return valid_sets, valid_names
        if isinstance(eval_set, tuple):
            eval_set = [eval_set]
        n = len(eval_set)
        weights = _eval_list(args.eval_sample_weight, "eval_sample_weight", n)
        inits = _eval_list(args.eval_init_score, "eval_init_score", n)
        groups = _eval_list(args.eval_group, "eval_group", n)
        class_weights = _eval_list(args.eval_class_weight, "eval_class_weight", n)
        for i, pair in enumerate(eval_set):
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise TypeError(f"eval_set[{i}] must be a pair (X, y), got {type(pair).__name__}")
            vx, vy = pair
            is_train = vx is args.X and vy is args.y
            if is_train:
                valid_sets.append(train_set)
            else:
                vx = self._validate_X(vx, reset=False, min_rows=0 if sharded else 1)
                vy = np.asarray(vy).ravel() if encode_y is None else encode_y(vy)
                vw = weights[i]
                if vw is not None:
                    vw = _check_sample_weight(vw, vx, dtype=np.float64)
                if class_weights[i] is not None:
                    cw = self._row_class_weights(class_weights[i], vy)
                    vw = cw if vw is None else vw * cw
                valid_sets.append(
                    Dataset(
                        vx,
                        label=vy,
                        weight=vw,
                        group=groups[i],
                        init_score=inits[i],
                        feature_name=feature_name,
                        reference=train_set,
                    )
                )
            if args.eval_names is not None and i < len(args.eval_names):
                valid_names.append(args.eval_names[i])
            else:
                valid_names.append("training" if is_train else f"valid_{i}")
        return valid_sets, valid_names

    def _row_class_weights(self, class_weight: Any, y: np.ndarray) -> np.ndarray:
        """Per-row weights of ``class_weight`` ("balanced" or {label: weight}) for
        labels ``y`` as the model trains on them (a classifier's encoded labels)."""
        return compute_sample_weight(class_weight, y)

    def _estimator_metric(self) -> str | None:
        """The metric a custom objective is evaluated with (LightGBM's per estimator)."""
        return None

    def _record_fit(
        self: _Estimator,
        booster: Booster,
        objective: _Objective,
        evals_result: dict[str, dict[str, list[float]]],
    ) -> _Estimator:
        self.booster_ = booster
        self.objective_ = objective
        self.evals_result_ = evals_result
        self.best_iteration_ = int(booster.best_iteration)
        # Without early stopping LightGBM reports the last iteration's results.
        self.best_score_ = booster.best_score or {
            data: {metric: values[-1] for metric, values in per_data.items()}
            for data, per_data in evals_result.items()
        }
        self.n_estimators_ = booster.current_iteration()
        self.n_iter_ = self.n_estimators_
        self.fitted_ = True
        return self

    # -- predict --------------------------------------------------------------
    def _predict_raw(
        self,
        X: _MatrixLike,
        raw_score: bool = False,
        start_iteration: int = 0,
        num_iteration: int | None = None,
        pred_leaf: bool = False,
        pred_contrib: bool = False,
        validate_features: bool = True,
        kwargs: Mapping[str, Any] | None = None,
    ) -> Any:  # Booster.predict's: an array, or sparse matrices (pred_contrib on sparse X)
        check_is_fitted(self)
        # prediction parameters given to the estimator (pred_early_stop, ...) act
        # here, predict's own keywords winning: LightGBM's rule
        kwargs = {
            k: v for k, v in self._other_params.items() if lightgbm_canonical(k) in PREDICT_KEYS
        } | dict(kwargs or {})
        # n_jobs is the threads of predict too, unless predict was given a number
        if not any(ALIASES.get(k) == "num_threads" for k in kwargs):
            kwargs["num_threads"] = _n_threads(self.n_jobs)
        return self.booster_.predict(
            self._predict_X(X),
            raw_score=raw_score,
            start_iteration=start_iteration,
            num_iteration=num_iteration,
            pred_leaf=pred_leaf,
            pred_contrib=pred_contrib,
            validate_features=validate_features,
            **kwargs,
        )

    def _predict_X(self, X: Any) -> Any:
        """``X`` checked for predict: a DataFrame goes to the Booster as it is
        (its column names are checked there, by ``validate_features``, as
        LightGBM's), its width checked here; other input as scikit-learn checks it."""
        if not _is_frame(X):
            return self._validate_X(X, reset=False)
        check_input(X, "X")
        if X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {X.shape[1]} features, but {type(self).__name__} is expecting "
                f"{self.n_features_in_} features as input."
            )
        return X

    def predict(
        self,
        X: _MatrixLike,
        raw_score: bool = False,
        start_iteration: int = 0,
        num_iteration: int | None = None,
        pred_leaf: bool = False,
        pred_contrib: bool = False,
        validate_features: bool = True,
        **kwargs: Any,
    ) -> np.ndarray:
        """Predicted values; raw scores with ``raw_score=True``; leaf indices
        (n_samples, n_trees) with ``pred_leaf=True``; SHAP feature contributions
        with ``pred_contrib=True`` (:meth:`dgbdt.Booster.predict`: per class
        n_features + 1 columns, the last the bias; sparse matrices for sparse X).
        ``num_iteration=None`` uses the best iteration when early stopping found
        one; trees from ``start_iteration`` on.  ``validate_features``: a
        DataFrame's column names must be the training's (True, dgbdt's default
        as its Booster's; LightGBM's is False) or are ignored (False: by
        position).  ``**kwargs``: prediction parameters for
        :meth:`dgbdt.Booster.predict` (``num_threads``; default ``n_jobs``)."""
        return self._predict_raw(
            X,
            raw_score,
            start_iteration,
            num_iteration,
            pred_leaf,
            pred_contrib,
            validate_features,
            kwargs,
        )

    # -- fitted attributes ----------------------------------------------------
    @property
    def feature_importances_(self) -> np.ndarray:
        """Per feature: number of splits ("split") or total gain ("gain") (``importance_type``)."""
        check_is_fitted(self)
        return self.booster_.feature_importance(importance_type=self.importance_type)

    @property
    def n_features_(self) -> int:
        """The number of features of the fitted model (LightGBM's ``n_features_``)."""
        check_is_fitted(self, msg="No n_features found. Need to call fit beforehand.")
        return int(self.n_features_in_)

    @property
    def feature_name_(self) -> list[str]:
        """Feature names of the fitted model (``Column_i`` when X had none)."""
        check_is_fitted(self)
        return self.booster_.feature_name()

    def _sharded_comm(self) -> SerialComm | None:
        """The world communicator when rows are sharded over several ranks
        (data- and voting-parallel under mpiexec), else None."""
        learner = self.tree_learner
        for key, value in self._other_params.items():
            if ALIASES.get(key) == "tree_learner":  # (LightGBM-only keys: not in the table)
                learner = value
        choices = PARAMS["tree_learner"].choices
        assert choices is not None  # tree_learner is a choice parameter
        if not shards_rows(choices.get(str(learner).lower(), "serial")):
            return None

        time_out = [
            v for k, v in self._other_params.items() if ALIASES.get(str(k).strip()) == "time_out"
        ]
        comm = world_comm(parse_param("time_out", time_out[0]) if time_out else None)
        return comm if comm.size > 1 else None

    def _validate_Xy(
        self, X: Any, y: Any, comm: SerialComm | None, y_numeric: bool = False
    ) -> tuple[Any, Any]:
        """Validated (X, y) of a fit: rows are needed on this rank (2) unless rows
        are sharded over ranks (``comm``; a rank with no rows still takes part)."""
        Xv, yv = _validate_data(
            self,
            _category_codes_of(X),
            y,
            reset=True,
            accept_sparse=_ACCEPT_SPARSE,
            dtype=_X_DTYPES,
            ensure_all_finite=False,
            ensure_min_samples=0 if comm is not None else 2,
            y_numeric=y_numeric,
        )
        # a frame of category columns goes to the Dataset as it is (its categories)
        return (X if _has_category_columns(X) else Xv), yv


class DGBDTRegressor(RegressorMixin, DGBDTModel):
    """Gradient-boosted trees regressor (LightGBM's ``LGBMRegressor`` API).

    See :class:`DGBDTModel` for the parameters.
    """

    def fit(  # type: ignore[override]  # (LightGBM's arguments per estimator)
        self,
        X: _MatrixLike,
        y: ArrayLike,
        sample_weight: ArrayLike | None = None,
        init_score: ArrayLike | None = None,
        eval_set: _EvalSet | None = None,
        eval_names: list[str] | None = None,
        eval_sample_weight: _PerEvalSet | None = None,
        eval_init_score: _PerEvalSet | None = None,
        eval_metric: _EvalMetric | None = None,
        feature_name: str | list[str] = "auto",
        categorical_feature: str | list[int | str] = "auto",
        callbacks: list[Callable] | None = None,
        init_model: _InitModel | None = None,
        *,
        eval_X: _MatrixLike | tuple[_MatrixLike, ...] | None = None,
        eval_y: ArrayLike | tuple[ArrayLike, ...] | None = None,
    ) -> DGBDTRegressor:
        """Fit the model.

        Parameters
        ----------
        X : array-like, DataFrame or sparse matrix of shape (n_samples, n_features)
            NaN means missing.
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), optional
        init_score : array-like of shape (n_samples,), optional
            Starting raw scores.
        eval_set : list of (X, y) pairs, optional
            Deprecated (a DGBDTDeprecationWarning, as LightGBM 4.7): use
            ``eval_X`` and ``eval_y``.
        eval_names : list of str, optional
        eval_sample_weight : list of array-like, optional
        eval_metric : str, callable or list of them, optional
            Built-in metric names are evaluated in addition to the params' metric;
            a callable ``metric(y_true, y_pred) -> (name, value, is_higher_better)``.
        feature_name : list of str or "auto"
        categorical_feature : list of int or str, or "auto"
            The categorical columns (indices or names); "auto" takes a
            DataFrame's category columns (see :class:`dgbdt.Dataset`).
        callbacks : list of callables, optional
            E.g. ``[dgbdt.early_stopping(10)]``.
        init_model : str, Booster or fitted DGBDTRegressor, optional
            Continue training this model.
        eval_init_score : list of array-like, optional
        eval_X, eval_y : array-like, or tuples of them, optional
            Validation data (one set, or a tuple of sets with a tuple of their
            labels), evaluated after every round (``evals_result_``) and used
            by early stopping; the training (X, y) itself is reported as
            "training" and not used by early stopping.

        Returns
        -------
        self
        """
        return self._fit_numeric(_FitArgs.of(locals()))

    def _estimator_metric(self) -> str | None:
        return "l2"


def _encode_eval_labels(encoder: LabelEncoder, labels: ArrayLike) -> np.ndarray:
    """An eval set's labels encoded as the training's (an unseen label is an error)."""
    labels = np.asarray(labels).ravel()
    unknown = np.setdiff1d(labels, encoder.classes_)
    if unknown.size:
        raise ValueError(
            f"eval_set labels {unknown.tolist()!r} were not in the training "
            f"labels {encoder.classes_.tolist()!r}"
        )
    return encoder.transform(labels).astype(np.float64)


def _label_kind(labels: np.ndarray) -> str:
    """What a rank's labels are (strings, booleans, integers, floats or objects),
    for the agreement of their types over the ranks."""
    kind = labels.dtype.kind
    if kind in "US" or (kind == "O" and all(isinstance(v, str) for v in labels)):
        return "strings"
    return {"b": "booleans", "i": "integers", "u": "integers", "f": "floats"}.get(kind, "objects")


class DGBDTClassifier(ClassifierMixin, DGBDTModel):
    """Gradient-boosted trees classifier (LightGBM's ``LGBMClassifier`` API).

    Two classes train a "binary" model, more a "multiclass" one (``num_class``
    set from the data). Labels may be of any type: they are encoded with a
    LabelEncoder and ``predict`` returns the original labels. See
    :class:`DGBDTModel` for the parameters.
    """

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = True
        tags.classifier_tags.multi_label = False
        return tags

    def _encode_labels(
        self, y: np.ndarray, comm: SerialComm | None
    ) -> tuple[LabelEncoder, np.ndarray]:
        """(LabelEncoder fitted on every rank's labels, this rank's encoded ``y``)."""
        check_classification_targets(y)
        encoder = LabelEncoder().fit(self._global_labels(y, comm))
        classes = encoder.classes_
        if len(classes) < 2:
            raise ValueError(
                f"y contains only one class ({classes[0]!r}); the classifier needs "
                "samples of at least 2 classes"
            )
        return encoder, encoder.transform(y).astype(np.float64)

    @staticmethod
    def _global_labels(y: np.ndarray, comm: SerialComm | None) -> np.ndarray:
        """The distinct labels of every rank's ``y`` under row-sharded training
        (a rank's shard may lack a class); this rank's ``y`` otherwise."""
        if comm is None:
            return y
        # Once per fit, so a pickled all-gather of the label sets is fine here.
        every = [np.asarray(u) for u in comm.per_rank_objects(np.unique(y))]
        kinds = {r: _label_kind(u) for r, u in enumerate(every) if u.size}  # (empty shards)
        # joined, strings and numbers would make classes of both ("1" and 1); numbers
        # of several dtypes join as one process's would (scikit-learn takes them)
        numbers = ("booleans", "integers", "floats")
        if len({"numbers" if kind in numbers else kind for kind in kinds.values()}) > 1:
            found = ", ".join(f"rank {r} has {kind}" for r, kind in kinds.items())
            raise agreed(
                ValueError(
                    f"the labels' types differ between ranks: {found}; every rank's y must "
                    "hold labels of one type (all strings or all numbers)"
                )
            )
        return np.concatenate(every)

    @staticmethod
    def _class_totals(
        y_enc: np.ndarray,
        n_classes: int,
        comm: SerialComm | None,
        weights: np.ndarray | None = None,
    ) -> np.ndarray:
        """Per-class row counts (or weight sums) over every rank's rows."""
        totals = np.bincount(y_enc.astype(np.int64), weights=weights, minlength=n_classes)
        return totals if comm is None else comm.total(totals)

    def fit(  # type: ignore[override]  # (LightGBM's arguments per estimator)
        self,
        X: _MatrixLike,
        y: ArrayLike,
        sample_weight: ArrayLike | None = None,
        init_score: ArrayLike | None = None,
        eval_set: _EvalSet | None = None,
        eval_names: list[str] | None = None,
        eval_sample_weight: _PerEvalSet | None = None,
        eval_class_weight: _PerEvalSet | None = None,
        eval_init_score: _PerEvalSet | None = None,
        eval_metric: _EvalMetric | None = None,
        feature_name: str | list[str] = "auto",
        categorical_feature: str | list[int | str] = "auto",
        callbacks: list[Callable] | None = None,
        init_model: _InitModel | None = None,
        *,
        eval_X: _MatrixLike | tuple[_MatrixLike, ...] | None = None,
        eval_y: ArrayLike | tuple[ArrayLike, ...] | None = None,
    ) -> DGBDTClassifier:
        """Fit the model. Same arguments as :meth:`DGBDTRegressor.fit`; ``y`` holds
        class labels; ``eval_class_weight``: per eval set, "balanced" or
        {label: weight} multiplied into its sample weights (as ``class_weight``).

        ``eval_metric`` names ``"logloss"`` and ``"error"`` map to the binary or
        multiclass metric as the number of classes requires.

        Returns
        -------
        self
        """
        args = _FitArgs.of(locals())
        comm = self._sharded_comm()  # decided once per fit
        Xv, yv = self._validate_Xy(X, y, comm)
        encoder, y_enc = self._encode_labels(yv, comm)
        classes = encoder.classes_
        args.sample_weight = self._class_sample_weight(args.sample_weight, Xv, y_enc, encoder, comm)
        n_classes = len(classes)
        objective = self.objective
        if objective is None:
            objective = "multiclass" if n_classes > 2 else "binary"
        args.eval_metric = _classifier_metric_names(
            args.eval_metric, n_classes > 2 or _multiclass_objective(objective)
        )
        self.classes_ = classes
        self.n_classes_ = n_classes
        extra = self._num_class_params(objective, n_classes)
        encode = functools.partial(_encode_eval_labels, encoder)
        return self._fit(
            args, X=Xv, y=y_enc, objective=objective, extra_params=extra, comm=comm, encode_y=encode
        )

    def _class_sample_weight(
        self,
        sample_weight: ArrayLike | None,
        X: Any,
        y_enc: np.ndarray,
        encoder: LabelEncoder,
        comm: SerialComm | None,
    ) -> ArrayLike | None:
        """The sample weights with ``class_weight`` applied (None without either)."""
        classes = encoder.classes_
        class_weight = self.class_weight
        if isinstance(class_weight, dict):
            unknown = [k for k in class_weight if k not in set(classes.tolist())]
            if unknown:
                raise ValueError(
                    f"class_weight has labels {unknown!r} that are not in y; "
                    f"classes are {classes.tolist()!r}"
                )
            class_weight = {int(encoder.transform([k])[0]): v for k, v in class_weight.items()}
        weighted = sample_weight is not None
        if comm is not None:  # every rank takes the same path (its collectives)
            weighted = comm.any_rank(weighted)
        if not weighted and class_weight is None:
            return sample_weight
        w = (
            _check_sample_weight_compat(sample_weight, X)
            if sample_weight is not None
            else np.ones(len(y_enc))
        )
        if isinstance(class_weight, str) and class_weight == "balanced":
            # scikit-learn's n_samples / (n_classes * count), counted over all ranks
            counts = self._class_totals(y_enc, len(classes), comm)
            w = w * (counts.sum() / (len(classes) * counts))[y_enc.astype(np.int64)]
        elif class_weight is not None:
            w = w * compute_sample_weight(class_weight, y_enc)
        if np.count_nonzero(self._class_totals(y_enc, len(classes), comm, w) > 0) < 2:
            raise ValueError(
                "Only one class has a positive total weight; the classifier "
                "needs samples of at least 2 classes with non-zero weight"
            )
        return w

    def _more_tags(self) -> dict[str, Any]:
        tags = super()._more_tags()
        tags["_xfail_checks"].update(_CLASSIFIER_XFAIL_CHECKS)
        return tags

    def _row_class_weights(self, class_weight: Any, y: np.ndarray) -> np.ndarray:
        if isinstance(class_weight, dict):  # by label, as given to fit
            index = {c: i for i, c in enumerate(self.classes_.tolist())}
            unknown = [k for k in class_weight if k not in index]
            if unknown:
                raise ValueError(
                    f"eval_class_weight has labels {unknown!r} that are not in y; "
                    f"classes are {self.classes_.tolist()!r}"
                )
            class_weight = {index[k]: v for k, v in class_weight.items()}
        return compute_sample_weight(class_weight, y)

    def _estimator_metric(self) -> str | None:
        return "multi_logloss" if self.n_classes_ > 2 else "binary_logloss"

    def _num_class_params(self, objective: _Objective, n_classes: int) -> dict[str, int]:
        """num_class (and any alias of it given in **kwargs) for a multiclass fit."""
        extra: dict[str, int] = {}
        if n_classes > 2 or _multiclass_objective(objective):
            for key in [k for k in self._other_params if ALIASES.get(k) == "num_class"]:
                extra[key] = n_classes
            extra["num_class"] = n_classes
        return extra

    def _uses_custom_objective(self) -> bool:
        check_is_fitted(self)
        return callable(self.objective_)

    def predict_proba(
        self,
        X: _MatrixLike,
        raw_score: bool = False,
        start_iteration: int = 0,
        num_iteration: int | None = None,
        pred_leaf: bool = False,
        pred_contrib: bool = False,
        validate_features: bool = True,
        **kwargs: Any,
    ) -> np.ndarray:
        """Class probabilities, shape (n_samples, n_classes); raw scores, leaf
        indices or SHAP contributions with ``raw_score``, ``pred_leaf`` or
        ``pred_contrib``; the other arguments as :meth:`DGBDTModel.predict` (LightGBM's).

        With a custom objective the model cannot know the link function: the
        raw scores are returned (with a warning), as in LightGBM.
        """
        custom = self._uses_custom_objective()  # also raises NotFittedError
        result = self._predict_raw(
            X,
            raw_score,
            start_iteration,
            num_iteration,
            pred_leaf,
            pred_contrib,
            validate_features,
            kwargs,
        )
        if raw_score or pred_leaf or pred_contrib:
            return result
        if custom:
            warnings.warn(
                "Cannot compute class probabilities with a custom objective; "
                "returning raw scores instead",
                UserWarning,
                stacklevel=2,
            )
            return result
        if result.ndim == 1:
            return np.column_stack((1.0 - result, result))
        return result

    def predict(
        self,
        X: _MatrixLike,
        raw_score: bool = False,
        start_iteration: int = 0,
        num_iteration: int | None = None,
        pred_leaf: bool = False,
        pred_contrib: bool = False,
        validate_features: bool = True,
        **kwargs: Any,
    ) -> np.ndarray:
        """Predicted class labels (the labels given to ``fit``); raw scores with
        ``raw_score=True``, leaf indices with ``pred_leaf=True``, SHAP feature
        contributions (of the raw scores) with ``pred_contrib=True``, as LightGBM;
        the other arguments as :meth:`DGBDTModel.predict`.

        With a custom objective the labels come from the raw scores: the
        largest score per row (multiclass) or score > 0 (binary).
        """
        custom = self._uses_custom_objective()
        result = self._predict_raw(
            X,
            raw_score or custom,
            start_iteration,
            num_iteration,
            pred_leaf,
            pred_contrib,
            validate_features,
            kwargs,
        )
        if raw_score or pred_leaf or pred_contrib:
            return result
        if custom:
            index = np.argmax(result, axis=1) if result.ndim == 2 else (result > 0).astype(np.int64)
        else:
            index = (
                np.argmax(result, axis=1) if result.ndim == 2 else (result > 0.5).astype(np.int64)
            )
        return self.classes_[index]

    def decision_function(self, X: _MatrixLike, num_iteration: int | None = None) -> np.ndarray:
        """Raw scores: (n_samples,) for two classes, (n_samples, n_classes) otherwise."""
        return self._predict_raw(X, True, num_iteration=num_iteration)


class DGBDTRanker(DGBDTModel):
    """Gradient-boosted trees ranker (LightGBM's ``LGBMRanker`` API).

    ``fit`` needs ``group``, the number of rows of each query (rows of a query
    are consecutive); the objective defaults to "lambdarank" and the metric to
    "ndcg", reported at each position of ``eval_at`` ("ndcg@1", ...).
    ``predict`` returns the raw ranking scores. Under mpiexec with
    ``tree_learner="data"`` (or "voting") each rank passes its own whole
    queries and their sizes (a query never spans two ranks), and its own
    validation queries. See :class:`DGBDTModel` for the parameters.

    scikit-learn has no ranker estimator type: like LightGBM's, the tags name
    it neither a classifier nor a regressor.
    """

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True  # fit needs y (and group)
        return tags

    def fit(  # type: ignore[override]  # (LightGBM's arguments per estimator)
        self,
        X: _MatrixLike,
        y: ArrayLike,
        sample_weight: ArrayLike | None = None,
        init_score: ArrayLike | None = None,
        group: ArrayLike | None = None,
        eval_set: _EvalSet | None = None,
        eval_names: list[str] | None = None,
        eval_sample_weight: _PerEvalSet | None = None,
        eval_init_score: _PerEvalSet | None = None,
        eval_group: _PerEvalSet | None = None,
        eval_metric: _EvalMetric | None = None,
        eval_at: list[int] | tuple[int, ...] = (1, 2, 3, 4, 5),
        feature_name: str | list[str] = "auto",
        categorical_feature: str | list[int | str] = "auto",
        callbacks: list[Callable] | None = None,
        init_model: _InitModel | None = None,
        *,
        eval_X: _MatrixLike | tuple[_MatrixLike, ...] | None = None,
        eval_y: ArrayLike | tuple[ArrayLike, ...] | None = None,
    ) -> DGBDTRanker:
        """Fit the model. Arguments as :meth:`DGBDTRegressor.fit`, and:

        Parameters
        ----------
        group : array-like of int
            Required: the size of each query, in row order (they sum to n_samples).
        eval_group : list of array-like
            Required with ``eval_set``: the query sizes of each eval_set entry.
        eval_at : list or tuple of int, default=(1, 2, 3, 4, 5)
            The positions k of "ndcg@k" and "map@k" (the ``eval_at`` parameter;
            an ``eval_at`` alias among the parameters wins, with a warning).

        Returns
        -------
        self
        """
        if group is None:
            raise ValueError("Should set group for ranking task")
        if eval_group is None and not (eval_set is None and eval_X is None and eval_y is None):
            raise ValueError(
                "eval_group cannot be None if any of eval_set, eval_X, or eval_y are provided"
            )
        args = _FitArgs.of(locals())
        self._check_groups(args.eval_set, eval_group)
        comm = self._sharded_comm()  # decided once per fit
        Xv, yv = self._validate_Xy(X, y, comm, y_numeric=True)
        yv = np.asarray(yv, dtype=np.float64)
        objective = self.objective if self.objective is not None else "lambdarank"
        extra = self._eval_at_params(eval_at)
        return self._fit(args, X=Xv, y=yv, objective=objective, extra_params=extra, comm=comm)

    @staticmethod
    def _check_groups(eval_set: list[Any] | None, eval_group: _PerEvalSet | None) -> None:
        """LightGBM's check: eval_group has one entry per eval set."""
        if eval_set is not None and eval_group is not None and len(eval_group) != len(eval_set):
            raise ValueError(
                f"Length of eval_group ({len(eval_group)}) not equal to length of "
                f"eval_set ({len(eval_set)})"
            )

    def _eval_at_params(self, eval_at: list[int] | tuple[int, ...]) -> dict[str, list[int]]:
        """{"eval_at": eval_at}, unless an alias of it is among the parameters:
        that one wins, with LightGBM's warning."""
        given = [k for k in self._other_params if ALIASES.get(k) == "eval_at"]
        if given:
            warnings.warn(
                f"Found '{given[0]}' in params. Will use it instead of 'eval_at' argument",
                UserWarning,
                stacklevel=3,
            )
            return {}
        return {"eval_at": np.atleast_1d(np.asarray(eval_at)).ravel().tolist()}

    def _estimator_metric(self) -> str | None:
        return "ndcg"
