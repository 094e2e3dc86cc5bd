"""Sampling: each round's bag of rows (bagging) and each tree's features (feature_fraction).

Draws are keyed on (seed, round or tree, global row or feature), see
dgbdt.streams: a bag holds the same rows however they are sharded over
ranks, and a run resumed from a model draws what an uninterrupted one does.
"""

import numpy as np

from .native import common
from .native.random import uniform_fill
from .streams import STREAM_BAGGING, STREAM_FEATURE_FRACTION, stream_key


def bagged_rows(n_samples, fraction, seed, iteration, row_offset=0):
    """Local rows kept in this round's bag: each with probability ``fraction``,
    decided by a hash of (seed, iteration, global row)."""
    draws = np.empty(n_samples, np.float64)
    uniform_fill(seed, stream_key(STREAM_BAGGING, iteration), row_offset, draws)
    return np.flatnonzero(draws < fraction).astype(common.INDEX_DTYPE)


def sampled_features(features, fraction, seed, tree_index):
    """Features a tree may use: of ``features`` (int32, ascending: the ones that can
    split), the ``round(fraction * n)`` with the smallest draws."""
    if fraction >= 1.0 or len(features) == 0:
        return features
    n = len(features)
    n_used = max(1, int(fraction * n + 0.5))
    draws = np.empty(n, np.float64)
    uniform_fill(seed, stream_key(STREAM_FEATURE_FRACTION, tree_index), 0, draws)
    return features[np.sort(np.argsort(draws, kind="stable")[:n_used])]


class Sampler:
    """One training's bagging and feature_fraction: their seeds and the current bag.

    ``bag`` is this rank's rows of the current round (``all_rows`` without
    bagging); ``features`` are the global features that can split (int32,
    ascending; feature-parallel column blocks sample among all of them).
    """

    def __init__(self, cfg, n_samples, row_offset, features):
        self.n_samples, self.row_offset, self.splittable = n_samples, row_offset, features
        self.all_rows = self.bag = np.arange(n_samples, dtype=common.INDEX_DTYPE)
        self.bagging = cfg["bagging_freq"] > 0 and cfg["bagging_fraction"] < 1.0
        self.bagging_freq, self.bagging_fraction = cfg["bagging_freq"], cfg["bagging_fraction"]
        self.bagging_seed = (cfg["bagging_seed"] + cfg["seed"]) & 0x7FFFFFFF
        self.feature_fraction = cfg["feature_fraction"]
        self.ff_seed = (cfg["feature_fraction_seed"] + cfg["seed"]) & 0x7FFFFFFF

    def start_round(self, it, first_iter):
        """Draw round ``it``'s bag when bagging asks for a new one (or when this
        run starts: ``first_iter``)."""
        freq = self.bagging_freq
        if self.bagging and (it % freq == 0 or it == first_iter):
            # Bags are keyed on the global iteration: the bag of iteration it is the
            # one drawn at the last multiple of bagging_freq, so a run resumed from a
            # model (init_model) at any iteration uses the same bags as one that
            # never stopped.
            self.bag = bagged_rows(
                self.n_samples,
                self.bagging_fraction,
                self.bagging_seed,
                it - it % freq,
                self.row_offset,
            )

    @property
    def bagged(self):
        """Whether the current bag leaves rows out."""
        return self.bag is not self.all_rows

    def features(self, tree_index):
        """The (global) features tree ``tree_index`` may split on."""
        return sampled_features(self.splittable, self.feature_fraction, self.ff_seed, tree_index)
