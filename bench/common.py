"""Helpers shared by the benchmark scripts of this folder.

The scripts run as ``python bench/bench_x.py``, which puts this folder first
on ``sys.path``, so ``import common`` finds this module.  It imports only the
standard library at module level: bench_core's children for the peer
libraries import it before measuring their memory, and must not load dgbdt
or Numba.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import pathlib
import platform
import resource
import signal
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parents[1]

#: the collective kinds ``booster.comm_stats()`` counts
KINDS = ("allreduce", "reduce_scatter", "allgather", "bcast")

LOAD_WARNING = "other processes share the CPUs, so times are inflated and noisy"
TAIL_LINES = 6  # lines of a failed child's output quoted in its error


# ---------------------------------------------------------------------------
# data and metrics (in the children)
# ---------------------------------------------------------------------------


def load_datasets_module():
    """The data generators, imported WITHOUT importing the dgbdt package.

    Importing dgbdt would load Numba into every peer's process and inflate
    its memory baseline, so the children load ``datasets/__init__.py`` of
    this checkout as a standalone module; ``dgbdt.datasets`` is the fallback
    when the script is run outside a checkout.
    """
    path = REPO / "datasets" / "__init__.py"
    if path.is_file():
        spec = importlib.util.spec_from_file_location("_bench_datasets", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    import dgbdt.datasets as module  # noqa: PLC0415

    return module


def binary_metrics(y, p):
    """(AUC, logloss) of probabilities ``p``, clipped away from 0 and 1 for the logloss."""
    import numpy as np  # noqa: PLC0415
    from sklearn.metrics import log_loss, roc_auc_score  # noqa: PLC0415

    p = np.clip(np.asarray(p, dtype=np.float64), 1e-15, 1 - 1e-15)
    return float(roc_auc_score(y, p)), float(log_loss(y, p))


def auc_of(y, p):
    """AUC of the scores as given (no clipping: ties at the extremes stay distinct)."""
    from sklearn.metrics import roc_auc_score  # noqa: PLC0415

    return float(roc_auc_score(y, p))


def write_result(path, obj):
    """A child's result file, read back by run_worker."""
    pathlib.Path(path).write_text(json.dumps(obj))


def mpi_world(expected):
    """Under mpiexec: (dgbdt's world communicator, mpi4py's COMM_WORLD).

    dgbdt's ``world_comm`` installs the abort-all exception hook; the world
    size is checked because an mpiexec from another MPI starts K singletons.
    """
    comm = dgbdt_world_comm()
    from mpi4py import MPI  # noqa: PLC0415

    world = MPI.COMM_WORLD
    if world.Get_size() != expected:
        raise RuntimeError(f"expected {expected} ranks, got {world.Get_size()}: the wrong mpiexec?")
    return comm, world


def dgbdt_world_comm():
    """dgbdt's world communicator from the tree on PYTHONPATH: bench_ab runs
    these workers on older trees too (before issue 26 the module was dgbdt.comm)."""
    try:
        from dgbdt.distributed.comm import world_comm  # noqa: PLC0415
    except ImportError:
        from dgbdt.comm import world_comm  # noqa: PLC0415

    return world_comm()


def warm_kernels(param_sets, X, y, X_predict):
    """Train 2 rounds and predict once with each parameter set, in one process.

    Run under ``mpiexec -n 1`` before any ``mpiexec -n K``: Numba compiles
    and caches every kernel here, so the K ranks load the cache instead of
    all compiling at once.
    """
    import dgbdt  # noqa: PLC0415

    for params in param_sets:
        dgbdt.train(params, dgbdt.Dataset(X, y), 2).predict(X_predict)


# ---------------------------------------------------------------------------
# launching children
# ---------------------------------------------------------------------------


