#!/usr/bin/env python3
"""The decode benchmark of mkc: for each model shape, ms/token at several
positions for mkc's megakernel, the bandwidth floor and PyTorch baselines,
all measured by one command on one GPU, then assembled into a results
folder (a README with the table, decode.json, plots, a per-layer waterfall).

  python3 bench/harness.py --out bench/results/DATE-h200-decode \\
      [--shapes llama-3.2-1b,qwen3-1.7b] [--positions 1,512,4096,32768] \\
      [--baselines eager,graph,compiled] [--baselines-shapes llama-3.2-1b] [--build build]
  python3 bench/harness.py --report bench/results/DATE-h200-decode
  python3 bench/harness.py --dry-run --shapes llama-3.1-8b --out /tmp/x   (the plan only)

Each part a command runs writes its own JSON under OUT/parts/ (one file
per shape and engine), so a benchmark too long for one command is run in
several that each name a few shapes or baselines, into the same OUT; every
command then rebuilds the report from all the parts there (also
`--report OUT` alone, which needs neither a GPU nor torch).

Per command: the streaming rate (bench/stream/stream_bandwidth.cu, the
floor's denominator). Per shape (bench/shapes.py: known names, or a config
.json):
  1. scripts/fused_module.py CONFIG, then `mkc compile --random-weights
     --max-context C --kv-cache K`, C = the largest position + --steps, K
     --kv-cache (default bf16); ptxas's account
     of the kernel (registers, spills, shared memory) goes in the report's
     table of builds;
  2. the check: teacher-forced logits of a few tokens by `mkrun --device
     gpu` against `mkrun --device cpu` (the CPU executor) on the same .mk,
     at position 0 and at the largest position (`--start-position`); a
     relative error past --check-rtol stops the shape;
  3. timing: at each position P, `mkrun --start-position P-1 -n STEPS+1
     --step-times`, --repeats launches, per position the fastest, then the
     median over [P, P + STEPS);
  4. the floor at each position: weights (`mkc inspect`) + the bf16 KV
     cache of the window's middle position, over the rate;
  5. with --also-small-context, a second .mk compiled for 512 + STEPS and
     timed at the positions up to 512, to show what compiling for the
     largest context costs at small ones;
  5b. for --batch-shapes (default the 1B shape): a .mk compiled for
     --batch-position + STEPS with `--batch=B,...` (--batches, default
     2,4,8), each batch's ms a step at the window from --batch-position
     (every sequence fed that many tokens from position 0 in one launch),
     against one sequence's ms/token at the same window of the same .mk;
     for the traced shape, one sequence and each batch also traced from
     --batch-position (the report's spans of the middle layer by batch);
  5c. for --prompt-shapes (default the 1B shape): time to the first token
     of prompts of --prompts tokens (default 512,4096,32768, those the
     shape's context holds) on the shape's .mk, the prompt run layer by
     layer on the GPU (the sum of mkrun's prompt-phase step times, a new
     process each launch), the shortest also one token a step
     (`--prompt-by-step`); and, unless --no-prompt-hf, HF transformers with
     SDPA on the same prompts in a process of its own
     (bench/prefill_bench.py --hf-only);
  6. for --trace-shape: a trace of a few steps at --trace-position and the
     waterfall of its middle layer (bench/waterfall.py).
Baselines (bench/pytorch_decode.py), each variant in a process of its own
with its own timeout, at the same positions: eager, graph, compiled.
"""
import argparse
import json
import os
import shlex
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import environment  # noqa: E402
import floor  # noqa: E402
import mkc_decode  # noqa: E402
import report  # noqa: E402
from cudnn_library import cudnn_environment  # noqa: E402
from prefill_bench import prompt_flops  # noqa: E402
import shapes  # noqa: E402
import waterfall  # noqa: E402
from commands import CommandFailed, Commands  # noqa: E402

VARIANTS = ("eager", "graph", "compiled")


def write_json(path, value):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + ".tmp", "w") as f:
        json.dump(value, f, indent=1)
    os.replace(path + ".tmp", path)


def parse_list(text, cast=str):
    return [cast(x) for x in text.split(",") if x] if text else []


