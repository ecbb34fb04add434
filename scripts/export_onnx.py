#!/usr/bin/env python3
"""Export a Hugging Face decoder-only model to the ONNX signature mkc reads.

This is the recipe for getting a model into mkc. The exported graph has the
Optimum-style decoder signature:

  inputs : input_ids [1, seq], attention_mask [1, past + seq],
           position_ids [1, seq], past_key_values.N.key/value [1, kv_heads, past, head_dim]
  outputs: logits [1, seq, vocab], present.N.key/value [1, kv_heads, past + seq, head_dim]

Usage, for your own model (a folder with config.json and weights):
  python3 scripts/export_onnx.py --model PATH --exporter dynamo --opset 18 -o model.onnx

To remake the test fixtures from tests/fixtures/configs.json (random weights):
  python3 scripts/export_onnx.py --fixtures tests/fixtures

A random-weight model of any shape, from a JSON config like those entries
(with the HF transformers logits of a token list, teacher-forced, to check
against):
  python3 scripts/export_onnx.py --config shape.json -o model.onnx --hf-logits hf.npy --tokens 1,2,3

Needs torch and transformers; the fixtures were made with torch 2.11 and
transformers 5.17. Both exporters are supported: 'torchscript' (opset <= 17
is what it is usually used with) and 'dynamo' (opset 18 and 23).
"""
import argparse
import json
import os
import sys

import numpy as np
import torch


def make_config(spec):
    import transformers

    spec = dict(spec)
    family = spec.pop("family")
    # Where a shape was taken from (bench/configs/): for readers, not a setting.
    spec.pop("source", None)
    classes = {
        "llama": transformers.LlamaConfig,
        "qwen2": transformers.Qwen2Config,
        "qwen3": transformers.Qwen3Config,
        "mistral": transformers.MistralConfig,
        "phi3": transformers.Phi3Config,
        "granite": transformers.GraniteConfig,
        "gemma": transformers.GemmaConfig,
        "gemma3": transformers.Gemma3TextConfig,
        "smollm3": transformers.SmolLM3Config,
        "exaone4": transformers.Exaone4Config,
    }
    attention = spec.pop("attn_implementation", "sdpa")
    # Without rope_theta the family's own rope settings stay (Gemma 3's
    # differ between its sliding and its full layers).
    own_rope = "rope_theta" not in spec and "rope_scaling" not in spec
    rope_theta = spec.pop("rope_theta", 10000.0)
    rope_scaling = spec.pop("rope_scaling", None)
    config = classes[family](**spec)
    # transformers 5 keeps rope settings in rope_parameters; 4.x in
    # rope_theta/rope_scaling. Set whichever this version reads.
    params = {"rope_type": "default", "rope_theta": rope_theta}
    if rope_scaling:
        params.update(rope_scaling)
    # Partial rotary (Phi-4-mini's 0.75): transformers 5 reads it from the
    # rope parameters.
    if "partial_rotary_factor" in spec:
        params["partial_rotary_factor"] = spec["partial_rotary_factor"]
    if own_rope:
        pass
    elif hasattr(config, "rope_parameters"):
        config.rope_parameters = params
    else:
        config.rope_theta = rope_theta
        config.rope_scaling = rope_scaling
    config._attn_implementation = attention
    return config


def make_cache(past, n_layers):
    from transformers import DynamicCache

    cache = DynamicCache()
    for i in range(n_layers):
        cache.update(past[2 * i], past[2 * i + 1], i)
    return cache


def cache_layer(cache, i):
    if hasattr(cache, "layers"):
        return cache.layers[i].keys, cache.layers[i].values
    return cache.key_cache[i], cache.value_cache[i]


class DecoderSignature(torch.nn.Module):
    """Wraps a HF causal LM so its inputs and outputs are flat tensors."""

    def __init__(self, model):
        super().__init__()
        self.model = model
        self.n_layers = model.config.num_hidden_layers

    def forward(self, input_ids, attention_mask, position_ids, *past):
        cache = make_cache(past, self.n_layers)
        out = self.model(
            input_ids=input_ids,
            attention_mask=attention_mask,
            position_ids=position_ids,
            past_key_values=cache,
            use_cache=True,
        )
        presents = []
        for i in range(self.n_layers):
            presents.extend(cache_layer(out.past_key_values, i))
        return (out.logits, *presents)


