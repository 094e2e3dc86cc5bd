"""Regression tests of a review of the readers' inputs (second round): a column in
two roles, BOMs in side files, nan/inf spellings, ``\\r`` line ends, files without
a label at prediction, binary content and non-UTF-8 headers."""
import pytest

from dgbdt.cli import run
from dgbdt.readers import read_data

HEADER = "f0,f1,w,y\n"
ROWS = "".join(f"{i * 0.5},{i // 10},{1 + i % 2},{i % 2}\n" for i in range(30))


def write(tmp_path, name, content):
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return path


# ------------------------------------------------------------------ a column in two roles


@pytest.mark.parametrize("options, words", [
    ({"weight_column": "name:y"}, ["weight_column='name:y'", "label_column='name:y'",
                                   "is the label column"]),
    ({"group_column": "name:y"}, ["group_column='name:y'", "label_column='name:y'"]),
    ({"ignore_columns": "name:f0,y"}, ["ignore_columns='name:f0,y'", "label_column='name:y'"]),
    ({"weight_column": "name:w", "group_column": "name:w"},
     ["group_column='name:w'", "is the weight column", "weight_column='name:w'"]),
    ({"weight_column": "1", "group_column": "1"},       # by index: the file's column 1
     ["group_column='1' ('f1')", "weight_column='1' ('f1')"]),
])
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
    assert run(["train", f"data={path}", "header=true", "label_column=name:y",
                "weight_column=name:y", f"output_model={model}", "verbosity=-1"]) == 1
    err = capsys.readouterr().err
    assert "weight_column='name:y' is the label column label_column='name:y'" in err
    assert not model.exists()


def test_distinct_roles_still_read(tmp_path):
    path = write(tmp_path, "hdr.csv", HEADER + ROWS)
    out = read_data(path, header=True, label_column="name:y", weight_column="name:w",
                    group_column="name:f1", ignore_columns="name:w")   # ignoring w twice is fine
    assert out.feature_names == ["f0"] and out.weight is not None and out.group is not None


@pytest.mark.parametrize("options, key, message", [
    ({"ignore_columns": "3"}, "ignore_columns",
     "ignore_columns: column 3 does not exist, d.csv has 3 columns besides the label column "
     "(indices 0 to 2; "),
    ({"weight_column": "5"}, "weight_column",
     "weight_column: column 5 does not exist, d.csv has 3 columns besides the label column "
     "(indices 0 to 2; "),
    ({"label_column": "4"}, "label_column",
     "label_column: column 4 does not exist, d.csv has 4 columns (indices 0 to 3)"),
    ({"label_column": None, "ignore_columns": "4"}, "ignore_columns",
     "ignore_columns: column 4 does not exist, d.csv has 4 columns (indices 0 to 3)"),
    ({"label_column": "2", "ignore_columns": "3"}, "ignore_columns",   # the label in the middle
     "ignore_columns: column 3 does not exist, d.csv has 3 columns besides the label column "
     "(indices 0 to 2; "),
])
def test_a_column_index_out_of_range_is_counted_as_the_key_counts(tmp_path, options, key,
                                                                  message):
    path = write(tmp_path, "d.csv", ROWS)
    with pytest.raises(ValueError) as info:
        read_data(path, **options)
    assert message in str(info.value).replace(str(tmp_path) + "/", "")
    last = int(message.split("indices 0 to ")[1][0])
    read_data(path, **{**options, key: str(last)})      # the last index it allows reads
