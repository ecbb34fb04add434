#!/usr/bin/env python3
"""Which Hugging Face decoder families mkc takes, and why not the others.

Builds a tiny random-weight model of each family below (transformers'
config classes, no download), exports it with TorchScript (opset 17) and
dynamo (opset 18), and runs mkc on it: the reference interpreter and the
validated schedule on the CPU executor, each against onnxruntime on the same
file (relative error of the logits over 12 teacher-forced tokens). Prints a
markdown table, one row per family and exporter, with mkc's error where it
refuses. Needs torch, transformers, onnx, onnxruntime (where they are
installed):

  python3 scripts/family_probe.py --mkc build/compiler/tools/mkc --out /tmp/families
"""
import argparse
import contextlib
import io
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import export_onnx  # noqa: E402
from ort_logits import teacher_forced_logits  # noqa: E402

TOKENS = [1, 7, 42, 3, 99, 5, 11, 64, 2, 17, 33, 8]
SMALL = dict(hidden_size=64, intermediate_size=160, num_hidden_layers=2, num_attention_heads=4,
             vocab_size=256, max_position_embeddings=512)
# (family, config class, settings beyond SMALL)
FAMILIES = [
    ("llama", "LlamaConfig", dict(num_key_value_heads=2)),
    ("qwen2", "Qwen2Config", dict(num_key_value_heads=2)),
    ("qwen3", "Qwen3Config", dict(num_key_value_heads=2, head_dim=32)),
    ("mistral", "MistralConfig", dict(num_key_value_heads=2)),
    ("mistral, sliding window 6", "MistralConfig", dict(num_key_value_heads=2, sliding_window=6)),
    ("phi3", "Phi3Config", dict(num_key_value_heads=2, pad_token_id=0)),
    ("phi3, partial rotary (Phi-4-mini)", "Phi3Config",
     dict(hidden_size=96, num_key_value_heads=2, partial_rotary_factor=0.75,
          tie_word_embeddings=True, pad_token_id=0)),
    ("granite", "GraniteConfig",
     dict(num_key_value_heads=2, embedding_multiplier=12.0, residual_multiplier=0.22,
          attention_multiplier=0.0078125, logits_scaling=8.0, tie_word_embeddings=True)),
    ("smollm3 (NoPE layers)", "SmolLM3Config",
     dict(num_hidden_layers=4, num_key_value_heads=2, pad_token_id=0)),
    ("olmo2", "Olmo2Config", dict(num_key_value_heads=4, pad_token_id=0)),
    ("gemma", "GemmaConfig", dict(num_key_value_heads=1, head_dim=32)),
    ("gemma3", "Gemma3TextConfig", dict(num_key_value_heads=2, head_dim=32, sliding_window=64)),
    ("starcoder2", "Starcoder2Config", dict(num_key_value_heads=2)),
    ("stablelm", "StableLmConfig", dict(num_key_value_heads=4)),
    ("olmo", "OlmoConfig", dict(num_key_value_heads=4, pad_token_id=0)),
    ("exaone4", "Exaone4Config",
     dict(num_key_value_heads=2, head_dim=16, sliding_window=6, sliding_window_pattern=2)),
    ("seed_oss", "SeedOssConfig", dict(num_key_value_heads=2, head_dim=16)),
    ("hunyuan_dense", "HunYuanDenseV1Config", dict(num_key_value_heads=2, head_dim=16)),
    ("ernie4_5", "Ernie4_5Config", dict(num_key_value_heads=2, head_dim=16)),
]


def relative_error(a, b):
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


def mkc_logits(mkc, path, engine):
    npy = f"{path}.{engine}.npy"
    run = subprocess.run([mkc, "eval", path, "--tokens", ",".join(map(str, TOKENS)),
                          "--logits", npy, f"--engine={engine}"], capture_output=True, text=True)
    if run.returncode != 0:
        return None, (run.stderr.strip().splitlines() or ["exit %d" % run.returncode])[-1]
    return np.load(npy), ""


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mkc", required=True)
    ap.add_argument("--out", required=True, help="a folder for the exports")
    a = ap.parse_args()
    import torch
    import transformers

    os.makedirs(a.out, exist_ok=True)
    print("| family | export | reference | schedule | mkc says |")
    print("| --- | --- | --- | --- | --- |")
    for family, config_class, settings in FAMILIES:
        torch.manual_seed(0)
        try:
            config = getattr(transformers, config_class)(**{**SMALL, **settings})
            config._attn_implementation = "sdpa"
            model = export_onnx.widen_random_init(
                transformers.AutoModelForCausalLM.from_config(config).eval())
        except Exception as e:  # this transformers cannot build it: not mkc's doing
            print(f"| {family} | — | — | — | transformers: {str(e)[:80]} |", flush=True)
            continue
        tag = family.split(",")[0].split(" ")[0]
        for exporter, opset in (("torchscript", 17), ("dynamo", 18)):
            path = os.path.join(a.out, f"{tag}_{len(settings)}_{exporter}{opset}.onnx")
            try:
                # The dynamo exporter reports its steps on stdout: keep the table clean.
                with contextlib.redirect_stdout(io.StringIO()):
                    export_onnx.export(model, path, exporter, opset)
                reference = teacher_forced_logits(path, TOKENS)
            except Exception as e:
                print(f"| {family} | {exporter} {opset} | — | — | export: {str(e)[:80]} |",
                      flush=True)
                continue
            cells, said = [], ""
            for engine in ("reference", "schedule"):
                logits, error = mkc_logits(a.mkc, path, engine)
                cells.append("refused" if logits is None
                             else f"{relative_error(logits, reference):.1e}")
                said = said or error.replace("|", "/")[:160]
            print(f"| {family} | {exporter} {opset} | {cells[0]} | {cells[1]} | {said} |",
                  flush=True)


if __name__ == "__main__":
    main()
