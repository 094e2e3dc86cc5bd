"""A Dataset's bin store: its features' bins kept dense, in EFB bundles or sparse.

Binning gives every feature a bin per row; how those bins are *kept* is this
module's choice, and nothing above it (splits, models, importance) sees it
(native/store.py draws the layout):

* a feature of its own dense column (most data: ``plain`` when every feature
  is, and the binned matrix is then exactly the (n_samples, n_features) one of
  the dense kernels);
* a feature in an EFB bundle: features never off their most frequent bin in
  the same row share one dense column (Ke et al., NeurIPS 2017, section 4),
  chosen greedily from global counts and checked on every row (lossless;
  LightGBM tolerates a few conflicts and loses those values);
* a feature of the sparse part: only its rows off the most frequent bin are
  kept, as a row-wise CSR of histogram bins.

Like LightGBM's ``FindGroups``, bundling runs first and bundles (or single
features) off their most frequent bins in fewer than ``DENSE_RATE`` of the
rows go to the sparse part.  Every choice is made from global quantities
(counts over every rank's rows), so it is the same on any number of ranks.
Memory is the dense columns (one or two bytes per row) plus 4 bytes per kept
sparse entry, never n_samples x n_features.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import numpy.typing as npt

from ..native.common import (
    ENTRY_DTYPE,
    FEATURE_MAP_SIZE,
    FM_COL,
    FM_DEFAULT,
    FM_LO,
    FM_SKIP,
    FM_WIDTH,
    bin_dtype_for,
)
from ..native.store import add_tree_stored, decode_feature, find_bundles

if TYPE_CHECKING:
    from ..distributed.comm import SerialComm
    from ..models.tree import Tree
    from .binning import AnyBinMapper

# LightGBM's thresholds: a bin holding 70% of the rows is "most frequent"
# (kSparseThreshold, src/io/bin.cpp); a group off its most frequent bins in
# fewer than 40% of the rows is kept sparse (dense_threshold, src/io/dataset.cpp).
MOST_FREQUENT_SHARE = 0.7
DENSE_RATE = 0.4
# Bundles searched per feature (LightGBM: max_search_group = 100).
BUNDLE_WINDOW = 64


@dataclass
class Column:
    """One feature's bins while a store is built: ``dense`` (one per row), or the
    rows and bins of its entries off ``fill`` (the bin every other row has)."""

    n: int
    dense: np.ndarray | None = None
    rows: np.ndarray | None = None
    bins: np.ndarray | None = None
    fill: int = 0

    def counts(self, n_bins: int) -> npt.NDArray[np.intp]:
        if self.dense is not None:
            return np.bincount(self.dense, minlength=n_bins)
        assert self.rows is not None and self.bins is not None  # sparse: rows and bins given
        c = np.bincount(self.bins, minlength=n_bins)
        c[self.fill] += self.n - len(self.rows)
        return c

    def full(self) -> np.ndarray:
        """Every row's bin."""
        if self.dense is not None:
            return self.dense
        assert self.rows is not None and self.bins is not None  # sparse: rows and bins given
        out = np.full(self.n, self.fill, np.uint16)
        out[self.rows] = self.bins
        return out

    def off(self, default: int) -> tuple[np.ndarray, np.ndarray]:
        """(rows, bins) of the rows whose bin is not ``default``."""
        if self.dense is not None:
            rows = np.flatnonzero(self.dense != default)
            return rows, self.dense[rows]
        if default != self.fill:  # only when 70% of the rows are one stored bin
            full = self.full()
            rows = np.flatnonzero(full != default)
            return rows, full[rows]
        assert self.rows is not None and self.bins is not None  # sparse: rows and bins given
        keep = self.bins != default
        return self.rows[keep], self.bins[keep]


