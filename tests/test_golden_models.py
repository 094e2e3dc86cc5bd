"""Golden models: 16 fixed configurations must give the models committed in
tests/golden/manifest.json (see tests/golden_configs.py for what is compared).

A change that alters a model on purpose rewrites the manifest
(``DGBDT_GOLDEN_WRITE=1 pytest tests/test_golden_models.py``) in the same
commit and says why in its message; any other change leaves it as it is.
"""

import json
import os

import pytest
from golden_configs import (
    DISTRIBUTED,
    MANIFEST,
    SERIAL,
    canonical,
    differences,
    entry,
    is_quantized,
    train,
)
from mpi_launch import run_mpi

WRITE = os.environ.get("DGBDT_GOLDEN_WRITE") == "1"


def _manifest():
    return json.loads(MANIFEST.read_text()) if MANIFEST.exists() else {}


def _check(name, got):
    if WRITE:
        manifest = _manifest()
        manifest[name] = got
        MANIFEST.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
        return
    want = _manifest().get(name)
    assert want is not None, f"{name} is not in {MANIFEST.name}: write it with DGBDT_GOLDEN_WRITE=1"
    problems = differences(got, want)
    assert not problems, f"the {name} model changed: " + "; ".join(problems)


def test_the_manifest_holds_every_configuration():
    assert WRITE or set(_manifest()) == set(SERIAL) | set(DISTRIBUTED)
    assert len(SERIAL) + len(DISTRIBUTED) == 16


@pytest.mark.parametrize("name", list(SERIAL))
def test_serial_golden_model(name):
    spec = SERIAL[name]
    _check(name, entry(canonical(train(spec)), is_quantized(spec)))


def test_distributed_golden_models(tmp_path):
    result = run_mpi(2, "golden.py", tmp_path, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    for name in DISTRIBUTED:
        _check(name, json.loads((tmp_path / f"{name}.json").read_text()))


def test_a_changed_model_is_caught():
    # The comparison itself can fail: a leaf value moved by 1e-9 relative, one
    # threshold, and one byte of a quantized model's content.
    doc = canonical(train(SERIAL["binary"]))
    want = entry(doc, False)
    assert differences(entry(doc, False), want) == []
    doc["trees"][2]["leaf_value"][0] *= 1 + 1e-9
    found = differences(entry(doc, False), want)
    assert len(found) == 1 and found[0].startswith("leaf_value")
    doc["trees"][2]["threshold"][0] += 1e-3
    assert "structure" in differences(entry(doc, False), want)[0]
    q = canonical(train(SERIAL["regression_quantized"]))
    want = entry(q, True)
    q["init_score"] = [q["init_score"][0] + 2**-40]
    assert differences(entry(q, True), want)
