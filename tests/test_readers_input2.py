"""Regression tests of a review of the readers' inputs (second round): a column in
two roles, BOMs in side files, nan/inf spellings, ``\\r`` line ends, files without
a label at prediction, binary content and non-UTF-8 headers."""

import pytest

from dgbdt.cli.commands import run
from dgbdt.io import read_data

HEADER = "f0,f1,w,y\n"
ROWS = "".join(f"{i * 0.5},{i // 10},{1 + i % 2},{i % 2}\n" for i in range(30))


def write(tmp_path, name, content):
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
    path = write(tmp_path, "hdr.csv", HEADER + ROWS)
    with pytest.raises(ValueError) as info:
        read_data(path, header=True, label_column="name:y", **options)
    for word in [*words, "hdr.csv"]:
        assert word in str(info.value)


def test_label_as_weight_is_refused_on_the_command_line(tmp_path, capsys):
    # LightGBM: "Could not find weight column y" (the label is no longer a column)
    path = write(tmp_path, "hdr.csv", HEADER + ROWS)
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
    path = write(tmp_path, "hdr.csv", HEADER + ROWS)
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
    path = write(tmp_path, "d.csv", ROWS)
    with pytest.raises(ValueError) as info:
        read_data(path, **options)
    assert message in str(info.value).replace(str(tmp_path) + "/", "")
    last = int(message.split("indices 0 to ")[1][0])
    read_data(path, **{**options, key: str(last)})  # the last index it allows reads


# ------------------------------------------------------------------ line ends, BOMs, NaN spellings
import numpy as np  # noqa: E402
from dgbdt.native.text import lone_cr_count  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from dgbdt.io import count_lines, split_parts  # noqa: E402


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
    d = read_data(write(tmp_path, "e.csv", data))
    np.testing.assert_array_equal(d.label, [1, 0, 1, 0])
    np.testing.assert_array_equal(d.X[:, 1], [2, 3, 4, 5])
    assert count_lines(data) == 4
    for n in (2, 3):  # parts (one per rank) start at line starts, lines counted alike
        parts = split_parts(data, n)
        assert b"".join(parts) == data and sum(count_lines(p) for p in parts) == 4


def test_a_lone_cr_counts_in_line_numbers(tmp_path):
    with pytest.raises(Exception, match="line 3"):
        read_data(write(tmp_path, "m.csv", b"1,2\r0,3\r1,oops\r"))


def test_side_files_may_start_with_a_bom_and_end_lines_with_cr(tmp_path):
    data = write(tmp_path, "d.csv", b"1,2\n0,3\n1,4\n")
    write(tmp_path, "d.csv.weight", b"\xef\xbb\xbf0.5\r2\r3\r")
    np.testing.assert_array_equal(read_data(data).weight, [0.5, 2, 3])


@pytest.mark.parametrize(
    "token", ["na", "NA", "nan", "NaN", "nAn", "-nan", "+NaN", "null", "NULL", "Null", ""]
)
def test_missing_value_spellings_of_lightgbm(tmp_path, token):
    # LightGBM's Atof: na, nan and null in any case, after a sign, are NaN.
    d = read_data(write(tmp_path, "n.csv", f"1,{token},2\n0,1,3\n"))
    assert np.isnan(d.X[0, 0]) and d.X[1, 0] == 1


@pytest.mark.parametrize(
    "token, value", [("inf", np.inf), ("-Infinity", -np.inf), ("INF", np.inf), ("+inf", np.inf)]
)
def test_infinity_spellings_are_numbers(tmp_path, token, value):
    d = read_data(write(tmp_path, "i.csv", f"1,{token}\n0,1\n"))
    assert d.X[0, 0] == value
    d = read_data(write(tmp_path, "i.svm", f"1 0:{token}\n0 0:1\n"))
    assert d.X[0, 0] == value
