#!/usr/bin/env python3
"""Writes a llama.cpp GGUF file with gguf-py's GGUFWriter from the weights of
a committed ONNX fixture (a TorchScript export, tests/fixtures/*_ts17.onnx,
whose node names say what each initializer is), the way llama.cpp's
convert_hf_to_gguf lays it out:

  - tensor names token_embd, blk.N.attn_q, ..., output_norm, output (absent
    when the embeddings are tied), numpy shape [out, in] (ggml ne = [in, out]);
  - q and k rows of `llama`/`mistral`/`granite` permuted from HF's
    rotate-half order to ggml's adjacent pairs, per head (k over the KV heads);
  - phi3's fused qkv_proj and gate_up_proj as attn_qkv and ffn_up, its
    partial rotary as rope.dimension_count; granite's multipliers as its
    embedding_scale, residual_scale, attention.scale and logit_scale keys;
    gemma's (1 + w) norms as the weights the norms multiply by (the
    converter adds the 1; the TorchScript export has folded it);
  - Llama 3's rope scaling as a rope_freqs.weight tensor of divisors;
  - 2-D weights in --type where their rows are whole blocks of it, else F16
    (as the converter falls back), 1-D ones in F32.

With --damage SPEC (repeatable), the file is wrong in one way, for the
refusal tests: drop:KEY (a metadata key left out), set:KEY=TYPE:VALUE (a
key written as TYPE u32, f32 or str), drop-tensor:NAME,
transpose-tensor:NAME (its dims swapped), tensor-type:NAME=TYPE (a ggml type
such as Q8_1), extra-tensor:NAME (a tensor no llama block has).

With --bpe-tokenizer TOKENIZER.json, the vocabulary is that byte-level BPE
tokenizer's (model gpt2, pre-tokenizer --bpe-pre), as llama.cpp's converter
writes SmolLM2's; otherwise placeholder tokens of a "llama" model.

With --reference-onnx, also writes the ONNX fixture with every weight
replaced by what the GGUF file holds, dequantized by gguf-py and
un-permuted: onnxruntime on it is the oracle of mkc on the GGUF file, so
quantized files are checked as tightly as F32 ones.

  make_gguf_from_onnx.py FIXTURE.onnx OUT.gguf [--type Q8_0] [--reference-onnx REF.onnx]
"""
import argparse
import json
import math
import os
import re
import sys

import numpy as np
import onnx
from onnx import numpy_helper
import gguf
from gguf import GGMLQuantizationType as T
from gguf.quants import dequantize, quantize

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ARCH = {"llama": "llama", "mistral": "mistral", "qwen2": "qwen2", "qwen3": "qwen3",
        "phi3": "phi3", "granite": "granite", "gemma": "gemma", "gemma3": "gemma3",
        "smollm3": "smollm3", "exaone4": "exaone4"}
PERMUTED = {"llama", "mistral", "granite", "smollm3"}
# transformers' default tie_word_embeddings for the family
TIED_BY_DEFAULT = {"gemma", "gemma3", "smollm3"}
TYPES = {"F32": T.F32, "F16": T.F16, "BF16": T.BF16, "Q8_0": T.Q8_0, "Q4_0": T.Q4_0,
         "Q4_1": T.Q4_1, "Q5_0": T.Q5_0, "Q5_1": T.Q5_1}

