"""dgbdt's binary Dataset file: ``Dataset.save_binary`` writes it, ``Dataset(path)``
and ``dgbdt train data=path`` read it (recognised by its magic bytes).

Not pickle, and not LightGBM's binary format (neither reads the other's): a
fixed prefix, a JSON header, then the raw bytes of numpy arrays.  All integers
are little-endian::

    offset  bytes  field
         0     16  magic b"DGBDT-DATASET\\r\\n\\x1a" (a text-mode copy breaks the \\r\\n)
        16      4  format version, uint32 (FORMAT_VERSION)
        20      4  flags, uint32 (0)
        24      8  header length H, uint64
        32      8  payload length P, uint64
        40     32  SHA-256 of the header
        72     32  SHA-256 of the payload
       104      H  header: UTF-8 JSON {"format": "dgbdt-dataset", "version": 1,
                   "dgbdt": version, "dataset": {...}, "arrays": [...]}
     104+H      P  payload: each array's bytes at a multiple of 64

``"arrays"`` lists ``{"name", "dtype", "shape", "order", "offset"}`` in payload
order (``dtype`` a little-endian numpy code from a fixed table: never objects).
The arrays are the bin store (:func:`dgbdt.data.store.store_arrays`: dense columns,
sparse part, which features each column holds), the bin mapper
(:func:`dgbdt.data.binning.mapper_arrays`: bounds, NaN bins, categories, value
ranges, zero-as-missing flags) and the per-row fields (label, weight,
init_score, group, position, query ids, feature_indices).  ``"dataset"`` holds
the scalars: sizes, layout, feature names, categorical features,
pandas_categorical, the binning params the bins were made with, the Dataset's
params, the read keys of the text file it came from, and where it was saved
(rank, number of ranks, row_offset, n_total).

Loading checks the magic, the version (a newer one is refused, naming it), the
lengths, both digests and then every field, so that whatever the bytes a load
either gives a consistent Dataset or raises :class:`DatasetFileError` (a
ValueError) naming the file (tests/test_dataset_io.py fuzzes it).  A file of
one rank's share of the data (row-sharded or a block of columns, saved under
mpiexec) loads only on that rank of as many ranks, and every rank's file must
come from the same save (the same bins and global row count).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import struct
import warnings
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import numpy.typing as npt

from ..distributed.comm import agreed, launched_rank, launched_size, world_comm
from ..files import check_regular_file, check_writable_target, publish, temp_beside
from ..params.table import BINNING_KEYS, check_params
from ..version import __version__
from .binning import mapper_arrays, mapper_from_arrays
from .categorical import parse_categorical_spec
from .checks import (
    check_group,
    check_init_score,
    check_label,
    check_position,
    check_weight,
    raise_on_every_rank,
)
from .names import ColumnNames
from .store import store_arrays, store_from_arrays

if TYPE_CHECKING:
    from io import BufferedReader

    from .binning import AnyBinMapper
    from .dataset import Dataset
    from .store import BinStore

#: An array table entry: (name, dtype, shape, order, offset, nbytes).
_Entry = tuple[str, np.dtype, tuple[int, ...], Literal["C", "F"], int, int]

MAGIC = b"DGBDT-DATASET\r\n\x1a"
FORMAT_VERSION = 1
_PREFIX = struct.Struct("<16sIIQQ32s32s")
ALIGN = 64
MAX_HEADER_BYTES = 1 << 30
LIGHTGBM_TOKEN = b"______LightGBM_Binary_File_Token______"

# name: (allowed dtype codes, the first one written; allowed numbers of dimensions)
ARRAYS = {
    "dense": (("|u1", "<u2"), (2,)),
    "indptr": (("<i8",), (1,)),
    "entries": (("<u4",), (1,)),
    "most_freq_bins": (("<i4",), (1,)),
    "kept": (("|u1",), (1,)),
    "counts": (("<i8",), (1,)),
    "group_features": (("<i8",), (1,)),
    "group_offsets": (("<i8",), (1,)),
    "sparse_features": (("<i8",), (1,)),
    "bound_offsets": (("<i8",), (1,)),
    "upper_bounds": (("<f8",), (1,)),
    "nan_bins": (("<i4",), (1,)),
    "value_ranges": (("<f8",), (2,)),
    "zero_missing": (("|u1",), (1,)),
    "categorical": (("|u1",), (1,)),
    "category_offsets": (("<i8",), (1,)),
    "categories": (("<i8",), (1,)),
    "label": (("<f8",), (1,)),
    "weight": (("<f8",), (1,)),
    "init_score": (("<f8",), (1, 2)),
    "group": (("<i8",), (1,)),
    "position": (("<i8",), (1,)),
    "query_ids": (("<i8", "<f8"), (1,)),
    "feature_indices": (("<i8",), (1,)),
}
REQUIRED = (
    "dense",
    "indptr",
    "entries",
    "most_freq_bins",
    "kept",
    "group_features",
    "group_offsets",
    "sparse_features",
    "bound_offsets",
    "upper_bounds",
    "nan_bins",
)
ROW_FIELDS = ("label", "weight", "init_score", "group", "position")


class DatasetFileError(ValueError):
    """A file that is not a dgbdt Dataset file this dgbdt reads (the message names it)."""


def rank_path(path: str | os.PathLike[str]) -> str:
    """``path`` (str or os.PathLike) as a str, ``{rank}`` replaced by this rank
    (0 when not under mpiexec)."""
    text = os.fsdecode(os.fspath(path))
    return text.replace("{rank}", str(launched_rank())) if "{rank}" in text else text


def _head(path: str, n: int) -> bytes:
    try:
        if not os.path.isfile(path):
            return b""
        with open(path, "rb") as fh:
            return fh.read(n)
    except OSError:
        return b""


def is_dataset_file(path: str) -> bool:
    """Whether ``path`` is a regular file that starts with dgbdt's Dataset magic
    (a file cut inside the magic itself counts: its load says it is truncated)."""
    head = _head(path, len(MAGIC))
    return len(head) > 1 and MAGIC.startswith(head)


def is_lightgbm_binary(path: str) -> bool:
    """Whether ``path`` starts with LightGBM's binary Dataset token (not read here)."""
    return _head(path, len(LIGHTGBM_TOKEN)) == LIGHTGBM_TOKEN


