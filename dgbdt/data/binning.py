"""The bin mapper: per-feature bin upper bounds, found once on a row sample.

Every data set that meets the same model (training, validation, a continued
training) is binned with the same mapper.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence, Sized
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, TypeAlias, overload

import numpy as np
import numpy.typing as npt

from ..native.binning import distinct_counts, find_bin_upper_bounds, map_sparse_to_bins, map_to_bins
from ..native.common import LARGEST, bin_dtype_for
from ..native.random import uniform_fill
from ..streams import STREAM_BIN_SAMPLE

if TYPE_CHECKING:
    from ..distributed.comm import SerialComm

#: One feature's values: a dense float64 column, or a sparse ``(values, row
#: indices)`` pair whose absent rows are 0.0.
RawColumn: TypeAlias = "npt.NDArray[np.float64] | tuple[npt.NDArray[np.float64], np.ndarray]"
#: ``sampled_values``' (values, n_implicit_zeros, has_nan) of one feature.
Sampled: TypeAlias = "tuple[npt.NDArray[np.float64], int, bool]"
#: ``bounds_of``' (upper bounds, NaN bin, value range) of one feature.
Bounds: TypeAlias = "tuple[npt.NDArray[np.float64], int, tuple[float, float]]"


@dataclass
class BinMapper:
    """Bin boundaries of every feature.

    upper_bounds[f] : float64 array, rising, last element +inf; the one before
                      is +inf too when the largest values are +inf or huge
                      (LightGBM's bounds, see native.binning: +inf shares the
                      bin of the largest finite values, the last bin is empty)
    nan_bins[f]     : bin index of NaN within feature f, or -1
    value_ranges    : float64 (n_features, 2), the smallest and largest value
                      of the bin sample (NaN when it has none), as LightGBM's
                      ``min_val`` / ``max_val``; None when unknown (an older model)
    zero_missing    : bool per feature, LightGBM's missing type Zero
                      (``zero_as_missing``): the bin of 0.0, where NaN is binned
                      too, is the missing bin; None: no feature is
    categories      : per feature None (numeric) or, for a categorical feature,
                      the int64 categories of bins 1, 2, ... (most frequent
                      first, as LightGBM); bin 0 holds NaN, negative, rare and
                      unseen values and always goes right.  Such a feature's
                      upper_bounds are placeholders (one per bin) and it has no
                      NaN bin.  None: no feature is categorical
    """

    upper_bounds: list[npt.NDArray[np.float64]]
    nan_bins: npt.NDArray[np.int32]
    value_ranges: npt.NDArray[np.float64] | None = None
    zero_missing: npt.NDArray[np.bool_] | None = None
    categories: list[npt.NDArray[np.int64] | None] | None = None

    @property
    def is_categorical(self) -> npt.NDArray[np.bool_]:
        """bool per feature."""
        if self.categories is None:
            return np.zeros(self.n_features, bool)
        return np.array([c is not None for c in self.categories], bool)

    @property
    def bin_categories(self) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """(offsets int64[n_features + 1], values int64): the category of bin b
        of a categorical feature f is values[offsets[f] + b] (-1 for bin 0);
        numeric features have no entries."""
        cats = self.categories or [None] * self.n_features
        per = [np.zeros(0, np.int64) if c is None else np.append(-1, c) for c in cats]
        offsets = np.concatenate([[0], np.cumsum([len(p) for p in per])]).astype(np.int64)
        values = np.concatenate(per + [np.zeros(0, np.int64)]).astype(np.int64)
        return offsets, values

    @property
    def default_bins(self) -> npt.NDArray[np.int64]:
        """int64 per feature: the bin of the value 0.0 (where a sparse column's
        absent entries go)."""
        cats = self.categories or [None] * self.n_features
        return np.array(
            [
                zero_bin(ub) if c is None else category_bin(c, 0)
                for ub, c in zip(self.upper_bounds, cats, strict=True)
            ],
            np.int64,
        )

    @property
    def n_features(self) -> int:
        return len(self.upper_bounds)

    @property
    def n_bins(self) -> npt.NDArray[np.int64]:
        """Bins per feature, NaN bin included."""
        return np.array(
            [len(ub) + (nb >= 0) for ub, nb in zip(self.upper_bounds, self.nan_bins, strict=True)],
            dtype=np.int64,
        )

    @property
    def zero_bins(self) -> npt.NDArray[np.int32]:
        """int32 per feature: the missing bin of a Zero-type feature (its bin of
        0.0), -1 for the others."""
        zb = np.array([zero_bin(ub) for ub in self.upper_bounds], np.int32)
        if self.zero_missing is None:
            return np.full(self.n_features, -1, np.int32)
        return np.where(self.zero_missing & ~self.is_categorical, zb, -1).astype(np.int32)

    @property
    def missing_bins(self) -> npt.NDArray[np.int32]:
        """int32 per feature: the bin whose rows follow a split's default side (the
        NaN bin, or a Zero-type feature's bin of 0.0), -1 for none."""
        return np.where(self.nan_bins >= 0, self.nan_bins, self.zero_bins).astype(np.int32)

    @property
    def feature_offsets(self) -> npt.NDArray[np.int64]:
        return np.concatenate([[0], np.cumsum(self.n_bins)]).astype(np.int64)

    @property
    def bin_dtype(self) -> type[np.unsignedinteger[Any]]:
        return bin_dtype_for(int(self.n_bins.max()) if self.n_features else 1)

    def threshold_value(self, feature: int, threshold_bin: int) -> float:
        """The real threshold of a split 'bin <= threshold_bin'.

        A +inf bound (the last value bin's, or the one before it; only a
        "values left, NaN right" split uses them) is stored as the largest
        float, so that model files stay strict JSON; prediction reads it back
        as +inf, so +inf rows go left as their bin did in training.
        """
        return float(min(self.upper_bounds[feature][threshold_bin], LARGEST))

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            # +inf before the last bound (see upper_bounds) as the largest float
            "upper_bounds": [np.minimum(ub[:-1], LARGEST).tolist() for ub in self.upper_bounds],
            "nan_bins": self.nan_bins.tolist(),
        }
        if self.value_ranges is not None:
            # [lo, hi] per feature, +-inf as the largest float; None for a feature
            # with no values (strict JSON)
            d["value_ranges"] = [
                None if np.isnan(lo) else np.clip([lo, hi], -LARGEST, LARGEST).tolist()
                for lo, hi in self.value_ranges
            ]
        if self.categories is not None and self.is_categorical.any():
            d["categories"] = [None if c is None else c.tolist() for c in self.categories]
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> BinMapper | WideBinMapper:
        wide = _wide_from_dict(d)
        if wide is not None:
            return wide
        ubs = [np.append(np.asarray(u, dtype=np.float64), np.inf) for u in d["upper_bounds"]]
        ubs = [np.where(ub >= LARGEST, np.inf, ub) for ub in ubs]  # back to +inf (to_dict)
        ranges = d.get("value_ranges")
        if ranges is not None:
            ranges = np.array([(np.nan, np.nan) if r is None else r for r in ranges], np.float64)
            ranges[np.abs(ranges) >= LARGEST] *= np.inf  # back to +-inf
        cats = d.get("categories")
        if cats is not None:
            cats = [None if c is None else np.asarray(c, np.int64) for c in cats]
        return cls(ubs, np.asarray(d["nan_bins"], dtype=np.int32), ranges, categories=cats)