# (pattern on the ONNX node name, GGUF name, the initializer is [in, out])
ROLES = [
    (r"/embed_tokens/Gather$", "token_embd.weight", False),
    (r"/layers\.(\d+)/input_layernorm/Mul_1$", "blk.{}.attn_norm.weight", False),
    (r"/layers\.(\d+)/self_attn/q_proj/MatMul$", "blk.{}.attn_q.weight", True),
    (r"/layers\.(\d+)/self_attn/k_proj/MatMul$", "blk.{}.attn_k.weight", True),
    (r"/layers\.(\d+)/self_attn/v_proj/MatMul$", "blk.{}.attn_v.weight", True),
    (r"/layers\.(\d+)/self_attn/qkv_proj/MatMul$", "blk.{}.attn_qkv.weight", True),
    (r"/layers\.(\d+)/mlp/gate_up_proj/MatMul$", "blk.{}.ffn_up.weight", True),
    (r"/layers\.(\d+)/self_attn/q_proj/Add$", "blk.{}.attn_q.bias", False),
    (r"/layers\.(\d+)/self_attn/k_proj/Add$", "blk.{}.attn_k.bias", False),
    (r"/layers\.(\d+)/self_attn/v_proj/Add$", "blk.{}.attn_v.bias", False),
    (r"/layers\.(\d+)/self_attn/q_norm/Mul_1$", "blk.{}.attn_q_norm.weight", False),
    (r"/layers\.(\d+)/self_attn/k_norm/Mul_1$", "blk.{}.attn_k_norm.weight", False),
    (r"/layers\.(\d+)/self_attn/o_proj/MatMul$", "blk.{}.attn_output.weight", True),
    (r"/layers\.(\d+)/post_attention_layernorm/Mul_1$", "blk.{}.ffn_norm.weight", False),
    (r"/layers\.(\d+)/mlp/gate_proj/MatMul$", "blk.{}.ffn_gate.weight", True),
    (r"/layers\.(\d+)/mlp/up_proj/MatMul$", "blk.{}.ffn_up.weight", True),
    (r"/layers\.(\d+)/mlp/down_proj/MatMul$", "blk.{}.ffn_down.weight", True),
    (r"/model/norm/Mul_1$", "output_norm.weight", False),
    (r"/lm_head/MatMul$", "output.weight", True),
]
# Gemma 3's four norms a layer (EXAONE 4's two after, none before), as
# llama.cpp's converter names them: its
# post_attention_layernorm follows attention (post_attention_norm); the MLP's
# norm is pre_feedforward_layernorm, and post_feedforward_layernorm follows
# the MLP. (Their initializers hold 1 + w, as the converter writes them.)
GEMMA3_ROLES = [role for role in ROLES if "post_attention_layernorm" not in role[0]] + [
    (r"/layers\.(\d+)/post_attention_layernorm/Mul_1$", "blk.{}.post_attention_norm.weight", False),
    (r"/layers\.(\d+)/pre_feedforward_layernorm/Mul_1$", "blk.{}.ffn_norm.weight", False),
    (r"/layers\.(\d+)/post_feedforward_layernorm/Mul_1$", "blk.{}.post_ffw_norm.weight", False),
]


def family_config(fixture):
    """The fixture's config: tests/fixtures/configs.json's, or the extra
    fixtures' own tests/fixtures/extra/MODEL.json (gemma3_gguf_ts17.onnx:
    gemma3-gguf.json) or FAMILY.json."""
    model = re.sub(r"_(ts\d+|dynamo\d+)$", "", os.path.splitext(os.path.basename(fixture))[0])
    family = model.split("_")[0]
    fixtures = os.path.join(ROOT, "tests", "fixtures")
    with open(os.path.join(fixtures, "configs.json")) as f:
        configs = json.load(f)
    if family in configs:
        return family, configs[family]
    own = os.path.join(fixtures, "extra", model.replace("_", "-") + ".json")
    with open(own if os.path.exists(own) else os.path.join(fixtures, "extra", family + ".json")) as f:
        return family, json.load(f)


def onnx_weights(model, family=None):
    """GGUF name -> (initializer name, transposed, [out, in] or 1-D array)."""
    inits = {i.name: i for i in model.graph.initializer}
    found = {}
    roles = GEMMA3_ROLES if family in ("gemma3", "exaone4") else ROLES
    for node in model.graph.node:
        for pattern, name, transposed in roles:
            match = re.search(pattern, node.name)
            if not match:
                continue
            weights = [i for i in node.input if i in inits and
                       numpy_helper.to_array(inits[i]).size > 1]
            if len(weights) != 1:
                sys.exit(f"node {node.name}: expected one weight initializer, found {weights}")
            array = numpy_helper.to_array(inits[weights[0]]).astype(np.float32)
            gguf_name = name.format(*match.groups())
            found[gguf_name] = (weights[0], transposed, array.T.copy() if transposed else array)
    return found


