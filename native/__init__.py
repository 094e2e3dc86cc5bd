"""Numba kernels of dgbdt (installed as ``dgbdt.native``).

Every function here is ``@njit(cache=True)``: arrays in, arrays out, the caller
allocates outputs, no MPI and no Python objects. One module per concept; all
dtypes and record layouts live in :mod:`dgbdt.native.common`.
"""
