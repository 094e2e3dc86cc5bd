"""A training rank's supervisor: the Dask task that runs on the worker holding the
rank's partitions.

It writes the task and the partitions to a private folder, starts the rank's
process (``mpiexec -n 1 python -m dgbdt.dask.rank FOLDER``; MPI never starts in
the worker itself), passes rank 0's port to the others through a Dask
``Variable``, and waits for the process, ending it at once when the front end
sets the training's stop ``Event`` (another rank failed or a worker was lost).
The worker's threads never call MPI: the rank's process owns MPI on its main
thread (the one thread model dgbdt's communication builds on).
"""

from __future__ import annotations

import contextlib
import ctypes
import ipaddress
import os
import pickle
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from typing import Any

import cloudpickle
import psutil
from distributed import Event, Variable, get_worker

from .task import OUTCOME, PID, PORT, SHM, STDERR, STDOUT, TASK, WHERE, RankTask


class RankFailed(RuntimeError):
    """A rank's process ended without a result (killed, timed out, or it raised
    an error on this rank alone).  ``retry``: whether a restart may help (the
    process was killed, or ended by the front end), not when it raised."""

    def __init__(self, message: str, retry: bool = False, cause: Any = None) -> None:
        super().__init__(message)
        self.retry, self.cause = retry, cause  # cause: the error the rank raised


def _scratch() -> str | None:
    """A memory-backed folder for the partitions when there is one."""
    shm = "/dev/shm"
    return shm if os.path.isdir(shm) and os.access(shm, os.W_OK) else None


def _die_with_parent() -> None:  # pragma: no cover - runs in the child before exec
    """Linux: the rank's launcher is killed when the thread that started it ends."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def interface_of(address: str) -> str:
    """The network interface holding ``address``'s IP (the one the Dask worker
    listens on): the ranks talk over it.  ``lo`` for loopback."""
    host = address.split("://")[-1].rsplit(":", 1)[0].strip("[]")
    ip = socket.gethostbyname(host) if not host.replace(".", "").isdigit() else host
    for name, addresses in psutil.net_if_addrs().items():
        if any(a.address.split("%")[0] == ip for a in addresses):
            return name
    if ipaddress.ip_address(ip).is_loopback:
        return "lo"
    raise RuntimeError(
        f"dgbdt.dask: no network interface holds {ip}, the address of worker {address}; "
        "name one with DGBDT_NETWORK_INTERFACE"
    )


def _environment(task: RankTask) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PMI_", "PMIX_", "HYDRA_", "OMPI_", "MPI_LOCALNRANKS"))
    }
    env.update(
        MPIR_CVAR_CH4_NETMOD="ofi",
        FI_PROVIDER=task.provider,
        FI_TCP_IFACE=task.interface,
        NUMBA_NUM_THREADS=str(task.threads),
        OMP_NUM_THREADS=str(task.threads),
        DGBDT_NO_ABORT_HOOK="1",
        PYTHONUNBUFFERED="1",
    )
    # The worker's import path first: the user's callables (objectives, callbacks)
    # pickled by name must import in the rank's process as in the worker.
    paths = [p for p in sys.path if p] + [
        p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p
    ]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    return env


def mpiexec_path() -> str:
    """The ``mpiexec`` of the ``mpich`` wheel beside this Python."""
    path = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    if not os.path.exists(path):
        raise RuntimeError(
            f"dgbdt.dask starts each rank with the mpich wheel's mpiexec, not found at {path} "
            "on this worker: pip install 'dgbdt[dask]' on every worker"
        )
    return path


def _start(task: RankTask, folder: str) -> subprocess.Popen[bytes]:
    with open(os.path.join(folder, TASK), "wb") as out:
        cloudpickle.dump(task, out, protocol=5)  # the user's callbacks, by value if need be
    cmd = [mpiexec_path(), "-n", "1", sys.executable, "-m", "dgbdt.dask.rank", folder]
    with (
        open(os.path.join(folder, STDOUT), "wb") as out,
        open(os.path.join(folder, STDERR), "wb") as err,
    ):
        return subprocess.Popen(
            cmd,
            stdout=out,
            stderr=err,
            stdin=subprocess.DEVNULL,
            env=_environment(task),
            start_new_session=True,
            preexec_fn=_die_with_parent if sys.platform == "linux" else None,  # noqa: PLW1509 - sets one flag before exec
        )


def _read(folder: str, name: str) -> str:
    try:
        with open(os.path.join(folder, name), encoding="utf-8", errors="replace") as source:
            return source.read()
    except FileNotFoundError:
        return ""


def _kill(proc: subprocess.Popen[bytes], folder: str) -> None:
    """End the rank's launcher and process (by process group and by pid: the
    launcher may start the process in a group of its own)."""
    pid = _read(folder, PID).strip()
    for kill in (
        lambda: os.killpg(proc.pid, signal.SIGKILL),
        lambda: os.kill(int(pid), signal.SIGKILL) if pid else None,
    ):
        with contextlib.suppress(OSError, ValueError):
            kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=5)
    _remove_shared_memory(folder)


def _remove_shared_memory(folder: str) -> None:
    """MPICH's /dev/shm files of a rank that was killed (it could not remove them)."""
    for path in _read(folder, SHM).split():
        if path.startswith("/dev/shm/"):
            with contextlib.suppress(OSError):
                os.unlink(path)


