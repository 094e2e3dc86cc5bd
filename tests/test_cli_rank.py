"""Query groups on the command line, and sharded reading that keeps each query on
one rank.

* Single process: groups reach the training and validation Datasets from a
  ``.query`` file, a group column (index and ``name:``) and LibSVM ``qid:``;
  positions from a ``.position`` file; bad side files fail naming file and line;
  LightGBM's examples/lambdarank/train.conf runs as written.
* Sharded reading (:func:`dgbdt.io.read_row_part`) on K ranks simulated by threads
  (``ThreadComm``: the collectives over a barrier), for many files and K: every
  rank holds whole queries, and the ranks' queries in rank order are the whole
  file's.  Adversarial files: one query bigger than a rank's share, queries of
  one row, zero-size queries, more ranks than queries.
* Under mpiexec (tests/mpi/cli_rank.py, one launch per K for every case): the
  command line's Datasets on 2 and 3 ranks.
"""

import gzip
import pathlib
import re
import shutil
import threading
import warnings

import numpy as np
import pytest
from mpi_launch import run_mpi

import dgbdt
import dgbdt.objective.objectives
from dgbdt.cli.commands import _training_sets, _training_world, parse_arguments, run
from dgbdt.distributed.comm import SerialComm
from dgbdt.io import (
    DataFormatError,
    count_lines,
    querycuts,
    read_column_block,
    read_data,
    read_row_part,
)
from dgbdt.io.querycuts import _nearest_boundary
from dgbdt.params.table import resolve_params


def _lightgbm_examples():
    """``shared/datasets/lightgbm`` beside the checkout (as conftest's shared_datasets)."""
    checkout = pathlib.Path(__file__).resolve().parents[1]
    for base in (checkout.parent / "shared" / "datasets", pathlib.Path("/work/shared/datasets")):
        if (base / "lightgbm" / "rank.train").exists():
            return base / "lightgbm"
    return checkout.parent / "shared" / "datasets" / "lightgbm"


SHARED = _lightgbm_examples()
RANK_TRAIN = SHARED / "rank.train"
needs_rank_data = pytest.mark.skipif(
    not (RANK_TRAIN.exists() and (SHARED / "rank.test.query").exists()),
    reason=f"LightGBM's rank.train / rank.test (+ .query) not in {SHARED}",
)


# --- files -------------------------------------------------------------------


def write_queries(path, sizes, kind, *, seed=0, header=False, eol="\n", blank=0.0):
    """A file of ``sum(sizes)`` rows whose label is the row number, in queries of
    ``sizes`` rows: ``kind`` "csv" (query ids in file column 1, after the label),
    "svm" (LibSVM ``qid:``), "csvq" / "svmq" (no ids: a ``.query`` file; zero
    sizes allowed).  ``blank``: the share of rows followed by a blank (CSV) or
    comment (LibSVM) line.  A ``.position`` file holds ``row % 4``.  A ``.gz``
    path is written gzipped."""
    rng = np.random.default_rng(seed)
    n = int(sum(sizes))
    qid = np.repeat(rng.permutation(len(sizes)) * 7 + 3, sizes)
    lines = {"csv": ["y,qid,a,b"], "csvq": ["y,a,b"]}.get(kind, []) if header else []
    for i in range(n):
        a, b = rng.normal(size=2).round(3)
        lines.append(
            {
                "csv": f"{i},{qid[i]},{a},{b}",
                "csvq": f"{i},{a},{b}",
                "svm": f"{i} qid:{qid[i]} 0:{a} 2:{b}",
                "svmq": f"{i} 0:{a} 2:{b}" + (" # note" if i % 5 == 0 else ""),
            }[kind]
        )
        if rng.random() < blank:
            lines.append("" if kind.startswith("csv") else "# comment")
    raw = (eol.join(lines) + eol).encode()
    path = pathlib.Path(path)
    path.write_bytes(gzip.compress(raw) if path.suffix == ".gz" else raw)
    if kind.endswith("q"):
        pathlib.Path(f"{path}.query").write_text("".join(f"{s}\n" for s in sizes))
    pathlib.Path(f"{path}.position").write_text("".join(f"{i % 4}\n" for i in range(n)))
    return path


def read_options(kind, header=False):
    if kind == "csv":
        return {"header": header, "group_column": "name:qid" if header else "0"}
    return {"header": header} if kind == "csvq" else {}


