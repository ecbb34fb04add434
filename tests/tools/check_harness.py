#!/usr/bin/env python3
"""The decode harness without a GPU:
  1. the plan of every known shape (--dry-run), and its refusals; the
     floor's weight bytes against the file's weight table;
  2. a whole run on the CPU executor (--device cpu) of a tiny shape through
     the real mkc and mkrun: compile, the check, timing from start positions,
     a second build for a small context, a trace and its waterfall, batches
     timed and traced, then the report;
  3. the report of synthetic parts of two shapes, with baselines, a failure,
     a floor and a waterfall: the table's numbers, the merged decode.json;
  4. bench/readme_table.py on a README of its own.
The pictures need matplotlib; without it the report must say so and go on.

  check_harness.py BUILD_DIR
"""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HARNESS = os.path.join(ROOT, "bench", "harness.py")
sys.path.insert(0, os.path.join(ROOT, "bench"))
import floor  # noqa: E402
import waterfall  # noqa: E402


def fail(message):
    sys.exit("check_harness.py: " + message)


def harness(*args, expect=0):
    done = subprocess.run([sys.executable, HARNESS, *args], capture_output=True, text=True)
    if done.returncode != expect:
        fail(f"harness {' '.join(args)} exited {done.returncode}, expected {expect}:\n"
             f"{done.stdout[-3000:]}{done.stderr[-3000:]}")
    return done.stdout + done.stderr


def expect_in(text, part, what):
    if part not in text:
        fail(f"{what}: '{part}' not in:\n{text[-3000:]}")


def plan(tmp):
    out = harness("--dry-run", "--out", tmp)
    for line in ["llama-3.2-1b: positions 1,512,4096,32768, mkc at context 32800",
                 "traced, batches of 2,4,8 at 480, prompts of 512,4096,32768;",
                 "llama-3.1-8b: positions 512,4096, mkc at context 4128, check over 2 tokens;",
                 "qwen3-1.7b:", "qwen2.5-1.5b:", "qwen3-0.6b:", "smollm2-135m:", "layer-cost-64x256:"]:
        expect_in(out, line, "the plan")
    out = harness("--dry-run", "--out", tmp, "--shapes", "llama-3.2-1b,qwen3-0.6b", "--positions",
                  "1,4096", "--also-small-context", "--baselines", "graph", "--baselines-shapes",
                  "qwen3-0.6b")
    expect_in(out, "llama-3.2-1b: positions 1,4096, mkc at context 4128 and 544", "small context")
    expect_in(out, "llama-3.2-1b: positions 1,4096, mkc at context 4128 and 544, check over 4 tokens "
              "and at the largest position, traced, batches of 2,4,8 at 480, prompts of 512,4096; "
              "baselines none", "baselines for some shapes (and prompts the context holds)")
    expect_in(out, "qwen3-0.6b: positions 1,4096, mkc at context 4128 and 544, check over 4 tokens and at the "
              "largest position; baselines graph", "baselines for some shapes")
    expect_in(harness("--dry-run", "--out", tmp, "--shapes", "gpt-9", expect=2), "unknown shape 'gpt-9'", "refusal")
    expect_in(harness("--dry-run", "--out", tmp, "--baselines", "fast", expect=2), "unknown baselines", "refusal")
    expect_in(harness("--dry-run", "--out", tmp, "--batches", "1,4", expect=2),
              "batch sizes must be at least 2", "refusal")
    expect_in(harness("--dry-run", "--out", tmp, "--prompts", "1", expect=2),
              "prompt lengths must be at least 2", "refusal")
    expect_in(harness("--dry-run", expect=2), "give --out DIR", "refusal")


