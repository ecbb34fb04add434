#!/usr/bin/env bash
# Call 4 (either card): the GPU tests (ctest -L gpu's 126 commands, read
# from build/tests/gpu/CTestTestfile.cmake with this checkout's paths) on
# the working tree's build (.gpu/c2: the last warp's release), four at a
# time. Exit 77 is a skip; any other non-zero exit a failure. ONLY=a,b runs
# only the tests named (call 5: the ones call 4's 580 s left unrun, and the
# window's AttentionMerge check, mended to ask for merge tasks).
set -uo pipefail
mkdir -p $OUT
tar -xJf .gpu/c2.tar.xz
exec > >(tee $OUT/log.txt) 2>&1
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
ROOT=$PWD ONLY=${ONLY:-} timeout 580 python3 - <<'PY'
import os, re, subprocess, time, concurrent.futures as cf
root = os.environ["ROOT"]
tests = []
for line in open("build/tests/gpu/CTestTestfile.cmake"):
    m = re.match(r"add_test\(\[=\[(.*?)\]=\] (.*)\)\s*$", line)
    if not m: continue
    args = [re.sub(r"\\(.)", r"\1", a) for a in re.findall(r'"((?:[^"\\]|\\.)*)"', m.group(2))]
    args = [a.replace("/work/main/.venv/bin/python", "python3").replace("/work/main", root) for a in args]
    if not os.environ.get("ONLY") or m.group(1) in os.environ["ONLY"].split(","):
        tests.append((m.group(1), args))
print(len(tests), "tests", flush=True)
def run(test):
    name, args = test
    t0 = time.time()
    try:
        p = subprocess.run(args, capture_output=True, text=True, timeout=300, cwd=root + "/build/tests/gpu")
        rc, out = p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired as e:
        rc, out = "timeout", ""
    return name, rc, time.time() - t0, out
failed = 0
with cf.ThreadPoolExecutor(4) as pool:
    for name, rc, took, out in pool.map(run, tests):
        state = "ok" if rc == 0 else "skip" if rc == 77 else "FAIL"
        print(f"{state:5} {name} ({took:.0f} s)", flush=True)
        if state != "ok":
            print("\n".join(out.splitlines()[-15:]), flush=True)
        failed += state == "FAIL"
print("failed:", failed, flush=True)
PY
echo "done at ${SECONDS}s"