def child_env(threads, extra=None):
    """This environment with every thread pool (OpenMP, Numba, BLAS) at ``threads``."""
    env = dict(os.environ)
    for var in ("OMP_NUM_THREADS", "NUMBA_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        env[var] = str(threads)
    env.setdefault("PYTHONUNBUFFERED", "1")
    env.update(extra or {})
    return env


def rank_env(extra=None):
    """An MPI rank's environment: one thread, and OpenMP threads that sleep when idle."""
    return child_env(1, {"OMP_WAIT_POLICY": "passive", **(extra or {})})


def mpiexec_path():
    """The mpiexec of the ``mpich`` wheel, beside this Python."""
    return pathlib.Path(sys.executable).parent / "mpiexec"


def tail_text(text):
    return " | ".join((text or "").strip().splitlines()[-TAIL_LINES:])


def run_group(cmds, timeout, env=None):
    """Start each command in its own process group; kill every group on timeout.

    ``env`` is the whole environment (default: ``rank_env()``).  Returns
    (return codes, output tails, timed_out).
    """
    env = rank_env() if env is None else env
    logs = [tempfile.TemporaryFile(mode="w+") for _ in cmds]
    procs = [
        subprocess.Popen(
            cmd,
            stdout=log,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
            start_new_session=True,
            cwd=os.getcwd(),
        )
        for cmd, log in zip(cmds, logs, strict=True)
    ]
    try:
        timed_out = not _wait_all(procs, time.monotonic() + timeout)
    except BaseException:
        # Ctrl-C or a signal in the parent: the groups do not get it, so end them here.
        _kill_groups(procs)
        raise
    if timed_out or any(p.returncode not in (0, None) for p in procs):
        # One failed or hung: bring every group down (a LightGBM peer would wait forever).
        _kill_groups(procs)
    tails = []
    for log in logs:
        log.seek(0)
        tails.append(tail_text(log.read()))
        log.close()
    return [p.returncode for p in procs], tails, timed_out


def _wait_all(procs, deadline):
    """Wait for every process until ``deadline``; False if one is still running then."""
    for p in procs:
        try:
            p.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            return False
    return True


def _kill_groups(procs):
    for p in procs:
        if p.poll() is None:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    for p in procs:
        p.wait()


def run_captured(cmd, timeout, env=None):
    """``subprocess.run`` with the output captured: (return code, stderr tail, timed_out)."""
    try:
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "", True
    return proc.returncode, tail_text(proc.stderr or proc.stdout), False


def worker_cmd(script, args, cfg, result):
    """The command that runs ``script`` in a child mode, its config as JSON."""
    return [
        sys.executable,
        str(script),
        *args,
        "--config",
        json.dumps(cfg),
        "--result",
        str(result),
    ]


def run_worker(script, args, cfg, timeout, *, env=None, ranks=None, group=False, timeout_msg=None):
    """Run ``script ARGS --config CFG --result FILE``; returns (FILE's JSON or None, error).

    Plain: ``subprocess.run`` with ``env``.  ``ranks=K``: under ``mpiexec -n
    K``, and ``group=True`` without mpiexec, both through run_group (own
    process group killed whole on timeout; ``env`` default rank_env()).  An
    MPI worker rewrites its file after every run, so under mpiexec the runs
    finished before a failure come back with the error; otherwise a failure
    returns None.  ``timeout_msg`` formats the timeout in seconds.
    """
    timeout_msg = timeout_msg or "timed out after {:.0f} s"
    with tempfile.TemporaryDirectory(prefix=f"dgbdt-{pathlib.Path(script).stem}-") as tmp:
        result = pathlib.Path(tmp) / "result.json"
        cmd = worker_cmd(script, args, cfg, result)
        if ranks:
            cmd = [str(mpiexec_path()), "-n", str(ranks), *cmd]
        if ranks or group:
            rcs, tails, timed_out = run_group([cmd], timeout, env)
            rc, tail = rcs[0], tails[0]
        else:
            rc, tail, timed_out = run_captured(cmd, timeout, env)
        data = json.loads(result.read_text()) if result.is_file() else None
    partial = data if ranks else None
    if timed_out:
        return partial, timeout_msg.format(timeout)
    if rc != 0 or data is None:
        return partial, f"exit code {rc}: {tail}"
    return data, None


def progress(what, err, t0, *, failed="FAILED: {}", load=False):
    """One progress line: ``  WHAT: ok in N s`` or the failure (``failed`` formats it)."""
    status = "ok" if err is None else failed.format(err)
    line = f"  {what}: {status} in {time.perf_counter() - t0:.0f} s"
    if load:
        # A slow step on a shared machine is explained by the load at its end.
        line += f"  (load {os.getloadavg()[0]:.2f})"
    print(line, flush=True)


def timed(label, fn, *args, load=False, failed="FAILED: {}", **kwargs):
    """Run ``fn`` (which returns (result, error)), print ``  ran LABEL: ...``; returns fn's pair."""
    t0 = time.perf_counter()
    res, err = fn(*args, **kwargs)
    progress(f"ran {label}", err, t0, failed=failed, load=load)
    return res, err


# ---------------------------------------------------------------------------
# the parent: command line, header, output
# ---------------------------------------------------------------------------


def arg_parser(doc):
    """An argument parser whose ``--help`` shows the script's docstring as written."""
    return argparse.ArgumentParser(
        description=doc, formatter_class=argparse.RawDescriptionHelpFormatter
    )


def add_sized(ap, flag, text, full, quick=None):
    """An integer option whose default comes from ``full`` (or ``quick`` under
    ``--quick``, see apply_defaults); its help quotes both."""
    key = flag[2:].replace("-", "_")
    sizes = f"default {full[key]:,}" + ("" if quick is None else f"; --quick {quick[key]:,}")
    ap.add_argument(flag, type=int, help=f"{text} ({sizes})")


def apply_defaults(args, full, quick):
    """Fill the options left unset with the full-size or the ``--quick`` default."""
    for key, value in (quick if args.quick else full).items():
        if getattr(args, key) is None:
            setattr(args, key, value)


def load_average():
    """The 1-minute load average, None where the platform has none."""
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else None


def print_machine(warning=LOAD_WARNING):
    """Print the Python and CPU line, and ``warning`` when the machine is busy at
    start (load above 0.5 on a 2-core machine skews every time); returns the load."""
    print(f"python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} CPUs")
    load = load_average()
    if load is not None and load > 0.5:
        print(f"warning: load average {load:.2f} before start: {warning}")
    return load


def machine_info(load_before):
    """The JSON's record of where the run was made."""
    return {
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "load_average_before": load_before,
    }


def write_json(path, payload):
    """Write the run's results (``--json PATH``) and say so."""
    pathlib.Path(path).write_text(json.dumps(payload, indent=2))
    print(f"\nwrote {path}")


def verdict(ok):
    return "PASS" if ok else "FAIL"


def fmt_runs(runs, sep="/"):
    """Every run's seconds, 2 decimals, in order."""
    return sep.join(f"{t:.2f}" for t in runs)


def fmt_bytes(b):
    """Bytes with 3 significant digits in decimal units (kB = 1e3 bytes); '-' for none."""
    if b is None or not math.isfinite(b):
        return "-"
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if b >= scale:
            return f"{b / scale:.3g} {unit}"
    return f"{b:.0f} B"


def _table_line(cells, widths, left):
    return "  ".join(
        str(c).ljust(w) if i < left else str(c).rjust(w)
        # cells beyond the header are not printed: zip stops at the widths
        for i, (c, w) in enumerate(zip(cells, widths, strict=False))
    )


def print_rows(header, rows, left=1):
    """A table: the first ``left`` columns left-aligned, the others right-aligned.

    A row shorter than the header is a note (an error): its first cell is
    padded to the first column, the rest follows as it is, and it does not
    widen the columns.  Cells beyond the header are not printed.
    """
    full = [header] + [r for r in rows if len(r) >= len(header)]
    widths = [max(len(str(r[i])) for r in full) for i in range(len(header))]
    line = _table_line(header, widths, left)
    print(line)
    print("-" * len(line))
    for r in rows:
        if len(r) < len(header):
            print("  ".join([str(r[0]).ljust(widths[0]), *map(str, r[1:])]))
        else:
            print(_table_line(r, widths, left))


# -- memory of this process (Linux /proc; ru_maxrss elsewhere) ---------------------
def rss_now_mb():
    """Current resident set size (VmRSS), MiB."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return peak_rss_mb()


def peak_rss_mb():
    """High-water RSS of this process, MiB (ru_maxrss is KiB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024.0 * 1024.0) if sys.platform == "darwin" else peak / 1024.0


def reset_peak_rss():
    """Reset the RSS high-water mark to the current RSS (Linux >= 4.0).

    Writing 5 to /proc/self/clear_refs resets the mm's hiwater_rss, which
    ru_maxrss reads, so the peak measured afterwards belongs to the fitting
    phase and not to data generation.  Returns False where unsupported.
    """
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False
