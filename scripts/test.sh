#!/usr/bin/env bash
# Runs every test of the project: sets up (scripts/setup.sh), then ctest, under
# which the lit tests, the unit tests and the onnxruntime oracle tests are all
# registered. Exits non-zero when anything fails.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

bash scripts/setup.sh

printf '\n==> Tests (ctest --test-dir build)\n'
ctest --test-dir build --output-on-failure --no-tests=error