def plan(a):
    """Per shape: its name, settings, positions, contexts, what runs."""
    planned = []
    for given in a.shapes:
        name, settings = shapes.resolve(given)
        positions = a.positions or settings["positions"]
        with open(settings["config"]) as f:
            config = json.load(f)
        planned.append({
            "name": name, "config_path": settings["config"], "config": config,
            "positions": sorted(positions), "context": max(positions) + a.steps,
            "check_tokens": a.check_tokens or settings["check_tokens"],
            "long_check": settings["long_check"] and not a.no_long_check,
            "small_context": (a.also_small_context + a.steps if a.also_small_context
                              and any(p <= a.also_small_context for p in positions)
                              and max(positions) > a.also_small_context else None),
            "trace": not a.no_trace and name == a.trace_shape,
            "batches": a.batches if name in a.batch_shapes or given in a.batch_shapes else [],
            # A prompt of L tokens and one new token need L + 1 positions.
            "prompts": [n for n in a.prompts if n + 1 <= max(positions) + a.steps]
                       if name in a.prompt_shapes or given in a.prompt_shapes else [],
            "baselines": [v for v in a.baselines if name in a.baselines_shapes or given in a.baselines_shapes],
        })
    return planned


def run_mkc(a, shape, run, tmp, mkc, mkrun, rate, stream):
    """Steps 1-6 for one shape; returns its part (with "error" on failure).
    The part is written after every stage, so that a command cut short by
    its time limit keeps what it measured."""
    path = os.path.join(a.out, "parts", f"{shape['name']}.mkc.json")
    part = {"kind": "mkc", "shape": shape["name"], "config": os.path.relpath(shape["config_path"], ROOT),
            "steps": a.steps, "device": a.device, "positions": {}}
    if rate:
        part.update(rate_bytes_per_s=rate, stream=stream)
    part["kv_bytes_per_position"] = floor.kv_bytes_per_position(shape["config"])
    work = a.work
    os.makedirs(work, exist_ok=True)
    built = []
    try:
        build = mkc_decode.compile_shape(run, mkc, shape["config_path"], shape["context"], work,
                                         shape["name"], reuse=a.reuse_mk, kv_cache=a.kv_cache,
                                         flags=a.mkc_flags)
        built.append(build["mk"])
        part["build"] = build
        write_json(path, part)
        inspected = mkc_decode.inspect(run, mkc, build["mk"], os.path.join(tmp, "inspect.json"))
        part["weight_bytes"] = floor.weight_bytes(inspected)
        part["tasks"] = len(inspected["tasks"])

        vocab = shape["config"]["vocab_size"]
        tokens = [(7 * i + 1) % vocab for i in range(shape["check_tokens"])]
        checks = [mkc_decode.check_logits(run, mkrun, build["mk"], tokens, 0, tmp, a.check_rtol, a.device)]
        if shape["long_check"]:
            at = shape["positions"][-1]
            checks.append(mkc_decode.check_logits(run, mkrun, build["mk"], tokens[:2], at, tmp,
                                                  a.check_rtol, a.device))
        part["checks"] = checks
        write_json(path, part)
        for check in checks:
            print(f"{shape['name']}: logits GPU vs CPU at position {check['start']} over "
                  f"{check['tokens']} tokens: max relative error {check['max_relative_error']:.1e}",
                  flush=True)
            if not check["passed"]:
                raise RuntimeError(f"the GPU's logits at position {check['start']} differ from the "
                                   f"CPU executor's by {check['max_relative_error']:.2e} (more than "
                                   f"{a.check_rtol}): not timed")

        for position in shape["positions"]:
            timed = mkc_decode.time_position(run, mkrun, build["mk"], position, a.steps, a.repeats,
                                             tmp, a.device)
            part["positions"][str(position)] = timed
            write_json(path, part)
            print(f"{shape['name']}: mkc {timed['ms_per_token']:.3f} ms/token at positions "
                  f"{position}-{position + a.steps - 1}", flush=True)

        if shape["trace"]:
            at = min(a.trace_position, shape["context"] - a.trace_steps)
            trace = mkc_decode.trace(run, mkrun, build["mk"], at, a.trace_steps,
                                     os.path.join(tmp, "trace.json"), a.device)
            with open(trace) as f:
                summary = waterfall.summarize(json.load(f), inspected)
            summary.update(shape=shape["name"], kind="waterfall")
            write_json(os.path.join(a.out, "parts", f"{shape['name']}.waterfall.json"), summary)
            if a.keep_traces:
                shutil.copy(trace, os.path.join(a.out, "parts", f"{shape['name']}.trace.json"))

        if shape["prompts"]:
            run_prompts(a, shape, part, path, run, tmp, mkrun, build)

        if shape["small_context"]:
            if not a.keep_mk:  # the disk holds one large .mk at a time
                os.remove(build["mk"])
                built.remove(build["mk"])
            small = mkc_decode.compile_shape(run, mkc, shape["config_path"], shape["small_context"],
                                             work, shape["name"], reuse=a.reuse_mk,
                                             kv_cache=a.kv_cache, flags=a.mkc_flags)
            built.append(small["mk"])
            small["positions"] = {}
            part["small_context"] = small
            for position in [p for p in shape["positions"] if p + a.steps <= shape["small_context"]]:
                small["positions"][str(position)] = mkc_decode.time_position(
                    run, mkrun, small["mk"], position, a.steps, a.repeats, tmp, a.device)
                print(f"{shape['name']} (context {small['context']}): mkc "
                      f"{small['positions'][str(position)]['ms_per_token']:.3f} ms/token at "
                      f"{position}", flush=True)
                write_json(path, part)
        if shape["batches"]:
            run_batches(a, shape, part, path, run, tmp, mkc, mkrun, built)
    except (CommandFailed, RuntimeError, OSError, ValueError) as error:
        part["error"] = str(error)[-2000:]
        print(f"{shape['name']}: FAILED: {part['error']}", flush=True)
    finally:
        if not a.keep_mk:
            for mk in built:
                if os.path.exists(mk):
                    os.remove(mk)
    return part


