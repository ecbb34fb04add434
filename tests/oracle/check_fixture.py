#!/usr/bin/env python3
"""The oracle test of one model: mkc's teacher-forced logits against
onnxruntime running the same .onnx (and, for the committed fixtures, against
the HF transformers logits saved when they were exported).

  check_fixture.py --mkc build/compiler/tools/mkc MODEL.onnx [--variant KIND]

With --variant, the model is first rewritten by tests/tools/make_variant.py
(weights stored in fp16/bf16, external data) into a temporary folder.
"""
import argparse
import json
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
RTOL = 1e-4


def greedy_agreement(actual, expected, gap=0.1):
    """Rows where the reference's top-2 gap is clear, and how many agree."""
    clear = agree = 0
    for a, e in zip(actual, expected):
        top2 = np.sort(e)[-2:]
        if top2[1] - top2[0] > gap:
            clear += 1
            agree += int(np.argmax(a) == np.argmax(e))
    return agree, clear


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mkc", required=True)
    ap.add_argument("--variant")
    ap.add_argument("--eval-arg", action="append", default=[],
                    help="passed on to mkc eval, e.g. --eval-arg=--engine=schedule")
    ap.add_argument("--tokens", default=",".join(map(str, TOKENS)))
    ap.add_argument("--rtol", type=float, default=RTOL)
    ap.add_argument("--hf-logits", help="HF transformers logits for --tokens (default: the "
                    "fixture family's, saved at export)")
    ap.add_argument("model")
    a = ap.parse_args()
    tokens_list = [int(t) for t in a.tokens.split(",")]

    with tempfile.TemporaryDirectory() as tmp:
        model = a.model
        if a.variant:
            model = os.path.join(tmp, "variant.onnx")
            subprocess.run([sys.executable, os.path.join(ROOT, "tests", "tools", "make_variant.py"),
                            a.variant, a.model, model], check=True)
        ours = mkc_logits(a.mkc, model, a.tokens, tmp, a.eval_arg)
        if ours is None:
            return 1
        reference = teacher_forced_logits(model, tokens_list)
        if ours.shape != reference.shape:
            print(f"FAIL: logits shape {ours.shape}, onnxruntime gives {reference.shape}")
            return 1
        err = relative_error(ours, reference)
        agree, clear = greedy_agreement(ours, reference)
        print(f"{os.path.basename(a.model)} {a.variant or ''} {' '.join(a.eval_arg)}: "
              f"max relative error vs onnxruntime "
              f"{err:.2e} (limit {a.rtol:.0e}); greedy agreement {agree}/{clear} clear rows")
        failed = err > a.rtol or not np.all(np.isfinite(ours)) or agree != clear

        family = os.path.basename(a.model).split("_")[0]
        hf_path = os.path.join(os.path.dirname(a.model), f"{family}.hf_logits.npy")
        saved_tokens = None
        tokens_path = os.path.join(os.path.dirname(a.model), "hf_tokens.json")
        if a.hf_logits:
            hf_path, saved_tokens = a.hf_logits, tokens_list
        elif os.path.exists(tokens_path):
            saved_tokens = json.load(open(tokens_path))
        if not a.variant and os.path.exists(hf_path) and saved_tokens == tokens_list:
            hf_err = relative_error(ours, np.load(hf_path))
            print(f"  max relative error vs HF transformers: {hf_err:.2e}")
            failed |= hf_err > a.rtol
        print("FAIL" if failed else "PASS")
        return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