#: From this many features a model's bins are read as a WideBinMapper when at
#: least half the columns are empty (a model of a wide Dataset).
WIDE_MIN_COLUMNS = 1 << 16


def _wide_from_dict(d: Mapping[str, Any]) -> WideBinMapper | None:
    """The WideBinMapper of a model of a wide Dataset (``BinMapper.to_dict``'s
    fields; an empty column has no bounds, no NaN bin and the range of the
    first such column), else None: per-column objects for used columns only."""
    bounds, nan_bins = d["upper_bounds"], d["nan_bins"]
    ranges = d.get("value_ranges")
    n = len(bounds)
    if n < WIDE_MIN_COLUMNS or d.get("categories") is not None or len(nan_bins) != n:
        return None
    if ranges is not None and len(ranges) != n:
        return None  # (BinMapper reports the mismatch)
    first = next((f for f in range(n) if not bounds[f] and nan_bins[f] == -1), None)
    if first is None:
        return None
    r0 = None if ranges is None else ranges[first]
    used = [
        f
        for f in range(n)
        if bounds[f] or nan_bins[f] != -1 or (ranges is not None and ranges[f] != r0)
    ]
    if 2 * len(used) > n:
        return None
    inner = BinMapper.from_dict(
        {
            "upper_bounds": [bounds[f] for f in used],
            "nan_bins": [nan_bins[f] for f in used],
            "value_ranges": None if ranges is None else [ranges[f] for f in used],
        }
    )
    empty = (np.nan, np.nan) if r0 is None else (float(r0[0]), float(r0[1]))
    return WideBinMapper(inner, np.asarray(used, np.int64), n, empty)


