"""LightGBM's own phase timers beside bench_profile's, for the same fit.

The LightGBM wheel prints no timers; a library built with ``-DUSE_TIMETAG=ON``
does (its global timer prints "<name> costs: <seconds>" lines when the
process ends).  Build one (LightGBM's release tag of the installed version):

    cmake -S LightGBM -B build -DUSE_TIMETAG=ON -DCMAKE_BUILD_TYPE=Release
    cmake --build build -j2 --target _lightgbm      # -> LightGBM/lib_lightgbm.so

(v4.7.0's CMakeLists needs CMake >= 3.28: ``pip install cmake`` in a venv of
its own; the submodules fmt, fast_double_parser, compute and eigen at the
commits the release pins.  About 2.5 minutes on 2 cores.)

then ``python bench/bench_profile.py --lightgbm-lib LightGBM/lib_lightgbm.so``.
The installed lightgbm package is copied to a temporary folder with that
library in place of its own, and the same data and parameters are trained in
a child process of its own (the timers add up per process).

Not a script: bench_profile imports it.
"""

import ctypes
import gc
import importlib.util
import json
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time

import common

# bench_profile's phases and the LightGBM timers that do the same work
# (FindBestSplitsFromHistograms also subtracts the larger child's histogram and
# fixes its most frequent bins, as ours "subtract" and "fix bins").
PHASES = {
    "gradients": ("GBDT::Boosting",),
    "histogram (with gather)": ("SerialTreeLearner::ConstructHistograms",),
    "split scan (with subtract, fix)": ("SerialTreeLearner::FindBestSplitsFromHistograms",),
    "partition": ("SerialTreeLearner::SplitInner",),
    "score update": ("GBDT::UpdateScore",),
}
# ... and ours that make each of them
OURS = {
    "gradients": ("gradients",),
    "histogram (with gather)": ("gather", "histogram"),
    "split scan (with subtract, fix)": ("subtract", "fix bins", "split scan"),
    "partition": ("partition", "decode bins"),
    "score update": ("score update",),
}
TIMER_LINE = re.compile(r"(\S+) costs:\s*([0-9.eE+-]+)")


def run(args, params, lib):
    """LightGBM's (construct s, train s, {timer: s}) for bench_profile's fit;
    raises RuntimeError with the child's output tail when it fails."""
    spec = importlib.util.find_spec("lightgbm")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("lightgbm is not installed (pip install -e '.[bench]')")
    with tempfile.TemporaryDirectory(prefix="dgbdt-lgb-timetag-") as tmp:
        pkg = pathlib.Path(tmp) / "lightgbm"
        shutil.copytree(spec.submodule_search_locations[0], pkg)
        for old in pkg.rglob("lib_lightgbm.*"):
            shutil.copy(lib, old)
        env = common.child_env(args.threads, {"PYTHONPATH": tmp})
        cfg = json.dumps({"data": args.data, "rows": args.rows, "features": args.features,
                          "rounds": args.rounds, "params": params, "pkg": str(pkg)})  # fmt: skip
        out = subprocess.run(
            [sys.executable, __file__, cfg], env=env, capture_output=True, text=True, timeout=3600
        )
    walls = [json.loads(line[5:]) for line in out.stdout.splitlines() if line.startswith("WALL ")]
    timers = {m[1]: float(m[2]) for m in TIMER_LINE.finditer(out.stdout)}
    if out.returncode != 0 or not walls or not timers:
        tail = common.tail_text(out.stdout + out.stderr)
        raise RuntimeError(f"exit code {out.returncode}, {len(timers)} timer lines: {tail}")
    return walls[0]["construct"], walls[0]["train"], timers


def side_by_side(prof, construct, train, timers):
    """Table rows: phase, dgbdt s, LightGBM s, dgbdt/LightGBM."""
    s = prof["seconds"]
    fit = prof["total_s"] - prof["dataset_s"]
    rows = [("dataset (binning)", prof["dataset_s"], construct)]
    for phase, names in PHASES.items():
        ours = sum(s.get(p, 0.0) for p in OURS[phase])
        rows.append((phase, ours, sum(timers.get(n, 0.0) for n in names)))
    ours_kernels = sum(r[1] for r in rows[1:])
    theirs_kernels = sum(r[2] for r in rows[1:])
    rows.append(("between and around kernels", fit - ours_kernels, train - theirs_kernels))
    rows.append(("fit (dataset + training)", prof["total_s"], construct + train))
    return [[n, f"{a:.3f}", f"{b:.3f}", f"{a / b:.2f}x" if b else ""] for n, a, b in rows]


def _child(cfg):
    """In the child: the fit, wall times as a WALL line, then the timers at exit."""
    import lightgbm as lgb  # noqa: PLC0415

    assert lgb.__file__.startswith(cfg["pkg"]), (lgb.__file__, cfg["pkg"])
    if cfg["data"].startswith("flights-"):
        import bench_flights  # noqa: PLC0415

        X, y, _, _ = bench_flights.load_flights(cfg["data"].split("-")[1])
    else:
        ds = common.load_datasets_module()
        X, y = ds.make_higgs_like(cfg["rows"], n_features=cfg["features"], seed=0)
    params = {**cfg["params"], "verbosity": 1}  # the timers print at Info
    t0 = time.perf_counter()
    train_set = lgb.Dataset(X, y, params=params).construct()
    t1 = time.perf_counter()
    booster = lgb.train(params, train_set, cfg["rounds"])
    t2 = time.perf_counter()
    print("WALL " + json.dumps({"construct": t1 - t0, "train": t2 - t1}), flush=True)
    del booster, train_set
    gc.collect()
    # the timers print when the library unloads, after Python's logging is gone
    lgb.basic._LIB.LGBM_RegisterLogCallback(ctypes.c_void_p(None))
    sys.stdout.flush()


if __name__ == "__main__":
    _child(json.loads(sys.argv[1]))
