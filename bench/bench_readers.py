#!/usr/bin/env python
"""Text reader benchmark: ``dgbdt.io.read_data`` next to pandas and scikit-learn.

Writes (in a temporary folder, from a fixed seed) ``make_higgs_like`` data,
1,000,000 rows x (label + 28 features), as

* a CSV file: values with about 6 significant digits (``%.6g``-like, trailing
  zeros dropped), a few missing values as empty fields;
* a LibSVM file with the same values: zero-based indices, zeros omitted (about
  90% of them; the rest stay as explicit ``idx:0``, as in real sparse files),
  missing values written ``idx:nan``;

then times, in the same process and run, the median of ``--repeats`` (3) reads,
dgbdt's and the peer's interleaved (wall time, and process CPU time of all threads):

    csv     dgbdt.io.read_data(csv)   vs  pandas.read_csv(csv, header=None, dtype=float64)
    libsvm  dgbdt.io.read_data(svm)   vs  sklearn.datasets.load_svmlight_file(svm)
    parts   read_part + parse_text of the CSV as 2 parts, one after the other (cost per part)

Targets (the command-line issue): read_data within 1.5x of pandas.read_csv
for the CSV and within 1.5x of load_svmlight_file for LibSVM, in wall time.
The files are read once before timing (page cache warm, imports done, Numba
kernels loaded), and every result is checked against the peer's.  Note that
pandas >= 3 parses a large local *file path* on min(6, CPUs) threads by itself,
so the plain read_csv call is a multi-threaded peer (its CPU time exceeds its
wall time); load_svmlight_file is single-threaded.

Run ``python bench/bench_readers.py --help``; see bench/README.md.  This is a
script run by hand, not a test.
"""

from __future__ import annotations

import os
import pathlib
import statistics
import sys
import tempfile
import time

import numpy as np
from common import (
    arg_parser,
    fmt_runs,
    load_datasets_module,
    machine_info,
    print_machine,
    verdict,
    write_json,
)

SEED = 0
TARGETS = {"csv": 1.5, "libsvm": 1.5}  # read_data / peer <=
MISSING_FRACTION = 0.001  # NaN cells (empty CSV fields)
KEEP_ZERO_FRACTION = 0.1  # zeros written explicitly in the LibSVM file


# ---------------------------------------------------------------------------
# data files, written with numpy byte matrices (np.savetxt would take minutes)
# ---------------------------------------------------------------------------

VALUE_WIDTH = 11  # sign, 3 integer digits, '.', 6 decimals


def round_significant(x, digits=6):
    """``x`` rounded to ``digits`` significant digits (|x| < 1000), and the decimals kept."""
    a = np.abs(x)
    int_digits = np.where(a >= 1, np.floor(np.log10(np.where(a >= 1, a, 1))) + 1, 0)
    dec = np.clip(digits - int_digits, 0, digits).astype(np.int64)
    q = np.rint(a * 10.0**dec).astype(np.int64)
    return q, dec


