"""Rank script: the command line, ``dgbdt <args>``, on every rank.

argv: K, then the arguments of ``dgbdt``; ``@RANK@`` in them becomes this
rank's number (a file one rank cannot find, as on another machine).
"""

import os
import sys

from dgbdt.__main__ import main

assert int(os.environ.get("PMI_SIZE", "1")) == int(sys.argv[1]), "not started by the right mpiexec"
rank = os.environ.get("PMI_RANK", "0")
sys.exit(main([arg.replace("@RANK@", rank) for arg in sys.argv[2:]]))
