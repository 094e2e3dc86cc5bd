"""Readers' errors name the file (issue 27, item 10): a ``.query`` line out of
range names the file and line (it raised OverflowError); a training or
validation file without data rows (0 bytes, a header line only, a 0-byte
"binary" file) is refused naming it, as LightGBM refuses it ("Data file ...
couldn't be read"), where dgbdt said only "The training data has no rows".
Prediction still reads an empty file (test_cli's empty-file test)."""

import gzip

import numpy as np
import pytest

import dgbdt
from dgbdt.cli.commands import run
from dgbdt.io import DataFormatError, read_data, read_query_file

PARAMS = {"objective": "regression", "verbosity": -1}


def _csv(path, n=6):
    path.write_text("".join(f"{i % 2},{i},{i * 0.5}\n" for i in range(n)))
    return path


@pytest.mark.parametrize("size", ["100000000000000000000000", "1e23", "9223372036854775808"])
def test_a_query_size_out_of_range_names_the_file_and_line(tmp_path, size):
    data = _csv(tmp_path / "d.csv")
    (tmp_path / "d.csv.query").write_text(f"2\n{size}\n4\n")
    message = r"d\.csv\.query, line 2: query size out of range \(at most 2147483647 rows\)"
    with pytest.raises(DataFormatError, match=message):
        read_data(data)
    with pytest.raises(DataFormatError, match=message):
        read_query_file(data)  # (the distributed reader's call: no row count)
    with pytest.raises(DataFormatError, match=message):
        dgbdt.Dataset(str(data))


def test_a_large_query_size_in_range_is_the_sum_check(tmp_path):
    data = _csv(tmp_path / "d.csv")
    (tmp_path / "d.csv.query").write_text("2\n2147483647\n")
    with pytest.raises(DataFormatError, match=r"d\.csv\.query: query sizes .* sum to 2147483649"):
        read_data(data)


@pytest.mark.parametrize(
    "name, content, params, message",
    [
        ("empty.csv", b"", {}, r"empty\.csv is empty \(0 bytes\)"),
        ("train.bin", b"", {}, r"train\.bin is empty \(0 bytes\): .*nor a dgbdt Dataset file"),
        ("head.csv", b"a,b,c\n", {"header": True}, r"head\.csv has no data rows below its header"),
        ("blank.csv", b"\n \n", {}, r"blank\.csv has no data rows"),
        ("e.csv.gz", gzip.compress(b"", mtime=0), {}, r"e\.csv\.gz has no data rows"),
    ],
    ids=["empty", "empty-bin", "header-only", "blank-lines", "empty-gzip"],
)
def test_a_data_file_without_rows_is_named(tmp_path, capsys, name, content, params, message):
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(DataFormatError, match=message):
        dgbdt.train(PARAMS, dgbdt.Dataset(str(path), params=params), 1)
    with pytest.raises(DataFormatError, match=message):
        read_data(path, **params, need_rows=True)
    assert read_data(path, **params).X.shape[0] == 0  # prediction reads it
    header = ["header=true"] if params else []
    model = tmp_path / "m.json"
    assert run(["train", f"data={path}", *header, f"output_model={model}", "verbosity=-1"]) == 1
    assert np.any([name in line for line in capsys.readouterr().err.splitlines()])
    assert not model.exists()


def test_an_empty_validation_file_is_named(tmp_path, capsys):
    data, valid = _csv(tmp_path / "d.csv", 60), tmp_path / "v.csv"
    valid.write_text("")
    model = tmp_path / "m.json"
    argv = ["train", f"data={data}", f"valid_data={valid}", f"output_model={model}"]
    assert run([*argv, "verbosity=-1"]) == 1
    assert "v.csv is empty (0 bytes)" in capsys.readouterr().err
