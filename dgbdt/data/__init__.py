"""Data as the trees see it: the Dataset (dataset) and its binary file
(binary_file), what dgbdt takes as data (inputs), the checks of a Dataset's
fields (checks), the default feature names (names), binning, categorical
columns and the bin store."""
