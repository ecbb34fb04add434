#!/usr/bin/env python3
"""bench/ab_builds.py without a GPU: this build's mkc as two builds that
differ by a flag, as a third folder with no mkc and as a fourth with an
mkrun of its own, a tiny shape timed on the CPU executor; then the
refusals of specs it cannot use.

  check_ab_builds.py BUILD_DIR
"""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOL = os.path.join(ROOT, "bench/ab_builds.py")
CONFIG = os.path.join(ROOT, "bench/configs/head-dim-256-tiny.json")


def fail(message):
    print("check_ab_builds.py: " + message)
    sys.exit(1)


def run(args):
    return subprocess.run([sys.executable, TOOL] + args, capture_output=True, text=True, timeout=600)


def main():
    build = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory() as tmp:
        empty = os.path.join(tmp, "empty")
        os.makedirs(empty)
        # A build whose runtime changed with its kernel: its own mkrun, which
        # leaves a mark and runs this build's.
        own = os.path.join(tmp, "own")
        os.makedirs(os.path.join(own, "compiler/tools"))
        os.makedirs(os.path.join(own, "runtime/mkrun"))
        os.symlink(os.path.join(build, "compiler/tools/mkc"),
                   os.path.join(own, "compiler/tools/mkc"))
        marks = os.path.join(tmp, "own-mkrun.log")
        own_mkrun = os.path.join(own, "runtime/mkrun/mkrun")
        with open(own_mkrun, "w") as f:
            f.write(f'#!/bin/sh\necho ran >> "{marks}"\nexec "{build}/runtime/mkrun/mkrun" "$@"\n')
        os.chmod(own_mkrun, 0o755)
        out = os.path.join(tmp, "ab")
        p = run(["--builds", f"a={build}", f"b={build}", f"gone={empty}", f"o={own}",
                 "--build-flags", "b=--o-proj-by-head=off", "--shapes", f"h={CONFIG}",
                 "--positions", "20,3", "--rounds", "2", "--steps", "3", "--context", "32",
                 "--device", "cpu", "--out", out])
        text = p.stdout + p.stderr
        # The folder without mkc fails its compile, so the run exits 1 but
        # times and compares the two others.
        if p.returncode != 1 or "compile h-gone FAILED" not in text:
            fail(f"a build without mkc: exit {p.returncode}, expected 1 and its compile named\n{text}")
        result = json.load(open(os.path.join(out, "ab.json")))
        times = {(r["build"], r["position"], r["round"]): r["median_ms"] for r in result["times"]}
        for key in [("a", 20, 0), ("a", 20, 1), ("a", 3, 0), ("b", 20, 0), ("b", 20, 1),
                    ("b", 3, 0), ("o", 20, 0), ("o", 3, 0)]:
            if not times.get(key) or times[key] <= 0:
                fail(f"no time for {key}: {result['times']}")
        if times.get(("gone", 20, 0)) is not None:
            fail("a build that did not compile has a time")
        theirs = os.path.join(build, "runtime/mkrun/mkrun")
        if result["mkrun"] != {"a": theirs, "b": theirs, "gone": theirs, "o": own_mkrun}:
            fail(f"the builds' mkrun recorded as {result['mkrun']}")
        # Three timed runs and the logits' one.
        if not os.path.exists(marks) or len(open(marks).read().split()) != 4:
            fail("the build with its own mkrun did not run on it")
        if result["build_flags"] != {"b": "--o-proj-by-head=off"}:
            fail(f"build flags recorded as {result['build_flags']}")
        verdict = result["logits"].get("h-b")
        if not verdict or "h-gone" in result["logits"]:
            fail(f"logits verdicts {result['logits']}")
        # Merge tasks against by head: the same model, the sums in another
        # order, so close but perhaps not the same bits.
        if not verdict["bit_for_bit"] and verdict["relative"] > 1e-3:
            fail(f"b's logits {verdict} are not a's")
        table = open(os.path.join(out, "ab.md")).read()
        for want in ["| h | ", "at 20, round 1", "at 20, round 2", "at 3", "b `--o-proj-by-head=off`",
                     "failed", "logits h-b against a"]:
            if want not in table:
                fail(f"the table lacks '{want}':\n{table}")

        for args, says in [(["--builds", "a"], "is not NAME=VALUE"),
                           (["--builds", f"a={build}", "--build-flags", "c=--x"], "names no build"),
                           (["--builds", f"a={empty}"], "no build holds runtime/mkrun/mkrun")]:
            p = run(args + ["--shapes", f"h={CONFIG}", "--device", "cpu", "--out", out])
            if p.returncode == 0 or says not in p.stdout + p.stderr:
                fail(f"{args}: exit {p.returncode}, expected an error saying '{says}'\n{p.stderr}")
    print("check_ab_builds.py: ok")


if __name__ == "__main__":
    main()
