"""The demo job: train on generated HIGGS-like data and report what it did.

``python -m dgbdt demo`` (the README's first command) starts itself under
``mpiexec -n 2`` (the launcher of the `mpich` wheel, beside this Python) and
trains data-parallel: each rank holds its own block of rows.  ``--ranks 1``,
or a machine without mpi4py, trains in one process.  Run directly under your
own launcher with ``mpiexec -n K python -m dgbdt demo``.
"""

import argparse
import os
import pathlib
import subprocess
import sys
import tempfile
import time

import numpy as np

from .jit_cache import kernels_compiled

from . import Booster, Dataset, log_evaluation, train
from .comm import launched_size, under_launcher
from .datasets import make_higgs_like
from .metrics import get_metric


def _relaunch(args, argv):
    """Run this demo under the mpiexec beside sys.executable; None if there is none."""
    mpiexec = pathlib.Path(sys.executable).parent / "mpiexec"
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        mpiexec = None
    if mpiexec is None or not mpiexec.exists():
        print(
            "dgbdt demo: mpi4py/mpiexec not installed (pip install 'dgbdt[mpi]'); "
            "training in one process"
        )
        return None
    threads = max(1, (os.cpu_count() or 1) // args.ranks)
    env = dict(os.environ, NUMBA_NUM_THREADS=str(threads), OMP_WAIT_POLICY="passive")
    cmd = [str(mpiexec), "-n", str(args.ranks), sys.executable, "-m", "dgbdt", "demo", *argv]
    print(
        f"dgbdt demo: {' '.join(cmd[:3])} python -m dgbdt demo ({threads} thread(s) per rank)",
        flush=True,
    )
    return subprocess.run(cmd, env=env).returncode


def run_demo(argv=None):
    argv = list(sys.argv[2:] if argv is None else argv)
    parser = argparse.ArgumentParser(prog="dgbdt demo", description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000, help="training rows (default 200000)")
    parser.add_argument("--rounds", type=int, default=100, help="boosting rounds (default 100)")
    parser.add_argument("--leaves", type=int, default=63, help="num_leaves (default 63)")
    parser.add_argument(
        "--ranks",
        type=int,
        default=2,
        help="MPI ranks to start when not already under mpiexec (default 2)",
    )
    args = parser.parse_args(argv)
    if args.ranks > 1 and not under_launcher():
        rc = _relaunch(args, argv)
        if rc is not None:
            return rc

    distributed = launched_size() > 1
    rank, size = 0, 1
    if distributed:
        from .comm import world_comm

        comm = world_comm()
        rank, size = comm.rank, comm.size
    X, y = make_higgs_like(args.rows, seed=1)
    X_test, y_test = make_higgs_like(args.rows // 4, seed=2)
    # Each rank keeps its own block of rows (here cut from one generated set),
    # of the training and of the test rows; metrics are computed globally.
    lo, hi = rank * len(y) // size, (rank + 1) * len(y) // size
    tlo, thi = rank * len(y_test) // size, (rank + 1) * len(y_test) // size
    params = {
        "objective": "binary",
        "num_leaves": args.leaves,
        "learning_rate": 0.1,
        "metric": ["binary_logloss", "auc"],
        "verbosity": -1,
        "tree_learner": "data" if distributed else "serial",
    }
    say = print if rank == 0 else (lambda *a, **k: None)
    say(
        f"dgbdt demo: {args.rows} x {X.shape[1]} training rows (HIGGS-like) on {size} "
        f"rank(s), {len(y_test)} test rows, {args.rounds} rounds, {args.leaves} leaves"
    )
    compiled_before = kernels_compiled()
    t0 = time.perf_counter()
    train_set = Dataset(X[lo:hi], y[lo:hi])
    booster = train(
        params,
        train_set,
        args.rounds,
        valid_sets=[Dataset(X_test[tlo:thi], y_test[tlo:thi], reference=train_set)],
        valid_names=["test"],
        callbacks=[log_evaluation(max(1, args.rounds // 10), show_comm=distributed)],
    )
    fit_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    proba = booster.predict(X_test)
    predict_s = time.perf_counter() - t0
    auc = get_metric("auc").compute(y_test, proba)
    same = True
    if rank == 0:
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "model.json")
            booster.save_model(path)
            size_mb = os.path.getsize(path) / 1e6
            same = np.array_equal(Booster(model_file=path).predict(X_test), proba)
        stats = booster.comm_stats()
        per_tree = stats.get("bytes_per_tree") or [0]
        compiled = kernels_compiled() - compiled_before
        say(
            f"fit {fit_s:.2f} s"
            + (
                f" (including compiling {compiled} kernels; later runs load them from the cache)"
                if compiled
                else ""
            )
            + f", predict {predict_s:.2f} s"
        )
        say(
            f"test AUC {auc:.4f}; model file {size_mb:.2f} MB, reloaded model predicts "
            f"{'identically' if same else 'DIFFERENTLY'}"
        )
        if size > 1:
            say(
                f"communication: rank 0 handed {stats['total_bytes'] / 1e6:.1f} MB to collectives, "
                f"{np.median(per_tree) / 1e3:.1f} kB per tree (median)"
            )
    return 0 if same else 1
