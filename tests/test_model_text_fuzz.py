"""Fuzz tests of the text model loader: mutated LightGBM text models written by
dgbdt (with their ``dgbdt_model:`` line) load or are refused.

Mutations: a line replaced, deleted or duplicated; a number of a tree field
(threshold, left_child, split_feature, num_leaves, cat_boundaries, leaf_value,
...) replaced by a hostile one (2^31, 2^63, -1, NaN, inf, 1e400, ...); the file
truncated or its bytes flipped; the dgbdt_model JSON mutated as
tests/test_model_fuzz.py mutates JSON files (fields dropped, retyped, changed),
its JSON broken, or its digest changed; two trees' blocks swapped.  Each must
either load -- and then predict finite values on finite input, and exactly
what the original predicts when only lines outside the trees and the model
line changed -- or raise ModelFormatError naming a field, line or tree:
never another exception, a crash or a hang.

Deterministic (``derandomize``); ``DGBDT_FUZZ_EXAMPLES=5000`` fuzzes longer.
"""

import functools
import json
import os
import re
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from test_model_fuzz import _mutate_bytes, _mutate_doc

import dgbdt
from dgbdt.models.json_file import ModelFormatError

FUZZ = settings(
    deadline=None,
    derandomize=True,
    max_examples=int(os.environ.get("DGBDT_FUZZ_EXAMPLES", 150)),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
MODEL_KEY = "dgbdt_model:"
_RAW = "@@raw@@"  # (as in test_model_fuzz: a value replaced by raw JSON text)
NUMBERS = [
    "2147483647",
    "2147483648",
    "-2147483649",
    "9223372036854775807",
    "9223372036854775808",
    "18446744073709551616",
    "9" * 400,
    "-1",
    "-2",
    "-100",
    "0",
    "1",
    "2",
    "3",
    "3.7",
    "-0",
    "1e308",
    "1.7976931348623157e+308",
    "-1e308",
    "1e400",
    "1e-320",
    "nan",
    "NaN",
    "-nan",
    "inf",
    "-inf",
    "Infinity",
    "x",
    "",
]
LINES = [
    "",
    "tree",
    "Tree=0",
    "Tree=1",
    "Tree=99",
    "end of trees",
    "parameters:",
    "end of parameters",
    "num_leaves=2",
    "num_leaves=2147483648",
    "num_cat=1",
    "version=v9",
    "version=v4",
    "num_class=3",
    "max_feature_idx=1000000000",
    "objective=lambdarank",
    "objective=binary sigmoid:nan",
    "is_linear=1",
    "average_output",
    "shrinkage=inf",
    "tree_sizes=1",
    MODEL_KEY,
    MODEL_KEY + "{}",
    MODEL_KEY + "[",
    MODEL_KEY + "null",
    "dgbdt_feature_names:[]",
    "pandas_categorical:[[1]]",
    "pandas_categorical:" + "[" * 100_000,
    "[objective: nonsense]",
    "key=" + "9" * 5000,
]
# lines that start or end a section: a tree added, the model line moved...
STRUCTURE = ("Tree=", "end of trees", MODEL_KEY)
# a problem's place: the message names a field, a line, a tree, or the format
CULPRIT = re.compile(
    r"field|line|tree|Tree|'[a-z_]+'|num_|version|objective|feature|JSON|header|"
    r"categor|leaf|node|threshold|bitset|LightGBM|dgbdt",
)


@functools.cache
def base_models():
    """(text, X) of small trained models: binary with a categorical feature,
    multiclass, regression with NaN, lambdarank."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(150, 4))
    X[:, 2] = rng.integers(0, 10, len(X))
    signal = X[:, 0] - X[:, 1] + (X[:, 2] % 3 == 0)
    base = {"verbosity": -1, "num_leaves": 5, "min_data_in_leaf": 5}
    binary = dgbdt.train(
        {**base, "objective": "binary", "min_data_per_group": 5, "cat_smooth": 1},
        dgbdt.Dataset(X, (X[:, 2] % 3 == 0) * 1.0, categorical_feature=[2]),
        3,
    )
    multi = dgbdt.train(
        {**base, "objective": "multiclass", "num_class": 3},
        dgbdt.Dataset(X, np.digitize(signal, [-0.5, 0.5]) * 1.0),
        2,
    )
    Xn = X.copy()
    Xn[rng.random(X.shape) < 0.15] = np.nan
    regression = dgbdt.train({**base, "objective": "regression"}, dgbdt.Dataset(Xn, signal), 3)
    rank = dgbdt.train(
        {**base, "objective": "lambdarank", "min_data_in_leaf": 3},
        dgbdt.Dataset(X, np.clip(np.round(signal + 1), 0, 3), group=[30] * 5),
        2,
    )
    models = (binary, multi, regression, rank)
    return tuple(m.model_to_string() for m in models)


@functools.cache
def _rows(n_features):
    """Finite rows, moderate and huge, for predicting."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, n_features)) * rng.choice([1.0, 10.0, 1e6, 1e300], size=(40, 1))
    X[:10, 2 % n_features] = rng.integers(-2, 12, 10)  # categories (and negative ones)
    return X


@functools.cache
def _original_raw(text):
    booster = dgbdt.Booster(model_str=text)
    return booster.predict(_rows(booster.num_feature()), raw_score=True)


def _tree_span(lines):
    """[first tree line, 'end of trees' line) of the text's lines."""
    first = next(i for i, line in enumerate(lines) if line.startswith("Tree="))
    return first, lines.index("end of trees")


def _model_line(lines):
    return next(i for i, line in enumerate(lines) if line.startswith(MODEL_KEY))


def _mutate_line(data, lines):
    """A line replaced, deleted or duplicated; the index of the line touched."""
    k = data.draw(st.integers(0, len(lines) - 1))
    op = data.draw(st.sampled_from(["replace", "delete", "duplicate", "value"]))
    if op == "replace":
        lines[k] = data.draw(st.sampled_from(LINES))
    elif op == "delete":
        del lines[k]
    elif op == "duplicate":
        lines.insert(k, lines[k])
    else:
        # the value of a key=value line (header, tree or parameter) replaced
        key, sep, _ = lines[k].partition("=")
        lines[k] = key + (sep or "=") + data.draw(st.sampled_from(NUMBERS))
    return op, k


def _mutate_number(data, lines):
    """One number of a tree field replaced by a hostile one."""
    first, end = _tree_span(lines)
    fields = [i for i in range(first, end) if re.match(r"[a-z_]+=\S", lines[i])]
    k = data.draw(st.sampled_from(fields))
    key, _, value = lines[k].partition("=")
    parts = value.split(" ")
    j = data.draw(st.integers(0, len(parts) - 1))
    parts[j] = data.draw(st.sampled_from(NUMBERS))
    lines[k] = key + "=" + " ".join(parts)
    event(f"number: {key}")


def _mutate_model_line(data, lines):
    """dgbdt's model line: its JSON mutated (fields dropped, retyped, ...),
    broken, or its digest changed."""
    k = _model_line(lines)
    body = lines[k][len(MODEL_KEY) :]
    op = data.draw(st.sampled_from(["doc", "doc", "doc", "bytes", "digest", "drop"]))
    if op == "doc":
        doc, raw = json.loads(body), []
        ops = [_mutate_doc(data, doc, raw) for _ in range(data.draw(st.integers(1, 2)))]
        body = json.dumps(doc, separators=(",", ":"))
        for token in raw:
            body = body.replace(json.dumps(_RAW), token, 1)
        op += ": " + "+".join(sorted(ops))
    elif op == "bytes":
        blob, sub = _mutate_bytes(data, body.encode())
        body = blob.decode("utf-8", "replace").replace("\n", " ")
        op += ": " + sub
    elif op == "digest":
        body = re.sub(r'"trees_sha256":"[0-9a-f]{4}', '"trees_sha256":"0000', body)
    else:
        del lines[k]
        return op
    lines[k] = MODEL_KEY + body
    return op


def _swap_trees(data, lines):
    """The bodies of two trees swapped (their Tree= lines stay)."""
    starts = [i for i, line in enumerate(lines) if line.startswith("Tree=")]
    ends = [*starts[1:], lines.index("end of trees")]
    a, b = sorted(data.draw(st.lists(st.integers(0, len(starts) - 1), min_size=2, max_size=2)))
    if a == b:
        return
    body_a, body_b = lines[starts[a] + 1 : ends[a]], lines[starts[b] + 1 : ends[b]]
    lines[starts[b] + 1 : ends[b]] = body_a  # (b after a: replace it first)
    lines[starts[a] + 1 : ends[a]] = body_b


def _mutated(data):
    """(original text, mutated text, whether only lines outside the trees and
    the model line changed)."""
    text = data.draw(st.sampled_from(base_models()))
    lines = text.split("\n")
    kind = data.draw(st.sampled_from(["line", "line", "number", "number", "model", "swap", "cut"]))
    outside = False
    if kind == "line":
        first, end = _tree_span(lines)
        op, k = _mutate_line(data, lines)
        # (a line inserted or deleted before the trees keeps them: indices shift)
        outside = (k < first - 1 or end < k < _model_line(text.split("\n"))) and not any(
            lines[k].startswith(s) for s in STRUCTURE
        )
        event(f"line: {op} " + ("outside" if outside else "inside"))
    elif kind == "number":
        _mutate_number(data, lines)
    elif kind == "model":
        event("model: " + _mutate_model_line(data, lines))
    elif kind == "swap":
        _swap_trees(data, lines)
        event("swap")
    else:
        blob, op = _mutate_bytes(data, text.encode())
        event("cut: " + op)
        return text, blob.decode("utf-8", "replace"), False
    return text, "\n".join(lines), outside


def _check_loaded(booster, original, outside):
    X = _rows(booster.num_feature())
    for kw in ({}, {"raw_score": True}, {"pred_leaf": True}):
        out = booster.predict(X, **kw)
        assert np.all(np.isfinite(out)), kw
    if outside:
        # trees and model line untouched: the model is the original one
        np.testing.assert_array_equal(booster.predict(X, raw_score=True), _original_raw(original))
    again = dgbdt.Booster(model_str=booster.model_to_string())
    np.testing.assert_array_equal(
        again.predict(X, raw_score=True), booster.predict(X, raw_score=True)
    )


@FUZZ
@given(data=st.data())
def test_mutated_text_model_loads_or_is_refused(data):
    original, text, outside = _mutated(data)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            booster = dgbdt.Booster(model_str=text)
    except ModelFormatError as exc:
        event("refused")
        assert CULPRIT.search(str(exc)), str(exc)
        return
    event("loaded")
    try:
        _check_loaded(booster, original, outside)
    except Exception:
        import pickle

        pickle.dump((original, text, outside), open("/tmp/h8_fail.pkl", "wb"))
        raise


def test_base_text_models_load_and_predict():
    for text in base_models():
        assert MODEL_KEY in text
        booster = dgbdt.Booster(model_str=text)
        _check_loaded(booster, text, True)
    # (the binary model really has categorical splits)
    assert re.search(r"^num_cat=[1-9]", base_models()[0], re.M)


# the defects the fuzzing found, one example each


def test_feature_infos_with_other_whitespace_is_refused():
    # (trees edited: read as LightGBM's model, whose feature_infos dgbdt keeps)
    text = base_models()[2].replace("feature_infos=[", "feature_infos=\x0c[", 1)
    text = text.replace("shrinkage=0.1", "shrinkage=0.2", 1)
    with pytest.raises(ModelFormatError, match=r"'feature_infos'\[0\].*not one word"):
        dgbdt.Booster(model_str=text)


def test_model_line_read_without_end_of_parameters():
    text = base_models()[1]
    booster = dgbdt.Booster(model_str=text.replace("end of parameters\n", "", 1))
    assert "bin_upper_bounds" in booster.dump_model(format="json")
    _check_loaded(booster, text, True)


@pytest.mark.parametrize("value", [1, [1, 2], "null", "[0,1],x", True])
def test_model_line_interaction_constraints_not_a_list(value):
    # (params are a record: a loaded model saves, without the constraints)
    text = base_models()[3]
    head, _, rest = text.partition(MODEL_KEY)
    body, _, tail = rest.partition("\n")
    doc = json.loads(body)
    doc["params"]["interaction_constraints"] = value
    booster = dgbdt.Booster(model_str=head + MODEL_KEY + json.dumps(doc) + "\n" + tail)
    _check_loaded(booster, text, True)
