"""Rank script: ``Dataset(path)`` and ``save_binary`` on K ranks (tests/test_dataset_io.py).

argv: K, OUT.  OUT holds ``train.csv`` (header; label ``y``, weight column ``w``)
and ``rank.csv`` (label ``y``, query column ``qid``).  Every rank reads only its
byte range of them (a whole-file read is recorded), trains data-parallel,
saves its share with ``save_binary("train.{rank}.bin")``, loads it back and
trains again.  Loading the next rank's file must fail on every rank alike, and
a Dataset read whole (no tree_learner in its params) must be refused by the
row-sharded training.  Rank 0 writes the models; rank r writes OUT/rank{r}.json.
"""

import json
import pathlib
import sys
import warnings

import dgbdt
import dgbdt.io.reading as reading
from dgbdt.distributed.comm import world_comm

k, out = int(sys.argv[1]), pathlib.Path(sys.argv[2])
comm = world_comm()
assert comm.size == k, f"world size {comm.size}, expected {k}: wrong mpiexec?"
warnings.simplefilter("ignore")
PARAMS = {
    "objective": "binary",
    "num_leaves": 7,
    "min_data_in_leaf": 5,
    "verbosity": -1,
    "tree_learner": "data",
}
RANKING = {**PARAMS, "objective": "lambdarank", "min_data_in_leaf": 2}
READ = {"header": True, "label_column": "name:y", "weight_column": "name:w"}
whole_reads = []
read_file_bytes = reading.read_file_bytes


def recording_read(path, *args, **kwargs):
    whole_reads.append(str(path))
    return read_file_bytes(path, *args, **kwargs)


reading.read_file_bytes = recording_read  # read_data's whole-file read
result = {}
text = dgbdt.Dataset(out / "train.csv", params={**READ, **PARAMS})
result["n_samples"] = text.n_samples
text_model = dgbdt.train(PARAMS, text, 5)
RANK_READ = {"header": True, "label_column": "name:y", "group_column": "name:qid"}
ranked = dgbdt.Dataset(out / "rank.csv", params={**RANK_READ, "tree_learner": "data"})
result["groups"] = ranked.group.tolist()
rank_model = dgbdt.train(RANKING, ranked, 3)

shard = dgbdt.Dataset(out / "train.csv", params={**READ, **PARAMS})
shard.save_binary(out / "train.{rank}.bin")
loaded = dgbdt.Dataset(out / "train.{rank}.bin")
result["loaded"] = [loaded.n_samples, loaded.row_offset, loaded.n_total]
binary_model = dgbdt.train(PARAMS, loaded, 5)
result["whole_reads"] = list(whole_reads)  # (before the whole read below)
try:
    dgbdt.Dataset(out / f"train.{(comm.rank + 1) % k}.bin")
    result["other_rank"] = None
except ValueError as exc:
    result["other_rank"] = str(exc)
whole = dgbdt.Dataset(out / "train.csv", params=READ)  # every row on every rank
try:
    dgbdt.train(PARAMS, whole, 1)
    result["whole"] = None
except ValueError as exc:
    result["whole"] = str(exc)
if comm.rank == 0:
    text_model.save_model(out / "text_model.json")
    rank_model.save_model(out / "rank_model.json")
    binary_model.save_model(out / "binary_model.json")
(out / f"rank{comm.rank}.json").write_text(json.dumps(result))