class Spread(Sequence[Any]):
    """A per-feature list over every column of a wide Dataset from the list of its
    binned columns (``used``, sorted): ``default`` at the other columns, built
    on access only, so a model of 2**24 columns does not hold 2**24 objects."""

    def __init__(
        self, items: Sequence[Any], used: npt.NDArray[np.int64], n: int, default: Any
    ) -> None:
        self.items, self.used, self.n, self.default = items, used, n, default

    def __len__(self) -> int:
        return self.n

    @overload
    def __getitem__(self, f: int) -> Any: ...

    @overload
    def __getitem__(self, f: slice) -> list[Any]: ...

    def __getitem__(self, f: int | slice) -> Any:
        if isinstance(f, slice):
            return [self[i] for i in range(*f.indices(self.n))]
        f = int(f) + (self.n if f < 0 else 0)
        if not 0 <= f < self.n:
            raise IndexError(f"feature {f} of {self.n}")
        i = int(np.searchsorted(self.used, f))
        return self.items[i] if i < len(self.used) and self.used[i] == f else self.default


def _spread_array(values: np.ndarray, used: np.ndarray, n: int, fill: float) -> np.ndarray:
    out = np.full((n,) + np.shape(values)[1:], fill, np.asarray(values).dtype)
    out[used] = values
    return out


class WideBinMapper:
    """The bins of every column of a Dataset that binned only some of them
    (``used``, the columns holding values of a wide sparse matrix; see
    dgbdt.data.dataset): ``inner`` (a BinMapper of those) at them, and the bins an
    empty numeric column gets at the others (one bin; value range
    ``empty_range``), so that models speak of the original columns and read
    as those of a Dataset that binned every column.  What is per column is
    made on access (model files, LightGBM's feature_infos), not at training."""

    def __init__(
        self,
        inner: AnyBinMapper,
        used: npt.ArrayLike,
        n_features: int,
        empty_range: tuple[float, ...],
    ) -> None:
        self.inner, self.used, self._n = inner, np.asarray(used, np.int64), int(n_features)
        self.empty_range = empty_range
        self.upper_bounds: Spread = Spread(
            inner.upper_bounds, self.used, self._n, np.array([np.inf])
        )
        self.categories = None  # (a Dataset with categorical features bins every column)

    @property
    def n_features(self) -> int:
        return self._n

    def position(self, feature: int) -> int:
        """The inner (binned) index of column ``feature``, -1 for an empty column."""
        i = int(np.searchsorted(self.used, feature))
        return i if i < len(self.used) and self.used[i] == feature else -1

    def threshold_value(self, feature: int, threshold_bin: int) -> float:
        i = self.position(feature)
        if i < 0:
            return LARGEST  # an empty column's one bin reaches +inf
        return self.inner.threshold_value(i, threshold_bin)

    @cached_property
    def nan_bins(self) -> npt.NDArray[np.int32]:
        return _spread_array(self.inner.nan_bins.astype(np.int32), self.used, self._n, -1)

    @cached_property
    def value_ranges(self) -> npt.NDArray[np.float64] | None:
        if self.inner.value_ranges is None:
            return None
        out = np.empty((self._n, 2), np.float64)
        out[:] = self.empty_range
        out[self.used] = self.inner.value_ranges
        return out

    @cached_property
    def zero_missing(self) -> npt.NDArray[np.bool_] | None:
        zm = self.inner.zero_missing
        return None if zm is None else _spread_array(zm.astype(bool), self.used, self._n, False)

    @property
    def is_categorical(self) -> npt.NDArray[np.bool_]:
        return np.zeros(self._n, bool)

    @property
    def n_bins(self) -> npt.NDArray[np.int64]:
        return _spread_array(self.inner.n_bins, self.used, self._n, 1)

    @property
    def feature_offsets(self) -> npt.NDArray[np.int64]:
        return np.concatenate([[0], np.cumsum(self.n_bins)]).astype(np.int64)

    @property
    def zero_bins(self) -> npt.NDArray[np.int32]:
        return _spread_array(self.inner.zero_bins, self.used, self._n, -1)

    @property
    def missing_bins(self) -> npt.NDArray[np.int32]:
        return _spread_array(self.inner.missing_bins, self.used, self._n, -1)

    @property
    def default_bins(self) -> npt.NDArray[np.int64]:
        return _spread_array(self.inner.default_bins, self.used, self._n, 0)

    @property
    def bin_categories(self) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        return np.zeros(self._n + 1, np.int64), np.zeros(0, np.int64)

    @property
    def bin_dtype(self) -> type[np.unsignedinteger[Any]]:
        return self.inner.bin_dtype

    def to_dict(self) -> dict[str, Any]:
        """The model file's form (version 4): the binned columns' bins as
        BinMapper.to_dict gives them, ``used``, and ``empty_range`` for every
        other column (an empty numeric one); nothing per column of the width."""
        lo, hi = self.empty_range
        d = self.inner.to_dict()
        d["used"] = self.used.tolist()
        d["empty_range"] = None if np.isnan(lo) else np.clip([lo, hi], -LARGEST, LARGEST).tolist()
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], n_features: int) -> WideBinMapper:
        """Inverse of to_dict (fields checked by dgbdt.models.json_file)."""
        inner = BinMapper.from_dict(
            {k: d.get(k) for k in ("upper_bounds", "nan_bins", "value_ranges")}
        )
        r = d.get("empty_range")
        empty = (np.nan, np.nan) if r is None else tuple(float(v) for v in r)
        empty = tuple(v * np.inf if abs(v) >= LARGEST else v for v in empty)
        return cls(inner, np.asarray(d["used"], np.int64), n_features, empty)


