"""Tests of dgbdt.io: CSV/TSV/whitespace and LibSVM text files, side files, errors;
a column in two roles, BOMs in side files, nan/inf spellings and ``\\r`` line ends."""

import gzip

import numpy as np
import pytest
import scipy.sparse as sp
from dgbdt.native.text import lone_cr_count
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from dgbdt.cli.commands import run
from dgbdt.io import DataFormatError, LoadedData, count_lines, read_data, split_parts


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def assert_error(exc_info, path, lineno, text):
    msg = str(exc_info.value)
    assert isinstance(exc_info.value, DataFormatError)
    assert str(path).split("/")[-1] in msg, msg
    assert f"line {lineno}" in msg, msg
    assert text in msg, msg


# ------------------------------------------------------------------ delimited


def test_csv_without_header(tmp_path):
    p = write(tmp_path, "a.csv", "1,0.5,2\n0,1.5,-3\n")
    d = read_data(p)
    assert isinstance(d, LoadedData)
    np.testing.assert_array_equal(d.label, [1, 0])
    np.testing.assert_array_equal(d.X, [[0.5, 2], [1.5, -3]])
    assert d.X.dtype == np.float64 and d.feature_names is None
    assert d.weight is None and d.group is None and d.init_score is None


def test_csv_with_header_and_label_by_name(tmp_path):
    p = write(tmp_path, "a.csv", "f1,y,f2\n0.5,1,2\n1.5,0,-3\n")
    d = read_data(p, header=True, label_column="name:y")
    np.testing.assert_array_equal(d.label, [1, 0])
    np.testing.assert_array_equal(d.X, [[0.5, 2], [1.5, -3]])
    assert d.feature_names == ["f1", "f2"]
    d = read_data(p, header=True, label_column="1")
    np.testing.assert_array_equal(d.label, [1, 0])
    with pytest.raises(ValueError, match="header"):
        read_data(p, label_column="name:y")


def test_tsv_and_whitespace(tmp_path):
    p = write(tmp_path, "a.tsv", "1\t0.5\t2\n0\t1.5\t-3\n")
    np.testing.assert_array_equal(read_data(p).X, [[0.5, 2], [1.5, -3]])
    p = tmp_path / "crlf.csv"
    p.write_bytes(b"1,0.5,2\r\n0,,-3\r\n")
    d = read_data(p)
    assert d.X[0, 1] == 2 and np.isnan(d.X[1, 0]) and d.X[1, 1] == -3
    p = write(tmp_path, "a.txt", "1  0.5 2\n 0 1.5   -3\n\n")
    d = read_data(p)
    np.testing.assert_array_equal(d.X, [[0.5, 2], [1.5, -3]])
    np.testing.assert_array_equal(d.label, [1, 0])


def test_label_by_index_weight_group_ignore_columns(tmp_path):
    # columns: f0, label, w, q, junk, f1
    rows = ["0.1,1,2.0,7,99,5", "0.2,0,1.0,7,99,6", "0.3,1,0.5,3,99,7"]
    p = write(tmp_path, "a.csv", "\n".join(rows) + "\n")
    # LightGBM: integer indices of weight/group/ignore do not count the label column
    d = read_data(p, label_column="1", weight_column="1", group_column="2", ignore_columns=[3])
    np.testing.assert_array_equal(d.label, [1, 0, 1])
    np.testing.assert_array_equal(d.weight, [2, 1, 0.5])
    np.testing.assert_array_equal(d.group, [2, 1])
    np.testing.assert_array_equal(d.X, [[0.1, 5], [0.2, 6], [0.3, 7]])
    h = write(tmp_path, "h.csv", "f0,y,w,q,junk,f1\n" + "\n".join(rows) + "\n")
    d2 = read_data(
        h,
        header=True,
        label_column="name:y",
        weight_column="name:w",
        group_column="name:q",
        ignore_columns="name:junk",
    )
    np.testing.assert_array_equal(d2.X, d.X)
    np.testing.assert_array_equal(d2.weight, d.weight)
    np.testing.assert_array_equal(d2.group, d.group)
    assert d2.feature_names == ["f0", "f1"]


