"""The named collectives of dgbdt.distributed.comm (any_rank, every_rank, total, concat, per_rank)."""

import json

import numpy as np
from mpi_launch import run_mpi

from dgbdt.distributed.comm import SerialComm


def test_one_process_helpers_are_the_local_values():
    comm = SerialComm()
    assert comm.any_rank(1) is True and comm.any_rank(0) is False
    assert comm.every_rank(True) is True and comm.every_rank(False) is False
    assert comm.total([1.5, 2]).tolist() == [1.5, 2.0]
    got = comm.concat(np.array([[1, 2], [3, 4]]), dtype=np.int64)
    assert got.dtype == np.int64 and got.tolist() == [1, 2, 3, 4]
    assert comm.per_rank(7).tolist() == [7]
    assert comm.greatest_int([3, -1]).tolist() == [3, -1]
    assert comm.greatest([0.5]).tolist() == [0.5]


def test_three_ranks_helpers_combine_every_rank(tmp_path):
    out = tmp_path / "out.json"
    result = run_mpi(3, "comm_helpers.py", out, timeout=90)
    assert result.returncode == 0, result.stderr
    got = json.loads(out.read_text())
    assert got == {
        "any_last": True,
        "any_none": False,
        "every_all": True,
        "every_not_first": False,
        "total": [3.0, 3.0],
        "concat": [0, 0, 1],
        "per_rank": [0, 10, 20],
        "greatest_int": [2, 0],
        "greatest": [1.0, 1.0],
    }


def test_one_process_engine_helpers():
    comm = SerialComm()
    got = comm.total_int([2, True])
    assert got.dtype == np.int64 and got.tolist() == [2, 1]
    assert comm.least_int([3, -1]).tolist() == [3, -1]
    stacked = comm.stack([1, 2.5])
    assert stacked.dtype == np.float64 and stacked.tolist() == [[1.0, 2.5]]
    assert comm.gather_bytes(b"abc") == [b"abc"]
    assert comm.ranks_unlike_rank0("anything") == []


def test_three_ranks_engine_helpers(tmp_path):
    out = tmp_path / "out.json"
    result = run_mpi(3, "comm_engine_helpers.py", out, timeout=90)
    assert result.returncode == 0, result.stderr
    got = json.loads(out.read_text())
    assert got == {
        "total_int": [3, 3],
        "least_int": [0, 8],
        "stack": [[0.0, 0.5], [1.0, 0.5], [2.0, 0.5]],
        "gather_bytes": ["", "x", "xx"],
        "unlike_rank0": [1],
        "all_alike": [],
        # rank 0's send buffers: 2 int64 twice; 2 float64, the 8-byte count and
        # no text, and 32-byte digests twice
        "bytes": {"allreduce": 32, "allgather": 16 + 8 + 0 + 64},
    }
