"""Fuzz tests of dgbdt.io: corrupted CSV/TSV/whitespace and LibSVM files.

Whatever the bytes, ``read_data`` either returns a LoadedData whose arrays agree
with each other, or raises DataFormatError (ValueError for column options that
the corrupted file no longer fits) with the file's name in the message: never
an IndexError, UnicodeDecodeError, a pandas or gzip error, ...

A second property holds the chunked (multi-threaded) delimited reader to the
serial reference: the same arrays, or the same error.  Others fuzz the side files
(``.weight``, ``.init``, ``.query``: NaN/inf/negative values, wrong lengths, a
directory or FIFO in their place) and prediction's ``features_only`` reads (bad
labels are ignored: the features equal those of the clean file).  No read may
allocate more than ``ALLOCATION_LIMIT`` (a LibSVM index of 2000000000 once asked
for 15 GiB downstream) or return a matrix that ``Dataset`` would refuse.

``DGBDT_FUZZ_EXAMPLES=5000 pytest tests/test_readers_fuzz.py`` fuzzes longer.
"""

import gzip
import os
import re
import signal
import tracemalloc
from contextlib import contextmanager

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from dgbdt.data.sources import check_sparse_shape
from dgbdt.io import (
    MAX_SPARSE_COLUMNS,
    DataFormatError,
    LoadedData,
    delimited,
    filebytes,
    read_data,
)

FUZZ = settings(
    deadline=None,
    max_examples=int(os.environ.get("DGBDT_FUZZ_EXAMPLES", 150)),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# ------------------------------------------------------------------ valid files

numbers = st.one_of(
    st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False).map(repr),
    st.integers(-1000, 1000).map(str),
    st.sampled_from(["0", "-0", "1e-3", "2.5E+2", ".5", "3.", "+7"]),
)


@st.composite
def csv_files(draw):
    """(bytes, read_data options) of a valid delimited file."""
    sep = draw(st.sampled_from([",", "\t", " "]))
    n_cols = draw(st.integers(1, 5))
    n_rows = draw(st.integers(0, 7))
    header = draw(st.booleans())
    eol = draw(st.sampled_from(["\n", "\n", "\r\n", "\r"]))  # '\r': old Mac text
    # LightGBM's missing-value spellings (Atof: na, nan, null in any case, signed)
    missing = ["NA", "nan", "null", "-nan", "nAn", "NULL"] + ([] if sep == " " else ["", "NaN"])
    lines = [sep.join(f"c{j}" for j in range(n_cols))] if header else []
    for _ in range(n_rows):
        label = draw(st.integers(0, 3).map(str))
        feats = [draw(st.one_of(numbers, st.sampled_from(missing))) for _ in range(n_cols - 1)]
        lines.append(sep.join([label] + feats))
        if draw(st.integers(0, 9)) == 0:
            lines.append("")  # a blank line
    text = eol.join(lines) + (eol if draw(st.booleans()) else "")
    options = {"header": header}
    columns = [{}, {}, {}, {"label_column": None}]
    if n_cols >= 2:
        columns += [{"weight_column": "0"}, {"group_column": "0"}, {"label_column": "1"}]
    if n_cols >= 3:
        columns += [{"ignore_columns": "1"}, {"weight_column": "1", "group_column": "0"}]
    options.update(draw(st.sampled_from(columns)))
    return text.encode(), options


@st.composite
def libsvm_files(draw):
    """(bytes, read_data options) of a valid LibSVM file."""
    zero_based = draw(st.booleans())
    with_qid = draw(st.booleans())
    n_rows = draw(st.integers(0, 7))
    lines = ["# a comment"] if draw(st.booleans()) else []
    qid = 0
    for _ in range(n_rows):
        qid += draw(st.integers(0, 1))
        toks = [draw(st.integers(0, 3).map(str))] + ([f"qid:{qid}"] if with_qid else [])
        idx = draw(st.lists(st.integers(0, 6), max_size=5, unique=True))
        toks += [f"{j + (0 if zero_based else 1)}:{draw(numbers)}" for j in sorted(idx)]
        line = " ".join(toks)
        if draw(st.integers(0, 5)) == 0:
            line += " # tail"
        lines.append(line)
    text = "\n".join(lines) + ("\n" if draw(st.booleans()) else "")
    options = {"zero_based": zero_based}
    if draw(st.integers(0, 3)) == 0:
        options["n_features"] = draw(st.integers(1, 9))
    return text.encode(), options


