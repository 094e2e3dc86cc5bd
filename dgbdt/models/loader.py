"""The one loader of model files: dgbdt's JSON document (dgbdt.models.json_file) or
LightGBM's text model (dgbdt.models.lightgbm_import; with dgbdt's whole model
when dgbdt wrote it, dgbdt.models.text_file), told apart by content."""

from __future__ import annotations

import os
from typing import Any

from .json_file import decode_model, lightgbm_text_version, model_from_json, read_model_file
from .text_file import model_from_lightgbm_text
from .tree import Tree


def model_from_text(
    text: str | bytes | bytearray, source: str = "model string"
) -> tuple[dict[str, Any], list[Tree]]:
    """(header dict, list of Tree) of a model in either format (str or bytes);
    ModelFormatError naming the field (and tree) of the first problem."""
    if isinstance(text, (bytes, bytearray)):
        text = decode_model(bytes(text), source)
    if lightgbm_text_version(text) is not None:
        return model_from_lightgbm_text(text, source)
    return model_from_json(text, source)


def load_model_file(path: str | os.PathLike[str]) -> tuple[dict[str, Any], list[Tree]]:
    """(header, trees) of the model file ``path`` in either format (see
    dgbdt.models.json_file.read_model_file for what a model file must be)."""
    path = os.fspath(path)
    return model_from_text(read_model_file(path), source=path)