def test_group_column_not_contiguous(tmp_path):
    p = write(tmp_path, "q.csv", "1,1,0.5\n0,2,0.5\n1,1,0.5\n")
    with pytest.raises(DataFormatError) as e:
        read_data(p, group_column="0")
    assert_error(e, "q.csv", 3, "1")


def test_missing_values(tmp_path):
    p = write(tmp_path, "m.csv", "1,,2\n0,NA,nan\n1,NaN,3\n")
    d = read_data(p)
    assert np.isnan(d.X[0, 0]) and d.X[0, 1] == 2
    assert np.isnan(d.X[1]).all() and np.isnan(d.X[2, 0]) and d.X[2, 1] == 3


def test_gzip(tmp_path):
    p = tmp_path / "a.csv.gz"
    p.write_bytes(gzip.compress(b"1,0.5,2\n0,1.5,-3\n"))
    np.testing.assert_array_equal(read_data(str(p)).X, [[0.5, 2], [1.5, -3]])
    p = tmp_path / "a.svm.gz"
    p.write_bytes(gzip.compress(b"1 0:0.5 2:2\n0 1:3\n"))
    np.testing.assert_array_equal(read_data(str(p)).X.toarray(), [[0.5, 0, 2], [0, 3, 0]])


@pytest.mark.parametrize(
    "text, lineno, bad",
    [
        ("1,2,3\n4,5\n", 2, "4,5"),  # too few fields
        ("1,2,3\n4,5,6,7\n", 2, "4,5,6,7"),  # too many fields
        ("1,2,3\n\n4,abc,6\n", 3, "abc"),  # text where a number belongs (blank line counted)
        ("1,2,3\n,5,6\n", 2, "5,6"),  # missing label
        ("1,2,3\nnan,5,6\n", 2, "nan"),  # NaN label
        ("1,2,3\ninf,5,6\n", 2, "inf"),  # inf label
    ],
)
def test_delimited_errors(tmp_path, text, lineno, bad):
    p = write(tmp_path, "bad.csv", text)
    with pytest.raises(DataFormatError) as e:
        read_data(p)
    assert_error(e, "bad.csv", lineno, bad)


def test_delimited_error_counts_header_line(tmp_path):
    p = write(tmp_path, "bad.tsv", "y\ta\tb\n1\t2\t3\n0\t2\tx7\n")
    with pytest.raises(DataFormatError) as e:
        read_data(p, header=True)
    assert_error(e, "bad.tsv", 3, "x7")


def test_missing_file(tmp_path):
    p = str(tmp_path / "nope.csv")
    with pytest.raises(FileNotFoundError, match="nope.csv"):
        read_data(p)


# ------------------------------------------------------------------ LibSVM


def test_libsvm_zero_based_comments_empty_rows_explicit_zeros(tmp_path):
    p = write(tmp_path, "a.svm", "# a comment\n1 0:0.5 3:0\n0\n\n2 2:-1 # tail\n")
    d = read_data(p)
    assert sp.isspmatrix_csr(d.X) and d.X.dtype == np.float64
    assert d.X.shape == (3, 4)
    np.testing.assert_array_equal(d.label, [1, 0, 2])
    np.testing.assert_array_equal(d.X.toarray(), [[0.5, 0, 0, 0], [0, 0, 0, 0], [0, 0, -1, 0]])
    assert d.X.nnz == 3  # the explicit zero is kept
    assert read_data(p, n_features=10).X.shape == (3, 10)


def test_libsvm_one_based(tmp_path):
    p = write(tmp_path, "a.svm", "1 1:0.5 3:2\n0 2:1\n")
    d = read_data(p, zero_based=False)
    np.testing.assert_array_equal(d.X.toarray(), [[0.5, 0, 2], [0, 1, 0]])