# ------------------------------------------------------------------ corruptions

BAD_TOKENS = [
    b"abc",
    b"nan",
    b"NaN",
    b"inf",
    b"-inf",
    b"1e999",
    b"",
    b"1:2",
    b"-1:3",
    b"0:1",
    b"qid:x",
    b"qid:5",
    b"qid:",
    b"qid",
    b"\xff\xfe",
    b"1_0",
    b"0x10",
    b"9" * 30,
    b"99999999999:1",
    b"2147483648:1",
    b"9" * 30 + b":1",
    b"1:" + b"9" * 400,
    b"qid:" + b"9" * 25,
    b"qid:" + b"9" * 400,
    b"9" * 5000 + b":1",
    b"-0",
    b"1e",
    b".",
    b"+",
    b"#",
    b"\x00",
    b"\r",
    b"\xc3\x28",
    b"NA",
    b" ",
    b",",
    b"\t",
    b"\xef\xbb\xbf",
    b"\xed\xa0\x80",
    b"1,2",
    b"\x0b",
    b"\x0c",
    b"\x1c",
    "\u00a0".encode(),
    "\u0663".encode(),
    b'"1"',
    b"1;2",
    b"--1",
    b"1e5.5",
    # LibSVM indices at and beyond the cap (2**20 columns), and a repeat
    str(MAX_SPARSE_COLUMNS - 1).encode() + b":1",
    str(MAX_SPARSE_COLUMNS).encode() + b":1",
    b"2000000000:1",
    b"2000000000:0",
    b"1:1 1:2",
    b"0:1 0:1",
]
INTERESTING_BYTES = b",\t \n\r:#-+.eE0123456789naNAIq\x00\xff\xc3\x0b\x0c\"'"
TOKEN_SPLIT = re.compile(rb"([,\t \n:]+)")