def splittable_features(
    counts: npt.NDArray[np.int64],
    offsets: npt.NDArray[np.int64],
    min_data_in_leaf: int,
    pre_filter: bool,
) -> npt.NDArray[np.bool_]:
    """bool per feature: more than one bin and, with ``pre_filter``, a threshold
    leaving ``min_data_in_leaf`` rows on both sides of "bins up to t | the rest"
    (LightGBM's ``feature_pre_filter``: its NeedFilter, src/io/bin.cpp, on global
    counts).  As in LightGBM, that is the test: a feature it drops could still
    split "low bins and NaN | high bins" in rare cases, or pass the hessian-based
    count estimates; training leaves the dropped features out."""
    n_bins = np.diff(offsets)
    ok = n_bins > 1
    if not pre_filter or not len(n_bins):
        return ok
    starts = offsets[:-1]
    cum = np.cumsum(counts)
    before = np.concatenate([[0], cum])[starts]
    total = np.add.reduceat(counts, starts)
    left = cum - np.repeat(before, n_bins)
    right = np.repeat(total, n_bins) - left
    good = (left >= min_data_in_leaf) & (right >= min_data_in_leaf)
    good[offsets[1:] - 1] = False  # the last bin leaves nothing on the right
    return ok & np.logical_or.reduceat(good, starts)


def most_frequent_bins(
    counts: npt.NDArray[np.int64], offsets: npt.NDArray[np.int64], zero_bins: np.ndarray
) -> npt.NDArray[np.int32]:
    """LightGBM's ``most_freq_bin`` per feature: the most frequent bin when it holds
    at least 70% of the rows, else the bin of 0.0 (src/io/bin.cpp); the first of
    equal counts (its ArgMax).  ``counts``: global, flat over features."""
    starts = offsets[:-1]
    segment = np.repeat(np.arange(len(starts)), np.diff(offsets))
    top = np.maximum.reduceat(counts, starts) if len(starts) else np.zeros(0, np.int64)
    at = np.where(counts == top[segment], np.arange(len(counts)), len(counts))
    first = np.minimum.reduceat(at, starts) - starts if len(starts) else top
    total = np.add.reduceat(counts, starts) if len(starts) else top
    dominant = (total > 0) & (top >= MOST_FREQUENT_SHARE * total)
    return np.where(dominant, first, zero_bins).astype(np.int32)


