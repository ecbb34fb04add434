#!/usr/bin/env python3
"""Times builds of mkc against each other on one GPU, in one run: does a
kernel change gain what it was predicted to, and does it compute what the
first build does?

  python3 bench/ab_builds.py --builds head=build tpl=.gpu/tpl/build \\
      --shapes t=bench/configs/layer-cost-64x256.json,s=bench/configs/smollm2-135m-shaped.json \\
      --positions 480,40 --rounds 2 --out $OUT/ab

Each BUILD folder holds compiler/tools/mkc and, where the runtime changes
with the kernel, runtime/mkrun/mkrun (a build without one runs on the
first build's that has one); --build-flags gives a build its own
`mkc compile` flags, so that one folder can be two builds. Every shape is
written as mk IR (scripts/fused_module.py) and compiled by every build
with the same random weights (--context, --kv-cache), all compiles at
once; ptxas's registers and spills are kept. Then, round by round, each (shape, build) is timed
from each position with `mkrun --step-times` (median and least ms of
--steps steps, the first left out), the builds of a shape back to back so
that a drift of the clock lands on all of them. Last, each build's logits
on 12 teacher-forced tokens against the first build's: bit for bit, or the
largest difference over the largest logit and the argmax agreement on the
tokens whose top two are clear. Writes OUT/ab.json and OUT/ab.md and prints
the table; exits 1 if a compile or a run failed.
"""
import argparse
import concurrent.futures as cf
import csv
import json
import os
import re
import statistics
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from compare_logits import max_relative_error  # noqa: E402

TOKENS = "1,7,42,3,99,5,11,64,8,250,17,2"


def pairs(text, what):
    result = []
    for item in text:
        for part in item.split(","):
            name, sep, value = part.partition("=")
            if not sep or not name or not value:
                sys.exit(f"ab_builds.py: {what} '{part}' is not NAME=VALUE")
            result.append((name, value))
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--builds", nargs="+", required=True,
                    help="NAME=BUILD_DIR ...; the first is the reference")
    ap.add_argument("--shapes", nargs="+", required=True, help="NAME=CONFIG.json ...")
    ap.add_argument("--positions", default="480,40")
    ap.add_argument("--rounds", type=int, default=2, help="rounds at the first position (the others once)")
    ap.add_argument("--steps", type=int, default=33)
    ap.add_argument("--context", type=int, default=544)
    ap.add_argument("--kv-cache", default="bf16")
    ap.add_argument("--device", default="gpu", help="mkrun's device (cpu tries the tool anywhere)")
    ap.add_argument("--mkc-flags", default="", help="more `mkc compile` flags for every build")
    ap.add_argument("--build-flags", nargs="*", default=[],
                    help="NAME=FLAGS ...: more `mkc compile` flags for build NAME alone (two names "
                         "may share a folder and differ by flags)")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    builds = pairs(args.builds, "build")
    flags = {}
    for item in args.build_flags:
        name, sep, value = item.partition("=")
        if not sep or name not in dict(builds):
            sys.exit(f"ab_builds.py: --build-flags '{item}' names no build")
        flags[name] = value.split()
    shapes = pairs(args.shapes, "shape")
    positions = [int(p) for p in args.positions.split(",")]
    os.makedirs(args.out, exist_ok=True)
    own = {b: os.path.join(d, "runtime/mkrun/mkrun") for b, d in builds
           if os.path.exists(os.path.join(d, "runtime/mkrun/mkrun"))}
    if not own:
        sys.exit("ab_builds.py: no build holds runtime/mkrun/mkrun")
    first_mkrun = next(own[b] for b, _ in builds if b in own)
    mkrun = {b: own.get(b, first_mkrun) for b, _ in builds}
    failed = False
    result = {"builds": dict(builds), "build_flags": {n: " ".join(v) for n, v in flags.items()},
              "mkrun": mkrun,
              "shapes": dict(shapes), "positions": positions, "context": args.context,
              "kv_cache": args.kv_cache, "compile": {}, "times": [], "logits": {}}

    for shape, config in shapes:
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts/fused_module.py"), config,
                        "-o", f"{args.out}/{shape}.mlir"], check=True)

    def compile_one(shape, build, folder):
        mk = f"{args.out}/{shape}-{build}.mk"
        mkc = os.path.join(folder, "compiler/tools/mkc")
        if not os.access(mkc, os.X_OK):
            return shape, build, 127, None, f"no mkc at {mkc}"
        cmd = [mkc, "compile", f"{args.out}/{shape}.mlir",
               "--emit=mk", "--random-weights", f"--kv-cache={args.kv_cache}",
               f"--max-context={args.context}", "-o", mk]
        cmd += args.mkc_flags.split() + flags.get(build, [])
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        text = p.stdout + p.stderr
        m = re.search(r"(\d+) registers.*?(\d+) bytes spilled", text)
        return shape, build, p.returncode, (m.group(1), m.group(2)) if m else None, text

    with cf.ThreadPoolExecutor(8) as pool:
        jobs = [pool.submit(compile_one, s, b, d) for s, _ in shapes for b, d in builds]
        for job in jobs:
            shape, build, rc, ptxas, text = job.result()
            result["compile"][f"{shape}-{build}"] = {"rc": rc, "registers": ptxas and int(ptxas[0]),
                                                    "spilled": ptxas and int(ptxas[1])}
            if rc:
                failed = True
                print(f"compile {shape}-{build} FAILED:\n{text[-2000:]}", flush=True)

    def time_one(shape, build, position):
        mk, steps = f"{args.out}/{shape}-{build}.mk", f"{args.out}/steps.csv"
        if result["compile"][f"{shape}-{build}"]["rc"]:
            return None
        if os.path.exists(steps):
            os.remove(steps)
        p = subprocess.run([mkrun[build], mk, "--device", args.device,
                            "--start-position", str(position), "--prompt-tokens", "7",
                            "-n", str(args.steps), "--step-times", steps],
                           capture_output=True, text=True, timeout=120)
        if p.returncode:
            print(f"run {shape}-{build} at {position} FAILED:\n{(p.stdout + p.stderr)[-1500:]}",
                  flush=True)
            return None
        ms = [float(r["ms"]) for r in csv.DictReader(open(steps))][1:]
        return statistics.median(ms), min(ms)

    runs = [(positions[0], r) for r in range(args.rounds)] + [(p, 0) for p in positions[1:]]
    for position, round_ in runs:
        for shape, _ in shapes:
            for build, _ in builds:
                t = time_one(shape, build, position)
                failed |= t is None
                row = {"shape": shape, "build": build, "position": position, "round": round_,
                       "median_ms": t and t[0], "least_ms": t and t[1]}
                result["times"].append(row)
                if t:
                    print(f"{shape}-{build} at {position}: median {t[0]:.3f} least {t[1]:.3f}", flush=True)

    for shape, _ in shapes:
        logits = {}
        for build, _ in builds:
            if result["compile"][f"{shape}-{build}"]["rc"]:
                continue
            npy = f"{args.out}/{shape}-{build}.npy"
            p = subprocess.run([mkrun[build], f"{args.out}/{shape}-{build}.mk",
                                "--device", args.device, "--tokens", TOKENS, "--logits", npy],
                               capture_output=True, text=True, timeout=120)
            if p.returncode:
                failed = True
                print(f"logits {shape}-{build} FAILED:\n{(p.stdout + p.stderr)[-1500:]}", flush=True)
                continue
            logits[build] = np.load(npy)
        first = builds[0][0]
        for build, _ in builds[1:]:
            if first not in logits or build not in logits:
                continue
            a, b = logits[first], logits[build]
            if a.shape == b.shape and (a.view(np.uint32) == b.view(np.uint32)).all():
                verdict = {"bit_for_bit": True}
            else:
                top = np.sort(a, axis=-1)
                clear = (top[..., -1] - top[..., -2]) > 1e-3 * np.abs(a).max(axis=-1)
                agree = a.argmax(-1) == b.argmax(-1)
                verdict = {"bit_for_bit": False,
                           "relative": max_relative_error(b, a),
                           "argmax_agrees": int((agree & clear).sum()), "clear": int(clear.sum())}
            result["logits"][f"{shape}-{build}"] = verdict

    json.dump(result, open(f"{args.out}/ab.json", "w"), indent=1)
    table = report(result, builds, shapes, runs)
    open(f"{args.out}/ab.md", "w").write(table)
    print(table)
    return 1 if failed else 0


