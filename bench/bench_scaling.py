#!/usr/bin/env python
"""Scaling model: projected fit time per tree on 8 to 1,024 ranks, per tree learner.

A projection, not a measurement.  It combines what ``bench/bench_comm.py``
measured on one machine (bytes and calls per tree per collective kind, and a
single-process profile of where a tree's compute goes) with an alpha-beta
network model.  Inputs: ``--from-json`` a file written by
``bench_comm.py --json``; without it this script first runs a small
measurement itself (``bench_comm.py --ks 2 --seeds 1 --rows 20000 --rounds 5
--leaves 63 --no-speed``, about a minute on 2 cores).

Model and assumptions (all of them)
-----------------------------------
Time per tree on K ranks = compute per rank + communication; the two do not
overlap (dgbdt's collectives are blocking) and every rank is equally loaded
(no stragglers, no skew of rows between shards, no OS noise).

Communication.  For each collective kind (allreduce, reduce_scatter,
allgather, bcast) bench_comm measured, at the smallest K it ran, the calls per
tree and the bytes of *one rank's send buffer* per call (``m``).  For every
learner those per-rank buffers do not depend on K: data-parallel
reduce-scatters the whole histogram of the smaller child (all features' bins
x 16 B) and allgathers one split record per rank; voting allgathers top_k
(feature, gain) pairs per rank and reduce-scatters the elected features'
bins; feature-parallel allgathers one split record per rank.  Calls per tree
are also taken as K-independent (the same tree shape).  Each call costs
``alpha * steps + bytes_moved / beta``, with the per-rank step and volume
counts of the textbook algorithms (Thakur, Rabenseifner & Gropp 2005,
"Optimization of collective communication operations in MPICH"), for K a
power of two:

    reduce_scatter, ring:            K-1 steps,      (K-1)/K * m bytes
    reduce_scatter, recursive halving: log2 K steps, (K-1)/K * m bytes
    allgather (m = own piece), ring:  K-1 steps,      (K-1) * m bytes
    allgather, recursive doubling:    log2 K steps,   (K-1) * m bytes
    allreduce, ring (= reduce-scatter + allgather of m/K pieces):
                                      2(K-1) steps,   2(K-1)/K * m bytes
    allreduce, recursive doubling:    log2 K steps,   log2 K * m bytes
    bcast, binomial tree:             log2 K steps,   log2 K * m bytes
    bcast, scatter + ring allgather:  log2 K + K-1 steps, 2(K-1)/K * m bytes

Choice of algorithm (stated, as the MPI library's is not known): recursive
halving/doubling (or the binomial tree) when the message is small, the ring
(or scatter + allgather) when it is large, switching at MPICH's default
sizes: allreduce below 2,048 B (``MPIR_CVAR_ALLREDUCE_SHORT_MSG_SIZE``),
reduce-scatter below 524,288 B (``MPIR_CVAR_REDSCAT_COMMUTATIVE_LONG_MSG_SIZE``),
allgather when the gathered total K*m is below 524,288 B
(``MPIR_CVAR_ALLGATHER_LONG_MSG_SIZE``), bcast below 12,288 B
(``MPIR_CVAR_BCAST_SHORT_MSG_SIZE``).  (MPICH's large-message allreduce is
Rabenseifner's recursive halving + doubling rather than the ring; under this
model it has the ring's volume and fewer steps, so the ring is the
conservative choice.)  ``--switch-bytes`` sets one threshold for every kind;
``--algorithm ring`` or ``recursive`` forces one family.
Contention, topology (every pair of ranks is assumed one hop apart at full
bandwidth), the reduction arithmetic and packing copies are ignored.
Networks (``--networks``): 10 Gbit/s with alpha = 20 us and 100 Gbit/s with
alpha = 2 us by default, beta = the link rate in bytes/s.

Compute.  bench_comm's profile times, in one process with one thread, per
tree: histogram building (``leaf_histogram``), split scans (``best_split``),
row partitioning (``partition``) and everything else (gradients, gathering
ordered gradients, histogram subtraction, score updates, Python overhead),
at the full training rows n and at n/4.  Each part is fitted as
``a + b * rows`` through those two points (a clamped at >= 0), which
separates per-split fixed costs (a) from per-row costs (b).  Then, with
N = ``--rows`` projected total rows (default 10,000,000, about HIGGS's 11
million; K ranks each hold N/K rows for data and voting):

    data:    hist(N/K) + scan * f/F + partition(N/K) + other(N/K)
    voting:  hist(N/K) + scan * (1 + e/(F*K)) + partition(N/K) + other(N/K)
    feature: hist_col(N) * f/F + scan * f/F + partition(N) + other(N)
    serial:  hist(N) + scan + partition(N) + other(N)  (one process, no communication)

where F is the number of features, f = ceil(F/K) the features a rank owns
(ranks beyond F own none and wait), and e the elected features per leaf
(2*top_k for the "votes" rule, top_k for "weighted_gain").  Voting scans
every feature of its local histograms to vote (the full ``scan``) and its
owned share of the elected ones.  Feature-parallel holds every row on every
rank (LightGBM's replicated mode), so partitioning and the row-wise "other"
work do not shrink with K; its histograms are column-wise (``hist_col``,
profiled with ``force_col_wise`` where the serial default is row-wise).  The
same number of leaves per tree as measured.  Cache effects of the much larger
or smaller per-rank data are ignored; histogram cost is linear in rows.  The
accuracy of voting at large K (fewer rows per vote) is not modelled.

Learner overhead.  The serial profile does not contain what a distributed
learner adds to its compute (voting's election, building send buffers,
owner bookkeeping): per learner and width, the measured per-rank compute at
the smallest measured K (bench_comm's CPU time of the tree phase outside
collectives) minus the model's value there is added as a fixed cost per tree
(clamped at >= 0), the same at every K.  The check table shows model,
overhead and measurement; where bench_comm also ran a larger K (4) that row
is an out-of-sample check of the compute model.  Compute is for one thread
per rank; ``--compute-speedup S`` divides it by S (e.g. 16 for 16 cores per
rank if threading were perfect), which raises the share of communication.

Output: a table per width and network (seconds per tree, and the share spent
communicating), and a PNG plot (``--plot``, needs matplotlib:
``pip install matplotlib``).  ``--json`` writes the projection.

This is a script run by hand, not a test.
"""

