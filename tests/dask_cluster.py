"""A Dask LocalCluster for the dgbdt.dask tests: worker processes with one
thread each, on 127.0.0.1 only, no dashboard."""

import contextlib

import pytest
from mpi_launch import mpiexec_path


@contextlib.contextmanager
def local_client(n_workers):
    """A Client of a fresh LocalCluster (skips without distributed or mpiexec)."""
    distributed = pytest.importorskip("distributed")
    mpiexec_path()  # the ranks are started with the mpich wheel's mpiexec
    with (
        distributed.LocalCluster(
            n_workers=n_workers,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client
