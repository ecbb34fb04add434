#!/usr/bin/env python3
"""The GPU megakernel end to end on every fixture, for a machine with a GPU:
each fixture compiled to a .mk (`mkc compile --emit=mk`); `mkrun --device
gpu` generates 32 tokens greedily after an 8-token prompt; then the whole
sequence (prompt and generated tokens) is run teacher-forced by `mkrun
--device gpu` and compared step by step with `mkc eval --engine=schedule`
(the CPU executor, f32 weights) and with onnxruntime; the GPU's generation is
compared with `mkrun --device cpu` on the same .mk; sampling, streaming and
cancelling as the CPU's; and a 40-token prompt, which runs layer by layer,
against the same prompt fed one token a step. Prints one row per fixture
and exits 1 when a comparison fails.

  python3 scripts/gpu_check.py --build build [--max-context 256] [--arch sm_90a] [FIXTURE.onnx ...]

Tolerances: the .mk holds bf16 weights, so the logits of every step are
compared with rtol 2e-2 (max |a - b| / max |b| over that step's row), and
tokens only where the reference's top-2 gap exceeds 0.1. Without a GPU every
row says why and the exit code is 77.
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
from compare_logits import compare_decode  # noqa: E402

PROMPT = [1, 7, 42, 3, 99, 5, 11, 64]
NEW_TOKENS = 32
RTOL = 2e-2
GAP = 0.1
NO_DEVICE = 3  # mkrun's exit code when the device is unavailable
SKIP = 77


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


def compare(row, label, ours, generated, reference):
    """Row t of the teacher-forced logits follows token t of the sequence."""
    passed, text = compare_decode(ours, reference, RTOL, GAP, generated, len(PROMPT))
    row.check(passed, f"vs {label}: {text}")


def check_fixture(fixture, tools, tmp, max_context, arch, ort_logits):
    name = os.path.splitext(os.path.basename(fixture))[0]
    row = Row(name)
    mk = os.path.join(tmp, name + ".mk")
    command = [tools["mkc"], "compile", fixture, "--emit=mk", "-o", mk,
               f"--max-context={max_context}"]
    compiled = run(command + ([f"--arch={arch}"] if arch else []))
    if compiled.returncode != 0:
        row.fail("mkc compile --emit=mk: " + compiled.stderr.strip())
        return row

    prompt = ",".join(map(str, PROMPT))
    outputs = {}
    for device in ("gpu", "cpu"):
        outputs[device] = run([tools["mkrun"], mk, "--device", device, "--prompt-tokens", prompt,
                               "-n", str(NEW_TOKENS)])
        if device == "gpu" and outputs[device].returncode == NO_DEVICE:
            row.cells.append("skipped: " + outputs[device].stderr.strip())
            row.skipped = True
            return row
        if outputs[device].returncode != 0:
            row.fail(f"mkrun --device {device} -n: " + outputs[device].stderr.strip())
            return row
    generated = generated_tokens(outputs["gpu"].stdout) or []
    cpu_tokens = generated_tokens(outputs["cpu"].stdout) or []
    if len(generated) != NEW_TOKENS:
        row.fail(f"the GPU generated {len(generated)} tokens, not {NEW_TOKENS} (EOS?)")
        return row

    # The sequence the GPU produced; its last token is returned, not fed.
    sequence = PROMPT + generated[:-1]
    tokens = ",".join(map(str, sequence))
    gpu_npy = os.path.join(tmp, name + ".gpu.npy")
    gpu = run([tools["mkrun"], mk, "--device", "gpu", "--tokens", tokens, "--logits", gpu_npy])
    if gpu.returncode != 0:
        row.fail("mkrun --device gpu --tokens: " + gpu.stderr.strip())
        return row
    ours = np.load(gpu_npy)
    # Generation feeds back the argmax inside the kernel: teacher forcing
    # the same tokens must reproduce it exactly.
    replayed = [int(t) for t in np.argmax(ours[len(PROMPT) - 1:], axis=1)]
    row.check(replayed == generated, "generation = teacher-forced argmax" if replayed == generated
              else f"generation differs from the teacher-forced argmax: {generated} vs {replayed}")

    schedule_npy = os.path.join(tmp, name + ".schedule.npy")
    schedule = run([tools["mkc"], "eval", fixture, "--tokens", tokens, "--logits", schedule_npy,
                    "--engine=schedule", f"--max-context={max_context}"])
    if schedule.returncode != 0:
        row.fail("mkc eval: " + schedule.stderr.strip())
    else:
        compare(row, "schedule", ours, generated, np.load(schedule_npy))
    if ort_logits is not None:
        compare(row, "onnxruntime", ours, generated, ort_logits(fixture, sequence))

    same = sum(int(a == b) for a, b in zip(generated, cpu_tokens))
    speed = next((line.split(":", 1)[1].strip() for line in outputs["gpu"].stdout.splitlines()
                  if "ms/token" in line), "")
    row.check(generated == cpu_tokens,
              f"generation {same}/{len(cpu_tokens)} as the CPU ({speed})")
    check_sampling(row, tools, mk, prompt)
    check_long_prompt(row, tools, mk, tmp, name)
    return row


# Past the 32 tokens from which the GPU runs a prompt layer by layer.
LONG_PROMPT = [(7 * i + 3) % 90 + 1 for i in range(40)]


def check_long_prompt(row, tools, mk, tmp, name):
    """A prompt layer by layer, its first new token from its own last row,
    then decode: the greedy tokens are those of the prompt fed one token a
    step up to the first step whose top-2 gap is within GAP (the layer by
    layer GEMMs' bf16 inputs move the logits), streamed or not; cancelled
    after one token, only the prompt's own."""
    prompt = ",".join(map(str, LONG_PROMPT))
    runs = {}
    for label, extra in (("layered", []), ("by step", ["--prompt-by-step"]),
                         ("stream", ["--stream"]), ("cancel", ["--cancel-after", "1"])):
        out = run([tools["mkrun"], mk, "--device", "gpu", "--prompt-tokens", prompt,
                   "-n", "16"] + extra)
        if out.returncode != 0:
            row.fail(f"mkrun, a prompt of {len(LONG_PROMPT)} {' '.join(extra)}: "
                     + out.stderr.strip())
            return
        runs[label] = generated_tokens(out.stdout) or []
    reference = runs["by step"]
    npy = os.path.join(tmp, name + ".long.npy")
    tokens = ",".join(map(str, LONG_PROMPT + reference[:-1]))
    forced = run([tools["mkrun"], mk, "--device", "gpu", "--tokens", tokens, "--logits", npy])
    if forced.returncode != 0:
        row.fail("mkrun --tokens, a long prompt: " + forced.stderr.strip())
        return
    logits = np.load(npy)[len(LONG_PROMPT) - 1:]
    clear = 0
    for step in logits:
        top = np.sort(step)[-2:]
        if top[1] - top[0] <= GAP:
            break
        clear += 1
    same = runs["layered"][:clear] == reference[:clear]
    row.check(same and len(runs["layered"]) == len(reference),
              f"a prompt of {len(LONG_PROMPT)} layer by layer: {clear} clear tokens as by step"
              if same else f"a prompt of {len(LONG_PROMPT)} layer by layer: {runs['layered']} "
              f"against {reference} by step, the first {clear} clear")
    row.check(runs["stream"] == runs["layered"], "long prompt streamed = not streamed")
    row.check(runs["cancel"] == runs["layered"][:1], "long prompt cancelled after 1")


SAMPLING = ["--temperature", "0.9", "--top-k", "50", "--top-p", "0.95", "--min-p", "0.02",
            "--repetition-penalty", "1.3", "--seed", "7"]


def check_sampling(row, tools, mk, prompt):
    """Sampled in the kernel with a fixed seed: the GPU's tokens are the
    CPU's, streamed or not; --cancel-after stops the running kernel."""
    runs = {}
    for name, device, extra in (("gpu", "gpu", []), ("cpu", "cpu", []),
                                ("stream", "gpu", ["--stream"]),
                                ("cancel", "gpu", ["--cancel-after", "4"])):
        out = run([tools["mkrun"], mk, "--device", device, "--prompt-tokens", prompt,
                   "-n", str(NEW_TOKENS)] + SAMPLING + extra)
        if out.returncode != 0:
            row.fail(f"mkrun --device {device} sampling {' '.join(extra)}: " + out.stderr.strip())
            return
        runs[name] = generated_tokens(out.stdout) or []
    row.check(runs["gpu"] == runs["cpu"],
              "sampled = the CPU's" if runs["gpu"] == runs["cpu"]
              else f"sampled tokens differ: GPU {runs['gpu']} CPU {runs['cpu']}")
    row.check(runs["stream"] == runs["gpu"], "streamed = not streamed")
    row.check(runs["cancel"] == runs["gpu"][:4], "cancelled after 4")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--max-context", type=int, default=256)
    ap.add_argument("--arch", help="the target of mkc compile (default: mkc's)")
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
            row = check_fixture(fixture, tools, tmp, a.max_context, a.arch, ort_logits)
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