from __future__ import annotations

import json
import math
import pathlib
import subprocess
import sys
import tempfile

from common import KINDS, arg_parser, print_rows  # this folder is first on sys.path

SCRIPT_DIR = pathlib.Path(__file__).resolve().parent
LEARNERS = ("data", "voting-votes", "voting-wg", "feature")
DEFAULT_NETWORKS = "10Gbit/s:20e-6:10,100Gbit/s:2e-6:100"
DEFAULT_KS = "8,16,32,64,128,256,512,1024"
DEFAULT_ROWS = 10_000_000
#: MPICH's default switch points (bytes) from short-message to long-message algorithms
MPICH_SWITCH = {"allreduce": 2048, "reduce_scatter": 524288, "allgather": 524288, "bcast": 12288}
MEASURE_ARGS = [
    "--ks",
    "2",
    "--seeds",
    "1",
    "--rows",
    "20000",
    "--valid-rows",
    "5000",
    "--rounds",
    "5",
    "--leaves",
    "63",
    "--no-speed",
]


# ---------------------------------------------------------------------------
# collectives
# ---------------------------------------------------------------------------


def collective_cost(kind, m, k, alpha, beta, algorithm, switch_bytes=None):
    """Seconds for one collective on k ranks; m = bytes of one rank's send buffer.

    algorithm: "auto" (by size, at ``switch_bytes`` or MPICH's defaults), "ring" or "recursive".
    Returns (seconds, algorithm name)."""
    if k <= 1 or m <= 0:
        return 0.0, "-"
    lg = math.log2(k)
    size = k * m if kind == "allgather" else m
    threshold = MPICH_SWITCH[kind] if switch_bytes is None else switch_bytes
    use_ring = algorithm == "ring" or (algorithm == "auto" and size >= threshold)
    if kind == "reduce_scatter":
        steps, volume = ((k - 1), (k - 1) / k * m) if use_ring else (lg, (k - 1) / k * m)
        name = "ring" if use_ring else "recursive halving"
    elif kind == "allgather":
        steps, volume = ((k - 1), (k - 1) * m) if use_ring else (lg, (k - 1) * m)
        name = "ring" if use_ring else "recursive doubling"
    elif kind == "allreduce":
        steps, volume = (2 * (k - 1), 2 * (k - 1) / k * m) if use_ring else (lg, lg * m)
        name = "ring (reduce-scatter + allgather)" if use_ring else "recursive doubling"
    elif kind == "bcast":
        steps, volume = (lg + k - 1, 2 * (k - 1) / k * m) if use_ring else (lg, lg * m)
        name = "scatter + ring allgather" if use_ring else "binomial tree"
    else:
        raise ValueError(f"unknown collective kind {kind!r}")
    return alpha * steps + volume / beta, name


