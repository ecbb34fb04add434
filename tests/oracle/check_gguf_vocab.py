#!/usr/bin/env python3
"""An oracle written by others for the tokenizer mkc builds from a GGUF
file's vocabulary: llama.cpp's vocabulary-only test files
(models/ggml-vocab-NAME.gguf, from its sdist, which scripts/install_llama_cpp.sh
fetches), each with test texts (.gguf.inp) and the token ids the model's
original HF tokenizer gives them (.gguf.out, written by llama.cpp's
convert_hf_to_gguf_update.py with add_special_tokens=False).

The tokenizer.json mkc would put in a .mk (mk-gguf-tokenizer-json writes it
alone: a vocabulary-only file has no tensors to compile) is read as the
runtime reads it (python/mkrt/text.py) and must give those ids for every text.

With --unsupported, the vocabulary is one whose model or pre-tokenizer mkc
does not build: the tool must say so, naming it, as `mkc compile` warns.

Exits 77 (skipped, with the reason printed) when the files are not there.

  check_gguf_vocab.py --tool mk-gguf-tokenizer-json --models DIR NAME [--unsupported]
"""
import argparse
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SKIPPED = 77
SEPARATOR = "\n__ggml_vocab_test__\n"


def read_cases(path):
    """(text, ids) pairs, split as llama.cpp's test-tokenizer-0 splits them."""
    with open(path + ".inp", encoding="utf-8", newline="") as f:
        raw = f.read()
    texts = raw.split(SEPARATOR)
    if texts and texts[-1] == "":  # the file ends with a separator
        texts.pop()
    with open(path + ".out", encoding="utf-8", newline="") as f:
        lines = f.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if len(texts) != len(lines):
        raise SystemExit(f"FAIL: {len(texts)} texts in {path}.inp, {len(lines)} lines in .out")
    return [(text, [int(t) for t in line.split()]) for text, line in zip(texts, lines)]


def shown(value, limit=200):
    """A text or ids as a line short enough to read."""
    line = repr(value)
    return line if len(line) <= limit else line[:limit] + f"... ({len(value)} in all)"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", required=True, help="mk-gguf-tokenizer-json")
    ap.add_argument("--models", required=True, help="llama.cpp's models/ folder")
    ap.add_argument("--unsupported", action="store_true",
                    help="mkc is expected not to build this vocabulary's tokenizer")
    ap.add_argument("name", help="NAME of models/ggml-vocab-NAME.gguf")
    a = ap.parse_args()
    vocab = os.path.join(a.models, f"ggml-vocab-{a.name}.gguf")
    if not os.path.isfile(vocab):
        print(f"SKIP: no '{vocab}' (scripts/install_llama_cpp.sh fetch puts llama.cpp's sdist "
              f"there; scripts/test.sh runs it)")
        return SKIPPED

    with tempfile.TemporaryDirectory() as tmp:
        tokenizer_json = os.path.join(tmp, "tokenizer.json")
        run = subprocess.run([a.tool, vocab, tokenizer_json], capture_output=True, text=True)
        print(run.stdout + run.stderr, end="")
        if a.unsupported:
            # The reason names the model or pre-tokenizer it does not know.
            said = run.returncode == 3 and "tokenizer.ggml." in run.stdout
            print("PASS: no tokenizer, saying why" if said else
                  f"FAIL: expected no tokenizer and a reason (exit 3), got exit {run.returncode}")
            return 0 if said else 1
        if run.returncode != 0:
            print(f"FAIL: {os.path.basename(a.tool)} exited {run.returncode}")
            return 1
        sys.path.insert(0, os.path.join(ROOT, "python"))
        from mkrt.text import Tokenizer
        with open(tokenizer_json, encoding="utf-8") as f:
            tokenizer = Tokenizer(f.read())

    cases = read_cases(vocab)
    wrong = 0
    for text, expected in cases:
        ours = tokenizer.encode(text, add_bos=False)
        if ours != expected:
            wrong += 1
            print(f"DIFFERENT: {shown(text)}\n  ours     {shown(ours)}\n  expected {shown(expected)}")
    print(f"ggml-vocab-{a.name}: {len(cases) - wrong} of {len(cases)} texts encode as the "
          f"original tokenizer does")
    print("FAIL" if wrong else "PASS")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