# -- the container: prefix, header, arrays ---------------------------------------
def _aligned(n: int) -> int:
    return -(-n // ALIGN) * ALIGN


def _views(
    arrays: dict[str, np.ndarray],
) -> tuple[list[dict[str, Any]], list[memoryview], int]:
    """(table entries, byte views) of the arrays in payload order (no copies of
    C- or F-contiguous arrays)."""
    table: list[dict[str, Any]] = []
    views: list[memoryview] = []
    offset = 0
    for name, arr in arrays.items():
        arr = np.asarray(arr)
        codes = ARRAYS[name][0]
        code = arr.dtype.newbyteorder("<").str if arr.dtype.str in codes else codes[0]
        arr = arr.astype(np.dtype(code), copy=False)
        order = "F" if arr.ndim == 2 and not arr.flags.c_contiguous else "C"
        flat = np.ascontiguousarray(arr.T if order == "F" else arr)
        table.append(
            {
                "name": name,
                "dtype": code,
                "shape": list(arr.shape),
                "order": order,
                "offset": offset,
            }
        )
        views.append(flat.reshape(-1).view(np.uint8).data)
        offset = _aligned(offset + flat.nbytes)
    return table, views, offset


def write_container(
    path: str | os.PathLike[str], scalars: dict[str, Any], arrays: dict[str, np.ndarray]
) -> None:
    """Write the file ``path`` (atomically: a temp file beside it, renamed)."""
    table, views, payload_bytes = _views(arrays)
    doc = {"format": "dgbdt-dataset", "version": FORMAT_VERSION, "dgbdt": __version__}
    doc.update(dataset=scalars, arrays=table)
    header = json.dumps(doc, separators=(",", ":"), allow_nan=False).encode()
    digest = hashlib.sha256()
    pads: list[bytes] = []
    for entry, view in zip(table, views, strict=True):
        end = entry["offset"] + len(view)
        pads.append(bytes(_aligned(end) - end))
        digest.update(view)
        digest.update(pads[-1])
    prefix = _PREFIX.pack(
        MAGIC,
        FORMAT_VERSION,
        0,
        len(header),
        payload_bytes,
        hashlib.sha256(header).digest(),
        digest.digest(),
    )
    fd, tmp = temp_beside(path)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(prefix + header)
            for view, pad in zip(views, pads, strict=True):
                fh.write(view)
                fh.write(pad)
            fh.flush()
            os.fsync(fh.fileno())
        publish(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _bad(path: str | os.PathLike[str], why: str) -> DatasetFileError:
    return DatasetFileError(f"{path}: not a valid dgbdt Dataset file: {why}")


def _read_prefix(path: str, fh: BufferedReader, size: int) -> tuple[int, int, bytes, bytes]:
    """(header length, payload length, header digest, payload digest), checked."""
    raw = fh.read(_PREFIX.size)
    if raw[: len(MAGIC)] != MAGIC:
        if raw.startswith(LIGHTGBM_TOKEN):
            raise DatasetFileError(
                f"{path} is a LightGBM binary Dataset file, which dgbdt does not read: "
                "give the text data, or a file Dataset.save_binary wrote"
            )
        if len(raw) < len(MAGIC) and MAGIC.startswith(raw):
            raise _bad(path, f"it is truncated: {len(raw)} bytes, inside its magic bytes")
        raise _bad(path, "it does not start with the magic bytes of one")
    if len(raw) < _PREFIX.size:
        raise _bad(path, f"truncated ({size} bytes, the fixed header alone is {_PREFIX.size})")
    _, version, flags, n_header, n_payload, header_sha, payload_sha = _PREFIX.unpack(raw)
    if version > FORMAT_VERSION:
        raise DatasetFileError(
            f"{path} is a dgbdt Dataset file of format version {version}, written by a newer "
            f"dgbdt; this one reads versions up to {FORMAT_VERSION}: upgrade dgbdt"
        )
    if version < 1 or flags != 0:
        raise _bad(path, f"format version {version}, flags {flags}")
    if n_header > MAX_HEADER_BYTES or _PREFIX.size + n_header + n_payload != size:
        raise _bad(
            path,
            f"{size} bytes, but its header says {_PREFIX.size} + {n_header} + {n_payload} "
            "(truncated, or bytes added)",
        )
    return n_header, n_payload, header_sha, payload_sha


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not a JSON number")


def _read_header(path: str, fh: BufferedReader, n_header: int, header_sha: bytes) -> dict[str, Any]:
    data = fh.read(n_header)
    if len(data) != n_header or hashlib.sha256(data).digest() != header_sha:
        raise _bad(path, "the header's checksum does not match (corrupted)")
    try:
        doc = json.loads(data.decode("utf-8"), parse_constant=_reject_constant)
    except (ValueError, RecursionError) as exc:
        raise _bad(path, f"its header is not JSON ({exc})") from None
    if not isinstance(doc, dict) or doc.get("format") != "dgbdt-dataset":
        raise _bad(path, "its header does not say format dgbdt-dataset")
    if not isinstance(doc.get("dataset"), dict) or not isinstance(doc.get("arrays"), list):
        raise _bad(path, "its header lacks the dataset fields or the array table")
    return doc


def _table(path: str, entries: list[Any], n_payload: int) -> list[_Entry]:
    """[(name, dtype, shape, order, offset, nbytes)] of the array table, checked:
    known names once each, allowed dtypes and dimensions, consecutive offsets."""
    out: list[_Entry] = []
    offset = 0
    for entry in entries:
        if not isinstance(entry, dict) or set(entry) != {
            "name",
            "dtype",
            "shape",
            "order",
            "offset",
        }:
            raise _bad(path, f"array table entry {entry!r}")
        name, code, shape = entry["name"], entry["dtype"], entry["shape"]
        if not isinstance(name, str) or name not in ARRAYS or any(name == o[0] for o in out):
            raise _bad(path, f"array {name!r}: unknown, or listed twice")
        codes, ndims = ARRAYS[name]
        if not isinstance(code, str) or code not in codes or not isinstance(shape, list):
            raise _bad(path, f"array {name!r}: dtype {code!r}, shape {shape!r}")
        if len(shape) not in ndims:
            raise _bad(path, f"array {name!r}: dtype {code!r}, shape {shape!r}")
        if not all(type(s) is int and 0 <= s < 1 << 48 for s in shape):
            raise _bad(path, f"array {name!r}: shape {shape!r}")
        if entry["order"] not in ("C", "F") or entry["offset"] != offset:
            raise _bad(
                path, f"array {name!r}: order {entry['order']!r}, offset {entry['offset']!r}"
            )
        dtype = np.dtype(code)
        nbytes = math.prod(shape) * dtype.itemsize
        out.append((name, dtype, tuple(shape), entry["order"], offset, nbytes))
        offset = _aligned(offset + nbytes)
    if offset != n_payload:  # (checked before anything is allocated)
        raise _bad(path, f"its arrays take {offset} bytes, its payload is {n_payload}")
    missing = [n for n in REQUIRED if n not in {o[0] for o in out}]
    if missing:
        raise _bad(path, f"arrays {missing} are missing")
    return out


def _read_arrays(
    path: str, fh: BufferedReader, table: list[_Entry], n_payload: int, payload_sha: bytes
) -> dict[str, np.ndarray]:
    """The arrays, read straight into their buffers (no copy of the file)."""
    arrays: dict[str, np.ndarray] = {}
    digest, at = hashlib.sha256(), 0
    for name, dtype, shape, order, offset, nbytes in table:
        pad = fh.read(offset - at)
        buf = np.empty(nbytes, np.uint8)
        got = fh.readinto(buf.data)
        if len(pad) != offset - at or got != nbytes:
            raise _bad(path, "truncated")
        digest.update(pad)
        digest.update(buf.data)
        arr = buf.view(dtype).reshape(shape, order=order)
        arrays[name] = arr.astype(dtype.newbyteorder("="), copy=False)
        at = offset + nbytes
    digest.update(fh.read(n_payload - at))
    if digest.digest() != payload_sha:
        raise _bad(path, "the arrays' checksum does not match (corrupted)")
    return arrays


def read_container(path: str) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """(the header's ``dataset`` dict, {name: array}) of the file ``path``."""
    check_regular_file(path, "Dataset file")
    with open(path, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        n_header, n_payload, header_sha, payload_sha = _read_prefix(path, fh, size)
        doc = _read_header(path, fh, n_header, header_sha)
        table = _table(path, doc["arrays"], n_payload)
        return doc["dataset"], _read_arrays(path, fh, table, n_payload, payload_sha)


# -- a Dataset's fields ------------------------------------------------------------
def _jsonable(value: Any, name: str) -> Any:
    """``value`` as JSON data (numpy scalars and arrays, tuples made plain);
    anything else a ValueError naming ``name``."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float) and math.isfinite(value):
        return value
    if isinstance(value, (list, tuple)):
        return [_jsonable(v, name) for v in value]
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {k: _jsonable(v, f"{name}[{k!r}]") for k, v in value.items()}
    raise ValueError(f"cannot save {name}: {value!r} is not JSON data")


def _shard_of(dataset: Dataset) -> bool:
    """Whether the Dataset holds one rank's share of the data (saved under mpiexec:
    row-sharded bins, a block of columns, or a text file read by byte range)."""
    read = dataset._read
    return launched_size() > 1 and (
        (dataset._binning or {}).get("ranks", 1) not in (None, 1)
        or dataset.feature_indices is not None
        or (read is not None and read.mode != "whole")
    )


def _dataset_fields(dataset: Dataset) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """(scalars, arrays) of a constructed Dataset."""
    assert dataset.store is not None and dataset.bin_mapper is not None  # (constructed)
    arrays, meta = store_arrays(dataset.store)
    arrays.update(mapper_arrays(dataset.bin_mapper))
    if dataset.used_features is not None:  # a wide Dataset: its binned columns
        arrays["used_features"] = np.asarray(dataset.used_features, np.int64)
        arrays["empty_range"] = np.asarray(dataset._empty_range, np.float64)
    for name in (*ROW_FIELDS, "query_ids", "feature_indices"):
        value = getattr(dataset, name)
        if value is not None:
            arrays[name] = value
    spec = dataset.categorical_feature
    scalars = {
        "n_samples": int(dataset.n_samples),
        "n_features": int(dataset.n_features),
        "layout": dataset.layout,
        "plain": bool(meta["plain"]),
        # Default names of a wide Dataset are made on load, not stored.
        "feature_name": None if _default_names(dataset) else list(dataset.feature_name),
        "categorical_feature": spec if spec == "auto" else list(spec),
        "auto_categorical": [int(c) for c in dataset._auto_categorical],
        "pandas_categorical": _jsonable(dataset.pandas_categorical, "pandas_categorical"),
        "binning": _jsonable(dataset._binning, "the binning params"),
        "params": _jsonable(dataset.params, "the Dataset's params"),
        "read_params": _jsonable(dataset.read_params, "read_params"),
        "free_raw_data": bool(dataset.free_raw_data),
        "row_offset": int(dataset.row_offset),
        "n_total": int(dataset.n_total),
        "rank": launched_rank(),
        "n_ranks": launched_size(),
        "sharded": _shard_of(dataset),
    }
    return scalars, arrays


def _default_names(dataset: Dataset) -> bool:

    return isinstance(dataset.feature_name, ColumnNames)


def write_dataset_file(dataset: Dataset, path: str) -> None:
    """Write a constructed Dataset to ``path`` (see the module docstring)."""
    check_writable_target(path)
    scalars, arrays = _dataset_fields(dataset)
    write_container(path, scalars, arrays)


_INT_KEYS = ("n_samples", "n_features", "row_offset", "n_total", "rank", "n_ranks")
_BOOL_KEYS = ("plain", "free_raw_data", "sharded")


def _check_scalars(d: dict[str, Any]) -> dict[str, Any]:
    """The header's dataset fields, their types and ranges checked (ValueError)."""
    for key in _INT_KEYS:
        if type(d.get(key)) is not int or d[key] < 0:
            raise ValueError(f"field {key!r} must be an integer >= 0, got {d.get(key)!r}")
    for key in _BOOL_KEYS:
        if type(d.get(key)) is not bool:
            raise ValueError(f"field {key!r} must be true or false, got {d.get(key)!r}")
    if d.get("layout") not in ("row", "col"):
        raise ValueError(f"field 'layout' must be 'row' or 'col', got {d.get('layout')!r}")
    if d["rank"] >= max(d["n_ranks"], 1) or d["row_offset"] + d["n_samples"] > d["n_total"]:
        raise ValueError("fields rank, n_ranks, row_offset, n_samples, n_total disagree")
    if "feature_name" not in d:
        raise ValueError("field 'feature_name' is missing")
    names = d["feature_name"]
    if names is None:  # default names (Column_0, ...), made on load
        return _check_rest(d)
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise ValueError("field 'feature_name' must be a list of names")
    if len(names) != d["n_features"] or len(set(names)) != len(names):
        raise ValueError(f"field 'feature_name' must hold {d['n_features']} distinct names")
    return _check_rest(d)


def _check_rest(d: dict[str, Any]) -> dict[str, Any]:
    auto = d.get("auto_categorical")
    if not isinstance(auto, list) or not all(
        type(c) is int and 0 <= c < d["n_features"] for c in auto
    ):
        raise ValueError("field 'auto_categorical' must list column numbers")
    for key in ("params", "read_params"):
        if not isinstance(d.get(key), dict):
            raise ValueError(f"field {key!r} must be an object")
    _check_params(d["params"])
    _check_pandas_categorical(d.get("pandas_categorical", 0))
    d["binning"] = _checked_binning(d.get("binning"), d["n_features"])
    return d


def _check_params(params: dict[str, Any]) -> None:
    """The saved Dataset params must be valid ones (training resolves them)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (LightGBM-only keys: warned about at training)
        try:
            check_params(params)
        except (ValueError, TypeError) as exc:
            raise ValueError(f"field 'params': {exc}") from None


def _check_pandas_categorical(value: Any) -> None:
    scalars = (str, int, float, bool, type(None))
    if value is not None and not (
        isinstance(value, list)
        and all(isinstance(c, list) and all(isinstance(v, scalars) for v in c) for c in value)
    ):
        raise ValueError("field 'pandas_categorical' must be null or lists of categories")


def _checked_binning(binning: Any, n_features: int) -> dict[str, Any]:
    """The binning params as Dataset._binning holds them (lists back to tuples)."""
    keys: tuple[str, ...] = (*BINNING_KEYS, "ranks", "filtered", "categorical")
    if isinstance(binning, dict) and set(binning) == {*keys, "wide"}:
        # (files of a Dataset that binned only the columns holding values)
        if binning["wide"] not in (None, True, False):
            raise ValueError(f"field binning['wide'] = {binning['wide']!r}")
        keys = (*keys, "wide")
    elif not isinstance(binning, dict) or set(binning) != set(keys):
        raise ValueError(f"field 'binning' must hold exactly {list(keys)}")
    out: dict[str, Any] = {"wide": None}
    for key in keys:
        value = binning[key]
        is_int = type(value) is int
        if key == "wide":
            ok = True  # checked above
        elif key in ("max_bin_by_feature", "filtered", "categorical"):
            ok = (value is None and key == "max_bin_by_feature") or (
                isinstance(value, list) and all(type(v) is int for v in value)
            )
            value = tuple(value) if isinstance(value, list) else value
        elif key in ("seed", "ranks"):
            ok = value is None or is_int
        elif key in ("max_bin", "min_data_in_bin", "bin_construct_sample_cnt"):
            ok = is_int
        else:
            ok = type(value) is bool
        if not ok:
            raise ValueError(f"field binning[{key!r}] = {binning[key]!r}")
        out[key] = value
    if any(not 0 <= f < n_features for f in out["filtered"] + out["categorical"]):
        raise ValueError("field binning: feature numbers out of range")
    return out


def _row_fields(arrays: dict[str, np.ndarray], n_samples: int) -> dict[str, np.ndarray | None]:
    """The per-row fields, checked as the Dataset constructor checks them."""
    for name in ("label", "weight", "position"):
        value = arrays.get(name)
        if value is not None and value.shape != (n_samples,):
            raise ValueError(f"{name} has shape {value.shape}, expected ({n_samples},)")
    init = arrays.get("init_score")
    if init is not None and init.ndim == 2 and init.shape[0] != n_samples:
        raise ValueError(f"init_score has shape {init.shape}: one row per sample")
    out = {
        "label": check_label(arrays.get("label")),
        "weight": check_weight(arrays.get("weight")),
        "init_score": check_init_score(init, n_samples),
        "group": check_group(arrays.get("group"), n_samples),
        "position": check_position(arrays.get("position"), n_samples),
    }
    ids = arrays.get("query_ids")
    if ids is not None and (out["group"] is None or len(ids) != len(out["group"])):
        raise ValueError("query_ids needs group, with one id per query")
    return out


def _checked_fields(
    path: str, scalars: dict[str, Any], arrays: dict[str, np.ndarray]
) -> tuple[dict[str, Any], AnyBinMapper, BinStore, dict[str, np.ndarray | None]]:
    """(scalars, mapper, store, row fields) of a file, all checked."""
    try:
        scalars = _check_scalars(scalars)
        n, n_features = scalars["n_samples"], scalars["n_features"]
        spec = scalars.get("categorical_feature")
        if spec != "auto" and not isinstance(spec, list):
            raise ValueError("field 'categorical_feature' must be 'auto' or a list")
        scalars["categorical_feature"] = parse_categorical_spec(spec)
        mapper = mapper_from_arrays(arrays)
        used = _used_features(arrays, n_features)
        n_binned = n_features if used is None else len(used)
        if mapper.n_features != n_binned:
            raise ValueError(f"the bins describe {mapper.n_features} features, not {n_binned}")
        meta = {"n_samples": n, "layout": scalars["layout"], "plain": scalars["plain"]}
        order = np.ascontiguousarray if scalars["layout"] == "row" else np.asfortranarray
        arrays["dense"] = order(arrays["dense"])
        store = store_from_arrays(arrays, meta, mapper)
        store.columns = used
        rows = _row_fields(arrays, n)
        block = arrays.get("feature_indices")
        if block is not None and (block.shape != (n_features,) or np.any(block < 0)):
            raise ValueError(f"feature_indices must hold {n_features} column numbers >= 0")
    except (ValueError, TypeError) as exc:
        raise _bad(path, str(exc)) from None
    return scalars, mapper, store, rows


def _used_features(arrays: dict[str, np.ndarray], n_features: int) -> npt.NDArray[np.int64] | None:
    """The binned columns of a wide Dataset's file (sorted, distinct, in range),
    else None."""
    used = arrays.get("used_features")
    if used is None:
        return None
    if used.dtype != np.int64 or used.ndim != 1 or np.any(np.diff(used) <= 0):
        raise ValueError("used_features must be increasing int64 column numbers")
    if len(used) and not 0 <= used[0] <= used[-1] < n_features:
        raise ValueError(f"used_features must be column numbers below {n_features}")
    empty = arrays.get("empty_range")
    if empty is None or empty.shape != (2,) or empty.dtype != np.float64:
        raise ValueError("a file with used_features needs empty_range (2 float64)")
    return used


def _shard_digest(scalars: dict[str, Any], mapper: AnyBinMapper, block: np.ndarray | None) -> str:
    """What every rank's file of one save shares: the binning, the global row count
    and (rows sharded: every rank holds all features) the bins."""
    digest = hashlib.sha256(
        json.dumps([scalars["binning"], scalars["n_total"], scalars["n_ranks"]]).encode()
    )
    if block is None:
        for value in mapper_arrays(mapper).values():
            digest.update(np.ascontiguousarray(value).tobytes())
    return digest.hexdigest()


def _check_shard(
    path: str, scalars: dict[str, Any], mapper: AnyBinMapper, block: np.ndarray | None
) -> None:
    """A file of one rank's share loads on that rank of as many ranks only, and
    all ranks' files must come from one save (checked together: every rank
    raises alike)."""
    saved, here = (scalars["rank"], scalars["n_ranks"]), (launched_rank(), launched_size())
    if not scalars["sharded"]:
        return
    error: DatasetFileError | None = None
    if saved != here:
        error = DatasetFileError(
            f"{path} holds rank {saved[0]}'s share of data saved on {saved[1]} ranks; "
            f"this is rank {here[0]} of {here[1]}: load each rank's own file on as many "
            "ranks (e.g. Dataset('train.{rank}.bin'))"
        )
    if here[1] <= 1:
        if error is not None:
            raise error
        return
    comm = world_comm()
    raise_on_every_rank(comm, error, f"cannot load their Dataset files ({path} here)")
    counts = comm.per_rank(scalars["n_samples"])
    unlike = comm.ranks_unlike_rank0(_shard_digest(scalars, mapper, block))
    rows_sharded = scalars["binning"]["ranks"] not in (None, 1)
    starts = comm.per_rank(scalars["row_offset"])
    if rows_sharded and not len(unlike):  # (gathered numbers: alike on every rank)
        expected = np.concatenate([[0], np.cumsum(counts)[:-1]])
        unlike = np.flatnonzero(starts != expected).tolist()
        if not unlike and int(counts.sum()) != scalars["n_total"]:
            unlike = list(range(comm.size))
    if len(unlike):
        raise agreed(
            DatasetFileError(
                f"{path}: the Dataset files of rank(s) {list(unlike)} do not come from the "
                "same save as rank 0's (other bins, binning params or rows)"
            )
        )


def load_into(dataset: Dataset, path: str, rows: dict[str, Any], given: dict[str, Any]) -> None:
    """Fill ``dataset`` (``Dataset(path)`` of a file save_binary wrote) from the
    file; ``rows`` (label, weight, init_score, group, position) and ``given``
    (feature_name, reference, params, free_raw_data, feature_indices) are the
    constructor's other arguments: given ones replace the file's (params are
    merged over the saved ones)."""
    scalars, arrays = read_container(path)
    scalars, mapper, store, fields = _checked_fields(path, scalars, arrays)
    block = arrays.get("feature_indices")
    _check_shard(path, scalars, mapper, block)
    _restore(dataset, scalars, mapper, store)
    dataset.binary_file = os.fspath(path)  # the bins are fixed: nothing to re-bin from
    dataset.label, dataset.weight = fields["label"], fields["weight"]
    dataset.init_score, dataset.group = fields["init_score"], fields["group"]
    dataset.position, dataset.query_ids = fields["position"], arrays.get("query_ids")
    dataset.feature_indices = block
    dataset.used_features = store.columns
    if store.columns is not None:
        dataset._empty_range = tuple(arrays["empty_range"].tolist())
    _apply_given(dataset, path, rows, given)


def _restore(
    dataset: Dataset, scalars: dict[str, Any], mapper: AnyBinMapper, store: BinStore
) -> None:
    """The Dataset's attributes as the constructor and construct() set them."""
    dataset.categorical_feature = scalars["categorical_feature"]
    dataset.pandas_categorical = scalars["pandas_categorical"]
    dataset.read_params = scalars["read_params"]
    dataset._source = None  # no raw data: the bins are the data
    dataset._auto_categorical = tuple(scalars["auto_categorical"])
    dataset.n_samples, dataset.n_features = scalars["n_samples"], scalars["n_features"]
    dataset.reference, dataset._reference_from_train = None, False
    dataset.params = scalars["params"]
    dataset.free_raw_data = scalars["free_raw_data"]
    names = scalars["feature_name"]
    dataset.feature_name = ColumnNames(dataset.n_features) if names is None else list(names)
    dataset.bin_mapper, dataset.store = mapper, store
    dataset.row_offset, dataset.n_total = scalars["row_offset"], scalars["n_total"]
    dataset.layout = scalars["layout"]
    dataset._binning = scalars["binning"]


def _apply_given(dataset: Dataset, path: str, rows: dict[str, Any], given: dict[str, Any]) -> None:
    setters = {
        "label": dataset.set_label,
        "weight": dataset.set_weight,
        "init_score": dataset.set_init_score,
        "group": dataset.set_group,
        "position": dataset.set_position,
    }
    for name, value in rows.items():
        if value is not None:
            setters[name](value)
    if given["feature_name"] not in ("auto", None):
        dataset.feature_name = dataset._feature_names(given["feature_name"])
    if given["categorical_feature"] != "auto":
        dataset.categorical_feature = given["categorical_feature"]
    if given["reference"] is not None:
        dataset.reference = given["reference"]
    dataset.params = {**dataset.params, **dict(given["params"] or {})}
    dataset.free_raw_data = given["free_raw_data"]
    block = given["feature_indices"]
    if block is not None:
        block = np.asarray(block, np.int64).ravel()
        saved = dataset.feature_indices
        if saved is None or not np.array_equal(block, saved):
            raise ValueError(
                f"feature_indices {block.tolist()[:10]} differ from those {path} was saved "
                f"with ({None if saved is None else saved.tolist()[:10]})"
            )