def test_libsvm_qid(tmp_path):
    p = write(tmp_path, "r.svm", "2 qid:5 0:1\n1 qid:5 1:1\n0 qid:9 0:2\n1 qid:3 1:1\n")
    d = read_data(p)
    np.testing.assert_array_equal(d.group, [2, 1, 1])
    np.testing.assert_array_equal(d.label, [2, 1, 0, 1])
    p = write(tmp_path, "r2.svm", "2 qid:5 0:1\n1 qid:9 1:1\n0 qid:5 0:2\n")
    with pytest.raises(DataFormatError) as e:
        read_data(p)
    assert_error(e, "r2.svm", 3, "qid:5")


def test_libsvm_unsorted_indices_parse(tmp_path):
    p = write(tmp_path, "u.svm", "1 2:1 0:3\n")
    np.testing.assert_array_equal(read_data(p).X.toarray(), [[3, 0, 1]])


@pytest.mark.parametrize(
    "text, lineno, bad, kw",
    [
        ("1 0:1\n0 1:x\n", 2, "1:x", {}),  # unparseable value
        ("1 0:1\n0 1-2\n", 2, "1-2", {}),  # no colon
        ("1 0:1\n\n0 -1:2\n", 3, "-1:2", {}),  # negative index
        ("1 1:1\n0 0:2\n", 2, "0:2", {"zero_based": False}),  # index 0 in one-based file
        ("1 0:1\n0:1 1:2\n", 2, "0:1", {}),  # missing label
        ("1 0:1\n# c\nnan 1:2\n", 3, "nan", {}),  # NaN label
        ("1 0:1\n-inf 1:2\n", 2, "-inf", {}),  # inf label
        ("1 0:1\nabc 1:2\n", 2, "abc", {}),  # text label
        ("1 0:1\n1 5:2\n", 2, "5:2", {"n_features": 3}),  # beyond n_features
    ],
)
def test_libsvm_errors(tmp_path, text, lineno, bad, kw):
    p = write(tmp_path, "bad.svm", text)
    with pytest.raises(DataFormatError) as e:
        read_data(p, fmt="libsvm", **kw)
    assert_error(e, "bad.svm", lineno, bad)


# ------------------------------------------------------------------ side files


def test_side_files(tmp_path):
    p = write(tmp_path, "d.csv", "1,0.5\n0,1.5\n1,2.5\n")
    write(tmp_path, "d.csv.weight", "1\n2\n0.5\n")
    write(tmp_path, "d.csv.init", "0.1\n0.2\n0.3\n")
    write(tmp_path, "d.csv.query", "2\n1\n")
    d = read_data(p)
    np.testing.assert_array_equal(d.weight, [1, 2, 0.5])
    np.testing.assert_array_equal(d.init_score, [0.1, 0.2, 0.3])
    np.testing.assert_array_equal(d.group, [2, 1])
    write(tmp_path, "d.csv.init", "0.1 1 2\n0.2 1 2\n0.3 1 2\n")  # multiclass init
    assert read_data(p).init_score.shape == (3, 3)


def test_side_file_column_wins(tmp_path):
    p = write(tmp_path, "d.csv", "1,7,0.5\n0,8,1.5\n")
    write(tmp_path, "d.csv.weight", "1\n2\n")
    np.testing.assert_array_equal(read_data(p, weight_column="0").weight, [7, 8])


@pytest.mark.parametrize(
    "suffix, text",
    [
        (".weight", "1\n2\n"),
        (".init", "1\n2\n3\n4\n"),
        (".query", "2\n2\n"),
    ],
)
def test_side_file_wrong_length(tmp_path, suffix, text):
    p = write(tmp_path, "d.csv", "1,0.5\n0,1.5\n1,2.5\n")
    write(tmp_path, "d.csv" + suffix, text)
    with pytest.raises(DataFormatError, match="d.csv" + suffix.replace(".", r"\.")):
        read_data(p)


def test_side_file_bad_value(tmp_path):
    p = write(tmp_path, "d.csv", "1,0.5\n0,1.5\n")
    write(tmp_path, "d.csv.weight", "1\nheavy\n")
    with pytest.raises(DataFormatError) as e:
        read_data(p)
    assert_error(e, "d.csv.weight", 2, "heavy")


# ------------------------------------------------------------------ shared datasets