class BinStore:
    """Where every feature's bins are (see the module docstring).

    Attributes
    ----------
    dense : uint8|uint16[n_samples, n_cols], C ("row" layout) or F order
    indptr, entries : the sparse part (int64[n_samples + 1], uint32[nnz])
    feature_map : int64[n_features, FEATURE_MAP_SIZE] (native.common FM_*)
    col_start, col_map : group bin -> histogram bin of each dense column
    most_freq_bins : int32[n_features]; recovered : uint8[n_features] (the most
        frequent bin is not stored: the split scan recomputes it)
    plain : every feature its own dense column, in feature order
    bundles : list of the features of each multi-feature bundle
    counts : int64 rows per bin over every rank, laid out by ``bin_offsets``
        (the bin mapper's offsets; None: not counted)
    kept : bool[n_features] the features stored (feature_pre_filter drops the
        others, which then take no histogram bins in ``feature_offsets``)
    columns : int64[n_features] the original column of each feature, sorted, for
        a wide Dataset that binned only the columns holding values (trees speak
        of columns: add_tree maps them); None: feature f is column f
    """

    # Set once the columns are known (plain_store, _fill_dense, _map_columns).
    dense: np.ndarray
    col_start: npt.NDArray[np.int64]
    col_map: npt.NDArray[np.int64]

    def __init__(
        self,
        n_samples: int,
        feature_offsets: npt.NDArray[np.int64],
        most_freq_bins: npt.NDArray[np.int32],
        layout: str,
    ) -> None:
        self.n_samples = n_samples
        self.feature_offsets = feature_offsets
        self.most_freq_bins = most_freq_bins
        self.layout = layout
        n_features = len(feature_offsets) - 1
        self.feature_map = np.zeros((n_features, FEATURE_MAP_SIZE), np.int64)
        self.recovered = np.zeros(n_features, np.uint8)
        self.indptr = np.zeros(n_samples + 1, np.int64)
        self.entries = np.zeros(0, ENTRY_DTYPE)
        self.bundles: list[list[int]] = []
        self.plain = True
        self.counts: npt.NDArray[np.int64] | None = None
        self.bin_offsets = feature_offsets
        self.kept = np.ones(n_features, bool)
        self.columns: npt.NDArray[np.int64] | None = None
        # The category of each bin of the categorical features (BinMapper.bin_categories)
        self.bin_categories = (np.zeros(n_features + 1, np.int64), np.zeros(0, np.int64))

    @property
    def n_features(self) -> int:
        return len(self.feature_offsets) - 1

    @property
    def n_sparse(self) -> int:
        """Features kept in the sparse part."""
        return int(((self.feature_map[:, FM_COL] < 0) & self.kept).sum())

    def nbytes(self) -> int:
        return self.dense.nbytes + self.indptr.nbytes + self.entries.nbytes

    def describe(self) -> str:
        """One line for logs and benchmarks."""
        return (
            f"{self.dense.shape[1]} dense columns ({len(self.bundles)} bundles of "
            f"{sum(map(len, self.bundles))} features), {self.n_sparse} sparse features "
            f"with {len(self.entries)} entries, {int((~self.kept).sum())} features left "
            f"out (feature_pre_filter), {self.nbytes() / 2**20:.1f} MiB"
        )

    def decoder(self, feature: int) -> tuple[np.ndarray, int, int, int, int] | None:
        """(store column, lo, width, skip, default) of a feature in a dense
        column, which native.partition decodes row by row; None for one of the
        sparse part (decoded into a column first: bins_of)."""
        m = self.feature_map[feature]
        if m[FM_COL] < 0:
            return None
        lo, width, skip, default = (int(m[k]) for k in (FM_LO, FM_WIDTH, FM_SKIP, FM_DEFAULT))
        return self.dense[:, int(m[FM_COL])], lo, width, skip, default

    def bins_of(self, feature: int, rows: np.ndarray, out: np.ndarray) -> np.ndarray:
        """out[rows] = the bins of ``feature`` at ``rows`` (uint16[n_samples])."""
        decode_feature(
            self.dense,
            self.indptr,
            self.entries,
            self.feature_map,
            self.feature_offsets,
            int(feature),
            rows,
            out,
        )
        return out

    def column(self, feature: int) -> np.ndarray:
        """The bins of ``feature`` at every row."""
        if self.plain:
            return self.dense[:, feature]
        out = np.empty(self.n_samples, np.uint16)
        return self.bins_of(feature, np.arange(self.n_samples, dtype=np.uint32), out)

    def features_of(self, columns: npt.ArrayLike) -> np.ndarray:
        """The features of a tree's split ``columns`` (int32); a ValueError for a
        column this wide store did not bin (it holds no value here)."""
        columns = np.asarray(columns)
        if self.columns is None:
            return columns
        pos = np.minimum(np.searchsorted(self.columns, columns), len(self.columns) - 1)
        bad = self.columns[pos] != columns if len(self.columns) else columns == columns
        if np.any(bad):
            raise ValueError(
                f"the model splits on column(s) {np.unique(columns[bad]).tolist()[:10]}, "
                "which hold no value in this Dataset (it bins only the columns that do)"
            )
        return pos.astype(columns.dtype)

    def check_stored(self, features: np.ndarray) -> None:
        """A ValueError when one of ``features`` (a tree's splits) is not stored."""
        missing = np.unique(np.asarray(features)[~self.kept[features]])
        if len(missing):
            raise ValueError(
                f"the model splits on feature(s) {missing.tolist()[:10]}, which this "
                "Dataset does not store (feature_pre_filter left them out: they cannot "
                "split with its min_data_in_leaf); create the Dataset with "
                "feature_pre_filter=false, or keep its raw data (free_raw_data=False)"
            )

    def add_tree(self, tree: Tree, nan_bins: np.ndarray, scores: np.ndarray) -> None:
        """scores += the tree's leaf value for every row."""
        features = self.features_of(tree.split_feature)
        self.check_stored(features)
        add_tree_stored(
            self.dense,
            self.indptr,
            self.entries,
            self.feature_map,
            self.feature_offsets,
            nan_bins,
            features,
            tree.threshold_bin,
            tree.default_left,
            tree.left_child,
            tree.right_child,
            tree.leaf_value,
            scores,
            (tree.cat_boundaries, tree.cat_threshold, *self.bin_categories),
        )


