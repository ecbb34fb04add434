#!/usr/bin/env python3
"""Runs the GPU tests (ctest -L gpu's commands, read from
build/tests/gpu/CTestTestfile.cmake) where the build was copied from
another checkout, without cmake or ctest there: the commands' paths of the
checkout that configured the build become ROOT's (this checkout's), its
venv's python `python3`. PARALLEL at a time (default 4); exit 77 is a skip,
any other non-zero exit or 300 s a failure; exits 1 if one failed.
ONLY=a,b runs the tests named, MATCH=regex those whose names it matches.

  ROOT=$PWD MATCH=warp-heads python3 scripts/gpu_tests.py"""
import concurrent.futures as cf
import os
import re
import subprocess
import sys
import time

root = os.environ.get("ROOT", os.getcwd())
only = [n for n in os.environ.get("ONLY", "").split(",") if n]
match = re.compile(os.environ.get("MATCH", ""))
lines = open("build/tests/gpu/CTestTestfile.cmake").read().splitlines()
# The configuring checkout: "# Source directory: <checkout>/tests/gpu".
source = next(line.split(": ", 1)[1] for line in lines if line.startswith("# Source directory: "))
source = source[: -len("/tests/gpu")]
tests = []
for line in lines:
    m = re.match(r"add_test\(\[=\[(.*?)\]=\] (.*)\)\s*$", line)
    if not m or (only and m.group(1) not in only) or not match.search(m.group(1)):
        continue
    args = [re.sub(r"\\(.)", r"\1", a) for a in re.findall(r'"((?:[^"\\]|\\.)*)"', m.group(2))]
    args = [re.sub(re.escape(source) + r"/\.venv/bin/python3?", "python3", a).replace(source, root)
            for a in args]
    tests.append((m.group(1), args))
print(len(tests), "tests", flush=True)


def run(test):
    name, args = test
    t0 = time.time()
    try:
        p = subprocess.run(args, capture_output=True, text=True, timeout=300,
                           cwd=root + "/build/tests/gpu")
        rc, out = p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired:
        rc, out = "timeout", ""
    return name, rc, time.time() - t0, out


failed = 0
with cf.ThreadPoolExecutor(int(os.environ.get("PARALLEL", "4"))) as pool:
    for name, rc, took, out in pool.map(run, tests):
        state = "ok" if rc == 0 else "skip" if rc == 77 else "FAIL"
        print(f"{state:5} {name} ({took:.0f} s)", flush=True)
        if state != "ok":
            print("\n".join(out.splitlines()[-15:]), flush=True)
        failed += state == "FAIL"
print("failed:", failed, flush=True)
sys.exit(1 if failed else 0)
