#!/usr/bin/env python3
"""Two mkc engines on one model: their teacher-forced logits must agree.

  compare_engines.py --mkc build/compiler/tools/mkc MODEL.onnx reference fused

The fused engine interprets the IR after the fusion passes with the same
kernels, so any difference beyond rounding means a pass changed what the
model computes. Exits non-zero on a mismatch or on a failed run.
"""
import argparse
import os
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from oracle_common import TOKENS, mkc_logits, relative_error  # noqa: E402

RTOL = 1e-5


def logits(mkc, model, engine, tokens, folder):
    return mkc_logits(mkc, model, tokens, folder, [f"--engine={engine}"], name=engine)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mkc", required=True)
    ap.add_argument("--tokens", default=",".join(map(str, TOKENS)))
    ap.add_argument("--rtol", type=float, default=RTOL)
    ap.add_argument("model")
    ap.add_argument("reference_engine")
    ap.add_argument("engine")
    a = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        expected = logits(a.mkc, a.model, a.reference_engine, a.tokens, tmp)
        actual = logits(a.mkc, a.model, a.engine, a.tokens, tmp)
    if expected is None or actual is None:
        return 1
    if actual.shape != expected.shape:
        print(f"FAIL: {a.engine} gives logits of shape {actual.shape}, "
              f"{a.reference_engine} {expected.shape}")
        return 1
    err = relative_error(actual, expected)
    print(f"{os.path.basename(a.model)}: {a.engine} vs {a.reference_engine}, max relative "
          f"error {err:.2e} (limit {a.rtol:.0e})")
    failed = err > a.rtol or not np.all(np.isfinite(actual))
    print("FAIL" if failed else "PASS")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