def permute(rows, heads):
    """HF rotate-half rows to ggml's adjacent pairs, as convert_hf_to_gguf does."""
    return (rows.reshape(heads, 2, rows.shape[0] // heads // 2, *rows.shape[1:])
            .swapaxes(1, 2).reshape(rows.shape))


def unpermute(rows, heads):
    return (rows.reshape(heads, rows.shape[0] // heads // 2, 2, *rows.shape[1:])
            .swapaxes(1, 2).reshape(rows.shape))


def llama3_rope_divisors(config, head_dim):
    """The per-frequency divisors llama.cpp's rope_freqs.weight holds for
    transformers' llama3 rope_scaling."""
    scaling = config["rope_scaling"]
    factor, low, high = scaling["factor"], scaling["low_freq_factor"], scaling["high_freq_factor"]
    old = scaling["original_max_position_embeddings"]
    base = config["rope_theta"]
    divisors = []
    for i in range(0, head_dim, 2):
        wavelen = 2 * math.pi * base ** (i / head_dim)
        if wavelen < old / high:
            divisors.append(1.0)
        elif wavelen > old / low:
            divisors.append(factor)
        else:
            smooth = (old / wavelen - low) / (high - low)
            divisors.append(1 / ((1 - smooth) / factor + smooth))
    return np.array(divisors, dtype=np.float32)


def stored_type(array, qtype):
    """The converter's choice: 1-D tensors in F32, rows that are not whole
    blocks of the type in F16."""
    if array.ndim == 1 or qtype == T.F32:
        return T.F32
    block = gguf.GGML_QUANT_SIZES[qtype][0]
    return qtype if array.shape[-1] % block == 0 else T.F16


def apply_tensor_damage(damage, tensors, types):
    for spec in damage:
        kind, _, arg = spec.partition(":")
        if kind == "drop-tensor":
            del tensors[arg]
        elif kind == "transpose-tensor":
            tensors[arg] = tensors[arg].T.copy()
        elif kind == "tensor-type":
            name, _, type_name = arg.partition("=")
            types[name] = T[type_name]
        elif kind == "extra-tensor":
            tensors[arg] = np.ones(8, dtype=np.float32)
        elif kind not in ("drop", "set"):
            sys.exit(f"unknown damage '{spec}'")


def apply_key_damage(damage, writer):
    kv = writer.kv_data[0]
    for spec in damage:
        kind, _, arg = spec.partition(":")
        if kind == "drop":
            del kv[arg]
        elif kind == "set":
            key, _, typed = arg.partition("=")
            type_name, _, value = typed.partition(":")
            value_type, convert = {"u32": (gguf.GGUFValueType.UINT32, int),
                                   "f32": (gguf.GGUFValueType.FLOAT32, float),
                                   "str": (gguf.GGUFValueType.STRING, str)}[type_name]
            kv[key] = gguf.GGUFValue(convert(value), value_type)


def add_bpe_vocabulary(writer, tokenizer_json, pre):
    """The vocabulary of an HF byte-level BPE tokenizer.json as llama.cpp's
    converter writes one: model gpt2, its tokens by id, its merges as
    "left right", added special tokens as control tokens (type 3)."""
    with open(tokenizer_json, encoding="utf-8") as f:
        tokenizer = json.load(f)
    vocab = tokenizer["model"]["vocab"]
    tokens = [None] * len(vocab)
    for text, token_id in vocab.items():
        tokens[token_id] = text
    types = [1] * len(tokens)
    for added in tokenizer.get("added_tokens", []):
        types[added["id"]] = 3 if added.get("special") else 4
    merges = [m if isinstance(m, str) else " ".join(m) for m in tokenizer["model"]["merges"]]
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre(pre)
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    writer.add_token_merges(merges)
    writer.add_add_bos_token(False)


def write_gguf(fixture, path, type_name, damage=(), arch=None, bpe_tokenizer=None, bpe_pre="smollm"):
    family, config = family_config(fixture)
    model = onnx.load(fixture)
    weights = onnx_weights(model, config["family"])
    hidden, heads = config["hidden_size"], config["num_attention_heads"]
    kv_heads = config.get("num_key_value_heads", heads)
    head_dim = config.get("head_dim") or hidden // heads
    arch = arch or ARCH[config["family"]]

    tensors = {name: array for name, (_, _, array) in weights.items()}
    # A tied lm_head is exported as its own transposed copy: GGUF leaves it out.
    tied = config.get("tie_word_embeddings", config["family"] in TIED_BY_DEFAULT)
    if tied and "output.weight" in tensors:
        assert np.array_equal(tensors["output.weight"], tensors["token_embd.weight"])
        del tensors["output.weight"]
    if arch in PERMUTED:
        for name in list(tensors):
            if re.search(r"attn_q\.(weight|bias)$", name):
                tensors[name] = permute(tensors[name], heads)
            elif re.search(r"attn_k\.(weight|bias)$", name):
                tensors[name] = permute(tensors[name], kv_heads)
    if config.get("rope_scaling", {}) and config["rope_scaling"].get("rope_type") == "llama3":
        tensors["rope_freqs.weight"] = llama3_rope_divisors(config, head_dim)

    types = {}
    apply_tensor_damage(damage, tensors, types)

    writer = gguf.GGUFWriter(path, arch)
    # Not the family's name: llama.cpp gives a model named like "phi3" Phi-3's
    # special tokens (</s>, <|endoftext|>), which the placeholder vocabulary lacks.
    writer.add_name("mkc fixture from ONNX")
    writer.add_context_length(config["max_position_embeddings"])
    writer.add_embedding_length(hidden)
    writer.add_block_count(config["num_hidden_layers"])
    writer.add_feed_forward_length(config["intermediate_size"])
    writer.add_head_count(heads)
    writer.add_head_count_kv(kv_heads)
    if config.get("head_dim"):
        writer.add_key_length(head_dim)
        writer.add_value_length(head_dim)
    writer.add_rope_dimension_count(int(head_dim * config.get("partial_rotary_factor", 1.0)))
    if arch == "gemma3":
        # The full layers' base (the converter's; the sliding layers' 10000 is
        # llama.cpp's default), the window, and llama.cpp's default pattern
        # of five sliding layers to one full one, which must be the fixture's.
        writer.add_rope_freq_base(config.get("rope_theta", 1_000_000.0))
        writer.add_sliding_window(config["sliding_window"])
        layers = config["num_hidden_layers"]
        assert config.get("query_pre_attn_scalar") == head_dim, "llama.cpp scales q by head_dim^-0.5"
        assert config.get("layer_types", [("full" if i % 6 == 5 else "sliding") + "_attention"
                                          for i in range(layers)]) == \
            [("full" if i % 6 == 5 else "sliding") + "_attention" for i in range(layers)]
    else:
        writer.add_rope_freq_base(config["rope_theta"])
    if arch == "granite":
        writer.add_float32("granite.embedding_scale", config["embedding_multiplier"])
        writer.add_float32("granite.residual_scale", config["residual_multiplier"])
        writer.add_float32("granite.attention.scale", config["attention_multiplier"])
        writer.add_float32("granite.logit_scale", config["logits_scaling"])
    writer.add_layer_norm_rms_eps(config["rms_norm_eps"])
    vocab = config["vocab_size"]
    if bpe_tokenizer:
        add_bpe_vocabulary(writer, bpe_tokenizer, bpe_pre)
    else:
        writer.add_tokenizer_model("llama")
        writer.add_token_list([f"<t{i}>" for i in range(vocab)])
        writer.add_token_scores([0.0] * vocab)
        writer.add_token_types([1] * vocab)
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(2)
    writer.add_chat_template("{% for m in messages %}<t3>{{ m['content'] }}<t4>{% endfor %}")
    apply_key_damage(damage, writer)
    qtype = TYPES[type_name]
    for name, array in tensors.items():
        kind = types.get(name, stored_type(array, qtype))
        if kind == T.F32:
            writer.add_tensor(name, array.astype(np.float32))
        elif kind == T.F16:
            writer.add_tensor(name, array.astype(np.float16))
        elif name in types and kind not in TYPES.values():
            # A damaged type gguf-py may not quantize to: zero blocks of its size.
            block, block_bytes = gguf.GGML_QUANT_SIZES[kind]
            raw = np.zeros((array.shape[0], array.shape[-1] // block * block_bytes), np.uint8)
            writer.add_tensor(name, raw, raw_dtype=kind)
        else:
            writer.add_tensor(name, quantize(array, kind), raw_dtype=kind)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return family, config, model, weights


def write_reference(path, fixture_model, weights, gguf_path, config):
    """The fixture with each weight replaced by gguf-py's reading of the file."""
    heads = config["num_attention_heads"]
    kv_heads = config.get("num_key_value_heads", heads)
    arch = ARCH[config["family"]]
    reader = gguf.GGUFReader(gguf_path)
    read = {}
    for tensor in reader.tensors:
        raw = np.asarray(tensor.data).view(np.uint8).reshape(-1)
        values = dequantize(raw, tensor.tensor_type).reshape(-1).astype(np.float32)
        shape = [int(d) for d in reversed(tensor.shape)]
        read[tensor.name] = values.reshape(shape)
    if arch in PERMUTED:
        for name in list(read):
            if re.search(r"attn_q\.(weight|bias)$", name):
                read[name] = unpermute(read[name], heads)
            elif re.search(r"attn_k\.(weight|bias)$", name):
                read[name] = unpermute(read[name], kv_heads)
    if "output.weight" not in read:
        read["output.weight"] = read["token_embd.weight"]
    inits = {i.name: i for i in fixture_model.graph.initializer}
    for name, (init_name, transposed, _) in weights.items():
        values = read[name].T if transposed else read[name]
        old = inits[init_name]
        new = numpy_helper.from_array(np.ascontiguousarray(values, dtype=np.float32), init_name)
        old.CopyFrom(new)
    onnx.save(fixture_model, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("fixture")
    ap.add_argument("output")
    ap.add_argument("--type", default="F32", choices=sorted(TYPES))
    ap.add_argument("--reference-onnx")
    ap.add_argument("--damage", action="append", default=[])
    ap.add_argument("--arch", choices=sorted(set(ARCH.values())),
                    help="general.architecture (default: the family's; llama.cpp's converter "
                    "writes Mistral models as llama)")
    ap.add_argument("--bpe-tokenizer", metavar="TOKENIZER.json",
                    help="the vocabulary of this HF byte-level BPE tokenizer (model gpt2) instead "
                    "of a SentencePiece-like list of placeholder tokens")
    ap.add_argument("--bpe-pre", default="smollm", help="tokenizer.ggml.pre with --bpe-tokenizer")
    a = ap.parse_args()
    if a.arch and a.reference_onnx:
        sys.exit("--arch and --reference-onnx: the reference assumes the family's architecture")
    _, config, model, weights = write_gguf(a.fixture, a.output, a.type, a.damage, a.arch,
                                           a.bpe_tokenizer, a.bpe_pre)
    if a.reference_onnx:
        write_reference(a.reference_onnx, model, weights, a.output, config)


if __name__ == "__main__":
    main()
