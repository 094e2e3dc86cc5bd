"""Communication: a few buffer-based collectives, counted byte by byte.

``SerialComm`` is the one-process implementation (no MPI initialised);
``MPIComm`` wraps mpi4py's upper-case buffer methods (``Allreduce``,
``Reduce_scatter``, ``Allgatherv``, ``Bcast``).  Only a few once-per-training
exchanges of small Python objects (feature-parallel column blocks' bin
mappers, the scikit-learn classifier's label sets) use ``allgather_object``
(mpi4py's pickled ``allgather``); they are not counted.  Every collective has
a deadline (dgbdt.distributed.deadline).

Byte counts: each call adds the size of *this rank's send buffer* to its kind
(``allreduce``, ``reduce_scatter``, ``allgather``, ``bcast``, ``scatter``; an
``allgatherv`` is two calls: the sizes, then the data), so learners can be
compared exactly; what the network carries on top (e.g. a ring allreduce
sends about twice its buffer) is left to the scaling model in ``bench/``.
``begin_tree()`` / ``end_tree()`` bracket what one tree costs (growth and the
training-score update); evaluation traffic counts in the totals only.
"""

from __future__ import annotations

import contextlib
import faulthandler
import hashlib
import os
import queue
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from types import TracebackType
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from .deadline import SLOW_PHASE_SECONDS, Watchdog, abort_after_output

KINDS = ("allreduce", "reduce_scatter", "allgather", "bcast", "scatter")

_T = TypeVar("_T")
_clock = time.perf_counter


class CommStats:
    """Calls, bytes and seconds per collective kind, in total and per tree.

    Seconds are wall time inside the collective on this rank (waiting for the
    slowest rank included); a pipelined exchange counts the time its
    communication thread spent, which overlaps computation."""

    def __init__(self) -> None:
        self.calls = dict.fromkeys(KINDS, 0)
        self.bytes = dict.fromkeys(KINDS, 0)
        self.seconds = dict.fromkeys(KINDS, 0.0)
        self.bytes_per_tree: list[int] = []
        self.seconds_per_tree: list[float] = []
        # per kind, inside trees only (what a tree costs, without set-up and evaluation)
        self.tree_calls = dict.fromkeys(KINDS, 0)
        self.tree_bytes = dict.fromkeys(KINDS, 0)
        self._in_tree = False

    def add(self, kind: str, nbytes: int, seconds: float = 0.0) -> None:
        self.calls[kind] += 1
        self.bytes[kind] += int(nbytes)
        self.seconds[kind] += seconds
        if self._in_tree:
            self.bytes_per_tree[-1] += int(nbytes)
            self.seconds_per_tree[-1] += seconds
            self.tree_calls[kind] += 1
            self.tree_bytes[kind] += int(nbytes)

    def begin_tree(self) -> None:
        self.bytes_per_tree.append(0)
        self.seconds_per_tree.append(0.0)
        self._in_tree = True

    def end_tree(self) -> None:
        """Bytes after this (evaluation, ...) count in the totals only."""
        self._in_tree = False

    def as_dict(self) -> dict[str, Any]:
        return {
            "calls": dict(self.calls),
            "bytes": dict(self.bytes),
            "total_bytes": sum(self.bytes.values()),
            "bytes_per_tree": list(self.bytes_per_tree),
            "seconds": dict(self.seconds),
            "total_seconds": sum(self.seconds.values()),
            "seconds_per_tree": list(self.seconds_per_tree),
            "tree_calls": dict(self.tree_calls),
            "tree_bytes": dict(self.tree_bytes),
        }


