"""``dgbdt.Dataset``: binned features, labels, weights and the bin mapper.

Construction is lazy, as in LightGBM: the binning parameters (max_bin, ...)
come with ``train``'s params, so the data is binned when training starts.
Binned data is an (n_samples, n_features) array, row-major (C order) or
column-major (F order): ``layout`` says which, chosen by shape (see
``choose_layout``), and the histogram kernel follows it.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, Union

import numpy as np
import numpy.typing as npt
from numpy.typing import ArrayLike

from ..distributed.comm import agreed
from ..io.options import read_text
from ..log import DGBDTError, log_info, log_lightgbm_warning, log_warning
from ..native.binning import map_categories, map_to_bins
from ..native.common import bin_dtype_for
from ..params.lightgbm_keys import lightgbm_canonical
from ..params.table import BINNING_KEYS, resolve_params
from . import binary_file as dataset_file
from .binning import (
    BinMapper,
    WideBinMapper,
    bounds_of,
    category_bin,
    category_bounds,
    gather_samples,
    same_mapper,
    sample_rows,
    sampled_values,
    zero_bin,
)
from .categorical import (
    BITSET_CATEGORY_LIMIT,
    categorical_mask,
    check_category_values,
    parse_categorical_spec,
    union_categories,
)
from .checks import (
    as_1d,
    check_group,
    check_init_score,
    check_label,
    check_position,
    check_weight,
    raise_on_every_rank,
)
from .inputs import as_pandas_if_arrow, is_dataframe, is_sparse, scipy_sparse
from .names import ColumnNames, without_spaces
from .sources import FeatureSource, RowSubset
from .store import Column, build_store, splittable_features, subset_columns

if TYPE_CHECKING:
    import pandas as pd
    import scipy.sparse as sp

    from ..distributed.comm import SerialComm
    from ..io.options import TextRead
    from .binning import AnyBinMapper, RawColumn, Sampled
    from .store import BinStore

#: What a Dataset takes as features (LightGBM's types, loosely): a 2-D
#: array-like, a pandas DataFrame or a scipy.sparse matrix or array.
DataType = Union[ArrayLike, "pd.DataFrame", "sp.spmatrix", "sp.sparray"]
#: One value per row: a label, weights (a 1-D array-like, a pandas Series, a
#: one-column DataFrame).
RowValuesType = Union[ArrayLike, "pd.Series", "pd.DataFrame"]
#: Starting raw scores: (n_samples,), (n_samples, n_classes) or LightGBM's flat
#: class-major (n_samples * n_classes,).
InitScoreType = Union[ArrayLike, "pd.Series", "pd.DataFrame"]

# Row-wise histograms keep a private (total_bins, 2) float64 histogram per chunk
# and touch one row's bins per step; past this many bins (1 MB) the column-wise
# kernel's sequential per-feature scan wins (measured: bench/README.md).
ROW_WISE_MAX_TOTAL_BINS = 65536


def choose_layout(cfg: Mapping[str, Any], total_bins: int) -> str:
    """'row' or 'col': the binned layout for these params and this many bins.

    Measured on 1M x 28 (2 cores): both layouts reach ~2 G bin updates/s on the
    root, but on leaves of 1,000-10,000 scattered rows the column-wise gather
    misses cache once per feature (0.05 G/s) where row-wise misses once per row.
    """
    if cfg["force_col_wise"]:
        return "col"
    if cfg["force_row_wise"]:
        return "row"
    return "row" if total_bins <= ROW_WISE_MAX_TOTAL_BINS else "col"


def _used_rows(used_indices: npt.ArrayLike, n_samples: int) -> npt.NDArray[np.int64]:
    """``used_indices`` as sorted int64 rows (LightGBM sorts them), each in range."""
    rows = np.asarray(used_indices)
    if rows.ndim != 1 or (rows.size and rows.dtype.kind not in "iu"):
        raise ValueError(
            "used_indices must be a 1-D list of row numbers (integers), got "
            f"{'shape ' + str(rows.shape) if rows.ndim != 1 else 'dtype ' + str(rows.dtype)}"
        )
    rows = np.sort(rows.astype(np.int64), kind="stable")
    if rows.size and (rows[0] < 0 or rows[-1] >= n_samples):
        bad = int(rows[0] if rows[0] < 0 else rows[-1])
        raise ValueError(f"used_indices holds row {bad}; the Dataset has rows 0..{n_samples - 1}")
    return rows


def _used_queries(
    group: npt.NDArray[np.int64] | None, rows: npt.NDArray[np.int64]
) -> tuple[npt.NDArray[np.int64], np.ndarray] | tuple[None, None]:
    """(query sizes, their query numbers) of a subset's ``rows``, which must take
    whole queries (as LightGBM: "Data partition error, data didn't match
    queries"); (None, None) without queries."""
    if group is None:
        return None, None
    bounds = np.concatenate([[0], np.cumsum(group)])
    query = np.searchsorted(bounds, rows, side="right") - 1
    used, counts = np.unique(query, return_counts=True)
    repeated = np.flatnonzero(np.diff(rows) == 0)
    if len(repeated):
        raise ValueError(
            f"used_indices repeats row {int(rows[repeated[0]])} of a Dataset with query "
            "groups: a subset takes whole queries, each once"
        )
    partial = np.flatnonzero(counts != group[used])
    if len(partial):
        q = int(used[partial[0]])
        raise ValueError(
            f"used_indices takes {int(counts[partial[0]])} of the {int(group[q])} rows of "
            f"query {q} (rows {int(bounds[q])}..{int(bounds[q + 1]) - 1}): a subset of a "
            "Dataset with query groups takes whole queries (LightGBM: data didn't match queries)"
        )
    return counts.astype(np.int64), used


def _rows_of(values: np.ndarray | None, rows: npt.NDArray[np.int64]) -> np.ndarray | None:
    return None if values is None else values[rows]


def _init_score_rows(
    init_score: np.ndarray | None, rows: npt.NDArray[np.int64], n_samples: int
) -> np.ndarray | None:
    """init_score at ``rows``: per row, or LightGBM's flat class-major layout."""
    if init_score is None or init_score.ndim == 2 or init_score.size == n_samples:
        return _rows_of(init_score, rows)
    if n_samples == 0:
        return init_score.copy()
    return init_score.reshape(-1, n_samples)[:, rows].ravel()


class Dataset:
    """Training or validation data, binned lazily with the training params.

    Parameters
    ----------
    data : array-like (n_samples, n_features), pandas.DataFrame, scipy.sparse matrix or path
        A path (str or os.PathLike) names a data file: one :meth:`save_binary`
        wrote (recognised by its first bytes), or CSV/TSV/whitespace/LibSVM text
        (gzip allowed), read as ``dgbdt train`` reads it: the read keys of
        ``params`` (``header``, ``label_column``, ``weight_column``,
        ``group_column``, ``ignore_column``, ``zero_based``, LightGBM's aliases)
        say which columns are what, and the side files ``<path>.weight``,
        ``.init``, ``.query``, ``.position`` are read; the label, weight, ... come
        from the file unless given here.  Under mpiexec a ``tree_learner`` of
        data or voting in ``params`` makes each rank read only its byte range
        (whole queries; with ``pre_partition`` its own file), feature its block of
        the columns; without one every rank reads every row (then refused by
        row-sharded training).  ``{rank}`` in the path is replaced by the rank.
    label : array-like (n_samples,), optional
    reference : Dataset, optional
        Bin with this data set's mapper (use it for validation data).
    weight : array-like (n_samples,), optional
    group : array-like of int, optional
        Query sizes for ranking (LightGBM's ``group``): the rows of a query are
        contiguous, and the sizes sum to the number of rows.  In row-sharded
        training each rank passes its own rows' queries, whole.
    init_score : array-like (n_samples,) or (n_samples, n_classes), optional
    feature_name : list of str or "auto"
    categorical_feature : "auto", list of int or str, or None
        The categorical columns (LightGBM's argument): indices or feature
        names; ``"auto"`` (the default) takes a DataFrame's category columns
        and else the params' ``categorical_feature``.  Values are non-negative
        integer categories; NaN and negative values are missing.
    params : dict, optional
        Dataset parameters (max_bin, min_data_in_bin, bin_construct_sample_cnt, seed,
        use_missing).
    free_raw_data : bool
        Drop the reference to the raw data once binned.
    position : array-like of int, optional
        The position of each row in its query's displayed list (LightGBM's
        position feature for unbiased lambdarank).
    feature_indices : list of int, optional (keyword only)
        Feature-parallel training "by dimension": the global column numbers of
        the columns in ``data`` (every rank holds all rows of its own block of
        columns; the blocks of all ranks cover every column exactly once).
    """

    # Set in __init__ and construct() (annotated here: first set to None).
    read_params: dict[str, Any]
    _read: TextRead | None
    _parent_rows: npt.NDArray[np.int64] | None
    _source: FeatureSource | RowSubset | None
    pandas_categorical: list[list[Any]] | None
    query_ids: np.ndarray | None
    reference: Dataset | None
    feature_indices: npt.NDArray[np.int64] | None
    feature_name: Sequence[str]
    bin_mapper: AnyBinMapper | None
    used_features: npt.NDArray[np.int64] | None
    _empty_range: tuple[float, ...]
    store: BinStore | None
    layout: str | None
    _binning: dict[str, Any] | None
    _wanted_lists: list[Any] | None
    _categorical_spec: Any  # parse_categorical_spec's (see categorical_feature)
    #: The file a Dataset(path) of a save_binary file was loaded from (unset otherwise).
    binary_file: str | None

    def __init__(
        self,
        data: DataType,
        label: RowValuesType | None = None,
        reference: Dataset | None = None,
        weight: RowValuesType | None = None,
        group: ArrayLike | None = None,
        init_score: InitScoreType | None = None,
        feature_name: Sequence[str] | Literal["auto"] | None = "auto",
        categorical_feature: Sequence[int | str] | Literal["auto"] | None = "auto",
        params: Mapping[str, Any] | None = None,
        free_raw_data: bool = True,
        position: ArrayLike | None = None,
        *,
        feature_indices: ArrayLike | None = None,
    ) -> None:
        self.categorical_feature = categorical_feature  # (parsed: see the property)
        self.pandas_categorical = None  # the category lists of category columns, once binned
        # Dataset(path): the read keys of the text file and how this rank read it
        # (dgbdt.io.options.TextRead); a subset's rows of its reference
        self.read_params, self._read, self._parent_rows = {}, None, None
        rows = {"label": label, "weight": weight, "init_score": init_score, "group": group}
        rows["position"], query_ids = position, None
        if isinstance(data, (str, os.PathLike)):
            given: dict[str, Any] = {
                "feature_name": feature_name,
                "reference": reference,
                "params": params,
            }
            given.update(free_raw_data=free_raw_data, feature_indices=feature_indices)
            opened = self._open_path(data, rows, given)
            if opened is None:
                return  # a binary Dataset file, loaded
            data, params, feature_indices, feature_name, query_ids = opened
        elif isinstance(data, bytes) or hasattr(data, "read"):
            raise TypeError(
                "dgbdt.Dataset takes an array, a DataFrame, a sparse matrix or the path of "
                f"a data file (str or os.PathLike), not {type(data).__name__}"
            )
        self._source = (
            data if isinstance(data, RowSubset) else FeatureSource(as_pandas_if_arrow(data))
        )
        self._auto_categorical = tuple(self._source.auto_columns)
        self.n_samples, self.n_features = (int(v) for v in self._source.shape)
        self._set_rows(rows)
        # the id of each query (read from a query column or qid: fields), for the
        # check that no query spans two ranks; None: unknown
        self.query_ids = query_ids
        self.reference = reference
        self._reference_from_train = False  # see use_training_bins
        self.params = dict(params or {})
        self.free_raw_data = free_raw_data
        self._set_feature_indices(feature_indices)
        self.feature_name = self._feature_names(feature_name)
        self._not_binned_yet()

    @property
    def categorical_feature(self) -> list[int | str] | Literal["auto"]:
        """The categorical columns as given: "auto" or a list of indices or names."""
        spec = self._categorical_spec
        return spec if spec == "auto" else list(spec)

    @categorical_feature.setter
    def categorical_feature(self, value: Any) -> None:
        self._categorical_spec = parse_categorical_spec(value)

    def _not_binned_yet(self) -> None:
        self.bin_mapper = None
        # The columns binned, sorted, when only those holding values were (wide
        # sparse data: _wide_columns); None: every column.  bin_mapper and the
        # store then describe these; models speak of every column (model_mapper).
        self.used_features = None
        self._empty_range = (np.nan, np.nan)
        self.store = None  # the binned features (dgbdt.data.store.BinStore)
        self.row_offset = 0  # global index of this rank's first row (row-sharded training)
        self.n_total = self.n_samples
        self.layout = None  # "row" (C order) or "col" (F order)
        self._binning = None  # the BINNING_KEYS values the bins were made with

    def _set_rows(self, rows: Mapping[str, Any]) -> None:
        """The per-row fields (label, weight, init_score, group, position), checked."""
        n = self.n_samples
        self.label = check_label(as_1d(rows["label"], "label", n))
        self.weight = check_weight(as_1d(rows["weight"], "weight", n))
        self.init_score = check_init_score(rows["init_score"], n)
        self.group = check_group(rows["group"], n)
        self.position = check_position(rows["position"], n)

    def _set_feature_indices(self, feature_indices: npt.ArrayLike | None) -> None:
        self.feature_indices = None
        if feature_indices is not None:
            self.feature_indices = np.asarray(feature_indices, dtype=np.int64).ravel()
            if len(self.feature_indices) != self.n_features:
                raise ValueError(
                    f"feature_indices has {len(self.feature_indices)} entries but data "
                    f"has {self.n_features} columns"
                )

    def _open_path(
        self, path: str | os.PathLike[str], rows: dict[str, Any], given: dict[str, Any]
    ) -> tuple[Any, Mapping[str, Any], Any, Any, np.ndarray | None] | None:
        """Dataset(path): a binary Dataset file is loaded into self (None is
        returned), a text file read (``_read_text``'s arrays are returned)."""
        path = dataset_file.rank_path(path)
        if dataset_file.is_dataset_file(path) or dataset_file.is_lightgbm_binary(path):
            given["categorical_feature"] = self.categorical_feature
            dataset_file.load_into(self, path, rows, given)
            return None
        names, block = given["feature_name"], given["feature_indices"]
        return self._read_text(path, rows, given["params"], block, names)

    def _read_text(
        self,
        path: str,
        rows: dict[str, Any],
        params: Mapping[str, Any] | None,
        feature_indices: Any,
        feature_name: Any,
    ) -> tuple[Any, Mapping[str, Any], Any, Any, np.ndarray | None]:
        """Dataset(path) of a CSV/TSV/whitespace or LibSVM text file, read with the
        read keys of ``params`` (taken out of them, into ``read_params``) as the
        command line reads it (dgbdt.io.options.read_text): ``rows`` filled in
        from the file where not given.  Returns (X, the other params,
        feature_indices, feature_name, query_ids)."""
        read = read_text(path, dict(params or {}), feature_indices)
        loaded = read.loaded
        assert loaded is not None  # (just read)
        self.read_params, self._read = read.keys, read
        ids = loaded.query_ids if rows["group"] is None else None
        for key in rows:
            if rows[key] is None:
                rows[key] = getattr(loaded, key)
        if feature_name == "auto" and loaded.feature_names:
            feature_name = loaded.feature_names
        read.loaded = None  # the arrays now belong to the Dataset
        return loaded.X, read.params, read.feature_indices, feature_name, ids

    def _feature_names(self, feature_name: Sequence[str] | Literal["auto"] | None) -> Sequence[str]:
        if feature_name == "auto" or feature_name is None:
            assert self._source is not None  # (a Dataset being made holds its data)
            if self._source.names:
                names = self._source.names
            elif self.feature_indices is not None:
                names = [f"Column_{i}" for i in self.feature_indices]
            else:
                return ColumnNames(self.n_features)  # distinct by construction
        elif isinstance(feature_name, ColumnNames) and len(feature_name) == self.n_features:
            return feature_name
        else:
            names = [str(n) for n in feature_name]
            if len(names) != self.n_features:
                raise ValueError(
                    f"feature_name has {len(names)} names but data has {self.n_features} features"
                )
        names, spaces = without_spaces(names)
        if spaces:  # LightGBM's C++ warning (Dataset::set_feature_names)
            log_lightgbm_warning(
                "Found whitespace in feature_names, replace with underlines",
                _verbosity(self.params),
            )
        if len(set(names)) != len(names):
            seen = set()
            repeated = next(n for n in names if n in seen or seen.add(n))  # type: ignore[func-returns-value]  # (add's None: not seen before)
            raise ValueError(f"feature names must be unique; {repeated!r} appears more than once")
        return names

    # -- construction -------------------------------------------------------
    def resolved_params(self, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The Dataset's own params overridden by ``params`` (train's), resolved:
        what :meth:`construct` bins by (the one place a Dataset's parameters are
        resolved; train()'s consistency check compares them over the ranks)."""
        return resolve_params({**self.params, **(params or {})})

    def construct(
        self,
        params: Mapping[str, Any] | None = None,
        comm: SerialComm | None = None,
        *,
        keep_raw_data: bool = False,
        category_lists: list | None = None,
    ) -> Dataset:
        """Bin the data with its own params overridden by ``params`` (train's); a
        Dataset binned already is kept, or binned again when the binning params
        or the row sharding changed (see ``_binned_as``).

        With a ``comm`` of several ranks (row-sharded training), this rank's
        rows are a shard of one global data set: bin boundaries are found on
        the global sample (the same as on one process).  ``keep_raw_data``
        keeps the raw data past binning even with ``free_raw_data`` (train
        predicts an init model from it), until :meth:`release_raw_data`.
        ``category_lists``: the category lists to code pandas category columns
        by (an init model's, whose trees were coded by them).
        """
        self._wanted_lists = category_lists
        if self.store is not None and params is None and comm is None:
            return self  # nothing asked of the bins: keep them (LightGBM)
        comm = self._sharding_comm(comm)
        cfg = self.resolved_params(params)
        self._shard_rows(comm)
        self._agree_on_categorical(params, comm)
        n_ranks = comm.size if comm is not None else None
        if self.store is not None:
            same_lists = category_lists is None or category_lists == self.pandas_categorical
            if same_lists and self._binned_as(cfg, params, n_ranks):
                self._follow_forced_layout(cfg)
                return self
            self.store = self.bin_mapper = None  # re-bin from the raw data
        if self.reference is not None:
            self._bin_with_reference(cfg, params, comm)
        else:
            self._find_bins_and_bin(cfg, comm)
        self._binning = self._binning_of(cfg, n_ranks or 1)
        if self.reference is None and cfg["verbosity"] >= 0:
            self._warn_if_no_feature_splits()
        if not keep_raw_data:
            self.release_raw_data()
        return self

    def _warn_if_no_feature_splits(self) -> None:
        """LightGBM's warning (its exact line) when no feature can split."""
        mapper = self.bin_mapper  # (the binned columns: those left out have one bin)
        assert mapper is not None  # (just binned)
        splits = np.asarray(mapper.n_bins) > 1
        splits[list((self._binning or {}).get("filtered", ()))] = False
        if self.n_features and not splits.any():
            log_info(
                "[LightGBM] [Warning] There are no meaningful features which satisfy the "
                "provided configuration. Decreasing Dataset parameters min_data_in_bin or "
                "min_data_in_leaf and re-constructing Dataset might resolve this warning."
            )

    def _shard_rows(self, comm: SerialComm | None) -> None:
        """This rank's global row offset and the global row count under ``comm``
        (training says how rows are sharded; None: as before)."""
        if comm is not None:
            self.row_offset, self.n_total = 0, self.n_samples
        if comm is not None and comm.size > 1:
            counts = comm.per_rank(self.n_samples)
            self.row_offset, self.n_total = int(counts[: comm.rank].sum()), int(counts.sum())
            widths = comm.per_rank(self.n_features)
            if np.any(widths != self.n_features):
                raise ValueError(
                    f"Ranks hold different numbers of features: {widths.tolist()}; "
                    "with row-sharded training every rank needs all columns"
                )

    def categorical_indices(self, params: Mapping[str, Any] | None = None) -> list[int] | str:
        """The global column numbers of the categorical features this Dataset is
        binned with under ``params`` (train's): what every rank must agree on;
        or, where they cannot be resolved, why (binning raises it)."""
        try:
            columns = np.flatnonzero(self.categorical_columns(self.resolved_params(params)))
        except (ValueError, TypeError) as exc:
            return f"invalid: {exc}"
        if self.feature_indices is not None:
            columns = self.feature_indices[columns]
        return [int(c) for c in columns]

    def _agree_on_categorical(
        self, params: Mapping[str, Any] | None, comm: SerialComm | None
    ) -> None:
        """Row-sharded binning counts every categorical feature's bins over the
        ranks: ranks that differ in them would break that collective ("Message
        truncated"), so a difference is refused first, on every rank alike.
        (train() agrees on them earlier; this covers cv and a direct construct.)"""
        if comm is None or comm.size == 1:
            return
        mine = self.categorical_indices(params)
        bad = comm.ranks_unlike_rank0(repr(mine))
        if bad:
            every = comm.per_rank_objects(mine)
            found = "; ".join(f"rank {r}: {every[r]}" for r in [0, *bad])
            raise agreed(
                ValueError(
                    f"categorical_feature differs between ranks {[0, *bad]} (the categorical "
                    f"columns are {found}): every rank must give the same categorical_feature "
                    "(and DataFrames with the same category columns)"
                )
            )

    def _sharding_comm(self, comm: SerialComm | None) -> SerialComm | None:
        """The comm to bin with: ``comm``, or for a Dataset(path) that read this
        rank's rows (and bins its own bins), the comm it read with.  Training
        that shards the rows otherwise than the file was read is refused."""
        read = self._read
        if read is None:
            return comm
        if comm is None:
            return read.comm if read.row_sharded and self.reference is None else None
        error = None
        if read.row_sharded and comm.size != read.n_ranks:
            error = ValueError(
                f"This Dataset holds one rank's share of the rows of {read.path} (read for "
                f"row-sharded training on {read.n_ranks} ranks) but trains on {comm.size} "
                "rank(s) of rows: give the Dataset the training's tree_learner"
            )
        elif not read.row_sharded and comm.size > 1:
            error = ValueError(
                f"Dataset({read.path!r}) read every row of the file on each of the "
                f"{read.n_ranks} ranks, but the training shards rows over {comm.size} ranks: "
                "give the Dataset params={'tree_learner': 'data'} (or 'voting') so that "
                "each rank reads only its own part"
            )
        raise_on_every_rank(comm, error, "refused this training's Dataset")
        return comm

    def _bin_with_reference(
        self, cfg: Mapping[str, Any], params: Mapping[str, Any] | None, comm: SerialComm | None
    ) -> None:
        """Bin with the reference Dataset's bins (constructed first with ``params``)."""
        assert self.reference is not None  # (called for a Dataset with one)
        self.reference.construct(params)
        mapper = self.reference.bin_mapper
        assert mapper is not None  # (constructed)
        if self.reference.n_features != self.n_features:
            raise ValueError(
                f"Validation data has {self.n_features} features but the "
                f"reference training data has {self.reference.n_features}"
            )
        self.bin_mapper = mapper
        self.used_features = self.reference.used_features
        # (the columns a wide reference left out have one bin each)
        self.layout = choose_layout(
            cfg, int(mapper.feature_offsets[-1]) + self.n_features - mapper.n_features
        )
        self.store = self._bin_with(mapper, cfg, comm)

    def release_raw_data(self) -> None:
        """Drop the raw data now when ``free_raw_data`` says so (what
        :meth:`construct` does unless told to keep it)."""
        if self.free_raw_data:
            self._source = None

    @property
    def raw_data(self) -> DataType | None:
        """The raw data this Dataset holds (a numpy array, a DataFrame or a CSC
        matrix), None once freed or for a Dataset loaded from a binary file."""
        return None if self._source is None else self._source.data

    @property
    def data(self) -> DataType | str | None:
        """LightGBM's ``Dataset.data`` attribute: what :meth:`get_data` returns."""
        return self.get_data()

    def get_data(self) -> DataType | str | None:
        """The raw data (``raw_data``); for a Dataset loaded from a binary file,
        or a subset of one, the file's path (LightGBM's raw data of such a
        Dataset); None once freed (``free_raw_data``)."""
        if self._source is not None:
            return self._source.data
        path = getattr(self, "binary_file", None)
        parent = self.reference if self._parent_rows is not None else None
        if path is None and parent is not None and parent._source is None:
            path = getattr(parent, "binary_file", None)
            if path is not None:  # (LightGBM's warning: a path has no rows to take)
                log_warning("Cannot subset str type of raw data.\nReturning original raw data")
        return path

    def use_training_bins(self, train_set: Dataset) -> Dataset:
        """Make ``train_set`` the reference of this validation set when the user
        gave it none, or when an earlier training picked another training set
        (it is then binned again, as LightGBM does); a reference of the
        user's is kept.  Returns self."""
        if self.reference is None or (
            self._reference_from_train and self.reference is not train_set
        ):
            self.reference, self._reference_from_train = train_set, True
        return self

    def _binning_of(self, cfg: Mapping[str, Any], n_ranks: int | None) -> dict[str, Any]:
        binning = {key: cfg[key] for key in BINNING_KEYS}
        if self.n_total <= cfg["bin_construct_sample_cnt"]:
            binning["seed"] = None  # every row was in the sample
        # Row-sharded bins come from every rank's rows: binned on one rank alone,
        # a shard's bins are its own.  None: not said (a reference's construct).
        binning["ranks"] = n_ranks
        binning["filtered"] = self._filtered(cfg)
        binning["categorical"] = tuple(np.flatnonzero(self.categorical_columns(cfg)).tolist())
        # A Dataset that binned only the columns holding values: whether the
        # params still allow it (None: every column binned, right for any params)
        binning["wide"] = None if self.used_features is None else _may_leave_out(cfg)
        return binning

    def _binned_as(
        self, cfg: Mapping[str, Any], params: Mapping[str, Any] | None, n_ranks: int | None = None
    ) -> bool:
        """Whether the existing bins are the ones ``cfg`` asks for; if not and the
        raw data is gone, a ValueError (LightGBM: "Cannot change max_bin after
        constructed Dataset handle")."""
        if self.reference is not None:
            self.reference.construct(params)
            ref = self.reference.bin_mapper
            if self.bin_mapper is not ref and same_mapper(self.bin_mapper, ref):
                self.bin_mapper = ref  # the same bins in another object (a loaded file's)
            same = self.bin_mapper is ref
            what = (
                "its bins are not those of its reference Dataset (another one, or re-binned since)"
            )
        else:
            assert self._binning is not None  # (binned: the bins are compared)
            wanted = self._binning_of(cfg, n_ranks)
            changed = [
                k
                for k in wanted
                if wanted[k] != self._binning[k] and not (k == "ranks" and n_ranks is None)
            ]
            if "filtered" in changed and set(self._binning["filtered"]) <= set(wanted["filtered"]):
                # Fewer features can split now: those stored still hold them all.
                changed.remove("filtered")
            if "ranks" in changed:
                changed = ["ranks"]  # the seed rule follows the row count
            same = not changed
            what = "; ".join(
                f"it was binned on {self._binning[k]} rank(s) and trains row-sharded on {wanted[k]}"
                if k == "ranks"
                else "feature_pre_filter left out features that can split with the new "
                "min_data_in_leaf (LightGBM: set feature_pre_filter=false to change it)"
                if k == "filtered"
                else "it binned only the columns holding values, and the params speak of "
                "every column (monotone or interaction constraints, extra_trees, "
                "feature_fraction_bynode)"
                if k == "wide"
                else f"the params ask for {k}={wanted[k]} (was {self._binning[k]})"
                for k in changed
            )
        if same:
            return True
        if getattr(self, "binary_file", None) is not None:
            raise ValueError(
                f"This Dataset comes from the binary file {self.binary_file} and {what}: "
                "its bins are fixed; bin it again from the text data (Dataset(path to the "
                "text file) or the arrays) with these params"
            )
        if self._source is None and self._parent_rows is None:  # (a subset: from the parent)
            raise ValueError(
                f"This Dataset is already binned and {what}; its raw data was freed, "
                "so it cannot be binned again: create a new Dataset, or create it "
                "with free_raw_data=False"
            )
        return False

    def _follow_forced_layout(self, cfg: Mapping[str, Any]) -> None:
        """force_row_wise / force_col_wise asked of a Dataset binned in the other layout."""
        wanted = "col" if cfg["force_col_wise"] else "row" if cfg["force_row_wise"] else self.layout
        if wanted != self.layout:
            store = self.store
            assert store is not None and wanted is not None  # (binned)
            store.dense = (np.ascontiguousarray if wanted == "row" else np.asfortranarray)(
                store.dense
            )
            self.layout = store.layout = wanted

    @property
    def binned(self) -> np.ndarray | None:
        """The (n_samples, n_features) binned matrix when every feature is stored
        as a dense column of its own (``store.plain``), else None."""
        store = self.store
        return store.dense if store is not None and store.plain else None

    def _binned_matrix(self, dtype: npt.DTypeLike) -> np.ndarray | None:
        """The full binned matrix dense input is binned into (None for sparse input:
        its columns are binned one by one, never densified)."""
        assert self._source is not None  # (binning: the raw data is there)
        if self._source.keeps_sparse():
            return None
        order: Literal["C", "F"] = "C" if self.layout == "row" else "F"
        return np.empty((self.n_samples, self.n_features), dtype=dtype, order=order)

    def _column(
        self,
        col: RawColumn,
        upper_bounds: npt.NDArray[np.float64],
        nan_bin: int,
        binned: np.ndarray | None,
        f: int,
        categories: npt.NDArray[np.int64] | None = None,
    ) -> Column:
        """One feature's bins as a store Column (into ``binned[:, f]`` for dense
        input); ``categories``: a categorical feature's (BinMapper.categories)."""
        if categories is not None:
            name = self.feature_name[f]  # (categorical data bins every column)
            check_category_values(col[0] if isinstance(col, tuple) else col, name)
            order = np.argsort(categories, kind="stable")
            lookup = (categories[order], (order + 1).astype(np.int64))

            def bin_values(values: np.ndarray, out: np.ndarray) -> None:
                map_categories(values, *lookup, out)

            fill = category_bin(categories, 0)
        else:

            def bin_values(values: np.ndarray, out: np.ndarray) -> None:
                map_to_bins(values, upper_bounds, nan_bin, out)

            fill = zero_bin(upper_bounds)
        if not isinstance(col, tuple):  # dense (a frame's dense column: its own array)
            out = binned[:, f] if binned is not None else np.empty(self.n_samples, np.uint16)
            bin_values(col, out)
            return Column(self.n_samples, dense=out)
        values, rows = col
        bins = np.empty(len(values), np.uint16)
        bin_values(values, bins)
        return Column(self.n_samples, rows=rows, bins=bins, fill=fill)

    def _store(
        self,
        columns: Sequence[Column],
        binned: np.ndarray | None,
        cfg: Mapping[str, Any],
        comm: SerialComm | None,
    ) -> BinStore:
        mapper = self.bin_mapper
        assert mapper is not None and self.layout is not None  # (the bins are found)
        zeros = mapper.default_bins
        sharded = comm is not None and comm.size > 1
        store = build_store(
            columns,
            self.n_total if sharded else self.n_samples,
            mapper.feature_offsets,
            zeros,
            self.layout,
            (cfg["enable_bundle"], cfg["is_enable_sparse"], self._pre_filter(cfg)),
            n_samples=self.n_samples,
            comm=comm if sharded else None,
            offset=self.row_offset if sharded else 0,
            binned=binned,
            wide_columns=self.used_features,
        )
        store.bin_categories = mapper.bin_categories
        return store

    def _pre_filter(self, cfg: Mapping[str, Any]) -> int | None:
        """min_data_in_leaf when feature_pre_filter drops unsplittable features,
        else None.  Data binned with another's bins (validation) keeps every
        feature: the model may split on any the training data could."""
        if self.reference is None and cfg["feature_pre_filter"]:
            return cfg["min_data_in_leaf"]
        return None

    def _filtered(self, cfg: Mapping[str, Any]) -> tuple[int, ...]:
        """The features feature_pre_filter leaves out with ``cfg`` (from the
        store's global counts)."""
        store, min_data = self.store, self._pre_filter(cfg)
        if min_data is None or store is None or store.counts is None:
            return ()
        kept = splittable_features(store.counts, store.bin_offsets, min_data, True)
        return tuple(np.flatnonzero(~kept).tolist())

    def _bin_with(
        self, mapper: AnyBinMapper, cfg: Mapping[str, Any], comm: SerialComm | None = None
    ) -> BinStore:
        """The store of this Dataset's rows binned with ``mapper`` (a reference's);
        ``comm``: row-sharded training, whose store decisions take every rank's
        counts."""
        if self._source is None and self._parent_rows is not None:
            return self._bin_from_parent(mapper, cfg, comm)
        assert self._source is not None  # (binning: the raw data is there)
        self._code_categories(None)
        used = self.used_features
        binned = self._binned_matrix(mapper.bin_dtype) if used is None else None
        cats = mapper.categories or [None] * mapper.n_features
        columns = [
            self._column(col, mapper.upper_bounds[f], int(mapper.nan_bins[f]), binned, f, cats[f])
            for f, col in enumerate(self._source.columns(used))
        ]
        return self._store(columns, binned, cfg, comm)

    def _bin_from_parent(
        self, mapper: AnyBinMapper, cfg: Mapping[str, Any], comm: SerialComm | None
    ) -> BinStore:
        """A subset's store from its parent's (the parent's raw data was freed): the
        same bins, bundles and sparse part chosen on the subset's own rows, as for
        a Dataset made from those rows with ``reference=parent``."""
        assert self.reference is not None and self._parent_rows is not None  # (a subset)
        store = self.reference.store
        assert store is not None  # (the parent is constructed first)
        self.used_features = self.reference.used_features
        binned = None
        if store.plain:
            order: Literal["C", "F"] = "C" if self.layout == "row" else "F"
            binned = np.empty((self.n_samples, self.n_features), mapper.bin_dtype, order=order)
        columns = subset_columns(store, self._parent_rows, mapper.default_bins, binned)
        return self._store(columns, binned, cfg, comm)

    def _max_bins(
        self, cfg: Mapping[str, Any], used: npt.NDArray[np.int64] | None = None
    ) -> list[int]:
        """Each feature's max_bin (of the ``used`` columns; None: every one):
        max_bin_by_feature, or max_bin for all."""
        by_feature = cfg["max_bin_by_feature"]
        if by_feature is None:
            return [cfg["max_bin"]] * (self.n_features if used is None else len(used))
        if used is not None:
            every = self._max_bins(cfg)  # (checks the length)
            return [every[g] for g in used.tolist()]
        if self.feature_indices is not None:  # a block of the columns: global indices
            if len(by_feature) <= int(self.feature_indices.max(initial=-1)):
                raise ValueError(
                    f"max_bin_by_feature has {len(by_feature)} values but this block "
                    f"holds column {int(self.feature_indices.max())}: give one per feature"
                )
            return [by_feature[g] for g in self.feature_indices]
        if len(by_feature) != self.n_features:
            raise ValueError(
                f"max_bin_by_feature has {len(by_feature)} values but the data has "
                f"{self.n_features} features: give one per feature"
            )
        return list(by_feature)

    def categorical_columns(self, cfg: Mapping[str, Any]) -> npt.NDArray[np.bool_]:
        """bool per column: the categorical features, from this Dataset's
        ``categorical_feature``, else the params', else (``"auto"``) a
        DataFrame's category columns."""
        spec = self._categorical_spec
        if spec == "auto" and cfg["categorical_feature"] not in ((), "auto"):
            spec = cfg["categorical_feature"]
        return categorical_mask(
            spec, self.feature_name, self.n_features, self._auto_categorical, self.feature_indices
        )

    def _code_categories(self, comm: SerialComm | None) -> None:
        """The category lists this Dataset's pandas category columns are coded
        by: its reference's (validation data), or those of every rank joined
        (row-sharded training: ranks' frames list categories differently)."""
        src = self._source
        assert src is not None  # (binning: the raw data is there)
        if self.reference is not None:
            lists = self.reference.pandas_categorical
            if src.category_columns and len(lists or ()) != len(src.category_columns):
                raise ValueError(
                    f"This Dataset has {len(src.category_columns)} category columns, its "
                    f"reference {len(lists or ())}: give the training data's columns"
                )
            src.category_lists = list(lists or ())
        elif getattr(self, "_wanted_lists", None) is not None and src.category_columns:
            assert self._wanted_lists is not None  # (narrowing for mypy: checked just above)
            if len(self._wanted_lists) != len(src.category_columns):
                raise ValueError(
                    f"This Dataset has {len(src.category_columns)} category columns, the "
                    f"init model's pandas_categorical {len(self._wanted_lists)}"
                )
            src.category_lists = [list(c) for c in self._wanted_lists]
        elif comm is not None and comm.size > 1:
            every = comm.per_rank_objects(src.category_lists)
            if len({len(lists) for lists in every}) > 1:
                raise ValueError(
                    "Ranks' DataFrames have different numbers of category columns: "
                    f"{[len(lists) for lists in every]}"
                )
            src.category_lists = [union_categories(col) for col in zip(*every, strict=True)]
        self.pandas_categorical = list(src.category_lists) or None

    def _find_bins_and_bin(self, cfg: Mapping[str, Any], comm: SerialComm | None) -> None:
        """One pass over the columns (of a wide sparse matrix, those holding
        values: see ``_wide_columns``): each one's bounds, then its bins."""
        self._code_categories(comm)
        used = self.used_features = self._wide_columns(cfg, comm)
        max_bins = self._max_bins(cfg, used)
        max_bin = max(max_bins, default=cfg["max_bin"])
        # Every feature has at most its max_bin bins (NaN bin included), so the
        # dtype and the layout are known before any bounds are; the layout as if
        # every column were binned (an empty one: at most max_bin bins too).
        total_bins_bound = sum(max_bins)
        if used is not None:
            total_bins_bound = (
                sum(self._max_bins(cfg))
                if cfg["max_bin_by_feature"]
                else (cfg["max_bin"] * self.n_features)
            )
        self.layout = choose_layout(cfg, total_bins_bound)
        binned = None if used is not None else self._binned_matrix(bin_dtype_for(max_bin))
        sample = sample_rows(
            self.n_samples,
            cfg["bin_construct_sample_cnt"],
            cfg["seed"] & 0x7FFFFFFF,
            self.row_offset,
            self.n_total,
        )
        found = self._bounds_and_columns(cfg, comm, sample, max_bins, binned)
        upper_bounds, nan_bins, ranges, columns, cats = found
        categorical = any(c is not None for c in cats)
        # Missing type Zero needs more than two bins (LightGBM: else None).
        zero_missing = cfg["use_missing"] and cfg["zero_as_missing"]
        self.bin_mapper = BinMapper(
            upper_bounds,
            np.asarray(nan_bins, dtype=np.int32),
            np.array(ranges, np.float64).reshape(-1, 2),
            np.array([zero_missing and len(ub) > 2 for ub in upper_bounds], bool),
            cats if categorical else None,
        )
        self._empty_range = self._range_of_empty(sample, comm)
        self.store = self._store(columns, binned, cfg, comm)

    def _bounds_and_columns(
        self,
        cfg: Mapping[str, Any],
        comm: SerialComm | None,
        sample: np.ndarray | None,
        max_bins: list[int],
        binned: np.ndarray | None,
    ) -> tuple[list[Any], list[Any], list[Any], list[Any], list[Any]]:
        """(upper bounds, NaN bins, value ranges, store Columns, categories) of
        every binned column."""
        assert self._source is not None  # (binning: the raw data is there)
        used = self.used_features
        out: tuple[list[Any], list[Any], list[Any], list[Any], list[Any]] = ([], [], [], [], [])
        # LightGBM bins NaN as 0.0 for zero_as_missing too
        use_missing = cfg["use_missing"] and not cfg["zero_as_missing"]
        categorical = self.categorical_columns(cfg)
        if used is not None:
            categorical = categorical[used]
        for f, col, found in _bounds_in_batches(
            self._source, self.n_samples, sample, (use_missing, categorical, used), comm
        ):
            if categorical[f]:
                ub, nan_bin, value_range, c = category_bounds(
                    *found[:2], max_bins[f], cfg["min_data_in_bin"]
                )
                _warn_sparse_categories(c, self.feature_name[f])
            else:
                ub, nan_bin, value_range = bounds_of(*found, max_bins[f], cfg["min_data_in_bin"])
                c = None
            for part, value in zip(out, (ub, nan_bin, value_range, None, c), strict=True):
                part.append(value)
            out[3][-1] = self._column(col, ub, nan_bin, binned, f, c)
        return out

    def _range_of_empty(
        self, sample: np.ndarray | None, comm: SerialComm | None
    ) -> tuple[float, float]:
        """The value range a column without values gets: (0, 0) when the bin
        sample has rows (its implicit zeros), else NaN (binning.value_range)."""
        n = self.n_samples if sample is None else len(sample)
        if comm is not None and comm.size > 1:
            n = int(comm.total_int([n])[0])
        return (0.0, 0.0) if n else (np.nan, np.nan)

    def _wide_columns(
        self, cfg: Mapping[str, Any], comm: SerialComm | None
    ) -> npt.NDArray[np.int64] | None:
        """The sorted columns to bin, those of sparse input that hold entries (on
        any rank), when some hold none; else None: every column.  The others
        are empty (one bin, never split on): leaving them out makes the cost of
        wide hashed data its non-zeros, not its width, with the same model.
        Every column is binned for what speaks of columns by position
        (feature_indices, categorical features, monotone and interaction
        constraints) and for the per-feature draws of extra_trees and
        feature_fraction_bynode."""
        if self.reference is not None:
            return self.reference.used_features
        assert self._source is not None  # (binning: the raw data is there)
        used = self._source.used_columns()
        ok = used is not None and self.feature_indices is None and _may_leave_out(cfg)
        ok = ok and not self.categorical_columns(cfg).any()
        if comm is not None and comm.size > 1:
            if int(comm.total_int([not ok])[0]):
                return None  # every rank alike
            assert used is not None  # (ok on every rank)
            used = np.unique(comm.concat(used, np.int64)).astype(np.int64)
        if not ok or used is None or len(used) == self.n_features:
            return None
        return used

    @property
    def model_mapper(self) -> AnyBinMapper | None:
        """The bins of every column, as models speak of them: ``bin_mapper``, or
        for a Dataset that binned only the columns holding values, a view of
        it over all of them (dgbdt.data.binning.WideBinMapper)."""
        if self.used_features is None or self.bin_mapper is None:
            return self.bin_mapper
        return WideBinMapper(
            self.bin_mapper, self.used_features, self.n_features, self._empty_range
        )

    # -- LightGBM-style accessors ------------------------------------------
    def create_valid(
        self,
        data: DataType,
        label: RowValuesType | None = None,
        weight: RowValuesType | None = None,
        group: ArrayLike | None = None,
        init_score: InitScoreType | None = None,
        params: Mapping[str, Any] | None = None,
        position: ArrayLike | None = None,
    ) -> Dataset:
        """A validation Dataset binned with this one's bins (``reference=self``);
        ``params``: its own Dataset params (default: this Dataset's)."""
        return Dataset(
            data,
            label=label,
            weight=weight,
            init_score=init_score,
            feature_name=self.feature_name,
            reference=self,
            params=self.params if params is None else params,
            group=group,
            position=position,
        )

    def subset(self, used_indices: ArrayLike, params: Mapping[str, Any] | None = None) -> Dataset:
        """A Dataset of the rows ``used_indices`` (sorted, as LightGBM does), binned
        with this Dataset's bins (``reference=self``), lazily: training on it gives
        the model of ``Dataset(X[rows], ..., reference=self)``.

        It takes the label, weight, init_score, group and position of those rows
        now; with query groups the rows must be whole queries, each once.  Its raw
        data is this Dataset's, sliced column by column when it is binned; once
        that was freed (``free_raw_data`` after construct) the subset is binned
        from this Dataset's bin store (features feature_pre_filter left out of it
        stay constant in the subset: they cannot split on fewer rows either).
        ``params``: the subset's own Dataset params (default: this Dataset's).
        """
        rows = _used_rows(used_indices, self.n_samples)
        group, queries = _used_queries(self.group, rows)
        source = RowSubset(self._source, rows, self.n_features, self._auto_categorical)
        subset = Dataset(
            source,
            label=_rows_of(self.label, rows),
            weight=_rows_of(self.weight, rows),
            init_score=_init_score_rows(self.init_score, rows, self.n_samples),
            feature_name=self.feature_name,
            reference=self,
            params=self.params if params is None else params,
            free_raw_data=self.free_raw_data,
            feature_indices=self.feature_indices,
            categorical_feature=self.categorical_feature,
            group=group,
            position=_rows_of(self.position, rows),
        )
        subset.pandas_categorical = self.pandas_categorical
        if self.query_ids is not None and queries is not None:
            subset.query_ids = self.query_ids[queries]
        subset._parent_rows = rows
        if source.source is None:
            subset._source = None  # binned from this Dataset's store
        return subset

    def add_features_from(self, other: Dataset) -> Dataset:
        """Append the features of ``other`` (LightGBM's ``add_features_from``): both
        constructed, with as many rows.  Each keeps its own bins (training gives
        the model of a Dataset of the joined columns binned as these were); the
        label and other fields stay this Dataset's.  A name ``other`` shares
        with this one becomes ``D2_name`` (``D3_``, ...); the raw data is joined
        as LightGBM joins it (an array, sparse matrix or DataFrame: this one's
        kind) or dropped; categorical_feature is reset to "auto" (the bins of
        the categorical features stay categorical).  Returns self."""
        if self.store is None or other.store is None:
            raise ValueError(
                "Both source and target Datasets must be constructed before adding features"
            )
        if other.n_samples != self.n_samples:
            raise DGBDTError(
                "Cannot add features from other Dataset with a different number of rows "
                f"({other.n_samples} rows to this Dataset's {self.n_samples})"
            )
        for ds, which in ((self, "this"), (other, "the other")):
            if ds.feature_indices is not None or ds.n_total != ds.n_samples:
                raise ValueError(
                    f"add_features_from: {which} Dataset holds one rank's block of the "
                    "columns or share of the rows; it joins Datasets of whole data"
                )
        cfg = self._bins_params()
        mapper, columns = _joined_bins(self, other)
        self.feature_name = _joined_names(self.feature_name, other.feature_name, self.params)
        self._join_raw_data(other)
        log_warning(
            "Resetting categorical features.\nYou can set new categorical features via "
            "``set_categorical_feature`` method"
        )
        self.categorical_feature, self.pandas_categorical = "auto", None
        self.n_features = mapper.n_features
        self.reference, self._reference_from_train, self._parent_rows = None, False, None
        self.binary_file = None  # (its bins are no longer the file's)
        self.bin_mapper, self.used_features = mapper, None
        total = sum(cfg["max_bin_by_feature"] or [cfg["max_bin"]] * self.n_features)
        self.layout = choose_layout(cfg, total)  # (as a Dataset of the joined columns)
        self.store = self._store(columns, None, cfg, None)
        self._binning = self._binning_of(cfg, (self._binning or {}).get("ranks"))
        return self

    def _bins_params(self) -> dict[str, Any]:
        """This constructed Dataset's params with the binning values its bins were
        made with (those of the training that constructed it)."""
        cfg = self.resolved_params()
        cfg.update({k: v for k, v in (self._binning or {}).items() if k in BINNING_KEYS})
        if cfg["seed"] is None:  # (every row was in the bin sample: any seed)
            cfg["seed"] = self.resolved_params()["seed"]
        return cfg

    def _join_raw_data(self, other: Dataset) -> None:
        """add_features_from's raw data: both joined (_joined_raw), else none,
        with LightGBM's warning."""
        mine, theirs = self.raw_data, other.raw_data
        kinds = type(other.get_data()).__name__, type(self.get_data()).__name__
        joined = _joined_raw(mine, theirs)
        source = None if joined is None else FeatureSource(joined)
        self._source = source
        self._auto_categorical = () if source is None else tuple(source.auto_columns)
        if joined is None:
            log_warning(
                f"Cannot add features from {kinds[0]} type of raw data to {kinds[1]} type "
                "of raw data.\n"
                + (
                    "Set free_raw_data=False when construct Dataset to avoid this"
                    if mine is None
                    else "Freeing raw data"
                )
            )

    def save_binary(self, filename: str | os.PathLike[str]) -> Dataset:
        """Write this Dataset, binned (constructed first if it is not), to
        ``filename`` in dgbdt's own binary format (:mod:`dgbdt.data.binary_file`);
        ``Dataset(filename)`` reads it back (and ``dgbdt train data=filename``):
        training on it gives the same model.  Returns self.

        The file holds the bin store and the bins, label, weight, init_score,
        group, position, feature names, categorical features, pandas categories
        and the binning params.  A row-sharded Dataset (under mpiexec) is saved
        by each rank to its own file (``{rank}`` in ``filename`` is replaced by
        the rank), which only that rank of as many ranks may load.  LightGBM's
        binary Dataset files are another format: neither reads the other's.
        """
        target = dataset_file.rank_path(filename)
        if os.path.exists(target):  # LightGBM's rule: an existing file is never replaced
            warnings.warn(f"File {target} exists, cannot save binary to it", stacklevel=2)
            return self
        if self.store is None:
            self.construct()  # (a Dataset(path) of this rank's rows: with its comm)
        dataset_file.write_dataset_file(self, target)
        return self

    def num_data(self) -> int:
        """Number of rows (this rank's, when rows are sharded)."""
        return self.n_samples

    def num_feature(self) -> int:
        """Number of feature columns (this rank's block, with ``feature_indices``)."""
        return self.n_features

    def get_label(self) -> np.ndarray | None:
        """The label array, or None."""
        return self.label

    def get_weight(self) -> np.ndarray | None:
        """The row weights, or None."""
        return self.weight

    def get_init_score(self) -> np.ndarray | None:
        """The starting raw scores, or None."""
        return self.init_score

    def get_feature_name(self) -> list[str]:
        """The feature names (``Column_i`` when none were given)."""
        return list(self.feature_name)

    def set_label(self, label: RowValuesType | None) -> Dataset:
        """Replace the label (checked as in the constructor); returns self."""
        self.label = check_label(as_1d(label, "label", self.n_samples))
        return self

    def set_weight(self, weight: RowValuesType | None) -> Dataset:
        """Replace the row weights (checked as in the constructor); returns self."""
        self.weight = check_weight(as_1d(weight, "weight", self.n_samples))
        return self

    def set_init_score(self, init_score: InitScoreType | None) -> Dataset:
        """Replace the starting raw scores (checked as in the constructor); returns self."""
        self.init_score = check_init_score(init_score, self.n_samples)
        return self

    def get_group(self) -> np.ndarray | None:
        """The query sizes, or None."""
        return self.group

    def set_group(self, group: ArrayLike | None) -> Dataset:
        """Replace the query sizes (checked as in the constructor); returns self."""
        self.group = check_group(group, self.n_samples)
        self.query_ids = None
        return self

    def get_position(self) -> np.ndarray | None:
        """The positions, or None."""
        return self.position

    def set_position(self, position: ArrayLike | None) -> Dataset:
        """Replace the positions (checked as in the constructor); returns self."""
        self.position = check_position(position, self.n_samples)
        return self

    # -- LightGBM's field access by name -----------------------------------
    def set_field(self, field_name: str, data: Any) -> Dataset:
        """Set the field ``field_name`` (LightGBM's names: label, weight,
        init_score, group, position) of a constructed Dataset, as its
        ``set_<field>`` does; ``None`` removes it.  Returns self."""
        self._field_name(field_name, "set")
        if self.store is None:
            raise DGBDTError(f"Cannot set {field_name} before construct dataset")
        getattr(self, f"set_{field_name}")(data)
        return self

    def get_field(self, field_name: str) -> np.ndarray | None:
        """A constructed Dataset's field in LightGBM's form: label and weight
        float32, init_score float64 ((n_samples, n_classes) for several
        classes), group the query boundaries (int32, from 0), position each
        row's position id (int32, numbered in order of first appearance)."""
        self._field_name(field_name, "get")
        if self.store is None:
            raise DGBDTError(f"Cannot get {field_name} before construct Dataset")
        value = getattr(self, field_name)
        if value is None or (field_name != "init_score" and not len(value)):
            return None
        if field_name in ("label", "weight"):
            return np.asarray(value, np.float32)
        if field_name == "group":
            return np.concatenate([[0], np.cumsum(value)]).astype(np.int32)
        if field_name == "position":
            _, first, ids = np.unique(value, return_index=True, return_inverse=True)
            rank = np.argsort(np.argsort(first, kind="stable"), kind="stable")
            return rank[ids.reshape(-1)].astype(np.int32)
        init = np.asarray(value, np.float64)
        if init.ndim == 1 and self.n_samples and init.size > self.n_samples:
            return init.reshape((self.n_samples, -1), order="F")  # LightGBM's class-major
        return init

    @staticmethod
    def _field_name(field_name: str, verb: str) -> None:
        if field_name not in ("label", "weight", "init_score", "group", "position"):
            raise DGBDTError(
                f"Cannot {verb} field {field_name!r}: the fields are label, weight, "
                "init_score, group and position"
            )

    def get_params(self) -> dict[str, Any]:
        """The Dataset parameters among this Dataset's params (LightGBM's
        ``get_params``: binning and data-file keys, under the names given); a
        constructed Dataset binned with a reference's bins has the reference's."""
        own = {
            k: v
            for k, v in self.params.items()
            if isinstance(k, str) and lightgbm_canonical(k) in DATASET_KEYS
        }
        if self.reference is not None and self.store is not None:
            # binned with the reference's bins: its Dataset params (LightGBM)
            return {**own, **self.reference.get_params()}
        return own

    def set_feature_name(self, feature_name: Sequence[str] | Literal["auto"]) -> Dataset:
        """Rename the features (models trained on this Dataset from now on take
        the new names); ``"auto"`` keeps them.  Returns self."""
        if feature_name != "auto":
            self.feature_name = self._feature_names(feature_name)
        return self

    def set_categorical_feature(
        self, categorical_feature: Sequence[int | str] | Literal["auto"]
    ) -> Dataset:
        """Set the categorical features (indices or names, or "auto") as
        LightGBM does: a constructed Dataset is binned again from its raw data
        at the next training ("auto" keeps a list set before; replacing one is
        warned).  Returns self."""
        if self.categorical_feature == categorical_feature:
            return self
        if self.get_data() is None:
            raise DGBDTError(
                "Cannot set categorical feature after freed raw data, "
                "set free_raw_data=False when construct Dataset to avoid this."
            )
        if categorical_feature == "auto":
            return self
        if self.categorical_feature != "auto":
            log_warning(
                "categorical_feature in Dataset is overridden.\n"
                f"New categorical_feature is {list(categorical_feature)}"
            )
        self.categorical_feature = categorical_feature
        if self.store is not None:
            self._not_binned_yet()  # (LightGBM frees its handle: binned anew)
        return self

    def feature_num_bin(self, feature: int | str) -> int:
        """The number of bins of ``feature`` (an index or a name) of a
        constructed Dataset; 0 for a feature training never splits on (one
        bin, or left out by feature_pre_filter), as LightGBM."""
        if isinstance(feature, str):
            if feature not in self.feature_name:
                raise DGBDTError(f"feature_num_bin: no feature is named {feature!r}")
            feature = list(self.feature_name).index(feature)
        mapper = self.model_mapper
        if mapper is None:
            raise DGBDTError("Cannot get feature_num_bin before construct dataset")
        if not 0 <= int(feature) < self.n_features:
            raise DGBDTError(
                f"Tried to retrieve number of bins for feature index {feature}, but the "
                f"valid feature indices are [0, {self.n_features - 1}]."
            )
        n = int(mapper.n_bins[int(feature)])
        filtered = list((self._binning or {}).get("filtered", ()))
        if self.used_features is not None:  # (filtered counts the binned columns)
            filtered = self.used_features[filtered].tolist()
        return 0 if n <= 1 or int(feature) in filtered else n


#: LightGBM's Dataset parameters (Dataset.get_params keeps these, under any alias).
DATASET_KEYS = frozenset(
    (
        "bin_construct_sample_cnt",
        "categorical_feature",
        "data_random_seed",
        "enable_bundle",
        "feature_pre_filter",
        "forcedbins_filename",
        "group_column",
        "header",
        "ignore_column",
        "is_enable_sparse",
        "label_column",
        "linear_tree",
        "max_bin",
        "max_bin_by_feature",
        "min_data_in_bin",
        "pre_partition",
        "precise_float_parser",
        "two_round",
        "use_missing",
        "weight_column",
        "zero_as_missing",
    )
)


def _store_columns(ds: Dataset) -> tuple[AnyBinMapper, list[Column]]:
    """(bins of every column, a store Column per column) of a constructed
    Dataset, from its bin store: what add_features_from joins."""
    mapper, store, inner = ds.model_mapper, ds.store, ds.bin_mapper
    assert mapper is not None and store is not None and inner is not None  # (constructed)
    n = ds.n_samples
    columns = subset_columns(store, np.arange(n, dtype=np.int64), inner.default_bins)
    if ds.used_features is None:
        return mapper, columns
    # a wide Dataset's empty columns: one bin, every row in it
    empty = Column(n, rows=np.zeros(0, np.int64), bins=np.zeros(0, np.uint16), fill=0)
    every = [empty] * ds.n_features
    for f, column in zip(ds.used_features.tolist(), columns, strict=True):
        every[f] = column
    return mapper, every


def _joined_bins(a: Dataset, b: Dataset) -> tuple[BinMapper, list[Column]]:
    """The bins and store Columns of ``a``'s columns followed by ``b``'s."""
    (ma, ca), (mb, cb) = _store_columns(a), _store_columns(b)
    both = (ma, mb)
    ranges = [
        np.full((m.n_features, 2), np.nan) if m.value_ranges is None else m.value_ranges
        for m in both
    ]
    zero = [
        np.zeros(m.n_features, bool) if m.zero_missing is None else m.zero_missing for m in both
    ]
    categories = None
    if ma.categories is not None or mb.categories is not None:
        categories = [c for m in both for c in (m.categories or [None] * m.n_features)]
    mapper = BinMapper(
        [*ma.upper_bounds, *mb.upper_bounds],
        np.concatenate([ma.nan_bins, mb.nan_bins]).astype(np.int32),
        np.concatenate(ranges).astype(np.float64),
        np.concatenate(zero).astype(bool),
        categories,
    )
    return mapper, [*ca, *cb]


def _joined_names(
    mine: Sequence[str], theirs: Sequence[str], params: Mapping[str, Any]
) -> list[str]:
    """add_features_from's names: ``theirs`` after ``mine``, a name already taken
    becoming D2_name (D3_name, ...), with LightGBM's C++ warning."""
    names, taken = list(mine), set(mine)
    for name in theirs:
        new, n = name, 2
        while new in taken:
            new, n = f"D{n}_{name}", n + 1
        if new != name:
            log_lightgbm_warning(
                f"Find the same feature name ({name}) in Dataset::AddFeaturesFrom, change "
                f"its name to ({new})",
                _verbosity(params),
            )
        taken.add(new)
        names.append(new)
    return names


def _joined_raw(mine: Any, theirs: Any) -> Any:
    """LightGBM's join of two Datasets' raw data (add_features_from), in the
    kind of ``mine``: a numpy array (``theirs`` densified), a scipy.sparse
    matrix (in its format) or a DataFrame (columns renumbered); None where
    LightGBM drops it (either is None, or of another kind)."""
    if mine is None or theirs is None:
        return None
    joinable = isinstance(theirs, np.ndarray) or is_sparse(theirs) or is_dataframe(theirs)
    if not joinable:
        return None
    if isinstance(mine, np.ndarray):
        dense = theirs.toarray() if is_sparse(theirs) else np.asarray(theirs)
        return np.hstack((mine, dense))
    if is_sparse(mine):
        part = theirs.to_numpy() if is_dataframe(theirs) else theirs
        return scipy_sparse().hstack((mine, part), format=mine.format)
    if is_dataframe(mine):
        import pandas as pd  # noqa: PLC0415 - optional: mine is a DataFrame, pandas is loaded

        part = (
            theirs
            if is_dataframe(theirs)
            else pd.DataFrame(theirs.toarray() if is_sparse(theirs) else theirs)
        )
        return pd.concat((mine, part), axis=1, ignore_index=True)
    return None


def _verbosity(params: Mapping[str, Any]) -> int:
    """The verbosity (any alias) of a Dataset's params, LightGBM's 1 when not
    given: for the log lines a Dataset writes before any training resolves them."""
    for key, value in params.items():
        if isinstance(key, str) and lightgbm_canonical(key) == "verbosity":
            try:
                return int(value)
            except (TypeError, ValueError):
                break  # (the params check at training reports it)
    return 1


def _may_leave_out(cfg: Mapping[str, Any]) -> bool:
    """Whether training with ``cfg`` may see only the columns that hold values
    (see Dataset._wide_columns): nothing in it speaks of columns by position."""
    return (
        cfg["monotone_constraints"] is None
        and not cfg["interaction_constraints"]
        and not cfg["extra_trees"]
        and cfg["feature_fraction_bynode"] >= 1.0
    )


# Bytes of columns and sampled values one batch of _bounds_in_batches holds
# (on average: the batch is a number of features, the same on every rank).
BOUNDS_BATCH_BYTES = 32 << 20
BOUNDS_BATCH_MAX = 4096


def _bounds_batch(source: FeatureSource | RowSubset, comm: SerialComm) -> int:
    """Features per batch of _bounds_in_batches, agreed by every rank."""
    need = comm.greatest_int([source.bytes_per_column()])[0]
    return int(min(BOUNDS_BATCH_MAX, max(1, BOUNDS_BATCH_BYTES // max(int(need), 1))))


def _bounds_in_batches(
    source: FeatureSource | RowSubset,
    n_samples: int,
    sample: np.ndarray | None,
    kinds: tuple[bool, npt.NDArray[np.bool_], npt.NDArray[np.int64] | None],
    comm: SerialComm | None,
) -> Iterator[tuple[int, RawColumn, Sampled]]:
    """(index, column, global sampled_values) of every column (of ``used``), in
    order (``kinds``: use_missing, the categorical mask, ``used``); under
    MPI the samples of a batch of columns travel in two collectives (a wide
    sparse matrix has tens of thousands of features: not 3 collectives each)."""
    sharded = comm is not None and comm.size > 1
    size = _bounds_batch(source, comm) if sharded and comm is not None else 1
    use_missing, categorical, used = kinds
    n_columns = source.shape[1] if used is None else len(used)
    mask = None
    if sample is not None:
        mask = np.zeros(n_samples, bool)
        mask[sample] = True
    batch: list[tuple[int, RawColumn, Sampled]] = []
    for f, col in enumerate(source.columns(used)):
        one = sampled_values(col, n_samples, sample, use_missing, categorical[f], mask)
        batch.append((f, col, one))
        if len(batch) == size or f == n_columns - 1:
            found = [b[2] for b in batch]
            if sharded and comm is not None:
                found = gather_samples(found, comm)
            for (f, col, _), one in zip(batch, found, strict=True):
                yield f, col, one
            batch = []


def _warn_sparse_categories(categories: npt.NDArray[np.int64], name: str) -> None:
    """LightGBM's warning for categories far larger than their number: a split's
    bitset takes (largest category / 32) words (from 2^16 dgbdt keeps a list of
    the split's categories instead, but LightGBM and its export take bitsets)."""
    if len(categories) and int(categories.max()) // 100 > len(categories):
        top = int(categories.max())
        cost = (
            f"each split's bitset takes {top // 32 + 1} words"
            if top < BITSET_CATEGORY_LIMIT
            else "LightGBM's model files cannot hold such a split (dgbdt's JSON can)"
        )
        warnings.warn(
            f"categorical feature {name!r} has {len(categories)} categories up to "
            f"{top}: {cost}; renumber them to consecutive integers from 0",
            stacklevel=4,
        )
