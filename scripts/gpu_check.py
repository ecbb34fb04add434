#!/usr/bin/env python3
"""The GPU megakernel end to end on every fixture, for a machine with a GPU:
each fixture compiled to a .mk (`mkc compile --emit=mk`), run teacher-forced
by `mkrun --device gpu`, and compared with `mkc eval --engine=schedule` (the
CPU executor, f32 weights) and with onnxruntime; greedy generation on the GPU
is compared with `mkrun --device cpu` on the same .mk. Prints one row per
fixture and exits 1 when a comparison fails.

  python3 scripts/gpu_check.py --build build [--max-context 256] [FIXTURE.onnx ...]

Tolerances: the .mk holds bf16 weights, so logits are compared with rtol
2e-2 (max |a - b| / max |b|), and the argmax only where the reference's top-2
gap exceeds 0.1. Without a GPU every row says why and the exit code is 77.
"""
import argparse
import glob
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

TOKENS = [1, 7, 42, 3, 99, 5, 11, 64, 2, 17, 33, 8, 120, 4, 9, 77, 31, 6, 15, 50,
          23, 88, 12, 40]
PROMPT = TOKENS[:6]
NEW_TOKENS = 24
RTOL = 2e-2
GAP = 0.1
NO_DEVICE = 3  # mkrun's exit code when the device is unavailable
SKIP = 77


def relative_error(actual, expected):
    return float(np.max(np.abs(actual - expected)) / np.max(np.abs(expected)))


def greedy_agreement(actual, expected):
    clear = agree = 0
    for a, e in zip(actual, expected):
        top2 = np.sort(e)[-2:]
        if top2[1] - top2[0] > GAP:
            clear += 1
            agree += int(np.argmax(a) == np.argmax(e))
    return agree, clear


def run(command):
    return subprocess.run(command, capture_output=True, text=True)


def generated_tokens(output):
    for line in output.splitlines():
        if line.startswith("tokens:"):
            return [int(t) for t in line.split()[1:]]
    return None


class Row:
    def __init__(self, name):
        self.name, self.cells, self.failed, self.skipped = name, [], False, False

    def fail(self, text):
        self.cells.append("FAIL " + text)
        self.failed = True

    def check(self, passed, text):
        self.cells.append(text) if passed else self.fail(text)


def check_fixture(fixture, tools, tmp, max_context, ort_logits):
    name = os.path.splitext(os.path.basename(fixture))[0]
    row = Row(name)
    mk = os.path.join(tmp, name + ".mk")
    tokens = ",".join(map(str, TOKENS))
    compiled = run([tools["mkc"], "compile", fixture, "--emit=mk", "-o", mk,
                    f"--max-context={max_context}"])
    if compiled.returncode != 0:
        row.fail("mkc compile --emit=mk: " + compiled.stderr.strip())
        return row

    gpu_npy = os.path.join(tmp, name + ".gpu.npy")
    gpu = run([tools["mkrun"], mk, "--device", "gpu", "--tokens", tokens, "--logits", gpu_npy])
    if gpu.returncode == NO_DEVICE:
        row.cells.append("skipped: " + gpu.stderr.strip())
        row.skipped = True
        return row
    if gpu.returncode != 0:
        row.fail("mkrun --device gpu: " + gpu.stderr.strip())
        return row
    ours = np.load(gpu_npy)

    schedule_npy = os.path.join(tmp, name + ".schedule.npy")
    schedule = run([tools["mkc"], "eval", fixture, "--tokens", tokens, "--logits", schedule_npy,
                    "--engine=schedule", f"--max-context={max_context}"])
    if schedule.returncode != 0:
        row.fail("mkc eval: " + schedule.stderr.strip())
    else:
        reference = np.load(schedule_npy)
        error = relative_error(ours, reference)
        agree, clear = greedy_agreement(ours, reference)
        row.check(error <= RTOL and agree == clear,
                  f"vs schedule {error:.1e}, argmax {agree}/{clear}")

    if ort_logits is not None:
        reference = ort_logits(fixture, TOKENS)
        error = relative_error(ours, reference)
        agree, clear = greedy_agreement(ours, reference)
        row.check(error <= RTOL and agree == clear,
                  f"vs onnxruntime {error:.1e}, argmax {agree}/{clear}")

    prompt = ",".join(map(str, PROMPT))
    outputs = {}
    for device in ("gpu", "cpu"):
        generated = run([tools["mkrun"], mk, "--device", device, "--prompt-tokens", prompt,
                         "-n", str(NEW_TOKENS)])
        outputs[device] = generated
        if generated.returncode != 0:
            row.fail(f"mkrun --device {device} -n: " + generated.stderr.strip())
            return row
    gpu_tokens = generated_tokens(outputs["gpu"].stdout)
    cpu_tokens = generated_tokens(outputs["cpu"].stdout)
    same = sum(int(a == b) for a, b in zip(gpu_tokens or [], cpu_tokens or []))
    speed = next((line.split(":", 1)[1].strip() for line in outputs["gpu"].stdout.splitlines()
                  if "ms/token" in line), "")
    row.check(gpu_tokens is not None and gpu_tokens == cpu_tokens,
              f"generation {same}/{len(cpu_tokens or [])} as the CPU ({speed})")
    return row


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--max-context", type=int, default=256)
    ap.add_argument("fixtures", nargs="*")
    a = ap.parse_args()
    tools = {"mkc": os.path.join(a.build, "compiler", "tools", "mkc"),
             "mkrun": os.path.join(a.build, "runtime", "mkrun", "mkrun")}
    for tool, path in tools.items():
        if not os.access(path, os.X_OK):
            print(f"{tool} not found at {path}: build the tree first (--build)")
            return 2
    fixtures = a.fixtures or sorted(glob.glob(os.path.join(ROOT, "tests", "fixtures", "*.onnx")))
    try:
        from ort_logits import teacher_forced_logits as ort_logits
    except ImportError as error:
        print(f"onnxruntime unavailable ({error}): comparing with the schedule only")
        ort_logits = None

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for fixture in fixtures:
            row = check_fixture(fixture, tools, tmp, a.max_context, ort_logits)
            rows.append(row)
            print(f"{row.name:24} " + " | ".join(row.cells), flush=True)
            if row.skipped:
                print(f"the other {len(fixtures) - 1} fixtures are skipped for the same reason")
                return SKIP
    failed = [row.name for row in rows if row.failed]
    if failed:
        print(f"FAIL: {len(failed)} of {len(rows)} fixtures: {', '.join(failed)}")
        return 1
    print(f"all {len(rows)} fixtures agree")
    return 0


if __name__ == "__main__":
    sys.exit(main())
