"""The command line under mpiexec: sharded reading, distributed predict, errors.

Each test runs ``dgbdt`` on K ranks (tests/mpi/cli.py) and compares with the
same command in this process.
"""

import gzip
import time

import numpy as np
import pytest
from mpi_launch import run_mpi
from test_distributed import assert_same_trees

import dgbdt
from dgbdt.cli.commands import run
from dgbdt.io import read_data

TRAIN = [
    "objective=binary",
    "num_trees=8",
    "num_leaves=15",
    "min_data_in_leaf=10",
    "learning_rate=0.2",
    "metric=auc",
    "verbosity=1",
]


def write_csv(path, n_rows=2400, seed=0, header=True):
    """A binary problem as CSV (label first) with a .weight side file."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, 8)).round(4)
    X[rng.random(X.shape) < 0.02] = np.nan
    y = np.nan_to_num(X[:, 0]) + 0.5 * np.nan_to_num(X[:, 3]) + rng.normal(0, 0.5, n_rows) > 0
    lines = [",".join(["y"] + [f"f{j}" for j in range(8)])] if header else []
    lines += [
        f"{int(t)}," + ",".join("" if np.isnan(v) else repr(float(v)) for v in row)
        for t, row in zip(y, X, strict=True)
    ]
    path.write_text("\n".join(lines) + "\n")
    path.with_name(path.name + ".weight").write_text(
        "".join(f"{w}\n" for w in rng.uniform(0.5, 2.0, n_rows).round(3))
    )
    return path


def cli_mpi(k, *args, timeout=120):
    return run_mpi(k, "cli.py", *args, timeout=timeout)


def assert_same_model(model_a, model_b, X):
    a, b = dgbdt.Booster(model_file=model_a), dgbdt.Booster(model_file=model_b)
    assert_same_trees(a, b)
    np.testing.assert_allclose(
        a.predict(X, raw_score=True), b.predict(X, raw_score=True), rtol=0, atol=1e-6
    )


@pytest.mark.parametrize("k", [2, 3])
def test_sharded_reading_gives_the_single_process_model(tmp_path, k):
    data = write_csv(tmp_path / "train.csv")
    valid = write_csv(tmp_path / "valid.csv", n_rows=500, seed=1)
    common = [f"data={data}", f"valid_data={valid}", "header=true", *TRAIN]
    assert run(["train", *common, f"output_model={tmp_path / 'serial.json'}"]) == 0
    result = cli_mpi(
        k, "train", *common, "tree_learner=data", f"output_model={tmp_path / 'dist.json'}"
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "valid.csv's auc" in result.stdout
    assert result.stdout.count("[8/8] ") == 1  # progress from rank 0 only
    X = read_data(valid, header=True).X
    assert_same_model(tmp_path / "serial.json", tmp_path / "dist.json", X)


def test_gzip_pre_partition_voting_and_feature_modes(tmp_path):
    data = write_csv(tmp_path / "train.csv", header=False)
    X = read_data(data).X
    assert run(["train", f"data={data}", *TRAIN, f"output_model={tmp_path / 'serial.json'}"]) == 0
    # gzip: rank 0 decompresses and scatters the parts
    gz = tmp_path / "train.csv.gz"
    gz.write_bytes(gzip.compress(data.read_bytes()))
    (tmp_path / "train.csv.gz.weight").write_bytes((tmp_path / "train.csv.weight").read_bytes())
    # pre-partitioned: one file (and weight file) per rank, unequal sizes
    lines = data.read_text().splitlines(keepends=True)
    weights = (tmp_path / "train.csv.weight").read_text().splitlines(keepends=True)
    for rank, (lo, hi) in enumerate([(0, 1000), (1000, len(lines))]):
        (tmp_path / f"part.{rank}.csv").write_text("".join(lines[lo:hi]))
        (tmp_path / f"part.{rank}.csv.weight").write_text("".join(weights[lo:hi]))
    # LibSVM: only rank 0's part holds the highest index (rows < 50); the widths are agreed
    svm = tmp_path / "train.svm"
    svm.write_text(
        "".join(
            f"{int(t)} "
            + " ".join(
                f"{j}:{float(v)!r}"
                for j, v in enumerate(row)
                if not np.isnan(v) and (j < 7 or r < 50)
            )
            + "\n"
            for r, (t, row) in enumerate(zip(read_data(data).label, X, strict=True))
        )
    )
    assert run(["train", f"data={svm}", *TRAIN, f"output_model={tmp_path / 'svm1.json'}"]) == 0
    result = cli_mpi(
        2,
        "train",
        f"data={svm}",
        *TRAIN,
        "tree_learner=data",
        f"output_model={tmp_path / 'svm2.json'}",
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert_same_model(tmp_path / "svm1.json", tmp_path / "svm2.json", read_data(svm).X)
    runs = {
        "gzip": [f"data={gz}", "tree_learner=data"],
        "parts": [
            f"data={tmp_path / 'part.{rank}.csv'}",
            "pre_partition=true",
            "tree_learner=data",
        ],
        "feature": [f"data={data}", "tree_learner=feature"],
    }
    for name, args in runs.items():
        result = cli_mpi(2, "train", *TRAIN, *args, f"output_model={tmp_path / name}.json")
        assert result.returncode == 0, (name, result.stderr[-3000:])
        assert_same_model(tmp_path / "serial.json", tmp_path / f"{name}.json", X)
    # voting-parallel trains through the same reading path (its model may differ)
    result = cli_mpi(
        2,
        "train",
        f"data={data}",
        *TRAIN,
        "tree_learner=voting",
        "top_k=4",
        f"output_model={tmp_path / 'voting.json'}",
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert dgbdt.Booster(model_file=tmp_path / "voting.json").num_trees() == 8


def test_distributed_predict_writes_input_order(tmp_path):
    data = write_csv(tmp_path / "d.csv", n_rows=1001)
    model = tmp_path / "m.json"
    assert run(["train", f"data={data}", "header=true", *TRAIN, f"output_model={model}"]) == 0
    assert (
        run(
            [
                "predict",
                f"data={data}",
                "header=true",
                f"input_model={model}",
                f"output_result={tmp_path / 'serial.txt'}",
            ]
        )
        == 0
    )
    result = cli_mpi(
        3,
        "predict",
        f"data={data}",
        "header=true",
        f"input_model={model}",
        f"output_result={tmp_path / 'dist.txt'}",
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "1001 predictions" in result.stdout
    assert (tmp_path / "dist.txt").read_text() == (tmp_path / "serial.txt").read_text()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".tmp")) == []


def test_bad_line_on_one_rank_ends_every_rank_with_its_message(tmp_path):
    data = write_csv(tmp_path / "d.csv", header=False)
    lines = data.read_text().splitlines()
    lines[2000] = "1,0.5,oops,1,1,1,1,1,1"  # in the last rank's part
    data.write_text("\n".join(lines) + "\n")
    model = tmp_path / "m.json"
    result = cli_mpi(
        3, "train", f"data={data}", *TRAIN, "tree_learner=data", f"output_model={model}", timeout=60
    )
    assert result.returncode != 0
    assert "d.csv, line 2001: cannot parse number 'oops'" in result.stderr
    assert result.stderr.count("dgbdt: error:") == 1
    assert not model.exists()
    # the same file predicted on 2 ranks: no result file is left
    out = tmp_path / "p.txt"
    result = cli_mpi(2, "predict", f"data={data}", f"input_model={model}", f"output_result={out}")
    assert result.returncode != 0 and "m.json" in result.stderr
    assert not out.exists()


def test_a_rank_failing_before_it_starts_mpi_ends_every_rank(tmp_path):
    # Rank 2 cannot read its config file (on another machine it may be missing):
    # it fails before MPI_Init while ranks 0 and 1 wait in theirs.
    data = write_csv(tmp_path / "d.csv", n_rows=300)
    for rank in (0, 1):
        (tmp_path / f"train{rank}.conf").write_text(f"data={data}\nheader=true\n")
    model = tmp_path / "m.json"
    start = time.time()
    result = cli_mpi(
        3,
        "train",
        f"config={tmp_path}/train@RANK@.conf",
        *TRAIN,
        "tree_learner=data",
        f"output_model={model}",
        timeout=60,
    )
    assert result.returncode != 0
    assert "train2.conf" in result.stderr and "Traceback" not in result.stderr
    assert time.time() - start < 40  # not the others' 2-hour deadline
    assert not model.exists()


def test_serial_learner_under_mpiexec_is_an_error(tmp_path):
    data = write_csv(tmp_path / "d.csv", n_rows=200)
    result = cli_mpi(
        2,
        "train",
        f"data={data}",
        "header=true",
        *TRAIN,
        f"output_model={tmp_path / 'm.json'}",
        timeout=60,
    )
    assert result.returncode != 0
    assert "started on 2 ranks but tree_learner=serial" in result.stderr
    assert not (tmp_path / "m.json").exists()


def test_feature_parallel_reads_every_column_of_a_long_first_line(tmp_path):
    # A first line longer than the 64 KiB read to count columns lost columns.
    rng = np.random.default_rng(2)
    n_features = 12000
    X = rng.integers(100_000, 1_000_000, size=(40, n_features))
    y = (X[:, 0] > 550_000).astype(int)
    data = tmp_path / "wide.csv"
    data.write_text(
        "".join(f"{t}," + ",".join(map(str, r)) + "\n" for t, r in zip(y, X, strict=True))
    )
    assert len(data.read_text().split("\n", 1)[0]) > 1 << 16
    result = cli_mpi(
        2,
        "train",
        f"data={data}",
        "tree_learner=feature",
        "objective=binary",
        "num_trees=2",
        "min_data_in_leaf=5",
        f"output_model={tmp_path / 'm.json'}",
        "verbosity=-1",
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert dgbdt.Booster(model_file=str(tmp_path / "m.json")).num_feature() == n_features
