"""What one training rank is given (pickled into its process's folder)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

#: The files of a rank's folder: the task, rank 0's port, where the rank waits
#: (written by its deadline thread), its outcome and its output.
TASK, PORT, WHERE, OUTCOME, PID = "task.pkl", "port", "where", "outcome.pkl", "pid"
SHM = "shm"  # MPICH's shared-memory files of the rank (removed after it ends)
STDOUT, STDERR = "stdout.txt", "stderr.txt"


@dataclasses.dataclass
class RankTask:
    """One rank of one training: its place in the group, its data, and the job.

    ``job(parts, evals, comm, resume)`` runs in the rank's own process with the
    group installed as MPI world; ``parts`` are this rank's partitions (tuples
    of data, label, weight, group, init score) in partition order, ``evals``
    one list of such tuples per validation set, ``resume`` the snapshot to go
    on from (None, or (model file, rounds done)).  Rank 0's return value is
    the training's result.
    """

    training: str  # a unique id of the training
    attempt: int
    rank: int
    size: int
    job: Callable[..., Any]
    n_parts: int  # how many of the task's arguments are training partitions
    eval_counts: list[int]  # then how many for each validation set
    time_out_minutes: float
    join_seconds: float
    interface: str
    threads: int
    provider: str = "tcp"  # libfabric's: "shm" when every rank shares one machine
    snapshot_freq: int = 0
    resume: tuple[str, int] | None = None  # (snapshot text, rounds done)
    worker: str = ""
    worker_pid: int = 0
    parts: list[Any] = dataclasses.field(default_factory=list)
    evals: list[list[Any]] = dataclasses.field(default_factory=list)
