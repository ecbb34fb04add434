#!/usr/bin/env python3
"""Compiles a model to a .mk file whose EOS token is one that a previous run
generated, read from its "tokens: ..." line, so that a test can see
generation stop there without hard-coding what the model generates.

  compile_with_eos.py MKC MODEL.onnx TOKENS_LINE_FILE INDEX OUT.mk [MKC OPTIONS...]
"""
import subprocess
import sys

mkc, model, tokens_file, index, output = sys.argv[1:6]
with open(tokens_file) as f:
    tokens = f.read().split()[1:]
eos = tokens[int(index)]
print(f"eos {eos}, first generated at index {tokens.index(eos)}")
sys.exit(subprocess.call([mkc, "compile", model, "--emit=mk", "-o", output, f"--eos={eos}"] +
                         sys.argv[6:]))
