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
alone and writes its times there (bench/harness.py's prompts run it so).
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


from mkc_decode import prompt_tokens  # noqa: E402  (pytorch_decode.prompt_ids's tokens)


def mkrun_prompt_ms(mkrun, mk, tokens, by_step):
    path = "/tmp/prefill_bench_prompt.txt"
    with open(path, "w") as f:
        f.write(",".join(map(str, tokens)))
    # (A file of one line is one prompt; a long prompt passes the limit of
    # one command-line argument.)
    command = [mkrun, mk, "--device", "gpu", "--batch-file", path, "-n", "2"]
    if by_step:
        command.append("--prompt-by-step")
    out = subprocess.run(command, capture_output=True, text=True, timeout=600)
    match = re.search(r"prompt: (\d+) tokens in ([0-9.]+) ms", out.stdout + out.stderr)
    if out.returncode != 0 or not match:
        raise RuntimeError(f"mkrun failed ({out.returncode}): {(out.stdout + out.stderr)[-800:]}")
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
                       "torch": torch.__version__, "transformers": transformers.__version__,
                       "gpu": torch.cuda.get_device_name()}, f, indent=1)
        return
    if not args.mk or not args.mkrun:
        parser.error("give --mk and --mkrun (or --hf-only)")
    by_step = [int(x) for x in args.by_step.split(",") if x]
    rows = []
    for length in lengths:
        tokens = prompt_tokens(length, spec["vocab_size"])
        mk = [mkrun_prompt_ms(args.mkrun, args.mk, tokens, False) for _ in range(args.repeats)]
        row = {"length": length, "mkc_ms": statistics.median(mk), "mkc_samples": mk}
        if length in by_step:
            row["mkc_by_step_ms"] = mkrun_prompt_ms(args.mkrun, args.mk, tokens, True)
        rows.append(row)
        print(json.dumps(row), flush=True)
    if not args.no_hf:
        hf = hf_prompt_ms(spec, lengths, args.repeats)
        for row in rows:
            row["hf_sdpa_ms"] = hf[row["length"]]
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "prefill.json"), "w") as f:
        json.dump({"config": args.config, "mk": args.mk, "rows": rows}, f, indent=1)
    lines = ["| prompt | mkc, ms to the first token | one token a step | HF SDPA bf16 | mkc / HF |",
             "| --- | --- | --- | --- | --- |"]
    for row in rows:
        hf = row.get("hf_sdpa_ms")
        lines.append(f"| {row['length']} | {row['mkc_ms']:.2f} | "
                     f"{row['mkc_by_step_ms']:.1f}" if "mkc_by_step_ms" in row else
                     f"| {row['length']} | {row['mkc_ms']:.2f} | -")
        lines[-1] += f" | {hf:.2f} | {row['mkc_ms'] / hf:.2f} |" if hf else " | - | - |"
    with open(os.path.join(args.out, "prefill.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
