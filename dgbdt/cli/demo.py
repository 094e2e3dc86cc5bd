"""The demo job: train on generated HIGGS-like data and report what it did.

``python -m dgbdt demo`` (the README's first command) starts itself under
``mpiexec -n 2`` (the launcher of the `mpich` wheel, beside this Python) and
trains data-parallel: each rank holds its own block of rows.  ``--ranks 1``,
or a machine without mpi4py, trains in one process.  Run directly under your
own launcher with ``mpiexec -n K python -m dgbdt demo``.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from .. import Booster, Dataset, log_evaluation, train
from ..datasets import make_higgs_like  # type: ignore[import-not-found]  # datasets/ (package-dir)
from ..distributed.comm import launched_size, mpi_installed, under_launcher, world_comm
from ..jit_cache import kernels_compiled
from ..objective.metrics import get_metric


def _relaunch(args: argparse.Namespace, argv: list[str]) -> int | None:
    """Run this demo under the mpiexec beside sys.executable; None if there is none."""
    mpiexec = pathlib.Path(sys.executable).parent / "mpiexec"
    if not mpi_installed() or not mpiexec.exists():
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


def _parse_args(argv: list[str]) -> argparse.Namespace:
    """The demo's options (``--rows``, ``--rounds``, ``--leaves``, ``--ranks``)."""
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
    return parser.parse_args(argv)


def _world_position() -> tuple[bool, int, int]:
    """(distributed, rank, size): this process's place among the launched ranks."""
    if launched_size() <= 1:
        return False, 0, 1

    comm = world_comm()
    return True, comm.rank, comm.size


def _own_block(n: int, rank: int, size: int) -> slice:
    """This rank's block of ``n`` rows (each rank keeps its own block)."""
    return slice(rank * n // size, (rank + 1) * n // size)


def _demo_params(args: argparse.Namespace, distributed: bool) -> dict[str, Any]:
    """The training parameters of the demo."""
    return {
        "objective": "binary",
        "num_leaves": args.leaves,
        "learning_rate": 0.1,
        "metric": ["binary_logloss", "auc"],
        "verbosity": -1,
        "tree_learner": "data" if distributed else "serial",
    }


def _train_own_rows(
    args: argparse.Namespace,
    train_rows: tuple[np.ndarray, np.ndarray],
    test_rows: tuple[np.ndarray, np.ndarray],
    rank: int,
    size: int,
    distributed: bool,
) -> Booster:
    """The booster trained on this rank's block of ``train_rows``, evaluated on its
    block of ``test_rows`` (metrics are computed globally)."""
    (X, y), (X_test, y_test) = train_rows, test_rows
    own, test_own = _own_block(len(y), rank, size), _own_block(len(y_test), rank, size)
    train_set = Dataset(X[own], y[own])
    return train(
        _demo_params(args, distributed),
        train_set,
        args.rounds,
        valid_sets=[Dataset(X_test[test_own], y_test[test_own], reference=train_set)],
        valid_names=["test"],
        callbacks=[log_evaluation(max(1, args.rounds // 10), show_comm=distributed)],
    )


def _save_and_reload(
    booster: Booster, X_test: np.ndarray, proba: npt.ArrayLike
) -> tuple[float, bool]:
    """(model file size in MB, whether the reloaded model predicts ``proba`` exactly)."""
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "model.json")
        booster.save_model(path)
        size_mb = os.path.getsize(path) / 1e6
        same = np.array_equal(Booster(model_file=path).predict(X_test), proba)
    return size_mb, same


def _say_timings(fit_s: float, predict_s: float, compiled: int) -> None:
    """The fit and predict times, and the kernels compiled during the fit."""
    print(
        f"fit {fit_s:.2f} s"
        + (
            f" (including compiling {compiled} kernels; later runs load them from the cache)"
            if compiled
            else ""
        )
        + f", predict {predict_s:.2f} s"
    )


def _say_communication(stats: dict[str, Any]) -> None:
    """What rank 0 handed to collectives, in all and per tree."""
    per_tree = stats.get("bytes_per_tree") or [0]
    print(
        f"communication: rank 0 handed {stats['total_bytes'] / 1e6:.1f} MB to collectives, "
        f"{np.median(per_tree) / 1e3:.1f} kB per tree (median)"
    )


def run_demo(argv: Sequence[str] | None = None) -> int:
    """``dgbdt demo [--rows N] [--rounds N] [--leaves N] [--ranks K]``: the exit
    status, 1 when the reloaded model predicts differently."""
    argv = list(sys.argv[2:] if argv is None else argv)
    args = _parse_args(argv)
    if args.ranks > 1 and not under_launcher():
        rc = _relaunch(args, argv)
        if rc is not None:
            return rc
    distributed, rank, size = _world_position()
    X, y = make_higgs_like(args.rows, seed=1)
    X_test, y_test = make_higgs_like(args.rows // 4, seed=2)
    if rank == 0:
        print(
            f"dgbdt demo: {args.rows} x {X.shape[1]} training rows (HIGGS-like) on {size} "
            f"rank(s), {len(y_test)} test rows, {args.rounds} rounds, {args.leaves} leaves"
        )
    compiled_before = kernels_compiled()
    t0 = time.perf_counter()
    booster = _train_own_rows(args, (X, y), (X_test, y_test), rank, size, distributed)
    fit_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    proba = booster.predict(X_test)
    predict_s = time.perf_counter() - t0
    auc = get_metric("auc").compute(y_test, proba)
    if rank != 0:
        return 0
    size_mb, same = _save_and_reload(booster, X_test, proba)
    stats = booster.comm_stats()
    _say_timings(fit_s, predict_s, kernels_compiled() - compiled_before)
    print(
        f"test AUC {auc:.4f}; model file {size_mb:.2f} MB, reloaded model predicts "
        f"{'identically' if same else 'DIFFERENTLY'}"
    )
    if size > 1:
        _say_communication(stats)
    return 0 if same else 1
