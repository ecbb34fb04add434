#!/usr/bin/env python3
"""Write a Llama-family decoder of a config's shape as ONNX, random weights
in external data, without torch: for measuring what compiling a model of a
size that cannot be exported here costs (memory, time).

  python3 scripts/shaped_onnx.py bench/configs/llama-3.1-8b-shaped.json -o 8b/model.onnx
  mkc compile 8b/model.onnx --emit=mk -o 8b.mk

The graph has the node chains of a TorchScript export (tests/fixtures/
llama3_ts17.onnx): RMSNorm as Pow/ReduceMean/Add/Sqrt/Div/Mul, rotary as
x*cos + rotate_half(x)*sin from position_ids, the past caches concatenated
with this step's key and value, the GQA repeat as Unsqueeze/Expand/Reshape,
attention as MatMul/Softmax/MatMul, SiLU as x*Sigmoid(x). The linear
weights are stored [in, out] in bf16 behind a Cast to float, as
tests/tools/make_variant.py's bf16-weights variant stores them; norms are
f32. Values are uniform in +-sqrt(3 / inputs) (norms near 1), written to
MODEL.onnx.data a piece at a time, so the script holds a few MB whatever
the model's size. Rotary frequencies are the plain theta ones, and the
attention mask is an input the graph does not read (one new token sees
every past position).
"""
import argparse
import json
import os

import numpy as np
import onnx
from onnx import TensorProto, helper

from decoder_dims import decoder_dims

PIECE = 1 << 24  # elements generated at a time


class ExternalData:
    """Initializers appended to one data file, their bytes written as made."""

    def __init__(self, path, seed):
        self.path = path
        self.file = open(path, "wb")
        self.rng = np.random.default_rng(seed)
        self.initializers = []

    def add(self, name, shape, spread, center=0.0, dtype=TensorProto.BFLOAT16):
        offset = self.file.tell()
        count = int(np.prod(shape))
        for begin in range(0, count, PIECE):
            n = min(PIECE, count - begin)
            values = (center + spread * self.rng.uniform(-1, 1, n)).astype(np.float32)
            if dtype == TensorProto.BFLOAT16:
                bits = values.view(np.uint32)
                bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16  # nearest even
                self.file.write(bits.astype(np.uint16).tobytes())
            else:
                self.file.write(values.tobytes())
        tensor = TensorProto()
        tensor.name = name
        tensor.data_type = dtype
        tensor.dims.extend(shape)
        tensor.data_location = TensorProto.EXTERNAL
        for key, value in (("location", os.path.basename(self.path)), ("offset", str(offset)),
                           ("length", str(self.file.tell() - offset))):
            entry = tensor.external_data.add()
            entry.key, entry.value = key, value
        self.initializers.append(tensor)

    def close(self):
        self.file.close()


class Graph:
    def __init__(self):
        self.nodes = []
        self.count = 0

    def op(self, op_type, inputs, prefix, **attributes):
        self.count += 1
        out = f"{prefix}/{op_type}_{self.count}_output_0"
        self.nodes.append(helper.make_node(op_type, inputs, [out], name=f"{prefix}/{op_type}_{self.count}",
                                           **attributes))
        return out

    def const(self, value, prefix, dtype=np.int64):
        self.count += 1
        out = f"{prefix}/Constant_{self.count}_output_0"
        array = np.array(value, dtype=dtype)
        self.nodes.append(helper.make_node("Constant", [], [out], name=f"{prefix}/Constant_{self.count}",
                                           value=onnx.numpy_helper.from_array(array, out)))
        return out