def run_batches(a, shape, part, path, run, tmp, mkc, mkrun, built):
    """Step 5b: one .mk with the batches, one sequence and each batch timed
    at the window from --batch-position."""
    context = a.batch_position + a.steps
    flags = list(a.mkc_flags) + ["--batch=" + ",".join(map(str, a.batches))]
    build = mkc_decode.compile_shape(run, mkc, shape["config_path"], context, a.work, shape["name"],
                                     reuse=a.reuse_mk, kv_cache=a.kv_cache, flags=flags)
    built.append(build["mk"])
    batches = {"build": build, "position": a.batch_position, "ms": {}}
    part["batches"] = batches
    alone = mkc_decode.time_position(run, mkrun, build["mk"], a.batch_position, a.steps, a.repeats,
                                     tmp, a.device)
    batches["ms"]["1"] = alone["ms_per_token"]
    write_json(path, part)
    for rows in a.batches:
        timed = mkc_decode.time_batch(run, mkrun, build["mk"], rows, a.batch_position, a.steps,
                                      a.repeats, tmp, a.device)
        batches["ms"][str(rows)] = timed["ms_per_step"]
        write_json(path, part)
        print(f"{shape['name']}: a batch of {rows}: {timed['ms_per_step']:.3f} ms a step at "
              f"{a.batch_position} ({timed['ms_per_step'] / alone['ms_per_token']:.2f} x one "
              f"sequence's {alone['ms_per_token']:.3f})", flush=True)
    if shape["trace"]:
        trace_batches(a, shape, run, tmp, mkc, mkrun, build["mk"])


def trace_batches(a, shape, run, tmp, mkc, mkrun, mk):
    """Where a batch step goes: one sequence and each batch traced from
    --batch-position on the batches' .mk, the middle layer's operations of
    each (bench/waterfall.py, without the runs), in one part."""
    layers = {}
    for rows in [1] + a.batches:
        graph = mkc_decode.inspect(run, mkc, mk, os.path.join(tmp, f"batch-{rows}.json"), rows)
        # The build holds the timed window: --steps positions from there.
        path = mkc_decode.trace(run, mkrun, mk, a.batch_position, min(a.trace_steps, a.steps),
                                os.path.join(tmp, f"batch-{rows}.trace.json"), a.device, rows)
        with open(path) as f:
            summary = waterfall.summarize(json.load(f), graph)
        for row in summary["rows"]:
            del row["runs"], row["waits"]
        layers[str(rows)] = summary
    write_json(os.path.join(a.out, "parts", f"{shape['name']}.batch-waterfall.json"),
               {"shape": shape["name"], "kind": "batch_waterfall", "position": a.batch_position,
                "rows": layers})


