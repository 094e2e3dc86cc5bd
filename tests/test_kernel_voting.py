"""Voting-parallel kernels (native.voting) against numpy twins: the proposal,
the election (both rules, with ties), owner blocks and the elected bins."""

import numpy as np
import pytest
from dgbdt.native.voting import elect, elected_bins, owner_bounds, propose


def twin_propose(gains, features, top_k):
    order = np.lexsort((features, -gains))[:top_k]
    order = order[np.isfinite(gains[order])]
    out = np.full((top_k, 2), -1.0)
    out[: len(order), 0] = features[order]
    out[: len(order), 1] = gains[order]
    return out


def twin_elect(proposals, top_k, rule):
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
        chosen = ids[np.lexsort((ids, -gain_sum, -votes))[: 2 * top_k]]
    else:
        score = gain_sum / votes * (votes / proposals.shape[0])
        chosen = ids[np.lexsort((ids, -score))[:top_k]]
    return np.sort(chosen).astype(np.int32)


def twin_owner_bounds(n_bins, n_ranks):
    cumulative = np.concatenate([[0], np.cumsum(n_bins)])
    bounds = [0]
    for r in range(1, n_ranks):
        f = int(np.searchsorted(cumulative, cumulative[-1] * r / n_ranks))
        bounds.append(min(max(f, bounds[-1]), len(n_bins)))
    return np.asarray([*bounds, len(n_bins)], np.int64)


@pytest.mark.parametrize("seed", range(20))
def test_propose_matches_twin(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 30))
    # few distinct gains: ties broken by feature index; some -inf (no split)
    gains = rng.choice([-np.inf, 0.5, 1.0, 2.0, 3.25], size=n)
    features = rng.permutation(100)[:n].astype(np.int32)
    top_k = int(rng.integers(1, 8))
    out = np.zeros((top_k, 2))
    propose(gains, features, out)
    np.testing.assert_array_equal(out, twin_propose(gains, features, top_k))


@pytest.mark.parametrize("seed", range(30))
@pytest.mark.parametrize("rule", ["votes", "weighted_gain"])
def test_elect_matches_twin(seed, rule):
    rng = np.random.default_rng(seed)
    n_ranks, top_k = int(rng.integers(1, 6)), int(rng.integers(1, 6))
    proposals = np.full((n_ranks, top_k, 2), -1.0)
    for r in range(n_ranks):
        n = int(rng.integers(0, top_k + 1))
        proposals[r, :n, 0] = rng.choice(12, size=n, replace=False)
        # repeated gains make ties on summed gain and on score
        proposals[r, :n, 1] = rng.choice([0.1, 0.3, 0.7, 1e-300, 5e20], size=n)
    got = elect(proposals, top_k, rule == "votes")
    np.testing.assert_array_equal(got, twin_elect(proposals, top_k, rule))
    assert got.dtype == np.int32


@pytest.mark.parametrize("seed", range(20))
def test_owner_bounds_and_elected_bins_match_twin(seed):
    rng = np.random.default_rng(seed)
    n_features, n_ranks = int(rng.integers(1, 20)), int(rng.integers(1, 6))
    widths = rng.integers(0, 40, n_features)  # a feature may have no bins
    offsets = np.concatenate([[0], np.cumsum(widths)]).astype(np.int64)
    np.testing.assert_array_equal(
        owner_bounds(widths.astype(np.int64), n_ranks), twin_owner_bounds(widths, n_ranks)
    )
    elected = np.sort(rng.choice(n_features, int(rng.integers(0, n_features + 1)), replace=False))
    elected = elected.astype(np.int32)
    n_bins = offsets[elected + 1] - offsets[elected]
    blocks = twin_owner_bounds(n_bins, n_ranks)
    want_index = np.concatenate(
        [np.arange(offsets[f], offsets[f + 1]) for f in elected] + [np.zeros(0, np.int64)]
    )
    counts = [int(n_bins[blocks[r] : blocks[r + 1]].sum()) for r in range(n_ranks)]
    for rank in range(n_ranks):
        index, bin_counts, owned, own_index = elected_bins(elected, offsets, n_ranks, rank)
        np.testing.assert_array_equal(index, want_index)
        np.testing.assert_array_equal(bin_counts, counts)
        np.testing.assert_array_equal(owned, elected[blocks[rank] : blocks[rank + 1]])
        first = sum(counts[:rank])
        np.testing.assert_array_equal(own_index, want_index[first : first + counts[rank]])
