#!/usr/bin/env bash
# Runs every test of the project: sets up (scripts/setup.sh), then ctest, under
# which the lit tests, the unit tests and the onnxruntime oracle tests are all
# registered; then the sanitized stage (scripts/test_sanitized.sh: the tests
# again under AddressSanitizer and UBSan, and a short run of every fuzz
# target). Exits non-zero when anything fails. MKC_SKIP_SANITIZED=1 runs the
# first stage only.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

bash scripts/setup.sh

printf '\n==> Tests (ctest --test-dir build)\n'
ctest --test-dir build --output-on-failure --no-tests=error

if [[ "${MKC_SKIP_SANITIZED:-0}" != 1 ]]; then
  bash scripts/test_sanitized.sh
fi