def shaped_model(config, path, seed):
    hidden, inter, layers, heads, kv_heads, head_dim, vocab, eps, theta, tied = \
        decoder_dims(config)
    half = head_dim // 2

    data = ExternalData(path + ".data", seed)
    g = Graph()
    linear_spread = lambda inputs: float(np.sqrt(3.0 / inputs))

    def linear(x, name, inputs, outputs, prefix):
        stored = name + ".stored"
        data.add(stored, [inputs, outputs], linear_spread(inputs))
        g.nodes.append(helper.make_node("Cast", [stored], [name], name=f"{prefix}/Cast_{name}",
                                        to=TensorProto.FLOAT))
        return g.op("MatMul", [x, name], prefix)

    def rms_norm(x, name, prefix):
        data.add(name, [hidden], 0.1, center=1.0, dtype=TensorProto.FLOAT)
        squared = g.op("Pow", [x, g.const(2.0, prefix, np.float32)], prefix)
        mean = g.op("ReduceMean", [squared], prefix, axes=[-1], keepdims=1)
        root = g.op("Sqrt", [g.op("Add", [mean, g.const(eps, prefix, np.float32)], prefix)], prefix)
        inverse = g.op("Div", [g.const(1.0, prefix, np.float32), root], prefix)
        return g.op("Mul", [name, g.op("Mul", [x, inverse], prefix)], prefix)

    def heads_of(x, count, prefix):
        shaped = g.op("Reshape", [x, g.const([1, -1, count, head_dim], prefix)], prefix)
        return g.op("Transpose", [shaped], prefix, perm=[0, 2, 1, 3])

    def rotate_half(x, prefix):
        first = g.op("Slice", [x, g.const([0], prefix), g.const([half], prefix), g.const([3], prefix)],
                     prefix)
        second = g.op("Slice", [x, g.const([half], prefix), g.const([np.iinfo(np.int64).max], prefix),
                                g.const([3], prefix)], prefix)
        return g.op("Concat", [g.op("Neg", [second], prefix), first], prefix, axis=-1)

    def rotary(x, cos, sin, prefix):
        return g.op("Add", [g.op("Mul", [x, cos], prefix),
                            g.op("Mul", [rotate_half(x, prefix), sin], prefix)], prefix)

    def repeat_kv(x, prefix):
        if heads == kv_heads:
            return x
        grouped = g.op("Unsqueeze", [x, g.const([2], prefix)], prefix)
        expanded = g.op("Expand", [grouped, g.const([1, 1, heads // kv_heads, 1, 1], prefix)], prefix)
        return g.op("Reshape", [expanded, g.const([1, heads, -1, head_dim], prefix)], prefix)

    inputs = [helper.make_tensor_value_info("input_ids", TensorProto.INT64, [1, "seq"]),
              helper.make_tensor_value_info("attention_mask", TensorProto.INT64, [1, "total"]),
              helper.make_tensor_value_info("position_ids", TensorProto.INT64, [1, "seq"])]
    outputs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, "seq", vocab])]

    prefix = "/model/embed_tokens"
    data.add("model.embed_tokens.weight.stored", [vocab, hidden], 1.0)
    g.nodes.append(helper.make_node("Cast", ["model.embed_tokens.weight.stored"],
                                    ["model.embed_tokens.weight"], name=f"{prefix}/Cast",
                                    to=TensorProto.FLOAT))
    x = g.op("Gather", ["model.embed_tokens.weight", "input_ids"], prefix)

    prefix = "/model/rotary_emb"
    inv_freq = 1.0 / theta ** (np.arange(0, head_dim, 2, dtype=np.float64) / head_dim)
    frequencies = g.const(inv_freq.astype(np.float32).reshape(1, half, 1), prefix, np.float32)
    positions = g.op("Cast", [g.op("Unsqueeze", ["position_ids", g.const([1], prefix)], prefix)], prefix,
                     to=TensorProto.FLOAT)
    angles = g.op("Transpose", [g.op("MatMul", [frequencies, positions], prefix)], prefix, perm=[0, 2, 1])
    angles = g.op("Concat", [angles, angles], prefix, axis=-1)
    cos = g.op("Unsqueeze", [g.op("Cos", [angles], prefix), g.const([1], prefix)], prefix)
    sin = g.op("Unsqueeze", [g.op("Sin", [angles], prefix), g.const([1], prefix)], prefix)

    scale = float(head_dim ** -0.5)
    for layer in range(layers):
        prefix = f"/model/layers.{layer}"
        name = f"model.layers.{layer}"
        for kind in ("key", "value"):
            inputs.append(helper.make_tensor_value_info(f"past_key_values.{layer}.{kind}", TensorProto.FLOAT,
                                                        [1, kv_heads, "past", head_dim]))
        h = rms_norm(x, f"{name}.input_layernorm.weight", prefix + "/input_layernorm")
        attn = prefix + "/self_attn"
        q = heads_of(linear(h, f"{name}.self_attn.q_proj.weight", hidden, heads * head_dim, attn), heads, attn)
        k = heads_of(linear(h, f"{name}.self_attn.k_proj.weight", hidden, kv_heads * head_dim, attn),
                     kv_heads, attn)
        v = heads_of(linear(h, f"{name}.self_attn.v_proj.weight", hidden, kv_heads * head_dim, attn),
                     kv_heads, attn)
        q, k = rotary(q, cos, sin, attn), rotary(k, cos, sin, attn)
        present = []
        for kind, value in (("key", k), ("value", v)):
            out = f"present.{layer}.{kind}"
            g.nodes.append(helper.make_node("Concat", [f"past_key_values.{layer}.{kind}", value], [out],
                                            name=f"{attn}/concat_{kind}", axis=2))
            outputs.append(helper.make_tensor_value_info(out, TensorProto.FLOAT,
                                                         [1, kv_heads, "total", head_dim]))
            present.append(repeat_kv(out, attn))
        keys = g.op("Transpose", [present[0]], attn, perm=[0, 1, 3, 2])
        scores = g.op("Mul", [g.op("MatMul", [q, keys], attn), g.const(scale, attn, np.float32)], attn)
        probs = g.op("Softmax", [scores], attn, axis=-1)
        context = g.op("Transpose", [g.op("MatMul", [probs, present[1]], attn)], attn, perm=[0, 2, 1, 3])
        context = g.op("Reshape", [context, g.const([1, -1, heads * head_dim], attn)], attn)
        x = g.op("Add", [x, linear(context, f"{name}.self_attn.o_proj.weight", heads * head_dim, hidden,
                                   attn)], prefix)
        h = rms_norm(x, f"{name}.post_attention_layernorm.weight", prefix + "/post_attention_layernorm")
        mlp = prefix + "/mlp"
        gate = linear(h, f"{name}.mlp.gate_proj.weight", hidden, inter, mlp)
        silu = g.op("Mul", [gate, g.op("Sigmoid", [gate], mlp)], mlp)
        up = linear(h, f"{name}.mlp.up_proj.weight", hidden, inter, mlp)
        down = linear(g.op("Mul", [silu, up], mlp), f"{name}.mlp.down_proj.weight", inter, hidden, mlp)
        x = g.op("Add", [x, down], prefix)

    prefix = "/model/norm"
    x = rms_norm(x, "model.norm.weight", prefix)
    if tied:
        head = g.op("Transpose", ["model.embed_tokens.weight"], "/lm_head", perm=[1, 0])
        logits = g.op("MatMul", [x, head], "/lm_head")
    else:
        logits = linear(x, "lm_head.weight", hidden, vocab, "/lm_head")
    g.nodes.append(helper.make_node("Identity", [logits], ["logits"], name="/lm_head/output"))
    data.close()

    graph = helper.make_graph(g.nodes, "shaped_decoder", inputs, outputs, initializer=data.initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name="scripts/shaped_onnx.py")
    model.ir_version = 8
    with open(path, "wb") as out:
        out.write(model.SerializeToString())


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("config", help="a config JSON (bench/configs/, tests/fixtures/configs.json's entries)")
    parser.add_argument("-o", "--output", required=True, help="MODEL.onnx; the weights go to MODEL.onnx.data")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    with open(args.config) as f:
        config = json.load(f)
    folder = os.path.dirname(os.path.abspath(args.output))
    os.makedirs(folder, exist_ok=True)
    shaped_model(config, args.output, args.seed)


if __name__ == "__main__":
    main()
