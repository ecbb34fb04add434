#!/usr/bin/env python3
"""Report on exported fixtures: operator histogram, and onnxruntime's logits
against the HF transformers logits saved at export (both teacher-forced)."""
import collections
import glob
import json
import os
import sys

import numpy as np
import onnx

sys.path.insert(0, os.path.dirname(__file__))
from ort_logits import teacher_forced_logits  # noqa: E402


def main(folder):
    tokens = json.load(open(os.path.join(folder, "hf_tokens.json")))
    worst = 0.0
    for path in sorted(glob.glob(os.path.join(folder, "*.onnx"))):
        model = onnx.load(path, load_external_data=False)
        ops = collections.Counter((n.domain or "ai.onnx") + ":" + n.op_type for n in model.graph.node)
        family = os.path.basename(path).split("_")[0]
        hf = np.load(os.path.join(folder, f"{family}.hf_logits.npy"))
        ort_rows = teacher_forced_logits(path, tokens)
        err = float(np.max(np.abs(ort_rows - hf)) / np.max(np.abs(hf)))
        worst = max(worst, err)
        opsets = {o.domain or "ai.onnx": o.version for o in model.opset_import}
        print(f"{os.path.basename(path)} opsets={opsets} ir={model.ir_version} rel_err_vs_hf={err:.2e}")
        print("   ", dict(sorted(ops.items())))
    print("worst", worst)


if __name__ == "__main__":
    main(sys.argv[1])