def io_names(n_layers):
    inputs = ["input_ids", "attention_mask", "position_ids"]
    outputs = ["logits"]
    for i in range(n_layers):
        inputs += [f"past_key_values.{i}.key", f"past_key_values.{i}.value"]
        outputs += [f"present.{i}.key", f"present.{i}.value"]
    return inputs, outputs


def example_inputs(config, dtype, device, seq=2, past=3):
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
    kv = config.num_key_value_heads
    ids = torch.randint(0, config.vocab_size, (1, seq), device=device)
    mask = torch.ones(1, past + seq, dtype=torch.int64, device=device)
    pos = torch.arange(past, past + seq, device=device).unsqueeze(0)
    pasts = []
    for _ in range(config.num_hidden_layers):
        pasts.append(torch.randn(1, kv, past, head_dim, dtype=dtype, device=device))
        pasts.append(torch.randn(1, kv, past, head_dim, dtype=dtype, device=device))
    return (ids, mask, pos, *pasts)


def export(model, path, exporter, opset, dtype=torch.float32, device="cpu"):
    config = model.config
    wrapper = DecoderSignature(model).eval()
    args = example_inputs(config, dtype, device)
    inputs, outputs = io_names(config.num_hidden_layers)
    if exporter == "torchscript":
        axes = {"input_ids": {1: "seq"}, "attention_mask": {1: "total"}, "position_ids": {1: "seq"},
                "logits": {1: "seq"}}
        for name in inputs[3:]:
            axes[name] = {2: "past"}
        for name in outputs[1:]:
            axes[name] = {2: "total"}
        torch.onnx.export(wrapper, args, path, dynamo=False, opset_version=opset,
                          input_names=inputs, output_names=outputs, dynamic_axes=axes)
    else:
        # Dim.DYNAMIC lets torch.export find the relations (total = past + seq).
        dynamic = torch.export.Dim.DYNAMIC
        # forward(input_ids, attention_mask, position_ids, *past): the varargs are one tuple.
        past_shapes = tuple({2: dynamic} for _ in range(2 * config.num_hidden_layers))
        shapes = ({1: dynamic}, {1: dynamic}, {1: dynamic}, past_shapes)
        program = torch.onnx.export(wrapper, args, dynamo=True, opset_version=opset,
                                    input_names=inputs, output_names=outputs,
                                    dynamic_shapes=shapes, optimize=True)
        program.save(path)


def hf_logits(model, tokens, generate=0):
    """Teacher-forced logits of HF transformers for tokens fed one at a time;
    with `generate`, greedy generation continues after them, feeding each
    argmax back. Returns the logits of every fed token ([fed, vocab]) and the
    generated tokens (the last one is returned, not fed)."""
    from transformers import DynamicCache

    cache = DynamicCache()
    rows, generated = [], []
    fed = list(tokens)
    with torch.no_grad():
        t = 0
        while t < len(fed):
            ids = torch.tensor([[fed[t]]])
            out = model(input_ids=ids, attention_mask=torch.ones(1, t + 1, dtype=torch.int64),
                        position_ids=torch.tensor([[t]]), past_key_values=cache, use_cache=True)
            cache = out.past_key_values
            rows.append(out.logits[0, -1].float().numpy())
            if t == len(fed) - 1 and len(generated) < generate:
                generated.append(int(np.argmax(rows[-1])))
                if len(generated) < generate:
                    fed.append(generated[-1])
            t += 1
    return np.stack(rows), generated


def widen_random_init(model):
    """Random init is small; widen it so logits are not all near-tied."""
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() >= 2:
                p.normal_(0.0, 0.08)
            else:
                p.copy_(1.0 + 0.1 * torch.randn_like(p))
    return model


def random_model(spec, seed=0):
    import transformers

    torch.manual_seed(seed)
    config = make_config(spec)
    return widen_random_init(transformers.AutoModelForCausalLM.from_config(config).eval())