def plain_store(
    binned: np.ndarray,
    feature_offsets: npt.NDArray[np.int64],
    most_freq_bins: npt.NDArray[np.int32],
    layout: str,
) -> BinStore:
    """A store of one dense column per feature: ``binned`` as it is."""
    store = BinStore(binned.shape[0], feature_offsets, most_freq_bins, layout)
    store.dense = binned
    _map_columns(store, [[f] for f in range(store.n_features)])
    return store


def build_store(
    columns: Sequence[Column],
    n_total: int,
    feature_offsets: npt.NDArray[np.int64],
    zero_bins: np.ndarray,
    layout: str,
    options: tuple[bool, bool, int | None],
    *,
    n_samples: int,
    comm: SerialComm | None = None,
    offset: int = 0,
    binned: np.ndarray | None = None,
    wide_columns: npt.NDArray[np.int64] | None = None,
) -> BinStore:
    """A store of ``columns`` (a Column per feature, this rank's rows).

    ``binned``: the (n_samples, n_features) matrix the dense columns are
    views of, kept as it is when every feature stays a column of its own.

    ``options``: (enable_bundle, is_enable_sparse, pre_filter), ``pre_filter``
    the min_data_in_leaf of LightGBM's feature_pre_filter or None: features
    that cannot split are not stored, and take no histogram bins
    (``feature_offsets`` of the store give them none).  ``comm`` (row-sharded
    training, else None) sums the counts and gathers the non-default rows of
    the bundling candidates, whose global rows start at ``offset`` here.
    ``wide_columns``: the original columns of a wide Dataset's features
    (BinStore.columns); such a store is never ``plain`` (the plain kernels would read
    trees' columns as features).
    """
    enable_bundle, enable_sparse, pre_filter = options
    n_bins = np.diff(feature_offsets)
    counts = _global_counts(columns, n_bins, comm)
    mfb = most_frequent_bins(counts, feature_offsets, zero_bins)
    kept = np.ones(len(columns), bool)
    if pre_filter is not None:
        kept = splittable_features(counts, feature_offsets, pre_filter, True)
    hist_offsets = np.concatenate([[0], np.cumsum(np.where(kept, n_bins, 0))]).astype(np.int64)
    off_rows = n_total - counts[feature_offsets[:-1] + mfb]
    groups = _groups(
        columns, off_rows, n_bins, mfb, n_total, enable_bundle, kept, comm=comm, offset=offset
    )
    store = _store_of_groups(
        columns,
        groups,
        (off_rows, n_total) if enable_sparse else None,
        (n_bins, mfb, feature_offsets, hist_offsets),
        (n_samples, layout),
        binned=binned,
        wide=wide_columns is not None,
    )
    store.counts, store.bin_offsets, store.kept = counts, feature_offsets, kept
    store.columns = wide_columns
    return store


def _store_of_groups(
    columns: Sequence[Column],
    groups: list[list[int]],
    off_rows: tuple[npt.NDArray[np.int64], int] | None,
    bins: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    shape: tuple[int, str],
    *,
    binned: np.ndarray | None,
    wide: bool,
) -> BinStore:
    """The BinStore of the feature ``groups`` (bundles): a group whose rows off
    their default bins are rarer than DENSE_RATE is stored sparse (``off_rows``:
    (rows off the default bin per feature, all rows), None when sparse storage
    is off), the rest dense; plain (``binned`` as it is) when every feature is
    a dense group of its own and the Dataset is not wide."""
    n_bins, mfb, feature_offsets, hist_offsets = bins
    n_samples, layout = shape
    dense_groups: list[list[int]] = []
    sparse: list[list[int]] = []
    for g in groups:
        rare = off_rows is not None and off_rows[0][g].sum() / max(off_rows[1], 1) < DENSE_RATE
        (sparse if rare else dense_groups).append(g)
    dense_groups.sort(key=lambda g: g[0])
    if (
        not wide
        and len(dense_groups) == len(columns)
        and all(len(g) == 1 and g[0] == f for f, g in enumerate(dense_groups))
    ):
        if binned is None:
            binned = _plain_matrix(
                columns, n_samples, layout, bin_dtype_for(int(n_bins.max(initial=1)))
            )
        return plain_store(binned, feature_offsets, mfb, layout)
    store = BinStore(n_samples, hist_offsets, mfb, layout)
    store.plain = False
    store.feature_map[:, FM_DEFAULT] = mfb  # and FM_COL -1: not stored
    store.feature_map[:, FM_COL] = -1
    _fill_dense(store, columns, dense_groups)
    _fill_sparse(store, columns, sorted(f for g in sparse for f in g))
    return store