def comm_per_tree(cell, k, net, algorithm, switch_bytes=None):
    """Seconds per tree in collectives for one learner (cell from bench_comm) on k ranks."""
    total = 0.0
    for kind in KINDS:
        calls = cell["calls_per_tree"].get(kind) or 0.0
        if not calls:
            continue
        m = cell["bytes_per_call_by_kind"].get(kind) or 0.0
        t, _ = collective_cost(kind, m, k, net["alpha"], net["beta"], algorithm, switch_bytes)
        total += calls * t
    return total


# ---------------------------------------------------------------------------
# compute
# ---------------------------------------------------------------------------


def fit_line(points, key):
    """a + b * rows through the profile's two row counts (a >= 0)."""
    pts = sorted((p["rows"], max(0.0, p[key])) for p in points)
    (r0, y0), (r1, y1) = pts[0], pts[-1]
    if r1 == r0:
        return 0.0, y1 / r1
    b = (y1 - y0) / (r1 - r0)
    a = y1 - b * r1
    if a < 0 or b < 0:
        a, b = (0.0, y1 / r1) if a < 0 else (y1, 0.0)
    return a, b


class ComputeModel:
    """Per-rank compute per tree from the single-process profile of one width."""

    def __init__(self, profile, width, top_k, speedup=1.0):
        default = [p for p in profile["points"] if p["layout"] == "default"]
        col = [p for p in profile["points"] if p["layout"] == "col"] or default
        self.width = width
        self.top_k = top_k
        self.rows_measured = max(p["rows"] for p in default)
        self.parts = {
            key: fit_line(default, key + "_s") for key in ("hist", "scan", "partition", "other")
        }
        self.hist_col = fit_line(col, "hist_s")
        self.speedup = speedup
        self.overhead = {}  # learner -> fixed seconds per tree (calibrated)

    def calibrate(self, cell, rows):
        """Learner overhead = measured - modelled compute at the cell's K (>= 0)."""
        measured = cell.get("compute_cpu_per_tree_s")
        if measured is None:
            return
        self.overhead[cell["learner"]] = max(
            0.0, measured - self._per_rank(cell["learner"], rows, cell["K"])
        )

    @staticmethod
    def at(line, rows):
        return line[0] + line[1] * rows

    def serial(self, n):
        p = self.parts
        return (
            self.at(p["hist"], n)
            + self.at(p["scan"], self.rows_measured)
            + self.at(p["partition"], n)
            + self.at(p["other"], n)
        ) / self.speedup

    def per_rank(self, learner, n, k, with_overhead=True):
        extra = self.overhead.get(learner, 0.0) if with_overhead else 0.0
        return (self._per_rank(learner, n, k) + extra) / self.speedup

    def _per_rank(self, learner, n, k):
        p = self.parts
        F = self.width
        owned = math.ceil(F / k) / F
        scan = self.at(p["scan"], self.rows_measured)  # scan cost does not depend on rows
        if learner == "data":
            return (
                self.at(p["hist"], n / k)
                + scan * owned
                + self.at(p["partition"], n / k)
                + self.at(p["other"], n / k)
            )
        if learner.startswith("voting"):
            elected = 2 * self.top_k if learner == "voting-votes" else self.top_k
            own_elected = min(F, elected) / F / k
            return (
                self.at(p["hist"], n / k)
                + scan * (1 + own_elected)
                + self.at(p["partition"], n / k)
                + self.at(p["other"], n / k)
            )
        if learner == "feature":
            return (
                self.at(self.hist_col, n) * owned
                + scan * owned
                + self.at(p["partition"], n)
                + self.at(p["other"], n)
            )
        raise ValueError(f"unknown learner {learner!r}")


