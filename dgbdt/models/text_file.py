"""dgbdt's model file: LightGBM's text model, with nothing of dgbdt's model lost.

LightGBM's text (dgbdt.models.lightgbm_export) holds the trees as LightGBM
predicts them.  What it has no field for -- the bins, the starting score
(folded into the first trees there), threshold bins, category lists, every
training parameter, best_iteration, feature names LightGBM cannot hold, ... --
is one line ``dgbdt_model:{...}`` after ``end of parameters``, where LightGBM
skips it (its Python package reads only the last line,
``pandas_categorical``, which stays last)::

    dgbdt_model:{"format": "dgbdt-model", "version": 3, ...,   # dgbdt's JSON header
                 "trees": [{"threshold_bin": [...], ...}, ...], # per tree: its fields
                                                                # that differ when read back
                 "trees_sha256": "..."}                         # the tree blocks' digest

Each tree's entry holds only the fields (dgbdt.models.tree.Tree.to_dict) whose
value read back from the text differs from dgbdt's (``null``: a field the text
adds that dgbdt's tree has not).  Reading such a text rebuilds dgbdt's JSON
document and checks it as dgbdt's JSON file (dgbdt.models.json_file), so the
model is the one the JSON file would give.  A text whose trees changed since
it was written (``trees_sha256`` differs: edited, or trees added) is read as
LightGBM's model, with a warning.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..log import log_warning
from .json_file import ModelFormatError, model_document, model_from_doc, parse_json
from .lightgbm_export import MODEL_KEY, to_lightgbm_text
from .lightgbm_import import read_lightgbm_text
from .tree import Tree

if TYPE_CHECKING:
    from .model import Model

_PANDAS_KEY = "pandas_categorical:"


def _differences(ours: Mapping[str, Any], read: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of ``ours`` that ``read`` lacks or holds otherwise (compared
    as JSON text: -0.0 is not 0.0), and None for a field only ``read`` has."""
    out: dict[str, Any] = {key: None for key in read if key not in ours}
    for key, value in ours.items():
        if key not in read or json.dumps(value) != json.dumps(read[key]):
            out[key] = value
    return out


def model_to_text(booster: Model, end: int, header: Mapping[str, Any]) -> str:
    """Trees [0, end) of ``booster`` as LightGBM's text with dgbdt's model line
    (``header``: the model's JSON header for these trees)."""
    text = to_lightgbm_text(booster, 0, end)
    read = read_lightgbm_text(text, "the model text written")
    trees = booster.trees[:end]
    doc = model_document(header, trees)
    doc["trees"] = [
        _differences(ours, theirs.to_dict())
        for ours, theirs in zip(doc["trees"], read.trees, strict=False)
    ]
    doc["trees_sha256"] = read.trees_digest
    line = MODEL_KEY + json.dumps(doc, separators=(",", ":"), allow_nan=False) + "\n"
    # before the last line, pandas_categorical (where LightGBM's Python package reads it)
    cut = text.rindex(_PANDAS_KEY)
    return text[:cut] + line + text[cut:]


def model_from_lightgbm_text(text: str, source: str) -> tuple[dict[str, Any], list[Tree]]:
    """(header, trees) of a LightGBM text model: dgbdt's whole model where the
    text carries its model line for these trees, else LightGBM's model."""
    read = read_lightgbm_text(text, source)
    if read.dgbdt_model is None:
        return read.header, read.trees
    doc = parse_json(read.dgbdt_model, f"{source}: the {MODEL_KEY} line")
    if not isinstance(doc, dict) or doc.get("trees_sha256") != read.trees_digest:
        log_warning(
            f"{source}: the trees differ from those its {MODEL_KEY} line was written for "
            "(edited, or trees added): read as LightGBM's model, without dgbdt's bins and "
            "training details"
        )
        return read.header, read.trees
    del doc["trees_sha256"]
    entries = doc.get("trees")
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise ModelFormatError(f"{source}: field 'trees' of the {MODEL_KEY} line is not a list")
    if entries and len(entries) != len(read.trees):
        raise ModelFormatError(
            f"{source}: the {MODEL_KEY} line describes {len(entries)} trees, the text "
            f"holds {len(read.trees)}"
        )
    # (no entries: a model without trees, written as one constant tree per class)
    trees = zip(read.trees, entries, strict=True) if entries else ()
    doc["trees"] = [_merged(tree.to_dict(), e) for tree, e in trees]
    return model_from_doc(doc, source)


def _merged(read: dict[str, Any], entry: Mapping[str, Any]) -> dict[str, Any]:
    """A tree's dict read from the text, with dgbdt's differing fields put back."""
    for key, value in entry.items():
        if value is None:
            read.pop(key, None)
        else:
            read[key] = value
    return read
