"""Inputs the ranks must agree on, refused at once under ``mpiexec`` (issue 27).

Ranks that differ in their categorical features, in having a position, or in
their labels' types (the classifier joins every rank's classes) must each end
non-zero with one message naming the input and the ranks, on every rank, at
once: before, the job ended with MPI's "Message truncated", waited for the
collectives' deadline (the scripts keep the default, past the launch's 60 s),
or trained a model of four classes.  The elapsed bound below only catches a
hang.
"""

import time

import numpy as np
import pytest
from mpi_launch import TESTS, run_mpi_file

from dgbdt import DGBDTClassifier
from dgbdt.distributed.comm import SerialComm

HANG = 30  # seconds: a hang check, not a timing (a refusal takes a few)


def run_script(name, n_ranks, *args):
    start = time.monotonic()
    result = run_mpi_file(n_ranks, TESTS / "mpi" / name, n_ranks, *args, timeout=60)
    return result, time.monotonic() - start


def assert_refused_on_every_rank(result, elapsed, n_ranks, message):
    assert result.returncode != 0, result.stdout + result.stderr[-3000:]
    assert "finished" not in result.stdout
    assert result.stderr.count(message) == n_ranks, result.stderr[-3000:]
    assert elapsed < HANG, f"took {elapsed:.1f} s (a hang?)\n{result.stderr[-3000:]}"


@pytest.mark.slow
def test_categorical_feature_differs_in_train():
    result, elapsed = run_script("agreement_categorical.py", 3, "train")
    message = (
        "Ranks [2] called train() unlike rank 0: train_set's categorical_feature "
        "(its categorical columns) is [1, 2] on rank 2 but [2] on rank 0"
    )
    assert_refused_on_every_rank(result, elapsed, 3, message)


@pytest.mark.slow
def test_categorical_feature_differs_in_cv():
    # cv bins the whole training set before any fold's train(): the Dataset agrees
    result, elapsed = run_script("agreement_categorical.py", 2, "cv")
    message = (
        "categorical_feature differs between ranks [0, 1] "
        "(the categorical columns are rank 0: [2]; rank 1: [])"
    )
    assert_refused_on_every_rank(result, elapsed, 2, message)


@pytest.mark.slow
def test_position_on_one_rank():
    result, elapsed = run_script("agreement_position.py", 2)
    message = (
        "Ranks [1] called train() unlike rank 0: train_set's position given "
        "is True on rank 1 but False on rank 0"
    )
    assert_refused_on_every_rank(result, elapsed, 2, message)


@pytest.mark.slow
def test_label_types_differ():
    result, elapsed = run_script("agreement_labels.py", 3)
    message = (
        "the labels' types differ between ranks: rank 0 has strings, rank 1 has integers, "
        "rank 2 has strings"
    )
    assert_refused_on_every_rank(result, elapsed, 3, message)


class GatheredComm(SerialComm):
    """One of several ranks, whose label sets are ``every`` (what the classifier
    gathers with per_rank_objects): the rule, without starting MPI."""

    def __init__(self, every):
        super().__init__()
        self.size, self.every = len(every), every

    def per_rank_objects(self, value):
        return self.every


def test_numeric_labels_of_several_dtypes_agree():
    # integers, an empty shard and floats: numbers all, joined as one process would
    every = [np.array([0, 1]), np.array([], np.float64), np.array([0.0, 1.0])]
    labels = DGBDTClassifier._global_labels(np.array([0, 1]), GatheredComm(every))
    np.testing.assert_array_equal(np.unique(labels), [0.0, 1.0])


def test_an_empty_shard_is_not_named():
    every = [np.array(["a", "b"]), np.array([], np.float64), np.array([True, False])]
    message = r"rank 0 has strings, rank 2 has booleans; every rank's y"
    with pytest.raises(ValueError, match=message):
        DGBDTClassifier._global_labels(np.array(["a", "b"]), GatheredComm(every))
