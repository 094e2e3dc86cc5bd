"""The data layer's shared pieces: checks of a Dataset's fields (checks) and
the default feature names (names)."""
