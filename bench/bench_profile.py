"""Where a dgbdt fit spends its time, phase by phase, against the machine's limit.

Prints the CPU (llvmlite's host CPU name, the cache sizes), the load at start,
then:

1. **the physical limit**: a plain row-wise histogram kernel (every row of the
   binned matrix in order, one thread and all threads, float and packed integer
   sums) and the same over the rows of a scattered leaf, in bin updates per
   second;
2. **the phases of one fit** (default 1,000,000 x 28, binary, 255 leaves,
   30 rounds; ``--quantized`` for ``use_quantized_grad``), each timed around
   the kernel calls that make it: gradients, gather of ordered gradients,
   histogram build, subtraction, most-frequent-bin fix, split scan, partition,
   score update, collectives (``--ranks K`` runs the same profile on every rank
   of ``mpiexec -n K`` and prints rank 0's), and "Python between kernels": the
   rest of the time spent inside ``TreeGrower.grow``.  The histogram phase is
   also given in bin updates per second and as a share of the limit.

    python bench/bench_profile.py                       # float, 1 process
    python bench/bench_profile.py --quantized
    python bench/bench_profile.py --ranks 2 --learner data
    python bench/bench_profile.py --json prof.json      # for --compare
    python bench/bench_profile.py --compare before.json after.json

The wrappers cost about 1 us a call (a few thousand calls a tree), so the
fit here is slightly slower than without them; the shares are what to read.
This is a script run by hand, not a test.
"""

import argparse
import functools
import json
import os
import pathlib
import subprocess
import sys
import time
from collections import defaultdict

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import common  # noqa: E402

# phase -> the (module, function) names whose calls it is made of
PHASES = {
    "gradients": [
        ("dgbdt.objective.objectives", "binary_gradients"),
        ("dgbdt.objective.objectives", "*gradients"),
    ],
    "quantize": [("dgbdt.treelearner.quantization", "GradientQuantizer.quantize")],
    "gather": [("dgbdt.treelearner.histograms", "gather_gradients")],
    "histogram": [
        ("dgbdt.treelearner.histograms", "build_histogram_rowwise"),
        ("dgbdt.treelearner.histograms", "build_histogram_colwise"),
        ("dgbdt.treelearner.histograms", "build_histogram_blocks"),
        ("dgbdt.treelearner.histograms", "build_store_histogram"),
        ("dgbdt.treelearner.histograms", "build_int_histogram_rowwise"),
        ("dgbdt.treelearner.histograms", "build_wide_histogram_rowwise"),
        ("dgbdt.treelearner.histograms", "build_int_histogram_colwise"),
        ("dgbdt.treelearner.histograms", "build_store_int_histogram"),
        ("dgbdt.treelearner.histograms", "gather_packed"),
        ("dgbdt.treelearner.histograms", "widen_words"),
    ],
    "subtract": [
        ("dgbdt.treelearner.histograms", "subtract_histograms"),
        ("dgbdt.treelearner.histograms", "QuantizedHistograms.subtract"),
    ],
    "fix bins": [("dgbdt.treelearner.histograms", "fix_most_frequent_bins")],
    "split scan": [
        ("dgbdt.treelearner.learners.serial", "find_best_split"),
        ("dgbdt.treelearner.learners.voting", "find_best_split"),
        ("dgbdt.treelearner.learners.voting", "best_gain_per_feature"),
    ],
    "decode bins": [("dgbdt.treelearner.learners.serial", "SerialLearner.feature_column")],
    "partition": [("dgbdt.treelearner.learners.serial", "partition_rows")],
    "score update": [
        ("dgbdt.boosting.loop", "add_leaf_values"),
        ("dgbdt.treelearner.learners.serial", "SerialLearner.add_tree_scores"),
    ],
    "collectives": [
        ("dgbdt.distributed.comm", f"MPIComm.{n}")
        for n in ("allreduce", "reduce_scatter", "allgather", "allgatherv", "bcast")
    ],
}
INSIDE_GROW = (
    "gather", "histogram", "subtract", "fix bins", "split scan", "decode bins", "partition",
)  # fmt: skip