def _global_counts(
    columns: Sequence[Column], n_bins: np.ndarray, comm: SerialComm | None
) -> npt.NDArray[np.int64]:
    """int64 rows per bin of every feature, flat, over every rank."""
    counts = np.concatenate(
        [c.counts(int(nb)) for c, nb in zip(columns, n_bins, strict=True)]
        or [np.zeros(0, np.int64)]
    ).astype(np.int64)
    return comm.total_int(counts) if comm is not None and comm.size > 1 else counts


def _plain_matrix(
    columns: Sequence[Column], n_samples: int, layout: str, dtype: npt.DTypeLike
) -> np.ndarray:
    order: Literal["C", "F"] = "C" if layout == "row" else "F"
    out = np.empty((n_samples, len(columns)), dtype, order=order)
    for f, c in enumerate(columns):
        out[:, f] = c.full()
    return out


def _groups(
    columns: Sequence[Column],
    off_rows: npt.NDArray[np.int64],
    n_bins: np.ndarray,
    mfb: npt.NDArray[np.int32],
    n_total: int,
    enable_bundle: bool,
    kept: npt.NDArray[np.bool_],
    *,
    comm: SerialComm | None,
    offset: int,
) -> list[list[int]]:
    """Lists of the ``kept`` features that share a dense column (a list of one:
    alone)."""
    n_features = len(columns)
    candidates = np.flatnonzero(kept & (off_rows <= n_total // 2))
    if not enable_bundle:
        candidates = candidates[:0]
    group_of = np.full(n_features, -1, np.int64)
    if len(candidates) > 1:
        row_ptr, rows = _off_rows(columns, candidates, mfb, comm, offset, n_features)
        # Most non-default rows first, then by index (a stable sort).
        order = candidates[np.argsort(-off_rows[candidates], kind="stable")]
        widths = (n_bins - 1).astype(np.int64)
        max_width = 1 << 16  # uint16 group bins (LightGBM: no cap on CPU)
        find_bundles(order, row_ptr, rows, widths, n_total, max_width, BUNDLE_WINDOW, group_of)
    groups: dict[tuple[str, Any], list[int]] = {}
    for f in np.flatnonzero(kept):
        key = ("b", int(group_of[f])) if group_of[f] >= 0 else ("f", f)
        groups.setdefault(key, []).append(int(f))
    return list(groups.values())


def _off_rows(
    columns: Sequence[Column],
    candidates: np.ndarray,
    mfb: npt.NDArray[np.int32],
    comm: SerialComm | None,
    offset: int,
    n_features: int,
) -> tuple[npt.NDArray[np.int64], np.ndarray]:
    """(row_ptr int64[n_features + 1], global rows) of the candidates' rows off
    their most frequent bin, over every rank (rows ascending per feature)."""
    parts = [columns[f].off(mfb[f])[0] for f in candidates]
    local_counts = np.zeros(n_features, np.int64)
    local_counts[candidates] = [len(p) for p in parts]
    rows = np.concatenate(parts or [np.zeros(0, np.int64)]).astype(np.int64) + offset
    if comm is not None and comm.size > 1:
        counts_by_rank = comm.stack(local_counts).astype(np.int64)  # (n_ranks, n_features)
        rows_all = comm.concat(rows, np.int64)
        # Rank r's rows come as its features in order: regroup by feature, ranks
        # in order (their row ranges ascend).
        feature_of = np.repeat(
            np.tile(np.arange(n_features), len(counts_by_rank)), counts_by_rank.ravel()
        )
        rows = rows_all[np.argsort(feature_of, kind="stable")]
        local_counts = counts_by_rank.sum(axis=0)
    return np.concatenate([[0], np.cumsum(local_counts)]).astype(np.int64), rows


def _map_columns(store: BinStore, dense_groups: Sequence[Sequence[int]]) -> None:
    """Feature map and group-bin -> histogram-bin maps of the dense columns."""
    offsets, mfb = store.feature_offsets, store.most_freq_bins
    maps = []
    for c, group in enumerate(dense_groups):
        if len(group) == 1:
            f = group[0]
            nb = int(offsets[f + 1] - offsets[f])
            store.feature_map[f] = (c, 0, nb, nb, mfb[f])
            maps.append(offsets[f] + np.arange(nb))
            continue
        store.plain = False
        store.bundles.append(list(group))
        parts, lo = [[offsets[group[0]] + mfb[group[0]]]], 1  # group bin 0
        for f in group:
            nb, m = int(offsets[f + 1] - offsets[f]), int(mfb[f])
            store.feature_map[f] = (c, lo, nb - 1, m, m)
            store.recovered[f] = 1
            s = np.arange(nb - 1)
            parts.append(offsets[f] + np.where(s < m, s, s + 1))
            lo += nb - 1
        maps.append(np.concatenate(parts))
    store.col_start = np.concatenate([[0], np.cumsum([len(m) for m in maps])]).astype(np.int64)
    store.col_map = np.concatenate(maps or [np.zeros(0)]).astype(np.int64)


def _fill_dense(
    store: BinStore, columns: Sequence[Column], dense_groups: Sequence[Sequence[int]]
) -> None:
    _map_columns(store, dense_groups)
    widths = np.diff(store.col_start)
    dtype = bin_dtype_for(int(widths.max(initial=1)))
    order: Literal["C", "F"] = "C" if store.layout == "row" else "F"
    store.dense = np.zeros((store.n_samples, len(dense_groups)), dtype, order=order)
    for c, group in enumerate(dense_groups):
        if len(group) == 1:
            store.dense[:, c] = columns[group[0]].full()
            continue
        for f in group:
            m = store.feature_map[f]
            rows, bins = columns[f].off(m[FM_DEFAULT])
            b = bins.astype(np.int64)
            store.dense[rows, c] = m[FM_LO] + b - (b > m[FM_SKIP])


def _fill_sparse(store: BinStore, columns: Sequence[Column], features: Sequence[int]) -> None:
    """The CSR of histogram bins of ``features`` (index order, so each row's
    entries come sorted)."""
    if not features:
        return
    store.plain = False
    offsets, mfb = store.feature_offsets, store.most_freq_bins
    row_parts: list[np.ndarray] = []
    bins: list[np.ndarray] = []
    for f in features:
        store.feature_map[f] = (-1, 0, 0, 0, mfb[f])
        store.recovered[f] = 1
        r, b = columns[f].off(mfb[f])
        row_parts.append(r)
        bins.append(offsets[f] + b.astype(np.int64))
    rows = np.concatenate(row_parts)
    order = np.argsort(rows, kind="stable")
    store.entries = np.concatenate(bins)[order].astype(ENTRY_DTYPE)
    store.indptr = np.concatenate(
        [[0], np.cumsum(np.bincount(rows, minlength=store.n_samples))]
    ).astype(np.int64)


# -- subsets and files (Dataset.subset, dgbdt.data.binary_file) ----------------------
def subset_columns(
    store: BinStore,
    rows: npt.NDArray[np.int64],
    default_bins: npt.NDArray[np.int64],
    binned: np.ndarray | None = None,
) -> list[Column]:
    """A Column per feature holding the bins of the store's ``rows`` (int64, in
    order, repeats allowed), to build the subset's own store from (its bundles
    and sparse part are then decided on its own rows, as for a Dataset made from
    those rows with the same bins).  Features the store does not keep
    (feature_pre_filter) come back constant at their ``default_bins``: with the
    same min_data_in_leaf they could not split on fewer rows either.
    ``binned``: a (len(rows), n_features) matrix a plain store's rows are
    copied into, the dense Columns being its columns."""
    n, fm = len(rows), store.feature_map
    if store.plain and binned is not None:
        binned[...] = store.dense[rows]
        return [Column(n, dense=binned[:, f]) for f in range(store.n_features)]
    sparse = _sparse_rows(store, rows)
    out = np.empty(store.n_samples, np.uint16)
    rows32 = rows.astype(np.uint32)
    none = (np.zeros(0, np.int64), np.zeros(0, np.uint16))
    columns: list[Column] = []
    for f in range(store.n_features):
        if not store.kept[f]:
            columns.append(Column(n, rows=none[0], bins=none[1], fill=int(default_bins[f])))
        elif fm[f, FM_COL] >= 0:
            store.bins_of(f, rows32, out)
            columns.append(Column(n, dense=out[rows]))
        else:
            r, b = sparse.get(f, none)
            columns.append(Column(n, rows=r, bins=b, fill=int(store.most_freq_bins[f])))
    return columns


def _sparse_rows(
    store: BinStore, rows: npt.NDArray[np.int64]
) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """{feature: (subset rows, bins)} of the sparse part's entries of ``rows``."""
    indptr, entries = store.indptr, store.entries
    if not len(entries) or not len(rows):
        return {}
    starts = indptr[rows]
    lengths = indptr[rows + 1] - starts
    before = np.cumsum(lengths) - lengths
    pos = np.arange(int(lengths.sum())) + np.repeat(starts - before, lengths)
    hist_bins = entries[pos].astype(np.int64)
    new_rows = np.repeat(np.arange(len(rows), dtype=np.int64), lengths)
    feature = np.searchsorted(store.feature_offsets, hist_bins, side="right") - 1
    order = np.argsort(feature, kind="stable")  # each feature's rows stay ascending
    feature, new_rows, hist_bins = feature[order], new_rows[order], hist_bins[order]
    bins = (hist_bins - store.feature_offsets[feature]).astype(np.uint16)
    found, starts = np.unique(feature, return_index=True)
    ends = np.append(starts[1:], len(feature))
    return {int(f): (new_rows[a:b], bins[a:b]) for f, a, b in zip(found, starts, ends, strict=True)}


def store_arrays(store: BinStore) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """``(arrays, meta)`` describing ``store`` for :func:`store_from_arrays`: the
    dense columns, the sparse part, and which features each dense column holds
    (the maps between bins are recomputed from them on loading)."""
    fm = store.feature_map
    in_dense = np.flatnonzero(fm[:, FM_COL] >= 0)
    in_dense = in_dense[np.lexsort((fm[in_dense, FM_LO], fm[in_dense, FM_COL]))]
    n_cols = store.dense.shape[1]
    group_offsets = np.searchsorted(fm[in_dense, FM_COL], np.arange(n_cols + 1))
    arrays = {
        "dense": store.dense,
        "indptr": store.indptr.astype(np.int64),
        "entries": store.entries.astype(ENTRY_DTYPE),
        "most_freq_bins": store.most_freq_bins.astype(np.int32),
        "kept": store.kept.astype(np.uint8),
        "group_features": in_dense.astype(np.int64),
        "group_offsets": group_offsets.astype(np.int64),
        "sparse_features": np.flatnonzero((fm[:, FM_COL] < 0) & store.kept).astype(np.int64),
    }
    if store.counts is not None:
        arrays["counts"] = store.counts.astype(np.int64)
    return arrays, {"n_samples": int(store.n_samples), "layout": store.layout, "plain": store.plain}


def store_from_arrays(
    arrays: dict[str, np.ndarray], meta: dict[str, Any], mapper: AnyBinMapper
) -> BinStore:
    """The BinStore of :func:`store_arrays` (dtypes checked by the caller), every
    array checked against ``mapper`` so that no kernel reads out of bounds: a
    ValueError naming the first bad one."""
    n, n_bins = meta["n_samples"], mapper.n_bins
    mfb, kept, groups, sparse = _checked_parts(arrays, n_bins)
    dense = arrays["dense"]
    if dense.ndim != 2 or dense.shape != (n, len(groups)):
        raise ValueError(f"dense has shape {dense.shape}, expected ({n}, {len(groups)})")
    hist_offsets = np.concatenate([[0], np.cumsum(np.where(kept, n_bins, 0))]).astype(np.int64)
    if meta["plain"]:
        if not kept.all() or len(sparse) or groups != [[f] for f in range(len(n_bins))]:
            raise ValueError("a plain store holds every feature in its own column, in order")
        store = plain_store(dense, mapper.feature_offsets, mfb, meta["layout"])
    else:
        store = BinStore(n, hist_offsets, mfb, meta["layout"])
        store.feature_map[:, FM_DEFAULT] = mfb
        store.feature_map[:, FM_COL] = -1
        _map_columns(store, groups)
        store.plain, store.dense = False, dense
        for f in sparse:
            store.feature_map[f] = (-1, 0, 0, 0, mfb[f])
            store.recovered[f] = 1
        store.indptr, store.entries = _checked_sparse(arrays, n, hist_offsets, sparse)
    widths = np.diff(store.col_start)
    if n and len(widths) and np.any(dense.max(axis=0) >= widths):
        raise ValueError("dense holds a bin beyond its column's bins")
    counts = arrays.get("counts")
    if counts is not None and (counts.shape != (int(n_bins.sum()),) or np.any(counts < 0)):
        raise ValueError(f"counts must be {int(n_bins.sum())} counts >= 0")
    store.counts, store.bin_offsets, store.kept = counts, mapper.feature_offsets, kept
    store.bin_categories = mapper.bin_categories
    return store


def _checked_parts(
    arrays: dict[str, np.ndarray], n_bins: npt.NDArray[np.int64]
) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.bool_], list[list[int]], list[int]]:
    """(most frequent bins, kept flags, dense groups, sparse features), checked."""
    n_features = len(n_bins)
    mfb, kept = arrays["most_freq_bins"], arrays["kept"]
    if mfb.shape != (n_features,) or np.any(mfb < 0) or np.any(mfb >= n_bins):
        raise ValueError("most_freq_bins must hold one bin of each feature")
    if kept.shape != (n_features,) or np.any(kept > 1):
        raise ValueError(f"kept must hold {n_features} flags (0 or 1)")
    kept = kept.astype(bool)
    features, offsets = arrays["group_features"], arrays["group_offsets"]
    sparse = arrays["sparse_features"]
    if offsets.ndim != 1 or features.ndim != 1 or sparse.ndim != 1:
        raise ValueError("group_features, group_offsets and sparse_features must be 1-D")
    steps = np.diff(offsets)
    if not len(offsets) or offsets[0] != 0 or offsets[-1] != len(features) or np.any(steps < 1):
        raise ValueError("group_offsets must rise from 0 to len(group_features), by 1 or more")
    every = np.concatenate([features, sparse])
    if np.any(np.diff(sparse) <= 0) or not np.array_equal(np.sort(every), np.flatnonzero(kept)):
        raise ValueError("every kept feature must be in one dense column or the sparse part")
    groups = [features[a:b].tolist() for a, b in zip(offsets[:-1], offsets[1:], strict=True)]
    return mfb.astype(np.int32), kept, groups, sparse.tolist()