class SerialComm:
    """One process: every collective is a local copy, and nothing is sent."""

    rank = 0
    size = 1
    local_size = 1  # ranks on this machine

    def __init__(self) -> None:
        self.stats = CommStats()

    def allreduce(self, values: npt.ArrayLike, op: str = "sum") -> np.ndarray:
        return np.array(values, copy=True)

    def reduce_scatter(self, values: np.ndarray, counts: Sequence[int] | np.ndarray) -> np.ndarray:
        return np.array(values[: counts[0]], copy=True)

    def reduce_scatter_start(self, values: np.ndarray, counts: Sequence[int]) -> Pending:
        """A :meth:`reduce_scatter` started on the communication thread, which
        runs the started ones in order while the caller computes; ``wait()``
        gives its result.  Until every started one is waited for, the caller
        enters no other collective (every rank must see the same order)."""
        return Pending(self.reduce_scatter(values, counts))

    def allgather(self, values: npt.ArrayLike) -> np.ndarray:
        """(size, *shape) array of every rank's ``values`` (same shape on all ranks)."""
        return np.array(values, copy=True)[None]

    def allgatherv(self, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Concatenation of every rank's 1-D ``values`` and the per-rank counts."""
        return np.array(values, copy=True), np.array([len(values)])

    def bcast(self, values: npt.ArrayLike, root: int = 0) -> np.ndarray:
        return np.array(values, copy=True)

    def bcast_bytes(self, data: bytes, root: int = 0) -> bytes:
        return bytes(data)

    def scatter_bytes(self, parts: Sequence[bytes], root: int = 0) -> bytes:
        """Rank r receives ``parts[r]`` of the root's list of byte strings."""
        return bytes(parts[0])

    def allgather_object(self, obj: Any) -> list[Any]:
        """Every rank's picklable ``obj``, as a list (small, once-per-training data)."""
        return [obj]

    def set_time_out(self, minutes: float) -> None:
        """Deadline of every later collective (one process: nothing to wait for)."""

    def slow_phase(
        self, reason: str, seconds: float | None = None
    ) -> contextlib.AbstractContextManager[None]:
        """A phase legitimately slow on some rank: its collectives wait longer."""
        return contextlib.nullcontext()

    def abort(self, code: int = 1) -> None:
        sys.exit(code)

    # Named collectives for the layers above the learners: each says what it
    # computes, so callers do not hand-build one-element arrays and ops.

    def any_rank(self, flag: object) -> bool:
        """True on every rank when ``flag`` is true on at least one rank."""
        return bool(self.allreduce(np.array([bool(flag)], np.int64))[0])

    def every_rank(self, flag: object) -> bool:
        """True on every rank when ``flag`` is true on all ranks."""
        return bool(self.allreduce(np.array([bool(flag)], np.int64), op="min")[0])

    def total(self, values: npt.ArrayLike) -> np.ndarray:
        """Element-wise sum over ranks of a float64 array (or scalar)."""
        return self.allreduce(np.asarray(values, np.float64))

    def concat(self, values: npt.ArrayLike, dtype: npt.DTypeLike = np.float64) -> np.ndarray:
        """Every rank's 1-D ``values`` concatenated in rank order."""
        return self.allgatherv(np.ascontiguousarray(np.ravel(values), dtype=dtype))[0]

    def per_rank(self, value: int | np.integer[Any]) -> np.ndarray:
        """One int64 scalar from each rank, as a (size,) array in rank order."""
        return self.allgather(np.array([value], np.int64))[:, 0]

    def total_int(self, values: npt.ArrayLike) -> np.ndarray:
        """Element-wise sum over ranks of an int64 array (counts, or flags counted)."""
        return self.allreduce(np.asarray(values, np.int64))

    def least_int(self, values: npt.ArrayLike) -> np.ndarray:
        """Element-wise minimum over ranks of an int64 array."""
        return self.allreduce(np.asarray(values, np.int64), op="min")

    def greatest_int(self, values: npt.ArrayLike) -> np.ndarray:
        """Element-wise maximum over ranks of an int64 array."""
        return self.allreduce(np.asarray(values, np.int64), op="max")

    def greatest(self, values: npt.ArrayLike) -> np.ndarray:
        """Element-wise maximum over ranks of a float64 array."""
        return self.allreduce(np.asarray(values, np.float64), op="max")

    def stack(self, values: npt.ArrayLike, dtype: npt.DTypeLike = np.float64) -> np.ndarray:
        """Every rank's ``values`` as ``dtype`` (the same shape on every rank) as a
        (size, *shape) array in rank order."""
        return self.allgather(np.asarray(values, dtype))

    def per_rank_objects(self, value: Any) -> list[Any]:
        """Every rank's picklable ``value``, as a list in rank order (small,
        rare messages: errors, category lists, labels' classes)."""
        return self.allgather_object(value)

    def gather_bytes(self, data: bytes) -> list[bytes]:
        """Every rank's byte string ``data``, as a list in rank order."""
        gathered, counts = self.allgatherv(np.frombuffer(bytes(data), np.uint8))
        ends = np.cumsum(counts)
        return [bytes(gathered[end - count : end]) for count, end in zip(counts, ends, strict=True)]

    def ranks_unlike_rank0(self, text: str) -> list[int]:
        """The ranks whose ``text`` differs from rank 0's, compared by SHA-256 (32
        bytes per rank); every rank gets the same list."""
        digest = np.frombuffer(hashlib.sha256(text.encode()).digest(), dtype=np.uint8)
        digests = self.allgather(digest)
        return [r for r in range(self.size) if not np.array_equal(digests[r], digests[0])]


class Pending:
    """A collective started on the communication thread (``result`` once done)."""

    def __init__(self, result: np.ndarray | None = None) -> None:
        self.result = result
        self.error: BaseException | None = None
        self.done = threading.Event()
        if result is not None:
            self.done.set()
        self.on_wait: Callable[[bool], None] | None = None  # told while the caller waits

    def wait(self) -> np.ndarray:
        """The result, once the communication thread has it (its errors raised here)."""
        if not self.done.is_set() and self.on_wait is not None:
            self.on_wait(True)  # the caller idles: the thread may spin in MPI
            try:
                self.done.wait()
            finally:
                self.on_wait(False)
        self.done.wait()
        if self.error is not None:
            raise self.error
        assert self.result is not None
        return self.result


# The communication thread polls a started collective at most this often while
# the caller computes: MPICH progresses it only inside MPI calls, and a thread
# spinning in one would take the core the computation runs on.
_POLL_SECONDS = (2e-5, 2e-4)


class _CommThread:
    """One thread that runs started collectives in the order they were started
    (the seed's communication thread: the compute side hands it one piece while
    it builds the next).  Between polls it sleeps, leaving the core to the
    computation; while the caller waits it blocks in MPI."""

    def __init__(self, owner: MPIComm) -> None:
        self.owner = owner
        self.jobs: queue.SimpleQueue[tuple[Pending, np.ndarray, list[int]]] = queue.SimpleQueue()
        self.caller_waits = False
        self.thread = threading.Thread(target=self._loop, name="dgbdt-comm", daemon=True)
        self.thread.start()

    def _set_waiting(self, waiting: bool) -> None:
        self.caller_waits = waiting

    def start(self, send: np.ndarray, counts: list[int]) -> Pending:
        pending = Pending()
        pending.on_wait = self._set_waiting
        self.jobs.put((pending, send, counts))
        return pending

    def _loop(self) -> None:
        while True:
            pending, send, counts = self.jobs.get()
            try:
                pending.result = self._reduce_scatter(send, counts)
            except BaseException as exc:  # noqa: BLE001 - raised in the caller's wait
                pending.error = exc
            finally:
                pending.done.set()

    def _reduce_scatter(self, send: np.ndarray, counts: list[int]) -> np.ndarray:
        owner = self.owner
        recv = np.empty(counts[owner.rank], dtype=send.dtype)
        watch = owner._watch
        watch.enter("reduce_scatter (pipelined)")
        start = _clock()
        try:
            request = owner._comm.Ireduce_scatter(send, recv, counts, op=owner._ops["sum"])
            pause = _POLL_SECONDS[0]
            while not request.Test():
                if self.caller_waits:
                    request.Wait()
                    break
                time.sleep(pause)
                pause = min(2.0 * pause, _POLL_SECONDS[1])
        finally:
            watch.current = None
        owner.stats.add("reduce_scatter", send.nbytes, _clock() - start)
        return recv


class MPIComm(SerialComm):
    """MPI_COMM_WORLD through mpi4py (imported only when this is created).

    Every collective has a deadline (``set_time_out``, LightGBM's ``time_out``
    in minutes, default 120; longer inside ``slow_phase``): see dgbdt.distributed.deadline.
    """

    def __init__(
        self, comm: Any = None, watchdog: Watchdog | None = None, exit_on_abort: bool = False
    ) -> None:
        super().__init__()
        # A group joined by a front end (dgbdt.dask): abort leaves the error to
        # the rank's process (MPI_Abort over connected jobs may wait on a dead peer).
        self.exit_on_abort = exit_on_abort
        from mpi4py import MPI  # noqa: PLC0415 - MPI starts only when a distributed training asks for it

        self._MPI: Any = MPI
        self.elapsed = 0.0  # seconds in the last collective run by _run
        self._comm_thread: _CommThread | None = None  # started by the first pipelined call
        self._comm: Any = comm if comm is not None else MPI.COMM_WORLD
        self.rank = self._comm.Get_rank()
        self.size = self._comm.Get_size()
        self._watch = watchdog or Watchdog(self.rank, self.size)
        self._watch.rank, self._watch.size = self.rank, self.size
        self._watch.start()
        self._ops = {"sum": MPI.SUM, "max": MPI.MAX, "min": MPI.MIN}
        self._run("MPI_Comm_dup", self._watch.attach, MPI, self._comm)
        # Ranks sharing this machine: they share its cores too.
        local = self._run("MPI_Comm_split_type", self._comm.Split_type, MPI.COMM_TYPE_SHARED)
        self.local_size = local.Get_size()
        local.Free()

    def _run(self, kind: str, call: Callable[..., _T], *args: Any, **kwargs: Any) -> _T:
        """``call(...)``, a blocking collective, under its deadline (the hot
        collectives below inline this: it runs thousands of times per tree)."""
        watch = self._watch
        watch.enter(kind)
        start = _clock()
        try:
            return call(*args, **kwargs)
        finally:
            watch.current = None
            self.elapsed = _clock() - start

    def set_time_out(self, minutes: float) -> None:
        self._watch.set_time_out(minutes)

    @contextlib.contextmanager
    def slow_phase(self, reason: str, seconds: float | None = None) -> Iterator[None]:
        """Collectives inside wait at least ``seconds`` (default SLOW_PHASE_SECONDS):
        a cold compile, rank 0 decompressing gzip or writing a snapshot."""
        self._watch.phases.append((reason, SLOW_PHASE_SECONDS if seconds is None else seconds))
        try:
            yield
        finally:
            self._watch.phases.pop()

    def allgather_object(self, obj: Any) -> list[Any]:
        return self._run("allgather (objects)", self._comm.allgather, obj)

    def allreduce(self, values: npt.ArrayLike, op: str = "sum") -> np.ndarray:
        send = np.ascontiguousarray(values)
        recv = np.empty_like(send)
        watch = self._watch
        watch.enter("allreduce")
        start = _clock()
        try:
            self._comm.Allreduce(send, recv, op=self._ops[op])
        finally:
            watch.current = None
        seconds = _clock() - start
        self.stats.add("allreduce", send.nbytes, seconds)
        return recv

    def reduce_scatter(self, values: np.ndarray, counts: Sequence[int] | np.ndarray) -> np.ndarray:
        """Sum ``values`` over ranks; rank r receives elements of block r (``counts[r]`` long)."""
        send = np.ascontiguousarray(values)
        recv = np.empty(int(counts[self.rank]), dtype=send.dtype)
        watch = self._watch
        watch.enter("reduce_scatter")
        start = _clock()
        try:
            self._comm.Reduce_scatter(
                send, recv, recvcounts=[int(c) for c in counts], op=self._ops["sum"]
            )
        finally:
            watch.current = None
        self.stats.add("reduce_scatter", send.nbytes, _clock() - start)
        return recv

    def reduce_scatter_start(self, values: np.ndarray, counts: Sequence[int]) -> Pending:
        if self._comm_thread is None:
            self._comm_thread = _CommThread(self)
        return self._comm_thread.start(np.ascontiguousarray(values), [int(c) for c in counts])

    def allgather(self, values: npt.ArrayLike) -> np.ndarray:
        send = np.ascontiguousarray(values)
        recv = np.empty((self.size,) + send.shape, dtype=send.dtype)
        watch = self._watch
        watch.enter("allgather")
        start = _clock()
        try:
            self._comm.Allgather(send, recv)
        finally:
            watch.current = None
        seconds = _clock() - start
        self.stats.add("allgather", send.nbytes, seconds)
        return recv

    def allgatherv(self, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        send = np.ascontiguousarray(values)
        counts = self.allgather(np.array([send.shape[0]], np.int64))[:, 0]
        recv = np.empty(int(counts.sum()), dtype=send.dtype)
        displs = np.concatenate([[0], np.cumsum(counts)[:-1]])
        self._run(
            "allgatherv",
            self._comm.Allgatherv,
            send,
            [recv, counts.tolist(), displs.tolist(), self._mpi_type(send)],
        )
        self.stats.add("allgather", send.nbytes, self.elapsed)
        return recv, counts

    def _mpi_type(self, arr: np.ndarray) -> Any:
        return self._MPI._typedict[arr.dtype.char]

    def bcast(self, values: npt.ArrayLike, root: int = 0) -> np.ndarray:
        buf = np.array(values, copy=True)
        watch = self._watch
        watch.enter("bcast")
        start = _clock()
        try:
            self._comm.Bcast(buf, root=root)
        finally:
            watch.current = None
        seconds = _clock() - start
        self.stats.add("bcast", buf.nbytes if self.rank == root else 0, seconds)
        return buf

    def bcast_bytes(self, data: bytes, root: int = 0) -> bytes:
        """The root's byte string on every rank (a file name, a small text)."""
        size = self.bcast(np.array([len(data) if self.rank == root else 0], np.int64), root)
        buf = (
            np.frombuffer(bytes(data), np.uint8).copy()
            if self.rank == root
            else np.empty(int(size[0]), np.uint8)
        )
        return self.bcast(buf, root).tobytes()

    def scatter_bytes(self, parts: Sequence[bytes], root: int = 0) -> bytes:
        """Rank r receives ``parts[r]`` of the root's list of byte strings (MPI_Scatterv)."""
        counts = np.zeros(self.size, np.int64)
        if self.rank == root:
            counts[:] = [len(p) for p in parts]
        counts = self.bcast(counts, root)
        recv = np.empty(int(counts[self.rank]), np.uint8)
        send: list[Any] | None = None
        if self.rank == root:
            # Scatterv counts are C ints: a part over 2 GiB needs pre-partitioned input.
            if counts.max() >= 2**31:
                raise ValueError(
                    "a part of over 2 GiB cannot be scattered; pre-partition "
                    "the input (pre_partition=true)"
                )
            flat = np.frombuffer(b"".join(parts), np.uint8)
            displs = np.concatenate([[0], np.cumsum(counts)[:-1]])
            send = [flat, counts.tolist(), displs.tolist(), self._MPI.BYTE]
        self._run("scatterv", self._comm.Scatterv, send, [recv, self._MPI.BYTE], root=root)
        if send is not None:
            self.stats.add("scatter", send[0].nbytes, self.elapsed)
        return recv.tobytes()

    def abort(self, code: int = 1) -> None:
        if self.exit_on_abort:
            # A front end's group: the error goes on up to the rank's process,
            # which reports it and exits; its supervisors end the other ranks.
            return
        abort_after_output(self._comm, code)


def agree_on_errors(comm: SerialComm, error: BaseException | None) -> None:
    """Every rank raises when any rank had ``error`` (an exception or None).

    Errors a rank finds before a collective (bad data, bad shapes) are agreed
    here so all ranks fail with the same message instead of leaving the
    others waiting in the next collective.
    """
    if comm.size == 1:
        if error is not None:
            raise error
        return
    flags = comm.allgather(np.array([0 if error is None else 1], np.int32))[:, 0]
    if not flags.any():
        return
    message = "" if error is None else f"{type(error).__name__}: {error}"
    text, counts = comm.allgatherv(np.frombuffer(message.encode(), dtype=np.uint8))
    first = int(np.flatnonzero(flags)[0])
    start = int(counts[:first].sum())
    first_message = bytes(text[start : start + counts[first]]).decode(errors="replace")
    if error is None or comm.rank != first:
        error = RuntimeError(f"rank {first} failed: {first_message}")
    # Every rank raises this: none waits in a collective, so none needs to
    # abort the others (several ranks aborting at once cut each other's output).
    raise agreed(error)


class AgreedError(Exception):
    """An error every rank raises alike (after a collective that settled it):
    no rank waits in a collective, so none aborts the others, and it is printed
    once.  Made by :func:`agreed`, an instance is also of the original error's
    class: ``except ValueError`` still catches an agreed ValueError."""

    def __reduce__(self) -> tuple[Any, ...]:
        # pickled as the original class (the agreed subclasses are made at run time)
        base = next(c for c in type(self).__mro__[1:] if c is not AgreedError)
        return base, self.args, self.__dict__ or None


_AGREED_CLASSES: dict[type[BaseException], type[BaseException]] = {}


def agreed(error: BaseException) -> BaseException:
    """``error`` as an :class:`AgreedError` of its own class (message, cause and
    traceback kept)."""
    if isinstance(error, AgreedError):
        return error
    cls = type(error)
    sub = _AGREED_CLASSES.get(cls)
    if sub is None:
        names = {"__module__": cls.__module__, "__qualname__": cls.__qualname__}
        sub = _AGREED_CLASSES[cls] = type(cls.__name__, (cls, AgreedError), names)
    marked = sub.__new__(sub, *error.args)
    marked.args = error.args
    marked.__dict__.update(error.__dict__)
    marked.__cause__, marked.__context__ = error.__cause__, error.__context__
    marked.__suppress_context__ = error.__suppress_context__
    return marked.with_traceback(error.__traceback__)


def abort_on_exception(comm: SerialComm, exc: BaseException) -> None:
    """Print the failing rank's traceback and bring every rank down (MPI_Abort).

    LightGBM hung every rank when one failed inside training (fixed by calling
    MPI_Abort, PR #2600); a rank must never leave the others waiting.  A
    ``sys.exit(code)`` (SystemExit) or Ctrl-C on one rank ends the job too,
    with that exit code.
    """
    code = report_failure(comm.rank, comm.size, exc)
    comm.abort(code)


def report_failure(rank: int, size: int, exc: BaseException, with_traceback: bool = True) -> int:
    """Print what failed on this rank; returns the exit code to end the job with."""
    what, code = "failed", 1
    if isinstance(exc, SystemExit):
        what = f"called sys.exit({exc.code!r}) during training"
        code = exc.code if isinstance(exc.code, int) and exc.code != 0 else 1
    elif isinstance(exc, KeyboardInterrupt):
        what = "was interrupted (KeyboardInterrupt) during training"
    if with_traceback:
        sys.stderr.write(f"dgbdt: rank {rank} of {size} {what}; ending every rank:\n")
        traceback.print_exception(type(exc), exc, exc.__traceback__, file=sys.stderr)
    sys.stderr.flush()
    return code


def abort_job(exc: BaseException, with_traceback: bool = True) -> None:
    """End every rank for an error on a rank that may not have initialised MPI
    yet (an error before its first collective while the others wait in theirs):
    the error is printed first, then MPI is initialised just to abort.  Without
    mpi4py, or when the others never start MPI, the others' deadline ends the job."""
    if _GROUP is not None:  # a front end's group: its supervisors end the ranks
        return
    code = report_failure(launched_rank(), launched_size(), exc, with_traceback)
    try:
        MPI = start_mpi(ABORT_START_SECONDS)
    except ImportError:
        return
    if not MPI.Is_finalized():
        abort_after_output(MPI.COMM_WORLD, code)


#: How long a failing rank waits for the others to start MPI, just to abort them.
ABORT_START_SECONDS = 60.0


def mpi_installed() -> bool:
    """Whether mpi4py can be imported (its package only: mpi4py.MPI would start MPI)."""
    try:
        import mpi4py  # noqa: F401, PLC0415 - optional dependency; starts no MPI
    except ImportError:
        return False
    return True


def start_mpi(limit_seconds: float) -> Any:
    """Initialise MPI (import mpi4py's MPI) under a deadline; returns the module.

    MPICH's MPI_Init waits until every rank has called it, and mpi4py holds
    the GIL meanwhile, so no Python thread can watch it: faulthandler's C
    thread can.  After ``limit_seconds`` it dumps the stack (naming
    ``_wait_for_every_rank_to_start_mpi``) and ends the process (exit 1).
    """
    if "mpi4py.MPI" in sys.modules:
        return sys.modules["mpi4py.MPI"]
    faulthandler.dump_traceback_later(limit_seconds, exit=True)
    try:
        return _wait_for_every_rank_to_start_mpi()
    finally:
        faulthandler.cancel_dump_traceback_later()


def _wait_for_every_rank_to_start_mpi() -> Any:
    from mpi4py import MPI  # MPI_Init: a fence of every rank  # noqa: PLC0415 - MPI starts only when a distributed training asks for it

    return MPI


_WORLD: MPIComm | None = None
#: The training group a front end (dgbdt.dask) joined and installed, if any.
_GROUP: MPIComm | None = None


def install_world(comm: MPIComm) -> None:
    """Make ``comm`` the world every training of this process uses: a front end
    (dgbdt.dask) joined processes started apart into one group; ``engine``,
    the estimators and the abort paths then use it, not MPI_COMM_WORLD."""
    global _WORLD, _GROUP
    _WORLD = _GROUP = comm


# What MPI launchers (MPICH/Hydra, Open MPI, Slurm's PMI) tell each process.
_SIZE_VARIABLES = ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_SIZE")
_RANK_VARIABLES = ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK")


def under_launcher() -> bool:
    """Whether an MPI launcher (mpiexec, srun) started this process."""
    return any(name in os.environ for name in _SIZE_VARIABLES + _RANK_VARIABLES)


def launched_size() -> int:
    """Number of ranks an MPI launcher started (1 when not under mpiexec), read from
    the environment: no MPI is initialised.  A group a front end installed
    (:func:`install_world`) counts instead."""
    if _GROUP is not None:
        return _GROUP.size
    for name in _SIZE_VARIABLES:
        if os.environ.get(name, "").isdigit():
            return int(os.environ[name])
    return 1


def launched_rank() -> int:
    """This process's rank as the MPI launcher set it (0 when not under mpiexec),
    or in the group a front end installed."""
    if _GROUP is not None:
        return _GROUP.rank
    for name in _RANK_VARIABLES:
        if os.environ.get(name, "").isdigit():
            return int(os.environ[name])
    return 0


def abort_world(code: int) -> bool:
    """Abort every rank of dgbdt's world communicator when it has several;
    False when no world was created (MPI may not even be started)."""
    if _WORLD is None:
        return False
    if _WORLD.size > 1:
        _WORLD.abort(code)
    return True


def world_comm(time_out_minutes: float | None = None) -> MPIComm:
    """The MPI world communicator (created once; MPI is initialised under the
    deadline: a rank left alone in MPI_Init ends instead of hanging)."""
    global _WORLD
    if _WORLD is None:
        install_abort_hook()
        watch = Watchdog(launched_rank(), launched_size())
        if time_out_minutes is not None:
            watch.set_time_out(time_out_minutes)
        start_mpi(watch.limit_seconds)
        _WORLD = MPIComm(watchdog=watch)
    if time_out_minutes is not None:
        _WORLD.set_time_out(time_out_minutes)
    return _WORLD


ABORT_HOOK_VARIABLE = "DGBDT_NO_ABORT_HOOK"


def install_abort_hook() -> None:
    """An exception nothing catches on one rank aborts every rank (as ``python -m
    mpi4py script.py`` does) instead of leaving the others in a collective.

    Installed at ``import dgbdt`` under an MPI launcher, without importing
    mpi4py (that would initialise MPI).  On several ranks the hook aborts the
    world; before MPI is started (the others may wait in MPI_Init for this
    rank) it starts MPI just to abort, waiting at most ABORT_START_SECONDS.
    ``DGBDT_NO_ABORT_HOOK=1`` turns it off (independent per-rank jobs).  (``SystemExit``
    never reaches ``sys.excepthook``; training catches it itself.)
    """
    if os.environ.get(ABORT_HOOK_VARIABLE, "") not in ("", "0") or getattr(
        sys.excepthook, "dgbdt_abort_hook", False
    ):
        return
    previous_hook = sys.excepthook

    def abort_all(
        exc_type: type[BaseException], exc: BaseException, tb: TracebackType | None
    ) -> None:
        previous_hook(exc_type, exc, tb)
        sys.stderr.flush()
        MPI = sys.modules.get("mpi4py.MPI")
        if isinstance(exc, AgreedError):
            return
        if MPI is None:
            # The others may wait in MPI_Init for this rank: start MPI to end them.
            if launched_size() > 1:
                sys.stderr.write(
                    f"dgbdt: rank {launched_rank()} failed before starting MPI; "
                    "ending every rank (independent per-rank jobs: set "
                    f"{ABORT_HOOK_VARIABLE}=1)\n"
                )
                abort_job(exc, with_traceback=False)
            return
        try:
            running = MPI.Is_initialized() and not MPI.Is_finalized()
            if running and MPI.COMM_WORLD.Get_size() > 1:
                abort_after_output(MPI.COMM_WORLD, 1)
        except Exception:  # noqa: BLE001 -- the hook must never raise itself
            pass

    abort_all.dgbdt_abort_hook = True  # type: ignore[attr-defined]  # a marker read above
    sys.excepthook = abort_all
