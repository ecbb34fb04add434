#!/usr/bin/env python3
"""One .mk at one position: mkc's megakernel against the bandwidth floor and
PyTorch, all measured in one run on one GPU (scripts/compare_builds_gpu.sh
times two builds with it). The benchmark of the project, every shape at
every position, is bench/harness.py.

  python3 bench/decode_bench.py --mk model.mk --config bench/configs/llama-3.2-1b-shaped.json \
      [--build build] [--position 480] [--steps 32] [--repeats 3] [--out DIR]

1. The streaming rate of this GPU: bench/stream/stream_bandwidth.cu (built
   with nvcc), the best median over its in-flight depths.
2. The bytes one decode step must read at least: the .mk's weights (the
   sum of its tasks' weight bytes, `mkc inspect --format=json`) and the KV
   cache up to that position, counted in bf16 (mkc keeps it in f32 today,
   which the floor does not excuse). floor = bytes / rate.
3. mkc: `mkrun --device gpu` with a prompt of --position tokens and
   --steps generated, per-step times from --step-times; ms/token is the
   median over positions [position, position + steps) of the fastest repeat
   of each position.
4. PyTorch: bench/pytorch_decode.py (graph and eager) from the same
   position, on the same config (random weights, bf16).
5. With --one-gpu-too, for a file compiled with --tensor-parallel=N (its
   ranks on N GPUs, docs/tensor-parallel.md): the same file's whole model
   on one GPU too (MKRT_ONE_GPU=1), so that the ranks' time is a ratio of
   one GPU's measured in the same run. The floor stays one GPU's.
Prints a table and writes decode-bench.json and decode-bench.md into --out.
"""
import argparse
import csv
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import floor  # noqa: E402


