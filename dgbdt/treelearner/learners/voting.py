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

When the election would take every feature (``n_features <= top_k``, or
``2 * top_k`` with ``voting_rule=votes``) there is nothing to vote on, and a
vote would still lose what no rank proposes: a feature with no positive-gain
split in any rank's local rows (cat_l2 or a min_data_per_group group weighs
more on a rank's share of a leaf than on the whole leaf), or one a rank's
local scan found unsplittable in the parent.  Then every feature the leaf may
split on is sent and scanned, and the splittable flags are agreed with the
record, as in data-parallel: the tree is the single-process one (quantized:
bit for bit), and no vote is gathered.

Local histograms of the larger child are parent - smaller on *local* data,
so both children get a vote; there is no global subtraction (elected sets
differ between siblings).  Bytes each rank sends per leaf: top_k x 16 for
the vote (each rank receives K x top_k x 16) plus the elected features' bins
x 16 (2 top_k features with ``voting_rule=votes``, top_k with
``weighted_gain``): independent of the number of features.  Without a vote
(every feature elected) no vote is sent and every splittable feature's bins
travel, as in data-parallel.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ...native.common import SP_MIN_DATA_IN_LEAF, SP_MIN_SUM_HESSIAN
from ...native.histogram import put_bins, take_bins
from ...native.split import best_gain_per_feature, find_best_split
from ...native.voting import elect, elected_bins, propose
from .base import ShardedRows, agree_best_splits, as_2d, no_split, reduce_scatter_bins
from .serial import SerialLearner

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ...boosting.loop import TrainingData
    from ...distributed.comm import SerialComm
    from ..constraints import LeafContext
    from ..histograms import HistogramKind
    from .base import LeafScan


class VotingParallelLearner(ShardedRows, SerialLearner):
    """Rows sharded as in data-parallel; histograms stay local (the serial
    learner's) until the vote, then only the elected features' bins are sent."""

    # Each rank's splittable features are its own: the elected ones need not be
    # among them, so every feature of the tree is built (unless every feature
    # fits the election: then the flags are global, see __init__).
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
        # Every feature fits the election (the same on every rank): no vote, the
        # flags are global, so a child's histogram needs only its parent's
        # splittable features (see the module docstring).
        limit = 2 * top_k if rule == "votes" else top_k
        self.elects_all = data.n_features_global <= limit
        self.builds_parent_splittable = self.elects_all

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

    def best_splits(self, kind: HistogramKind, leaves: Sequence[LeafScan]) -> list[np.ndarray]:
        """Every leaf's vote in one allgather, its elected bins reduce-scattered,
        the owners' records agreed in one allgather; returns each leaf's
        features splittable in this rank's local scan (where every feature
        fits the election: no vote, those splittable on some rank)."""
        if self.elects_all:
            return self._all_elected(kind, leaves)
        votes = [self._vote(s.hist, kind, s.feature_indices, s.local_rows, s.node) for s in leaves]
        gathered = self.comm.allgather(np.stack([proposal for proposal, _ in votes]))
        for i, s in enumerate(leaves):
            elected = elect(np.ascontiguousarray(gathered[:, i]), self.top_k, self.rule == "votes")
            if len(elected) == 0:  # the same on every rank
                no_split(s.record)
                continue
            owned, summed, own_index = self._reduce_elected(s.hist, kind, elected, s.totals[2])
            self._scan_owned(owned, summed, own_index, kind, s.totals, s.record, s.node)
        # (the vote's splittable features count, not the owners' flags: none sent)
        none = [s.feature_indices[:0] for s in leaves]
        agree_best_splits(self.comm, [s.record for s in leaves], none, self.data.n_features_global)
        return [splittable for _, splittable in votes]

    def _all_elected(self, kind: HistogramKind, leaves: Sequence[LeafScan]) -> list[np.ndarray]:
        """Every feature fits the election: each leaf's features (the same on
        every rank) reduce-scattered to their owners and scanned there, the
        records and splittable flags agreed in one allgather (data-parallel's
        rule: the single-process tree); returns each leaf's features
        splittable on some rank."""
        found = []
        for s in leaves:
            if len(s.feature_indices) == 0:  # the same on every rank
                no_split(s.record)
                found.append(s.feature_indices)
                continue
            owned, summed, own_index = self._reduce_elected(
                s.hist, kind, s.feature_indices, s.totals[2]
            )
            found.append(
                self._scan_owned(owned, summed, own_index, kind, s.totals, s.record, s.node)
            )
        records = [s.record for s in leaves]
        masks = agree_best_splits(self.comm, records, found, self.data.n_features_global)
        return [s.feature_indices[m[s.feature_indices]] for s, m in zip(leaves, masks, strict=True)]

    def _vote(
        self,
        hist: np.ndarray,
        kind: HistogramKind,
        feature_indices: np.ndarray,
        local_rows: np.ndarray,
        node: LeafContext | None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Step 1: this rank's proposal from its local histogram (read with the
        kind's scales), and the features splittable in its local scan.  Those
        are what the leaf's children propose from, as in LightGBM, whose voting
        learner keeps ``is_splittable`` from the local scans: each rank its
        own, which changes only what it proposes (the election, step 2, is the
        same everywhere)."""
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
            propose(gains, feature_indices, proposal)
        return proposal, splittable

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
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Step 3: the elected features' bins of ``hist`` summed over ranks (in
        the narrowest exact width for the leaf's ``count`` global rows); returns
        (this rank's owned features, their summed bins, where those go in the
        leaf's layout)."""
        comm = self.comm
        index, bin_counts, owned, own_index = elected_bins(
            elected, self.data.feature_offsets, comm.size, comm.rank
        )
        send = np.empty((len(index),) + hist.shape[1:], hist.dtype)
        take_bins(as_2d(hist), index, as_2d(send))
        summed = reduce_scatter_bins(comm, kind, send, bin_counts.tolist(), count)
        return owned, summed, own_index

    def _scan_owned(
        self,
        owned: np.ndarray,
        summed: np.ndarray,
        own_index: np.ndarray,
        kind: HistogramKind,
        totals: tuple[float, float, float],
        record: np.ndarray,
        node: LeafContext | None,
    ) -> np.ndarray:
        """Step 4: owners scan the global bins with the real constraints (the
        best record of every rank is agreed by best_splits); returns the owned
        features splittable in the scan (a vote's flags count instead)."""
        offsets = self.data.feature_offsets
        target = kind.new(totals[2])  # the leaf's layout; only owned bins are read
        put_bins(as_2d(summed), own_index, as_2d(target))
        kind.fix(self, target, owned, totals)  # floats: LightGBM's most frequent bins
        flags = np.zeros(len(owned), np.uint8)
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
        return owned[flags.view(np.bool_)]
