"""Pipelined data-parallel histograms (``comm_pipeline``): the pieces cover every
owner's block once, the communication thread gives the one-exchange sums, and
the model is the one-exchange learner's under mpiexec."""

import numpy as np
import pytest
from mpi_launch import run_mpi_file

import dgbdt
from dgbdt.distributed.comm import SerialComm
from dgbdt.treelearner.learners.data import pipeline_pieces

SCRIPT = __file__.replace("test_pipeline.py", "mpi/pipeline.py")


@pytest.mark.parametrize("n_pieces, align", [(1, 1), (3, 1), (4, 64), (7, 1)])
def test_pieces_cover_each_owner_block_once_in_order(n_pieces, align):
    rng = np.random.default_rng(n_pieces)
    offsets = np.concatenate([[0], np.cumsum(rng.integers(1, 30, 300))])
    bounds = np.array([0, 90, 91, 230, 300])
    for rank in range(4):
        pieces = pipeline_pieces(offsets, bounds, rank, n_pieces, align)
        assert len(pieces) == n_pieces
        assert (sum(p.features.astype(int) for p in pieces) == 1).all()  # each feature once
        for r in range(4):
            runs = [p.ranges[r] for p in pieces]
            assert runs[0][0] == offsets[bounds[r]] and runs[-1][1] == offsets[bounds[r + 1]]
            assert all(a[1] == b[0] for a, b in zip(runs, runs[1:], strict=False))  # contiguous
            assert [p.counts[r] for p in pieces] == [b - a for a, b in runs]
        assert [p.own for p in pieces] == [slice(*p.ranges[rank]) for p in pieces]
        for p in pieces:  # a piece's features are those of its bin ranges
            built = np.flatnonzero(p.features)
            bins = sum(int(offsets[f + 1] - offsets[f]) for f in built)
            assert bins == sum(p.counts)


def test_cuts_fall_on_blocks_inside_an_owner_block():
    offsets = np.arange(0, 256 * 10 + 1, 10)  # 256 features of 10 bins
    pieces = pipeline_pieces(offsets, np.array([0, 256]), 0, 4, 64)
    assert [p.ranges[0] for p in pieces] == [(0, 640), (640, 1280), (1280, 1920), (1920, 2560)]


def test_a_started_reduce_scatter_on_one_process_is_its_own_block():
    pending = SerialComm().reduce_scatter_start(np.arange(6.0), [6])
    assert np.array_equal(pending.wait(), np.arange(6.0))


@pytest.mark.parametrize("k, layout", [(2, "col"), (3, "blocks"), (2, "sparse")])
def test_pipelined_data_parallel_gives_the_one_exchange_model(k, layout):
    out = run_mpi_file(k, SCRIPT, k, layout, timeout=240)
    assert out.stdout.count("finished") == k


@pytest.mark.parametrize("value", [-2, 65, 1.5, "four"])
def test_a_bad_comm_pipeline_is_named(value):
    X, y = np.arange(40.0).reshape(20, 2), np.arange(20.0)
    with pytest.raises((ValueError, TypeError), match="comm_pipeline"):
        dgbdt.train({"comm_pipeline": value, "verbosity": -1}, dgbdt.Dataset(X, y), 1)
