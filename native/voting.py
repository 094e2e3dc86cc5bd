"""Voting-parallel (PV-Tree) steps of one leaf, as kernels: a rank's proposal,
the election every rank runs on the gathered proposals, and which bins of
the elected features travel to which owner.

Each leaf runs them once per rank; in numpy they were some forty small calls
(sorts, uniques, bincounts, slices) whose overhead was most of voting's time
between kernels.  Every rank runs the same election on the same gathered
proposals, so it must pick the same features everywhere: sorts are stable and
ties are broken by feature index (LightGBM hung when ranks sorted differently,
PR #2154).
"""

import numpy as np
from numba import njit


@njit(cache=True)
def owner_bounds(n_bins, n_ranks):
    """Contiguous feature blocks, one per rank, with about equal bin counts.

    Parameters
    ----------
    n_bins : int64[n_features]  # IN  bins of each feature, in order
    n_ranks : int               # IN

    Returns
    -------
    bounds : int64[n_ranks + 1]  rank r owns features bounds[r]:bounds[r + 1]
    """
    n_features = n_bins.shape[0]
    cumulative = np.zeros(n_features + 1, np.int64)
    for f in range(n_features):
        cumulative[f + 1] = cumulative[f] + n_bins[f]
    total = cumulative[n_features]
    bounds = np.zeros(n_ranks + 1, np.int64)
    for r in range(1, n_ranks):
        target = total * r / n_ranks
        f = np.searchsorted(cumulative, target)
        bounds[r] = min(max(f, bounds[r - 1]), n_features)
    bounds[n_ranks] = n_features
    return bounds


@njit(cache=True)
def propose(gains, feature_indices, proposal):
    """A rank's proposal: its top features by local gain (ties: lower index).

    Parameters
    ----------
    gains : float64[n]                # IN  best local gain of each feature (-inf: none)
    feature_indices : int32[n]        # IN
    proposal : float64[top_k, 2]      # OUT (feature, gain) rows, best first;
                                      #     feature -1 where fewer are finite
    """
    top_k = proposal.shape[0]
    by_feature = np.argsort(feature_indices, kind="mergesort")
    order = by_feature[np.argsort(-gains[by_feature], kind="mergesort")]
    at = 0
    for i in range(min(top_k, order.shape[0])):
        j = order[i]
        if np.isfinite(gains[j]):
            proposal[at, 0] = feature_indices[j]
            proposal[at, 1] = gains[j]
            at += 1
    for i in range(at, top_k):
        proposal[i, 0] = -1.0
        proposal[i, 1] = -1.0


@njit(cache=True)
def elect(proposals, top_k, by_votes):
    """The features elected from every rank's proposals, ascending.

    ``by_votes``: PV-Tree's rule, the 2 * top_k features proposed most often
    (ties: larger summed gain, then lower index); else LightGBM's
    ``weighted_gain``, the top_k by mean proposed gain times the share of
    ranks that proposed it (ties: lower index).

    Parameters
    ----------
    proposals : float64[n_ranks, top_k, 2]  # IN  (feature, gain); feature < 0: none
    top_k : int                             # IN
    by_votes : bool                         # IN

    Returns
    -------
    elected : int32[n_elected]
    """
    n_ranks = proposals.shape[0]
    flat = proposals.reshape(-1, 2)
    n_valid = 0
    for i in range(flat.shape[0]):
        if flat[i, 0] >= 0:
            n_valid += 1
    features = np.empty(n_valid, np.int64)
    gains = np.empty(n_valid)
    at = 0
    for i in range(flat.shape[0]):  # in rank order: the gains sum in it
        if flat[i, 0] >= 0:
            features[at] = np.int64(flat[i, 0])
            gains[at] = flat[i, 1]
            at += 1
    ids = np.unique(features)
    votes = np.zeros(ids.shape[0])
    gain_sum = np.zeros(ids.shape[0])
    for i in range(n_valid):
        k = np.searchsorted(ids, features[i])
        votes[k] += 1.0
        gain_sum[k] += gains[i]
    # stable sorts from the last key to the first, ids ascending to begin with
    if by_votes:
        order = np.argsort(-gain_sum, kind="mergesort")
        order = order[np.argsort(-votes[order], kind="mergesort")]
        limit = 2 * top_k
    else:
        score = gain_sum / votes * (votes / n_ranks)
        order = np.argsort(-score, kind="mergesort")
        limit = top_k
    return np.sort(ids[order[:limit]]).astype(np.int32)


@njit(cache=True)
def elected_bins(elected, feature_offsets, n_ranks, rank):
    """Where the elected features' bins travel: each rank owns a contiguous
    block of them (balanced by bins, as ``owner_bounds``).

    Parameters
    ----------
    elected : int32[n_elected]               # IN  ascending
    feature_offsets : int64[n_features + 1]  # IN
    n_ranks, rank : int                      # IN

    Returns
    -------
    index : int64[n_sent]       the bins sent, in owner order (the elected
                                features' bins one feature after another)
    bin_counts : int64[n_ranks] bins each rank receives
    owned : int32[n_owned]      this rank's elected features
    own_index : int64[n_own]    the bins it receives, in its leaf's layout
    """
    n = elected.shape[0]
    n_bins = np.empty(n, np.int64)
    for j in range(n):
        f = elected[j]
        n_bins[j] = feature_offsets[f + 1] - feature_offsets[f]
    blocks = owner_bounds(n_bins, n_ranks)
    index = np.empty(n_bins.sum(), np.int64)
    at = 0
    for j in range(n):
        start = feature_offsets[elected[j]]
        for b in range(n_bins[j]):
            index[at + b] = start + b
        at += n_bins[j]
    bin_counts = np.zeros(n_ranks, np.int64)
    first = np.zeros(n_ranks + 1, np.int64)
    for r in range(n_ranks):
        for j in range(blocks[r], blocks[r + 1]):
            bin_counts[r] += n_bins[j]
        first[r + 1] = first[r] + bin_counts[r]
    owned = elected[blocks[rank] : blocks[rank + 1]].copy()
    own_index = index[first[rank] : first[rank + 1]].copy()
    return index, bin_counts, owned, own_index
