"""native.text: the byte scans of the readers against naive Python twins."""

import re

import numpy as np
import pytest
from dgbdt.native.text import (
    LINE_BAD_QID,
    LINE_BLANK,
    LINE_NO_QID,
    LINE_QID,
    WHITESPACE_SEP,
    byte_counts,
    count_rows,
    field_counts,
    libsvm_qids,
)
from hypothesis import given, settings
from hypothesis import strategies as st

ALPHABET = b"0123456789,,,..\t\t   \r\n\n\n::#qid-+eE\x0b\x0cx\x00\xff"


def lines_of(data):
    """Lines as the readers count them: at b'\\n' only, a last line without one counts."""
    if not data:
        return []
    lines = data.split(b"\n")
    return lines[:-1] if data.endswith(b"\n") else lines


def naive_fields(line, sep):
    if sep is None:
        return len([t for t in re.split(rb"[ \t\r]+", line) if t])
    blanks = bytes(c for c in b" \t\r" if c != sep)
    if not line.strip(blanks) or all(c in blanks for c in line):
        return 0
    return line.count(bytes([sep])) + 1


def naive_stray(line):
    return any(line[i] == 13 and line[i + 1] not in b"\r" for i in range(len(line) - 1))


def naive_field_counts(data, sep):
    counts = [naive_fields(line, sep) for line in lines_of(data)]
    stray = next(
        (i for i, line in enumerate(lines_of(data)) if counts[i] > 0 and naive_stray(line)), -1
    )
    return counts, stray


def run_field_counts(data, sep):
    counts = np.full(len(lines_of(data)), -7, np.int64)
    stray = field_counts(
        np.frombuffer(data, np.uint8), WHITESPACE_SEP if sep is None else sep, counts
    )
    return counts.tolist(), int(stray)


def naive_count_rows(data, sep, n_fields):
    counts, _ = naive_field_counts(data, sep)
    rows = 0
    for i, (c, line) in enumerate(zip(counts, lines_of(data), strict=True)):
        if c > 0:
            if c != n_fields or naive_stray(line):
                return -1 - i
            rows += 1
    return rows


def naive_qids(data):
    kinds, qids = [], []
    for line in lines_of(data):
        tokens = line.split(b"#", 1)[0].split()  # bytes.split: scikit-learn's whitespace
        if not tokens:
            kinds.append(LINE_BLANK)
            qids.append(0)
        elif len(tokens) >= 2 and tokens[1].startswith(b"qid"):
            m = re.fullmatch(rb"qid:([+-]?[0-9]{1,18})", tokens[1])
            kinds.append(LINE_QID if m else LINE_BAD_QID)
            qids.append(int(m.group(1)) if m else 0)
        else:
            kinds.append(LINE_NO_QID)
            qids.append(0)
    return kinds, qids


def random_texts(seed, n=60):
    rng = np.random.default_rng(seed)
    alphabet = np.frombuffer(ALPHABET, np.uint8)
    for _ in range(n):
        yield rng.choice(alphabet, size=int(rng.integers(0, 400))).tobytes()


SEPS = [None, ord(","), ord("\t"), ord(" ")]


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("sep", SEPS)
def test_field_counts_and_count_rows_match_naive(seed, sep):
    for data in random_texts(seed):
        assert run_field_counts(data, sep) == naive_field_counts(data, sep), data
        for n_fields in (1, 2, 3):
            got = count_rows(
                np.frombuffer(data, np.uint8), WHITESPACE_SEP if sep is None else sep, n_fields
            )
            assert got == naive_count_rows(data, sep, n_fields), (data, n_fields)


@settings(deadline=None, max_examples=200)
@given(
    data=st.binary(max_size=200)
    | st.lists(st.sampled_from(list(ALPHABET)), max_size=200).map(bytes),
    sep=st.sampled_from(SEPS),
)
def test_field_counts_hypothesis(data, sep):
    assert run_field_counts(data, sep) == naive_field_counts(data, sep)


def test_field_counts_examples():
    assert run_field_counts(b"1,2\n\n3\r\n \t\n4,5,6", ord(",")) == ([2, 0, 1, 0, 3], -1)
    assert run_field_counts(b" 1  2\n\n3\r\n \t\n4\x0b5 6\n", None) == ([2, 0, 1, 0, 2], -1)
    assert run_field_counts(b"1,2\n3,4\r5,6\n", ord(",")) == ([2, 3], 1)  # a stray '\r'
    assert run_field_counts(b"1,2\r\r\n \r \n", ord(",")) == ([2, 0], -1)  # blank: no stray
    assert run_field_counts(b"\t\n", ord("\t")) == ([2], -1)  # the separator is no blank
    assert run_field_counts(b"", ord(",")) == ([], -1)
    assert count_rows(np.frombuffer(b"1,2\n\n3,4\n", np.uint8), ord(","), 2) == 2
    assert count_rows(np.frombuffer(b"1,2\n\n3\n", np.uint8), ord(","), 2) == -3


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_libsvm_qids_match_naive(seed):
    rng = np.random.default_rng(seed)
    pieces = [
        b"1",
        b"0",
        b" ",
        b"\t",
        b"\n",
        b"qid:",
        b"qid",
        b"7",
        b"-",
        b"+",
        b"3:4",
        b"#",
        b"x",
        b"\x0b",
        b"\r",
        b"qid:12",
        b"9" * 19,
        b"qid:-5",
    ]
    for _ in range(200):
        data = b"".join(pieces[i] for i in rng.integers(0, len(pieces), int(rng.integers(0, 40))))
        n = len(lines_of(data))
        qids, kinds = np.zeros(n, np.int64), np.full(n, -1, np.int8)
        assert libsvm_qids(np.frombuffer(data, np.uint8), qids, kinds) == n
        want_kinds, want_qids = naive_qids(data)
        assert kinds.tolist() == want_kinds, data
        assert [
            q if k == LINE_QID else 0 for q, k in zip(qids.tolist(), want_kinds, strict=True)
        ] == want_qids, data


def test_libsvm_qids_examples():
    data = (
        b"1 qid:5 0:1\n# c\n\n2 qid:-7 1:2 # x\n3 0:1\n4 qidx:3\n"
        b"5 qid:1234567890123456789\n6\tqid:+8"
    )
    qids, kinds = np.zeros(8, np.int64), np.zeros(8, np.int8)
    assert libsvm_qids(np.frombuffer(data, np.uint8), qids, kinds) == 8
    assert kinds.tolist() == [
        LINE_QID,
        LINE_BLANK,
        LINE_BLANK,
        LINE_QID,
        LINE_NO_QID,
        LINE_BAD_QID,
        LINE_BAD_QID,
        LINE_QID,
    ]
    assert qids[[0, 3, 7]].tolist() == [5, -7, 8]


@pytest.mark.parametrize("seed", [0, 1])
def test_byte_counts(seed):
    for data in random_texts(seed):
        got = byte_counts(np.frombuffer(data, np.uint8), 10, 44, 13)
        assert tuple(int(x) for x in got) == (
            data.count(b"\n"),
            data.count(b","),
            data.count(b"\r"),
        )
    assert tuple(byte_counts(np.zeros(0, np.uint8), 1, 2, 256)) == (0, 0, 0)
