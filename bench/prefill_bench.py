#!/usr/bin/env python3
"""Time to the first token of a prompt: mkc (mkrun, the prompt layer by layer
on the GPU, its last token through the decode kernel) against HF
transformers with SDPA, bf16, the whole prompt in one forward, random
weights of a JSON config (bench/configs/), in the same run.

  python3 bench/prefill_bench.py --config bench/configs/llama-3.2-1b-shaped.json \\
      --mk 1b.mk --mkrun build/runtime/mkrun/mkrun --lengths 512,4096,32000 \\
      [--by-step 512] [--out DIR]

mkc's time is mkrun's "prompt" figure: every prompt position's share, the
last one the decode step that yields the first new token. HF's is one
forward of the prompt with logits for its last position only, the median of
--repeats after a warm-up. --by-step times mkc feeding the prompt one token
a decode step (mkrun --prompt-by-step) at those lengths, as it did before.
Writes prefill.json and prefill.md under --out. `--hf-only JSON` times HF
alone and writes its times and the dense matmul rate there
(bench/harness.py's prompts run it so).

Each row also has the prompt's FLOPs (the GEMMs' 2 x weights x tokens, the
first token's lm_head row, attention counted causally) over mkc's time,
against the dense bf16 matmul rate measured in the same run (with HF);
--profile adds, from one more mkrun with MKRT_PREFILL_PROFILE set, where
the prompt's kernel time goes (runtime/gpu/PrefillProfile.h).

--attention own,cudnn times each prompt with each attention the prompts can
run (MKRT_PREFILL_ATTENTION; cudnn: cuDNN's fused attention, found as
bench/cudnn_library.py finds it, for builds with bf16 KV caches), a row
for each, in the same run; mkrun's own account must name cuDNN's where it
was asked for.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


from cudnn_library import cudnn_environment  # noqa: E402
from mkc_decode import prompt_tokens  # noqa: E402  (pytorch_decode.prompt_ids's tokens)


def prompt_flops(spec, length):
    """The FLOPs of a prompt's forward: matrices, attention causally, one logits row."""
    hidden, layers = spec["hidden_size"], spec["num_hidden_layers"]
    heads = spec["num_attention_heads"]
    kv_heads = spec.get("num_key_value_heads", heads)
    head_dim = spec.get("head_dim") or hidden // heads
    layer = (hidden * (heads + 2 * kv_heads) * head_dim + heads * head_dim * hidden
             + 3 * hidden * spec["intermediate_size"])
    attention = 4 * head_dim * heads * layers * length * (length + 1) / 2
    return 2 * layers * layer * length + attention + 2 * hidden * spec["vocab_size"]


def dense_matmul_tflops():
    """The dense bf16 matmul rate of this GPU now: 8192^3, the median of 10."""
    import torch
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    samples = []
    for attempt in range(13):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        a @ b
        stop.record()
        torch.cuda.synchronize()
        if attempt >= 3:
            samples.append(2 * 8192 ** 3 / (start.elapsed_time(stop) * 1e9))
    return statistics.median(samples)


def attention_environment(attention):
    """mkrun's environment for the prompts' attention `attention` (own, cudnn)."""
    environment = dict(os.environ, MKRT_PREFILL_ATTENTION=attention)
    if attention == "cudnn" and "MKRT_CUDNN" not in os.environ:
        environment.update(cudnn_environment())
    return environment


def check_attention(output, attention):
    """mkrun's account ('... on DEVICE (prompts' attention: ...)') names
    cuDNN's attention where it was asked for."""
    if attention == "cudnn" and "prompts' attention: cuDNN" not in output:
        note = re.search(r"prompts' attention: [^)]*", output)
        raise RuntimeError("cuDNN's attention was asked for and did not run: "
                           + (note.group(0) if note else output[-800:]))


def mkrun_profile(mkrun, mk, tokens, attention="own"):
    """The prompt's kernel time by kind (runtime/gpu/PrefillProfile.h's line)."""
    path = "/tmp/prefill_bench_prompt.txt"
    with open(path, "w") as f:
        f.write(",".join(map(str, tokens)))
    out = subprocess.run([mkrun, mk, "--device", "gpu", "--batch-file", path, "-n", "2"],
                         capture_output=True, text=True, timeout=600,
                         env=dict(attention_environment(attention), MKRT_PREFILL_PROFILE="1"))
    lines = [x for x in (out.stdout + out.stderr).splitlines() if x.startswith("prompt profile:")]
    if out.returncode != 0 or not lines:
        raise RuntimeError(f"mkrun failed ({out.returncode}): {(out.stdout + out.stderr)[-800:]}")
    parts = lines[-1].split("; ")
    span = float(re.search(r"([0-9.]+) ms from", parts[0]).group(1))
    kinds = {}
    for part in parts[1:]:
        what, rest = part.split(": ", 1)
        numbers = re.findall(r"[0-9.]+", rest)
        kinds[what] = {"ms": float(numbers[0]), "launches": int(numbers[1]),
                       "tflops": float(numbers[2]) if len(numbers) > 2 else None}
    return {"line": lines[-1], "span_ms": span, "kinds": kinds}


