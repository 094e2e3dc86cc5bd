"""A trained model (:class:`Model`): its trees, predictions, inspection and
file.  ``dgbdt.Booster`` (dgbdt.booster) adds LightGBM's training state to it."""

from __future__ import annotations

import json
import numbers
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import numba
import numpy as np
import numpy.typing as npt

from ..data.binning import BinMapper, WideBinMapper
from ..data.dataset import Dataset
from ..data.inputs import is_sparse, predict_matrix, row_blocks, scipy_sparse
from ..data.names import ColumnNames
from ..io.options import read_key, read_options
from ..io.reading import first_row_width, read_data
from ..log import DGBDTError
from ..native.predict import predict_leaf_index, predict_raw
from ..native.shap import tree_shap
from ..objective.objectives import model_objective
from ..params.lightgbm_keys import lightgbm_canonical, parse_bool
from ..params.table import ALIASES
from .json_file import model_to_json, write_atomic
from .lightgbm_export import exported_trees, node_records, split_values, to_lightgbm_json
from .loader import load_model_file, model_from_text
from .text_file import model_to_text
from .tree import CATEGORICAL, LARGEST, Tree

if TYPE_CHECKING:
    import pandas as pd
    import scipy.sparse as sp

    from ..distributed.comm import CommStats

_M = TypeVar("_M", bound="Model")
_T = TypeVar("_T")

# Sparse data wider than this is predicted from the columns the trees split on.
NARROW_MIN_COLUMNS = 1 << 16


def _refuse_dataset(data: Any) -> None:
    """predict takes the data itself, as LightGBM's."""
    if isinstance(data, Dataset):
        raise TypeError(
            "Booster.predict takes the data itself (a numpy array, pandas DataFrame "
            "or scipy.sparse matrix), not a dgbdt.Dataset: cannot use a Dataset "
            "instance for prediction, please use raw data instead"
        )


#: LightGBM's objectives whose predictions may stop early (NeedAccuratePrediction
#: false: binary, multiclass and ranking, src/objective/*.hpp)
_EARLY_STOP_OBJECTIVES = frozenset(
    {"binary", "multiclass", "multiclassova", "lambdarank", "rank_xendcg"}
)


@dataclass(frozen=True)
class PredictOptions:
    """predict's LightGBM parameters (its ``**kwargs``)."""

    threads: int
    #: (pred_early_stop_freq, pred_early_stop_margin) when pred_early_stop is set
    early_stop: tuple[int, float] | None
    disable_shape_check: bool
    #: how to read a data file (header, label_column, ...), by canonical name
    read_keys: dict[str, object]


def _predict_threads(threads: list[tuple[str, Any]]) -> int:
    """The threads predict uses from its ``num_threads`` (or alias) keywords,
    <= 0 all cores."""
    if len(threads) > 1:
        raise TypeError(
            f"Booster.predict() got {' and '.join(k for k, _ in threads)}: "
            "give the number of threads once"
        )
    available = numba.config.NUMBA_NUM_THREADS
    if not threads:
        return numba.get_num_threads()
    key, value = threads[0]
    if not isinstance(value, numbers.Integral) or isinstance(value, bool):
        raise TypeError(f"{key} must be an integer, got {value!r}")
    return available if value <= 0 else min(int(value), available)


def _option(given: Mapping[str, tuple[str, Any]], name: str, kind: type, default: Any) -> Any:
    """predict's parameter ``name`` (bool, int or float) from ``given``, checked."""
    if name not in given:
        return default
    key, value = given[name]
    if kind is bool:
        out = parse_bool(value)
        if out is None:
            raise ValueError(f"{key} must be true or false, got {value!r}")
        return out
    try:
        number = kind(value)
    except (TypeError, ValueError):
        raise ValueError(f"{key} must be a number, got {value!r}") from None
    if number != float(value) or not (number > 0 if kind is int else number >= 0):
        want = "a positive integer" if kind is int else "a number >= 0"
        raise ValueError(f"{key} must be {want}, got {value!r}")
    return number


def predict_options(kwargs: Mapping[str, Any]) -> PredictOptions:
    """predict's keyword arguments, LightGBM's parameters: ``num_threads``,
    ``pred_early_stop`` (with ``pred_early_stop_freq`` and
    ``pred_early_stop_margin``), ``predict_disable_shape_check``, a data
    file's read keys; other LightGBM parameters do nothing (as in LightGBM);
    any other keyword is a TypeError."""
    threads = [(k, v) for k, v in kwargs.items() if ALIASES.get(k) == "num_threads"]
    given: dict[str, tuple[str, Any]] = {}
    read_keys: dict[str, object] = {}
    unknown = []
    for key, value in kwargs.items():
        name = lightgbm_canonical(key)
        if read_key(key) is not None:
            read_keys[str(read_key(key))] = value
        elif name is not None:
            given[name] = (key, value)
        elif ALIASES.get(key) is None:
            unknown.append(key)
    if unknown:
        raise TypeError(
            f"Booster.predict() got unexpected keyword arguments: {', '.join(map(repr, unknown))}"
        )
    early = None
    if _option(given, "pred_early_stop", bool, False):
        early = (
            _option(given, "pred_early_stop_freq", int, 10),
            _option(given, "pred_early_stop_margin", float, 10.0),
        )
    return PredictOptions(
        _predict_threads(threads),
        early,
        _option(given, "predict_disable_shape_check", bool, False),
        read_keys,
    )