def parse_args(argv):
    ap = common.arg_parser(__doc__)
    ap.add_argument(
        "--data",
        choices=("higgs", "flights-onehot", "flights-native"),
        default="higgs",
        help="higgs-like dense (--rows x --features), or bench_flights' one-hot CSR or "
        "its DataFrame of category columns "
        "(use with --leaves 63 --params learning_rate=0.05,min_data_in_leaf=50)",
    )
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--features", type=int, default=28)
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--leaves", type=int, default=255)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--quantized", action="store_true", help="use_quantized_grad")
    ap.add_argument("--params", default="", help="extra params, k=v,k=v")
    ap.add_argument("--ranks", type=int, default=1, help="mpiexec -n K (rank 0 printed)")
    ap.add_argument("--learner", default="data", help="tree_learner with --ranks")
    ap.add_argument("--json", metavar="PATH", help="also write the profile to PATH")
    ap.add_argument(
        "--lightgbm-lib",
        metavar="SO",
        help="a lib_lightgbm built with -DUSE_TIMETAG=ON: also profile LightGBM's fit "
        "(its own timers) and print both side by side (see lightgbm_phases.py)",
    )
    ap.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"), help="two --json files")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--config", help=argparse.SUPPRESS)
    ap.add_argument("--result", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.config:  # a worker: the parent's settings
        for k, v in json.loads(args.config).items():
            setattr(args, k, v)
    return args


# ---------------------------------------------------------------------------
# the machine
# ---------------------------------------------------------------------------


def cpu_line():
    """llvmlite's host CPU name (what Numba compiles for) and the cache sizes."""
    import llvmlite.binding as llvm  # noqa: PLC0415

    caches = []
    base = pathlib.Path("/sys/devices/system/cpu/cpu0/cache")
    for idx in sorted(base.glob("index*")):
        try:
            level = (idx / "level").read_text().strip()
            kind = (idx / "type").read_text().strip()[0]
            size = (idx / "size").read_text().strip()
        except OSError:
            continue
        caches.append(f"L{level}{kind.lower() if kind in 'DI' else ''} {size}")
    return f"CPU {llvm.get_host_cpu_name()}; caches (per core / shared): {', '.join(caches)}"


def physical_limit(rows, features, threads):
    """Bin updates per second of plain kernels on this machine (dict by name)."""
    import numba  # noqa: PLC0415
    import numpy as np  # noqa: PLC0415
    from dgbdt.native import histogram as H  # noqa: PLC0415

    rng = np.random.default_rng(0)
    binned = rng.integers(0, 255, (rows, features), dtype=np.uint8)
    offsets = np.arange(features + 1, dtype=np.int64) * 256
    g = rng.standard_normal(rows).astype(np.float32)
    h = np.ones(rows, np.float32)
    hist = np.empty((offsets[-1], 2))
    chunks = np.empty((H.MAX_CHUNKS, offsets[-1], 2))
    every = np.arange(rows, dtype=np.uint32)
    scattered = np.sort(rng.choice(rows, rows // 8, replace=False)).astype(np.uint32)
    out = {}
    for label, idx in (("all rows", every), ("1/8 of rows, scattered", scattered)):
        for n_threads in sorted({1, threads}):
            numba.set_num_threads(n_threads)
            # the row-wise kernel reads gradients by row index (a tree from
            # before: ordered; the same bin updates either way, only the
            # gradients read differ)
            by_row = (
                "ordered_gradients" not in H.build_histogram_rowwise.py_func.__code__.co_varnames
            )
            gg, hh = (g, h) if by_row else (g[idx], h[idx])
            args = (binned, idx, gg, hh, offsets, n_threads, chunks, hist)
            if "n_threads" not in H.build_histogram_rowwise.py_func.__code__.co_varnames:
                args = args[:5] + args[6:]  # a tree from before the kernel took it (--compare)
            H.build_histogram_rowwise(*args)  # compile / warm
            t = _best_of(3, H.build_histogram_rowwise, *args)
            out[f"float row-wise, {label}, {n_threads} thr"] = len(idx) * features / t
    numba.set_num_threads(threads)
    return out


def _best_of(n, fn, *args):
    best = float("inf")
    for _ in range(n):
        t0 = time.perf_counter()
        fn(*args)
        best = min(best, time.perf_counter() - t0)
    return best


# ---------------------------------------------------------------------------
# the phase timers
# ---------------------------------------------------------------------------


class PhaseTimer:
    """Seconds and calls per phase; nested timed calls count once (the outer)."""

    def __init__(self):
        self.seconds = defaultdict(float)
        self.calls = defaultdict(int)
        self.depth = 0
        self.updates = 0  # histogram bin updates (see _bin_updates)

    def wrap(self, phase, fn):
        @functools.wraps(fn)
        def timed(*args, **kwargs):
            if self.depth:
                return fn(*args, **kwargs)
            self.depth += 1
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds[phase] += time.perf_counter() - t0
                self.calls[phase] += 1
                self.depth -= 1

        return timed

    def install(self):
        """Wrap every phase's functions where the callers look them up."""
        import importlib  # noqa: PLC0415

        for phase, places in PHASES.items():
            for module_name, name in places:
                module = importlib.import_module(module_name)
                if name == "*gradients":
                    for obj in vars(module).values():
                        if isinstance(obj, type) and "gradients" in vars(obj):
                            obj.gradients = self.wrap(phase, obj.gradients)
                    continue
                owner, _, attr = name.rpartition(".")
                target = getattr(module, owner) if owner else module
                if hasattr(target, attr):
                    setattr(target, attr, self.wrap(phase, getattr(target, attr)))
        self._wrap_grow()
        self._count_updates()

    def _wrap_grow(self):
        from dgbdt.treelearner.grower import TreeGrower  # noqa: PLC0415

        grow = TreeGrower.grow

        def timed_grow(grower, *args, **kwargs):
            t0 = time.perf_counter()
            try:
                return grow(grower, *args, **kwargs)
            finally:
                self.seconds["grow (total)"] += time.perf_counter() - t0
                self.calls["grow (total)"] += 1

        TreeGrower.grow = timed_grow

    def _count_updates(self):
        import dgbdt.treelearner.histograms as hm  # noqa: PLC0415
        from dgbdt.treelearner.learners.serial import SerialLearner  # noqa: PLC0415

        for cls in (hm.FloatHistograms, hm.QuantizedHistograms):
            build = cls.build_local

            def counted(kind, learner, rows, features, count, into, _build=build):
                t0 = time.perf_counter()
                self.updates += _bin_updates(learner, rows, features)
                # not the fit's time: "Python inside grow" leaves it out
                self.seconds["counting updates"] += time.perf_counter() - t0
                return _build(kind, learner, rows, features, count, into)

            cls.build_local = counted
        del SerialLearner


def _bin_updates(learner, rows, features):
    """Bin updates of one local build: rows x features of a plain store; rows x
    dense columns built, plus the rows' sparse entries, of a bundled one."""
    import numpy as np  # noqa: PLC0415

    store = learner.data.store
    if store.plain:
        return len(rows) * len(learner.histogram_features(features))
    cols, sparse = learner.store_columns(features)
    n = len(rows) * len(cols)
    if sparse and len(rows):
        n += int((store.indptr[rows.astype(np.int64) + 1] - store.indptr[rows]).sum())
    return n


def run_fit(args):
    """One timed fit with the phase timers in; returns the profile dict."""

    import dgbdt  # noqa: PLC0415

    X, y = _data(args)
    comm_rank, n_ranks = 0, 1
    if args.ranks > 1:
        from mpi4py import MPI  # noqa: PLC0415

        comm_rank, n_ranks = MPI.COMM_WORLD.Get_rank(), MPI.COMM_WORLD.Get_size()
        assert n_ranks == args.ranks, (n_ranks, args.ranks)
        X, y = X[comm_rank::n_ranks], y[comm_rank::n_ranks]
    params = fit_params(args)
    if args.ranks > 1:
        params.update(tree_learner=args.learner, num_machines=n_ranks)
    dgbdt.train(params, dgbdt.Dataset(X[:20000], y[:20000]), 2)  # compile / load kernels
    timer = PhaseTimer()
    timer.install()
    t0 = time.perf_counter()
    ds_ = dgbdt.Dataset(X, y)
    if args.ranks == 1:  # (ranks bin together, inside train: binning is in the fit there)
        ds_.construct()
    t_bin = time.perf_counter() - t0
    booster = dgbdt.train(params, ds_, args.rounds)
    total = time.perf_counter() - t0
    del booster
    return {
        "rank": comm_rank,
        "ranks": n_ranks,
        "total_s": total,
        "dataset_s": t_bin,
        "seconds": dict(timer.seconds),
        "calls": dict(timer.calls),
        "updates": timer.updates,
        "rows": int(X.shape[0]),
        "features": int(X.shape[1]),
    }


def fit_params(args):
    """The profiled fit's parameters (also LightGBM's with --lightgbm-lib)."""
    params = {
        "objective": "binary",
        "num_leaves": args.leaves,
        "learning_rate": 0.1,
        "verbosity": -1,
        "num_threads": args.threads,
    }
    if args.quantized:
        params["use_quantized_grad"] = True
    for kv in filter(None, args.params.split(",")):
        k, v = kv.split("=")
        params[k] = json.loads(v) if v[:1].isdigit() or v in ("true", "false") else v
    return params


def _data(args):
    if args.data.startswith("flights-"):
        import bench_flights  # noqa: PLC0415

        X, y, _, _ = bench_flights.load_flights(args.data.split("-")[1])
        return X, y
    ds = common.load_datasets_module()
    return ds.make_higgs_like(args.rows, n_features=args.features, seed=0)


def phase_rows(prof, limit):
    """Table rows: phase, seconds, share of the fit, calls, us per call."""
    s, c = prof["seconds"], prof["calls"]
    fit = prof["total_s"] - prof["dataset_s"]
    inside = sum(s.get(p, 0.0) for p in INSIDE_GROW) + s.get("collectives_in_grow", 0.0)
    python = (
        s.get("grow (total)", 0.0)
        - inside
        - s.get("collectives", 0.0)
        - s.get("counting updates", 0.0)
    )
    outside = fit - s.get("grow (total)", 0.0)
    rows = [("dataset (binning)", prof["dataset_s"], None, 1)]
    for phase in PHASES:
        if s.get(phase):
            rows.append((phase, s[phase], s[phase] / fit, c[phase]))
    rows.append(("Python inside grow", python, python / fit, c.get("grow (total)", 0)))
    rows.append(("outside grow (rest)", outside - _outside_kernels(s), None, None))
    rows.append(("fit (total)", fit, 1.0, None))
    out = []
    for name, sec, share, calls in rows:
        per = f"{sec / calls * 1e6:,.0f}" if calls else ""
        out.append([name, f"{sec:.3f}", f"{share:.1%}" if share is not None else "", calls, per])
    if s.get("histogram"):
        rate = prof["updates"] / s["histogram"]
        out.append(
            ["histogram rate", f"{rate / 1e9:.2f} G/s", f"{rate / limit:.0%} of limit", "", ""]
        )
    return out


def _outside_kernels(s):
    return sum(s.get(p, 0.0) for p in ("gradients", "quantize", "score update"))


def worker(args):
    prof = run_fit(args)
    if args.ranks == 1 or prof["rank"] == 0:
        common.write_result(args.result, prof)


def main(argv=None):
    args = parse_args(argv)
    if args.worker:
        return worker(args)
    if args.compare:
        return compare(*args.compare)
    print(cpu_line())
    load = common.print_machine()
    os.environ.setdefault("NUMBA_NUM_THREADS", str(args.threads))
    limits = physical_limit(args.rows, args.features, args.threads)
    print("\nphysical limit: a plain row-wise histogram kernel (float64 sums)")
    common.print_rows(
        ["kernel", "G bin updates/s"], [[k, f"{v / 1e9:.2f}"] for k, v in limits.items()]
    )
    limit = max(v for k, v in limits.items() if "scattered" in k)
    prof = _profile(args)
    if prof is None:
        return 1
    what = "quantized" if args.quantized else "float"
    print(
        f"\nphases of one fit: {args.data} {prof['rows']:,} x {prof.get('features', args.features)}"
        f", binary, {args.leaves} leaves, "
        f"{args.rounds} rounds, {args.threads} threads, {what}"
        + (f", {args.ranks} ranks ({args.learner}), rank 0" if args.ranks > 1 else "")
    )
    common.print_rows(["phase", "s", "share", "calls", "us/call"], phase_rows(prof, limit))
    if args.lightgbm_lib:
        _print_lightgbm(args, prof)
    if args.json:
        prof.update(cpu=cpu_line(), load=load, limits=limits, args=vars(args))
        common.write_json(args.json, prof)
    return 0


def _profile(args):
    skip = ("worker", "config", "result", "compare", "json")
    cfg = {k: v for k, v in vars(args).items() if k not in skip}
    argv = ["--worker"]
    if args.ranks > 1:
        env = common.rank_env({"NUMBA_NUM_THREADS": str(args.threads)})
        res, err = common.run_worker(__file__, argv, cfg, 3600, env=env, ranks=args.ranks)
    else:
        env = common.child_env(args.threads)
        res, err = common.run_worker(__file__, argv, cfg, 3600, env=env)
    if res is None:
        print("FAILED:", err)
    return res


def _print_lightgbm(args, prof):
    """LightGBM's timers for the same fit beside ours (lightgbm_phases)."""
    import lightgbm_phases  # noqa: PLC0415

    try:
        construct, train, timers = lightgbm_phases.run(args, fit_params(args), args.lightgbm_lib)
    except (RuntimeError, OSError, subprocess.SubprocessError) as err:
        print(f"\nLightGBM's timers: FAILED: {err}")
        return
    print(f"\nthe same fit beside LightGBM's own timers ({args.lightgbm_lib}):")
    common.print_rows(
        ["phase", "dgbdt s", "LightGBM s", "dgbdt/LightGBM"],
        lightgbm_phases.side_by_side(prof, construct, train, timers),
    )
    prof["lightgbm"] = {"construct_s": construct, "train_s": train, "timers": timers}


def compare(before_path, after_path):
    """Two profiles side by side: seconds per phase before, after, and the ratio."""
    before = json.loads(pathlib.Path(before_path).read_text())
    after = json.loads(pathlib.Path(after_path).read_text())
    print(f"before: {before.get('cpu')}\nafter:  {after.get('cpu')}")
    rows = []
    names = [r[0] for r in phase_rows(before, 1.0)] + [r[0] for r in phase_rows(after, 1.0)]
    b = {r[0]: r for r in phase_rows(before, 1.0)}
    a = {r[0]: r for r in phase_rows(after, 1.0)}
    for name in dict.fromkeys(names):
        if name == "histogram rate":
            continue
        sb = float(b[name][1]) if name in b else 0.0
        sa = float(a[name][1]) if name in a else 0.0
        rows.append([name, f"{sb:.3f}", f"{sa:.3f}", f"{sa / sb:.2f}" if sb else ""])
    common.print_rows(["phase", "before s", "after s", "after/before"], rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