#: Either kind of bin mapper (what a Dataset and a model hold).
AnyBinMapper: TypeAlias = "BinMapper | WideBinMapper"


def sample_rows(
    n_samples: int, sample_cnt: int, seed: int, row_offset: int = 0, n_total: int | None = None
) -> npt.NDArray[np.intp] | None:
    """Local rows used to find bin boundaries: all rows, or each row with
    probability sample_cnt / n_total, decided by a hash of (seed, global row).

    ``row_offset`` is the global index of this rank's first row and
    ``n_total`` the global row count, so the sample is the same rows however
    they are spread over ranks.
    """
    n_total = n_samples if n_total is None else n_total
    if n_total <= sample_cnt:
        return None
    draws = np.empty(n_samples, dtype=np.float64)
    uniform_fill(seed, STREAM_BIN_SAMPLE, row_offset, draws)
    return np.flatnonzero(draws < sample_cnt / n_total)


def bounds_from_values(
    values: npt.ArrayLike, n_implicit_zeros: int, max_bin: int, min_data_in_bin: int
) -> npt.NDArray[np.float64]:
    """Upper bounds of one feature from its sampled values (NaN removed).

    ``n_implicit_zeros`` rows hold 0.0 without being in ``values`` (the absent
    entries of a sparse column), so a sparse column and its dense twin give
    the same bounds.  The rule is LightGBM's (see native.binning): zero keeps
    its own bin, and ``max_bin`` counts value bins only (the caller takes the
    NaN bin off).
    """
    values = np.sort(np.asarray(values, dtype=np.float64))
    distinct = np.empty(len(values) + 1, np.float64)
    counts = np.empty(len(values) + 1, np.int64)
    n = distinct_counts(values, n_implicit_zeros, distinct, counts)
    out = np.empty(max(max_bin, 1) + 1, dtype=np.float64)
    n = find_bin_upper_bounds(distinct[:n], counts[:n], max_bin, min_data_in_bin, out)
    return out[:n].copy()


