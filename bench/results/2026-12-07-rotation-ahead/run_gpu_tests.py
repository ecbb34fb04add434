#!/usr/bin/env python3
"""The GPU tests of build/tests/gpu/CTestTestfile.cmake (ctest -L gpu's
commands) with this checkout's paths (ROOT), PARALLEL at a time (default
4): exit 77 is a skip, any other non-zero exit a failure. ONLY=a,b runs the
tests named, MATCH=regex those whose names it matches."""
import concurrent.futures as cf
import os
import re
import subprocess
import sys
import time

root = os.environ["ROOT"]
only = [n for n in os.environ.get("ONLY", "").split(",") if n]
match = re.compile(os.environ.get("MATCH", ""))
tests = []
for line in open("build/tests/gpu/CTestTestfile.cmake"):
    m = re.match(r"add_test\(\[=\[(.*?)\]=\] (.*)\)\s*$", line)
    if not m or (only and m.group(1) not in only) or not match.search(m.group(1)):
        continue
    args = [re.sub(r"\\(.)", r"\1", a) for a in re.findall(r'"((?:[^"\\]|\\.)*)"', m.group(2))]
    args = [a.replace("/work/main/.venv/bin/python", "python3").replace("/work/main", root)
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