def cpu_run(build, tmp):
    out_dir, work = os.path.join(tmp, "cpu-run"), os.path.join(tmp, "work")
    shape = os.path.join(ROOT, "tests", "tools", "harness-tiny.json")
    out = harness("--out", out_dir, "--device", "cpu", "--no-stream", "--build", build, "--work", work,
                  "--shapes", shape, "--positions", "1,6,12", "--steps", "2", "--repeats", "2",
                  "--baselines", "none", "--trace-shape", "harness-tiny", "--trace-position", "4",
                  "--also-small-context", "6", "--mkc-flags=--no-logit-picks",
                  "--batch-shapes", "harness-tiny", "--batches", "2,3", "--batch-position", "4",
                  "--prompt-shapes", "harness-tiny", "--prompts", "3,5,40")
    expect_in(out, "harness-tiny: a batch of 3:", "the batches")
    expect_in(out, "harness-tiny: a prompt of 5:", "the prompts")
    expect_in(out, "--batch-file", "a prompt from a file")
    expect_in(out, "harness-tiny: logits GPU vs CPU at position 12 over 2 tokens", "the long check")
    expect_in(out, "--start-position 11 --prompt-tokens 7 -n 3 --step-times", "timing from P - 1")
    with open(os.path.join(out_dir, "parts", "harness-tiny.mkc.json")) as f:
        part = json.load(f)
    if "error" in part:
        fail(f"the CPU run failed: {part['error']}")
    for position in (1, 6, 12):
        timed = part["positions"][str(position)]
        if sorted(map(int, timed["step_ms"])) != list(range(position - 1, position + 2)):
            fail(f"position {position}: steps at {sorted(timed['step_ms'])}")
    if sorted(part["small_context"]["positions"]) != ["1", "6"] or part["small_context"]["context"] != 8:
        fail(f"the small context build: {part['small_context']}")
    batches = part.get("batches", {})
    if (sorted(batches.get("ms", {})) != ["1", "2", "3"] or batches.get("position") != 4
            or batches["build"]["context"] != 6
            or batches["build"].get("flags") != ["--no-logit-picks", "--batch=2,3"]):
        fail(f"the batches: {batches}")
    prompts = part.get("prompts", {})
    if (sorted(prompts.get("ms", {})) != ["3", "5"] or list(prompts.get("by_step_ms", {})) != ["3"]
            or prompts.get("hf_sdpa_ms") or sorted(prompts.get("flops", {})) != ["3", "5"]
            or not prompts["flops"]["5"] > prompts["flops"]["3"] > 0):
        fail(f"the prompts (40 past the context of 14; no HF on the CPU): {prompts}")
    if os.listdir(work) and any(name.endswith(".mk") for name in os.listdir(work)):
        fail(f"a .mk was left in {work}: {os.listdir(work)}")
    with open(os.path.join(out_dir, "parts", "harness-tiny.batch-waterfall.json")) as f:
        batch_layers = json.load(f)
    if sorted(batch_layers["rows"]) != ["1", "2", "3"] or batch_layers["position"] != 4:
        fail(f"the batches' traces: {sorted(batch_layers['rows'])} at {batch_layers['position']}")
    for rows, summary in batch_layers["rows"].items():
        kinds = [r["kind"] for r in summary["rows"]]
        if summary["position"] != 5 or "Gemv" not in kinds or "AttentionChunk" not in kinds:
            fail(f"the batch of {rows}'s traced layer at {summary['position']}: {kinds}")
    with open(os.path.join(out_dir, "parts", "harness-tiny.waterfall.json")) as f:
        summary = json.load(f)
    kinds = [r["kind"] for r in summary["rows"]]
    if summary["layer"] != 1 or kinds[0] != "Gemv" or "AttentionChunk" not in kinds:
        fail(f"the waterfall of layer {summary['layer']}: {kinds}")
    with open(os.path.join(out_dir, "README.md")) as f:
        readme = f.read()
    expect_in(readme, "| harness-tiny (context 8) | 6 | — |", "the CPU run's README")
    expect_in(readme, "positions | bf16 --no-logit-picks |", "the build's flags in the README")
    # ptxas's account of the build's kernel, wherever NVRTC builds one.
    version = subprocess.run([os.path.join(build, "compiler", "tools", "mkc"), "--version"],
                             capture_output=True, text=True).stdout
    if part["build"].get("kv_cache") != "bf16":
        fail(f"the harness builds bf16 KV caches by default: {part['build']}")
    if part["build"].get("flags") != ["--no-logit-picks"] or not part["build"]["mk"].endswith(
            "bf16--no-logit-picks.mk"):
        fail(f"--mkc-flags did not reach the build: {part['build']}")
    kernel = part["build"].get("kernel")
    if "NVRTC: not found" in version:
        if kernel is not None:
            fail(f"a kernel's account without NVRTC: {kernel}")
    elif kernel is None or kernel["registers"] <= 0 or kernel["dynamic_shared_bytes"] <= 0:
        fail(f"NVRTC is here ({version.splitlines()[1:2]}), but the build's kernel account is {kernel}")
    else:
        expect_in(readme, f"| {kernel['registers']} registers, {kernel['spill_bytes']} B spilled, ",
                  "the builds' kernels")
    expect_in(readme, "## Where a layer's time goes: harness-tiny", "the CPU run's README")
    expect_in(readme, "## Batches", "the CPU run's README")
    expect_in(readme, "| harness-tiny | 4 | 3 | ", "the batches' table")
    expect_in(readme, "| operation | task kind | span us, 1 row | span us, 2 rows | span us, 3 rows |",
              "the batches' layer")
    expect_in(readme, "## Prompts", "the CPU run's README")
    expect_in(readme, "| harness-tiny | 5 | ", "the prompts' table")


