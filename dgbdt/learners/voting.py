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

import numpy as np

from ..native.common import (
    HIST_WIDTH,
    SP_MIN_DATA_IN_LEAF,
    SP_MIN_SUM_HESSIAN,
    SPLIT_FEATURE,
    SPLIT_GAIN,
)
from ..native.quantize import (
    NARROW_DTYPE,
    NARROW_SHIFT,
    PAIRS,
    WIDE_DTYPE,
    WIDE_SHIFT,
    narrow_words,
    packed_width,
    unpack_word,
    widen_words,
)
from ..native.split import best_gain_per_feature, find_best_split, fix_most_frequent_bins
from .data import DataParallelLearner, agree_best_split, owner_blocks
from .serial import SerialLearner


def elect(proposals, top_k, rule):
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


def _as_narrow(wide):
    out = np.empty(len(wide), NARROW_DTYPE)
    narrow_words(wide, out)
    return out


def _as_wide(narrow):
    out = np.empty(len(narrow), WIDE_DTYPE)
    widen_words(narrow, out)
    return out


class VotingParallelLearner(DataParallelLearner):
    def __init__(self, data, split_params, comm, top_k, rule):
        super().__init__(data, split_params, comm)
        self.top_k = top_k
        self.rule = rule
        self.local_params = split_params.copy()
        self.local_params[SP_MIN_DATA_IN_LEAF] /= comm.size
        self.local_params[SP_MIN_SUM_HESSIAN] /= comm.size
        self._global = np.zeros((data.total_bins, HIST_WIDTH))  # elected bins, global sums

    def leaf_histogram(
        self, sample_indices, ordered_gradients, ordered_hessians, feature_indices, hist
    ):
        # Local only: the vote decides what is sent.
        SerialLearner.leaf_histogram(
            self, sample_indices, ordered_gradients, ordered_hessians, feature_indices, hist
        )

    def leaf_histogram_int(self, sample_indices, quant, shift, feature_indices, hist):
        SerialLearner.leaf_histogram_int(self, sample_indices, quant, shift, feature_indices, hist)

    def fix_histogram(self, hist, feature_indices, totals):
        # Local histograms: the owners fix the elected features' global sums.
        pass

    def _local_sums(self, hist, feature_indices, scales):
        # Every local row falls in one bin of any feature: sum the first one's bins.
        offsets = self.data.feature_offsets
        f = feature_indices[0]
        bins = hist[offsets[f] : offsets[f + 1]]
        if bins.ndim == 1:  # quantized words: their sum is the leaf's word
            g, h = unpack_word(bins.sum())
            return float(g) * scales[0], float(h) * scales[1]
        if bins.dtype == WIDE_DTYPE:  # quantized pairs
            g, h = bins.sum(axis=0)
            return float(g) * scales[0], float(h) * scales[1]
        g, h = bins.sum(axis=0)
        return float(g), float(h)

    def _vote(self, hist, feature_indices, local_count, scales=(1.0, 1.0)):
        """Steps 1-2: the features every rank elects from the local histograms
        (floats, or quantized words read with ``scales``), and the features
        splittable in this rank's local scan.  Those are what the leaf's children
        propose from, as in LightGBM, whose voting learner keeps ``is_splittable``
        from the local scans: each rank its own, which changes only what it
        proposes (the election is the same everywhere)."""
        proposal = np.full((self.top_k, 2), -1.0)
        splittable = feature_indices[:0]
        if len(feature_indices):
            g, h = self._local_sums(hist, feature_indices, scales)
            gains = np.empty(len(feature_indices))
            flags = np.zeros(len(feature_indices), np.uint8)
            best_gain_per_feature(
                hist,
                feature_indices,
                self.data.feature_offsets,
                self.data.nan_bins,
                self.most_freq_bins,
                g,
                h,
                float(local_count),
                self.local_params,
                gains,
                flags,
                *scales,
            )
            splittable = feature_indices[flags.view(np.bool_)]
            order = np.lexsort((feature_indices, -gains))[: self.top_k]
            order = order[np.isfinite(gains[order])]
            proposal[: len(order), 0] = feature_indices[order]
            proposal[: len(order), 1] = gains[order]
        return elect(self.comm.allgather(proposal), self.top_k, self.rule), splittable

    def _reduce_elected(self, hist, elected, width, pack=None):
        """Step 3: the elected features' bins of ``hist`` (``width`` values per bin)
        summed over ranks; returns (this rank's owned features, their summed bins).
        ``pack`` converts the bins to send (quantized: narrow words)."""
        offsets = self.data.feature_offsets
        n_bins = offsets[elected + 1] - offsets[elected]
        blocks = owner_blocks(n_bins, self.comm.size)
        send = np.concatenate([hist[offsets[f] : offsets[f + 1]] for f in elected]).reshape(-1)
        if pack is not None:
            send = pack(send)
        counts = [
            width * int(n_bins[blocks[r] : blocks[r + 1]].sum()) for r in range(self.comm.size)
        ]
        owned = elected[blocks[self.comm.rank] : blocks[self.comm.rank + 1]]
        return owned, self.comm.reduce_scatter(send, counts)

    def _scan_owned(self, owned, summed, totals, record, scales=(1.0, 1.0), pairs=False):
        """Step 4: owners scan the global bins (floats, or quantized wide words or
        pairs read with ``scales``) with the real constraints; the best record
        wins on every rank."""
        offsets = self.data.feature_offsets
        if summed.dtype != WIDE_DTYPE:
            target, summed = self._global, summed.reshape(-1, HIST_WIDTH)
        elif pairs:
            target = self._scratch("global_pairs", (self.data.total_bins, 2), WIDE_DTYPE)
            summed = summed.reshape(-1, 2)
        else:
            target = self._scratch("global_words", self.data.total_bins, WIDE_DTYPE)
        at = 0
        for f in owned:
            width = offsets[f + 1] - offsets[f]
            target[offsets[f] : offsets[f + 1]] = summed[at : at + width]
            at += width
        if target is self._global:  # floats: LightGBM's most frequent bins
            fix_most_frequent_bins(
                target, owned, offsets, self.most_freq_bins, totals[0], totals[1]
            )
        flags = np.zeros(len(owned), np.uint8)  # the vote's flags count, not these
        find_best_split(
            target,
            owned,
            offsets,
            self.data.nan_bins,
            self.most_freq_bins,
            totals[0],
            totals[1],
            totals[2],
            self.split_params,
            record,
            flags,
            *scales,
        )
        agree_best_split(self.comm, record, owned[:0], self.data.n_features_global)

    @staticmethod
    def _no_split(record):
        record[:] = 0.0
        record[SPLIT_FEATURE] = -1.0
        record[SPLIT_GAIN] = -np.inf

    def best_split(self, hist, feature_indices, totals, record, local_count):
        elected, splittable = self._vote(hist, feature_indices, local_count)
        if len(elected) == 0:
            self._no_split(record)
            return splittable
        owned, summed = self._reduce_elected(hist, elected, HIST_WIDTH)
        self._scan_owned(owned, summed, totals, record)
        return splittable

    def best_split_int(self, words, feature_indices, totals, record, quant, local_count):
        # The vote and the owners' scan read words scaled back bin by bin; the
        # elected features' words travel narrow when the leaf's global count allows.
        scales = (quant.g_scale, quant.h_scale)
        elected, splittable = self._vote(words, feature_indices, local_count, scales)
        if len(elected) == 0:
            self._no_split(record)
            return splittable
        width = packed_width(int(totals[2]), quant.n_bins)
        pairs = words.ndim == 2  # a leaf too large for wide words, or a child of one
        if pairs and width != PAIRS:  # ...that fits words again: send those
            words, pairs = (words[:, 0] << WIDE_SHIFT) + words[:, 1], False
        narrow = width == NARROW_SHIFT
        owned, summed = self._reduce_elected(
            words, elected, 2 if pairs else 1, pack=_as_narrow if narrow else None
        )
        if narrow:
            summed = _as_wide(summed)
        self._scan_owned(owned, summed, totals, record, scales, pairs)
        return splittable
