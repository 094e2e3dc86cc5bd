"""A training rank's process: ``mpiexec -n 1 python -m dgbdt.dask.rank FOLDER``.

Started by its Dask worker (dgbdt.dask.worker), it joins the other ranks into
one MPI group (dgbdt.distributed.rendezvous), runs the task's job with that
group as its world, writes the outcome and exits without MPI_Finalize (which
is collective over every connected process: a dead peer would hold it).
"""

from __future__ import annotations

import contextlib
import os
import pickle
import sys
import threading
import time
import traceback
from typing import Any

from ..distributed.comm import AgreedError
from ..distributed.rendezvous import (
    group_world,
    join_group,
    open_port,
    shared_memory_files,
    wait_for_file,
)
from .task import OUTCOME, PID, PORT, SHM, TASK, WHERE, RankTask


def _write_atomic(path: str, data: bytes) -> None:
    with open(path + ".tmp", "wb") as out:
        out.write(data)
    os.replace(path + ".tmp", path)


def _watch_worker(pid: int) -> None:
    """End this process when its Dask worker is gone (killed: nobody would
    collect the result, and the other ranks' supervisors end theirs)."""

    def watch() -> None:
        while True:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                os._exit(1)
            except PermissionError:  # alive, under another user
                pass
            time.sleep(0.5)

    threading.Thread(target=watch, name="dgbdt-worker-watch", daemon=True).start()


def _join(task: RankTask, folder: str) -> Any:
    port_file = os.path.join(folder, PORT)
    if task.rank == 0:
        port = open_port(task.join_seconds)
        _write_atomic(port_file, port.encode())
        return join_group(0, task.size, task.join_seconds, port=port)

    def rank0_port() -> str:
        return wait_for_file(port_file, task.join_seconds, "rank 0's MPI port")

    return join_group(task.rank, task.size, task.join_seconds, wait_for_port=rank0_port)


def _outcome(task: RankTask, folder: str) -> tuple[Any, ...]:
    joined = _join(task, folder)
    # for the supervisor to remove if this process is killed
    _write_atomic(os.path.join(folder, SHM), "\n".join(shared_memory_files()).encode())
    comm = group_world(joined, task.time_out_minutes, os.path.join(folder, WHERE))
    try:
        result = task.job(task.parts, task.evals, comm, task.resume)
        return ("ok", result if task.rank == 0 else None)
    except BaseException as exc:  # noqa: BLE001 - every failure goes back to the supervisor
        text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        return ("error", exc, text, isinstance(exc, AgreedError))


def main(folder: str) -> None:
    _write_atomic(os.path.join(folder, PID), str(os.getpid()).encode())
    with open(os.path.join(folder, TASK), "rb") as source:
        task: RankTask = pickle.load(source)
    os.unlink(os.path.join(folder, TASK))  # its partitions: in memory now, not twice
    _watch_worker(task.worker_pid)
    # The Dask worker that started this rank (a callback may want it).
    os.environ["DGBDT_DASK_WORKER_PID"] = str(task.worker_pid)
    outcome = _outcome(task, folder)
    try:
        data = pickle.dumps(outcome, protocol=5)
    except Exception:  # noqa: BLE001 - an unpicklable error: send its text
        data = pickle.dumps(("error", RuntimeError(outcome[2]), outcome[2], outcome[3]))
    _write_atomic(os.path.join(folder, OUTCOME), data)
    for path in shared_memory_files():  # no MPI_Finalize: MPICH would leave them
        with contextlib.suppress(OSError):
            os.unlink(path)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0 if outcome[0] == "ok" else 1)


if __name__ == "__main__":
    main(sys.argv[1])
