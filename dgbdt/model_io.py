"""The model file's error where the README names it
(``dgbdt.model_io.ModelFormatError``); the format itself is
dgbdt.models.json_file."""

from .models.json_file import ModelFormatError

__all__ = ["ModelFormatError"]
