"""``lightgbm.engine`` names mapped to dgbdt's."""

from dgbdt import CVBooster, cv, train

__all__ = ["CVBooster", "cv", "train"]