def test_shared_binary_train(shared_datasets):
    d = read_data(shared_datasets / "lightgbm" / "binary.train")
    assert d.X.shape == (7000, 28) and d.label.shape == (7000,)
    assert d.weight is not None and d.weight.shape == (7000,)
    assert set(np.unique(d.label)) <= {0.0, 1.0}


def test_shared_rank_train(shared_datasets):
    d = read_data(shared_datasets / "lightgbm" / "rank.train")
    assert sp.isspmatrix_csr(d.X) and d.X.shape[1] == 301
    assert len(d.group) == 201 and d.group.sum() == d.X.shape[0]


def test_shared_agaricus(shared_datasets):
    from sklearn.datasets import load_svmlight_file

    path = shared_datasets / "xgboost" / "agaricus.txt.train"
    d = read_data(path, zero_based=False)
    assert d.X.shape == (6513, 126)
    X, y = load_svmlight_file(str(path), zero_based=False, n_features=126)
    assert (d.X != X).nnz == 0
    np.testing.assert_array_equal(d.label, y)


# ------------------------------------------------------------------ round trips

finite = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False, width=64)
with_nan = st.one_of(finite, st.just(np.nan))


@settings(deadline=None, max_examples=30)
@given(
    X=hnp.arrays(
        np.float64, hnp.array_shapes(min_dims=2, max_dims=2, max_side=6), elements=with_nan
    ),
    sep=st.sampled_from([",", "\t", " "]),
    header=st.booleans(),
    data=st.data(),
)
def test_roundtrip_delimited(tmp_path_factory, X, sep, header, data):
    y = data.draw(hnp.arrays(np.float64, X.shape[0], elements=finite))
    path = tmp_path_factory.mktemp("rt") / "d.txt"
    lines = []
    if header:
        lines.append(sep.join(["label"] + [f"f{j}" for j in range(X.shape[1])]))
    na = "NA" if sep == " " else ""  # an empty field cannot exist between blanks
    for yi, row in zip(y, X, strict=True):
        lines.append(
            sep.join([repr(float(yi))] + [na if np.isnan(v) else repr(float(v)) for v in row])
        )
    path.write_text("\n".join(lines) + "\n")
    d = read_data(path, header=header)
    np.testing.assert_array_equal(d.label, y)
    np.testing.assert_array_equal(d.X, X)
    assert d.feature_names == ([f"f{j}" for j in range(X.shape[1])] if header else None)


