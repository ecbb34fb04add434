#!/usr/bin/env python3
"""Exports every fixture family with many exporter / opset / dtype / option
combinations and checks mkc on each against onnxruntime and HF transformers.
Needs torch and transformers (run it where they are installed):

  python3 scripts/conformance_sweep.py --mkc build/compiler/tools/mkc --out /tmp/sweep

Prints one line per export: what it was, whether mkc imported it, and the
relative errors of its logits. Exits non-zero if any supported combination
fails.
"""
import argparse
import json
import os
import subprocess
import sys
import traceback

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import export_onnx  # noqa: E402
from ort_logits import teacher_forced_logits  # noqa: E402

TOKENS = [1, 7, 42, 3, 99, 5, 11, 64]
# (exporter, opset, dtype, extra config)
COMBINATIONS = [
    ("torchscript", 14, "float32", {}),
    ("torchscript", 16, "float32", {}),
    ("dynamo", 20, "float32", {}),
    ("dynamo", 21, "float32", {}),
    ("dynamo", 18, "float16", {}),
    ("torchscript", 17, "float16", {}),
    ("dynamo", 18, "bfloat16", {}),
    ("dynamo", 18, "float32", {"attention_bias": True, "mlp_bias": True}),
    ("torchscript", 17, "float32", {"num_key_value_heads": 1}),
    ("dynamo", 23, "float32", {"num_key_value_heads": 1}),
    ("torchscript", 17, "float32", {"attn_implementation": "eager"}),
    ("dynamo", 18, "float32", {"attn_implementation": "eager"}),
    ("dynamo", 23, "float32", {"attn_implementation": "eager"}),
]


def relative_error(a, b):
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mkc", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--configs", default=os.path.join(HERE, "..", "tests", "fixtures", "configs.json"))
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    specs = json.load(open(a.configs))
    failures = 0
    for family, spec in specs.items():
        for exporter, opset, dtype, extra in COMBINATIONS:
            if family != "llama3" and "attention_bias" in extra:
                continue
            tag = f"{family}_{exporter}{opset}_{dtype}" + "".join(f"_{k}" for k in extra)
            path = os.path.join(a.out, tag + ".onnx")
            line = tag.ljust(60)
            try:
                model = export_onnx.random_model({**spec, **extra})
                hf = export_onnx.hf_logits(model, TOKENS)[0]
                device = "cuda" if dtype != "float32" and torch.cuda.is_available() else "cpu"
                model = model.to(device=device, dtype=getattr(torch, dtype))
                export_onnx.export(model, path, exporter, opset, dtype=getattr(torch, dtype),
                                   device=device)
            except Exception as e:  # the exporter itself failed: not mkc's fault
                print(line, "export failed:", repr(e)[-200:].replace("\n", " "), flush=True)
                continue
            npy = path + ".mkc.npy"
            run = subprocess.run([a.mkc, "eval", path, "--tokens", ",".join(map(str, TOKENS)),
                                  "--logits", npy], capture_output=True, text=True)
            if run.returncode != 0:
                failures += 1
                print(line, "REFUSED:", run.stderr.strip()[-300:], flush=True)
                continue
            ours = np.load(npy)
            hf_err = relative_error(ours, hf)
            try:
                ort_err = f"{relative_error(ours, teacher_forced_logits(path, TOKENS)):.1e}"
            except Exception as e:
                ort_err = "n/a (" + str(e).splitlines()[0][:80] + ")"
            limit = 1e-4 if dtype == "float32" else 3e-2
            ok = hf_err <= limit
            failures += not ok
            print(line, "OK  " if ok else "FAIL", f"vs HF {hf_err:.1e}  vs onnxruntime {ort_err}",
                  flush=True)
    print("failures:", failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