def value_range(values: np.ndarray, n_implicit_zeros: int) -> tuple[float, float]:
    """(smallest, largest) of a feature's sampled values (NaN removed) and its
    implicit zeros; (NaN, NaN) for none."""
    lo = float(values.min()) if len(values) else np.inf
    hi = float(values.max()) if len(values) else -np.inf
    if n_implicit_zeros:
        lo, hi = min(lo, 0.0), max(hi, 0.0)
    return (lo, hi) if lo <= hi else (np.nan, np.nan)


def sampled_values(
    col: RawColumn,
    n_samples: int,
    sample: np.ndarray | None,
    use_missing: bool = True,
    categorical: bool = False,
    mask: npt.NDArray[np.bool_] | None = None,
) -> Sampled:
    """(values, n_implicit_zeros, has_nan) of one feature on this rank: its
    non-NaN values on the ``sample`` rows (None: all), how many of those rows
    hold an implicit 0.0, and whether the whole column holds NaN.

    ``col`` is a dense float64 column or a sparse ``(values, row_indices)``
    pair (absent rows are 0.0).  ``use_missing=False`` (LightGBM's): NaN
    counts as 0.0 and there is no NaN bin (map_to_bins then bins NaN with 0.0).
    ``categorical``: NaN is kept, as -1.0 (a missing category, like negative
    values; see category_bounds).  ``mask``: optional, ``sample`` as a boolean
    mask over the rows, for the many sparse columns of a wide matrix
    (np.isin per column costs the sample's size each: 2 s for 4,000 columns).
    """
    if isinstance(col, tuple):
        values, rows = col
        if sample is not None:
            keep = mask[rows] if mask is not None else np.isin(rows, sample, assume_unique=True)
            values, n_rows_sampled = values[keep], len(sample)
        else:
            n_rows_sampled = n_samples
        n_implicit_zeros = n_rows_sampled - len(values)
        has_nan = bool(np.isnan(col[0]).any())
    else:
        values = col if sample is None else col[sample]
        n_implicit_zeros = 0
        has_nan = bool(np.isnan(col).any())
    nan = np.isnan(values)
    if categorical:
        return np.where(nan, -1.0, values), n_implicit_zeros, False
    if not use_missing:
        n_implicit_zeros += int(nan.sum())
        has_nan = False
    return values[~nan], n_implicit_zeros, has_nan


def gather_samples(samples: Sequence[Sampled], comm: SerialComm) -> list[Sampled]:
    """Every rank's ``sampled_values`` of the same features joined into the
    global ones (values in rank order, counts summed, NaN from any rank): one
    allgather of the sizes and one allgatherv of the values for all of them,
    not collectives per feature."""
    meta = np.array([[len(v), nz, has_nan] for v, nz, has_nan in samples], np.int64)
    meta = comm.stack(meta.reshape(-1, 3), np.int64)  # (ranks, features, 3)
    joined = comm.concat(np.concatenate([v for v, _, _ in samples] + [np.empty(0)]))
    ends = np.cumsum(meta[:, :, 0].reshape(-1)).reshape(meta.shape[:2])
    starts = ends - meta[:, :, 0]
    return [
        (
            np.concatenate([joined[starts[r, f] : ends[r, f]] for r in range(len(meta))]),
            int(meta[:, f, 1].sum()),
            bool(meta[:, f, 2].any()),
        )
        for f in range(len(samples))
    ]


def bounds_of(
    values: npt.NDArray[np.float64],
    n_implicit_zeros: int,
    has_nan: bool,
    max_bin: int,
    min_data_in_bin: int,
) -> Bounds:
    """Upper bounds, NaN bin (-1: none) and value range of one feature from
    its (global) ``sampled_values``."""
    # NaN takes one of the max_bin bins, as in LightGBM (missing_type NaN:
    # max_bin - 1 value bins; with max_bin = 2 that leaves one).
    ub = bounds_from_values(values, n_implicit_zeros, max(1, max_bin - has_nan), min_data_in_bin)
    return ub, (len(ub) if has_nan else -1), value_range(values, n_implicit_zeros)