def mkrun_prompt_ms(mkrun, mk, tokens, by_step, attention="own"):
    path = "/tmp/prefill_bench_prompt.txt"
    with open(path, "w") as f:
        f.write(",".join(map(str, tokens)))
    # (A file of one line is one prompt; a long prompt passes the limit of
    # one command-line argument.)
    command = [mkrun, mk, "--device", "gpu", "--batch-file", path, "-n", "2"]
    if by_step:
        command.append("--prompt-by-step")
    out = subprocess.run(command, capture_output=True, text=True, timeout=600,
                         env=attention_environment(attention))
    match = re.search(r"prompt: (\d+) tokens in ([0-9.]+) ms", out.stdout + out.stderr)
    if out.returncode != 0 or not match:
        raise RuntimeError(f"mkrun failed ({out.returncode}): {(out.stdout + out.stderr)[-800:]}")
    if not by_step:
        check_attention(out.stdout + out.stderr, attention)
    return float(match.group(2))


def hf_prompt_ms(spec, lengths, repeats):
    import torch
    from pytorch_decode import forward, prompt_ids, random_model
    from transformers import DynamicCache

    model = random_model(spec, "cuda")
    times = {}
    for length in lengths:
        ids = prompt_ids(length, model.config.vocab_size, "cuda")
        samples = []
        for attempt in range(repeats + 1):
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            with torch.no_grad():
                start.record()
                forward(model, ids, 0, DynamicCache())
                stop.record()
            torch.cuda.synchronize()
            if attempt > 0:
                samples.append(start.elapsed_time(stop))
        times[length] = statistics.median(samples)
    del model
    torch.cuda.empty_cache()
    return times


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", required=True)
    parser.add_argument("--mk")
    parser.add_argument("--mkrun")
    parser.add_argument("--hf-only", metavar="JSON",
                        help="only HF's times, written to JSON (bench/harness.py runs it so)")
    parser.add_argument("--lengths", default="512,4096,32000")
    parser.add_argument("--by-step", default="", help="lengths also timed one token a step")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-hf", action="store_true")
    parser.add_argument("--profile", action="store_true",
                        help="one more mkrun a length with MKRT_PREFILL_PROFILE set")
    parser.add_argument("--attention", default="own",
                        help="the prompts' attentions to time, a row each: own, cudnn")
    parser.add_argument("--out", default=".")
    args = parser.parse_args()
    spec = json.load(open(args.config))
    lengths = [int(x) for x in args.lengths.split(",") if x]
    if args.hf_only:
        import torch
        import transformers
        times = hf_prompt_ms(spec, lengths, args.repeats)
        with open(args.hf_only, "w") as f:
            json.dump({"ms": {str(k): v for k, v in times.items()}, "repeats": args.repeats,
                       "dense_tflops": dense_matmul_tflops(),
                       "torch": torch.__version__, "transformers": transformers.__version__,
                       "gpu": torch.cuda.get_device_name()}, f, indent=1)
        return
    if not args.mk or not args.mkrun:
        parser.error("give --mk and --mkrun (or --hf-only)")
    by_step = [int(x) for x in args.by_step.split(",") if x]
    attentions = [x for x in args.attention.split(",") if x]
    if not attentions or any(a not in ("own", "cudnn") for a in attentions):
        parser.error("--attention takes own and cudnn")
    rows = []
    for length in lengths:
        tokens = prompt_tokens(length, spec["vocab_size"])
        for attention in attentions:
            mk = [mkrun_prompt_ms(args.mkrun, args.mk, tokens, False, attention)
                  for _ in range(args.repeats)]
            row = {"length": length, "attention": attention, "mkc_ms": statistics.median(mk),
                   "mkc_samples": mk}
            if length in by_step and attention == attentions[0]:
                row["mkc_by_step_ms"] = mkrun_prompt_ms(args.mkrun, args.mk, tokens, True)
            row["flops"] = prompt_flops(spec, length)
            row["mkc_tflops"] = row["flops"] / (row["mkc_ms"] * 1e9)
            if args.profile:
                row["profile"] = mkrun_profile(args.mkrun, args.mk, tokens, attention)
            rows.append(row)
            print(json.dumps(row), flush=True)
    dense = None
    if not args.no_hf:
        hf = hf_prompt_ms(spec, lengths, args.repeats)
        dense = dense_matmul_tflops()
        for row in rows:
            row["hf_sdpa_ms"] = hf[row["length"]]
            row["dense_tflops"] = dense
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "prefill.json"), "w") as f:
        json.dump({"config": args.config, "mk": args.mk, "dense_tflops": dense, "rows": rows},
                  f, indent=1)
    lines = ["| prompt | attention | mkc, ms to the first token | one token a step "
             "| HF SDPA bf16 | mkc / HF | mkc TFLOP/s | of the dense rate |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for row in rows:
        hf = row.get("hf_sdpa_ms")
        lead = f"| {row['length']} | {row['attention']} | {row['mkc_ms']:.2f} | "
        lines.append(lead + (f"{row['mkc_by_step_ms']:.1f}" if "mkc_by_step_ms" in row else "-"))
        lines[-1] += f" | {hf:.2f} | {row['mkc_ms'] / hf:.2f} |" if hf else " | - | - |"
        lines[-1] += f" {row['mkc_tflops']:.0f} |"
        lines[-1] += f" {100 * row['mkc_tflops'] / dense:.0f}% |" if dense else " - |"
    if dense:
        lines.append(f"\nDense bf16 matmul rate in the same run (8192^3): {dense:.0f} TFLOP/s.")
    for row in rows:
        if "profile" in row:
            lines.append(f"\n{row['length']} tokens, {row['attention']} attention, "
                         f"{row['profile']['line']}")
    with open(os.path.join(args.out, "prefill.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