def run_prompts(a, shape, part, path, run, tmp, mkrun, build):
    """Step 5c: time to the first token of each prompt length on the
    shape's .mk, the shortest also one token a step; then HF SDPA's."""
    vocab = shape["config"]["vocab_size"]
    # The FLOPs of each prompt (attention counted causally), for its rate
    # against the dense matmul rate HF's process measures.
    prompts = {"ms": {}, "by_step_ms": {}, "hf_sdpa_ms": {},
               "flops": {str(n): prompt_flops(shape["config"], n) for n in shape["prompts"]}}
    part["prompts"] = prompts
    for length in shape["prompts"]:
        timed = mkc_decode.time_prompt(run, mkrun, build["mk"], length, vocab, a.repeats, tmp, a.device)
        prompts["ms"][str(length)] = timed["ms"]
        if length == min(shape["prompts"]):
            by_step = mkc_decode.time_prompt(run, mkrun, build["mk"], length, vocab, 1, tmp, a.device,
                                             by_step=True)
            prompts["by_step_ms"][str(length)] = by_step["ms"]
        write_json(path, part)
        print(f"{shape['name']}: a prompt of {length}: {timed['ms']:.3f} ms to the first token",
              flush=True)
    if a.prompt_hf and a.device == "gpu":
        out = os.path.join(tmp, f"{shape['name']}.prompt-hf.json")
        try:
            run([a.python, os.path.join(HERE, "prefill_bench.py"), "--config", shape["config_path"],
                 "--lengths", ",".join(map(str, shape["prompts"])), "--repeats", a.repeats,
                 "--hf-only", out], timeout=a.baseline_timeout)
            with open(out) as f:
                hf = json.load(f)
            prompts["hf_sdpa_ms"] = hf["ms"]
            prompts["dense_tflops"] = hf.get("dense_tflops")
        except (CommandFailed, OSError, ValueError) as error:
            prompts["hf_error"] = str(error)[-2000:]
            print(f"{shape['name']}: HF's prompts: FAILED: {prompts['hf_error'][-300:]}", flush=True)
        write_json(path, part)