def category_bounds(
    values: npt.NDArray[np.float64], n_implicit_zeros: int, max_bin: int, min_data_in_bin: int
) -> tuple[npt.NDArray[np.float64], int, tuple[float, float], npt.NDArray[np.int64]]:
    """(placeholder upper bounds, no NaN bin, value range, categories) of a
    categorical feature from its (global) sampled values, negative ones
    missing (see category_bins)."""
    missing = values < 0
    present = values[~missing]
    cats = category_bins(present, n_implicit_zeros, int(missing.sum()), max_bin, min_data_in_bin)
    return placeholder_bounds(len(cats) + 1), -1, value_range(present, n_implicit_zeros), cats


def feature_bounds(
    col: RawColumn,
    n_samples: int,
    sample: np.ndarray | None,
    max_bin: int,
    min_data_in_bin: int,
    comm: SerialComm | None = None,
    use_missing: bool = True,
) -> Bounds:
    """``bounds_of`` one feature (see ``sampled_values`` for the arguments).

    With a ``comm`` of several ranks, the sampled values of every rank are
    gathered first: the bounds depend only on the set of sampled values, so
    they equal the single-process ones for any number of ranks.
    """
    found = sampled_values(col, n_samples, sample, use_missing)
    if comm is not None and comm.size > 1:
        found = gather_samples([found], comm)[0]
    return bounds_of(*found, max_bin, min_data_in_bin)


def find_bin_mapper(
    columns: Iterable[RawColumn],
    n_samples: int,
    max_bin: int,
    min_data_in_bin: int,
    sample_cnt: int,
    seed: int,
    use_missing: bool = True,
) -> BinMapper:
    """Bin mapper from a column source (see ``feature_bounds`` for the columns)."""
    sample = sample_rows(n_samples, sample_cnt, seed)
    found = [
        feature_bounds(col, n_samples, sample, max_bin, min_data_in_bin, use_missing=use_missing)
        for col in columns
    ]
    return BinMapper(
        [ub for ub, _, _ in found],
        np.asarray([nb for _, nb, _ in found], dtype=np.int32),
        np.array([r for _, _, r in found], np.float64).reshape(-1, 2),
    )


def bin_column(
    col: RawColumn, upper_bounds: npt.NDArray[np.float64], nan_bin: int, out: np.ndarray
) -> None:
    """Bin one dense column or sparse (values, rows) pair into ``out``."""
    if isinstance(col, tuple):
        values, rows = col
        map_sparse_to_bins(values, rows, upper_bounds, nan_bin, out)
    else:
        map_to_bins(col, upper_bounds, nan_bin, out)


def zero_bin(upper_bounds: npt.NDArray[np.float64]) -> int:
    """The bin of 0.0 (the first bin whose upper bound is >= 0)."""
    return int(np.searchsorted(upper_bounds, 0.0))


def category_bin(categories: npt.NDArray[np.int64], value: float) -> int:
    """The bin of one category value in a categorical feature (0: not kept)."""
    hits = np.flatnonzero(categories == value)
    return int(hits[0]) + 1 if len(hits) else 0


def placeholder_bounds(n_bins: int) -> npt.NDArray[np.float64]:
    """upper_bounds of a categorical feature of ``n_bins`` bins: one per bin,
    finite but the last (they place no value; see BinMapper.categories)."""
    return np.append(np.arange(n_bins - 1, dtype=np.float64) + 0.5, np.inf)


def category_bins(
    values: npt.NDArray[np.float64],
    n_implicit_zeros: int,
    n_missing: int,
    max_bin: int,
    min_data_in_bin: int,
) -> npt.NDArray[np.int64]:
    """The categories of a categorical feature's bins 1, 2, ... from its
    sampled values (non-negative integers; NaN and negative ones counted in
    ``n_missing``), LightGBM's rule (BinMapper::FindBin, categorical): most
    frequent first (ties: the smaller value), kept while they cover under 99%
    of the non-missing sample or the bins number fewer than
    min(distinct values + 1 if any is missing, max_bin), stopping at a category
    with fewer than ``min_data_in_bin`` rows (from the third on).  One
    departure: never more than ``max_bin`` bins (LightGBM keeps adding rare
    categories past max_bin until 99% are covered)."""
    distinct = np.empty(len(values) + 1, np.float64)
    counts = np.empty(len(values) + 1, np.int64)
    n = distinct_counts(np.sort(values), n_implicit_zeros, distinct, counts)
    distinct, counts = distinct[:n].astype(np.int64), counts[:n]
    order = np.argsort(-counts, kind="stable")  # distinct is ascending: ties keep it
    distinct, counts = distinct[order], counts[order]
    total = int(counts.sum())
    # LightGBM: RoundInt(rest * 0.99f), in float32
    cut = int(np.float32(total) * np.float32(0.99) + np.float32(0.5))
    cap = min(len(distinct) + (n_missing > 0), max_bin)
    kept, used = 0, 0
    while kept < len(distinct) and (kept + 1 < cap or (used < cut and kept + 1 < max_bin)):
        if counts[kept] < min_data_in_bin and kept > 1:
            break
        used += int(counts[kept])
        kept += 1
    return distinct[:kept].copy()


