#!/usr/bin/env python3
"""Teacher-forced logits of onnxruntime on a decoder ONNX model: the oracle.

Feeds the tokens one at a time from position 0, carrying present.N.* into
past_key_values.N.*, and writes the logits after each token as a float32 .npy
of shape [tokens, vocab] (the same contract as `mkc eval`).

  python3 scripts/ort_logits.py model.onnx --tokens 5,17,42 --logits out.npy
"""
import argparse

import numpy as np
import onnxruntime as ort

NUMPY_OF_ONNX = {
    "tensor(float)": np.float32,
    "tensor(float16)": np.float16,
    "tensor(double)": np.float64,
    "tensor(int64)": np.int64,
    "tensor(int32)": np.int32,
}


def numpy_type(type_name):
    if type_name not in NUMPY_OF_ONNX:
        raise SystemExit(f"ort_logits: input type {type_name} is not supported by this script")
    return NUMPY_OF_ONNX[type_name]


def teacher_forced_logits(model_path, tokens):
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(model_path, options, providers=["CPUExecutionProvider"])
    inputs = {i.name: i for i in session.get_inputs()}
    outputs = [o.name for o in session.get_outputs()]
    past = {}
    for name, info in inputs.items():
        if name.startswith("past_key_values."):
            shape = [d if isinstance(d, int) else 0 for d in info.shape]
            shape[0] = 1
            past[name] = np.zeros(shape, dtype=numpy_type(info.type))
    rows = []
    for t, token in enumerate(tokens):
        feed = dict(past)
        feed["input_ids"] = np.array([[token]], dtype=numpy_type(inputs["input_ids"].type))
        if "attention_mask" in inputs:
            feed["attention_mask"] = np.ones((1, t + 1), dtype=numpy_type(inputs["attention_mask"].type))
        if "position_ids" in inputs:
            feed["position_ids"] = np.array([[t]], dtype=numpy_type(inputs["position_ids"].type))
        result = dict(zip(outputs, session.run(outputs, feed)))
        rows.append(result["logits"].reshape(-1, result["logits"].shape[-1])[-1].astype(np.float32))
        for name in past:
            past[name] = result[name.replace("past_key_values.", "present.")]
    return np.stack(rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model")
    ap.add_argument("--tokens", required=True, help="comma-separated token ids")
    ap.add_argument("--logits", required=True, help="output .npy")
    a = ap.parse_args()
    tokens = [int(t) for t in a.tokens.split(",")]
    np.save(a.logits, teacher_forced_logits(a.model, tokens))


if __name__ == "__main__":
    main()
