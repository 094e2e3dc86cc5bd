"""The data layer's shared pieces: what dgbdt takes as data (inputs),
checks of a Dataset's fields (checks) and the default feature names (names)."""