# -- serialisation (dgbdt.data.binary_file) ------------------------------------------
#: Most bins one feature may have (uint16 bins).
MAX_FEATURE_BINS = 1 << 16


def mapper_arrays(mapper: AnyBinMapper) -> dict[str, np.ndarray]:
    """The arrays that describe ``mapper`` (ragged lists flattened with offsets;
    flags as uint8), for :func:`mapper_from_arrays`."""
    n = mapper.n_features
    bounds = [np.asarray(ub, np.float64) for ub in mapper.upper_bounds]
    out: dict[str, np.ndarray] = {
        "bound_offsets": _offsets_of(bounds),
        "upper_bounds": np.concatenate(bounds + [np.zeros(0)]),
        "nan_bins": np.asarray(mapper.nan_bins, np.int32),
    }
    if mapper.value_ranges is not None:
        out["value_ranges"] = np.asarray(mapper.value_ranges, np.float64).reshape(n, 2)
    if mapper.zero_missing is not None:
        out["zero_missing"] = np.asarray(mapper.zero_missing, bool).astype(np.uint8)
    if mapper.categories is not None:
        cats = [
            np.zeros(0, np.int64) if c is None else np.asarray(c, np.int64)
            for c in mapper.categories
        ]
        out["categorical"] = mapper.is_categorical.astype(np.uint8)
        out["category_offsets"] = _offsets_of(cats)
        out["categories"] = np.concatenate(cats + [np.zeros(0, np.int64)])
    return out


def _offsets_of(parts: Sequence[Sized]) -> npt.NDArray[np.int64]:
    return np.concatenate([[0], np.cumsum([len(p) for p in parts])]).astype(np.int64)


def check_offsets(offsets: np.ndarray, total: int, name: str, strict: bool = False) -> None:
    """A ValueError unless ``offsets`` start at 0, never decrease (``strict``:
    always increase) and end at ``total``."""
    steps = np.diff(offsets)
    if len(offsets) == 0 or offsets[0] != 0 or offsets[-1] != total or np.any(steps < strict):
        raise ValueError(
            f"{name} must rise from 0 to {total}" + (" (every part non-empty)" if strict else "")
        )


def check_flags(values: np.ndarray, name: str) -> npt.NDArray[np.bool_]:
    """uint8 flags as bool; a ValueError for anything but 0 and 1."""
    if np.any(values > 1):
        raise ValueError(f"{name} must hold 0 or 1 only")
    return values.astype(bool)


def mapper_from_arrays(arrays: Mapping[str, np.ndarray]) -> BinMapper:
    """The BinMapper of :func:`mapper_arrays`' arrays (dtypes and shapes already
    checked), every field checked: a ValueError naming the first bad one."""
    offsets, bounds = arrays["bound_offsets"], arrays["upper_bounds"]
    check_offsets(offsets, len(bounds), "bound_offsets", strict=True)
    n = len(offsets) - 1
    ubs = [bounds[offsets[f] : offsets[f + 1]] for f in range(n)]
    nan_bins = arrays["nan_bins"]
    if nan_bins.shape != (n,):
        raise ValueError(f"nan_bins has shape {nan_bins.shape}, expected ({n},)")
    for f, ub in enumerate(ubs):
        _check_bounds(f, ub, int(nan_bins[f]))
    ranges = arrays.get("value_ranges")
    if ranges is not None:
        _check_ranges(ranges, n)
    zero_missing = arrays.get("zero_missing")
    if zero_missing is not None:
        if zero_missing.shape != (n,):
            raise ValueError(f"zero_missing has shape {zero_missing.shape}, expected ({n},)")
        zero_missing = check_flags(zero_missing, "zero_missing")
    cats = _categories_from_arrays(arrays, ubs, nan_bins)
    return BinMapper(ubs, nan_bins.astype(np.int32), ranges, zero_missing, cats)


