"""One MPI group from processes started apart (dgbdt.dask's training ranks).

Each rank is its own ``mpiexec -n 1`` job (MPICH 5's singletons cannot join:
``MPIDI_check_disjoint_lpids``, pmodels/mpich #7805).  Rank 0 opens a port;
the others connect to it one by one.  Every connection is accepted by the
whole group so far and merged into it (``Accept`` / ``Connect`` /
``Intercomm.Merge``); a final ``Split`` puts the ranks in the order the
front end chose.  The group lives as long as its processes: they exit after
the training (a dead peer cannot make them wait in ``MPI_Finalize`` or
``Comm.Disconnect``), so the Dask workers that started them never touch MPI
and can train again.

A join that does not complete within its limit ends the process (faulthandler's
C thread: MPI calls hold the GIL) with the stack naming the call.
"""

from __future__ import annotations

import faulthandler
import os
import time
from collections.abc import Callable
from typing import Any

from .comm import MPIComm, install_world, start_mpi
from .deadline import Watchdog


def _mpi() -> Any:
    from mpi4py import MPI  # noqa: PLC0415 - MPI starts only in a training rank's process

    return MPI


def open_port(limit_seconds: float) -> str:
    """Start MPI and open the port the other ranks connect to (rank 0)."""
    start_mpi(limit_seconds)
    return str(_mpi().Open_port())


def _accept_all(comm: Any, port: str | None, size: int) -> Any:
    """Grow ``comm`` to ``size`` processes: each round the whole group accepts one
    connection (the port matters at its root only) and merges it in."""
    MPI = _mpi()
    while comm.Get_size() < size:
        inter = comm.Accept(port, root=0)
        merged = inter.Merge(high=False)
        inter.Free()
        if comm != MPI.COMM_WORLD:
            comm.Free()
        comm = merged
    return comm


def join_group(
    rank: int,
    size: int,
    limit_seconds: float,
    port: str | None = None,
    wait_for_port: Callable[[], str] | None = None,
) -> Any:
    """The intracommunicator of ``size`` processes, this one at ``rank``.

    Rank 0 passes the ``port`` it opened (:func:`open_port`); the others pass
    ``wait_for_port``, which returns rank 0's port name.  Within
    ``limit_seconds`` or the process ends with the stack printed.
    """
    faulthandler.dump_traceback_later(limit_seconds, exit=True)
    try:
        MPI = start_mpi(limit_seconds)
        comm = MPI.COMM_WORLD
        if rank != 0:
            assert wait_for_port is not None
            inter = comm.Connect(wait_for_port(), root=0)
            comm = inter.Merge(high=True)
            inter.Free()
        comm = _accept_all(comm, port if rank == 0 else None, size)
        if rank == 0 and port is not None:
            MPI.Close_port(port)
        ordered = comm.Split(0, rank)
        if comm != MPI.COMM_WORLD:  # (one rank: nothing was merged)
            comm.Free()
        return ordered
    finally:
        faulthandler.cancel_dump_traceback_later()


def group_world(
    comm: Any, time_out_minutes: float | None, status_path: str | None = None
) -> MPIComm:
    """Install ``comm`` (from :func:`join_group`) as the world of this process's
    trainings: collectives under ``time_out``, a deadline that asks no peer
    (a send to a dead one can block) and writes where it waits to
    ``status_path``, and an abort that leaves the error to this process (its
    front end ends the others)."""
    watch = Watchdog(comm.Get_rank(), comm.Get_size())
    watch.queries = False
    watch.status_path = status_path
    if time_out_minutes is not None:
        watch.set_time_out(time_out_minutes)
    world = MPIComm(comm, watchdog=watch, exit_on_abort=True)
    install_world(world)
    return world


def shared_memory_files() -> list[str]:
    """The /dev/shm files MPICH and libfabric's shm provider made for this process
    (``mpich_shm_*``, ``<pid>:*``): a process that exits without MPI_Finalize (or
    is killed) leaves them behind unless removed."""
    own = (f"/dev/shm/{os.getpid()}:", "/dev/shm/mpich_shm")
    try:
        with open("/proc/self/maps", encoding="utf-8") as maps:
            paths = {line.split()[-1] for line in maps if line.split()[-1].startswith(own)}
    except OSError:  # not Linux
        return []
    return sorted(paths)


def wait_for_file(path: str, limit_seconds: float, what: str) -> str:
    """The text of ``path`` once it exists (written atomically by another process)."""
    end = time.monotonic() + limit_seconds
    while time.monotonic() < end:
        try:
            with open(path, encoding="utf-8") as source:
                return source.read()
        except FileNotFoundError:
            time.sleep(0.01)
    raise TimeoutError(f"{what} did not arrive within {limit_seconds:.4g} s")
