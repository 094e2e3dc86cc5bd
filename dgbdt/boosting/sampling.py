"""Sampling: each round's rows (bagging, balanced bagging, GOSS) and each tree's
features (feature_fraction).

Draws are keyed on (seed, round or tree, global row or feature), see
dgbdt.streams: a bag holds the same rows however they are sharded over
ranks, and a run resumed from a model draws what an uninterrupted one does.

GOSS (Gradient-based One-Side Sampling, LightGBM's ``goss.hpp``) keeps the
rows of largest ``r = sum over classes |g * h|`` and a random share of the
others, whose gradients and hessians it amplifies.  Where dgbdt differs from
LightGBM, and why:

* the large rows are the top ``top_rate`` of ALL rows, over every rank, found
  by an exact radix selection over allreduced integer counts
  (:func:`global_top_threshold`); LightGBM takes the top rows of each block of
  rows (one block per thread, each of >= 1024 rows; in distributed training
  each machine its own), so its sample depends on threads and machines.  Ties
  at the threshold are kept, as LightGBM's ``r >= threshold`` keeps them;
* each other row is kept with probability ``other_k / (n - top_k)`` by the
  keyed hash (``STREAM_GOSS``); LightGBM draws exactly ``other_k`` of them
  per block by sequential selection (each row's chance depends on the rows
  before it), which cannot be made independent of the sharding.  The
  probability is the one LightGBM starts from, and its multiplier
  ``(n - top_k) / other_k`` (float32, as LightGBM's ``score_t``) is its
  inverse, so the amplified sums stay unbiased;
* iterations are the global ones: the first ``int(1 / learning_rate)``
  iterations of the model are not sampled, and a resumed run (init_model)
  continues where the model stopped; LightGBM counts the iterations of the
  new Booster, so it skips them again after an init model.

Balanced bagging (``pos_bagging_fraction`` / ``neg_bagging_fraction``, binary
objective only) draws one number per row, as bagging does, and compares it
with the fraction of the row's class.  Whether it is on is decided from the
global count of positive rows (LightGBM: from the machine's own).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..distributed.comm import SerialComm
from ..native import common
from ..native.random import uniform_fill
from ..streams import STREAM_BAGGING, STREAM_FEATURE_FRACTION, STREAM_GOSS, stream_key

if TYPE_CHECKING:
    from ..objective.ranking import Queries


def _row_draws(n_samples: int, seed: int, key: int, row_offset: int) -> np.ndarray:
    """One uniform draw per local row, fixed by (seed, key, global row)."""
    draws = np.empty(n_samples, np.float64)
    uniform_fill(seed, key, row_offset, draws)
    return draws


def bagged_rows(
    n_samples: int, fraction: float, seed: int, iteration: int, row_offset: int = 0
) -> np.ndarray:
    """Local rows kept in this round's bag: each with probability ``fraction``,
    decided by a hash of (seed, iteration, global row)."""
    draws = _row_draws(n_samples, seed, stream_key(STREAM_BAGGING, iteration), row_offset)
    return np.flatnonzero(draws < fraction).astype(common.INDEX_DTYPE)


def bagged_query_rows(queries: Queries, fraction: float, seed: int, iteration: int) -> np.ndarray:
    """Local rows of the queries kept in this round's bag (bagging_by_query): each
    query with probability ``fraction``, decided by a hash of (seed, iteration,
    global query index), so a query's fate does not depend on its rank."""
    b = queries.boundaries
    draws = _row_draws(len(b) - 1, seed, stream_key(STREAM_BAGGING, iteration), queries.first)
    keep = np.repeat(draws < fraction, np.diff(b))
    return np.flatnonzero(keep).astype(common.INDEX_DTYPE)


def balanced_bagged_rows(
    positive: np.ndarray,
    pos_fraction: float,
    neg_fraction: float,
    seed: int,
    iteration: int,
    row_offset: int = 0,
) -> np.ndarray:
    """Local rows of a balanced bag: a row with ``positive`` (bool, per local row)
    is kept with probability ``pos_fraction``, any other with ``neg_fraction``;
    the draws are bagging's (LightGBM's BalancedBaggingHelper)."""
    key = stream_key(STREAM_BAGGING, iteration)
    draws = _row_draws(len(positive), seed, key, row_offset)
    keep = np.where(positive, draws < pos_fraction, draws < neg_fraction)
    return np.flatnonzero(keep).astype(common.INDEX_DTYPE)


