#!/usr/bin/env python3
"""The oracle test of the GGUF front end on one committed fixture: the
fixture's weights written as a llama.cpp GGUF file in one ggml type
(tests/tools/make_gguf_from_onnx.py), mkc's teacher-forced logits on that
file against onnxruntime on

  1. the ONNX fixture with its weights replaced by gguf-py's dequantization
     of the file (the same numbers mkc should have read): within --rtol,
     tight for every type, since both sides compute in f32 on equal weights;
  2. the ONNX fixture itself: within --rtol-original, which is the
     quantization's own error (F32: none; F16/BF16/Q8_0/Q4_0: the rounding
     of the weights, which random-weight logits amplify little).

Random-weight models have near-tied logits, so logits are compared, not
argmax.

  check_gguf.py --mkc build/compiler/tools/mkc FIXTURE.onnx --type Q8_0 [--eval-arg=...]
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from ort_logits import teacher_forced_logits  # noqa: E402
from oracle_common import TOKENS, mkc_logits, relative_error  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mkc", required=True)
    ap.add_argument("--type", default="F32")
    ap.add_argument("--eval-arg", action="append", default=[])
    ap.add_argument("--rtol", type=float, default=1e-4)
    ap.add_argument("--rtol-original", type=float, default=1e-4)
    ap.add_argument("fixture")
    a = ap.parse_args()
    tokens = ",".join(map(str, TOKENS))

    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "model.gguf")
        reference = os.path.join(tmp, "reference.onnx")
        subprocess.run([sys.executable, os.path.join(ROOT, "tests", "tools", "make_gguf_from_onnx.py"),
                        a.fixture, model, "--type", a.type, "--reference-onnx", reference],
                       check=True)
        ours = mkc_logits(a.mkc, model, tokens, tmp, a.eval_arg)
        if ours is None:
            return 1
        same_weights = teacher_forced_logits(reference, TOKENS)
        original = teacher_forced_logits(a.fixture, TOKENS)
        if ours.shape != original.shape:
            print(f"FAIL: logits shape {ours.shape}, onnxruntime gives {original.shape}")
            return 1
        err = relative_error(ours, same_weights)
        err_original = relative_error(ours, original)
        print(f"{os.path.basename(a.fixture)} as GGUF {a.type} {' '.join(a.eval_arg)}: max "
              f"relative error vs onnxruntime on the dequantized weights {err:.2e} (limit "
              f"{a.rtol:.0e}), on the original weights {err_original:.2e} (limit "
              f"{a.rtol_original:.0e})")
        failed = (err > a.rtol or err_original > a.rtol_original or
                  not np.all(np.isfinite(ours)))
        print("FAIL" if failed else "PASS")
        return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
