"""Rank script: the command line, ``dgbdt <args>``, on every rank.

argv: K, then the arguments of ``dgbdt``.
"""
import os
import sys

from dgbdt.__main__ import main

assert int(os.environ.get("PMI_SIZE", "1")) == int(sys.argv[1]), "not started by the right mpiexec"
sys.exit(main(sys.argv[2:]))