# --- K ranks in threads --------------------------------------------------------


class _Hub:
    """Where K threads meet: each collective is one exchange of every rank's value."""

    def __init__(self, k):
        self.barrier = threading.Barrier(k, timeout=60)
        self.slots = [None] * k

    def exchange(self, rank, value):
        self.slots[rank] = value
        self.barrier.wait()
        every = list(self.slots)
        self.barrier.wait()
        return every


class ThreadComm(SerialComm):
    """The collectives dgbdt.io uses, for rank ``rank`` of K threads."""

    def __init__(self, hub, rank, size):
        super().__init__()
        self.hub, self.rank, self.size = hub, rank, size

    def _every(self, value):
        return self.hub.exchange(self.rank, value)

    def allgather(self, values):
        return np.stack([np.asarray(v) for v in self._every(np.array(values, copy=True))])

    def allgatherv(self, values):
        every = self._every(np.array(values, copy=True))
        return np.concatenate(every), np.array([len(v) for v in every])

    def allreduce(self, values, op="sum"):
        every = np.stack(self._every(np.array(values, copy=True)))
        return {"sum": every.sum, "min": every.min, "max": every.max}[op](axis=0)

    def bcast(self, values, root=0):
        return np.array(self._every(np.array(values, copy=True))[root], copy=True)

    def bcast_bytes(self, data, root=0):
        return bytes(self._every(bytes(data))[root])

    def scatter_bytes(self, parts, root=0):
        return bytes(self._every(parts)[root][self.rank])


