"""Query groups for ranking: each rank's queries, their place among all ranks'
queries, LightGBM's query weights, and the DCG tables shared by the ranking
objectives (dgbdt.objective.objectives) and metrics (dgbdt.objective.metrics).

A query never spans two ranks (DESIGN rule 6): with row-sharded training each
rank passes whole queries.  Where the query ids are known (the command line's
``group_column`` or LibSVM ``qid:`` fields) :meth:`Queries.of` checks it over
every rank: the last query of a rank must not be the first of the next rank
that has rows.  With sizes alone nothing can tell a query cut in two from two
queries; that is the caller's promise, as in LightGBM.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from ..distributed.comm import agreed
from ..distributed.exact_sum import grouped_exact_sums
from ..native import rank_metric
from ..native.common import INDEX_DTYPE

if TYPE_CHECKING:
    from ..data.dataset import Dataset
    from ..distributed.comm import SerialComm

__all__ = [
    "MAX_QUERY_ROWS",
    "PositionBias",
    "Queries",
    "default_label_gain",
    "discounts",
    "query_boundaries",
    "query_weights",
]

#: LightGBM's DCGCalculator::kMaxPosition: the most rows a ranked query may have
MAX_QUERY_ROWS = 10000


def query_boundaries(sizes: Sequence[int] | np.ndarray) -> npt.NDArray[np.int64]:
    """Row boundaries (n_queries + 1,) int64 of query ``sizes``: query i is rows
    ``b[i]:b[i + 1]``."""
    b = np.zeros(len(sizes) + 1, np.int64)
    np.cumsum(sizes, out=b[1:])
    return b


def query_weights(
    weight: npt.ArrayLike | None, boundaries: npt.NDArray[np.int64]
) -> npt.NDArray[np.float32] | None:
    """Each query's mean row weight, float32 as LightGBM's (Metadata::
    CalculateQueryWeights: summed in float32 in row order, then divided by the
    count); None without weights."""
    if weight is None:
        return None
    out = np.empty(len(boundaries) - 1, np.float32)
    rank_metric.query_weights(np.ascontiguousarray(weight, np.float32), boundaries, out)
    return out


def default_label_gain(label_gain: Sequence[float] | np.ndarray | None) -> npt.NDArray[np.float64]:
    """``label_gain``, or LightGBM's default 2^i - 1 for i = 0 .. 30 when empty."""
    if label_gain:
        return np.asarray(label_gain, np.float64)
    return np.array([(1 << i) - 1 for i in range(31)], np.float64)


def discounts() -> npt.NDArray[np.float64]:
    """DCG position discounts 1 / log2(2 + i), i < MAX_QUERY_ROWS (LightGBM's table)."""
    return 1.0 / np.log2(2.0 + np.arange(MAX_QUERY_ROWS, dtype=np.float64))


def check_ranking_labels(
    label: np.ndarray, label_gain: Sequence[float] | np.ndarray, what: str
) -> None:
    """Refuse labels a DCG cannot weigh: not integers, negative, or without a gain
    (LightGBM's DCGCalculator::CheckLabel), naming the first bad row."""
    lab = np.asarray(label, np.float32)
    bad = (np.abs(lab - np.trunc(lab)) > np.float32(1e-15)) | (lab < 0) | (lab >= len(label_gain))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        v = float(label[i])
        if v < 0 or v != int(v):
            why = "ranking labels must be non-negative integers (relevance grades)"
        else:
            why = (
                f"it has no gain: label_gain has {len(label_gain)} entries (labels "
                f"0..{len(label_gain) - 1}); give label_gain one gain per grade"
            )
        raise ValueError(f"{what}: label {v:g} at row {i}: {why}")


