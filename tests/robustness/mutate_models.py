#!/usr/bin/env python3
"""Corrupted models must be refused, never crash or hang the importer.

Flips random bytes of a fixture (a fixed seed, so failures reproduce) and runs
`mkc import` on each copy: it must exit 0 (the flip hit a weight value) or 2
(refused with a message), within a time limit, and never die from a signal.

  mutate_models.py --mkc build/compiler/tools/mkc MODEL.onnx [--count 60]
"""
import argparse
import os
import random
import subprocess
import sys
import tempfile


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mkc", required=True)
    ap.add_argument("--count", type=int, default=60)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("model")
    a = ap.parse_args()
    original = open(a.model, "rb").read()
    rng = random.Random(a.seed)
    outcomes = {0: 0, 2: 0}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "mutated.onnx")
        for i in range(a.count):
            data = bytearray(original)
            # Most of the file is weight bytes; aim half the flips at the
            # first 4 KiB, where the graph structure is.
            for _ in range(rng.randint(1, 8)):
                limit = min(len(data), 4096) if rng.random() < 0.5 else len(data)
                data[rng.randrange(limit)] = rng.randrange(256)
            if rng.random() < 0.2:
                data = data[: rng.randrange(len(data))]
            open(path, "wb").write(data)
            try:
                run = subprocess.run([a.mkc, "import", path], capture_output=True, text=True, errors="replace",
                                     timeout=60)
            except subprocess.TimeoutExpired:
                print(f"FAIL: mutation {i} hung the importer")
                return 1
            if run.returncode not in outcomes:
                print(f"FAIL: mutation {i}: exit code {run.returncode}\n{run.stderr[-2000:]}")
                return 1
            if run.returncode == 2 and "mkc: error:" not in run.stderr:
                print(f"FAIL: mutation {i}: refused without a message")
                return 1
            outcomes[run.returncode] += 1
    print(f"{a.count} mutations of {os.path.basename(a.model)}: {outcomes[0]} imported, "
          f"{outcomes[2]} refused with a message, none crashed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
