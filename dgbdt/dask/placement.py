"""Which worker trains on which partitions (pure functions, no Dask).

Rows are ordered by partition index on every number of ranks: rank r holds a
contiguous run of partitions, and the ranks follow each other in partition
order, so the global row order (on which keyed bagging and the tie-breaking of
equal gains depend) is the collection's own.  Runs follow where the data lives:
a worker's run starts at the first partition it holds, so with Dask's usual
placement (neighbouring partitions on one worker) nothing moves; a partition
inside another worker's run is moved there.  The holder of a replicated
partition is the first by address, so placement does not depend on which
replica Dask happens to report first.
"""

from __future__ import annotations

from collections.abc import Sequence


def assign_partitions(
    holders: Sequence[Sequence[str]], allowed: Sequence[str] | None = None
) -> list[tuple[str, list[int]]]:
    """``[(worker, partition indices), ...]`` in rank order.

    ``holders[i]`` are the workers holding partition i; ``allowed`` (when
    given) the workers that may train: a partition held only elsewhere goes
    to the run it falls in.  Workers that start no run take no part.
    """
    usable = None if allowed is None else set(allowed)
    owner: list[str | None] = []
    for workers in holders:
        candidates = sorted(w for w in workers if usable is None or w in usable)
        owner.append(candidates[0] if candidates else None)
    starts: dict[str, int] = {}
    for index, worker in enumerate(owner):
        if worker is not None and worker not in starts:
            starts[worker] = index
    if not starts:
        raise ValueError("no worker that may train holds any partition of the data")
    order = sorted(starts, key=starts.__getitem__)
    bounds = [starts[w] for w in order[1:]] + [len(holders)]
    runs, begin = [], 0
    for worker, end in zip(order, bounds, strict=True):
        runs.append((worker, list(range(begin, end))))
        begin = end
    return runs


def split_runs(n_parts: int, n_ranks: int) -> list[list[int]]:
    """Partitions 0..n_parts-1 cut into ``n_ranks`` contiguous runs of nearly equal
    length (validation sets' partitions: their metrics are sums over ranks)."""
    edges = [round(i * n_parts / n_ranks) for i in range(n_ranks + 1)]
    return [list(range(edges[r], edges[r + 1])) for r in range(n_ranks)]