# ---------------------------------------------------------------------------
# inputs
# ---------------------------------------------------------------------------


def measure(timeout):
    """Run bench_comm.py's small measurement; returns its JSON payload."""
    with tempfile.TemporaryDirectory(prefix="dgbdt-bench-scaling-") as tmp:
        path = pathlib.Path(tmp) / "comm.json"
        cmd = [
            sys.executable,
            str(SCRIPT_DIR / "bench_comm.py"),
            *MEASURE_ARGS,
            "--json",
            str(path),
        ]
        print(
            "measuring: " + " ".join(["python", "bench/bench_comm.py", *MEASURE_ARGS]), flush=True
        )
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        if proc.returncode != 0 or not path.is_file():
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-8:]
            raise SystemExit("the measurement failed:\n" + "\n".join(tail))
        return json.loads(path.read_text())


def load_inputs(payload):
    """Per width: the bench_comm cells at the smallest K (per learner) and the profile."""
    cells = payload.get("cells") or []
    profiles = payload.get("profiles") or {}
    if not cells:
        raise SystemExit(
            "the JSON has no byte table ('cells'): run bench_comm.py without --no-bytes"
        )
    if not profiles:
        raise SystemExit("the JSON has no profiles: run bench_comm.py without --no-profile")
    widths = sorted({c["width"] for c in cells if str(c["width"]) in profiles})
    by_width = {}
    for w in widths:
        ks = sorted({c["K"] for c in cells if c["width"] == w})
        learners = {}
        for name in LEARNERS:
            cand = [c for c in cells if c["width"] == w and c["learner"] == name]
            if cand:
                learners[name] = min(cand, key=lambda c: c["K"])
        by_width[w] = {
            "learners": learners,
            "profile": profiles[str(w)],
            "ks_measured": ks,
            "all_cells": [c for c in cells if c["width"] == w],
        }
    return by_width


def parse_networks(text):
    nets = []
    for item in text.split(","):
        name, alpha, gbit = item.split(":")
        nets.append(
            {
                "name": name,
                "alpha": float(alpha),
                "gbit": float(gbit),
                "beta": float(gbit) * 1e9 / 8,
            }
        )
    return nets


# ---------------------------------------------------------------------------
# output
# ---------------------------------------------------------------------------


def fmt_s(t):
    """Seconds, 3 significant digits."""
    return f"{t:.3g}"