def goss_scores(gradients: np.ndarray, hessians: np.ndarray) -> np.ndarray:
    """Per row, ``sum over classes |g * h|`` in float32, classes added in order
    (LightGBM's ``tmp_gradients``).  gradients, hessians: (k, n) float32."""
    r = np.zeros(gradients.shape[1], np.float32)
    for k in range(gradients.shape[0]):
        r += np.abs(gradients[k] * hessians[k])
    return r


def global_top_threshold(scores: np.ndarray, top_k: int, comm: SerialComm) -> np.uint32:
    """The ``top_k``-th largest of ``scores`` (float32, >= 0) over every rank's rows.

    Non-negative float32 numbers sort as their bit patterns, so the threshold
    is found byte by byte, highest first: four rounds, each an allreduce of
    the 256 integer counts of the next byte among the rows that share the
    bytes found so far.  Integer counts are exact in any order, so every rank
    finds the same bit pattern on any number of ranks.  Returns it as uint32
    (compare ``scores.view(np.uint32) >= threshold``).  ``1 <= top_k <=``
    the global number of rows; every rank must call it.
    """
    candidates = np.ascontiguousarray(scores, np.float32).view(np.uint32)
    prefix, greater = 0, 0  # bytes found; rows (global) above the prefix
    for shift in (24, 16, 8, 0):
        digits = (candidates >> np.uint32(shift)) & np.uint32(0xFF)
        counts = comm.total_int(np.bincount(digits, minlength=256))
        # at_least[j]: rows whose byte is >= 255 - j
        at_least = greater + np.cumsum(counts[::-1])
        digit = 255 - int(np.searchsorted(at_least, top_k))
        greater = int(at_least[255 - digit] - counts[digit])
        prefix = (prefix << 8) | digit
        candidates = candidates[digits == digit]
    return np.uint32(prefix)


def goss_sample(
    gradients: np.ndarray,
    hessians: np.ndarray,
    rates: tuple[float, float, int],
    seed: int,
    iteration: int,
    row_offset: int,
    comm: SerialComm,
) -> np.ndarray:
    """One GOSS round: the local rows kept (ascending), with the gradients and
    hessians of the sampled small rows multiplied in place.

    ``rates`` is (top_rate, other_rate, n_total): the global number of rows.
    ``comm`` sums over rows (every rank calls this in the same round).
    """
    top_rate, other_rate, n_total = rates
    if n_total == 0:  # no rows on any rank
        return np.empty(0, common.INDEX_DTYPE)
    scores = goss_scores(gradients, hessians)
    # LightGBM's counts (goss.hpp): top_k at least 1, both truncated.
    top_k = max(1, int(n_total * top_rate))
    other_k = int(n_total * other_rate)
    threshold = global_top_threshold(scores, top_k, comm)
    top = scores.view(np.uint32) >= threshold
    n_rest = n_total - top_k
    if other_k <= 0 or n_rest <= 0:
        return np.flatnonzero(top).astype(common.INDEX_DTYPE)
    draws = _row_draws(len(scores), seed, stream_key(STREAM_GOSS, iteration), row_offset)
    sampled = ~top & (draws < min(1.0, other_k / n_rest))
    # float32 like LightGBM's score_t: static_cast<score_t>(cnt - top_k) / other_k
    multiply = np.float32(n_rest) / np.float32(other_k)
    rows = np.flatnonzero(sampled)
    for k in range(gradients.shape[0]):
        gradients[k, rows] *= multiply
        hessians[k, rows] *= multiply
    return np.flatnonzero(top | sampled).astype(common.INDEX_DTYPE)


def goss_skips(iteration: int, learning_rate: float) -> bool:
    """Whether GOSS leaves iteration ``iteration`` unsampled: LightGBM's first
    ``int(1 / learning_rate)`` iterations use every row."""
    return iteration < int(1.0 / learning_rate)