def _checked_sparse(
    arrays: dict[str, np.ndarray], n: int, hist_offsets: npt.NDArray[np.int64], sparse: list[int]
) -> tuple[np.ndarray, np.ndarray]:
    """(indptr, entries) of the sparse part: rows' entries ascending, each a
    histogram bin of a sparse feature."""
    indptr, entries = arrays["indptr"], arrays["entries"]
    if indptr.shape != (n + 1,) or indptr[0] != 0 or indptr[-1] != len(entries):
        raise ValueError(f"indptr must rise from 0 to len(entries) over {n} rows")
    if np.any(np.diff(indptr) < 0) or entries.ndim != 1:
        raise ValueError("indptr must never decrease; entries must be 1-D")
    if len(entries):
        owner = np.searchsorted(hist_offsets, entries, side="right") - 1
        is_sparse = np.zeros(len(hist_offsets), bool)
        is_sparse[sparse] = True
        if entries.max() >= hist_offsets[-1] or not is_sparse[owner].all():
            raise ValueError("entries must be histogram bins of the sparse features")
        row_start = np.zeros(len(entries), bool)
        row_start[indptr[:-1][indptr[:-1] < len(entries)]] = True
        if np.any(np.diff(entries.astype(np.int64))[~row_start[1:]] <= 0):
            raise ValueError("each row's entries must ascend")
    return indptr, entries
