"""Rank script: ``dgbdt <argv...>`` on every rank, killed after a snapshot.

argv: K, kill_at, then the dgbdt command line.  With kill_at > 0, every rank
is SIGKILLed right after the snapshot of iteration kill_at was written (rank 0
writes it; the others wait for it first), as a job killed mid-training.
"""

import os
import signal
import sys

from mpi4py import MPI

from dgbdt.__main__ import main
from dgbdt.boosting import callbacks as callback

k, kill_at, argv = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
assert MPI.COMM_WORLD.Get_size() == k
if kill_at > 0:
    write = callback._CheckpointCallback.__call__

    def write_then_die(self, env):
        write(self, env)
        if env.iteration + 1 == kill_at:
            MPI.COMM_WORLD.Barrier()  # rank 0's snapshot is on disk
            os.kill(os.getpid(), signal.SIGKILL)

    callback._CheckpointCallback.__call__ = write_then_die
sys.exit(main(argv))
