"""Voting-parallel learner: PV-Tree (Meng et al., NeurIPS 2016).

Rows are sharded as in data-parallel, but histograms stay local until a vote
picks the few features worth sending.  For each new leaf:

1. local vote: each rank scans its *local* histogram (its own rows of the
   leaf) with min_data_in_leaf and min_sum_hessian_in_leaf divided by the
   number of ranks, and proposes its top_k features by local gain; the
   leaf's children propose only among the features this scan found
   splittable (LightGBM's voting learner keeps ``is_splittable`` from the
   local scans, per rank);
2. the proposals (feature, gain) are all-gathered and every rank runs the same
   election: PV-Tree's top 2*top_k by vote count (ties: summed gain, then
   feature index), or LightGBM's top_k by count-weighted gain
   (``voting_rule``); sorts are stable, so every rank elects the same set
   (LightGBM hung when ranks sorted differently, PR #2154);
3. only the elected features' histograms are reduce-scattered, to owners
   balanced by bins; owners scan them with the real constraints;
4. the best split is agreed as in data-parallel.

Local histograms of the larger child are parent - smaller on *local* data,
so both children get a vote; there is no global subtraction (elected sets
differ between siblings).  Bytes each rank sends per leaf: top_k x 16 for
the vote (each rank receives K x top_k x 16) plus the elected features' bins
x 16 (2 top_k features with ``voting_rule=votes``, top_k with
``weighted_gain``): independent of the number of features.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ...native.common import SP_MIN_DATA_IN_LEAF, SP_MIN_SUM_HESSIAN
from ...native.split import best_gain_per_feature, find_best_split
from .base import ShardedRows, agree_best_split, no_split, owner_blocks, reduce_scatter_bins
from .serial import SerialLearner

if TYPE_CHECKING:
    from ...boosting.loop import TrainingData
    from ...distributed.comm import SerialComm
    from ..constraints import LeafContext
    from ..histograms import HistogramKind


def elect(proposals: np.ndarray, top_k: int, rule: str) -> np.ndarray:
    """Features elected from every rank's proposals.

    proposals : float64[n_ranks, top_k, 2]  (feature, gain); feature < 0 = no proposal
    Returns the elected feature indices, ascending (int32).
    """
    features = proposals[:, :, 0].ravel()
    gains = proposals[:, :, 1].ravel()
    valid = features >= 0
    features, gains = features[valid].astype(np.int64), gains[valid]
    if len(features) == 0:
        return np.zeros(0, np.int32)
    ids, inverse = np.unique(features, return_inverse=True)
    votes = np.bincount(inverse, minlength=len(ids)).astype(np.float64)
    gain_sum = np.bincount(inverse, weights=gains, minlength=len(ids))
    if rule == "votes":
        # lexsort: last key first -> votes desc, summed gain desc, feature asc
        order = np.lexsort((ids, -gain_sum, -votes))
        chosen = ids[order[: 2 * top_k]]
    else:
        # LightGBM: mean proposed gain weighted by how many ranks proposed it
        score = gain_sum / votes * (votes / proposals.shape[0])
        order = np.lexsort((ids, -score))
        chosen = ids[order[:top_k]]
    return np.sort(chosen).astype(np.int32)


class VotingParallelLearner(ShardedRows, SerialLearner):
    """Rows sharded as in data-parallel; histograms stay local (the serial
    learner's) until the vote, then only the elected features' bins are sent."""

    # Each rank's splittable features are its own: the elected ones need not be
    # among them, so every feature of the tree is built.
    builds_parent_splittable = False

    def __init__(
        self,
        data: TrainingData,
        split_params: np.ndarray,
        comm: SerialComm,
        top_k: int,
        rule: str,
    ) -> None:
        self.comm = comm  # before SerialLearner's init: it sums bin counts over ranks
        super().__init__(data, split_params)
        self.top_k = top_k
        self.rule = rule
        self.local_params = split_params.copy()
        self.local_params[SP_MIN_DATA_IN_LEAF] /= comm.size
        self.local_params[SP_MIN_SUM_HESSIAN] /= comm.size

    def leaf_histogram(
        self,
        rows: np.ndarray,
        kind: HistogramKind,
        feature_indices: np.ndarray,
        totals: tuple[float, float, float],
        hist: np.ndarray,
    ) -> None:
        # Local only: the vote decides what is sent, and the owners fix the
        # elected features' global sums.
        kind.store(kind.build_local(self, rows, feature_indices, totals[2], hist), hist)

    def best_split(
        self,
        hist: np.ndarray,
        kind: HistogramKind,
        feature_indices: np.ndarray,
        totals: tuple[float, float, float],
        record: np.ndarray,
        local_rows: np.ndarray,
        node: LeafContext | None = None,
    ) -> np.ndarray:
        elected, splittable = self._vote(hist, kind, feature_indices, local_rows, node)
        if len(elected) == 0:
            no_split(record)
            return splittable
        owned, summed = self._reduce_elected(hist, kind, elected, totals[2])
        self._scan_owned(owned, summed, kind, totals, record, node)
        return splittable

    def _vote(
        self,
        hist: np.ndarray,
        kind: HistogramKind,
        feature_indices: np.ndarray,
        local_rows: np.ndarray,
        node: LeafContext | None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Steps 1-2: the features every rank elects from the local histograms
        (read with the kind's scales), and the features splittable in this
        rank's local scan.  Those are what the leaf's children propose from, as
        in LightGBM, whose voting learner keeps ``is_splittable`` from the local
        scans: each rank its own, which changes only what it proposes (the
        election is the same everywhere)."""
        proposal = np.full((self.top_k, 2), -1.0)
        splittable = feature_indices[:0]
        if len(feature_indices):
            offsets = self.data.feature_offsets
            g, h = self._local_totals(hist, kind, feature_indices, local_rows)
            gains = np.empty(len(feature_indices))
            flags = np.zeros(len(feature_indices), np.uint8)
            best_gain_per_feature(
                hist,
                feature_indices,
                offsets,
                self.data.nan_bins,
                self.data.zero_bins,
                self.most_freq_bins,
                g,
                h,
                float(len(local_rows)),
                self.local_params,
                gains,
                flags,
                *kind.scales,
                self.data.categorical,
                *self.node_args(node),
            )
            splittable = feature_indices[flags.view(np.bool_)]
            order = np.lexsort((feature_indices, -gains))[: self.top_k]
            order = order[np.isfinite(gains[order])]
            proposal[: len(order), 0] = feature_indices[order]
            proposal[: len(order), 1] = gains[order]
        return elect(self.comm.allgather(proposal), self.top_k, self.rule), splittable

    def _local_totals(
        self,
        hist: np.ndarray,
        kind: HistogramKind,
        feature_indices: np.ndarray,
        local_rows: np.ndarray,
    ) -> tuple[float, float]:
        """The leaf's local (sum_g, sum_h).  Every local row falls in one bin of
        any feature: a plain store's first feature's bins sum to them.  Other
        stores keep no most frequent bins: the totals come from the rows, and
        those bins are recovered from them for the local scan."""
        offsets = self.data.feature_offsets
        if self.data.store.plain:
            f = feature_indices[0]
            return kind.bin_sums(hist[offsets[f] : offsets[f + 1]])
        totals = kind.local_totals(local_rows)
        kind.fix(self, hist, feature_indices, totals)
        return totals

    def _reduce_elected(
        self, hist: np.ndarray, kind: HistogramKind, elected: np.ndarray, count: float
    ) -> tuple[np.ndarray, np.ndarray]:
        """Step 3: the elected features' bins of ``hist`` summed over ranks (in
        the narrowest exact width for the leaf's ``count`` global rows); returns
        (this rank's owned features, their summed bins)."""
        offsets = self.data.feature_offsets
        n_bins = offsets[elected + 1] - offsets[elected]
        blocks = owner_blocks(n_bins, self.comm.size)
        send = np.concatenate([hist[offsets[f] : offsets[f + 1]] for f in elected])
        bin_counts = [int(n_bins[blocks[r] : blocks[r + 1]].sum()) for r in range(self.comm.size)]
        owned = elected[blocks[self.comm.rank] : blocks[self.comm.rank + 1]]
        return owned, reduce_scatter_bins(self.comm, kind, send, bin_counts, count)

    def _scan_owned(
        self,
        owned: np.ndarray,
        summed: np.ndarray,
        kind: HistogramKind,
        totals: tuple[float, float, float],
        record: np.ndarray,
        node: LeafContext | None,
    ) -> None:
        """Step 4: owners scan the global bins with the real constraints; the
        best record wins on every rank."""
        offsets = self.data.feature_offsets
        target = kind.new(totals[2])  # the leaf's layout; only owned bins are read
        at = 0
        for f in owned:
            width = offsets[f + 1] - offsets[f]
            target[offsets[f] : offsets[f + 1]] = summed[at : at + width]
            at += width
        kind.fix(self, target, owned, totals)  # floats: LightGBM's most frequent bins
        flags = np.zeros(len(owned), np.uint8)  # the vote's flags count, not these
        find_best_split(
            target,
            owned,
            offsets,
            self.data.nan_bins,
            self.data.zero_bins,
            self.most_freq_bins,
            totals[0],
            totals[1],
            totals[2],
            self.split_params,
            record,
            flags,
            *kind.scales,
            self.data.categorical,
            *self.node_args(node),
        )
        kind.release(target)
        agree_best_split(self.comm, record, owned[:0], self.data.n_features_global)
