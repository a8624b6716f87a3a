#!/usr/bin/env python3
"""Reads the TensorBoard event files in a folder with PyPI's tensorboard package (the venv
scripts/setup makes), for tests/train_logs_test.cc, and prints what it found as JSON:

  {"files": [names], "file_versions": [one per file], "records": N,
   "scalars": {tag: [[step, value, wall_time], ...]}}

The scalars come from tensorboard's EventAccumulator, as its scalar dashboard reads them.
That loader stops quietly at a record whose CRC is wrong, so every record is first read with
tensorboard's own record reader, which raises on a bad length, CRC or truncation: then this
exits 1 naming the file.

  tensorboard_reference.py DIR
"""
import glob
import json
import os
import sys

from tensorboard.backend.event_processing import event_accumulator
from tensorboard.compat.proto import event_pb2
from tensorboard.compat.tensorflow_stub import errors, pywrap_tensorflow


def records(path):
    reader = pywrap_tensorflow.PyRecordReader_New(path)
    while True:
        try:
            reader.GetNext()
        except errors.OutOfRangeError:
            return
        yield reader.record()


def main():
    folder = sys.argv[1]
    files = sorted(glob.glob(os.path.join(folder, "*tfevents*")))
    versions, count = [], 0
    for path in files:
        try:
            events = [event_pb2.Event.FromString(r) for r in records(path)]
        except errors.DataLossError as e:
            sys.exit(f"{os.path.basename(path)}: {e.message}")
        if not events or events[0].WhichOneof("what") != "file_version":
            sys.exit(f"{os.path.basename(path)}: the first record is not a file_version event")
        versions.append(events[0].file_version)
        count += len(events)
    accumulator = event_accumulator.EventAccumulator(folder, size_guidance={event_accumulator.SCALARS: 0})
    accumulator.Reload()
    scalars = {
        tag: [[e.step, e.value, e.wall_time] for e in accumulator.Scalars(tag)]
        for tag in accumulator.Tags()[event_accumulator.SCALARS]
    }
    print(json.dumps({"files": [os.path.basename(f) for f in files], "file_versions": versions,
                      "records": count, "scalars": scalars}))


if __name__ == "__main__":
    main()
