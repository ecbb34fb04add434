#!/usr/bin/env bash
# Runs every fuzz target of tests/fuzz longer than ctest does, for the
# figures in docs/reliability.md:
#   scripts/fuzz.sh [SECONDS per target, default 600] [TARGET...]
# Needs the sanitized build (scripts/test_sanitized.sh, or its cmake line)
# and its seeds (ctest --test-dir build-asan -R fuzz.seeds). Each run's
# corpus, log and any crashing input stay in build-asan/tests/fuzz/long/.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
seconds="${1:-600}"
shift || true
targets=("$@")
((${#targets[@]})) || targets=(onnx gguf mk mk-ir)
fuzz="$ROOT/build-asan/tests/fuzz"
export MKC_FUZZ_ONNX_DIR="$fuzz/seeds/onnx-data"
export ASAN_OPTIONS="detect_leaks=1"
status=0
for target in "${targets[@]}"; do
  log="$fuzz/long/$target.log"
  mkdir -p "$fuzz/long"
  printf '==> fuzz-%s, %s s\n' "$target" "$seconds"
  if ! "$ROOT/tests/fuzz/run_fuzzer.sh" "$fuzz/fuzz-$target" "$fuzz/seeds/$target" \
       "$fuzz/long/$target" "$seconds" >"$log" 2>&1; then
    status=1
    echo "fuzz-$target found a failing input: see $log and $fuzz/long/$target/"
  fi
  grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb|#[0-9]+ +DONE)' "$log" || true
  echo "corpus: $(ls "$fuzz/long/$target/corpus" | wc -l) inputs"
done
exit $status
