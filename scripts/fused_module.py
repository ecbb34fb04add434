#!/usr/bin/env python3
"""Write the fused mk IR of a model shape, weights declared but never valued.

The task graph and the schedule depend only on shapes, so a config (the JSON
of tests/fixtures/configs.json or bench/configs/) is enough to see how mkc
would cut and schedule a model too big to export here:

  python3 scripts/fused_module.py bench/configs/llama-3.2-1b-shaped.json -o 1b.mlir
  mkc inspect 1b.mlir

The IR is what the fusion pipeline makes of an imported model: per layer a
qkv gemv (input norm, biases for qwen2), mk.fused_attention (q/k norm for
qwen3), the o_proj gemv with the residual, gate_up (post-attention norm,
silu_mul) and down with the residual; then the lm_head with the final norm
(the embedding table when tied) and the argmax. Rotary frequencies are the
plain theta ones: scaling changes values, not shapes. head_dim is the
config's when it has one (it need not be hidden / heads), and
partial_rotary_factor rotates only that share of each head.
"""
import argparse
import json
import sys

from decoder_dims import decoder_dims


def fused_module(config, dtype="bf16"):
    hidden, inter, layers, heads, kv_heads, head_dim, vocab, eps, theta, tied = \
        decoder_dims(config)
    family = config.get("family", "llama")

    weights, body = [], []

    def weight(name, *shape):
        dims = "x".join(str(d) for d in shape)
        weights.append(f'  mk.weight @"{name}" : tensor<{dims}x{dtype}>')
        return f'@"{name}"'

    def vec(n):
        return f"tensor<{n}xf32>"

    q_rows, kv_rows = heads * head_dim, kv_heads * head_dim
    qkv_rows = q_rows + 2 * kv_rows
    # As transformers computes it: the rotated share of each head, even.
    rotary_dim = int(head_dim * config.get("partial_rotary_factor", 1.0)) // 2 * 2
    inv_freq = ", ".join(f"{theta ** (-2.0 * i / rotary_dim):.6e}" for i in range(rotary_dim // 2))
    scale = head_dim ** -0.5

    table = weight("embed", vocab, hidden)
    body.append(f"    %x0 = mk.embedding {table}[%token] : {vec(hidden)}")
    x = "%x0"
    for layer in range(layers):
        p = f"layer{layer}"
        ws = ", ".join(weight(f"{p}.{n}", rows, hidden)
                       for n, rows in (("wq", q_rows), ("wk", kv_rows), ("wv", kv_rows)))
        biases = ""
        if family == "qwen2":
            biases = " biases [" + ", ".join(
                weight(f"{p}.{n}", rows) for n, rows in (("bq", q_rows), ("bk", kv_rows), ("bv", kv_rows))) + "]"
        norm = weight(f"{p}.input_norm", hidden)
        body.append(f"    %{p}_qkv = mk.gemv {x} weights [{ws}]{biases} norm {norm} "
                    f"{{eps = {eps:e} : f32}} : {vec(hidden)} -> {vec(qkv_rows)}")
        qk_norm, norm_eps = "", ""
        if family == "qwen3":
            qk_norm = f" q_norm {weight(f'{p}.q_norm', head_dim)} k_norm {weight(f'{p}.k_norm', head_dim)}"
            norm_eps = f"norm_eps = {eps:e} : f32, "
        body.append(
            f"    %{p}_attn = mk.fused_attention %{p}_qkv cache %cache{layer} at %pos{qk_norm} "
            f"{{{norm_eps}head_dim = {head_dim} : i64, inv_freq = dense<[{inv_freq}]> : "
            f"tensor<{rotary_dim // 2}xf32>, num_heads = {heads} : i64, num_kv_heads = {kv_heads} : i64, "
            f"rotary_dim = {rotary_dim} : i64, scale = {scale:e} : f32}} : {vec(qkv_rows)}, "
            f"!mk.kv_cache<{kv_heads}, {head_dim}> -> {vec(q_rows)}")
        wo = weight(f"{p}.wo", hidden, q_rows)
        body.append(f"    %{p}_h = mk.gemv %{p}_attn residual {x} weights [{wo}] "
                    f"{{epilogue = \"residual\"}} : {vec(q_rows)}, {vec(hidden)} -> {vec(hidden)}")
        gate_up = ", ".join(weight(f"{p}.{n}", inter, hidden) for n in ("w_gate", "w_up"))
        post = weight(f"{p}.post_norm", hidden)
        body.append(f"    %{p}_mlp = mk.gemv %{p}_h weights [{gate_up}] norm {post} "
                    f"{{epilogue = \"silu_mul\", eps = {eps:e} : f32}} : {vec(hidden)} -> {vec(inter)}")
        down = weight(f"{p}.w_down", hidden, inter)
        body.append(f"    %{p}_out = mk.gemv %{p}_mlp residual %{p}_h weights [{down}] "
                    f"{{epilogue = \"residual\"}} : {vec(inter)}, {vec(hidden)} -> {vec(hidden)}")
        x = f"%{p}_out"
    head = table if tied else weight("lm_head", vocab, hidden)
    final = weight("final_norm", hidden)
    body.append(f"    %logits = mk.gemv {x} weights [{head}] norm {final} {{eps = {eps:e} : f32}} "
                f": {vec(hidden)} -> {vec(vocab)}")
    body.append(f"    %next = mk.argmax %logits : {vec(vocab)}")
    body.append(f"    return %logits, %next : {vec(vocab)}, i64")

    caches = ", ".join(f"%cache{i}: !mk.kv_cache<{kv_heads}, {head_dim}>" for i in range(layers))
    signature = (f"  func.func @decode_step(%token: i64, %pos: index, {caches}) "
                 f"-> ({vec(vocab)}, i64) {{")
    return "\n".join(["module {", *weights, signature, *body, "  }", "}", ""])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("config", help="a JSON model shape, or NAME@FILE for an entry of a "
                        "file of several (tests/fixtures/configs.json)")
    parser.add_argument("-o", "--output", default="-")
    args = parser.parse_args()
    name, _, path = args.config.rpartition("@")
    with open(path) as f:
        config = json.load(f)
    if name:
        config = config[name]
    text = fused_module(config)
    if args.output == "-":
        sys.stdout.write(text)
    else:
        with open(args.output, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