def report(result, builds, shapes, runs):
    names = [b for b, _ in builds]
    head = "| shape | " + " | ".join(f"at {p}" + (f", round {r + 1}" if r or
                                                   sum(q == p for q, _ in runs) > 1 else "")
                                        for p, r in runs) + " |"
    lines = [f"ms a token, median of the steps ({' / '.join(names)}; change against {names[0]}):", "",
             head, "|---" * (len(runs) + 1) + "|"]
    for shape, _ in shapes:
        cells = []
        for position, round_ in runs:
            t = {row["build"]: row["median_ms"] for row in result["times"]
                 if row["shape"] == shape and row["position"] == position and row["round"] == round_}
            base = t.get(names[0])
            text = " / ".join("failed" if t.get(b) is None else f"{t[b]:.3f}" for b in names)
            deltas = [f"{100 * (t[b] / base - 1):+.1f}%" for b in names[1:] if base and t.get(b)]
            cells.append(text + (f" ({', '.join(deltas)})" if deltas else ""))
        lines.append(f"| {shape} | " + " | ".join(cells) + " |")
    lines += ["", "Flags: " + "; ".join(f"{n} `{f}`" for n, f in result["build_flags"].items())] \
        if result["build_flags"] else []
    lines += ["", "Registers / bytes spilled (ptxas): " + "; ".join(
        f"{key} failed" if c["rc"] else f"{key} {c['registers']}/{c['spilled']}"
        for key, c in result["compile"].items()), ""]
    for key, v in result["logits"].items():
        lines.append(f"- logits {key} against {names[0]}: " + (
            "bit for bit" if v["bit_for_bit"] else
            f"max |diff| / max |logit| {v['relative']:.2e}, argmax agrees on {v['argmax_agrees']} "
            f"of {v['clear']} clear tokens"))
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
