#!/usr/bin/env python3
"""NVRTC compiles the megakernel of one model: `mkc compile --emit=cubin`
must write an ELF CUBIN and report registers and zero spills.

  check_cubin.py --mkc build/compiler/tools/mkc MODEL [--most-spilled=BYTES] [--arch=sm_90a]
                 [mkc options...]

--most-spilled allows a known spill (default none).

MODEL is an .onnx fixture or a .mlir module of mk IR. Exits 77 (ctest's skip)
when this machine has no NVRTC.
"""
import argparse
import os
import subprocess
import sys
import tempfile

# mkc's account of the kernel, read as the benchmark harness reads it.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
from mkc_decode import kernel_account  # noqa: E402

SKIP = 77


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mkc", required=True)
    ap.add_argument("model")
    ap.add_argument("--most-spilled", type=int, default=0)
    a, extra = ap.parse_known_args()
    with tempfile.TemporaryDirectory() as tmp:
        cubin = os.path.join(tmp, "kernel.cubin")
        run = subprocess.run([a.mkc, "compile", a.model, "--emit=cubin", "-o", cubin, *extra],
                             capture_output=True, text=True)
        if "NVRTC not found" in run.stderr:
            print("SKIP: " + run.stderr.strip())
            return SKIP
        # A tensor-parallel kernel links NCCL's device API, which a build
        # without nvcc or NCCL's headers leaves out (codegen/CMakeLists.txt).
        if "built without nvcc" in run.stderr:
            print("SKIP: " + run.stderr.strip())
            return SKIP
        if run.returncode != 0:
            print(run.stdout, run.stderr)
            print(f"FAIL: mkc exited {run.returncode}")
            return 1
        report = run.stderr.strip()
        print(f"{os.path.basename(a.model)} {' '.join(extra)}: {report}")
        with open(cubin, "rb") as f:
            magic = f.read(4)
        account = kernel_account(report)
        if magic != b"\x7fELF":
            print("FAIL: the CUBIN is not an ELF file")
            return 1
        if not account or account["registers"] == 0:
            print("FAIL: no register count reported")
            return 1
        if account["spill_bytes"] > a.most_spilled:
            print(f"FAIL: {account['spill_bytes']} bytes spilled (at most {a.most_spilled})")
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
