"""Fields of delimited text: the delimiter, a line's fields, the fields of every
line (a Numba scan), header names and pandas' parser options."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..native.text import WHITESPACE_SEP, field_counts
from .filebytes import count_lines
from .values import NA_TOKENS


def detect_sep(line: str) -> str | None:
    if "\t" in line:
        return "\t"
    if "," in line:
        return ","
    return None  # runs of whitespace


_BLANK_RUN = re.compile("[ \t\r]+")  # what separates fields of whitespace-delimited text


def split_fields(line: str, sep: str | None) -> list[str]:
    """Fields of a decoded line, split as :func:`native.text.field_counts` counts them."""
    line = line.rstrip("\r")
    if sep is None:
        return [t for t in _BLANK_RUN.split(line) if t]
    return line.split(sep)


def field_counts_of(data: bytes, sep: str | None) -> tuple[np.ndarray, int]:
    """``(counts, stray)``: fields per line of ``data`` (0 for a blank line) and the
    0-based line of the first stray ``\\r`` inside a line (-1: none).  One pass in
    Numba over the bytes."""
    counts = np.empty(count_lines(data), np.int64)
    stray = field_counts(
        np.frombuffer(data, np.uint8), WHITESPACE_SEP if sep is None else ord(sep), counts
    )
    return counts, int(stray)


def header_names(first: str, sep: str | None) -> list[str]:
    names = [s.strip() for s in split_fields(first, sep)]
    if names:
        names[0] = names[0].lstrip("\ufeff")  # read_header_line keeps the file's mark
    return names


def read_csv_kwargs(sep: str | None, used: Sequence[int], n_cols: int) -> dict[str, Any]:
    return {
        "sep": r"\s+" if sep is None else sep,
        "header": None,
        "dtype": np.float64,
        "engine": "c",
        "na_values": list(NA_TOKENS),
        "keep_default_na": False,
        "skip_blank_lines": True,
        "quoting": 3,
        "comment": None,
        "usecols": used if len(used) < n_cols else None,
    }
