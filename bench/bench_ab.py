"""A/B speed of two dgbdt source trees: does a change keep the fit time?

Runs the dgbdt workers of bench_core.py (float) and bench_quantized.py
(``use_quantized_grad``; the dgbdt part of ``--no-binary --no-comm``) with
``PYTHONPATH`` set to each tree in turn, interleaved old, new, old, new, ...
so that the machine's drift hits both alike, and prints every run, the
median fit times and the ratio new / old (the refactoring target: <= 1.03).

    python bench/bench_ab.py --old /path/to/old/checkout --new . --pairs 5

A tree is a checkout of this repository whose kernels import as
``dgbdt.native`` (in a bare worktree: ``ln -s ../native dgbdt/native``); the
files each tree's ``import dgbdt`` reads are printed first.  Both
trees' kernels must be compiled already (a warm-up fit runs first in each
worker, so a cold cache only slows the first pair).  This is a script run by
hand, not a test; check the load average it prints.
"""

import os
import pathlib
import statistics
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import bench_core  # noqa: E402
import bench_quantized  # noqa: E402
import common  # noqa: E402

BENCHES = {
    "float (bench_core)": (bench_core.SCRIPT, "dgbdt", {}),
    "quantized (bench_quantized)": (bench_quantized.SCRIPT, "speed", bench_quantized.QUANT),
}


def parse_args(argv):
    ap = common.arg_parser(__doc__)
    ap.add_argument("--old", required=True, help="the reference tree (e.g. a git worktree)")
    ap.add_argument("--new", default=".", help="the changed tree (default: this checkout)")
    ap.add_argument("--pairs", type=int, default=5, help="interleaved A/B pairs (default 5)")
    ap.add_argument("--rows", type=int, default=1_000_000, help="training rows (default 1e6)")
    ap.add_argument("--rounds", type=int, default=100, help="boosting rounds (default 100)")
    ap.add_argument("--threads", type=int, default=2, help="threads per fit (default 2)")
    ap.add_argument("--only", choices=("float", "quantized"), help="run one bench only")
    ap.add_argument("--timeout", type=float, default=1800, help="seconds per run")
    ap.add_argument("--json", metavar="PATH", help="also write all runs to PATH")
    return ap.parse_args(argv)


def bench_cfg(args, extra):
    cfg = {
        "rows": args.rows,
        "test_rows": 200_000,
        "features": 28,
        "rounds": args.rounds,
        "leaves": 255,
        "learning_rate": 0.1,
        "max_bin": 255,
        "threads": args.threads,
        "repeats": 1,
    }
    if extra:
        cfg.update(lib="dgbdt", extra_params=extra)
    return cfg


def one_run(script, mode, cfg, tree, timeout):
    """Fit seconds of one worker run on ``tree`` (None and the error on failure)."""
    env = common.child_env(cfg["threads"], {"PYTHONPATH": str(tree)})
    res, err = common.run_worker(script, ["--worker", mode], cfg, timeout, env=env)
    return (res["fit_s"], None) if res else (None, err)


def run_bench(name, args, trees):
    script, mode, extra = BENCHES[name]
    cfg = bench_cfg(args, extra)
    runs = {side: [] for side in trees}
    for pair in range(args.pairs):
        for side, tree in trees.items():
            fit, err = one_run(script, mode, cfg, tree, args.timeout)
            if err:
                raise SystemExit(f"{name}, {side} ({tree}): {err}")
            runs[side].append(fit)
            print(
                f"  {name} pair {pair + 1} {side}: fit {fit:.2f} s "
                f"(load {common.load_average():.2f})",
                flush=True,
            )
    medians = {side: statistics.median(r) for side, r in runs.items()}
    return {"runs": runs, "medians": medians, "ratio": medians["new"] / medians["old"]}


def where_imported(tree):
    """The files ``import dgbdt`` and its kernels come from with ``tree`` first on
    the path; exits unless dgbdt is the tree's own."""
    code = "import dgbdt, dgbdt.native.split as s; print(dgbdt.__file__, s.__file__)"
    env = {**os.environ, "PYTHONPATH": str(tree)}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd="/"
    )
    files = out.stdout.split()
    if out.returncode or not files or not files[0].startswith(str(tree)):
        raise SystemExit(f"{tree}: dgbdt is not imported from it: {out.stdout}{out.stderr}")
    return " and ".join(files)


def main(argv=None):
    args = parse_args(argv)
    trees = {"old": pathlib.Path(args.old).resolve(), "new": pathlib.Path(args.new).resolve()}
    for side, tree in trees.items():
        print(f"{side}: {where_imported(tree)}")
    load_before = common.print_machine()
    names = [n for n in BENCHES if args.only is None or n.startswith(args.only)]
    results = {name: run_bench(name, args, trees) for name in names}
    print()
    for name, r in results.items():
        print(
            f"{name}: median fit new {r['medians']['new']:.2f} s / old "
            f"{r['medians']['old']:.2f} s = {r['ratio']:.3f}  "
            f"{common.verdict(r['ratio'] <= 1.03)} (<= 1.03)"
        )
    print(f"load average {load_before:.2f} before, {os.getloadavg()[0]:.2f} after")
    if args.json:
        common.write_json(args.json, {"trees": {k: str(v) for k, v in trees.items()}, **results})
    return 0


if __name__ == "__main__":
    sys.exit(main())
