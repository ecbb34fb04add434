#!/usr/bin/env python3
"""Writes a model's tokenizer files into DIR, as an HF checkpoint has them: a
small WordLevel tokenizer.json, tokenizer_config.json (EOS and BOS by name,
a chat template) and generation_config.json (EOS ids, sampling defaults).
Options make one of them wrong, for the refusals.

  tokenizer_files.py DIR [--no-generation-config] [--eos-name NAME]
                         [--added-id N] [--broken FILE]
"""
import argparse
import json
import os

ap = argparse.ArgumentParser()
ap.add_argument("dir")
ap.add_argument("--no-generation-config", action="store_true")
ap.add_argument("--eos-name", default="</s>")
ap.add_argument("--added-id", type=int, default=2)
ap.add_argument("--broken", help="a file written as invalid JSON")
a = ap.parse_args()
os.makedirs(a.dir, exist_ok=True)

files = {
    "tokenizer.json": {
        "version": "1.0",
        "added_tokens": [{"id": a.added_id, "content": "<|im_end|>", "special": True}],
        "model": {"type": "WordLevel", "vocab": {"<s>": 0, "</s>": 1, "hello": 3}, "unk_token": "<s>"},
    },
    "tokenizer_config.json": {
        "eos_token": a.eos_name,
        "bos_token": {"content": "<s>"},
        "chat_template": "{% for m in messages %}{{ m['content'] }}\n{% endfor %}",
    },
    "generation_config.json": {
        "bos_token_id": 0, "eos_token_id": [1, a.added_id],
        "do_sample": True, "temperature": 0.7, "top_p": 0.9,
    },
}
if a.no_generation_config:
    del files["generation_config.json"]
for name, content in files.items():
    with open(os.path.join(a.dir, name), "w") as f:
        if name == a.broken:
            f.write('{"eos_token": "</s>",\n  "bos_token": }\n')
        else:
            json.dump(content, f, indent=1)
