"""Trained models: one tree as arrays, the model with its predictions, its
files (dgbdt's JSON, LightGBM's text written and read) and the one loader."""
