"""The client's side of a Dask training: where the ranks run, watching them, and
going on from a snapshot when a worker is lost.

One training at a time per cluster (a Dask ``Semaphore``): a second waits.
Before each attempt a worker not heard from (its heartbeat) for
``PING_SECONDS`` (paused, hung) takes no part.  The ranks are watched
until rank 0's result arrives; the training ends with an error naming the
worker when a rank fails, a worker leaves the cluster, or a rank is still
silent ``time_out`` after another finished.  With ``snapshot_freq`` a lost or
silent worker costs a restart from the newest snapshot (up to
``max_restarts``): the model is the one an uninterrupted training gives.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from distributed import Semaphore, fire_and_forget, wait

from ..log import log_warning
from ..params.lightgbm_keys import lightgbm_canonical
from ..params.table import ALIASES, PARAMS, parse_param
from .collections import bundles, no_rows
from .jobs import latest_snapshot, remove_snapshots
from .placement import assign_partitions, split_runs
from .task import RankTask
from .worker import RankFailed, Signals, run_rank

#: How long since a worker's last heartbeat before it is left out of a training.
PING_SECONDS = 5.0
#: How long a rank's process may take to start and join the group.
JOIN_SECONDS = 120.0
#: After one rank raised an error, how long the others get to raise it too.
ALIKE_SECONDS = 1.0
#: After one rank fails, how long the others get to report before they are
#: named as silent.
REPORT_SECONDS = 5.0


class TrainingError(RuntimeError):
    """A Dask training ended on a failure (a rank's error, a lost or silent worker)."""


@dataclasses.dataclass
class Plan:
    """One training's fixed parts: the job, the partitions and the rules."""

    job: Callable[..., Any]
    parts: list[Any]  # futures of the training partitions, in partition order
    evals: list[list[Any]]  # futures of each validation set's partitions
    empty_evals: list[Any]  # a zero-row partition of each validation set
    learner: str
    time_out_minutes: float
    snapshot_freq: int
    max_restarts: int
    training_at: list[int] = dataclasses.field(default_factory=list)  # evals that are the data
    fields: Sequence[Any] = ()  # the collections (data, label, ...), to compute parts anew
    eval_fields: Sequence[Sequence[Any]] = ()
    training: str = dataclasses.field(default_factory=lambda: uuid.uuid4().hex[:12])


class _Failure(Exception):
    def __init__(
        self, message: str, retry: bool, error: BaseException | None = None, raised: bool = False
    ) -> None:
        super().__init__(message)
        self.retry, self.error = retry, error
        self.raised = raised  # a rank raised an error (the others may raise it too)


def on_each(
    client: Any, function: Callable[..., Any], *args: Any, workers: Sequence[str], seconds: float
) -> dict[str, Any]:
    """``function(*args)`` on each of ``workers``: the results of those that answer
    within ``seconds`` (a paused worker never does; its task is cancelled)."""
    futures = {
        w: client.submit(function, *args, workers=[w], allow_other_workers=False, pure=False)
        for w in workers
    }
    with contextlib.suppress(TimeoutError):
        wait(list(futures.values()), timeout=seconds)
    late = [f for f in futures.values() if f.status == "pending"]
    if late:
        client.cancel(late)
    return {w: f.result() for w, f in futures.items() if f.status == "finished"}


def _heartbeat_ages(dask_scheduler: Any) -> dict[str, float]:
    """Seconds since each worker's last heartbeat, on the scheduler's clock."""
    now = time.time()
    return {w: now - state.last_seen for w, state in dask_scheduler.workers.items()}


def responsive_workers(client: Any, seconds: float | None = None) -> list[str]:
    """The workers heard from within ``seconds`` (PING_SECONDS): a paused worker
    stays registered until Dask's worker-ttl, but its heartbeats stop.  (Read
    on the scheduler: a worker whose threads are all busy still counts.)"""
    limit = PING_SECONDS if seconds is None else seconds
    ages = client.run_on_scheduler(_heartbeat_ages)
    return sorted(w for w, age in ages.items() if age < limit)


def _anew(
    client: Any, futures: list[Any], fields: Sequence[Any], healthy: list[str], salt: str
) -> list[Any]:
    """``futures`` with the partitions no healthy worker holds computed anew on
    the healthy ones (a paused worker keeps its data out of reach)."""
    who = client.who_has(futures)
    lost = [i for i, f in enumerate(futures) if not set(who.get(f.key, ())) & set(healthy)]
    if not lost or not fields:
        return futures
    fresh = bundles(fields, salt=salt)
    computed = client.compute([fresh[i] for i in lost], workers=healthy)
    try:
        wait(computed, timeout=JOIN_SECONDS)
    except TimeoutError:
        raise TrainingError(
            f"dgbdt.dask: partitions {lost} are held by workers that do not answer and could "
            f"not be computed anew within {JOIN_SECONDS:.0f} s (persisted there?)"
        ) from None
    out = list(futures)
    for i, future in zip(lost, computed, strict=True):
        out[i] = future
    return out


def _ranks(client: Any, plan: Plan, healthy: list[str]) -> list[tuple[str, list[int]]]:
    """(worker, training partitions) per rank."""
    wait(plan.parts + [f for e in plan.evals for f in e])
    for future in plan.parts + [f for e in plan.evals for f in e]:
        if future.status == "error":  # a partition's check failed: its message as it is
            raise future.exception()
    salt = uuid.uuid4().hex[:8]
    plan.parts = _anew(client, plan.parts, plan.fields, healthy, salt)
    for v, fields in enumerate(plan.eval_fields):
        plan.evals[v] = _anew(client, plan.evals[v], fields, healthy, salt)
    who = client.who_has(plan.parts)
    holders = [who.get(f.key, ()) for f in plan.parts]
    runs = assign_partitions(holders, healthy)
    if plan.learner == "feature":  # every rank needs every row
        return [(w, list(range(len(plan.parts)))) for w, _ in runs]
    return runs


def _interface() -> str:
    return os.environ.get("DGBDT_NETWORK_INTERFACE", "")


def _host(address: str) -> str:
    return address.split("://")[-1].rsplit(":", 1)[0]


def provider_for(workers: Sequence[str]) -> str:
    """libfabric's provider for ranks on ``workers``: shared memory when they all
    share one machine (5x lower latency than TCP on loopback), TCP otherwise."""
    return "shm" if len({_host(w) for w in workers}) == 1 else "tcp"


def _submit(
    client: Any, plan: Plan, attempt: int, ranks: list[tuple[str, list[int]]], resume: Any
) -> list[Any]:
    size = len(ranks)
    eval_runs = [split_runs(len(parts), size) for parts in plan.evals]
    provider = provider_for([worker for worker, _ in ranks])
    threads = client.nthreads()
    futures = []
    for r, (worker, indices) in enumerate(ranks):
        evals = [_eval_share(plan, v, run[r]) for v, run in enumerate(eval_runs)]
        task = RankTask(
            training=plan.training,
            attempt=attempt,
            rank=r,
            size=size,
            job=plan.job,
            n_parts=len(indices),
            eval_counts=[len(e) for e in evals],
            time_out_minutes=plan.time_out_minutes,
            join_seconds=JOIN_SECONDS,
            interface=_interface(),
            threads=int(threads.get(worker, 1)),
            provider=provider,
            snapshot_freq=plan.snapshot_freq,
            resume=resume,
        )
        args = [plan.parts[i] for i in indices] + [f for e in evals for f in e]
        key = f"dgbdt-rank-{plan.training}-{attempt}-{r}"
        futures.append(
            client.submit(
                run_rank, task, *args, workers=[worker], allow_other_workers=False, key=key
            )
        )
    return futures


def _eval_share(plan: Plan, v: int, run: list[int]) -> list[Any]:
    """A rank's partitions of validation set ``v``: every one under feature-parallel
    (replicated rows), its run otherwise, or a zero-row partition for its columns."""
    if plan.learner == "feature":
        return list(plan.evals[v])
    return [plan.evals[v][i] for i in run] or [plan.empty_evals[v]]


def _describe(ranks: list[tuple[str, list[int]]], r: int) -> str:
    return f"rank {r} of {len(ranks)} on worker {ranks[r][0]}"


def _first_error(futures: list[Any], ranks: list[tuple[str, list[int]]]) -> _Failure | None:
    for r, future in enumerate(futures):
        if future.status == "error":
            error = future.exception()
            if isinstance(error, RankFailed):
                return _Failure(str(error), error.retry, raised=error.cause is not None)
            return _Failure(f"{_describe(ranks, r)}: {error}", False, error)
    return None


def _lost(client: Any, ranks: list[tuple[str, list[int]]]) -> _Failure | None:
    alive = set(client.scheduler_info(n_workers=-1)["workers"])
    gone = [r for r, (worker, _) in enumerate(ranks) if worker not in alive]
    if not gone:
        return None
    names = "; ".join(_describe(ranks, r) for r in gone)
    return _Failure(f"{names}: the worker left the cluster during training (killed?)", True)


def _watch(
    client: Any, futures: list[Any], ranks: list[tuple[str, list[int]]], limit: float
) -> Any:
    """Rank 0's result, or a _Failure."""
    first_done = None
    while True:
        failure = _lost(client, ranks) or _first_error(futures, ranks)
        if failure is not None:
            raise failure
        finished = [f.status == "finished" for f in futures]
        if all(finished):
            return futures[0].result()
        if any(finished):
            first_done = first_done or time.monotonic()
            if time.monotonic() - first_done > limit:
                silent = [r for r, ok in enumerate(finished) if not ok]
                names = "; ".join(_describe(ranks, r) for r in silent)
                raise _Failure(f"{names}: silent {limit:.4g} s after another rank finished", True)
        pending = [f for f in futures if f.status == "pending"]
        with contextlib.suppress(TimeoutError):  # returns as soon as a rank ends
            wait(pending, timeout=0.25, return_when="FIRST_COMPLETED")


def _silent_ranks(
    client: Any, futures: list[Any], ranks: list[tuple[str, list[int]]], named: str
) -> str:
    """After a failure: the ranks still running once the others were told to stop
    (paused, overloaded or lost workers), but those ``named`` already."""
    with contextlib.suppress(TimeoutError):
        wait(futures, timeout=REPORT_SECONDS)
    alive = set(client.scheduler_info(n_workers=-1)["workers"])
    lines = []
    for r, future in enumerate(futures):
        if future.status == "pending" and f"rank {r} of" not in named:
            why = (
                "did not answer (paused or overloaded)"
                if ranks[r][0] in alive
                else "left the cluster (killed?)"
            )
            lines.append(f"\n{_describe(ranks, r)}: {why}")
    return "".join(lines)


def _alike(futures: list[Any]) -> BaseException | None:
    """The error every rank raised alike (bad params, bad data: the user's error,
    given as it is), or None; waits ALIKE_SECONDS for the ranks to report."""
    with contextlib.suppress(TimeoutError):
        wait(futures, timeout=ALIKE_SECONDS)
    causes = [
        getattr(f.exception(), "cause", None) if f.status == "error" else None for f in futures
    ]
    if any(c is None for c in causes) or len({(type(c), str(c)) for c in causes}) != 1:
        return None
    return causes[0]


def _attempt(client: Any, plan: Plan, attempt: int, healthy: list[str], resume: Any) -> Any:
    ranks = _ranks(client, plan, healthy)
    signals = Signals(plan.training, attempt, client)
    futures = _submit(client, plan, attempt, ranks, resume)
    try:
        return _watch(client, futures, ranks, plan.time_out_minutes * 60.0 + 10.0)
    except _Failure as failure:
        same = _alike(futures) if failure.raised else None
        if same is not None:
            raise _Failure(str(same), False, same) from None
        signals.stop.set()
        silent = _silent_ranks(client, futures, ranks, str(failure))
        raise _Failure(
            str(failure) + silent, failure.retry or bool(silent), failure.error
        ) from None
    finally:
        signals.stop.set()
        client.cancel([f for f in futures if f.status == "pending"])
        with contextlib.suppress(Exception):  # (clearing an Event nobody waits on deletes it)
            signals.port.delete()
            signals.stop.clear()
            signals.ready.clear()


def _resume_point(client: Any, plan: Plan, healthy: list[str]) -> Any:
    """(model text, rounds done, init model iterations) of the newest snapshot a
    healthy worker holds, or None."""
    found = on_each(client, latest_snapshot, plan.training, workers=healthy, seconds=PING_SECONDS)
    best = max(
        (s for s in found.values() if isinstance(s, tuple)), key=lambda s: s[0], default=None
    )
    return None if best is None else (best[2], best[0], best[1])


@contextlib.contextmanager
def one_training_at_a_time(client: Any) -> Iterator[None]:
    """Trainings on one cluster run one after another (two groups would compete
    for the same workers' cores and ports)."""
    lock = Semaphore(
        max_leases=1, name="dgbdt-training", scheduler_rpc=client.scheduler, loop=client.loop
    )
    lock.acquire()
    try:
        yield
    finally:
        lock.release()


def run(client: Any, plan: Plan) -> Any:
    """Rank 0's result of the training ``plan`` on ``client``'s cluster."""
    resume = None
    with one_training_at_a_time(client):
        try:
            for attempt in range(plan.max_restarts + 1):
                healthy = responsive_workers(client)
                if not healthy:
                    raise TrainingError("no Dask worker answers: nothing to train on")
                try:
                    return _attempt(client, plan, attempt, healthy, resume)
                except _Failure as failure:
                    last = attempt == plan.max_restarts or plan.snapshot_freq <= 0
                    if not failure.retry or last:
                        if failure.error is not None:
                            raise failure.error from None
                        raise TrainingError(_final_message(failure, plan, attempt)) from None
                    resume = _resume_point(client, plan, responsive_workers(client)) or resume
        finally:
            if plan.snapshot_freq > 0:  # on every worker, without waiting for a paused one
                for worker in client.scheduler_info(n_workers=-1)["workers"]:
                    fire_and_forget(
                        client.submit(remove_snapshots, plan.training, workers=[worker], pure=False)
                    )
    raise AssertionError("unreachable")  # pragma: no cover


def _final_message(failure: _Failure, plan: Plan, attempt: int) -> str:
    text = f"dgbdt.dask: training failed: {failure}"
    if failure.retry and plan.snapshot_freq > 0:
        text += (
            f"\n(gave up after {attempt} restarts from snapshots: max_restarts={plan.max_restarts})"
        )
    elif failure.retry:
        text += (
            "\n(set snapshot_freq in params to resume from a snapshot on the workers that remain)"
        )
    return text


def compute_parts(client: Any, bundles: Sequence[Any], healthy: list[str]) -> list[Any]:
    """Futures of the partition bundles, computed on the healthy workers."""
    return list(client.compute(list(bundles), workers=healthy))


_LEARNERS = {"data", "feature", "voting"}


def _learner(params: dict[str, Any], serial_means_data: bool) -> str:
    """The distributed learner of ``params`` (their tree_learner keys removed):
    data-parallel unless data, feature or voting is named (as lightgbm.dask:
    another value warns; ``serial_means_data``: the estimators' default
    "serial" means data, quietly)."""
    keys = [k for k in params if ALIASES.get(str(k).strip()) == "tree_learner"]
    raw = params[keys[-1]] if keys else "data"
    for key in keys:
        del params[key]
    choices = PARAMS["tree_learner"].choices
    assert choices is not None  # tree_learner is a choice parameter
    learner = choices.get(str(raw).strip().lower())
    if learner in _LEARNERS:
        return str(learner)
    if not (serial_means_data and learner == "serial"):
        log_warning(
            f'Parameter tree_learner set to {raw}, which is not allowed. Using "data" as default'
        )
    return "data"


def training_rules(
    params: dict[str, Any], serial_means_data: bool = False
) -> tuple[dict[str, Any], str, float, int]:
    """(params for each rank, learner, time_out in minutes, snapshot_freq): the
    learner as :func:`_learner` says; ``snapshot_freq`` (alias ``save_period``)
    is the front end's and leaves the params."""
    params = dict(params)
    learner = params["tree_learner"] = _learner(params, serial_means_data)
    time_out = [v for k, v in params.items() if ALIASES.get(str(k).strip()) == "time_out"]
    minutes = float(parse_param("time_out", time_out[-1])) if time_out else 120.0
    snapshot_keys = [k for k in params if lightgbm_canonical(str(k)) == "snapshot_freq"]
    freq = int(params[snapshot_keys[-1]]) if snapshot_keys else 0
    for key in snapshot_keys:
        del params[key]
    return params, learner, minutes, freq


def training_positions(
    data: Any, label: Any, evals: Sequence[Sequence[Any]]
) -> tuple[list[int], list[Sequence[Any]]]:
    """The validation sets that are the training collections themselves (by
    identity, as LightGBM: they are evaluated as the training data, "training"),
    and the others."""
    at = [i for i, v in enumerate(evals) if v[0] is data and v[1] is label]
    return at, [v for i, v in enumerate(evals) if i not in at]


def plan_training(
    client: Any,
    job: Callable[..., Any],
    params: dict[str, Any],
    fields: Sequence[Any],
    eval_fields: Sequence[Sequence[Any]],
    max_restarts: int,
    serial_means_data: bool = False,
) -> tuple[Plan, dict[str, Any]]:
    """The partitions computed on the responsive workers and the training's plan;
    ``job`` is completed with the params each rank trains with."""
    if isinstance(max_restarts, bool) or not isinstance(max_restarts, int) or max_restarts < 0:
        raise ValueError(f"max_restarts must be an integer >= 0, got {max_restarts!r}")
    rank_params, learner, minutes, freq = training_rules(params, serial_means_data)
    healthy = responsive_workers(client)
    # keys of this training's own (salted): an earlier training's partitions, on
    # a worker that no longer answers, are never handed back
    salt = uuid.uuid4().hex[:12]
    parts = compute_parts(client, bundles(fields, salt=salt), healthy)
    at, others = training_positions(fields[0], fields[1], eval_fields)
    evals = [compute_parts(client, bundles(f, salt=salt), healthy) for f in others]
    empty = [client.submit(no_rows, e[0], pure=False) for e in evals]
    plan = Plan(job, parts, evals, empty, learner, minutes, freq, max_restarts, at, fields, others)
    return plan, rank_params
