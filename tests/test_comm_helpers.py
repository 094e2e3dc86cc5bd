"""The named collectives of dgbdt.comm (any_rank, every_rank, total, concat, per_rank)."""

import json

import numpy as np

from dgbdt.comm import SerialComm
from mpi_launch import run_mpi


def test_one_process_helpers_are_the_local_values():
    comm = SerialComm()
    assert comm.any_rank(1) is True and comm.any_rank(0) is False
    assert comm.every_rank(True) is True and comm.every_rank(False) is False
    assert comm.total([1.5, 2]).tolist() == [1.5, 2.0]
    got = comm.concat(np.array([[1, 2], [3, 4]]), dtype=np.int64)
    assert got.dtype == np.int64 and got.tolist() == [1, 2, 3, 4]
    assert comm.per_rank(7).tolist() == [7]


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
    }
