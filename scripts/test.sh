#!/usr/bin/env bash
# Runs every test of the project: sets up (scripts/setup.sh), then ctest, under
# which the lit tests, the unit tests and the onnxruntime oracle tests are all
# registered, and the llama.cpp oracle of the GGUF front end (llama.cpp
# built meanwhile); then the sanitized stage (scripts/test_sanitized.sh: the tests again under
# AddressSanitizer and UBSan, and a short run of every fuzz target). Exits
# non-zero when anything fails. MKC_SKIP_SANITIZED=1 runs the first stage
# only.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

# llama.cpp is the GGUF front end's second oracle, and SmolLM2's GGUF file
# (98 MB) its real model (scripts/install_llama_cpp.sh, install_smollm2.sh).
# llama.cpp's sdist comes first: its vocabulary files are the tokenizer
# tests' oracle. Its build (under 5 minutes of CPU, once: kept in
# build/llama-cpp/) runs niced beside the tests that do not need it, and the
# tests labelled llama-cpp run once it is done. MKC_LLAMA_CPP=0 skips all
# of it: those tests then skip, saying so.
export MKC_LLAMA_CPP="${MKC_LLAMA_CPP:-1}"
bash scripts/setup.sh

llama_cpp_build=""
LLAMA_CPP_LOG=build/llama-cpp/build.log
if [[ "$MKC_LLAMA_CPP" == 1 ]]; then
  bash scripts/install_smollm2.sh > /dev/null
  bash scripts/install_llama_cpp.sh fetch
  printf '\n==> Building llama.cpp beside the tests (%s)\n' "$LLAMA_CPP_LOG"
  # Its own process group (setsid), so that stopping early stops all of it.
  setsid nice bash scripts/install_llama_cpp.sh build > "$LLAMA_CPP_LOG" 2>&1 &
  llama_cpp_build=$!
  trap 'kill -- "-$llama_cpp_build" 2> /dev/null || true' EXIT
fi

failed=0
if [[ -n "$llama_cpp_build" ]]; then
  printf '\n==> Tests but llama.cpp'"'"'s (ctest --test-dir build -LE llama-cpp)\n'
  ctest --test-dir build --output-on-failure --no-tests=error -LE llama-cpp || failed=1
  printf '\n==> llama.cpp: waiting for its build\n'
  built=0
  wait "$llama_cpp_build" || built=$?
  trap - EXIT
  if ((built == 0)); then
    tail -n 1 "$LLAMA_CPP_LOG"
    printf '\n==> The llama.cpp oracle (ctest --test-dir build -L llama-cpp)\n'
    ctest --test-dir build --output-on-failure --no-tests=error -L llama-cpp || failed=1
  else
    tail -n 40 "$LLAMA_CPP_LOG"
    echo "test.sh: llama.cpp's build failed (the whole log: $LLAMA_CPP_LOG)" >&2
    failed=1
  fi
else
  printf '\n==> Tests (ctest --test-dir build)\n'
  ctest --test-dir build --output-on-failure --no-tests=error || failed=1
fi
if ((failed)); then
  exit 1
fi

if [[ "${MKC_SKIP_SANITIZED:-0}" != 1 ]]; then
  bash scripts/test_sanitized.sh
fi
