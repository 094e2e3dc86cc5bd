"""Fuzz tests of the model loader: mutated model files load or are refused.

Mutations of valid model files (field deletions, type swaps, integers at
2^31, 2^63 and negative, NaN/Infinity/1e400 tokens, truncation, byte flips,
deep nesting, cyclic and shared child links) must either load -- and then
predict finite values (raw, transformed, leaf indices) and save a file that
loads again -- or raise ModelFormatError: never another exception, never a
hang (the loader walks trees iteratively and each walk ends).

``DGBDT_FUZZ_EXAMPLES=20000 pytest tests/test_model_fuzz.py`` fuzzes longer.
"""

import copy
import functools
import json
import os
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import dgbdt
from dgbdt.cli.commands import IO_DEFAULTS, CliError, _read_options, _with_model_columns
from dgbdt.models.json_file import ModelFormatError

FUZZ = settings(
    deadline=None,
    max_examples=int(os.environ.get("DGBDT_FUZZ_EXAMPLES", 500)),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

_RAW = "@@raw@@"  # a value replaced by raw JSON text after dumping
_MAX = float(np.finfo(np.float64).max)
HOSTILE = [
    2**31,
    2**31 - 1,
    2**32,
    2**63,
    2**63 - 1,
    2**64,
    -(2**31) - 1,
    -(2**63) - 1,
    -1,
    -2,
    -100,
    0,
    1,
    2,
    3,
    7,
    3.7,
    3.0,
    0.0,
    -0.0,
    1e-320,
    1e308,
    -1e308,
    _MAX,
    -_MAX,
    5e307,
    True,
    False,
    None,
    "",
    "x",
    "binary",
    "custom",
    "multiclass",
    [],
    {},
    [1],
    [[1]],
    [0.5, 0.5],
    {"a": 1},
    {"sigmoid": 1.0},
]
TOKENS = [
    "NaN",
    "Infinity",
    "-Infinity",
    "1e400",
    "-1e400",
    "9" * 400,
    "1" * 5000,
    "[" * 100_000 + "]" * 100_000,
    "[" * 500 + "]" * 500,
    "1.5e308",
    "-0",
    '"\\ud800"',
]


@functools.cache
def base_models():
    """Small valid models: binary with NaN bins, multiclass, L1 without a bin
    mapper, binary with categorical splits (bitsets, bin_categories), quantile
    with reg_sqrt, one-vs-all multiclass, poisson."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 4))
    X[rng.random(X.shape) < 0.1] = np.nan
    signal = np.nan_to_num(X[:, 0]) - np.nan_to_num(X[:, 1])
    base = {"verbosity": -1, "num_leaves": 5, "min_data_in_leaf": 5}
    binary = dgbdt.train({**base, "objective": "binary"}, dgbdt.Dataset(X, (signal > 0) * 1.0), 3)
    multi = dgbdt.train(
        {**base, "objective": "multiclass", "num_class": 3},
        dgbdt.Dataset(X, np.digitize(signal, [-0.5, 0.5]) * 1.0),
        2,
    )
    l1 = dgbdt.train({**base, "objective": "regression_l1"}, dgbdt.Dataset(X, signal), 2)
    l1_doc = l1.dump_model(format="json")
    del l1_doc["bin_upper_bounds"], l1_doc["nan_bins"]
    # the column keys the command line records (strings), to be mutated too
    l1_doc["params"].update(
        label_column="0", ignore_column="1,2", weight_column="name:w", zero_based="true"
    )
    Xc = X.copy()
    Xc[:, 2] = rng.integers(0, 12, len(X))
    categorical = dgbdt.train(
        {**base, "objective": "binary", "min_data_per_group": 5, "cat_smooth": 1},
        dgbdt.Dataset(Xc, (Xc[:, 2] % 3 == 0) * 1.0, categorical_feature=[2]),
        3,
    )
    assert any(t.default_left.max() & 4 for t in categorical.trees)
    # objective_params that decide the output: reg_sqrt, sigmoid of one-vs-all
    quantile = dgbdt.train(
        {**base, "objective": "quantile", "alpha": 0.7, "reg_sqrt": True},
        dgbdt.Dataset(X, signal),
        2,
    )
    ova = dgbdt.train(
        {**base, "objective": "multiclassova", "num_class": 3, "sigmoid": 1.5},
        dgbdt.Dataset(X, np.digitize(signal, [-0.5, 0.5]) * 1.0),
        2,
    )
    poisson = dgbdt.train({**base, "objective": "poisson"}, dgbdt.Dataset(X, np.exp(signal)), 2)
    return (
        binary.model_to_string(format="json"),
        multi.model_to_string(format="json"),
        json.dumps(l1_doc),
        categorical.model_to_string(format="json"),
        quantile.model_to_string(format="json"),
        ova.model_to_string(format="json"),
        poisson.model_to_string(format="json"),
    )


def _containers(doc):
    """Every (container, key) pair in the document, iteratively (no recursion)."""
    out, stack = [], [doc]
    while stack:
        node = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, value in items:
            out.append((node, key))
            if isinstance(value, (dict, list)):
                stack.append(value)
    return out


def _swap_type(value):
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return float(value)
    if isinstance(value, float):
        return int(value) if np.isfinite(value) else str(value)
    if isinstance(value, str):
        return [value]
    return json.dumps(value)


def _mutate_doc(data, doc, raw):
    """One structural mutation of the parsed document (in place)."""
    pairs = _containers(doc)
    trees = doc.get("trees")
    trees = [t for t in trees if isinstance(t, dict)] if isinstance(trees, list) else []
    if not pairs:
        return "nothing left"
    op = data.draw(
        st.sampled_from(
            [
                "delete",
                "hostile",
                "token",
                "swap",
                "link",
                "link",
                "insert",
                "empty",
                "scale",
                "scale",
            ]
        )
    )
    if op == "link" and trees:
        # cycles, shared children, links out of range
        tree = data.draw(st.sampled_from(trees))
        side = data.draw(st.sampled_from(["left_child", "right_child"]))
        links = tree.get(side)
        if isinstance(links, list) and links:
            n = len(links) + 1
            k = data.draw(st.integers(0, len(links) - 1))
            links[k] = data.draw(st.integers(-n - 2, n + 1))
            return "link"
    if op == "scale":
        # the largest |leaf value| of some trees set near the float limit: each
        # finite, their sums not
        target = data.draw(st.sampled_from([1e10, 1e300, 5e307, 9e307, 1.7e308, _MAX]))
        for t in data.draw(st.lists(st.sampled_from(trees), max_size=4)) if trees else ():
            values = t.get("leaf_value")
            if isinstance(values, list) and values and set(map(type, values)) == {float}:
                top = max(map(abs, values)) or 1.0
                t["leaf_value"] = [v / top * target for v in values]
        if isinstance(doc.get("init_score"), list) and data.draw(st.booleans()):
            doc["init_score"] = [target] * len(doc["init_score"])
        return "scale"
    container, key = data.draw(st.sampled_from(pairs))
    if op == "delete":
        del container[key]
    elif op == "hostile":
        # a copy: later mutations must not change HOSTILE (hypothesis replays examples)
        container[key] = copy.deepcopy(data.draw(st.sampled_from(HOSTILE)))
    elif op == "token":
        container[key] = _RAW
        raw.append(data.draw(st.sampled_from(TOKENS)))
    elif op == "swap":
        container[key] = _swap_type(container[key])
    elif op == "insert" and isinstance(container, list):
        container.insert(key, copy.deepcopy(container[key]))
    elif op == "empty":
        container[key] = [] if isinstance(container[key], list) else {}
    return op


def _mutate_bytes(data, blob):
    op = data.draw(st.sampled_from(["truncate", "flip", "insert", "cut"]))
    n = len(blob)
    if op == "truncate":
        return blob[: data.draw(st.integers(0, n - 1))], op
    if op == "flip":
        blob = bytearray(blob)
        for _ in range(data.draw(st.integers(1, 4))):
            blob[data.draw(st.integers(0, n - 1))] = data.draw(st.integers(0, 255))
        return bytes(blob), op
    at = data.draw(st.integers(0, n))
    if op == "insert":
        token = data.draw(st.sampled_from(TOKENS[:7] + ["[", "]", "{", ",", '"', "-", "e"]))
        return blob[:at] + token.encode() + blob[at:], op
    return blob[:at] + blob[at + data.draw(st.integers(1, 50)) :], op


def _replace_number(data, text):
    """A number of the text replaced by a hostile one (integers at 2^31, 2^63, ...)."""
    spans = [m.span() for m in re.finditer(r"-?\d+(\.\d+)?([eE][-+]?\d+)?", text)]
    lo, hi = data.draw(st.sampled_from(spans))
    new = data.draw(
        st.sampled_from(
            [
                "2147483648",
                "9223372036854775808",
                "-1",
                "-100",
                "0",
                "3.7",
                "3.0",
                "1e400",
                "NaN",
                "Infinity",
                "true",
                "null",
                "18446744073709551616",
                "1e308",
            ]
        )
    )
    return text[:lo] + new + text[hi:]


def _mutated(data):
    """Bytes of a mutated model file; the kinds of mutation are recorded as events."""
    text = data.draw(st.sampled_from(base_models()))
    kind = data.draw(st.sampled_from(["doc", "doc", "doc", "number", "bytes"]))
    if kind == "doc":
        doc, raw = json.loads(text), []
        ops = [_mutate_doc(data, doc, raw) for _ in range(data.draw(st.integers(1, 3)))]
        text = json.dumps(doc)
        for token in raw:
            text = text.replace(json.dumps(_RAW), token, 1)
        event("doc: " + "+".join(sorted(ops)))
        return text.encode("utf-8", "surrogatepass")
    if kind == "number":
        for _ in range(data.draw(st.integers(1, 3))):
            text = _replace_number(data, text)
        event("number")
        return text.encode()
    blob, op = _mutate_bytes(data, text.encode())
    event("bytes: " + op)
    return blob


def _check_loaded(booster):
    """A loaded model predicts finite values and saves a model that loads again."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(30, booster.num_feature())) * rng.choice([1.0, 1e6, 1e300], size=(30, 1))
    X[rng.random(X.shape) < 0.1] = np.nan
    for kw in ({}, {"raw_score": True}, {"pred_leaf": True}, {"start_iteration": 1}):
        out = booster.predict(X, **kw)
        assert np.all(np.isfinite(out)), kw
    for kind in ("split", "gain"):
        assert np.all(np.isfinite(booster.feature_importance(kind)))
    # the column keys the command line reads back from the model: options, or
    # one line of error (a flag that is not true/false)
    try:
        options = _read_options(_with_model_columns(dict(IO_DEFAULTS), booster))
        assert all(isinstance(c, str) for c in options["ignore_columns"])
    except CliError as exc:
        event("column keys refused by the command line")
        assert "\n" not in str(exc)
    again = dgbdt.Booster(model_str=booster.model_to_string())
    np.testing.assert_array_equal(
        again.predict(X, raw_score=True), booster.predict(X, raw_score=True)
    )


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz")


@FUZZ
@given(data=st.data())
def test_mutated_model_loads_or_is_refused(folder, data):
    blob = _mutated(data)
    as_file = data.draw(st.booleans())
    try:
        if as_file:
            path = folder / "model.json"
            path.write_bytes(blob)
            booster = dgbdt.Booster(model_file=path)
        else:
            booster = dgbdt.Booster(model_str=blob.decode("utf-8", "replace"))
    except ModelFormatError as exc:
        event("refused")
        assert str(exc)
        return
    event("loaded")
    _check_loaded(booster)


def test_base_models_load_and_predict():
    for text in base_models():
        _check_loaded(dgbdt.Booster(model_str=text))