class Signals:
    """One attempt's Dask Variable (rank 0's port) and Events, by the one naming
    rule the front end and the ranks' supervisors share (``client``: the front
    end's; None in a task, which uses its worker's)."""

    def __init__(self, training: str, attempt: int, client: Any = None) -> None:
        name = f"dgbdt-{training}-{attempt}"
        self.port = Variable(f"{name}-port", client=client)
        self.ready = Event(f"{name}-port-ready", client=client)  # set once ``port`` holds rank 0's
        self.stop = Event(f"{name}-stop", client=client)


def _stopped(signals: Signals) -> bool:
    return bool(signals.stop.is_set())


def _pass_port(task: RankTask, folder: str, signals: Signals, proc: Any) -> None:
    """Rank 0's port name from its folder to the Variable, and from there into
    the other ranks' folders."""
    end = time.monotonic() + task.join_seconds
    while time.monotonic() < end and proc.poll() is None and not _stopped(signals):
        if task.rank == 0:
            port = _read(folder, PORT)
            if port:
                signals.port.set(port)
                signals.ready.set()
                return
            time.sleep(0.02)
        elif signals.ready.wait(timeout=0.5):
            port = signals.port.get(timeout=max(1.0, end - time.monotonic()))
            with open(os.path.join(folder, PORT + ".tmp"), "w", encoding="utf-8") as out:
                out.write(port)
            os.replace(os.path.join(folder, PORT + ".tmp"), os.path.join(folder, PORT))
            return


def _failure(
    task: RankTask, folder: str, code: int | None, why: str, raised: bool = False
) -> RankFailed:
    # (a rank that raised: its traceback says where; its last wait may be long past)
    where = "" if raised else _read(folder, WHERE)
    tail = "\n".join(_read(folder, STDERR).strip().splitlines()[-25:])
    message = f"rank {task.rank} of {task.size} on worker {task.worker}: {why}"
    if code is not None:
        message += f" (exit code {code})"
    if where:
        message += f"; it {where.removeprefix(f'rank {task.rank} ')}"
    killed = code is None or code < 0 or code > 128  # by a signal, or by the front end
    return RankFailed(message + (f"\n{tail}" if tail else ""), retry=killed)


def _collect(task: RankTask, folder: str, code: int) -> Any:
    """The rank's result, or its error raised here."""
    sys.stdout.write(_read(folder, STDOUT))
    try:
        with open(os.path.join(folder, OUTCOME), "rb") as source:
            outcome = pickle.load(source)
    except FileNotFoundError:
        raise _failure(task, folder, code, "the rank's process ended without a result") from None
    if outcome[0] == "ok":
        return outcome[1]
    _, error, text, agreed = outcome
    if agreed:  # every rank raises it alike: the user's error, as it is
        raise error
    failure = _failure(task, folder, code, f"raised on this rank:\n{text}", raised=True)
    failure.cause = error
    raise failure


def _alive(pid_text: str) -> bool:
    try:
        os.kill(int(pid_text), 0)
    except (ValueError, ProcessLookupError):
        return False
    except PermissionError:
        return True
    return True


def _sweep(parent: str) -> None:
    """Remove the folders of ranks whose worker was killed (nothing was left to
    remove them): their process is gone and they are over a minute old."""
    with contextlib.suppress(OSError):
        for name in os.listdir(parent):
            folder = os.path.join(parent, name)
            if not name.startswith(_PREFIX) or time.time() - os.path.getmtime(folder) < 60:
                continue
            if not _alive(_read(folder, PID).strip()):
                _remove_shared_memory(folder)
                shutil.rmtree(folder, ignore_errors=True)


_PREFIX = "dgbdt-rank-"


@contextlib.contextmanager
def _folder() -> Iterator[str]:
    _sweep(_scratch() or tempfile.gettempdir())
    folder = tempfile.mkdtemp(prefix=_PREFIX, dir=_scratch())
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def run_rank(task: RankTask, *arguments: Any) -> Any:
    """The Dask task of one rank: ``arguments`` are its training partitions, then
    each validation set's (``task.n_parts``, ``task.eval_counts``)."""
    worker = get_worker()
    task.worker, task.worker_pid = worker.address, os.getpid()
    task.interface = task.interface or interface_of(worker.address)
    task.parts, rest = list(arguments[: task.n_parts]), list(arguments[task.n_parts :])
    task.evals = []
    for count in task.eval_counts:
        task.evals.append(rest[:count])
        rest = rest[count:]
    signals = Signals(task.training, task.attempt)
    with _folder() as folder:
        proc = _start(task, folder)
        task.parts, task.evals = [], []  # written: not kept twice in memory
        try:
            _pass_port(task, folder, signals, proc)
            while proc.poll() is None:
                if _stopped(signals):
                    _kill(proc, folder)
                    raise _failure(task, folder, None, "ended by the front end")
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(timeout=0.2)  # returns as soon as the rank ends
            return _collect(task, folder, proc.returncode)
        finally:
            _kill(proc, folder)