def _iteration_arg(value: object, name: str) -> int | None:
    """An iteration count argument: an integer or None."""
    if value is None or (isinstance(value, numbers.Integral) and not isinstance(value, bool)):
        return None if value is None else int(value)
    raise TypeError(f"{name} must be an integer or None, got {value!r}")


def _flat_categories(trees: Sequence[Tree], threshold: np.ndarray) -> dict[str, np.ndarray]:
    """The trees' categorical bitsets as one (cat_boundaries, cat_threshold)
    pair; each categorical node's ``threshold`` (in the flat array, changed in
    place) becomes its bitset's index in the pair."""
    bounds: list[np.ndarray] = []
    words: list[np.ndarray] = []
    node, n_bitsets, n_words = 0, 0, 0
    for t in trees:
        m = t.n_leaves - 1
        categorical = (np.asarray(t.default_left[:m]) & CATEGORICAL) != 0
        threshold[node : node + m][categorical] += n_bitsets
        bounds.append(np.asarray(t.cat_boundaries[:-1], np.int64) + n_words)
        words.append(np.asarray(t.cat_threshold, np.uint32))
        n_bitsets += len(t.cat_boundaries) - 1
        n_words += len(t.cat_threshold)
        node += m
    return {
        "cat_boundaries": np.concatenate([*bounds, [n_words]]).astype(np.int64),
        "cat_threshold": np.ascontiguousarray(
            np.concatenate(words) if words else np.zeros(0), np.uint32
        ),
    }


def _sparse_contributions(
    chunks: Sequence[np.ndarray | list[sp.spmatrix]], data: Any, n_classes: int, n_features: int
) -> sp.spmatrix | list[sp.spmatrix]:
    """LightGBM's sparse ``pred_contrib`` (basic.py ``__create_sparse_native``):
    per class one matrix of shape (n, n_features + 1), CSC for a csc_matrix and
    CSR otherwise, float32 for float32 data; a list for several classes."""
    sp = scipy_sparse()
    dtype = np.float32 if data.dtype == np.float32 else np.float64
    matrices = []
    for c in range(n_classes):
        parts = [chunk[c] for chunk in chunks]
        m = sp.vstack(parts, format="csr") if parts else sp.csr_matrix((0, n_features + 1))
        m = m.astype(dtype)
        matrices.append(m.tocsc() if isinstance(data, sp.csc_matrix) else m)
    return matrices[0] if n_classes == 1 else matrices