def make_fixtures(folder, only=None):
    with open(os.path.join(folder, "configs.json")) as f:
        specs = json.load(f)
    tokens = [1, 7, 42, 3, 99, 5, 11, 64, 2, 17, 33, 8]
    failures = []
    for name, spec in specs.items():
        # Only the families asked for: the others' files stay as they are.
        if only and not any(only in f"{name}_{tag}" for tag in ("ts17", "dynamo18", "dynamo23")):
            continue
        model = random_model(spec)
        inv_freq = model.model.rotary_emb.inv_freq
        print(name, "inv_freq", inv_freq[:3].tolist(), inv_freq[-3:].tolist(), flush=True)
        np.save(os.path.join(folder, f"{name}.hf_logits.npy"), hf_logits(model, tokens)[0])
        for exporter, opset in [("torchscript", 17), ("dynamo", 18), ("dynamo", 23)]:
            tag = "ts" if exporter == "torchscript" else "dynamo"
            path = os.path.join(folder, f"{name}_{tag}{opset}.onnx")
            if only and only not in path:
                continue
            try:
                export(model, path, exporter, opset)
                print("exported", path, os.path.getsize(path), flush=True)
            except Exception as e:  # keep going: report every family/exporter pair
                failures.append((path, repr(e)[-3000:]))
                print("FAILED", path, str(e)[-3000:], flush=True)
    with open(os.path.join(folder, "hf_tokens.json"), "w") as f:
        json.dump(tokens, f)
    return failures


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", help="HF model folder or id (local files only)")
    ap.add_argument("--exporter", choices=["torchscript", "dynamo"], default="dynamo")
    ap.add_argument("--opset", type=int, default=18)
    ap.add_argument("--dtype", choices=["float32", "float16", "bfloat16"], default="float32")
    ap.add_argument("-o", "--output")
    ap.add_argument("--fixtures", help="folder with configs.json: export every fixture there")
    ap.add_argument("--only", help="with --fixtures: only the fixtures whose file names contain "
                    "this text (e.g. a family: phi3)")
    ap.add_argument("--config", help="JSON config (as in configs.json) of a random-weight model")
    ap.add_argument("--device", default="cpu", help="where to run the export (cpu, cuda)")
    ap.add_argument("--hf-logits", help="also save HF transformers' teacher-forced logits here")
    ap.add_argument("--tokens", default="1,7,42,3,99,5,11,64,2,17,33,8")
    ap.add_argument("--hf-generate", type=int, default=0, metavar="N",
                    help="with --hf-logits: after --tokens, generate N tokens greedily with HF; "
                         "the logits cover every token fed (prompt and generated)")
    ap.add_argument("--hf-tokens", help="with --hf-generate: write {prompt, generated} here (JSON)")
    ap.add_argument("--round-weights-bf16", action="store_true",
                    help="round the weights to bf16 values (kept in f32) first, so that "
                         "a bf16 .mk and the f32 references hold the same numbers")
    a = ap.parse_args()
    if a.fixtures:
        failures = make_fixtures(a.fixtures, a.only)
        sys.exit(1 if failures else 0)
    if not ((a.model or a.config) and a.output):
        ap.error("give --model or --config, and -o; or --fixtures")
    import transformers

    dtype = getattr(torch, a.dtype)
    if a.config:
        # FILE.json, or FILE.json:NAME for one entry of a file of several.
        path, _, entry = a.config.partition(".json:")
        path = path if path.endswith(".json") else path + ".json"
        with open(path) as f:
            spec = json.load(f)
        model = random_model(spec[entry] if entry else spec)
    else:
        model = transformers.AutoModelForCausalLM.from_pretrained(
            a.model, torch_dtype=torch.float32, attn_implementation="sdpa").eval()
    if a.round_weights_bf16:
        with torch.no_grad():
            for p in model.parameters():
                p.copy_(p.to(torch.bfloat16).to(p.dtype))
    if a.hf_logits:
        prompt = [int(t) for t in a.tokens.split(",")]
        logits, generated = hf_logits(model, prompt, a.hf_generate)
        np.save(a.hf_logits, logits)
        if a.hf_tokens:
            with open(a.hf_tokens, "w") as f:
                json.dump({"prompt": prompt, "generated": generated}, f)
    model = model.to(device=a.device, dtype=dtype)
    export(model, a.output, a.exporter, a.opset, dtype=dtype, device=a.device)
    print("exported", a.output)


if __name__ == "__main__":
    main()
