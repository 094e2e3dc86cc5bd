"""Test helper: quantized leaves of more than ``above`` rows held as int64 pairs.

Real pairs leaves need more than 2**32 / (B + 1) rows (859 million at B = 4);
tests force them on small data instead: the grower and the voting learner are
told that such leaves do not fit wide words (the quantized histogram kind,
which every learner's width choice goes through), and the pieces summed into
pairs are made small so a leaf has several.
"""

from dgbdt.native.quantize import PAIRS, packed_width

import dgbdt.treelearner.histograms as histograms


def force_pairs(above, set_attr=setattr):
    """``set_attr``: pytest's ``monkeypatch.setattr`` to undo it after a test."""

    def width(n, b):
        return PAIRS if n > above else packed_width(n, b)

    set_attr(histograms, "packed_width", width)
    set_attr(histograms, "wide_rows", lambda b: max(1, above // 3))
