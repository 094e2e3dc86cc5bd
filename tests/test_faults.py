"""Fault injection under ``mpiexec -n 3``: no job ever hangs.

Each case runs in its own process group (tests/mpi_launch.py) with its own
copy of the warmed Numba cache, and ``time_out=0.1`` minutes (6 s): a rank
left waiting in a collective must end every rank, non-zero, with a message
naming the collective and the ranks that did not join; an error every rank
can see is raised on every rank at once.  No model is written by a job that
failed.
"""

import os
import shutil
import time

import pytest
from mpi_launch import run_mpi

pytestmark = pytest.mark.slow

# case -> (what stderr must say, seconds the job may take)
DEADLINE = 24  # the 6 s deadline, then the exchange naming the ranks and the abort
FAST = 5
CASES = {
    # a rank that silently stays away: the others' deadline names the collective and the rank
    "exit_without_train": (
        ("did not complete within 6 s", "rank 2 did not join", "rank 2 did not answer"),
        DEADLINE,
    ),
    "serial_on_one_rank": (
        ("did not complete within 6 s", "rank 2 did not join", "tree_learner='serial'"),
        DEADLINE,
    ),
    "sigstop": (
        ("allreduce", "did not complete within 6 s", "rank 2 did not join", "stopped"),
        DEADLINE,
    ),
    # a rank that fails: it ends every rank at once
    "sys_exit_in_callback": (("rank 2 of 3 called sys.exit(3) during training",), FAST),
    "exception_in_callback": (("callback failed on the last rank",), FAST),
    "raise_before_dgbdt": (("rank script failed before any dgbdt call",), FAST),
    "sigkill": ((), FAST),
    "sigterm": ((), FAST),
    # what every rank must agree on is checked at the start of train()
    "feval_on_rank0": (("the number of feval functions is 0 on rank 1 but 1 on rank 0",), FAST),
    "fobj_on_one_rank": (("a custom objective given is True on rank 2 but False on rank 0",), FAST),
    "dataset_params_on_one_rank": (
        (
            "binning (train_set's Dataset params with train's)['max_bin'] "
            "is 15 on rank 2 but 255 on rank 0",
        ),
        FAST,
    ),
    "valid_sets_on_one_rank": (("the validation set names is ['valid_0'] on rank 2 but []",), FAST),
    "valid_names_differ": (
        ("the validation set names is ['eval_b'] on rank 2 but ['eval_a']",),
        FAST,
    ),
    "bad_param_on_one_rank": (
        ("rank 2 of 3 failed", "Parameter num_leaves should be of type int"),
        FAST,
    ),
    "init_model_on_one_rank": (("init_model is '", "' on rank 2 but None on rank 0"), FAST),
    "init_model_differs": (("init_model is '", "' on rank 2 but '"), FAST),
    "feature_names_differ": (("train_set's feature names is ['f", "on rank 2"), FAST),
    "raise_before_mpi": (("rank script failed before starting MPI",), FAST),
    "estimator_rank_away": (("Timeout (0:00:06", "_wait_for_every_rank_to_start_mpi"), DEADLINE),
}


@pytest.fixture
def private_cache(tmp_path, monkeypatch):
    """A copy of the session's warmed Numba cache for this case alone.

    The session's NUMBA_CACHE_DIR is dgbdt's keyed folder (dgbdt.jit_cache);
    the copy keeps its name, else every rank would key a new, empty folder
    inside it and compile every kernel (30 s a case)."""
    source = os.environ.get("NUMBA_CACHE_DIR")
    target = tmp_path / "numba-cache"
    if source and os.path.isdir(source):
        target = target / os.path.basename(os.path.normpath(source))
        shutil.copytree(source, target)
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(target))
    return target


@pytest.mark.parametrize("case", list(CASES))
def test_a_misbehaving_rank_ends_the_job(case, tmp_path, private_cache):
    messages, limit = CASES[case]
    out = tmp_path / "out"
    out.mkdir()
    start = time.time()
    result = run_mpi(3, "faults.py", case, out, timeout=90)
    end = time.time()
    # Timed from the fault, else from the call of train(), when the rank
    # script recorded them (start-up on a loaded machine is not the job's end).
    fault, called = out / "fault_time", out / "train_time"
    since = fault if fault.exists() else called if called.exists() else None
    elapsed = end - (float(since.read_text()) if since else start)
    print(f"\n{case}: exit {result.returncode} after {elapsed:.1f} s")
    assert result.returncode != 0, result.stdout + result.stderr
    for message in messages:
        assert message in result.stderr, result.stderr[-4000:]
    assert elapsed < limit, f"{case} took {elapsed:.1f} s\n{result.stderr[-3000:]}"
    assert not (out / "model.json").exists()
    assert (
        case
        not in ("sigkill", "sigterm", "sigstop", "sys_exit_in_callback", "exception_in_callback")
        or fault.exists()
    )
    assert "finished" not in result.stdout or case == "serial_on_one_rank"


def test_per_process_params_may_differ(tmp_path, private_cache):
    # Threads, logging and the deadline are each process's own (as in LightGBM).
    out = tmp_path / "out"
    out.mkdir()
    result = run_mpi(3, "faults.py", "per_process_params_differ", out, timeout=90)
    assert result.returncode == 0, result.stderr[-3000:]
    assert (out / "model.json").exists() and result.stdout.count("finished") == 3