def corrupt(draw, data):
    """``data`` with 1 to 4 random corruptions."""
    for _ in range(draw(st.sampled_from([1, 1, 1, 2, 2, 3, 4]))):  # one alone, mostly
        op = draw(
            st.sampled_from(
                [
                    "delete",
                    "insert",
                    "replace",
                    "truncate",
                    "token",
                    "token",
                    "drop_token",
                    "dup_token",
                    "add_token",
                    "add_token",
                    "field",
                    "label",
                    "garbage",
                    "utf8",
                    "line",
                    "bom",
                    "repeat_index",
                ]
            )
        )
        n = len(data)
        pos = draw(st.integers(0, n))
        if op == "delete" and n:
            k = draw(st.integers(1, 3))
            data = data[: min(pos, n - 1)] + data[min(pos, n - 1) + k :]
        elif op == "insert":
            byte = draw(st.one_of(st.sampled_from(list(INTERESTING_BYTES)), st.integers(0, 255)))
            data = data[:pos] + bytes([byte]) + data[pos:]
        elif op == "replace" and n:
            byte = draw(st.one_of(st.sampled_from(list(INTERESTING_BYTES)), st.integers(0, 255)))
            p = min(pos, n - 1)
            data = data[:p] + bytes([byte]) + data[p + 1 :]
        elif op == "truncate":
            data = data[:pos]
        elif op in ("token", "drop_token", "dup_token"):
            parts = TOKEN_SPLIT.split(data)
            tokens = [i for i in range(0, len(parts), 2) if parts[i]]
            if tokens:
                i = draw(st.sampled_from(tokens))
                if op == "token":
                    parts[i] = draw(st.sampled_from(BAD_TOKENS))
                elif op == "drop_token":
                    parts[i] = b""
                else:
                    parts[i] = parts[i] + draw(st.sampled_from([b",", b"\t", b" "])) + parts[i]
                data = b"".join(parts)
        elif op == "add_token":  # a whole bad token after a separator
            cuts = [m.end() for m in re.finditer(rb"[,\t ]", data)] or [len(data)]
            cut = draw(st.sampled_from(cuts))
            sep = data[cut - 1 : cut] if cut else b" "
            data = data[:cut] + draw(st.sampled_from(BAD_TOKENS)) + sep + data[cut:]
        elif op in ("field", "label", "line"):
            data = corrupt_a_line(draw, data, op)
        elif op == "garbage":
            data = data[:pos] + draw(st.binary(min_size=1, max_size=24)) + data[pos:]
        elif op == "utf8":
            data = (
                data[:pos]
                + draw(
                    st.sampled_from(
                        [b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xf0\x28\x8c\x28", b"\x80"]
                    )
                )
                + data[pos:]
            )
        elif op == "bom":
            data = b"\xef\xbb\xbf" + data
        elif op == "repeat_index":
            data = repeat_an_index(draw, data)
    return data


def corrupt_a_line(draw, data, op):
    """One more field in a line, a bad label, or a line duplicated, dropped or blanked."""
    lines = data.split(b"\n")
    i = draw(st.integers(0, len(lines) - 1))
    if op == "field":  # one more field somewhere in the line
        sep = draw(st.sampled_from([b",", b"\t", b" "]))
        cut = draw(st.integers(0, len(lines[i])))
        extra = draw(st.sampled_from([b"1.5", b"", b"x", b"3:4"]))
        lines[i] = lines[i][:cut] + sep + extra + lines[i][cut:]
    elif op == "label":  # a bad label
        bad = draw(st.sampled_from([b"nan", b"inf", b"-inf", b"", b"NA", b"x", b"1e999"]))
        lines[i] = bad + lines[i][len(TOKEN_SPLIT.split(lines[i])[0]) :]
    else:  # duplicate, drop or blank a line
        how = draw(st.sampled_from(["dup", "drop", "blank", "spaces"]))
        if how == "dup":
            lines.insert(i, lines[i])
        elif how == "drop":
            del lines[i]
        else:
            lines[i] = b"" if how == "blank" else b" \t "
    return b"\n".join(lines)


def repeat_an_index(draw, data):
    """A LibSVM index again on its line (before or after it), with another value."""
    pairs = list(re.finditer(rb"(?<![^ \t])([0-9]+):[^ \t\n]*", data))
    if not pairs:
        return data
    m = draw(st.sampled_from(pairs))
    again = m.group(1) + b":" + draw(st.sampled_from([b"1", b"0", b"-2.5"]))
    if draw(st.booleans()):
        return data[: m.end()] + b" " + again + data[m.end() :]
    return data[: m.start()] + again + b" " + data[m.start() :]


# ------------------------------------------------------------------ the property


# Every read stays below this peak of Python/numpy allocations (the files are tiny).
ALLOCATION_LIMIT = 64 << 20


@contextmanager
def bounded_allocations(limit=ALLOCATION_LIMIT):
    tracemalloc.start()
    try:
        yield
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < limit, f"a read allocated {peak / 2**20:.0f} MiB"


def check_read(path, options, n_lines, side_lines=None):
    """read_data's result is consistent, or it raised DataFormatError/ValueError naming
    ``path``.  Returns the result or the exception.  ``side_lines``: the number of lines
    of each side file (suffix -> lines) when the test wrote some (a broken link in
    place of one is "not found")."""
    errors = (DataFormatError, ValueError) + ((FileNotFoundError,) if side_lines else ())
    try:
        with bounded_allocations():
            out = read_data(path, **options)
    except errors as exc:
        msg = str(exc)
        shown = msg.replace(str(path), "FILE").split(": ", 1)[-1]
        event(f"{type(exc).__name__}: {re.sub(r'[0-9]+', 'N', shown)[:40]}")
        assert path.name in msg, f"{type(exc).__name__} without the file name: {msg}"
        found = re.search(r"(\.weight|\.init|\.query)?, line (\d+):", msg)
        if found:
            limit = n_lines if found.group(1) is None else (side_lines or {})[found.group(1)]
            assert 1 <= int(found.group(2)) <= limit + 1, msg
        return exc
    assert isinstance(out, LoadedData)
    event("read")
    check_loaded(out, options, side_files=side_lines is not None)
    return out


def check_loaded(out, options, side_files=False):
    X = out.X
    assert X.ndim == 2 and X.dtype == np.float64
    assert isinstance(X, np.ndarray) or sp.isspmatrix_csr(X)
    n = X.shape[0]
    if isinstance(X, np.ndarray):
        assert X.flags.c_contiguous
    else:
        X.check_format(full_check=True)
        assert X.has_canonical_format  # sorted, no index twice on a row
        assert X.shape[1] <= MAX_SPARSE_COLUMNS
        check_sparse_shape(X.shape)  # Dataset takes it
    if options.get("features_only"):
        assert out.label is None and out.weight is None and out.group is None
    if out.label is not None:
        assert out.label.shape == (n,) and out.label.dtype == np.float64
        assert np.isfinite(out.label).all()
    if out.weight is not None:
        assert out.weight.shape == (n,) and np.isfinite(out.weight).all()
        assert (out.weight >= 0).all()
    if out.group is not None:
        assert out.group.dtype == np.int64 and out.group.sum() == n and (out.group >= 0).all()
        assert side_files or (out.group > 0).all()  # a .query file may hold empty queries
    if out.feature_names is not None:
        assert len(out.feature_names) == X.shape[1]
    if out.init_score is not None:
        assert side_files and out.init_score.shape[0] == n
        assert out.init_score.ndim in (1, 2) and np.isfinite(out.init_score).all()


def write(tmp_path_factory, data, name, gz):
    path = tmp_path_factory.mktemp("fuzz") / name
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


@FUZZ
@given(base=csv_files(), data=st.data())
def test_corrupted_delimited_files(tmp_path_factory, base, data):
    text, options = base
    bad = corrupt(data.draw, text)
    gz = data.draw(st.integers(0, 9)) == 0
    fmt = data.draw(st.sampled_from(["auto"] * 6 + ["csv", "tsv", "delimited", "libsvm"]))
    path = write(tmp_path_factory, bad, "data.csv.gz" if gz else "data.csv", gz)
    check_read(path, {**options, "fmt": fmt}, filebytes.count_lines(bad) + 1)


@FUZZ
@given(base=libsvm_files(), data=st.data())
def test_corrupted_libsvm_files(tmp_path_factory, base, data):
    text, options = base
    bad = corrupt(data.draw, text)
    gz = data.draw(st.integers(0, 9)) == 0
    fmt = data.draw(st.sampled_from(["auto", "auto", "libsvm", "libsvm", "csv"]))
    path = write(tmp_path_factory, bad, "data.svm.gz" if gz else "data.svm", gz)
    check_read(path, {**options, "fmt": fmt}, filebytes.count_lines(bad) + 1)


@FUZZ
@given(
    base=st.one_of(csv_files(), libsvm_files()), token=st.sampled_from(BAD_TOKENS), data=st.data()
)
def test_one_bad_token_in_a_valid_file(tmp_path_factory, base, token, data):
    """Each bad token alone in an otherwise valid file: it cannot hide behind an
    earlier error."""
    text, options = base
    where = data.draw(st.sampled_from(["replace", "insert"]))
    parts = TOKEN_SPLIT.split(text)
    tokens = [i for i in range(0, len(parts), 2) if parts[i]]
    if where == "replace" and tokens:
        parts[data.draw(st.sampled_from(tokens))] = token
    else:
        cuts = list(range(1, len(parts), 2)) or [0]
        i = data.draw(st.sampled_from(cuts))
        parts.insert(i + 1, token + (parts[i] if i < len(parts) else b" "))
    bad = b"".join(parts)
    path = write(tmp_path_factory, bad, "one.txt", False)
    check_read(path, options, filebytes.count_lines(bad) + 1)


@FUZZ
@given(
    data=st.binary(max_size=300),
    fmt=st.sampled_from(["auto", "libsvm", "csv"]),
    gz_header=st.booleans(),
)
def test_binary_garbage(tmp_path_factory, data, fmt, gz_header):
    if gz_header:  # looks gzipped and is not (or is cut short)
        data = b"\x1f\x8b" + data
    path = write(tmp_path_factory, data, "junk.bin", False)
    check_read(path, {"fmt": fmt}, filebytes.count_lines(data) + 1)


def test_truncated_and_corrupt_gzip(tmp_path):
    whole = gzip.compress(b"1,2,3\n4,5,6\n" * 50)
    for i, data in enumerate(
        [
            whole[: len(whole) // 2],
            whole[:12],
            whole[:-4] + b"\0\0\0\0",
            whole[:20] + bytes(30) + whole[50:],
        ]
    ):
        path = tmp_path / f"d{i}.csv.gz"
        path.write_bytes(data)
        with pytest.raises(DataFormatError, match=f"d{i}.csv.gz"):
            read_data(path)


# ------------------------------------------------------------------ chunked == serial


def read_both(path, options, chunk_bytes):
    """(serial result or exception, chunked result or exception)."""
    saved = delimited._PARALLEL_MIN_BYTES, delimited._CHUNK_BYTES
    results = []
    try:
        for min_bytes, chunk in ((1 << 62, saved[1]), (0, chunk_bytes)):
            delimited._PARALLEL_MIN_BYTES, delimited._CHUNK_BYTES = min_bytes, chunk
            try:
                results.append(read_data(path, **options))
            except (DataFormatError, ValueError) as exc:
                results.append(exc)
    finally:
        delimited._PARALLEL_MIN_BYTES, delimited._CHUNK_BYTES = saved
    return results


def assert_same(a, b):
    if isinstance(a, Exception) or isinstance(b, Exception):
        assert type(a) is type(b) and str(a) == str(b), (a, b)
        return
    assert type(a.X) is type(b.X)  # a corrupted CSV may read as LibSVM
    np.testing.assert_array_equal(*(x.toarray() if sp.issparse(x) else x for x in (a.X, b.X)))
    for name in ("label", "weight", "group"):
        x, y = getattr(a, name), getattr(b, name)
        assert (x is None) == (y is None), name
        if x is not None:
            np.testing.assert_array_equal(x, y)
    assert a.feature_names == b.feature_names


@FUZZ
@given(base=csv_files(), data=st.data())
def test_chunked_reader_equals_serial_reader(tmp_path_factory, base, data):
    text, options = base
    # more rows, so that there are several chunks
    text = text + b"".join([filebytes._LINE_END.split(text, 1)[-1]] * data.draw(st.integers(0, 6)))
    if data.draw(st.booleans()):
        text = corrupt(data.draw, text)
    if data.draw(st.integers(0, 3)) == 0:  # as predict reads
        options = {**options, "features_only": True}
    path = write(tmp_path_factory, text, "data.csv", False)
    serial, chunked = read_both(path, options, data.draw(st.integers(1, 64)))
    assert_same(serial, chunked)
    check_read(path, options, filebytes.count_lines(text) + 1)


def test_chunked_reader_on_blank_lines_and_crlf(tmp_path):
    rows = [f"{i % 2},{i * 0.25},{'' if i % 7 == 0 else i}" for i in range(300)]
    for i in (0, 5, 6, 150, 299):
        rows.insert(i, "" if i % 2 else " \t")
    for eol in ("\n", "\r\n"):
        path = tmp_path / "d.csv"
        path.write_text(eol.join(rows) + eol + eol)
        serial, chunked = read_both(path, {}, 100)
        assert_same(serial, chunked)
        assert serial.X.shape == (300, 2)


# ------------------------------------------------------------------ side files


@contextmanager
def no_blocking(seconds=30):
    """Opening a FIFO blocks until a writer comes: fail the example instead."""

    def fail(*_):
        raise AssertionError(f"a read blocked for {seconds} s")

    old = signal.signal(signal.SIGALRM, fail)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


SIDE_SUFFIXES = (".weight", ".init", ".query")
SIDE_BAD = [
    b"nan",
    b"NaN",
    b"inf",
    b"-inf",
    b"+inf",
    b"1e999",
    b"-1e999",
    b"-1",
    b"-0.5",
    b"abc",
    b"",
    b"NA",
    b"1.5",
    b"1 2",
    b"0",
    b"-0",
    b"\xff",
    b"1,2",
    b"1e",
    b"0x1",
]
SIDE_KINDS = ["absent", "valid", "valid", "bad", "bad", "bad", "dir", "fifo", "link"]


@st.composite
def side_files(draw, suffix, n_rows):
    """(kind, bytes) of ``<data><suffix>`` for ``n_rows`` rows: absent, valid, with bad
    values or lines, or a directory / FIFO / broken link in its place."""
    kind = draw(st.sampled_from(SIDE_KINDS))
    if kind not in ("valid", "bad"):
        return kind, b""
    if suffix == ".query":
        cuts = sorted(draw(st.lists(st.integers(0, n_rows), max_size=4)))
        lines = [str(b - a) for a, b in zip([0] + cuts, cuts + [n_rows], strict=True)]
    elif suffix == ".init":
        k = draw(st.sampled_from([1, 1, 3]))
        lines = [" ".join(draw(numbers) for _ in range(k)) for _ in range(n_rows)]
    else:
        lines = [repr(draw(st.floats(0, 1e6))) for _ in range(n_rows)]
    content = "".join(line + "\n" for line in lines).encode()
    if kind == "bad":
        if content and draw(st.booleans()):  # one bad value
            parts = TOKEN_SPLIT.split(content)
            i = draw(st.sampled_from([i for i in range(0, len(parts), 2) if parts[i]] or [0]))
            parts[i] = draw(st.sampled_from(SIDE_BAD))
            content = b"".join(parts)
        else:
            content = corrupt(draw, content)
    return kind, content


def make_side_file(side, kind, content):
    if kind == "dir":
        side.mkdir()
    elif kind == "fifo":
        os.mkfifo(side)
    elif kind == "link":
        side.symlink_to(side.with_name("gone"))
    elif kind != "absent":
        side.write_bytes(content)


@FUZZ
@given(base=st.one_of(csv_files(), libsvm_files()), data=st.data())
def test_side_files_with_bad_values_or_of_the_wrong_kind(tmp_path_factory, base, data):
    """NaN/inf/negative values, wrong lengths, garbage, or not a regular file: a
    LoadedData with finite side values, or an error naming the file (and its line)."""
    text, options = base
    if data.draw(st.integers(0, 4)) == 0:
        text = corrupt(data.draw, text)
    path = write(tmp_path_factory, text, "data.txt", False)
    try:
        n_rows, clean = read_data(path, **options, side_files=False).X.shape[0], True
    except (DataFormatError, ValueError):
        n_rows, clean = data.draw(st.integers(0, 7)), False
    side_lines, kinds = {}, []
    for suffix in SIDE_SUFFIXES:
        kind, content = data.draw(side_files(suffix, n_rows))
        make_side_file(path.with_name(path.name + suffix), kind, content)
        side_lines[suffix] = filebytes.count_lines(content) + 1
        kinds.append(kind)
    with no_blocking():
        out = check_read(path, options, filebytes.count_lines(text) + 1, side_lines)
    if clean and set(kinds) <= {"absent", "valid"}:
        assert isinstance(out, LoadedData), out  # valid side files always read


# ------------------------------------------------------------------ prediction


LABEL_BAD = [
    b"abc",
    b"nan",
    b"NaN",
    b"inf",
    b"-inf",
    b"1e999",
    b"NA",
    b"x1",
    b"\xff",
    b"1_0",
    b"--1",
    b"null",
    b"0x10",
    b"9" * 400,
    b"\xc3\x28",
    b"1e",
]


def _file_column(spec, label_idx):
    return None if spec is None else int(spec) + (label_idx is not None and int(spec) >= label_idx)


def spoil_unused_fields(draw, text, options):
    """``text`` with bad tokens in the fields prediction does not read: the label,
    weight, query and ignored columns (delimited), labels and qids (LibSVM)."""
    if options.get("zero_based") is not None:  # LibSVM
        return spoil_libsvm_labels(draw, text)
    sep = b"\t" if b"\t" in text else b"," if b"," in text else b" "
    label = options.get("label_column", "0")
    label = None if label is None else int(label)
    cols = {
        label,
        _file_column(options.get("weight_column"), label),
        _file_column(options.get("group_column"), label),
        _file_column(options.get("ignore_columns"), label),
    } - {None}
    bad = LABEL_BAD + ([b""] if sep != b" " else [])  # an empty field: not in whitespace text
    lines, ends = split_lines(text)
    for i in range(1 if options.get("header") else 0, len(lines)):
        fields = lines[i].split(sep)
        if not lines[i].strip():
            continue
        for c in cols:
            if c < len(fields) and draw(st.integers(0, 2)) == 0:
                cr = b"\r" if fields[c].endswith(b"\r") else b""
                fields[c] = draw(st.sampled_from(bad)) + cr
        lines[i] = sep.join(fields)
    return join_lines(lines, ends)


def split_lines(text):
    """(lines, their ends): a line ends at '\\r\\n', '\\n' or a lone '\\r'."""
    parts = re.split(rb"(\r\n|\n|\r)", text)
    return parts[0::2], parts[1::2]


def join_lines(lines, ends):
    return b"".join(line + end for line, end in zip(lines, [*ends, b""], strict=True))


def spoil_libsvm_labels(draw, text):
    lines, ends = split_lines(text)
    for i, line in enumerate(lines):
        body = line.split(b"#", 1)[0]
        tokens = body.split()
        if not tokens or draw(st.integers(0, 1)):
            continue
        how = draw(st.sampled_from(["label", "label", "drop", "qid"]))
        if how == "label":
            tokens[0] = draw(st.sampled_from(LABEL_BAD))
        elif how == "drop" and len(tokens) > 1:  # a line without label
            tokens = tokens[1:]
        elif how == "qid" and len(tokens) > 1 and tokens[1].startswith(b"qid:"):
            tokens[1] = draw(st.sampled_from([b"qid:x", b"qid:", b"qid:1.5", b"qid:" + b"9" * 30]))
        lines[i] = b" ".join(tokens) + line[len(body) :]
    return join_lines(lines, ends)


@FUZZ
@given(base=st.one_of(csv_files(), libsvm_files()), data=st.data())
def test_predict_reads_the_features_whatever_the_labels(tmp_path_factory, base, data):
    """features_only (what ``dgbdt predict`` reads with): bad labels, weights, query ids
    and ignored fields change nothing; the features equal those of the clean file."""
    text, options = base
    libsvm = options.get("zero_based") is not None  # a LibSVM file of comments only
    options = {**options, "features_only": True, "fmt": "libsvm" if libsvm else "auto"}
    clean = write(tmp_path_factory, text, "clean.txt", False)
    try:
        expected = read_data(clean, **options)
    except (DataFormatError, ValueError):
        expected = None  # an index beyond n_features: no clean file to match
    bad = spoil_unused_fields(data.draw, text, options)
    path = write(tmp_path_factory, bad, "predict.txt", False)
    got = check_read(path, options, filebytes.count_lines(bad) + 1)
    if expected is None:
        return
    assert isinstance(got, LoadedData), got
    assert type(got.X) is type(expected.X) and got.X.shape == expected.X.shape
    np.testing.assert_array_equal(
        got.X.toarray() if sp.issparse(got.X) else got.X,
        expected.X.toarray() if sp.issparse(expected.X) else expected.X,
    )
    assert got.feature_names == expected.feature_names


@FUZZ
@given(base=st.one_of(csv_files(), libsvm_files()), data=st.data())
def test_corrupted_files_read_for_prediction(tmp_path_factory, base, data):
    text, options = base
    bad = corrupt(data.draw, spoil_unused_fields(data.draw, text, options))
    path = write(tmp_path_factory, bad, "predict.txt", False)
    check_read(path, {**options, "features_only": True}, filebytes.count_lines(bad) + 1)