@settings(deadline=None, max_examples=30)
@given(
    X=hnp.arrays(
        np.float64,
        hnp.array_shapes(min_dims=2, max_dims=2, max_side=6),
        elements=st.one_of(st.just(0.0), finite),
    ),
    zero_based=st.booleans(),
    qid=st.booleans(),
    data=st.data(),
)
def test_roundtrip_libsvm(tmp_path_factory, X, zero_based, qid, data):
    y = data.draw(hnp.arrays(np.float64, X.shape[0], elements=finite))
    path = tmp_path_factory.mktemp("rt") / "d.svm"
    off = 0 if zero_based else 1
    lines = []
    for i, (yi, row) in enumerate(zip(y, X, strict=True)):
        toks = [repr(float(yi))] + ([f"qid:{i // 2}"] if qid else [])
        toks += [f"{j + off}:{float(v)!r}" for j, v in enumerate(row) if v != 0]
        lines.append(" ".join(toks))
    path.write_text("\n".join(lines) + "\n")
    d = read_data(path, zero_based=zero_based, n_features=X.shape[1], fmt="libsvm")
    np.testing.assert_array_equal(d.X.toarray(), X)
    np.testing.assert_array_equal(d.label, y)
    if qid:
        n = X.shape[0]
        np.testing.assert_array_equal(d.group, [2] * (n // 2) + [1] * (n % 2))


# --------------------------------------------------------------------------------------
# parts: every line read by exactly one part, line numbers counted from the file start


def _read_in_parts(path, n_parts, **kw):
    """Read ``path`` as ``n_parts`` ranks would: part by part, numbering lines globally."""
    from dgbdt.io import count_lines, parse_text, read_header_line, read_part, sniff_format

    fmt, sep = sniff_format(path, "auto", kw.get("header", False))
    header_text = read_header_line(path) if kw.get("header") else None
    parts, first_line = [], 1
    for p in range(n_parts):
        data = read_part(path, p, n_parts)
        parts.append(
            parse_text(
                path,
                data,
                fmt=fmt,
                sep=sep,
                first_line=first_line,
                header_text=header_text if p > 0 else None,
                **kw,
            )
        )
        first_line += count_lines(data)
    return parts


@pytest.mark.parametrize("n_parts", [1, 2, 3, 7, 40])
@pytest.mark.parametrize("header", [False, True])
def test_parts_cover_every_line_once(tmp_path, n_parts, header):
    rng = np.random.default_rng(n_parts)
    X = rng.normal(size=(25, 4)).round(3)
    text = ("y,a,b,c,d\n" if header else "") + "".join(
        f"{i % 3}," + ",".join(map(str, row)) + "\n" for i, row in enumerate(X)
    )
    path = tmp_path / "d.csv"
    path.write_text(text)
    parts = _read_in_parts(path, n_parts, header=header)
    whole = read_data(path, header=header)
    got = np.vstack([p.X.reshape(-1, 4) for p in parts])
    np.testing.assert_array_equal(got, whole.X)
    np.testing.assert_array_equal(np.concatenate([p.label for p in parts]), whole.label)


def test_parts_of_libsvm_and_split_parts_agree(tmp_path):
    from dgbdt.io import read_part, split_parts

    text = "".join(f"{i % 2} {i % 5}:{i} 7:1.5\n" for i in range(30)) + "1 2:3"  # no final newline
    path = tmp_path / "d.svm"
    path.write_text(text)
    for n_parts in (1, 2, 3, 5):
        in_file = [read_part(path, p, n_parts) for p in range(n_parts)]
        assert in_file == split_parts(text.encode(), n_parts)
        assert b"".join(in_file) == text.encode()
    parts = _read_in_parts(path, 3)
    assert sum(p.X.shape[0] for p in parts) == 31


def test_error_in_a_part_names_the_file_line(tmp_path):
    lines = [f"{i % 2},{i},{i * 2}" for i in range(40)]
    lines[33] = "1,2,oops"
    path = tmp_path / "d.csv"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(DataFormatError, match=r"d.csv, line 34: cannot parse number 'oops'"):
        _read_in_parts(path, 3)


def test_keep_features_reads_a_block_of_columns(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("".join(f"{i % 2},{i},{i * 2},{i * 3},{i * 4}\n" for i in range(10)))
    whole = read_data(path)
    block = read_data(path, keep_features=[1, 3])
    np.testing.assert_array_equal(block.X, whole.X[:, [1, 3]])
    np.testing.assert_array_equal(block.label, whole.label)


# --------------------------------------------------------------------------------------
# hardening: inputs that once escaped as other exceptions or vague messages


def test_corrupt_gzip_is_a_data_format_error(tmp_path):
    p = tmp_path / "a.csv.gz"
    p.write_bytes(gzip.compress(b"1,2\n3,4\n")[:15])
    with pytest.raises(DataFormatError, match="a.csv.gz: not a valid gzip file"):
        read_data(p)
    p.write_bytes(b"\x1f\x8b\x07garbage")
    with pytest.raises(DataFormatError, match="a.csv.gz: not a valid gzip file"):
        read_data(p)


@pytest.mark.parametrize(
    "text, lineno, bad",
    [
        ("1 0:1\n1 99999999999999999999999999:1\n", 2, "99999999999999999999999999:1"),
        ("1 0:1\n1 2147483647:1\n", 2, "2147483647:1"),  # columns fit int32
        ("1 qid:1 0:1\n1 qid:" + "9" * 30 + " 0:1\n", 2, "qid:" + "9" * 30),
        ("1 qid:1 0:1\n1 0:1\n", 2, "1 0:1"),  # qid missing
        ("1 0:1\n1 qid:3 0:1\n", 2, "qid:3"),  # qid after rows without
    ],
)
def test_libsvm_index_and_qid_limits(tmp_path, text, lineno, bad):
    p = write(tmp_path, "big.svm", text)
    with pytest.raises(DataFormatError) as e:
        read_data(p)
    assert_error(e, "big.svm", lineno, bad)


def test_libsvm_qid_rows_read_through_the_scan(tmp_path):
    # scikit-learn skips the qid tokens; the Numba scan collects them
    lines = [f"{i % 3} qid:{i // 4} {i % 5}:1.5" for i in range(2000)]
    p = write(tmp_path, "q.svm", "\n".join(lines) + "\n# end\n")
    d = read_data(p)
    np.testing.assert_array_equal(d.group, [4] * 500)
    np.testing.assert_array_equal(d.label, [i % 3 for i in range(2000)])


def test_byte_order_mark(tmp_path):
    p = tmp_path / "bom.csv"
    p.write_bytes(b"\xef\xbb\xbfy,a\n1,2\n0,3\n")
    d = read_data(p, header=True, label_column="name:y")
    assert d.feature_names == ["a"]
    np.testing.assert_array_equal(d.X, [[2], [3]])
    p.write_bytes(b"\xef\xbb\xbf")
    assert read_data(p).X.shape[0] == 0
    p = tmp_path / "bom.svm"
    p.write_bytes(b"\xef\xbb\xbf1 0:2\n")
    np.testing.assert_array_equal(read_data(p).label, [1])


@pytest.mark.parametrize(
    "text, lineno, bad",
    [
        ("1,2\r3,x\r5,6\n", 2, "cannot parse number 'x'"),  # a lone '\r' ends line 1
        ("1,2\n3,1_0\n", 2, "cannot parse number '1_0'"),  # Python's float takes it
        ("1,2\n3, \n", 2, "cannot parse number ' '"),
        ("1,2\n3,nAnx\n", 2, "cannot parse number 'nAnx'"),
        ("1,2\n3,4\x00\n", 2, "cannot parse number '4\\x00'"),
        ("1,2\n3,\xff\n", 2, "cannot parse number"),
    ],
)
def test_delimited_errors_name_the_line(tmp_path, text, lineno, bad):
    p = tmp_path / "bad.csv"
    p.write_bytes(text.encode("latin-1"))
    with pytest.raises(DataFormatError) as e:
        read_data(p)
    assert_error(e, "bad.csv", lineno, bad)


def test_whitespace_only_lines_are_blank(tmp_path):
    p = write(tmp_path, "w.csv", "1,2\n  \n\t\n3,4\n \r\n")
    np.testing.assert_array_equal(read_data(p).X, [[2], [4]])


def test_keep_features_out_of_range(tmp_path):
    p = write(tmp_path, "d.csv", "1,2,3\n")
    with pytest.raises(ValueError, match="keep_features"):
        read_data(p, keep_features=[2])
    p = write(tmp_path, "d.svm", "1 0:1 1:2\n")
    with pytest.raises(ValueError, match="keep_features"):
        read_data(p, keep_features=[-1])


def test_long_header_line_read_whole(tmp_path):
    from dgbdt.io import read_header_line

    names = [f"feature_with_a_long_name_{j}" for j in range(3000)]  # > 64 KiB
    p = write(tmp_path, "wide.csv", ",".join(["y"] + names) + "\n" + ",".join(["1"] * 3001) + "\n")
    assert read_header_line(p).split(",")[-1] == names[-1]
    assert read_data(p, header=True).feature_names == names


@pytest.mark.parametrize("chunk_bytes", [1, 37, 1000])
def test_chunked_reader_equals_serial_reader(tmp_path, monkeypatch, chunk_bytes):
    from dgbdt.io import delimited as readers

    rng = np.random.default_rng(chunk_bytes)
    X = rng.normal(size=(200, 5)).round(4)
    X[rng.random(X.shape) < 0.1] = np.nan
    rows = [
        f"{i % 2},{i // 10},{w:.3f}," + ",".join("" if np.isnan(v) else repr(float(v)) for v in x)
        for i, (x, w) in enumerate(zip(X, rng.uniform(0.5, 2, 200), strict=True))
    ]
    rows[50:50] = ["", " "]
    p = write(tmp_path, "c.csv", "y,q,w,a,b,c,d,e\n" + "\r\n".join(rows) + "\n")
    kw = {
        "header": True,
        "group_column": "name:q",
        "weight_column": "name:w",
        "ignore_columns": "name:b",
    }
    serial = read_data(p, **kw)
    monkeypatch.setattr(readers, "_PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(readers, "_CHUNK_BYTES", chunk_bytes)
    chunked = read_data(p, **kw)
    assert chunked.X.flags.c_contiguous and chunked.X.shape == (200, 4)
    for name in ("X", "label", "weight", "group"):
        np.testing.assert_array_equal(getattr(chunked, name), getattr(serial, name))
    assert chunked.feature_names == serial.feature_names == ["a", "c", "d", "e"]
    np.testing.assert_array_equal(serial.X, X[:, [0, 2, 3, 4]])


HEADER = "f0,f1,w,y\n"
ROWS = "".join(f"{i * 0.5},{i // 10},{1 + i % 2},{i % 2}\n" for i in range(30))


def write_raw(tmp_path, name, content):
    """Write ``content`` (bytes, or text as UTF-8) as it is; return the path."""
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return path


# ------------------------------------------------------------------ a column in two roles


@pytest.mark.parametrize(
    "options, words",
    [
        (
            {"weight_column": "name:y"},
            ["weight_column='name:y'", "label_column='name:y'", "is the label column"],
        ),
        ({"group_column": "name:y"}, ["group_column='name:y'", "label_column='name:y'"]),
        ({"ignore_columns": "name:f0,y"}, ["ignore_columns='name:f0,y'", "label_column='name:y'"]),
        (
            {"weight_column": "name:w", "group_column": "name:w"},
            ["group_column='name:w'", "is the weight column", "weight_column='name:w'"],
        ),
        (
            {"weight_column": "1", "group_column": "1"},  # by index: the file's column 1
            ["group_column='1' ('f1')", "weight_column='1' ('f1')"],
        ),
    ],
)
def test_a_column_in_two_roles_is_refused(tmp_path, options, words):
    path = write_raw(tmp_path, "hdr.csv", HEADER + ROWS)
    with pytest.raises(ValueError) as info:
        read_data(path, header=True, label_column="name:y", **options)
    for word in [*words, "hdr.csv"]:
        assert word in str(info.value)


def test_label_as_weight_is_refused_on_the_command_line(tmp_path, capsys):
    # LightGBM: "Could not find weight column y" (the label is no longer a column)
    path = write_raw(tmp_path, "hdr.csv", HEADER + ROWS)
    model = tmp_path / "m.json"
    assert (
        run(
            [
                "train",
                f"data={path}",
                "header=true",
                "label_column=name:y",
                "weight_column=name:y",
                f"output_model={model}",
                "verbosity=-1",
            ]
        )
        == 1
    )
    err = capsys.readouterr().err
    assert "weight_column='name:y' is the label column label_column='name:y'" in err
    assert not model.exists()


def test_distinct_roles_still_read(tmp_path):
    path = write_raw(tmp_path, "hdr.csv", HEADER + ROWS)
    out = read_data(
        path,
        header=True,
        label_column="name:y",
        weight_column="name:w",
        group_column="name:f1",
        ignore_columns="name:w",
    )  # ignoring w twice is fine
    assert out.feature_names == ["f0"] and out.weight is not None and out.group is not None


@pytest.mark.parametrize(
    "options, key, message",
    [
        (
            {"ignore_columns": "3"},
            "ignore_columns",
            "ignore_columns: column 3 does not exist, d.csv has 3 columns besides the label column "
            "(indices 0 to 2; ",
        ),
        (
            {"weight_column": "5"},
            "weight_column",
            "weight_column: column 5 does not exist, d.csv has 3 columns besides the label column "
            "(indices 0 to 2; ",
        ),
        (
            {"label_column": "4"},
            "label_column",
            "label_column: column 4 does not exist, d.csv has 4 columns (indices 0 to 3)",
        ),
        (
            {"label_column": None, "ignore_columns": "4"},
            "ignore_columns",
            "ignore_columns: column 4 does not exist, d.csv has 4 columns (indices 0 to 3)",
        ),
        (
            {"label_column": "2", "ignore_columns": "3"},
            "ignore_columns",  # the label in the middle
            "ignore_columns: column 3 does not exist, d.csv has 3 columns besides the label column "
            "(indices 0 to 2; ",
        ),
    ],
)
def test_a_column_index_out_of_range_is_counted_as_the_key_counts(tmp_path, options, key, message):
    path = write_raw(tmp_path, "d.csv", ROWS)
    with pytest.raises(ValueError) as info:
        read_data(path, **options)
    assert message in str(info.value).replace(str(tmp_path) + "/", "")
    last = int(message.split("indices 0 to ")[1][0])
    read_data(path, **{**options, key: str(last)})  # the last index it allows reads


# ------------------------------------------------------------------ line ends, BOMs, NaN spellings


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=40).map(lambda b: b.replace(b"x", b"\r").replace(b"y", b"\n")))
def test_lone_cr_count_against_its_twin(data):
    twin = sum(
        1 for i, c in enumerate(data) if c == 13 and (i + 1 == len(data) or data[i + 1] != 10)
    )
    assert lone_cr_count(np.frombuffer(data, np.uint8)) == twin


@pytest.mark.parametrize("ends", [b"\r", b"\r\n", b"\n", [b"\r", b"\r\n", b"\n"]])
def test_every_line_end_reads_the_same_rows(tmp_path, ends):
    # LightGBM's TextReader and pandas end a line at '\n', '\r\n' and a lone '\r'.
    rows = [b"1,0.5,2", b"0,1.5,3", b"1,2.5,4", b"0,3.5,5"]
    cycle = ends if isinstance(ends, list) else [ends]
    data = b"".join(r + cycle[i % len(cycle)] for i, r in enumerate(rows))
    d = read_data(write_raw(tmp_path, "e.csv", data))
    np.testing.assert_array_equal(d.label, [1, 0, 1, 0])
    np.testing.assert_array_equal(d.X[:, 1], [2, 3, 4, 5])
    assert count_lines(data) == 4
    for n in (2, 3):  # parts (one per rank) start at line starts, lines counted alike
        parts = split_parts(data, n)
        assert b"".join(parts) == data and sum(count_lines(p) for p in parts) == 4


def test_a_lone_cr_counts_in_line_numbers(tmp_path):
    with pytest.raises(Exception, match="line 3"):
        read_data(write_raw(tmp_path, "m.csv", b"1,2\r0,3\r1,oops\r"))


def test_side_files_may_start_with_a_bom_and_end_lines_with_cr(tmp_path):
    data = write_raw(tmp_path, "d.csv", b"1,2\n0,3\n1,4\n")
    write_raw(tmp_path, "d.csv.weight", b"\xef\xbb\xbf0.5\r2\r3\r")
    np.testing.assert_array_equal(read_data(data).weight, [0.5, 2, 3])


@pytest.mark.parametrize(
    "token", ["na", "NA", "nan", "NaN", "nAn", "-nan", "+NaN", "null", "NULL", "Null", ""]
)
def test_missing_value_spellings_of_lightgbm(tmp_path, token):
    # LightGBM's Atof: na, nan and null in any case, after a sign, are NaN.
    d = read_data(write_raw(tmp_path, "n.csv", f"1,{token},2\n0,1,3\n"))
    assert np.isnan(d.X[0, 0]) and d.X[1, 0] == 1


@pytest.mark.parametrize(
    "token, value", [("inf", np.inf), ("-Infinity", -np.inf), ("INF", np.inf), ("+inf", np.inf)]
)
def test_infinity_spellings_are_numbers(tmp_path, token, value):
    d = read_data(write_raw(tmp_path, "i.csv", f"1,{token}\n0,1\n"))
    assert d.X[0, 0] == value
    d = read_data(write_raw(tmp_path, "i.svm", f"1 0:{token}\n0 0:1\n"))
    assert d.X[0, 0] == value
