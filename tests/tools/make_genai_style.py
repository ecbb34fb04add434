#!/usr/bin/env python3
"""Writes a small random-weight Llama-style decoder in the style of the
onnxruntime-genai model builder: com.microsoft SimplifiedLayerNormalization,
SkipSimplifiedLayerNormalization and GroupQueryAttention (rotary inside the
attention, positions from the attention mask's length), no position_ids input.
onnxruntime runs it, so it is an oracle like the exported fixtures.

  make_genai_style.py OUT.onnx [--seed N] [--packed] [--local-window N]
                      [--shape hidden,heads,kv_heads,head_dim,layers,vocab,intermediate]
"""
import argparse

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

MAX_POSITIONS, THETA, EPS = 256, 10000.0, 1e-5


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--packed", action="store_true",
                    help="one MatMul for q|k|v, read packed by GroupQueryAttention")
    ap.add_argument("--local-window", type=int, default=-1,
                    help="GroupQueryAttention's local_window_size (sliding window)")
    ap.add_argument("--shape", default="64,4,2,16,2,128,96",
                    help="hidden,heads,kv_heads,head_dim,layers,vocab,intermediate")
    a = ap.parse_args()
    global HIDDEN, HEADS, KV_HEADS, HEAD_DIM, LAYERS, VOCAB, INTER
    HIDDEN, HEADS, KV_HEADS, HEAD_DIM, LAYERS, VOCAB, INTER = map(int, a.shape.split(","))
    rng = np.random.default_rng(a.seed)
    inits, nodes = [], []

    def weight(name, shape, scale=0.08, offset=0.0):
        inits.append(numpy_helper.from_array((offset + scale * rng.standard_normal(shape)).astype(np.float32), name))
        return name

    def const(name, value, dtype):
        inits.append(numpy_helper.from_array(np.array(value, dtype=dtype), name))
        return name

    def node(op, inputs, outputs, domain="", **attrs):
        nodes.append(helper.make_node(op, inputs, outputs, name=f"/{op}_{len(nodes)}", domain=domain, **attrs))
        return outputs[0]

    inv_freq = 1.0 / THETA ** (np.arange(0, HEAD_DIM, 2, dtype=np.float64) / HEAD_DIM)
    angles = np.arange(MAX_POSITIONS)[:, None] * inv_freq[None, :]
    inits.append(numpy_helper.from_array(np.cos(angles).astype(np.float32), "cos_cache"))
    inits.append(numpy_helper.from_array(np.sin(angles).astype(np.float32), "sin_cache"))

    # The builder derives both of GQA's length inputs from the attention mask.
    mask_sum = node("ReduceSum", ["attention_mask", const("one_axis", [1], np.int64)], ["mask_sum"])
    past_len = node("Sub", [mask_sum, const("one", 1, np.int64)], ["past_len"])
    node("Cast", [past_len], ["seqlens_k"], to=TensorProto.INT32)
    mask_shape = node("Shape", ["attention_mask"], ["mask_shape"])
    total = node("Gather", [mask_shape, const("index_one", 1, np.int64)], ["total_len"], axis=0)
    node("Cast", [total], ["total_seq_len"], to=TensorProto.INT32)

    x = node("Gather", [weight("embed_tokens", (VOCAB, HIDDEN)), "input_ids"], ["embeddings"])
    residual, pending = x, None
    for layer in range(LAYERS):
        p = f"layers.{layer}"
        if pending is None:
            normed = node("SimplifiedLayerNormalization", [x, weight(f"{p}.input_norm", (HIDDEN,), 0.1, 1.0)],
                          [f"{p}.normed"], axis=-1, epsilon=EPS)
        else:
            normed = node("SkipSimplifiedLayerNormalization",
                          [pending, residual, weight(f"{p}.input_norm", (HIDDEN,), 0.1, 1.0)],
                          [f"{p}.normed", "", "", f"{p}.residual_in"], domain="com.microsoft", epsilon=EPS)
            residual = f"{p}.residual_in"
        if a.packed:
            qkv_rows = (HEADS + 2 * KV_HEADS) * HEAD_DIM
            q = node("MatMul", [normed, weight(f"{p}.qkv", (HIDDEN, qkv_rows))], [f"{p}.qkv_out"])
            k = v = ""
        else:
            q = node("MatMul", [normed, weight(f"{p}.q", (HIDDEN, HEADS * HEAD_DIM))], [f"{p}.q_out"])
            k = node("MatMul", [normed, weight(f"{p}.k", (HIDDEN, KV_HEADS * HEAD_DIM))], [f"{p}.k_out"])
            v = node("MatMul", [normed, weight(f"{p}.v", (HIDDEN, KV_HEADS * HEAD_DIM))], [f"{p}.v_out"])
        attention = node("GroupQueryAttention",
                         [q, k, v, f"past_key_values.{layer}.key", f"past_key_values.{layer}.value",
                          "seqlens_k", "total_seq_len", "cos_cache", "sin_cache"],
                         [f"{p}.attention", f"present.{layer}.key", f"present.{layer}.value"],
                         domain="com.microsoft", num_heads=HEADS, kv_num_heads=KV_HEADS, do_rotary=1,
                         local_window_size=a.local_window)
        o = node("MatMul", [attention, weight(f"{p}.o", (HEADS * HEAD_DIM, HIDDEN))], [f"{p}.o_out"])
        normed = node("SkipSimplifiedLayerNormalization",
                      [o, residual, weight(f"{p}.post_norm", (HIDDEN,), 0.1, 1.0)],
                      [f"{p}.post_normed", "", "", f"{p}.residual_mid"], domain="com.microsoft", epsilon=EPS)
        residual = f"{p}.residual_mid"
        gate = node("MatMul", [normed, weight(f"{p}.gate", (HIDDEN, INTER))], [f"{p}.gate_out"])
        up = node("MatMul", [normed, weight(f"{p}.up", (HIDDEN, INTER))], [f"{p}.up_out"])
        sig = node("Sigmoid", [gate], [f"{p}.sigmoid"])
        act = node("Mul", [gate, sig], [f"{p}.silu"])
        mlp = node("Mul", [act, up], [f"{p}.mlp"])
        pending = node("MatMul", [mlp, weight(f"{p}.down", (INTER, HIDDEN))], [f"{p}.down_out"])
    final = node("SkipSimplifiedLayerNormalization", [pending, residual, weight("final_norm", (HIDDEN,), 0.1, 1.0)],
                 ["final_normed", "", "", "final_residual"], domain="com.microsoft", epsilon=EPS)
    node("MatMul", [final, weight("lm_head", (HIDDEN, VOCAB))], ["logits"])

    cache = lambda name: helper.make_tensor_value_info(name, TensorProto.FLOAT,
                                                       ["batch", KV_HEADS, "past", HEAD_DIM])
    present = lambda name: helper.make_tensor_value_info(name, TensorProto.FLOAT,
                                                         ["batch", KV_HEADS, "total", HEAD_DIM])
    inputs = [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"]),
              helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "total"])]
    outputs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", "seq", VOCAB])]
    for layer in range(LAYERS):
        inputs += [cache(f"past_key_values.{layer}.key"), cache(f"past_key_values.{layer}.value")]
        outputs += [present(f"present.{layer}.key"), present(f"present.{layer}.value")]
    graph = helper.make_graph(nodes, "genai_style_llama", inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 8
    large = sum(i.ByteSize() for i in inits) > (1 << 30)
    onnx.save(model, a.out, save_as_external_data=large, location=a.out.split("/")[-1] + ".data")


if __name__ == "__main__":
    main()