class Queries:
    """This rank's queries: ``boundaries`` (local rows), ``first`` (the global
    index of its first query: queries are numbered in rank order) and
    ``n_global`` (queries on every rank)."""

    def __init__(
        self, boundaries: npt.NDArray[np.int64], first: int = 0, n_global: int | None = None
    ) -> None:
        self.boundaries = boundaries
        self.first = int(first)
        self.n_queries = len(boundaries) - 1
        self.n_global = self.n_queries if n_global is None else int(n_global)

    @classmethod
    def of(cls, dataset: Dataset, comm: SerialComm, what: str = "the training data") -> Queries:
        """The queries of ``dataset`` (which must have a group) over the ranks of
        ``comm``, whose queries are whole (checked where their ids are known)."""
        if dataset.group is None:
            raise ValueError(
                f"{what} has no query groups: ranking needs them (Dataset(group=...), "
                "a .query file, group_column or qid: fields)"
            )
        b = query_boundaries(dataset.group)
        sizes = np.diff(b)
        if len(sizes) and sizes.max() > MAX_QUERY_ROWS:
            i = int(np.argmax(sizes))
            raise ValueError(
                f"{what}: query {i} has {int(sizes[i])} rows, more than LightGBM's "
                f"limit of {MAX_QUERY_ROWS} for a ranked query"
            )
        if comm.size == 1:
            return cls(b)
        counts = comm.per_rank(len(sizes))
        first = int(counts[: comm.rank].sum())
        _check_whole_queries(dataset, sizes, comm, what)
        return cls(b, first, int(counts.sum()))


def _check_whole_queries(dataset: Dataset, sizes: np.ndarray, comm: SerialComm, what: str) -> None:
    """With query ids on every rank: no rank's last query is the next rank's first
    (an allgather of each rank's first and last id and its query count)."""
    ids = dataset.query_ids
    if not comm.every_rank(ids is not None):
        return
    ids = np.asarray(ids)
    # int64 ids (LibSVM qid:) compare as integers: as float64, ids past 2^53 could collide
    kind = np.int64 if comm.every_rank(ids.dtype.kind in "iub") else np.float64
    ends = comm.stack([ids[0], ids[-1], len(ids)] if len(ids) else [0, 0, 0], kind)
    ranks = [r for r in range(comm.size) if ends[r, 2] > 0]
    for a, b in zip(ranks, ranks[1:], strict=False):  # neighbouring ranks
        if ends[a, 1] == ends[b, 0]:
            raise agreed(
                ValueError(
                    f"{what}: query id {ends[a, 1]} spans ranks {a} and {b}: every "
                    "query's rows must be on one rank (cut the rows at query boundaries)"
                )
            )


class PositionBias:
    """Unbiased lambdarank's position bias factors (LightGBM's
    UpdatePositionBiasFactors): one float32 factor per position, added to the
    scores of the rows shown there before the lambdas are computed, and moved
    each round by a Newton step on the sums of those rows' lambdas and
    hessians, with L2 ``regularization``.  The sums are exact over every
    rank's rows (dgbdt.distributed.exact_sum), so every rank takes the same step on any
    number of ranks; the positions are numbered by their sorted global ids
    (LightGBM: by first appearance, which names the same factors)."""

    def __init__(
        self, position: np.ndarray, learning_rate: float, regularization: float, comm: SerialComm
    ) -> None:
        ids = np.unique(comm.concat(np.unique(position), np.int64))
        self.index = np.searchsorted(ids, position)
        self.factors = np.zeros(len(ids), np.float32)
        self.lr, self.reg, self.comm = learning_rate, regularization, comm
        counts = np.bincount(self.index, minlength=len(ids))
        self.order = np.argsort(self.index, kind="stable").astype(INDEX_DTYPE)
        self.begin = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64)
        self.count = counts.astype(np.int64)
        self.instances = comm.total_int(counts).astype(np.float64)

    def adjusted(self, scores: np.ndarray) -> np.ndarray:
        """The scores plus each row's position factor."""
        return scores + self.factors[self.index]

    def update(self, lambdas: np.ndarray, hessians: np.ndarray) -> None:
        """One Newton step of every factor from this round's (weighted) lambdas and
        hessians (float32, this rank's rows)."""
        sums = [
            np.asarray(grouped_exact_sums(self.comm, v, self.order, self.begin, self.count))
            for v in (lambdas, hessians)
        ]
        first = -sums[0] - self.factors * self.reg * self.instances
        second = -sums[1] - self.reg * self.instances
        self.factors = (self.factors + self.lr * first / (np.abs(second) + 0.001)).astype(
            np.float32
        )
