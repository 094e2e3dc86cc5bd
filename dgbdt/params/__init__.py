"""The parameters: the one table of dgbdt's parameters (table) and every
LightGBM key as data (lightgbm_keys)."""
