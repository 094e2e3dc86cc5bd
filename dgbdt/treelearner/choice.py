"""Which distributed tree learner, quantized or not: the rule the README shows.

A cost model of one tree per rank, calibrated on the time table of
``bench/bench_network.py`` (emulated links, K = 2, one thread per rank), and
kept simple enough to state in a sentence per learner:

* compute: building histograms dominates; it is proportional to the rows a
  rank bins times the features it builds, times log2(num_leaves) (each row is
  in about that many smaller children).  Data- and voting-parallel divide the
  rows by K, feature-parallel divides the features (and partitions every row
  on every rank, which costs a share of the compute that does not shrink);
* communication: data-parallel sends, per leaf, the histogram of every
  feature; voting the histograms of at most 2 * top_k elected features;
  feature-parallel only split records.  Seconds = bytes / bandwidth (the
  emulated links add no latency: the per-message costs of a real network
  make the many small messages of voting and feature-parallel dearer);
* quantized gradients send 4-byte integer words instead of 16-byte float
  pairs on most leaves (a third of the bytes in the table) and build faster
  on wide data, at a test AUC within 0.001 of float there: they are advised
  where they save at least a tenth of the time.

Feature-parallel needs every row on every rank (LightGBM's rule), so it is
only advised when the caller says the ranks hold the same rows.
"""

from __future__ import annotations

import math
from typing import Any

#: Seconds per (row x feature x log2(num_leaves)) of one core's histogram
#: work, and the share of a row-sharded fit's compute that is not histograms
#: (scans, partitions, gradients): measured on the wide set of the table.
SECONDS_PER_ROW_FEATURE = 8.7e-10
#: Bytes per histogram bin on the wire (float pairs).
FLOAT_BIN_BYTES = 16.0
#: Quantized against float, measured on the table's wide set (1 Gbit/s): a
#: third of the bytes (4-byte words on most leaves, 8 on the largest) and three
#: quarters of the compute (integer words in the blocked layout, which data
#: of BLOCKED_FEATURES features or more gets; narrower data is not measured
#: here, and is taken as no faster).
QUANTIZED_BYTES, QUANTIZED_COMPUTE, BLOCKED_FEATURES = 1.0 / 3.0, 0.75, 256
#: Voting's compute against data-parallel's (it scans every feature to vote).
VOTING_COMPUTE = 1.15
#: Advise quantized gradients when they save at least this share of the time
#: (their models differ a little: test AUC within 0.001 of float in the table).
QUANTIZE_SAVING = 0.1


def _estimates(
    rows: int, features: int, ranks: int, bytes_per_s: float, leaves: int, bins: int, top_k: int
) -> dict[str, tuple[float, float]]:
    """(compute, communication) seconds per tree, float, of each learner."""
    depth = max(math.log2(max(leaves, 2)), 1.0)
    sharded = SECONDS_PER_ROW_FEATURE * rows / ranks * features * depth
    # every rank partitions every row: the row-wise share of the work stays whole
    replicated = SECONDS_PER_ROW_FEATURE * rows * (features / ranks + 1.0) * depth
    share = (ranks - 1) / ranks  # what a reduce-scatter sends of its buffer
    histogram = features * bins * FLOAT_BIN_BYTES
    elected = min(features, 2 * top_k) * bins * FLOAT_BIN_BYTES
    return {
        "data": (sharded, leaves * histogram * share / bytes_per_s),
        "voting": (sharded * VOTING_COMPUTE, leaves * elected * share / bytes_per_s),
        "feature": (replicated, 0.0),
    }


def _check_sizes(**sizes: int) -> None:
    for name, value in sizes.items():
        if value < 1:
            raise ValueError(f"{name} must be at least 1, got {value}")


def suggest_tree_learner(
    num_rows: int,
    num_features: int,
    num_ranks: int,
    gbit_per_s: float = 10.0,
    *,
    num_leaves: int = 31,
    max_bin: int = 255,
    top_k: int = 20,
    same_rows_on_every_rank: bool = False,
) -> dict[str, Any]:
    """The params this rule advises for a distributed training, and why.

    Parameters
    ----------
    num_rows : int
        Rows of the whole training set (over all ranks).
    num_features : int
        Its features.
    num_ranks : int
        MPI ranks (one per machine).
    gbit_per_s : float, default=10.0
        The network's bandwidth per machine, in Gbit/s.
    num_leaves, max_bin, top_k : int
        The training's params of these names.
    same_rows_on_every_rank : bool, default=False
        Whether every rank holds every row (feature-parallel is then possible).

    Returns
    -------
    dict
        ``tree_learner``, ``use_quantized_grad``, the estimated seconds per
        tree of each learner considered (``estimates``) and ``reason``.
    """
    _check_sizes(num_rows=num_rows, num_features=num_features, num_ranks=num_ranks)
    if gbit_per_s <= 0:
        raise ValueError(f"gbit_per_s must be > 0, got {gbit_per_s}")
    if num_ranks == 1:
        return {"tree_learner": "serial", "use_quantized_grad": False, "estimates": {},
                "reason": "one rank: nothing to distribute"}  # fmt: skip
    found = _estimates(
        num_rows, num_features, num_ranks, gbit_per_s * 1e9 / 8, num_leaves, max_bin, top_k
    )
    if not same_rows_on_every_rank:
        del found["feature"]
    if num_features <= 2 * top_k:  # no vote is held: voting trains as data-parallel
        del found["voting"]
    faster = QUANTIZED_COMPUTE if num_features >= BLOCKED_FEATURES else 1.0
    for name, (compute, comm) in list(found.items()):
        found[f"{name}+quantized"] = (compute * faster, comm * QUANTIZED_BYTES)
    totals = {name: compute + comm for name, (compute, comm) in found.items()}
    floats = [name for name in totals if "+" not in name]
    best = min(floats, key=lambda name: (totals[name], name != "data"))
    if totals[f"{best}+quantized"] < (1.0 - QUANTIZE_SAVING) * totals[best]:
        best = f"{best}+quantized"
    return _advice(best, *found[best], {name: round(t, 6) for name, t in totals.items()})


def _advice(best: str, compute: float, comm: float, estimates: dict[str, float]) -> dict[str, Any]:
    learner, _, quantized = best.partition("+")
    return {
        "tree_learner": learner,
        "use_quantized_grad": bool(quantized),
        "estimates": estimates,
        "reason": (
            f"{learner}-parallel{' with quantized gradients' if quantized else ''}: about "
            f"{compute + comm:.3g} s per tree per rank, "
            f"{comm / (compute + comm):.0%} of it communicating"
        ),
    }