def synthetic_parts(folder):
    """Two shapes: one with the floor, mkc and three baselines (one
    failed), one with mkc only; a waterfall from a made-up trace."""
    parts = os.path.join(folder, "parts")
    os.makedirs(parts)

    def write(name, value):
        with open(os.path.join(parts, name), "w") as f:
            json.dump(value, f)

    stream = {"gpu": "Test GPU", "loads_in_flight": {"4": {"median_tbps": 4.0}, "8": {"median_tbps": 4.5}}}
    write("invocation-1.json", {"kind": "invocation", "command": "python3 bench/harness.py --out X",
                                "started": "2026-12-02 10:00:00", "seconds": 100, "stream": stream,
                                "environment": {"gpus": [{"name": "Test GPU", "driver": "999.1", "memory": "1 MiB"}],
                                                "torch": "2.11.0", "torch_cuda": "13.0", "transformers": "5.17.0"},
                                "commands": [{"command": "build/runtime/mkrun/mkrun a.mk --step-times x.csv", "rc": 0}],
                                "failed": ["llama-3.2-1b compiled"]})
    timed = lambda ms: {"ms_per_token": ms, "step_ms": {}}  # noqa: E731
    write("llama-3.2-1b.mkc.json", {
        "kind": "mkc", "shape": "llama-3.2-1b", "config": "bench/configs/llama-3.2-1b-shaped.json",
        "steps": 32, "rate_bytes_per_s": 4.5e12, "weight_bytes": 2.25e9, "kv_bytes_per_position": 32768,
        "tasks": 100, "build": {"context": 32800, "kv_cache": "bf16", "mk_bytes": 2**31, "compile_seconds": 20,
                                "kernel": {"registers": 128, "shared_bytes": 166544,
                                           "dynamic_shared_bytes": 165504, "spill_bytes": 8,
                                           "stack_frame_bytes": 40}},
        "positions": {"1": timed(1.0), "32768": timed(2.0)},
        "small_context": {"context": 544, "mk_bytes": 2**31, "positions": {"1": timed(0.9)}},
        "checks": [{"start": 0, "tokens": 4, "max_relative_error": 1e-5, "rtol": 1e-3, "argmax_agree": 4}]})
    write("llama-3.2-1b.graph.json", {"kind": "baseline", "shape": "llama-3.2-1b", "variant": "graph",
                                      "steps": 32, "positions": {"1": {"ms_per_token": 2.0, "check_error": 0.01},
                                                                 "32768": {"ms_per_token": 5.0, "check_error": 0.02}}})
    write("llama-3.2-1b.eager.json", {"kind": "baseline", "shape": "llama-3.2-1b", "variant": "eager",
                                      "steps": 32, "positions": {"1": {"ms_per_token": 70.0}}})
    write("llama-3.2-1b.compiled.json", {"kind": "baseline", "shape": "llama-3.2-1b", "variant": "compiled",
                                         "steps": 32, "positions": {}, "error": "RuntimeError('no answer within 480 s')"})
    write("smollm2-135m.mkc.json", {"kind": "mkc", "shape": "smollm2-135m", "steps": 32,
                                    "config": "bench/configs/smollm2-135m-shaped.json",
                                    "kv_bytes_per_position": 1, "positions": {"32768": timed(0.25)}})
    graph = {"schedule": {"numSms": 2},
             "operations": [{"name": f"layer{i}.{op}", "kind": kind, "layer": i}
                            for i in range(3) for op, kind in (("qkv", "Gemv"), ("attention", "Attention"))],
             "tasks": [{"id": t, "op": t // 2, "kind": ["Gemv", "AttentionChunk"][(t // 2) % 2], "weightBytes": 1000}
                       for t in range(12)]}
    events = []
    for t in range(12):
        start = 10.0 * t
        events.append({"name": "wait", "ph": "X", "ts": start - 2, "dur": 2, "args": {"step": 0, "position": 9, "task": t}})
        events.append({"name": f"task {t}", "ph": "X", "ts": start, "dur": 5, "args": {"step": 0, "position": 9, "task": t}})
    summary = waterfall.summarize({"traceEvents": events}, graph)
    if [(r["operation"], r["tasks"], r["start_us"], r["end_us"]) for r in summary["rows"]] != \
            [("layer1.qkv", 2, 0.0, 15.0), ("layer1.attention", 2, 20.0, 35.0)]:
        fail(f"waterfall rows {summary['rows']}")
    if summary["rows"][0]["wait_sm_us"] != 4 or summary["rows"][0]["weight_bytes"] != 2000:
        fail(f"waterfall sums {summary['rows'][0]}")
    summary.update(shape="llama-3.2-1b", kind="waterfall")
    write("llama-3.2-1b.waterfall.json", summary)


def report(tmp):
    folder = os.path.join(tmp, "synthetic")
    synthetic_parts(folder)
    out = harness("--report", folder)
    try:
        import matplotlib  # noqa: F401
        for picture in ("ms-per-token.png", "waterfall-llama-3.2-1b.png"):
            if not os.path.getsize(os.path.join(folder, picture)):
                fail(f"{picture} is empty")
    except ImportError:
        expect_in(out, "matplotlib is missing: no pictures", "the report without matplotlib")
    with open(os.path.join(folder, "README.md")) as f:
        readme = f.read()
    # The floor at 1: (2.25e9 + 32768 * 18) / 4.5e12 s; 32768: (2.25e9 + 32768 * 32785) / 4.5e12.
    expect_in(readme, "| llama-3.2-1b | 1 | 0.500 | 1.000 | 50.0% | 70.000 | 2.000 | failed | 2.00x |", "the table")
    expect_in(readme, "| llama-3.2-1b | 32768 | 0.739 | 2.000 | 36.9% | — | 5.000 | failed | 2.50x |", "the table")
    expect_in(readme, "| llama-3.2-1b (context 544) | 1 | 0.500 | 0.900 | 55.6% |", "the small context")
    expect_in(readme, "| smollm2-135m | 32768* | — | 0.250 |", "a position past the trained context")
    expect_in(readme, "- llama-3.2-1b, compiled: `RuntimeError('no answer within 480 s')`", "the failures")
    expect_in(readme, "GPU Test GPU; driver 999.1; torch 2.11.0 (CUDA 13.0); transformers 5.17.0", "the machine")
    expect_in(readme, "4.500 TB/s", "the rate")
    expect_in(readme, "| layer1.qkv | Gemv | 2 | 0.0 | 15.0 | 15.0 | 10 | 4 | 0.00 |", "the waterfall table")
    expect_in(readme, "python3 bench/harness.py --out X", "the commands")
    expect_in(readme, "| 32800 positions | bf16 | 20 | 2.00 GiB | 100 | 2.250 | 32.0 KiB | 128 registers, 8 B spilled, "
              "162 KiB dynamic shared |", "the builds' kernels")
    expect_in(readme, "| 544 positions | f32 | — | 2.00 GiB | 100 | 2.250 | 32.0 KiB | — |",
              "a build without an account, from before --kv-cache")
    with open(os.path.join(folder, "decode.json")) as f:
        merged = json.load(f)
    if sorted(merged["shapes"]) != ["llama-3.2-1b", "smollm2-135m"] or len(merged["rows"]) != 4:
        fail(f"decode.json: {sorted(merged['shapes'])}, {len(merged['rows'])} rows")
    return folder


def readme_table(tmp, results):
    readme = os.path.join(tmp, "README.md")
    with open(readme, "w") as f:
        f.write("# x\n\n<!-- decode-table:begin -->\nold\n<!-- decode-table:end -->\n\nafter\n")
    tool = os.path.join(ROOT, "bench", "readme_table.py")
    subprocess.run([sys.executable, tool, results, "--readme", readme], check=True, capture_output=True)
    with open(readme) as f:
        text = f.read()
    expect_in(text, "| llama-3.2-1b | 32768 | 0.739 | 2.000 | 37% | 5.000 (PyTorch, one CUDA graph) | 2.50x |", "readme_table")
    if "old" in text or not text.endswith("<!-- decode-table:end -->\n\nafter\n"):
        fail(f"readme_table kept the old table or lost the rest:\n{text}")
    same = subprocess.run([sys.executable, tool, "--check", "--readme", readme, results], capture_output=True)
    if same.returncode != 0:
        fail("readme_table --check differs right after writing")
    # A run split over two calls: a second folder's rows follow the first's,
    # its GPU and date join theirs, and --check finds both folders named
    # (the second's name has a space: the README's command quotes it).
    second = os.path.join(tmp, "second call")
    os.makedirs(second)
    with open(os.path.join(second, "decode.json"), "w") as f:
        json.dump({"invocations": [{"started": "2031-01-02T03:04:05",
                                    "environment": {"gpus": [{"name": "Other GPU"}]}}],
                   "rows": [{"shape": "qwen3-0.6b", "position": 1, "steps": 32, "floor_ms": 0.25,
                             "mkc_ms": 0.5, "percent_of_floor": 50.0}]}, f)
    subprocess.run([sys.executable, tool, results, second, "--readme", readme], check=True,
                   capture_output=True)
    with open(readme) as f:
        text = f.read()
    expect_in(text, "| llama-3.2-1b | 32768 | 0.739 | 2.000 | 37% | 5.000 (PyTorch, one CUDA graph) | 2.50x |",
              "readme_table, two folders")
    expect_in(text, "| qwen3-0.6b | 1 | 0.250 | 0.500 | 50% | — | — |", "readme_table, two folders")
    if text.index("| llama-3.2-1b |") > text.index("| qwen3-0.6b |"):
        fail("readme_table: the second folder's rows come before the first's")
    expect_in(text, ", Other GPU (", "readme_table, both folders' GPUs")
    expect_in(text, ", 2031-01-02)", "readme_table, both folders' dates")
    named = subprocess.run([sys.executable, tool, "--check", "--readme", readme], capture_output=True,
                           text=True, cwd=tmp)
    if named.returncode != 0:
        fail(f"readme_table --check of the folders the README names: {named.stdout}{named.stderr}")


def floor_weights(build, tmp):
    """The floor counts each weight once, as the file's weight table does:
    a tied model (qwen3_ts17: q and k norms too) streams its table and the
    embedding row of its token, though every tile of a normed gemv and every
    attention chunk reads its norm vectors again."""
    mkc = os.path.join(build, "compiler", "tools", "mkc")
    mk, inspected = os.path.join(tmp, "floor.mk"), os.path.join(tmp, "floor.json")
    for command in ([mkc, "compile", os.path.join(ROOT, "tests", "fixtures", "qwen3_ts17.onnx"),
                     "--emit=mk", "--no-kernel", "--num-sms=16", "-o", mk],
                    [mkc, "inspect", mk, "--format=json", "-o", inspected]):
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            fail(f"{' '.join(command)} exited {done.returncode}: {done.stderr[-2000:]}")
    with open(inspected) as f:
        graph = json.load(f)
    artifact = graph["artifact"]
    expected = artifact["weightBytes"] + 2 * artifact["hidden"]
    tasks = sum(task["weightBytes"] for task in graph["tasks"])
    if floor.weight_bytes(graph) != expected or tasks <= expected:
        fail(f"floor.weight_bytes: {floor.weight_bytes(graph)} bytes, the weight table and a row "
             f"{expected}, the tasks' sum {tasks} (which counts every tile's norm)")


def main():
    build = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        plan(tmp)
        floor_weights(build, tmp)
        cpu_run(build, tmp)
        results = report(tmp)
        readme_table(tmp, results)
    print("check_harness.py: the plan, the floor's weights, a CPU run, the report and the README "
          "table are as expected")


if __name__ == "__main__":
    main()