def _check_bounds(f: int, ub: npt.NDArray[np.float64], nan_bin: int) -> None:
    # LightGBM's bounds may end with +inf twice (see BinMapper.upper_bounds)
    rising = ub[:-1] if len(ub) > 1 and ub[-2] == np.inf else ub
    if np.isnan(ub).any() or ub[-1] != np.inf or np.any(np.diff(rising) <= 0):
        raise ValueError(
            f"upper_bounds of feature {f} must rise strictly to +inf (no NaN; +inf may "
            f"repeat once at the end), got {ub[:8]}"
        )
    if nan_bin not in (-1, len(ub)):
        raise ValueError(f"nan_bins[{f}] is {nan_bin}: -1 or {len(ub)} (after the value bins)")
    if len(ub) + (nan_bin >= 0) > MAX_FEATURE_BINS:
        raise ValueError(f"feature {f} has more than {MAX_FEATURE_BINS} bins")


def _check_ranges(ranges: npt.NDArray[np.float64], n: int) -> None:
    if ranges.shape != (n, 2):
        raise ValueError(f"value_ranges has shape {ranges.shape}, expected ({n}, 2)")
    nan = np.isnan(ranges)
    bad = (nan[:, 0] != nan[:, 1]) | (ranges[:, 0] > ranges[:, 1])  # NaN compares False
    if bad.any():
        f = int(np.flatnonzero(bad)[0])
        raise ValueError(f"value_ranges[{f}] = {ranges[f].tolist()}: [smallest, largest] or NaN")


def _categories_from_arrays(
    arrays: Mapping[str, np.ndarray],
    ubs: Sequence[npt.NDArray[np.float64]],
    nan_bins: npt.NDArray[np.int32],
) -> list[npt.NDArray[np.int64] | None] | None:
    """The categories of every feature (None: no feature is categorical)."""
    names = ("categorical", "category_offsets", "categories")
    given = [arrays.get(k) for k in names]
    if all(g is None for g in given):
        return None
    if any(g is None for g in given):
        raise ValueError("categorical, category_offsets and categories come together")
    flags, offsets, values = given
    assert flags is not None and offsets is not None and values is not None  # (checked above)
    n = len(ubs)
    if flags.shape != (n,):
        raise ValueError(f"categorical has shape {flags.shape}, expected ({n},)")
    is_cat = check_flags(flags, "categorical")
    if offsets.shape != (n + 1,):
        raise ValueError(f"category_offsets has shape {offsets.shape}, expected ({n + 1},)")
    check_offsets(offsets, len(values), "category_offsets")
    cats: list[npt.NDArray[np.int64] | None] = []
    for f in range(n):
        c = values[offsets[f] : offsets[f + 1]]
        if not is_cat[f]:
            if len(c):
                raise ValueError(f"feature {f} is not categorical but has categories")
            cats.append(None)
            continue
        if np.any(c < 0) or np.any(c >= 2**31) or len(np.unique(c)) != len(c):
            raise ValueError(f"categories of feature {f} must be distinct ints in [0, 2**31)")
        if nan_bins[f] != -1 or not np.array_equal(ubs[f], placeholder_bounds(len(c) + 1)):
            raise ValueError(f"feature {f} is categorical: its bounds must be placeholders")
        cats.append(c.astype(np.int64))
    return cats


def same_mapper(a: AnyBinMapper | None, b: AnyBinMapper | None) -> bool:
    """Whether two mappers bin every value alike (and describe the same features)."""
    if a is b:
        return True
    if a is None or b is None or a.n_features != b.n_features:
        return False
    fa, fb = mapper_arrays(a), mapper_arrays(b)
    return fa.keys() == fb.keys() and all(
        np.array_equal(fa[k], fb[k], equal_nan=fa[k].dtype.kind == "f") for k in fa
    )
