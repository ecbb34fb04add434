#!/usr/bin/env python3
"""An oracle written by others for the GGUF front end: llama.cpp itself
(through llama-cpp-python) on the same GGUF file mkc reads, both fed the
same tokens; their logits compared.

mkc's side is what a user runs: the file compiled to a .mk (weights rounded
to bf16) and its teacher-forced logits from the CPU executor
(`mkrun --device cpu --tokens ... --logits`), or with --device gpu from the
kernel on a GPU. llama.cpp reads the file its
own way: its own dequantization (a Q4_1 or Q8_0 matmul multiplies by
activations it quantizes to 8 bits), its rope (non-NEOX on the permuted q/k
rows of llama and mistral, NEOX for qwen), an f16 KV cache. So the logits
differ by how each computes, and two checks are made:

  - the relative error, max |mkc - llama.cpp| / max |llama.cpp|, within --rtol;
  - greedy agreement: at every position where llama.cpp's top two logits are
    further apart than --gap (of its largest logit), mkc picks the same token.

Either a committed ONNX fixture, written as a GGUF file of --type here, or a
GGUF file given with --gguf (SmolLM2's, which the demo installs; the test is
skipped when it is absent). With --gguf and --prompt, the prompt is encoded
by llama.cpp's tokenizer and by the .mk's (built from the file's vocabulary),
which must agree. With --requantize FTYPE (Q5_K_M, IQ4_XS, ...), the file is
first quantized again by llama.cpp's own quantizer, as its llama-quantize
tool does, and --expect-types lists ggml types the result must hold (what
the quantizer wrote is printed): llama.cpp's K-quants, and the types it
falls back to for rows that are not whole blocks of 256 (Q5_0, Q5_1,
IQ4_NL, Q8_0), checked as they come in the files people download.

Exits 77 (skipped, with the reason printed) when llama-cpp-python cannot be
imported: scripts/install_llama_cpp.sh builds it under build/llama-cpp/, and
ctest puts it on PYTHONPATH (scripts/test.sh does both unless MKC_LLAMA_CPP=0).

  check_gguf_llama_cpp.py --mkc MKC --mkrun MKRUN FIXTURE.onnx --type F32 --rtol 1e-2
  check_gguf_llama_cpp.py --mkc MKC --mkrun MKRUN --gguf MODEL.gguf --prompt TEXT --rtol 5e-2
  check_gguf_llama_cpp.py ... --requantize Q5_K_M --expect-types Q5_K,Q5_1,Q6_K
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
from oracle_common import TOKENS, relative_error  # noqa: E402

SKIPPED = 77


def llama_cpp_model(path, context):
    import llama_cpp
    return llama_cpp.Llama(model_path=path, n_ctx=context, n_batch=1, logits_all=True,
                           n_threads=2, verbose=False)


def llama_cpp_logits(model, tokens):
    model.reset()
    model.eval(tokens)
    return np.array(model.scores[:len(tokens)], dtype=np.float32)


def requantize(source, target, ftype_name):
    """llama.cpp's quantizer on `source` into `target` as ftype `ftype_name`
    (llama_cpp's LLAMA_FTYPE_MOSTLY_<name>); the types written, by tensor
    count, or None with the failure printed."""
    import gguf
    import llama_cpp
    ftype = getattr(llama_cpp, "LLAMA_FTYPE_MOSTLY_" + ftype_name, None)
    if ftype is None:
        print(f"FAIL: llama.cpp has no file type {ftype_name}")
        return None
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = ftype
    params.nthread = 2
    params.allow_requantize = True
    if llama_cpp.llama_model_quantize(source.encode(), target.encode(), params) != 0:
        print(f"FAIL: llama.cpp could not quantize '{source}' as {ftype_name}")
        return None
    written = {}
    for tensor in gguf.GGUFReader(target).tensors:
        written[tensor.tensor_type.name] = written.get(tensor.tensor_type.name, 0) + 1
    print(f"llama.cpp wrote {ftype_name}: " +
          ", ".join(f"{count} {name}" for name, count in sorted(written.items())))
    return written


def mkrun_logits(mkc, mkrun, gguf, tokens, folder, context, device):
    """The .mk's logits on `device` (the CPU executor, or the GPU's kernel),
    or None with the failure printed."""
    artifact = os.path.join(folder, "model.mk")
    logits = os.path.join(folder, "mkrun.npy")
    kernel = ["--no-kernel"] if device == "cpu" else []
    for command in ([mkc, "compile", gguf, "-o", artifact, *kernel, f"--max-context={context}"],
                    [mkrun, artifact, "--device", device, "--tokens", ",".join(map(str, tokens)),
                     "--logits", logits]):
        run = subprocess.run(command, capture_output=True, text=True)
        if run.returncode != 0:
            print(run.stdout, run.stderr)
            print(f"FAIL: {os.path.basename(command[0])} exited {run.returncode}")
            return None
    return np.load(logits), artifact


def greedy_disagreements(ours, theirs, gap):
    """Positions where llama.cpp's choice is clear and mkc's differs, and how
    many were clear."""
    top2 = np.sort(theirs, axis=-1)[:, -2:]
    clear = (top2[:, 1] - top2[:, 0]) > gap * np.max(np.abs(theirs))
    differ = np.argmax(ours, axis=-1) != np.argmax(theirs, axis=-1)
    return np.flatnonzero(clear & differ).tolist(), int(clear.sum())


def tokenizers_agree(llama, artifact, prompt):
    sys.path.insert(0, os.path.join(ROOT, "python"))
    import mkrt
    theirs = llama.tokenize(prompt.encode("utf-8"), add_bos=False, special=True)
    with mkrt.load(artifact, device="cpu") as model:
        ours = model.encode(prompt, add_bos=False)
    print(f"tokenized: llama.cpp {len(theirs)} tokens, the .mk's tokenizer {len(ours)}"
          f"{'' if ours == theirs else ' (DIFFERENT: ' + str(ours) + ' vs ' + str(theirs) + ')'}")
    return ours == theirs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mkc", required=True)
    ap.add_argument("--mkrun", required=True)
    ap.add_argument("--type", default="F32", help="the ggml type a fixture is written in")
    ap.add_argument("--gguf", help="a GGUF file instead of a fixture")
    ap.add_argument("--prompt", help="with --gguf: the text fed, tokenized by llama.cpp")
    ap.add_argument("--requantize", metavar="FTYPE",
                    help="quantize the file again with llama.cpp's quantizer first (Q5_K_M, ...)")
    ap.add_argument("--expect-types", default="",
                    help="with --requantize: ggml types, comma-separated, the result must hold")
    ap.add_argument("--rtol", type=float, required=True)
    ap.add_argument("--device", choices=["cpu", "gpu"], default="cpu",
                    help="where mkrun runs the .mk (gpu: its kernel, compiled for this GPU)")
    ap.add_argument("--gap", type=float, default=0.05,
                    help="llama.cpp's top-2 gap, of its largest logit, above which the greedy "
                    "tokens must agree")
    ap.add_argument("fixture", nargs="?")
    a = ap.parse_args()
    if bool(a.gguf) == bool(a.fixture):
        ap.error("give a fixture or --gguf, one of them")
    try:
        import llama_cpp  # noqa: F401
    except ImportError as error:
        print(f"SKIP: llama-cpp-python cannot be imported ({error}); "
              f"scripts/install_llama_cpp.sh builds it")
        return SKIPPED
    if a.gguf and not os.path.isfile(a.gguf):
        print(f"SKIP: no '{a.gguf}' (scripts/install_smollm2.sh installs it)")
        return SKIPPED

    with tempfile.TemporaryDirectory() as tmp:
        if a.gguf:
            model, name = a.gguf, os.path.basename(a.gguf)
        else:
            model, name = os.path.join(tmp, "model.gguf"), f"{os.path.basename(a.fixture)} as GGUF {a.type}"
            # llama.cpp knows Mistral models as `llama` (its converter writes them so).
            arch = ["--arch", "llama"] if os.path.basename(a.fixture).startswith("mistral") else []
            subprocess.run([sys.executable, os.path.join(ROOT, "tests", "tools",
                                                         "make_gguf_from_onnx.py"),
                            a.fixture, model, "--type", a.type, *arch], check=True)
        if a.requantize:
            quantized = os.path.join(tmp, f"model.{a.requantize}.gguf")
            written = requantize(model, quantized, a.requantize)
            if written is None:
                return 1
            missing = [t for t in a.expect_types.split(",") if t and t not in written]
            if missing:
                print(f"FAIL: llama.cpp's {a.requantize} file holds no {', '.join(missing)}")
                return 1
            model, name = quantized, f"{name}, quantized again by llama.cpp as {a.requantize}"
        context = 128
        llama = llama_cpp_model(model, context)
        tokens = TOKENS
        if a.prompt:
            tokens = llama.tokenize(a.prompt.encode("utf-8"), add_bos=False, special=True)
        compiled = mkrun_logits(a.mkc, a.mkrun, model, tokens, tmp, context, a.device)
        if compiled is None:
            return 1
        ours, artifact = compiled
        theirs = llama_cpp_logits(llama, tokens)
        if ours.shape != theirs.shape:
            print(f"FAIL: logits shape {ours.shape}, llama.cpp gives {theirs.shape}")
            return 1
        err = relative_error(ours, theirs)
        disagree, clear = greedy_disagreements(ours, theirs, a.gap)
        print(f"{name}, {len(tokens)} tokens: max relative error vs llama.cpp {err:.2e} "
              f"(limit {a.rtol:.0e}); greedy tokens agree at {clear - len(disagree)} of the "
              f"{clear} positions where llama.cpp's top-2 gap is above {a.gap} of its largest "
              f"logit{'' if not disagree else ', not at ' + str(disagree)}")
        failed = err > a.rtol or not np.all(np.isfinite(ours)) or bool(disagree)
        if a.prompt:
            failed |= not tokenizers_agree(llama, artifact, a.prompt)
        print("FAIL" if failed else "PASS")
        return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