def on_ranks(k, step):
    """``[step(comm) for each of k ranks]``, run in k threads; an error is raised
    as the rank that found it raised it (the others say "rank r failed: ...")."""
    hub = _Hub(k)
    results, errors = [None] * k, [None] * k

    def rank_main(r):
        try:
            results[r] = step(ThreadComm(hub, r, k))
        except BaseException as exc:  # noqa: BLE001 - re-raised below
            errors[r] = exc

    threads = [threading.Thread(target=rank_main, args=(r,)) for r in range(k)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    found = [e for e in errors if e is not None]
    if found:
        raise next((e for e in found if not str(e).startswith("rank ")), found[0])
    return results


def assert_whole_queries(parts, whole):
    """Each part's groups cover its rows; in rank order they are the whole file's
    queries (sizes, ids, rows by label, positions)."""
    for part in parts:
        assert part.group is not None and part.group.dtype == np.int64
        assert part.group.sum() == part.X.shape[0]
    np.testing.assert_array_equal(np.concatenate([p.group for p in parts]), whole.group)
    np.testing.assert_array_equal(np.concatenate([p.label for p in parts]), whole.label)
    if whole.position is not None:
        np.testing.assert_array_equal(np.concatenate([p.position for p in parts]), whole.position)
    if whole.query_ids is None:
        assert all(p.query_ids is None for p in parts)
    else:
        ids = np.concatenate([p.query_ids for p in parts])
        np.testing.assert_array_equal(ids, whole.query_ids)
        assert ids.dtype == whole.query_ids.dtype


def sharded(path, k, options):
    return on_ranks(k, lambda comm: read_row_part(path, comm, options))


# --- groups reach the Datasets (one process) ------------------------------------


def training_sets(tmp_path, *args):
    io, params = parse_arguments(
        [*args, "objective=regression", f"output_model={tmp_path / 'model.json'}"]
    )
    cfg = resolve_params(params)
    comm = _training_world(io, cfg)
    return _training_sets(io, cfg, comm)


@needs_rank_data
def test_query_files_reach_the_training_and_validation_datasets(tmp_path):
    train, valid, names = training_sets(
        tmp_path, f"data={RANK_TRAIN}", f"valid_data={SHARED / 'rank.test'}"
    )
    assert names == ["rank.test"]
    for ds, path in ((train, RANK_TRAIN), (valid[0], SHARED / "rank.test")):
        sizes = np.loadtxt(f"{path}.query", dtype=np.int64)
        np.testing.assert_array_equal(ds.group, sizes)
        assert ds.query_ids is None  # sizes alone name no query
    assert train.group.sum() == train.n_samples == 3005 and len(train.group) == 201


@pytest.mark.parametrize(
    "kind, args",
    [
        ("csv", ("header=true", "group_column=name:qid")),
        ("csv", ("header=true", "group_column=0")),  # index not counting the label
        ("csv", ("group=0",)),  # LightGBM's alias
        ("svm", ()),
    ],
)
def test_group_column_and_qid_give_groups_and_ids(tmp_path, kind, args):
    sizes = [3, 1, 5, 2]
    header = "header=true" in args
    data = write_queries(tmp_path / f"train.{kind}", sizes, kind, header=header)
    valid = write_queries(tmp_path / f"valid.{kind}", [2, 2], kind, seed=1, header=header)
    train, (v,), _ = training_sets(tmp_path, f"data={data}", f"valid_data={valid}", *args)
    whole = read_data(data, **read_options(kind, header))
    np.testing.assert_array_equal(train.group, sizes)
    np.testing.assert_array_equal(train.query_ids, whole.query_ids)
    assert len(np.unique(train.query_ids)) == 4
    np.testing.assert_array_equal(train.position, np.arange(11) % 4)
    assert train.n_features == (2 if kind == "csv" else 3)  # the query column is no feature
    np.testing.assert_array_equal(v.group, [2, 2])
    assert v.query_ids is not None and v.position is not None


def test_position_file_integers_kept_other_text_numbered_by_first_appearance(tmp_path):
    data = write_queries(tmp_path / "train.csv", [2, 3], "csvq")
    pathlib.Path(f"{data}.position").write_text("3\n-1\n3\n7\n+2\n")
    np.testing.assert_array_equal(read_data(data).position, [3, -1, 3, 7, 2])
    pathlib.Path(f"{data}.position").write_text("top\nside\n\ntop\n1\nside\n")
    train, _, _ = training_sets(tmp_path, f"data={data}")
    np.testing.assert_array_equal(train.position, [0, 1, 0, 2, 1])  # LightGBM's ids
    np.testing.assert_array_equal(train.group, [2, 3])


@pytest.mark.parametrize(
    "query, message",
    [
        ("2\n2\n", r"train.csv.query: query sizes \(2 lines\) sum to 4, expected the 5 rows"),
        ("2\n4\n", "sum to 6, expected the 5 rows"),
        ("2\n1.5\n2\n", r"train.csv.query, line 2: expected one non-negative integer"),
        ("2\n-1\n4\n", "line 2: expected one non-negative integer"),
        ("2\nabc\n", "line 2: cannot parse number 'abc'"),
    ],
)
def test_bad_query_files_fail_naming_file_and_line(tmp_path, capsys, query, message):
    data = write_queries(tmp_path / "train.csv", [2, 3], "csvq")
    pathlib.Path(f"{data}.query").write_text(query)
    assert run(["train", f"data={data}", "objective=regression", "num_trees=1"]) == 1
    err = capsys.readouterr().err
    assert re.search(message, err), err
    with pytest.raises(DataFormatError, match=message):
        on_ranks(2, lambda comm: read_row_part(data, comm, {}))


def test_bad_position_file_and_scattered_query_fail_clearly(tmp_path, capsys):
    data = write_queries(tmp_path / "train.csv", [2, 3], "csvq")
    pathlib.Path(f"{data}.position").write_text("1\n2\n")
    assert run(["train", f"data={data}", "objective=regression", "num_trees=1"]) == 1
    assert "train.csv.position: has 2 lines, expected one position per row" in (
        capsys.readouterr().err
    )
    scattered = tmp_path / "scattered.csv"
    scattered.write_text("".join(f"{i},{q},0.5\n" for i, q in enumerate([1] * 4 + [2] * 9 + [1])))
    args = [f"data={scattered}", "group_column=0", "objective=regression", "num_trees=1"]
    assert run(["train", *args]) == 1
    assert "scattered.csv, line 14: query id '1' appears again" in capsys.readouterr().err
    with pytest.raises(DataFormatError, match="query id '1' appears again .* rank 0 and by rank 1"):
        sharded(scattered, 2, {"group_column": "0"})


def test_training_with_groups_and_a_non_ranking_objective(tmp_path):
    data = write_queries(tmp_path / "train.csv", [30] * 10, "csv", header=True)
    out = tmp_path / "model.json"
    args = ["header=true", "group_column=name:qid", "num_trees=2", "min_data_in_leaf=5"]
    assert run(["train", f"data={data}", *args, "objective=regression", f"output_model={out}"]) == 0
    assert out.exists()


# --- sharded reading (K ranks in threads) -----------------------------------------


ADVERSARIAL = {
    "one query bigger than a share": [60],
    "queries of one row": [1] * 9,
    "big and small": [2, 45, 1, 1, 3, 1],
    "fewer queries than ranks": [3, 4],
}


@pytest.mark.parametrize("sizes", ADVERSARIAL.values(), ids=list(ADVERSARIAL))
@pytest.mark.parametrize(
    "kind, header, eol, blank, gz",
    [
        ("csv", True, "\n", 0.0, False),
        ("csv", False, "\r\n", 0.3, True),
        ("svm", False, "\n", 0.3, False),
        ("svm", False, "\r", 0.0, True),
        ("csvq", True, "\r\n", 0.3, False),
        ("csvq", False, "\n", 0.0, True),
        ("svmq", False, "\n", 0.3, False),
    ],
)
def test_sharded_reading_keeps_every_query_on_one_rank(
    tmp_path, sizes, kind, header, eol, blank, gz
):
    if kind.endswith("q") and len(sizes) > 2:
        sizes = [0, *sizes[:2], 0, *sizes[2:], 0]  # zero-size queries too
    path = tmp_path / (f"data.{kind}" + (".gz" if gz else ""))
    write_queries(path, sizes, kind, seed=len(sizes), header=header, eol=eol, blank=blank)
    options = read_options(kind, header)
    whole = read_data(path, **options)
    for k in (2, 3, 4, 6):
        parts = sharded(path, k, options)
        assert_whole_queries(parts, whole)
        if len([s for s in sizes if s]) < k:
            assert any(p.X.shape[0] == 0 for p in parts)  # a rank without rows


@needs_rank_data
@pytest.mark.parametrize("k", [2, 3])
def test_sharded_rank_train_gives_whole_queries_in_unequal_shards(k):
    whole = read_data(RANK_TRAIN)
    parts = sharded(RANK_TRAIN, k, {})
    assert_whole_queries(parts, whole)
    rows = [p.X.shape[0] for p in parts]
    assert len(set(rows)) == k  # cut at query boundaries, not at equal rows
    assert all(abs(r - 3005 / k) < 100 for r in rows)  # near the even byte split


def test_cuts_are_at_the_nearest_query_boundary():
    bounds = np.array([0, 10, 10, 30, 31, 100])
    assert [_nearest_boundary(bounds, r) for r in (0, 4, 5, 6, 10, 19, 20, 21, 30, 99, 100)] == [
        0, 0, 0, 1, 1, 1, 1, 3, 3, 5, 5
    ]  # fmt: skip


@pytest.mark.parametrize("block", [1, 2, 5, 1 << 24])
def test_line_starts_match_the_line_count(monkeypatch, block):
    monkeypatch.setattr(querycuts, "_SCAN_BLOCK", block)
    rng = np.random.default_rng(block)
    for _ in range(300):
        data = bytes(rng.choice(list(b"ab\r\n"), size=rng.integers(0, 25)))
        ends = [m.end() for m in re.finditer(rb"\n|\r(?!\n)", data)]
        expected = [0, *(e for e in ends if e < len(data))] if data else []
        assert list(querycuts._line_starts(data)) == expected
        assert len(expected) == count_lines(data)


def test_sharded_reading_of_one_row_per_line_without_queries_is_unchanged(tmp_path):
    path = write_queries(tmp_path / "plain.csv", [5, 5], "csvq")
    pathlib.Path(f"{path}.query").unlink()
    parts = sharded(path, 3, {})
    assert all(p.group is None and p.query_ids is None for p in parts)
    np.testing.assert_array_equal(np.concatenate([p.label for p in parts]), np.arange(10))


def test_prediction_reads_ignore_queries(tmp_path):
    path = write_queries(tmp_path / "data.csv", [60], "csv")
    options = {"group_column": "0", "features_only": True, "side_files": False}
    parts = sharded(path, 3, options)
    assert [p.X.shape[0] for p in parts] != [60, 0, 0]  # byte ranges, not queries
    assert all(p.group is None for p in parts)


def test_mixed_qid_rows_across_ranks_fail_naming_a_line(tmp_path):
    path = tmp_path / "mixed.svm"
    path.write_text("1 qid:1 0:1\n" * 10 + "2 0:1\n" * 10)
    with pytest.raises(DataFormatError, match=r"mixed.svm, line 1\d: .*no qid:"):
        sharded(path, 2, {})


def test_feature_parallel_blocks_hold_every_query(tmp_path):
    path = write_queries(tmp_path / "data.csv", [4, 1, 6], "csv", header=True)
    options = read_options("csv", header=True)
    whole = read_data(path, **options)
    for loaded, _block in on_ranks(2, lambda comm: read_column_block(path, comm, options)):
        np.testing.assert_array_equal(loaded.group, whole.group)
        np.testing.assert_array_equal(loaded.query_ids, whole.query_ids)
        np.testing.assert_array_equal(loaded.position, whole.position)


# --- LightGBM's lambdarank example ------------------------------------------------

#: examples/lambdarank/train.conf of LightGBM (v4), as written
LAMBDARANK_CONF = """\
task = train
boosting_type = gbdt
objective = lambdarank
metric = ndcg
ndcg_eval_at = 1,3,5
metric_freq = 1
is_training_metric = true
label_column = 0
max_bin = 255
data = rank.train
valid_data = rank.test
num_trees = 100
learning_rate = 0.1
num_leaves = 31
tree_learner = serial
# num_threads = 8
feature_fraction = 1.0
bagging_freq = 1
bagging_fraction = 0.9
min_data_in_leaf = 50
min_sum_hessian_in_leaf = 5.0
is_enable_sparse = true
use_two_round_loading = false
is_save_binary_file = false
output_model = LightGBM_model.txt
# input_model= trained_model.txt
# output_result= prediction.txt
num_machines = 1
local_listen_port = 12400
machine_list_file = mlist.txt
"""


def _rank_copy(tmp_path):
    for name in ("rank.train", "rank.test", "rank.train.query", "rank.test.query"):
        shutil.copy(SHARED / name, tmp_path / name)
    (tmp_path / "train.conf").write_text(LAMBDARANK_CONF)


@needs_rank_data
@pytest.mark.skipif(
    dgbdt.objective.objectives.OBJECTIVES.canonical("lambdarank") is None,
    reason="objective=lambdarank is not in dgbdt.objective.objectives yet",
)
def test_lightgbm_lambdarank_example_runs_as_written(tmp_path, monkeypatch, capsys):
    _rank_copy(tmp_path)
    monkeypatch.chdir(tmp_path)
    # every key parses: LightGBM-only keys that change nothing only warn
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        io, params = parse_arguments(["config=train.conf"])
    assert any("use_two_round_loading" in str(w.message) for w in caught)
    assert not params.keys() & {"use_two_round_loading", "machine_list_file"}
    assert io["data"] == "rank.train" and io["valid_data"] == "rank.test"
    assert run(["config=train.conf", "num_trees=5"]) == 0
    captured = capsys.readouterr()
    assert "error" not in captured.err
    for key in ("use_two_round_loading", "is_save_binary_file", "machine_list_file"):
        assert key in captured.err  # named in a warning
    assert "rank.test's ndcg@5" in captured.out and "training's ndcg@1" in captured.out
    assert (tmp_path / "LightGBM_model.txt").exists()


# --- under mpiexec ------------------------------------------------------------------


def _mpi_cases(tmp_path):
    """(cases: lists of dgbdt train arguments, the files each case reads with their
    read options)."""
    out = f"output_model={tmp_path / 'model.json'}"
    base = ["objective=regression", "tree_learner=data", "verbosity=-1", out]
    csv = write_queries(tmp_path / "q.csv", [2, 25, 1, 1, 4, 1, 9], "csv", header=True)
    csv_valid = write_queries(tmp_path / "v.csv", [1, 5, 2], "csv", seed=2, header=True)
    svm = write_queries(tmp_path / "q.svm.gz", [7, 1, 30, 2], "svm", blank=0.2)
    few = write_queries(tmp_path / "few.csv", [0, 6, 0, 5, 0], "csvq")
    few_valid = write_queries(tmp_path / "few_valid.csv.gz", [0, 1, 2, 0], "csvq", seed=3)
    scattered = tmp_path / "scattered.csv"
    scattered.write_text("".join(f"{i},{q},0.5\n" for i, q in enumerate([1] * 4 + [2] * 30 + [1])))
    csv_opts = read_options("csv", header=True)
    cases = [
        (
            [
                f"data={csv}",
                f"valid_data={csv_valid}",
                "header=true",
                "group_column=name:qid",
                "tree_learner=voting",
            ],
            [(csv, csv_opts), (csv_valid, csv_opts)],
        ),
        ([f"data={svm}"], [(svm, {})]),
        ([f"data={few}", f"valid_data={few_valid}"], [(few, {}), (few_valid, {})]),
        ([f"data={scattered}", "group_column=0"], None),
        ([f"data={csv}", "header=true", "group_column=0", "tree_learner=feature"], "feature"),
    ]
    if RANK_TRAIN.exists():
        cases.append(
            (
                [f"data={RANK_TRAIN}", f"valid_data={SHARED / 'rank.test'}"],
                [(RANK_TRAIN, {}), (SHARED / "rank.test", {})],
            )
        )
    return [args + base for args, _ in cases], [files for _, files in cases], csv


@pytest.mark.parametrize("k", [2, 3])
def test_command_line_datasets_under_mpiexec_hold_whole_queries(tmp_path, k):
    cases, files, csv = _mpi_cases(tmp_path)
    argv = [a for i, case in enumerate(cases) for a in ([] if i == 0 else ["--"]) + case]
    result = run_mpi(k, "cli_rank.py", tmp_path, *argv, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    for i, expected in enumerate(files):
        if expected is None:  # the scattered query: an error every rank agrees on
            for r in range(k):
                text = (tmp_path / f"case{i}.rank{r}.err").read_text()
                assert "query id '1' appears again after other queries" in text
            continue
        ranks = [np.load(tmp_path / f"case{i}.rank{r}.npz") for r in range(k)]
        if expected == "feature":  # every rank reads every row
            whole = read_data(csv, **read_options("csv", header=True))
            for got in ranks:
                np.testing.assert_array_equal(got["0_group"], whole.group)
                np.testing.assert_array_equal(got["0_query_ids"], whole.query_ids)
            continue
        for j, (path, options) in enumerate(expected):
            whole = read_data(path, **options)
            parts = [_Loaded(got, j) for got in ranks]
            assert_whole_queries(parts, whole)
            if len([s for s in whole.group if s]) < k:
                assert any(p.X.shape[0] == 0 for p in parts)  # a rank without rows


class _Loaded:
    """A Dataset's arrays, as LoadedData for assert_whole_queries."""

    def __init__(self, got, j):
        self.X = np.zeros((int(got[f"{j}_n"][0]), 0))
        self.label = got[f"{j}_label"]
        for name in ("group", "query_ids", "position"):
            setattr(self, name, got[f"{j}_{name}"] if f"{j}_{name}" in got else None)


@needs_rank_data
@pytest.mark.skipif(
    dgbdt.objective.objectives.OBJECTIVES.canonical("lambdarank") is None,
    reason="objective=lambdarank is not in dgbdt.objective.objectives yet",
)
@pytest.mark.parametrize("k", [2, 3])
def test_lambdarank_example_on_k_ranks_gives_the_single_process_model(tmp_path, k):
    # as written: bagging_fraction 0.9 every round (bags keyed on global rows)
    _rank_copy(tmp_path)
    args = ["train", f"config={tmp_path / 'train.conf'}", f"data={tmp_path / 'rank.train'}"]
    args += [f"valid_data={tmp_path / 'rank.test'}", "num_trees=3"]
    serial, dist = tmp_path / "serial.json", tmp_path / "dist.json"
    assert run([*args, "verbosity=-1", f"output_model={serial}"]) == 0
    result = run_mpi(k, "cli.py", *args, "tree_learner=data", f"output_model={dist}")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "rank.test's ndcg@3" in result.stdout
    X = read_data(tmp_path / "rank.test").X
    np.testing.assert_array_equal(
        dgbdt.Booster(model_file=serial).predict(X), dgbdt.Booster(model_file=dist).predict(X)
    )


def test_a_bad_query_file_under_mpiexec_ends_every_rank_with_its_message(tmp_path):
    data = write_queries(tmp_path / "train.csv", [20, 20], "csvq")
    pathlib.Path(f"{data}.query").write_text("20\n19\n")
    result = run_mpi(
        2, "cli.py", "train", f"data={data}", "tree_learner=data", "objective=regression",
        f"output_model={tmp_path / 'm.json'}", timeout=60,
    )  # fmt: skip
    assert result.returncode != 0
    assert result.stderr.count("train.csv.query: query sizes (2 lines) sum to 39") == 1, (
        result.stderr[-3000:]
    )
