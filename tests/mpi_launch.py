"""Launch test scripts under ``mpiexec -n K`` safely.

* The launcher is the ``mpiexec`` beside ``sys.executable`` (the `mpich`
  wheel's): a system MPI's launcher would start K one-process jobs and every
  "distributed equals serial" test would pass for nothing.  Scripts assert
  the world size themselves.
* Each launch runs in its own process group, killed whole on timeout, so a
  hung rank never outlives the test.
* One Numba thread per rank and passive OpenMP waiting: several ranks share
  two cores.
"""

import os
import pathlib
import signal
import subprocess
import sys

import pytest

TESTS = pathlib.Path(__file__).resolve().parent


def mpiexec_path():
    path = pathlib.Path(sys.executable).parent / "mpiexec"
    if not path.exists():
        pytest.skip("mpiexec from the mpich wheel is not installed (pip install 'dgbdt[mpi]')")
    return str(path)


def run_mpi(n_ranks, script, *args, timeout=120):
    """Run ``tests/mpi/<script> K args...`` on ``n_ranks`` ranks; returns CompletedProcess."""
    return run_mpi_file(n_ranks, TESTS / "mpi" / script, n_ranks, *args, timeout=timeout)


def run_mpi_file(n_ranks, path, *args, timeout=120):
    """Run the Python file ``path`` with ``args`` on ``n_ranks`` ranks."""
    pytest.importorskip("mpi4py")
    env = dict(
        os.environ,
        NUMBA_NUM_THREADS="1",
        OMP_NUM_THREADS="1",
        OMP_WAIT_POLICY="passive",
        PYTHONUNBUFFERED="1",
    )
    cmd = [mpiexec_path(), "-n", str(n_ranks), sys.executable, str(path), *map(str, args)]
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        raise AssertionError(
            f"mpiexec -n {n_ranks} {path} timed out after {timeout} s\n{err[-3000:]}"
        ) from None  # the message says it all: no TimeoutExpired chained to it
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)