def sampled_features(
    features: np.ndarray, fraction: float, seed: int, tree_index: int
) -> np.ndarray:
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
    """One training's row sampling (bagging, balanced bagging or GOSS) and
    feature_fraction: their seeds and the current bag.

    ``bag`` is this rank's rows of the current round (``all_rows`` without
    sampling); ``features`` are the global features that can split (int32,
    ascending; feature-parallel column blocks sample among all of them).
    ``label`` (this rank's rows) tells balanced bagging the positive rows;
    ``row_comm`` sums over rows (global row and positive counts, GOSS's
    threshold).  The constructor and :meth:`start_round` enter the same
    collectives on every rank: which ones depends on the params only.
    """

    def __init__(
        self,
        cfg: dict[str, Any],
        n_samples: int,
        row_offset: int,
        features: np.ndarray,
        *,
        label: np.ndarray | None = None,
        row_comm: SerialComm | None = None,
        queries: Queries | None = None,
    ) -> None:
        self.cfg, self.row_comm = cfg, SerialComm() if row_comm is None else row_comm
        # bagging_by_query: whole queries (dgbdt.objective.ranking.Queries) are kept or left out
        self.queries = queries if cfg["bagging_by_query"] else None
        self.n_samples, self.row_offset, self.splittable = n_samples, row_offset, features
        self.all_rows = self.bag = np.arange(n_samples, dtype=common.INDEX_DTYPE)
        self.bagging_freq, self.bagging_fraction = cfg["bagging_freq"], cfg["bagging_fraction"]
        self.bagging_seed = (cfg["bagging_seed"] + cfg["seed"]) & 0x7FFFFFFF
        self.feature_fraction = cfg["feature_fraction"]
        self.ff_seed = (cfg["feature_fraction_seed"] + cfg["seed"]) & 0x7FFFFFFF
        self.goss = cfg["data_sample_strategy"] == "goss"
        self.positive = self._balanced_positive(label)
        self.bagging = not self.goss and cfg["bagging_freq"] > 0
        self.bagging = self.bagging and (cfg["bagging_fraction"] < 1.0 or self.positive is not None)
        self.n_total: int | None = None  # GOSS: the global number of rows
        if self.goss:
            self.n_total = int(self.row_comm.total_int([n_samples])[0])

    def _balanced_positive(self, label: np.ndarray | None) -> np.ndarray | None:
        """Balanced bagging's positive-row flags, or None when it is off: as in
        LightGBM, only for the binary objective with bagging_freq > 0 and some
        positive row (counted over every rank here)."""
        cfg = self.cfg
        wanted = cfg["pos_bagging_fraction"] < 1.0 or cfg["neg_bagging_fraction"] < 1.0
        if self.goss or not wanted or cfg["bagging_freq"] <= 0 or cfg["objective"] != "binary":
            return None
        positive = np.asarray(label) > 0
        if int(self.row_comm.total_int([np.count_nonzero(positive)])[0]) == 0:
            return None
        return positive

    def start_round(
        self,
        it: int,
        first_iter: int,
        gradients: np.ndarray | None = None,
        hessians: np.ndarray | None = None,
    ) -> None:
        """Draw round ``it``'s bag when bagging asks for a new one (or when this
        run starts: ``first_iter``); with GOSS, every round from the (k, n)
        float32 ``gradients`` and ``hessians``, which it amplifies in place."""
        if self.goss:
            self.bag = self.all_rows
            if not goss_skips(it, self.cfg["learning_rate"]):
                rates = (self.cfg["top_rate"], self.cfg["other_rate"], self.n_total)
                # (GOSS rounds pass gradients; GOSS counted n_total in __init__)
                self.bag = goss_sample(
                    gradients,  # type: ignore[arg-type]
                    hessians,  # type: ignore[arg-type]
                    rates,  # type: ignore[arg-type]
                    self.bagging_seed,
                    it,
                    self.row_offset,
                    self.row_comm,
                )
            return
        freq = self.bagging_freq
        if self.bagging and (it % freq == 0 or it == first_iter):
            # Bags are keyed on the global iteration: the bag of iteration it is the
            # one drawn at the last multiple of bagging_freq, so a run resumed from a
            # model (init_model) at any iteration uses the same bags as one that
            # never stopped.
            self.bag = self._bag(it - it % freq)

    def _bag(self, iteration: int) -> np.ndarray:
        """The bag drawn at ``iteration``: balanced or plain."""
        if self.positive is not None:
            cfg = self.cfg
            return balanced_bagged_rows(
                self.positive,
                cfg["pos_bagging_fraction"],
                cfg["neg_bagging_fraction"],
                self.bagging_seed,
                iteration,
                self.row_offset,
            )
        if self.queries is not None:
            return bagged_query_rows(
                self.queries, self.bagging_fraction, self.bagging_seed, iteration
            )
        return bagged_rows(
            self.n_samples, self.bagging_fraction, self.bagging_seed, iteration, self.row_offset
        )

    @property
    def bagged(self) -> bool:
        """Whether the current bag leaves rows out."""
        return self.bag is not self.all_rows

    def features(self, tree_index: int) -> np.ndarray:
        """The (global) features tree ``tree_index`` may split on."""
        return sampled_features(self.splittable, self.feature_fraction, self.ff_seed, tree_index)