def run(command, **kwargs):
    print("$", " ".join(command), flush=True)
    result = subprocess.run(command, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        sys.exit(f"decode_bench: {command[0]} failed ({result.returncode}):\n"
                 f"{result.stdout[-2000:]}{result.stderr[-2000:]}")
    return result.stdout


def bytes_per_step(mk, mkc, config, position):
    weights = floor.weight_bytes(json.loads(run([mkc, "inspect", mk, "--format=json"])))
    return weights, floor.kv_bytes_per_position(config) * (position + 1)


def mkc_step_times(mk, mkrun, position, steps, repeats, tmp, env=None):
    """Per position, the fastest of `repeats` runs, in ms."""
    prompt = ",".join(str((7 * i) % 1000 + 1) for i in range(position))
    best = {}
    for r in range(repeats):
        times = os.path.join(tmp, f"steps{r}.csv")
        print(run([mkrun, mk, "--device", "gpu", "--prompt-tokens", prompt, "-n", str(steps + 1),
                   "--step-times", times], env=env).splitlines()[-2:], flush=True)
        with open(times) as f:
            for row in csv.DictReader(f):
                p, ms = int(row["position"]), float(row["ms"])
                best[p] = min(ms, best.get(p, ms))
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mk", required=True, help="the model, compiled for this GPU")
    ap.add_argument("--config", required=True, help="its shape, for the PyTorch baselines")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--position", type=int, default=480)
    ap.add_argument("--steps", type=int, default=32)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--no-pytorch", action="store_true")
    ap.add_argument("--one-gpu-too", action="store_true",
                    help="a file of ranks: time its whole model on one GPU as well")
    ap.add_argument("--pytorch-timeout", type=int, default=300, help="seconds")
    ap.add_argument("--out", default=".")
    a = ap.parse_args()
    # The build tree, or an unpacked bundle (scripts/bundle.sh) with bin/.
    if os.access(os.path.join(ROOT, "bin", "mkc"), os.X_OK) and a.build == ap.get_default("build"):
        mkc, mkrun = os.path.join(ROOT, "bin", "mkc"), os.path.join(ROOT, "bin", "mkrun")
    else:
        mkc = os.path.join(a.build, "compiler", "tools", "mkc")
        mkrun = os.path.join(a.build, "runtime", "mkrun", "mkrun")
    with open(a.config) as f:
        config = json.load(f)
    os.makedirs(a.out, exist_ok=True)
    report = {"date": time.strftime("%Y-%m-%d"), "host": platform.node(), "mk": a.mk,
              "config": a.config, "position": a.position, "steps": a.steps}
    with tempfile.TemporaryDirectory() as tmp:
        rate, stream = floor.streaming_rate(tmp, run)
        report["stream"] = stream
        weights, kv = bytes_per_step(a.mk, mkc, config, a.position + a.steps // 2)
        floor_ms = (weights + kv) / rate * 1e3
        report.update(weights_bytes=weights, kv_bytes_mid=kv, rate_bytes_per_s=rate,
                      floor_ms=floor_ms)

        times = mkc_step_times(a.mk, mkrun, a.position, a.steps, a.repeats, tmp)
        window = [times[p] for p in range(a.position, a.position + a.steps) if p in times]
        early = [times[p] for p in range(0, min(a.steps, a.position)) if p in times]
        engines = {"mkc": statistics.median(window)}
        report["mkc"] = {"ms_per_token": engines["mkc"], "ms_per_token_positions_0": (
            statistics.median(early) if early else None), "step_ms": times}
        if a.one_gpu_too:
            whole = mkc_step_times(a.mk, mkrun, a.position, a.steps, a.repeats, tmp,
                                   env=dict(os.environ, MKRT_ONE_GPU="1"))
            engines["mkc, whole model on one GPU"] = statistics.median(
                [whole[p] for p in range(a.position, a.position + a.steps) if p in whole])
            report["mkc_one_gpu"] = {"ms_per_token": engines["mkc, whole model on one GPU"],
                                     "step_ms": whole}

        if not a.no_pytorch:
            baseline = os.path.join(tmp, "pytorch.json")
            try:
                subprocess.run([sys.executable, os.path.join(HERE, "pytorch_decode.py"), "--config",
                                a.config, "--positions", str(a.position), "--steps", str(a.steps),
                                "--variants", "graph,eager", "--json", baseline],
                               check=False, timeout=a.pytorch_timeout)
            except subprocess.TimeoutExpired:
                print(f"the PyTorch baselines took over {a.pytorch_timeout} s: left out")
            if os.path.exists(baseline):
                with open(baseline) as f:
                    report["pytorch"] = json.load(f)
                for name, result in report["pytorch"]["variants"].items():
                    measured = result.get("positions", {}).get(str(a.position))
                    if measured:
                        engines["pytorch " + name] = measured["ms_per_token"]

    lines = [f"# Decode benchmark, {report['date']}", "",
             f"- GPU: {stream['gpu']} ({stream['sms']} SMs); streaming rate {rate / 1e12:.3f} TB/s "
             f"(bench/stream/stream_bandwidth.cu, median of 20 passes over {stream['bytes'] / 2**30:.1f} GiB)",
             f"- Model: {a.mk} ({a.config}); weights {weights / 1e9:.3f} GB, KV at position "
             f"{a.position + a.steps // 2} {kv / 1e6:.1f} MB (bf16)",
             f"- Floor: {floor_ms:.3f} ms/token at positions {a.position}-{a.position + a.steps - 1}",
             "", "| engine | ms/token | of the floor | effective GB/s |", "| --- | --- | --- | --- |"]
    for name, ms in engines.items():
        lines.append(f"| {name} | {ms:.3f} | {floor_ms / ms * 100:.1f}% | "
                     f"{(weights + kv) / (ms * 1e-3) / 1e9:.0f} |")
    if a.one_gpu_too:
        lines += ["", f"mkc's ranks take {engines['mkc'] / engines['mkc, whole model on one GPU']:.2f}x "
                      "the whole model's time on one GPU"]
    if report["mkc"]["ms_per_token_positions_0"]:
        lines += ["", f"mkc at positions 0-{a.steps - 1}: "
                      f"{report['mkc']['ms_per_token_positions_0']:.3f} ms/token"]
    text = "\n".join(lines) + "\n"
    print(text)
    with open(os.path.join(a.out, "decode-bench.md"), "w") as f:
        f.write(text)
    with open(os.path.join(a.out, "decode-bench.json"), "w") as f:
        json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