class Model:
    """A gradient-boosted tree model: its trees, predictions, inspection and
    file (``Model(model_file=path)`` / ``Model(model_str=text)``).  Users hold
    its subclass :class:`dgbdt.Booster`, which adds the training state.

    ``params`` is LightGBM's ``Booster.params`` (the training call's params with
    the Dataset's; a loaded model's recorded ones); ``config`` is the full
    resolved configuration, which the model file records and dgbdt reads."""

    #: read from a LightGBM model: its feature_infos (kept to write it again)
    lightgbm_feature_infos: list[str] | None
    #: the category lists of the pandas category columns trained on
    pandas_categorical: list[list[Any]] | None
    #: the communication of the training that made the model (not on a loaded one)
    _comm_stats: CommStats | None

    def __init__(
        self,
        params: Mapping[str, Any] | None = None,
        model_file: str | os.PathLike[str] | None = None,
        model_str: str | bytes | bytearray | None = None,
    ) -> None:
        self.trees: list[Tree] = []
        self.best_iteration = 0
        self.best_score: dict[str, dict[str, Any]] = {}
        self._train_data_name = "training"
        #: LightGBM's ``Booster.params``: the user's params of the training call
        #: (with the Dataset's), or a loaded model's recorded parameters
        self.params: dict[str, Any] = dict(params or {})
        #: the full resolved configuration (every parameter, defaults included):
        #: what the model file records and what dgbdt itself reads
        self.config: dict[str, Any] = dict(self.params)
        self.lightgbm_feature_infos = self.pandas_categorical = None
        self._flat: dict[str, np.ndarray] | None = None
        if model_file is not None:
            header, trees = load_model_file(model_file)
            self._load(header, trees)
        elif model_str is not None:
            if not isinstance(model_str, (str, bytes, bytearray)):
                raise TypeError(f"model_str must be a str, got {type(model_str).__name__}")
            header, trees = model_from_text(model_str)
            self._load(header, trees)

    # -- construction (used by train) -------------------------------------------
    @classmethod
    def for_training(
        cls: type[_M],
        *,
        objective: str,
        objective_params: dict[str, Any],
        num_class: int,
        feature_names: Sequence[str],
        bin_mapper: BinMapper | WideBinMapper | None,
        config: dict[str, Any],
        params: dict[str, Any],
        comm_stats: CommStats | None = None,
    ) -> _M:
        """A model without trees yet, for :func:`dgbdt.train` to add them to:
        ``num_class`` outputs per row (one tree each per iteration), starting
        scores 0, the data's ``bin_mapper`` and ``feature_names``, the training's
        resolved ``config`` (:attr:`config`) and the user's ``params`` (LightGBM's
        ``Booster.params``); ``comm_stats`` is the training's communication (see
        :meth:`comm_stats`)."""
        booster = cls()
        booster._setup(
            objective,
            objective_params,
            num_class,
            num_class,
            np.zeros(num_class),
            feature_names,
            bin_mapper,
            config,
        )
        booster.params = params
        booster._comm_stats = comm_stats
        return booster

    def _setup(
        self,
        objective_name: str,
        objective_params: Mapping[str, Any],
        num_class: int,
        num_tree_per_iteration: int,
        init_score: npt.ArrayLike,
        feature_names: Iterable[str],
        bin_mapper: BinMapper | WideBinMapper | None,
        config: dict[str, Any],
    ) -> None:
        self.objective = objective_name
        self.objective_params = dict(objective_params)
        self.num_class = int(num_class)
        self.num_tree_per_iteration = int(num_tree_per_iteration)
        self.init_score = np.asarray(init_score, dtype=np.float64).reshape(self.num_class)
        # (a wide Dataset's default names are made on access: kept as they are)
        self.feature_names: list[str] | ColumnNames = (
            feature_names if isinstance(feature_names, ColumnNames) else list(feature_names)
        )
        self.bin_mapper: BinMapper | WideBinMapper | None = bin_mapper
        self.config = config

    def _load(self, header: Mapping[str, Any], trees: list[Tree]) -> None:
        mapper: BinMapper | WideBinMapper | None = None
        names = header["feature_names"]
        if "used_features" in header:  # a wide model (format version 4)
            mapper = WideBinMapper.from_dict(
                {
                    "used": header["used_features"],
                    "empty_range": header["empty_value_range"],
                    "upper_bounds": header["bin_upper_bounds"],
                    "nan_bins": header["nan_bins"],
                    "value_ranges": header.get("value_ranges"),
                },
                header["num_features"],
            )
            if names is None:
                names = ColumnNames(header["num_features"])
        elif "bin_upper_bounds" in header and "nan_bins" in header:
            mapper = BinMapper.from_dict(
                {
                    "upper_bounds": header["bin_upper_bounds"],
                    "nan_bins": header["nan_bins"],
                    "value_ranges": header.get("value_ranges"),
                    "categories": header.get("bin_categories"),
                }
            )
        self._setup(
            header["objective"],
            header.get("objective_params", {}),
            header["num_class"],
            header["num_tree_per_iteration"],
            header["init_score"],
            names,
            mapper,
            header.get("params", {}),
        )
        # LightGBM's _get_loaded_param: a loaded model's params are the recorded ones
        self.params = dict(self.config)
        self.trees = trees
        self.best_iteration = int(header.get("best_iteration", 0))
        # read from a LightGBM model: kept for writing it again (dgbdt.models.lightgbm_export)
        self.lightgbm_feature_infos = header.get("lightgbm_feature_infos")
        self.pandas_categorical = header.get("pandas_categorical")
        self._flat = None

    def add_trees(self, trees: Iterable[Tree]) -> None:
        """Append one iteration's trees (what :func:`dgbdt.train` does each round)."""
        self.trees.extend(trees)
        self._flat = None

    def set_train_data_name(self, name: str) -> Model:
        """The name of the training data in evaluation results (LightGBM's; early
        stopping skips the data of this name).  Returns self."""
        self._train_data_name = name
        return self

    # -- inspection -----------------------------------------------------------
    def num_trees(self) -> int:
        """Number of trees (iterations times trees per iteration)."""
        return len(self.trees)

    def current_iteration(self) -> int:
        """Number of boosting iterations the model holds."""
        return len(self.trees) // self.num_tree_per_iteration

    def num_model_per_iteration(self) -> int:
        """Trees per iteration: the number of classes for multiclass, else 1."""
        return self.num_tree_per_iteration

    def comm_stats(self) -> dict[str, Any]:
        """Communication of the training that made this model: calls and bytes
        per collective kind, and bytes per tree (empty for a loaded model)."""
        stats = getattr(self, "_comm_stats", None)
        return stats.as_dict() if stats is not None else {}

    def num_feature(self) -> int:
        """Number of features the model was trained on."""
        return len(self.feature_names)

    def feature_name(self) -> list[str]:
        """The model's feature names (``Column_i`` when the data had none)."""
        return list(self.feature_names)

    def _n_trees_for(
        self, num_iteration: object, start_iteration: object = 0, name: str = "num_iteration"
    ) -> tuple[int, int]:
        """(first tree, end tree) of iterations [start, start + num_iteration), as
        LightGBM: start clamped to [0, iterations]; num_iteration None means the
        best iteration when starting at 0 and there is one, else all; <= 0 all.
        ``name`` is num_iteration's name in errors."""
        num_iteration = _iteration_arg(num_iteration, name)
        start_iteration = _iteration_arg(start_iteration, "start_iteration")
        total = self.current_iteration()
        start = max(0, min(start_iteration or 0, total))
        if num_iteration is None:
            num_iteration = self.best_iteration if start == 0 and self.best_iteration > 0 else -1
        end = total if num_iteration <= 0 else min(total, start + num_iteration)
        return start * self.num_tree_per_iteration, end * self.num_tree_per_iteration

    def feature_importance(
        self, importance_type: str = "split", iteration: int | None = None
    ) -> np.ndarray:
        """Per feature: number of splits ("split") or total gain ("gain")."""
        if importance_type not in ("split", "gain"):
            raise ValueError(f"importance_type must be 'split' or 'gain', got {importance_type!r}")
        _, end = self._n_trees_for(iteration, name="iteration")
        out = np.zeros(self.num_feature(), dtype=np.float64)
        for tree in self.trees[:end]:
            if importance_type == "split":
                np.add.at(out, tree.split_feature, 1.0)
            else:
                np.add.at(out, tree.split_feature, tree.split_gain)
        return out.astype(np.int32) if importance_type == "split" else out

    # -- LightGBM's inspection API --------------------------------------------
    # Values are the exported LightGBM model's (dgbdt.models.lightgbm_export): the
    # starting score is in the first tree of each class, so a row's leaf outputs
    # sum to its raw score, as in LightGBM, whose first trees hold it.
    def get_leaf_output(self, tree_id: int, leaf_id: int) -> float:
        """The output of leaf ``leaf_id`` of tree ``tree_id`` (LightGBM's), the
        starting score included in the first tree of each class: the outputs of
        a row's leaves (``predict(X, pred_leaf=True)``) sum to its raw score."""
        tree, bias = self._leaf(tree_id, leaf_id)
        return float(np.asarray(tree.leaf_value, np.float64)[leaf_id] + bias)

    def set_leaf_output(self: _M, tree_id: int, leaf_id: int, value: float) -> _M:
        """Set the output of leaf ``leaf_id`` of tree ``tree_id`` to ``value``
        (LightGBM's ``set_leaf_output``; the output as :meth:`get_leaf_output`
        gives it, the starting score included in the first tree of each
        class).  Returns self."""
        tree, bias = self._leaf(tree_id, leaf_id)
        if not isinstance(value, numbers.Real) or isinstance(value, bool):
            raise TypeError(f"value must be a real number, got {value!r}")
        if not np.isfinite(value):
            raise ValueError(
                f"value must be finite, got {value!r} (leaf {leaf_id} of tree {tree_id})"
            )
        tree.leaf_value = np.array(tree.leaf_value, np.float64)
        tree.leaf_value[leaf_id] = float(value) - bias
        self._flat = None
        return self

    def _leaf(self, tree_id: int, leaf_id: int) -> tuple[Tree, float]:
        """(tree ``tree_id``, its share of the starting score), the ids checked."""
        for name, value in (("tree_id", tree_id), ("leaf_id", leaf_id)):
            if not isinstance(value, numbers.Integral) or isinstance(value, bool):
                raise TypeError(f"{name} must be an integer, got {value!r}")
        if not 0 <= tree_id < len(self.trees):
            raise IndexError(
                f"tree_id={tree_id} is out of range: the model has {len(self.trees)} trees"
            )
        tree = self.trees[tree_id]
        if not 0 <= leaf_id < tree.n_leaves:
            raise IndexError(
                f"leaf_id={leaf_id} is out of range: tree {tree_id} has {tree.n_leaves} leaves"
            )
        bias = float(self.init_score[tree_id]) if tree_id < self.num_tree_per_iteration else 0.0
        return tree, bias

    def _leaf_bound(self, pick: Callable[[np.ndarray], Any]) -> float:
        total = 0.0  # GBDT::GetUpperBoundValue: tree by tree, in order
        for tree, bias in exported_trees(self, 0, len(self.trees)):
            total += float(pick(np.asarray(tree.leaf_value, np.float64)[: tree.n_leaves] + bias))
        return total

    def lower_bound(self) -> float:
        """The smallest raw score the model can give (LightGBM's): the sum over
        its trees of their smallest leaf output, the starting score included."""
        return self._leaf_bound(np.min)

    def upper_bound(self) -> float:
        """The largest raw score the model can give (LightGBM's): the sum over
        its trees of their largest leaf output, the starting score included."""
        return self._leaf_bound(np.max)

    def trees_to_dataframe(self) -> pd.DataFrame:
        """Every node of the model's trees as a pandas DataFrame, LightGBM's
        columns and values: tree_index, node_depth, node_index ("0-S1" a split,
        "0-L3" a leaf), left_child, right_child, parent_index, split_feature
        (its name), split_gain, threshold, decision_type, missing_direction,
        missing_type, value, weight, count (see :meth:`dump_model` with
        ``format="lightgbm"``: the trees of the best iteration, if any)."""
        import pandas as pd  # noqa: PLC0415 - optional until used: import dgbdt does not load pandas

        if self.num_trees() == 0:
            raise ValueError("There are no trees in this Booster and thus nothing to parse")
        rows = node_records(self.dump_model(format="lightgbm"))
        return pd.DataFrame(rows, columns=list(rows[0]))

    def get_split_value_histogram(
        self, feature: int | str, bins: int | str | None = None, xgboost_style: bool = False
    ) -> tuple[np.ndarray, np.ndarray] | pd.DataFrame:
        """The histogram of the thresholds of the splits on ``feature`` (an
        index, or a name), LightGBM's: ``(counts, bin_edges)`` as
        ``numpy.histogram`` gives them, or with ``xgboost_style=True`` a
        DataFrame of the non-empty bins' right edges ("SplitValue") and counts
        ("Count").  ``bins``: None is one bin per distinct threshold; an int
        (with ``xgboost_style``, at most that many distinct values) or a
        ``numpy.histogram`` rule name.  A categorical split on the feature is a
        ValueError, as is a feature the model does not have (LightGBM gives an
        empty histogram)."""
        self._check_feature(feature)
        values = split_values(self.dump_model(format="lightgbm"), feature)
        if bins is None or (isinstance(bins, int) and xgboost_style):
            n_unique = len(np.unique(values))
            bins = max(min(n_unique, bins) if bins is not None else n_unique, 1)
        hist, bin_edges = np.histogram(values, bins=bins)
        if not xgboost_style:
            return hist, bin_edges
        import pandas as pd  # noqa: PLC0415 - optional until used: import dgbdt does not load pandas

        table = np.column_stack((bin_edges[1:], hist))
        return pd.DataFrame(table[table[:, 1] > 0], columns=["SplitValue", "Count"])

    def _check_feature(self, feature: int | str) -> None:
        """A feature given by name or index must be one of the model's."""
        if isinstance(feature, str):
            if feature not in self.feature_names:
                raise ValueError(f"feature {feature!r} is not one of the model's feature names")
        elif isinstance(feature, numbers.Integral) and not isinstance(feature, bool):
            if not 0 <= feature < self.num_feature():
                raise ValueError(
                    f"feature index {feature} is out of range: the model has "
                    f"{self.num_feature()} features"
                )
        else:
            raise TypeError(f"feature must be a name (str) or an index (int), got {feature!r}")

    # -- prediction -------------------------------------------------------------
    def _flat_trees(self) -> dict[str, np.ndarray]:
        if self._flat is None:
            trees = self.trees
            node_counts = [t.n_leaves - 1 for t in trees]
            leaf_counts = [t.n_leaves for t in trees]

            def cat(name: str, dtype: npt.DTypeLike) -> np.ndarray:
                return np.ascontiguousarray(
                    np.concatenate([getattr(t, name) for t in trees]) if trees else np.zeros(0),
                    dtype=dtype,
                )

            threshold = cat("threshold", np.float64)
            self._flat = {
                "node_offsets": np.concatenate([[0], np.cumsum(node_counts)]).astype(np.int64),
                "leaf_offsets": np.concatenate([[0], np.cumsum(leaf_counts)]).astype(np.int64),
                "split_feature": cat("split_feature", np.int32),
                # The largest float stands for +inf in model files (strict JSON):
                # a "values left, NaN right" split sends +inf values left too.
                "threshold": np.where(threshold >= LARGEST, np.inf, threshold),
                "default_left": cat("default_left", np.uint8),
                "left_child": cat("left_child", np.int32),
                "right_child": cat("right_child", np.int32),
                "leaf_value": cat("leaf_value", np.float64),
                # data counts: the weights of SHAP's conditional expectations
                "internal_count": cat("internal_count", np.float64),
                "leaf_count": cat("leaf_count", np.float64),
            }
            # (left, right) per node: the predict kernels' next node by index
            self._flat["children"] = np.stack(
                [self._flat["left_child"], self._flat["right_child"]], axis=1
            )
            self._flat.update(_flat_categories(trees, self._flat["threshold"]))
        return self._flat

    def predict(
        self,
        data: Any,
        start_iteration: int = 0,
        num_iteration: int | None = None,
        raw_score: bool = False,
        pred_leaf: bool = False,
        pred_contrib: bool = False,
        data_has_header: bool = False,
        validate_features: bool = True,
        **kwargs: Any,
    ) -> np.ndarray | sp.spmatrix | list[sp.spmatrix]:
        """Predict: the probability of class 1 (binary), class probabilities
        (n, num_class) (multiclass), the value (regression), raw scores with
        ``raw_score=True``, leaf indices (n, n_trees) with ``pred_leaf=True``,
        or SHAP feature contributions with ``pred_contrib=True`` (exact
        path-dependent TreeSHAP as LightGBM's, dgbdt.native.shap), shape (n,
        num_class * (n_features + 1)): per class a column per feature, then the
        bias (expected raw score); a row's values add up to its raw score; for
        scipy.sparse ``data`` LightGBM's sparse result, per class a CSR matrix
        (CSC for a csc_matrix, float32 for float32 data), a list for several.
        ``num_iteration=None`` uses the best iteration when early stopping set one.

        Parameters are LightGBM's, in its order.  ``data`` is a 2-D numpy
        array, pandas DataFrame or scipy.sparse matrix of real numbers (complex
        values and pandas ``category`` columns are a TypeError, as is a
        ``dgbdt.Dataset``), or the path of a data file (:meth:`_read_data_file`);
        another width than the model's is LightGBM's error (:meth:`_shaped`).
        ``validate_features``: a DataFrame's column names must be the model's,
        in order, else a DGBDTError names the first difference (default True,
        LightGBM's False; not checked for a model without names).  ``data_has_header``: a data file's header line (read key
        ``header``).  ``**kwargs``: LightGBM's parameters (:func:`predict_options`).
        """
        opts = predict_options({"header": True, **kwargs} if data_has_header else kwargs)
        if isinstance(data, (str, os.PathLike)):
            data = self._read_data_file(data, opts.read_keys)
        data = self._shaped(data, opts.disable_shape_check)
        first, end = self._n_trees_for(num_iteration, start_iteration)
        if pred_contrib:
            if pred_leaf:
                raise ValueError("pred_leaf and pred_contrib cannot both be True: choose one")
            return self._predict_contrib(data, first, end, opts.threads, validate_features)
        flat, width = None, None
        if is_sparse(data) and self.num_feature() > NARROW_MIN_COLUMNS:
            data, flat = self._narrowed(data)
            width = data.shape[1]
        early = opts.early_stop if self.objective in _EARLY_STOP_OBJECTIVES else None

        def one_block(block: npt.NDArray[np.float64]) -> np.ndarray:
            if early is None or pred_leaf:
                return self._predict_block(block, first, end, pred_leaf, flat)
            return self._early_stopped_block(block, first, end, early, flat)

        chunks = self._map_blocks(data, opts.threads, validate_features, one_block, width)
        if not chunks:
            chunks = [np.zeros((0, end - first if pred_leaf else self.num_class))]
        result = np.concatenate(chunks) if len(chunks) > 1 else chunks[0]
        return result if pred_leaf else self._output(result, raw_score)

    def _read_data_file(self, path: str | os.PathLike[str], keys: Mapping[str, object]) -> Any:
        """The features of the CSV, TSV or LibSVM file ``path`` (told apart by
        content; LightGBM's predict from a file): read keys ``keys`` (``header``,
        ``label_column``, ...); the label in column 0 (LightGBM's default)
        unless a delimited file's lines hold just the model's features
        (parser.cpp GetLabelIdxForCSV) or ``label_column`` says otherwise."""
        options = read_options(keys)
        roles = ("label_column", "weight_column", "group_column", "ignore_column")
        if not any(k in keys for k in roles):
            width = first_row_width(path, header=options["header"])
            if width == self.num_feature():
                options["label_column"] = None
        return read_data(path, **options, side_files=False, features_only=True).X

    def _shaped(self, data: Any, disable_shape_check: bool) -> Any:
        """``data`` of the model's width: another width is LightGBM's error, or
        with ``disable_shape_check`` extra columns left out and missing ones 0.0."""
        shape = getattr(data, "shape", None)
        n = self.num_feature()
        if shape is None or len(shape) != 2 or shape[1] == n or isinstance(data, Dataset):
            return data
        if not disable_shape_check:
            raise DGBDTError(
                f"The number of features in data ({shape[1]}) is not the same as it was in "
                f"training data ({n}).\nYou can set ``predict_disable_shape_check=true`` to "
                "discard this error, but please be aware what you are doing."
            )
        if shape[1] > n:
            return data.iloc[:, :n] if hasattr(data, "iloc") else data[:, :n]
        if hasattr(data, "iloc"):  # a DataFrame: the model's names for the columns added
            return data.assign(**dict.fromkeys(self.feature_name()[shape[1] :], 0.0))
        if is_sparse(data):
            data = scipy_sparse().csr_matrix(data, copy=True)
            data.resize((shape[0], n))
            return data
        return np.hstack([np.asarray(data), np.zeros((shape[0], n - shape[1]))])

    def _early_stopped_block(
        self,
        block: npt.NDArray[np.float64],
        first: int,
        end: int,
        early: tuple[int, float],
        flat: dict[str, np.ndarray] | None,
    ) -> np.ndarray:
        """Raw scores of trees [first, end) with LightGBM's prediction early
        stopping (GBDT::PredictRaw, prediction_early_stop.cpp), for binary,
        multiclass and ranking models (``pred_early_stop=True``): after each
        ``freq`` iterations (``pred_early_stop_freq``, default 10) a row
        whose margin (binary: twice the |raw score|; multiclass: the two
        largest raw scores' difference) exceeds ``margin``
        (``pred_early_stop_margin``, default 10.0) stops."""
        freq, margin = early
        step = freq * self.num_tree_per_iteration
        out = np.zeros((block.shape[0], self.num_class))
        active = np.arange(block.shape[0])
        for start in range(first, end, step):
            stop = min(end, start + step)
            out[active] += self._predict_block(block[active], start, stop, False, flat)
            if stop - start < step or not len(active):
                break
            raw = out[active]
            if self.num_class == 1:
                done = 2.0 * np.abs(raw[:, 0]) > margin
            else:
                top = -np.partition(-raw, 1, axis=1)[:, :2]
                done = top[:, 0] - top[:, 1] > margin
            active = active[~done]
        return out

    def _output(self, raw: npt.NDArray[np.float64], raw_score: bool) -> np.ndarray:
        """Raw scores (n, num_class) as predict returns them."""
        if raw_score:
            return raw[:, 0] if self.num_class == 1 else raw
        with np.errstate(over="ignore"):  # exp() saturating: probability 0 or 1
            return model_objective(self.objective).output(raw, self.objective_params)

    def _narrowed(self, X: Any) -> tuple[sp.csr_matrix, dict[str, np.ndarray]]:
        """(X as a CSR of the columns the trees split on, the flat trees renumbered
        to them): a block of rows of a wide matrix (hashed text of 2**24
        columns) made dense would take 128 MiB a row."""
        X = predict_matrix(X, self.num_feature(), self.feature_names, False)
        flat = dict(self._flat_trees())
        columns = np.unique(flat["split_feature"])
        sp = scipy_sparse()
        X = sp.csr_matrix(X)
        pos = np.searchsorted(columns, X.indices)
        keep = pos < len(columns)
        keep[keep] = columns[pos[keep]] == X.indices[keep]
        rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))[keep]
        narrow = sp.csr_matrix(
            (X.data[keep], (rows, pos[keep])), shape=(X.shape[0], max(len(columns), 1))
        )
        flat["split_feature"] = np.searchsorted(columns, flat["split_feature"]).astype(np.int32)
        return narrow, flat

    def _map_blocks(
        self,
        data: Any,
        threads: int,
        validate_features: bool,
        fn: Callable[[npt.NDArray[np.float64]], _T],
        width: int | None = None,
    ) -> list[_T]:
        """``fn(block)`` of each float64 block of rows of ``data``, in order,
        with ``threads`` Numba threads (``width``: of narrowed data)."""
        _refuse_dataset(data)
        old_threads = numba.get_num_threads()
        numba.set_num_threads(threads)
        try:
            return [
                fn(block)
                for _, block in row_blocks(
                    data,
                    self.num_feature() if width is None else width,
                    self.feature_names,
                    validate_features,
                    self.pandas_categorical,
                )
            ]
        finally:
            numba.set_num_threads(old_threads)

    def _predict_contrib(
        self, data: Any, first: int, end: int, threads: int, validate_features: bool
    ) -> np.ndarray | sp.spmatrix | list[sp.spmatrix]:
        """SHAP contributions of trees [first, end) (see predict); sparse for
        scipy.sparse ``data``, a block of rows at a time."""
        n_features, k = self.num_feature(), self.num_class
        sparse = is_sparse(data)
        chunks = self._map_blocks(
            data,
            threads,
            validate_features,
            lambda block: self._contrib_block(block, first, end, sparse),
        )
        if sparse:
            return _sparse_contributions(chunks, data, k, n_features)
        if not chunks:
            return np.zeros((0, k * (n_features + 1)))
        return np.concatenate(chunks) if len(chunks) > 1 else chunks[0]

    def _contrib_block(
        self, block: npt.NDArray[np.float64], first: int, end: int, sparse: bool = False
    ) -> np.ndarray | list[sp.csr_matrix]:
        """Contributions of trees [first, end) for one float64 block: an array,
        or with ``sparse`` a CSR matrix per class."""
        f = self._flat_trees()
        n_features, k = self.num_feature(), self.num_class
        out = np.zeros((block.shape[0], k * (n_features + 1)))
        if first == 0:  # the starting score is part of the bias (LightGBM: the first tree's)
            out[:, n_features :: n_features + 1] += self.init_score
        tree_shap(
            block,
            f["node_offsets"][first : end + 1],
            f["leaf_offsets"][first : end + 1],
            f["split_feature"],
            f["threshold"],
            f["default_left"],
            f["left_child"],
            f["right_child"],
            f["cat_boundaries"],
            f["cat_threshold"],
            f["leaf_value"],
            f["internal_count"],
            f["leaf_count"],
            end - first,
            k,
            out,
        )
        if not sparse:
            return out
        w = n_features + 1
        csr = scipy_sparse().csr_matrix
        return [csr(out[:, c * w : (c + 1) * w]) for c in range(k)]

    def _predict_block(
        self,
        block: npt.NDArray[np.float64],
        first: int,
        end: int,
        pred_leaf: bool,
        flat: dict[str, np.ndarray] | None = None,
    ) -> np.ndarray:
        """Leaf indices or raw scores of trees [first, end) for one float64 block
        (``flat``: trees renumbered to a narrowed block's columns)."""
        f = self._flat_trees() if flat is None else flat
        # Trees [first, end) only: shift the offset arrays.
        node_offsets = f["node_offsets"][first : end + 1]
        n_trees = end - first
        if pred_leaf:
            out: np.ndarray = np.zeros((block.shape[0], n_trees), dtype=np.int32)
            predict_leaf_index(
                block,
                node_offsets,
                f["split_feature"],
                f["threshold"],
                f["default_left"],
                f["children"],
                f["cat_boundaries"],
                f["cat_threshold"],
                n_trees,
                out,
            )
            return out
        out = np.zeros((block.shape[0], self.num_class), dtype=np.float64)
        if first == 0:
            out += self.init_score
        predict_raw(
            block,
            node_offsets,
            f["leaf_offsets"][first : end + 1],
            f["split_feature"],
            f["threshold"],
            f["default_left"],
            f["children"],
            f["cat_boundaries"],
            f["cat_threshold"],
            f["leaf_value"],
            n_trees,
            self.num_class,
            out,
        )
        return out

    # -- model file -------------------------------------------------------------
    def _header(self, n_iterations: int | None = None) -> dict[str, Any]:
        mapper = self.bin_mapper.to_dict() if self.bin_mapper is not None else None
        wide = mapper is not None and "used" in mapper  # a WideBinMapper's
        params = {
            k: _recorded(v)
            for k, v in self.config.items()
            if isinstance(v, (int, float, str, bool, list, tuple)) or v is None
        }
        header: dict[str, Any] = {
            "objective": self.objective,
            "objective_params": self.objective_params,
            "num_class": self.num_class,
            "num_tree_per_iteration": self.num_tree_per_iteration,
            "init_score": self.init_score.tolist(),
            "num_features": self.num_feature(),
            # (a wide model's default Column_i names: null, not 2**24 strings)
            "feature_names": None
            if wide and isinstance(self.feature_names, ColumnNames)
            else list(self.feature_names),
            # a best iteration beyond the iterations saved is no best one
            "best_iteration": int(self.best_iteration)
            if n_iterations is None or self.best_iteration <= n_iterations
            else 0,
            "params": params,
        }
        if self.pandas_categorical is not None:
            header["pandas_categorical"] = self.pandas_categorical
        if self.lightgbm_feature_infos is not None:
            header["lightgbm_feature_infos"] = list(self.lightgbm_feature_infos)
        if mapper is not None:
            if wide:  # model format version 4: the bins of the used columns only
                header["used_features"] = mapper["used"]
                header["empty_value_range"] = mapper["empty_range"]
            header["bin_upper_bounds"] = mapper["upper_bounds"]
            header["nan_bins"] = mapper["nan_bins"]
            if "value_ranges" in mapper:
                header["value_ranges"] = mapper["value_ranges"]
            if "categories" in mapper:
                header["bin_categories"] = mapper["categories"]
        return header

    def model_to_string(
        self,
        num_iteration: int | None = None,
        start_iteration: int = 0,
        importance_type: str = "split",
        *,
        format: str = "lightgbm",
    ) -> str:
        """The model file's text (LightGBM's ``model_to_string``).

        ``format="lightgbm"`` (the default): LightGBM's text model, which
        LightGBM, treelite, onnxmltools and shap read, with dgbdt's whole model
        on one line LightGBM skips (dgbdt.models.text_file): loaded by dgbdt,
        it is the model the JSON file gives.  ``format="json"``: dgbdt's JSON
        model (dgbdt.models.json_file).  As LightGBM, ``num_iteration`` None
        means the best iteration when early stopping found one, else all; <= 0
        all (dgbdt's JSON: None is all, the best iteration recorded).
        ``start_iteration`` must be 0 (a model's file starts at its first
        tree) and ``importance_type`` "split" or "gain" (LightGBM writes the
        split counts either way).
        """
        fmt = model_format(format)
        if _iteration_arg(start_iteration, "start_iteration"):
            raise ValueError(
                f"start_iteration={start_iteration}: dgbdt writes a model from its first "
                "iteration (its starting score is in the first trees); use 0"
            )
        if importance_type not in ("split", "gain"):
            raise ValueError(f"importance_type must be 'split' or 'gain', got {importance_type!r}")
        if fmt == "json" and num_iteration is None:
            num_iteration = -1  # dgbdt's JSON: every iteration, the best one recorded
        _, end = self._n_trees_for(num_iteration)
        header = self._header(end // self.num_tree_per_iteration)
        if fmt == "lightgbm":
            return model_to_text(self, end, header)
        return model_to_json(header, self.trees[:end])

    def save_model(
        self: _M,
        filename: str | os.PathLike[str],
        num_iteration: int | None = None,
        start_iteration: int = 0,
        importance_type: str = "split",
        *,
        format: str | None = None,
    ) -> _M:
        """Write the model (atomically: temp file + rename) in ``format`` (see
        :meth:`model_to_string`): LightGBM's text, or dgbdt's JSON for
        ``format="json"``; None (the default) is JSON for a ``.json`` file
        name, else LightGBM's text."""
        if format is None:
            format = "json" if os.fspath(filename).lower().endswith(".json") else "lightgbm"
        text = self.model_to_string(num_iteration, start_iteration, importance_type, format=format)
        write_atomic(filename, text)
        return self

    def dump_model(
        self,
        num_iteration: int | None = None,
        start_iteration: int = 0,
        importance_type: str = "split",
        object_hook: Callable[[dict[str, Any]], Any] | None = None,
        *,
        format: str = "lightgbm",
    ) -> dict[str, Any]:
        """The model as a dict.

        ``format="lightgbm"`` (the default): LightGBM's ``dump_model()`` of the
        exported model (``tree_info`` with nested ``tree_structure`` records,
        ``feature_infos``, ``feature_importances`` of ``importance_type``
        "split" or "gain", ...), iterations [start_iteration, start_iteration
        + num_iteration), None the best iteration if any, <= 0 all.
        ``format="json"``: the parsed JSON model document (see
        :meth:`model_to_string`; ``start_iteration`` must be 0 and
        ``importance_type`` does not apply).  ``object_hook`` as ``json.loads``'s.
        """
        if importance_type not in ("split", "gain"):
            raise ValueError(f"importance_type must be 'split' or 'gain', got {importance_type!r}")
        if model_format(format) == "json":
            if _iteration_arg(start_iteration, "start_iteration"):
                raise ValueError("start_iteration applies to format='lightgbm' only")
            text = self.model_to_string(num_iteration, format="json")
            return json.loads(text, object_hook=object_hook)

        num_iteration = _iteration_arg(num_iteration, "num_iteration")
        if num_iteration is None:  # LightGBM's dump_model: the best iteration, even from a start
            num_iteration = self.best_iteration
        first, end = self._n_trees_for(num_iteration, start_iteration)
        importance = self.feature_importance(importance_type, iteration=num_iteration)
        doc = to_lightgbm_json(self, first, end, importance)
        return doc if object_hook is None else json.loads(json.dumps(doc), object_hook=object_hook)

    def model_from_string(self: _M, model_str: str | bytes | bytearray) -> _M:
        """Replace this model by the one in ``model_str`` (LightGBM's
        ``model_from_string``; either format).  Returns self."""
        if not isinstance(model_str, (str, bytes, bytearray)):
            raise TypeError(f"model_str must be a str, got {type(model_str).__name__}")
        header, trees = model_from_text(model_str)
        self._load(header, trees)
        return self

    # -- pickling: the JSON model is the state --------------------------------
    def __getstate__(self) -> dict[str, Any]:
        model = self.model_to_string(-1, format="json")
        # LightGBM pickles the Booster's attributes: its params too
        return {"model": model, "best_score": self.best_score, "params": self.params}

    def __setstate__(self, state: Mapping[str, Any]) -> None:
        # (a subclass's __init__, Booster's, takes model_str too)
        self.__init__(model_str=state["model"])  # type: ignore[misc]
        self.best_score = state.get("best_score", {})
        self.params = dict(state.get("params", self.params))

    def __copy__(self: _M) -> _M:
        return type(self)(model_str=self.model_to_string(-1, format="json"))

    def __deepcopy__(self: _M, memo: dict[int, Any]) -> _M:
        return self.__copy__()


#: the model file formats by the names ``format`` takes ("dgbdt": JSON's older name)
MODEL_FORMATS = {"lightgbm": "lightgbm", "json": "json", "dgbdt": "json"}


def model_format(format: str) -> str:
    """ "lightgbm" or "json": the model file format ``format`` names."""
    if format not in MODEL_FORMATS:
        raise ValueError(f"format must be 'lightgbm' or 'json', got {format!r}")
    return MODEL_FORMATS[format]


def _recorded(value: Any) -> Any:
    """A parameter as the model file records it: tuples as lists (max_bin_by_feature,
    auc_mu_weights); lists of lists (interaction_constraints) as LightGBM's text
    "[0,1],[2,3]", which params read back."""
    if isinstance(value, (tuple, list)) and any(isinstance(v, (tuple, list)) for v in value):
        return ",".join("[" + ",".join(str(x) for x in group) + "]" for group in value)
    return list(value) if isinstance(value, tuple) else value
