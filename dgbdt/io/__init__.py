"""Readers for the text data files of the command line: CSV, TSV, whitespace and LibSVM.

They read files the way LightGBM's CLI does:

* ``fmt="auto"`` tells LibSVM (data lines of ``label idx:val ...``) from delimited
  text; the delimiter of delimited text (tab, comma, else runs of whitespace) is
  taken from the first data line. ``.gz`` files (or any gzip stream) are read
  transparently.
* Delimited text: optional header line; ``label_column`` is a column index
  (``"0"``) or ``"name:colname"`` (needs the header). ``weight_column``,
  ``group_column`` and ``ignore_columns`` take the same syntax but, exactly as in
  LightGBM, an *integer index does not count the label column*: with the label in
  column 0, ``weight_column="0"`` is the file's column 1. Names always refer to the
  header. Label, weight, group and ignored columns are removed from ``X`` (their
  order is otherwise kept). Empty fields and ``NA``/``nan``/``NaN``/``null`` are
  missing values (NaN).
* LibSVM: ``label [qid:N] idx:val ...``; indices zero-based unless
  ``zero_based=False``; ``#`` starts a comment; explicit zeros are kept; ``X`` is
  a CSR matrix with ``max index + 1`` (or ``n_features``) columns, at most
  ``MAX_SPARSE_COLUMNS`` (2**30: a Dataset bins only the columns holding values).  An index repeated on one
  line is an error (LightGBM would sum the values).
* Side files as LightGBM: ``<path>.weight``, ``<path>.init`` (one value per line,
  or K per line for multiclass), ``<path>.query`` (query sizes) and
  ``<path>.position`` (one position per row: integers, or any text, each distinct
  line then numbered by first appearance as LightGBM does) are read when present
  and no column gives the same thing; their values must be finite (weights >= 0),
  and one that is a directory, FIFO or device is an error.
* Queries: ``LoadedData.group`` holds their sizes, ``query_ids`` the id of each
  where the file names them (group column, ``qid:``).  Read on K ranks
  (:func:`read_row_part`) the file is cut at query boundaries
  (:mod:`~dgbdt.io.querycuts`), so every query is whole on one rank.
* Lines end at ``\\n``, ``\\r\\n`` or a lone ``\\r`` (old Mac text), as in LightGBM's
  TextReader; line numbers in messages count them so.  A UTF-8 byte order mark may
  start a data or side file.
* Data files are regular files (:func:`dgbdt.files.check_regular_file`): a
  directory, FIFO or ``/dev/null`` is "not a regular file", never opened.
* ``features_only=True`` (prediction) leaves the label, weight and query columns
  unconverted and unchecked.

Fast paths are C parsers (``pandas.read_csv``, ``sklearn``'s
``load_svmlight_file``) plus Numba scans of the raw bytes
(:mod:`dgbdt.native.text`): pandas pads a short row with NaN without a word, so
every row's fields are counted; scikit-learn collects query ids in quadratic
time, so they are found by a scan instead.  Delimited text of 8 MiB or more is
cut at line ends into chunks of 2 MiB parsed on ``numba.get_num_threads()``
threads (pandas and the scans release the GIL) straight into a C-order ``X``;
smaller text, and any text where a chunk finds a problem, goes through the
serial reader, which checks the whole text.  On any problem the file is
re-scanned in Python only to raise a :class:`DataFormatError` that names the
file, the 1-based line number (counting header, blank and comment lines) and the
offending text.  Whatever the bytes, a read either returns consistent arrays or
raises :class:`DataFormatError` (or ``ValueError`` for bad column options);
``tests/test_readers_fuzz.py`` holds it to that, and the chunked reader to the
serial one.  ``bench/bench_readers.py`` times the readers against the C parsers.

The package's modules, by job: :mod:`~dgbdt.io.filebytes` (a file's bytes: regular-file
checks, gzip, line ends, byte-range parts), :mod:`~dgbdt.io.delimited` (the serial
reader of delimited text), :mod:`~dgbdt.io.chunked` (its chunked reader),
:mod:`~dgbdt.io.fields` (fields of delimited text), :mod:`~dgbdt.io.columns` (the
column roles, :class:`~dgbdt.io.columns.ColumnPlan`), :mod:`~dgbdt.io.libsvm`,
:mod:`~dgbdt.io.sidefiles`, :mod:`~dgbdt.io.values` (:class:`LoadedData`,
missing-value tokens, query groups), :mod:`~dgbdt.io.errors`,
:mod:`~dgbdt.io.reading` (the entry points), :mod:`~dgbdt.io.distributed` (reading
and writing on K ranks), :mod:`~dgbdt.io.querycuts` (where K ranks' ranges of a
file with queries start) and :mod:`~dgbdt.io.options` (the read options of the
command line's keys, which ``Dataset(path, params=...)`` shares).
"""

from .distributed import (
    column_block,
    read_column_block,
    read_row_part,
    run_agreed,
    write_parts_in_order,
)
from .errors import DataFormatError
from .filebytes import (
    count_lines,
    is_gzip,
    read_file_bytes,
    read_head,
    read_header_line,
    read_part,
    split_parts,
    whole_lines,
)
from .reading import first_row_width, parse_text, read_data, sniff_format
from .sidefiles import read_positions, read_query_file, read_side_files
from .values import MAX_SPARSE_COLUMNS, NA_TOKENS, LoadedData

__all__ = [
    "DataFormatError",
    "LoadedData",
    "read_data",
    "sniff_format",
    "parse_text",
    "read_part",
    "split_parts",
    "count_lines",
    "is_gzip",
    "read_header_line",
    "read_side_files",
    "read_query_file",
    "read_positions",
    "read_file_bytes",
    "read_head",
    "whole_lines",
    "first_row_width",
    "MAX_SPARSE_COLUMNS",
    "NA_TOKENS",
    "run_agreed",
    "read_row_part",
    "read_column_block",
    "column_block",
    "write_parts_in_order",
]
