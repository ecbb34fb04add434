#!/usr/bin/env python3
"""An oracle written by others for the GGUF front end: llama.cpp itself
(through llama-cpp-python) on the same GGUF file mkc reads, both fed the
same tokens one position at a time; their logits compared.

llama.cpp reads the file its own way: its own dequantization, its rope
(non-NEOX on the permuted q/k rows of llama and mistral, NEOX for qwen), its
own kernels. Differences come from how it computes, not what: its KV cache is
f16 by default and a Q8_0 matmul quantizes the activations to 8 bits too,
so the tolerances are looser than onnxruntime's (see CMakeLists.txt).

Exits 77 (skipped, with the reason printed) when llama-cpp-python is not
installed: scripts/setup.sh installs it only with MKC_LLAMA_CPP=1, since it
builds llama.cpp from source.

  check_gguf_llama_cpp.py --mkc build/compiler/tools/mkc FIXTURE.onnx --type F32 --rtol 1e-2
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from oracle_common import TOKENS, mkc_logits, relative_error  # noqa: E402

SKIPPED = 77


def llama_cpp_logits(path, tokens):
    import llama_cpp
    model = llama_cpp.Llama(model_path=path, n_ctx=64, n_batch=1, logits_all=True,
                            n_threads=2, verbose=False)
    model.eval(tokens)
    return np.array(model.scores[:len(tokens)], dtype=np.float32)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mkc", required=True)
    ap.add_argument("--type", default="F32")
    ap.add_argument("--rtol", type=float, required=True)
    ap.add_argument("fixture")
    a = ap.parse_args()
    try:
        import llama_cpp  # noqa: F401
    except ImportError as error:
        print(f"SKIP: llama-cpp-python is not installed ({error}); run scripts/setup.sh with "
              f"MKC_LLAMA_CPP=1 to build it")
        return SKIPPED

    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "model.gguf")
        # llama.cpp knows Mistral models as `llama` (its converter writes them so).
        arch = ["--arch", "llama"] if os.path.basename(a.fixture).startswith("mistral") else []
        subprocess.run([sys.executable, os.path.join(ROOT, "tests", "tools", "make_gguf_from_onnx.py"),
                        a.fixture, model, "--type", a.type, *arch], check=True)
        ours = mkc_logits(a.mkc, model, ",".join(map(str, TOKENS)), tmp)
        if ours is None:
            return 1
        theirs = llama_cpp_logits(model, TOKENS)
        if ours.shape != theirs.shape:
            print(f"FAIL: logits shape {ours.shape}, llama.cpp gives {theirs.shape}")
            return 1
        err = relative_error(ours, theirs)
        print(f"{os.path.basename(a.fixture)} as GGUF {a.type}: max relative error vs llama.cpp "
              f"{err:.2e} (limit {a.rtol:.0e})")
        failed = err > a.rtol or not np.all(np.isfinite(ours))
        print("FAIL" if failed else "PASS")
        return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