def plot(projection, ks, path):
    try:
        import matplotlib  # noqa: PLC0415

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt  # noqa: PLC0415
    except ImportError:
        print("plot skipped: matplotlib is not installed (pip install matplotlib)")
        return False
    widths = sorted(projection)
    nets = list(next(iter(projection.values())))
    fig, axes = plt.subplots(
        len(widths),
        len(nets),
        figsize=(5.5 * len(nets), 3.6 * len(widths)),
        squeeze=False,
        sharex=True,
    )
    styles = {"data": "o-", "voting-votes": "s-", "voting-wg": "^-", "feature": "d-"}
    for i, w in enumerate(widths):
        for j, net in enumerate(nets):
            ax = axes[i][j]
            block = projection[w][net]
            for name, series in block["learners"].items():
                ax.plot(
                    ks,
                    [s["total_s"] for s in series],
                    styles.get(name, "o-"),
                    label=name,
                    markersize=4,
                )
            ax.axhline(
                block["serial_s"], color="grey", linestyle="--", linewidth=1, label="1 process"
            )
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_title(f"{w} features, {net}", fontsize=10)
            ax.grid(True, which="both", alpha=0.3)
            if j == 0:
                ax.set_ylabel("s per tree")
            if i == len(widths) - 1:
                ax.set_xlabel("ranks K")
    axes[0][0].legend(fontsize=8)
    fig.suptitle(
        f"dgbdt projected time per tree, {next(iter(projection.values()))[nets[0]]['rows']:,} rows "
        "(alpha-beta model; see bench_scaling.py)",
        fontsize=11,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def parse_args(argv=None):
    ap = arg_parser(__doc__)
    ap.add_argument(
        "--from-json",
        metavar="PATH",
        help="a JSON written by bench_comm.py --json (default: run a small measurement first)",
    )
    ap.add_argument(
        "--ks", default=DEFAULT_KS, help=f"rank counts to project (default {DEFAULT_KS})"
    )
    ap.add_argument(
        "--rows",
        type=float,
        default=DEFAULT_ROWS,
        help="total training rows of the projected problem (default %(default)s)",
    )
    ap.add_argument(
        "--compute-speedup",
        type=float,
        default=1.0,
        help="divide the (one-thread) compute per rank by this (default 1)",
    )
    ap.add_argument(
        "--networks",
        default=DEFAULT_NETWORKS,
        help="comma list of name:alpha_seconds:gbit_per_s (default %(default)s)",
    )
    ap.add_argument(
        "--algorithm",
        choices=("auto", "ring", "recursive"),
        default="auto",
        help="collective algorithms: auto = recursive for small messages, ring for large (default)",
    )
    ap.add_argument(
        "--switch-bytes",
        type=float,
        default=None,
        help="one message size at which auto switches to the ring, for every kind "
        "(default: MPICH's per-kind defaults, see the docstring)",
    )
    ap.add_argument(
        "--top-k", type=int, default=None, help="voting top_k (default: from the JSON, else 20)"
    )
    ap.add_argument(
        "--plot",
        default="bench_scaling.png",
        help="PNG to write (default %(default)s; '' for none)",
    )
    ap.add_argument("--json", metavar="PATH", help="also write the projection to PATH")
    ap.add_argument(
        "--timeout", type=float, default=1800.0, help="seconds allowed for the measurement"
    )
    return ap.parse_args(argv)


def print_header(args, source, cfg, top_k, nets, switch):
    """What the projection is made from, the networks and the collective algorithms."""
    rows_measured, n = cfg.get("rows"), args.rows
    print(
        f"bench_scaling: projection from {source}; measured on {rows_measured:,} rows, "
        f"{cfg.get('leaves')} leaves; projected problem {n:,.0f} rows, same leaves; voting top_k {top_k}"
    )
    print(
        "networks: "
        + ", ".join(
            f"{x['name']} (alpha {x['alpha'] * 1e6:g} us, beta {x['beta'] / 1e9:g} GB/s)"
            for x in nets
        )
        + f"; collectives: {args.algorithm}"
        + (
            ""
            if args.algorithm != "auto"
            else " (ring at >= "
            + (f"{switch:,.0f} B" if switch else "MPICH's per-kind sizes")
            + ")"
        )
        + ("" if args.compute_speedup == 1 else f"; compute / {args.compute_speedup:g}")
    )
    print("times: seconds per tree; comm % = share of the time in collectives")


def check_models(inputs, models, rows_measured):
    """Calibrate each model's learner overheads at the smallest measured K and print
    the model next to bench_comm's measured per-rank compute (one thread)."""
    print()
    print(
        "compute model check (per rank, per tree, one thread, at the measured K and rows; measured = CPU time "
        "of the tree phase outside collectives; overhead calibrated at the smallest K):"
    )
    rows = []
    for w, inp in inputs.items():
        model = models[w]
        for cell in inp["learners"].values():
            model.calibrate(cell, rows_measured)
        for cell in sorted(inp["all_cells"], key=lambda c: (c["K"], LEARNERS.index(c["learner"]))):
            if cell.get("compute_cpu_per_tree_s") is None:
                continue
            base = model._per_rank(cell["learner"], rows_measured, cell["K"])
            over = model.overhead.get(cell["learner"], 0.0)
            measured = cell["compute_cpu_per_tree_s"]
            rows.append(
                [
                    w,
                    cell["K"],
                    cell["learner"],
                    fmt_s(measured),
                    fmt_s(base),
                    fmt_s(over),
                    fmt_s(base + over),
                    f"{(base + over) / measured:.2f}",
                ]
            )
    print_rows(
        [
            "features",
            "K",
            "learner",
            "measured",
            "profile model",
            "+ overhead",
            "= model",
            "model/measured",
        ],
        rows,
        left=3,
    )


def project_width(model, inp, nets, ks, n, switching):
    """Per network: one process's seconds per tree and every learner's series over ``ks``.

    ``switching`` is (algorithm, switch bytes) for comm_per_tree."""
    algorithm, switch = switching
    out = {}
    for net in nets:
        block = {"rows": n, "serial_s": model.serial(n), "learners": {}}
        for name, cell in inp["learners"].items():
            series = []
            for k in ks:
                comp = model.per_rank(name, n, k)
                comm = comm_per_tree(cell, k, net, algorithm, switch)
                series.append({"K": k, "compute_s": comp, "comm_s": comm, "total_s": comp + comm})
            block["learners"][name] = series
        out[net["name"]] = block
    return out


def print_projection(w, inp, blocks, ks):
    """The tables of one width: seconds per tree (comm %) per network."""
    for net_name, block in blocks.items():
        print()
        print(
            f"{w} features, {net_name}: seconds per tree (comm %); one process: {fmt_s(block['serial_s'])}; "
            f"bytes per call per rank measured at K={min(inp['ks_measured'])}"
        )
        header = ["learner"] + [f"K={k}" for k in ks]
        rows = []
        for name, series in block["learners"].items():
            rows.append(
                [name]
                + [
                    f"{fmt_s(s['total_s'])} ({100 * s['comm_s'] / s['total_s']:.0f}%)"
                    for s in series
                ]
            )
        print_rows(header, rows)


def print_call_inputs(inputs):
    print()
    print("per-call inputs (bytes of one rank's send buffer per call, calls per tree):")
    rows = []
    for w, inp in inputs.items():
        for name, cell in inp["learners"].items():
            desc = "; ".join(
                f"{kind} {cell['calls_per_tree'][kind]:.0f} x {cell['bytes_per_call_by_kind'][kind]:,.0f} B"
                for kind in KINDS
                if cell["calls_per_tree"].get(kind)
            )
            rows.append([w, name, cell["K"], desc])
    print_rows(["features", "learner", "K", "per tree"], rows, left=4)


def main(argv=None):
    args = parse_args(argv)
    if args.from_json:
        payload = json.loads(pathlib.Path(args.from_json).read_text())
        source = args.from_json
    else:
        payload = measure(args.timeout)
        source = "bench_comm.py " + " ".join(MEASURE_ARGS)
    cfg = payload.get("config", {})
    top_k = args.top_k or cfg.get("top_k", 20)
    n = args.rows
    ks = [int(s) for s in args.ks.split(",") if s.strip()]
    nets = parse_networks(args.networks)
    inputs = load_inputs(payload)
    algorithm, switch = args.algorithm, args.switch_bytes
    if algorithm == "recursive":
        algorithm, switch = "auto", float("inf")
    print_header(args, source, cfg, top_k, nets, switch)

    models = {w: ComputeModel(inputs[w]["profile"], w, top_k, args.compute_speedup) for w in inputs}
    check_models(inputs, models, cfg.get("rows"))
    projection = {}
    for w, inp in inputs.items():
        projection[w] = project_width(models[w], inp, nets, ks, n, (algorithm, switch))
        print_projection(w, inp, projection[w], ks)
    print_call_inputs(inputs)

    if args.plot:
        if plot(projection, ks, args.plot):
            print(f"\nwrote {args.plot}")
    if args.json:
        pathlib.Path(args.json).write_text(
            json.dumps(
                {
                    "source": source,
                    "rows": n,
                    "ks": ks,
                    "networks": nets,
                    "algorithm": args.algorithm,
                    "switch_bytes": args.switch_bytes,
                    "top_k": top_k,
                    "projection": {str(w): v for w, v in projection.items()},
                },
                indent=2,
            )
        )
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
