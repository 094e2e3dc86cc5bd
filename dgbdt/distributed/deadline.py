"""Deadlines for MPI collectives: no dgbdt job waits forever.

Every blocking collective of :class:`dgbdt.distributed.comm.MPIComm` is bracketed by
:meth:`Watchdog.enter` / :meth:`Watchdog.leave` (two attribute writes).  A
daemon thread wakes a few times a second; when the main thread has been in one
collective longer than its limit (``time_out`` minutes, LightGBM's key, or a
slow phase's longer allowance), it

1. asks every other rank, point to point on a duplicated communicator, where it
   is (a rank waiting in a collective for over a second answers with the
   collective's number, kind and caller; a rank that is computing, stopped,
   gone or training alone with ``tree_learner='serial'`` does not answer);
2. prints one message naming the collective, the ranks that did not join and a
   hint at the likely cause (printed by the lowest rank that timed out or
   answered, so the job shows it once);
3. ends the job: ``MPI_Abort`` from this thread (mpi4py releases the GIL in
   blocking calls, and MPICH gives ``MPI_THREAD_MULTIPLE``), or, when MPI was
   initialised with less thread support or is not initialised yet, the message
   and ``os._exit(1)``, after which the launcher ends every rank.

MPICH progresses non-blocking requests only inside MPI calls, so the exchange
polls ``Iprobe`` in a short loop, never a long sleep.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Iterable, Mapping
from types import FrameType
from typing import Any

#: LightGBM's default ``time_out``: 120 minutes.
DEFAULT_TIME_OUT_MINUTES = 120.0
#: Phases that are legitimately slow on one rank (a cold Numba compile, rank 0
#: decompressing a gzip file or writing a snapshot) wait at least this long.
SLOW_PHASE_SECONDS = 30 * 60.0
#: How long a rank that timed out waits for the others' answers.
ANSWER_SECONDS = 3.0
#: A rank answers queries once it has waited this long in a collective.
ANSWER_AFTER_SECONDS = 1.0
_QUERY_TAG, _ANSWER_TAG = 7101, 7102
_monotonic = time.monotonic
_get_ident = threading.get_ident
#: (number, kind, entered at, limit, slow phase or None, thread) of a collective waited in.
_Current = tuple[int, str, float, float, "str | None", int]


def _where(frame: FrameType | None) -> str:
    """'module.function (file:line)' of the first frames outside comm/deadline."""
    parts: list[str] = []
    while frame is not None and len(parts) < 2:
        name = os.path.basename(frame.f_code.co_filename)
        if name not in ("comm.py", "deadline.py", "threading.py"):
            parts.append(f"{frame.f_code.co_name} ({name}:{frame.f_lineno})")
        frame = frame.f_back
    return " <- ".join(parts) or "?"


class Watchdog:
    """Ends the job when a collective outlives its deadline (see the module doc)."""

    def __init__(self, rank: int, size: int) -> None:
        self.rank, self.size = rank, size
        self.limit_seconds = DEFAULT_TIME_OUT_MINUTES * 60.0
        # (number, kind, entered at, thread) of the collective waited in
        self.current: tuple[int, str, float, int] | None = None
        self.number = 0  # collectives entered so far
        self.phases: list[tuple[str, float]] = []  # stack of (reason, seconds)
        self.probe: Any = None  # a duplicated communicator, once MPI is up
        self.MPI: Any = None  # mpi4py.MPI (untyped)
        self._thread: threading.Thread | None = None
        self._sent: list[Any] = []  # requests of answers in flight (kept alive)
        # A group joined by a front end asks no peer (a send to a dead peer can
        # block) and tells its supervisor where it waits through a file.
        self.queries = True
        self.status_path: str | None = None
        self._reported = 0  # the collective whose status was last written

    # -- the main thread's side ----------------------------------------------
    def set_time_out(self, minutes: float) -> None:
        self.limit_seconds = float(minutes) * 60.0

    def attach(self, MPI: Any, comm: Any) -> None:
        """MPI is initialised: queries can be exchanged (with full thread support)."""
        self.MPI = MPI
        if self.queries and MPI.Query_thread() >= MPI.THREAD_MULTIPLE:
            self.probe = comm.Dup()

    def enter(self, kind: str) -> None:
        """A thread enters collective ``kind`` (two attribute writes: this runs
        around every collective; the thread is named in the message)."""
        self.number += 1
        self.current = (self.number, kind, _monotonic(), _get_ident())

    def leave(self) -> None:
        self.current = None

    def start(self) -> None:
        """Start the watchdog thread (once; only with several ranks)."""
        if self._thread is None and self.size > 1:
            self._thread = threading.Thread(target=self._watch, name="dgbdt-deadline", daemon=True)
            self._thread.start()

    def _limit(self) -> tuple[float, str | None]:
        """(seconds, slow phase or None) a collective entered now may wait."""
        if self.phases:
            reason, seconds = self.phases[-1]
            return max(self.limit_seconds, seconds), reason
        return self.limit_seconds, None

    # -- the watchdog thread ---------------------------------------------------
    def _watch(self) -> None:
        while True:
            entered = self.current
            if entered is None:
                time.sleep(0.25)
                continue
            limit, reason = self._limit()
            if self.current is not entered:  # left meanwhile (and its phase with it)
                time.sleep(0.25)  # not at once: collectives follow each other
                continue
            current = (*entered[:3], limit, reason, entered[3])
            waited = time.monotonic() - current[2]
            if waited > limit and self._expire(current, entered):
                return
            if waited > ANSWER_AFTER_SECONDS and self.probe is not None:
                self._answer_queries(self._status(current))
            if waited > ANSWER_AFTER_SECONDS and self._reported != current[0]:
                self._report(current)
            time.sleep(0.1 if waited > ANSWER_AFTER_SECONDS else 0.25)

    def _report(self, current: _Current) -> None:
        """Write where this rank waits to ``status_path`` (atomically), for a
        supervisor that may have to end it: its message then names the collective."""
        self._reported = current[0]
        if self.status_path is None:
            return
        status = self._status(current)
        text = (
            f"rank {self.rank} waited in {status['kind']} #{status['number']} in {status['where']}"
        )
        with open(self.status_path + ".tmp", "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(self.status_path + ".tmp", self.status_path)

    def _status(self, current: _Current) -> dict[str, Any]:
        number, kind, entered, _, reason, thread = current
        frame = sys._current_frames().get(thread)
        return {
            "rank": self.rank,
            "number": number,
            "kind": kind,
            "where": _where(frame),
            "waited": time.monotonic() - entered,
            "phase": reason,
        }

    def _answer_queries(self, status: dict[str, Any]) -> dict[int, dict[str, Any]]:
        """Answer every pending query with this rank's status; returns the askers'
        own statuses (a rank that asks has timed out in a collective too)."""
        MPI = self.MPI
        askers: dict[int, dict[str, Any]] = {}
        info = MPI.Status()
        while self.probe.iprobe(source=MPI.ANY_SOURCE, tag=_QUERY_TAG, status=info):
            theirs = self.probe.recv(source=info.Get_source(), tag=_QUERY_TAG)
            askers[theirs["rank"]] = theirs
            self._sent.append(self.probe.isend(status, dest=info.Get_source(), tag=_ANSWER_TAG))
        return askers

    def _ask_everyone(self, status: dict[str, Any]) -> dict[int, dict[str, Any]]:
        """Statuses of the ranks that answer within ANSWER_SECONDS (point to point)."""
        for r in range(self.size):
            if r != self.rank:
                self._sent.append(self.probe.isend(status, dest=r, tag=_QUERY_TAG))
        answers: dict[int, dict[str, Any]] = {}
        deadline = time.monotonic() + ANSWER_SECONDS
        while time.monotonic() < deadline and len(answers) < self.size - 1:
            answers.update(self._answer_queries(status))
            info = self.MPI.Status()
            if self.probe.iprobe(source=self.MPI.ANY_SOURCE, tag=_ANSWER_TAG, status=info):
                theirs = self.probe.recv(source=info.Get_source(), tag=_ANSWER_TAG)
                answers[theirs["rank"]] = theirs
            else:
                time.sleep(0.002)
        return answers

    def _expire(self, current: _Current, entered: tuple[int, str, float, int]) -> bool:
        """End the job (False when the collective completed while the others
        were being asked: nothing to end)."""
        status = self._status(current)
        answers = self._ask_everyone(status) if self.probe is not None else None
        if self.current is not entered:
            return False
        message = expiry_message(status, answers, self.size, current[3], self.queries)
        if answers is None or self.rank == min([self.rank, *answers]):
            sys.stderr.write(message + "\n")
        else:
            time.sleep(ANSWER_SECONDS)  # the lowest rank prints and aborts first
            sys.stderr.write(
                f"dgbdt: rank {self.rank}: {status['kind']} #{status['number']} "
                "timed out (see the lowest rank's message)\n"
            )
        sys.stderr.flush()
        if self.MPI is not None and self.probe is not None:
            abort_after_output(self.MPI.COMM_WORLD, 1)
        os._exit(1)


def _ranks(ranks: Iterable[int]) -> str:
    ordered = sorted(ranks)
    return ("rank " if len(ordered) == 1 else "ranks ") + ", ".join(map(str, ordered))


#: How long a rank about to abort lets the launcher forward what it printed:
#: MPI_Abort kills the launcher's forwarding pipes, which cut a traceback short
#: (seen on a loaded machine: two lines of a traceback arrived).
OUTPUT_GRACE_SECONDS = 0.25


def _flush_output() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed or broken stream: nothing to forward
            pass


def abort_after_output(mpi_comm: Any, code: int) -> None:
    """Flush stdout and stderr, give the launcher a moment to forward them, then
    ``MPI_Abort`` every rank of ``mpi_comm``."""
    _flush_output()
    time.sleep(OUTPUT_GRACE_SECONDS)
    mpi_comm.Abort(code)


def expiry_message(
    status: Mapping[str, Any],
    answers: Mapping[int, Mapping[str, Any]] | None,
    size: int,
    limit: float,
    queries: bool = True,
) -> str:
    """The one message a timed-out collective prints (``answers``: the statuses of
    the ranks that answered, or None when no rank could be asked; ``queries``
    False: a front end's group, whose ranks are not asked)."""
    head = (
        f"dgbdt: error: MPI collective {status['kind']} #{status['number']} in "
        f"{status['where']} did not complete within {limit:.4g} s"
    )
    head += (
        f" (the allowance of a slow phase: {status['phase']})"
        if status["phase"]
        else " (time_out; LightGBM's key, in minutes)"
    )
    if answers is None and not queries:
        return (
            head + f" on rank {status['rank']} of {size}; a rank did not join (the front end "
            "names the workers that did not answer). If a rank is legitimately slower, "
            "raise time_out (minutes)."
        )
    if answers is None:
        return (
            head + f" on rank {status['rank']} of {size}; the other ranks could not be "
            "asked (MPI lacks full thread support or is not initialised). A rank did not "
            "join: it failed, exited, is stopped, or takes another code path. If a rank "
            "is legitimately slower, raise time_out (minutes)."
        )
    here = {status["rank"]: status, **answers}
    same = [
        r for r, s in here.items() if (s["number"], s["kind"]) == (status["number"], status["kind"])
    ]
    elsewhere = {r: s for r, s in here.items() if r not in same}
    silent = [r for r in range(size) if r not in here]
    missing = silent + list(elsewhere)
    lines = [
        head
        + f": {_ranks(same)} waited in it; "
        + (f"{_ranks(missing)} did not join." if missing else "every rank is in it.")
    ]
    for r, s in sorted(elsewhere.items()):
        lines.append(
            f"  rank {r} waits in {s['kind']} #{s['number']} in {s['where']} instead: "
            "the ranks took different code paths (different params, callbacks, "
            "validation sets or data on some ranks?)"
        )
    if silent:
        lines.append(
            f"  {_ranks(silent)} did not answer: busy outside dgbdt's collectives "
            "(training alone with tree_learner='serial', a slow callback or data "
            "loading), stopped, or exited without calling train"
        )
    lines.append("  If a rank is legitimately slower, raise time_out (minutes).")
    return "\n".join(lines)
