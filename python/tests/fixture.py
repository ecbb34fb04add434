"""The test model: the committed 256-token llama fixture compiled by mkc with
the tokenizer of tokenizer_files.py, for the CPU executor (no kernel: no GPU
needed), or with its kernel when MKRT_TEST_DEVICE=gpu runs the tests on a GPU.
The tools come from $MKC and $MKRUN (ctest sets them), else the build tree."""
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "llama3_ts17.onnx"
MKC = os.environ.get("MKC", str(ROOT / "build" / "compiler" / "tools" / "mkc"))
MKRUN = os.environ.get("MKRUN", str(ROOT / "build" / "runtime" / "mkrun" / "mkrun"))
MAX_CONTEXT = 96
# Where the tests that take a device run their models: the CPU executor in
# CI; MKRT_TEST_DEVICE=gpu runs the same tests on a GPU.
DEVICE = os.environ.get("MKRT_TEST_DEVICE", "cpu")

_dir = None


def workdir():
    global _dir
    if _dir is None:
        _dir = tempfile.TemporaryDirectory(prefix="mkrt-python-tests-")
    return Path(_dir.name)


def tokenizer_dir():
    directory = workdir() / "tokenizer"
    if not (directory / "tokenizer.json").exists():
        subprocess.run([sys.executable, str(Path(__file__).with_name("tokenizer_files.py")),
                        str(directory)], check=True)
    return directory


def compile_model(name, *options, tokenizer=True):
    """A .mk of the fixture, made once per name."""
    out = workdir() / name
    if not out.exists():
        kernel = [] if DEVICE == "gpu" else ["--no-kernel"]
        command = [MKC, "compile", str(FIXTURE), "--emit=mk", *kernel,
                   f"--max-context={MAX_CONTEXT}", "-o", str(out), *options]
        command += [f"--tokenizer={tokenizer_dir()}"] if tokenizer else ["--no-tokenizer"]
        subprocess.run(command, check=True, capture_output=True, text=True)
    return out


def mkrun_tokens(path, prompt, n):
    result = subprocess.run([MKRUN, str(path), "--device", "cpu", "--prompt-tokens",
                             ",".join(map(str, prompt)), "-n", str(n)],
                            check=True, capture_output=True, text=True)
    line = next(l for l in result.stdout.splitlines() if l.startswith("tokens:"))
    return [int(t) for t in line.split()[1:]]