def run_baseline(a, shape, variant, run, tmp):
    out = os.path.join(tmp, f"{shape['name']}.{variant}.json")
    timeout = a.compile_timeout if variant == "compiled" else a.baseline_timeout
    part = {"kind": "baseline", "shape": shape["name"], "variant": variant, "steps": a.steps,
            "timeout_s": timeout}
    try:
        run([a.python, os.path.join(HERE, "pytorch_decode.py"), "--config", shape["config_path"],
             "--positions", ",".join(map(str, shape["positions"])), "--steps", a.steps,
             "--variants", variant, "--json", out, "--device", "cuda" if a.device == "gpu" else "cpu"],
            timeout=timeout)
    except CommandFailed as error:
        part["error"] = str(error)[-2000:]
    if os.path.exists(out):  # what it measured before a failure or a timeout too
        with open(out) as f:
            measured = json.load(f)
        result = measured["variants"].get(variant, {})
        part["positions"] = result.get("positions", {})
        if "error" in result:
            part["error"] = result["error"]
        part["environment"] = {k: measured.get(k) for k in ("torch", "transformers", "cuda", "gpu")}
        part["model_seconds"] = measured.get("model_seconds")
    print(f"{shape['name']}: {variant}: " + (f"FAILED: {part['error'][-300:]}" if "error" in part else
          ", ".join(f"{p}: {v['ms_per_token']:.3f} ms" for p, v in part.get("positions", {}).items())),
          flush=True)
    return part


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", help="the results folder (parts go to OUT/parts/)")
    ap.add_argument("--report", metavar="DIR", help="only assemble DIR's report from its parts")
    ap.add_argument("--dry-run", action="store_true", help="print the plan, run nothing")
    ap.add_argument("--shapes", default=",".join(shapes.SHAPES),
                    help="comma-separated names of bench/shapes.py or config .json paths "
                         "(default: all of them)")
    ap.add_argument("--positions", help="comma-separated positions for every shape (default: "
                    f"{','.join(map(str, shapes.POSITIONS))}; llama-3.1-8b 512,4096)")
    ap.add_argument("--steps", type=int, default=32, help="timed steps per position")
    ap.add_argument("--repeats", type=int, default=3, help="mkrun launches per position")
    ap.add_argument("--baselines", default=",".join(VARIANTS),
                    help="comma-separated of eager, graph, compiled; 'none' for none")
    ap.add_argument("--baselines-shapes", help="only these shapes get baselines (default: all)")
    ap.add_argument("--no-mkc", action="store_true", help="baselines only (no stream, compile or mkc)")
    ap.add_argument("--also-small-context", type=int, nargs="?", const=512, metavar="N",
                    help="also compile each shape for N + steps (N default 512) and time it at the "
                         "positions up to N: what compiling for the largest position costs at small ones")
    ap.add_argument("--build", help="a build tree or an unpacked bundle with mkc and mkrun "
                    "(default: build/ of this checkout, else the bundle this script is in)")
    ap.add_argument("--work", default=os.path.join(tempfile.gettempdir(), "mkc-harness"),
                    help="where the .mlir and .mk files go (each .mk is removed after its shape)")
    ap.add_argument("--keep-mk", action="store_true", help="keep the .mk files in --work")
    ap.add_argument("--reuse-mk", action="store_true", help="use a .mk already in --work")
    ap.add_argument("--kv-cache", choices=["bf16", "f32"], default="bf16",
                    help="the KV caches mkc compiles (default bf16, as the floor counts them)")
    ap.add_argument("--mkc-flags", default="",
                    help="further `mkc compile` flags for every build, one string given with = "
                         "(e.g. --mkc-flags=\"--gemv-loads=16 --no-logit-picks\"), to measure a "
                         "kernel option")
    ap.add_argument("--check-rtol", type=float,
                    help="the most max|gpu - cpu| / max|cpu| of the check's logits (default 1e-3 "
                         "with f32 KV caches, 1e-2 with bf16: where the two engines' f32 sums differ "
                         "in their last bits, a cache value near a bf16 rounding tie rounds to "
                         "neighbours 2^-8 apart, so GPU and CPU drift by up to ~3e-3 over 4 tokens "
                         "and 64 layers)")
    ap.add_argument("--check-tokens", type=int, help="tokens of the check (default per shape: 4, 8B 2)")
    ap.add_argument("--no-long-check", action="store_true", help="check at position 0 only")
    ap.add_argument("--batches", default="2,4,8",
                    help="the batch sizes timed (comma-separated; none: no batches)")
    ap.add_argument("--batch-shapes", default="llama-3.2-1b", help="the shapes whose batches are timed")
    ap.add_argument("--batch-position", type=int, default=480,
                    help="the window's first position for the batches")
    ap.add_argument("--prompts", default="512,4096,32768",
                    help="prompt lengths timed to the first token (comma-separated; none: none)")
    ap.add_argument("--prompt-shapes", default="llama-3.2-1b", help="the shapes whose prompts are timed")
    ap.add_argument("--no-prompt-hf", dest="prompt_hf", action="store_false",
                    help="no HF SDPA timing of the prompts")
    ap.add_argument("--trace-shape", default="llama-3.2-1b", help="the shape whose waterfall is drawn")
    ap.add_argument("--trace-position", type=int, default=512)
    ap.add_argument("--trace-steps", type=int, default=3, help="steps traced (the waterfall uses the last)")
    ap.add_argument("--no-trace", action="store_true")
    ap.add_argument("--keep-traces", action="store_true", help="copy the raw trace into OUT/parts/")
    ap.add_argument("--baseline-timeout", type=int, default=420, help="seconds for eager or graph, per shape")
    ap.add_argument("--compile-timeout", type=int, default=480,
                    help="seconds for the compiled baseline (torch.compile max-autotune), per shape")
    ap.add_argument("--python", default=sys.executable, help="the Python with torch for the baselines")
    ap.add_argument("--device", choices=["gpu", "cpu"], default="gpu",
                    help="cpu: everything on the CPU executor and torch's CPU, no floor (to try the "
                         "harness on a machine without a GPU; the numbers mean nothing)")
    ap.add_argument("--no-stream", action="store_true", help="no streaming rate, so no floor")
    a = ap.parse_args()
    # The prompts' attention by cuDNN where this Python has it as a wheel
    # (libmkrt otherwise looks in the loader's path and the CUDA toolkit's).
    if "MKRT_CUDNN" not in os.environ:
        os.environ.update(cudnn_environment())

    if a.report:
        report.assemble(a.report)
        return 0
    if not a.out:
        ap.error("give --out DIR (or --report DIR)")
    a.mkc_flags = shlex.split(a.mkc_flags)
    if a.check_rtol is None:
        a.check_rtol = 1e-2 if a.kv_cache == "bf16" else 1e-3
    a.shapes = parse_list(a.shapes)
    a.positions = parse_list(a.positions, int)
    if any(p < 0 for p in a.positions):
        ap.error("positions must be non-negative")
    a.baselines = [] if a.baselines == "none" else parse_list(a.baselines)
    if set(a.baselines) - set(VARIANTS):
        ap.error(f"unknown baselines {sorted(set(a.baselines) - set(VARIANTS))}")
    a.baselines_shapes = parse_list(a.baselines_shapes) if a.baselines_shapes else a.shapes
    a.batches = [] if a.batches == "none" else parse_list(a.batches, int)
    if any(b < 2 for b in a.batches):
        ap.error("batch sizes must be at least 2")
    a.batch_shapes = parse_list(a.batch_shapes)
    a.prompts = [] if a.prompts == "none" else parse_list(a.prompts, int)
    if any(n < 2 for n in a.prompts):
        ap.error("prompt lengths must be at least 2")
    a.prompt_shapes = parse_list(a.prompt_shapes)
    try:
        planned = plan(a)
    except (KeyError, OSError) as error:
        ap.error(str(error))

    for shape in planned:
        print(f"{shape['name']}: positions {','.join(map(str, shape['positions']))}, "
              + ("" if a.no_mkc else f"mkc at context {shape['context']}"
                 + (f" and {shape['small_context']}" if shape["small_context"] else "")
                 + f", check over {shape['check_tokens']} tokens"
                 + (" and at the largest position" if shape["long_check"] else "")
                 + (", traced" if shape["trace"] else "")
                 + (f", batches of {','.join(map(str, shape['batches']))} at {a.batch_position}"
                    if shape["batches"] else "")
                 + (f", prompts of {','.join(map(str, shape['prompts']))}" if shape["prompts"] else "")
                 + "; ")
              + f"baselines {','.join(shape['baselines']) or 'none'}", flush=True)
    if a.dry_run:
        return 0

    started = time.time()
    run = Commands()
    invocation = {"kind": "invocation", "command": " ".join(["python3", "bench/harness.py"] + sys.argv[1:]),
                  "started": time.strftime("%Y-%m-%d %H:%M:%S"), "commands": run.log, "failed": []}
    invocation_path = os.path.join(a.out, "parts", f"invocation-{time.strftime('%Y%m%d-%H%M%S')}.json")

    def checkpoint():
        """The invocation and the report as they stand: a command cut short
        by its time limit still leaves a report of what it finished."""
        invocation["seconds"] = round(time.time() - started)
        write_json(invocation_path, invocation)
        report.assemble(a.out)

    mkc = mkrun = None
    if not a.no_mkc:
        mkc, mkrun = mkc_decode.tools(a.build or (os.path.join(ROOT, "build")
                                                  if os.path.isdir(os.path.join(ROOT, "build")) else ROOT))
    invocation["environment"] = environment.describe(mkc, a.python, with_torch=bool(a.baselines))
    failed = invocation["failed"]
    with tempfile.TemporaryDirectory() as tmp:
        rate = stream = None
        if not a.no_mkc and not a.no_stream and a.device == "gpu":
            rate, stream = floor.streaming_rate(tmp, run)
            invocation["stream"] = stream
            print(f"streaming rate {rate / 1e12:.3f} TB/s", flush=True)
        write_json(invocation_path, invocation)
        for shape in planned:
            if not a.no_mkc:
                part = run_mkc(a, shape, run, tmp, mkc, mkrun, rate, stream)
                write_json(os.path.join(a.out, "parts", f"{shape['name']}.mkc.json"), part)
                failed += [shape["name"]] if "error" in part else []
                checkpoint()
            for variant in shape["baselines"]:
                part = run_baseline(a, shape, variant, run, tmp)
                write_json(os.path.join(a.out, "parts", f"{shape['name']}.{variant}.json"), part)
                failed += [f"{shape['name']} {variant}"] if "error" in part else []
                checkpoint()
    checkpoint()
    print(f"harness: {time.time() - started:.0f} s" + (f"; failed: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0

if __name__ == "__main__":
    sys.exit(main())