def format_values(x):
    """(bytes, keep) matrices of shape ``x.shape + (VALUE_WIDTH,)``: the text of each value,
    left to right, and which of its bytes to keep.  NaN keeps nothing (an empty field)."""
    nan = np.isnan(x)
    x = np.where(nan, 0.0, x)
    if np.abs(x).max(initial=0) >= 999.5:
        raise ValueError("format_values handles |x| < 999.5")
    q, dec = round_significant(x)
    scale = 10**dec
    ip, frac = q // scale, q % scale
    # drop trailing zeros of the decimals
    for _ in range(6):
        tz = (dec > 0) & (frac % 10 == 0)
        frac = np.where(tz, frac // 10, frac)
        dec = np.where(tz, dec - 1, dec)
    out = np.zeros(x.shape + (VALUE_WIDTH,), np.uint8)
    keep = np.zeros(x.shape + (VALUE_WIDTH,), bool)
    out[..., 0] = ord("-")
    keep[..., 0] = (x < 0) & (q > 0)
    for p, power in enumerate((100, 10, 1)):
        out[..., 1 + p] = ord("0") + (ip // power) % 10
        keep[..., 1 + p] = (ip >= power) | (power == 1)
    out[..., 4] = ord(".")
    keep[..., 4] = dec > 0
    for j in range(1, 7):
        shift = np.maximum(dec - j, 0)
        out[..., 4 + j] = ord("0") + (frac // 10**shift) % 10
        keep[..., 4 + j] = j <= dec
    keep[nan] = False
    return out, keep


def write_files(folder, rows, seed=SEED, chunk=100_000):
    """Write ``data.csv`` and ``data.svm``; returns their paths and the true (X, y)."""
    datasets = load_datasets_module()
    X, y = datasets.make_higgs_like(rows, seed=seed, dtype=np.float64)
    rng = np.random.default_rng(seed + 1)
    X[rng.random(X.shape) < MISSING_FRACTION] = np.nan
    keep_zero = rng.random(X.shape) < KEEP_ZERO_FRACTION
    csv_path, svm_path = folder / "data.csv", folder / "data.svm"
    n_feat = X.shape[1]
    idx_text = np.zeros((n_feat, 2), np.uint8)
    idx_keep = np.zeros((n_feat, 2), bool)
    for j in range(n_feat):
        s = str(j).rjust(2).encode()
        idx_text[j] = np.frombuffer(s, np.uint8)
        idx_keep[j] = [c != ord(" ") for c in s]
    with open(csv_path, "wb") as fcsv, open(svm_path, "wb") as fsvm:
        for start in range(0, rows, chunk):
            xs, ys = X[start : start + chunk], y[start : start + chunk]
            n = len(xs)
            vals, vkeep = format_values(np.column_stack([ys, xs]))
            # CSV: value + ',' (the last field's separator is the newline)
            sep = np.full((n, n_feat + 1, 1), ord(","), np.uint8)
            sep[:, -1, 0] = ord("\n")
            text = np.concatenate([vals, sep], axis=2)
            keep = np.concatenate([vkeep, np.ones((n, n_feat + 1, 1), bool)], axis=2)
            fcsv.write(text[keep].tobytes())
            # LibSVM: label, then ' idx:value' per kept feature, then '\n'
            fvals, fkeep = vals[:, 1:], vkeep[:, 1:].copy()
            nan = np.isnan(xs)
            fvals[nan, :3] = np.frombuffer(b"nan", np.uint8)
            fkeep[nan] = False
            fkeep[nan, :3] = True
            present = (xs != 0) | keep_zero[start : start + chunk]
            tok = np.concatenate(
                [
                    np.full((n, n_feat, 1), ord(" "), np.uint8),
                    np.broadcast_to(idx_text, (n, n_feat, 2)),
                    np.full((n, n_feat, 1), ord(":"), np.uint8),
                    fvals,
                ],
                axis=2,
            )
            tkeep = np.concatenate(
                [
                    np.ones((n, n_feat, 1), bool),
                    np.broadcast_to(idx_keep, (n, n_feat, 2)),
                    np.ones((n, n_feat, 1), bool),
                    fkeep,
                ],
                axis=2,
            )
            tkeep &= present[:, :, None]
            line = np.concatenate(
                [vals[:, 0], tok.reshape(n, -1), np.full((n, 1), 10, np.uint8)], axis=1
            )
            lkeep = np.concatenate(
                [vkeep[:, 0], tkeep.reshape(n, -1), np.ones((n, 1), bool)], axis=1
            )
            fsvm.write(line[lkeep].tobytes())
    return csv_path, svm_path


# ---------------------------------------------------------------------------
# timing
# ---------------------------------------------------------------------------


def timed(fn, repeats):
    """Median wall seconds, every run's wall seconds, median CPU seconds (all threads)."""
    runs, cpu = [], []
    for _ in range(repeats):
        result = None
        c0, t0 = time.process_time(), time.perf_counter()
        result = fn()
        runs.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
        del result
    return statistics.median(runs), runs, statistics.median(cpu)


def read_csv_in_parts(path, n_parts):
    from dgbdt.io import count_lines, parse_text, read_part, sniff_format  # noqa: PLC0415

    fmt, sep = sniff_format(path)
    out, per_part, first_line = [], [], 1
    for p in range(n_parts):
        t0 = time.perf_counter()
        data = read_part(path, p, n_parts)
        out.append(parse_text(path, data, fmt=fmt, sep=sep, first_line=first_line))
        first_line += count_lines(data)
        per_part.append(time.perf_counter() - t0)
    return out, per_part


def assert_same(name, got, ref):
    """dgbdt's read of the file must equal the peer's, value for value."""
    import scipy.sparse as sp  # noqa: PLC0415

    if name == "csv":
        ref = ref.to_numpy()
        np.testing.assert_array_equal(got.label, ref[:, 0])
        np.testing.assert_array_equal(got.X, ref[:, 1:])
    else:
        Xr, yr = ref
        np.testing.assert_array_equal(got.label, yr)
        assert got.X.shape == Xr.shape and sp.isspmatrix_csr(got.X)
        assert got.X.nnz == Xr.nnz
        np.testing.assert_array_equal(got.X.indptr, Xr.indptr)
        np.testing.assert_array_equal(got.X.indices, Xr.indices)
        np.testing.assert_array_equal(got.X.data, Xr.data)


def time_case(ours, peer, repeats):
    """``repeats`` reads of each, interleaved so that a change in the machine's
    load hits both alike: medians and every run."""
    ours_runs, peer_runs = [], []
    for _ in range(repeats):
        ours_runs.append(timed(ours, 1))
        peer_runs.append(timed(peer, 1))
    t_ours = statistics.median(r[0] for r in ours_runs)
    t_peer = statistics.median(r[0] for r in peer_runs)
    cpu_ours = statistics.median(r[2] for r in ours_runs)
    cpu_peer = statistics.median(r[2] for r in peer_runs)
    return {
        "dgbdt_s": t_ours,
        "dgbdt_runs": [r[0] for r in ours_runs],
        "dgbdt_cpu_s": cpu_ours,
        "peer": None,  # the caller names the peer; the key keeps its place in the JSON
        "peer_s": t_peer,
        "peer_runs": [r[0] for r in peer_runs],
        "peer_cpu_s": cpu_peer,
        "ratio": t_ours / t_peer,
        "cpu_ratio": cpu_ours / cpu_peer,
    }


def time_parts(csv_path, n_parts, repeats):
    """The CSV read as ``n_parts`` parts one after the other, ``repeats`` times."""
    totals, per_part = [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        _, pp = read_csv_in_parts(csv_path, n_parts)
        totals.append(time.perf_counter() - t0)
        per_part.append(pp)
    return {
        "n_parts": n_parts,
        "total_s": statistics.median(totals),
        "runs": totals,
        "per_part_s": [statistics.median(p[i] for p in per_part) for i in range(n_parts)],
    }


def run(args):
    import pandas as pd  # noqa: PLC0415
    from sklearn.datasets import load_svmlight_file  # noqa: PLC0415

    from dgbdt.io import read_data  # noqa: PLC0415

    results = {}
    with tempfile.TemporaryDirectory(prefix="bench_readers_") as tmp:
        t0 = time.perf_counter()
        csv_path, svm_path = write_files(pathlib.Path(tmp), args.rows)
        sizes = {"csv": os.path.getsize(csv_path), "libsvm": os.path.getsize(svm_path)}
        print(
            f"wrote {args.rows:,} rows in {time.perf_counter() - t0:.1f} s: CSV "
            f"{sizes['csv'] / 1e6:.0f} MB, LibSVM {sizes['libsvm'] / 1e6:.0f} MB",
            flush=True,
        )

        cases = {
            "csv": (
                lambda: read_data(csv_path),
                lambda: pd.read_csv(csv_path, header=None, dtype=np.float64),
                "pandas.read_csv",
            ),
            "libsvm": (
                lambda: read_data(svm_path),
                lambda: load_svmlight_file(str(svm_path)),
                "load_svmlight_file",
            ),
        }
        for name, (ours, peer, peer_name) in cases.items():
            if name not in args.formats:
                continue
            # one untimed read each: imports, page cache; and the results must agree
            assert_same(name, ours(), peer())
            # interleaved, so that a change in the machine's load hits both alike
            results[name] = time_case(ours, peer, args.repeats)
            results[name].update(peer=peer_name, target=TARGETS[name], mb=sizes[name] / 1e6)
            print(f"  timed {name}", flush=True)

        if "csv" in args.formats and args.parts > 1:
            results["parts"] = time_parts(csv_path, args.parts, args.repeats)
            if "csv" in results:
                results["parts"]["vs_whole"] = (
                    results["parts"]["total_s"] / results["csv"]["dgbdt_s"]
                )
            print("  timed parts", flush=True)
    return results


def print_table(results):
    print(
        f"{'file':7} {'MB':>5} {'read_data s':>11} {'peer':>19} {'peer s':>7} {'ratio':>6} "
        f"{'target':>12}  {'cpu s (dgbdt/peer)':>18} {'cpu ratio':>9}  runs s (dgbdt | peer)"
    )
    for name in ("csv", "libsvm"):
        r = results.get(name)
        if r is None:
            continue
        ok = verdict(r["ratio"] <= r["target"])
        runs = fmt_runs(r["dgbdt_runs"], " ") + " | " + fmt_runs(r["peer_runs"], " ")
        cpu = f"{r['dgbdt_cpu_s']:.2f}/{r['peer_cpu_s']:.2f}"
        print(
            f"{name:7} {r['mb']:5.0f} {r['dgbdt_s']:11.2f} {r['peer']:>19} {r['peer_s']:7.2f} "
            f"{r['ratio']:6.2f} {'<=' + str(r['target']) + ' ' + ok:>12}  {cpu:>18} "
            f"{r['cpu_ratio']:9.2f}  {runs}"
        )
    print(
        "(seconds: median wall time of the reads, interleaved; cpu s: median process CPU "
        "time, all threads; the targets are on wall time)"
    )
    p = results.get("parts")
    if p:
        per = ", ".join(f"{t:.2f}" for t in p["per_part_s"])
        extra = f"; {p['vs_whole']:.2f}x the whole-file read_data" if "vs_whole" in p else ""
        print(
            f"\nCSV as {p['n_parts']} parts (read_part + parse_text, sequential): "
            f"{p['total_s']:.2f} s in all, per part {per} s{extra}"
        )


def parse_args(argv=None):
    ap = arg_parser(__doc__)
    ap.add_argument("--rows", type=int, default=1_000_000, help="rows (default 1,000,000)")
    ap.add_argument("--quick", action="store_true", help="100,000 rows")
    ap.add_argument(
        "--repeats", type=int, default=3, help="timed reads each; the median is reported"
    )
    ap.add_argument("--formats", default="csv,libsvm", help="comma list from csv,libsvm")
    ap.add_argument(
        "--parts",
        type=int,
        default=2,
        help="parts of the CSV read one after the other (default 2; 1 skips)",
    )
    ap.add_argument("--json", metavar="PATH", help="also write the results to PATH")
    args = ap.parse_args(argv)
    if args.quick:
        args.rows = 100_000
    args.formats = [s.strip() for s in args.formats.split(",") if s.strip()]
    return args


def main(argv=None):
    args = parse_args(argv)
    print(
        f"bench_readers: make_higgs_like seed {SEED}, {args.rows:,} rows x (label + 28), "
        f"6 significant digits, {MISSING_FRACTION:.1%} missing; median of {args.repeats} reads"
    )
    load_before = print_machine()
    print(flush=True)
    results = run(args)
    print()
    print_table(results)
    if args.json:
        payload = {
            "rows": args.rows,
            "seed": SEED,
            "repeats": args.repeats,
            "targets": TARGETS,
            **machine_info(load_before),
            "results": results,
        }
        write_json(args.json, payload)
    return 0


if __name__ == "__main__":
    sys.exit(main())
