#!/usr/bin/env bash
# Runs one libFuzzer target over its seeds for a while:
#   run_fuzzer.sh FUZZER SEEDS RUN_DIR SECONDS [libFuzzer options...]
# The corpus grows in RUN_DIR/corpus; an input that crashes, leaks, trips a
# sanitizer or runs past the time limit is kept as RUN_DIR/crash-* (or
# leak-, timeout-, oom-) and fails the run.
set -euo pipefail
fuzzer="$1" seeds="$2" run="$3" seconds="$4"
shift 4
rm -rf -- "$run"
mkdir -p "$run/corpus"
# Inputs as long as the longest seed, and a little more room to grow.
longest=$(find "$seeds" -type f -printf '%s\n' | sort -n | tail -1)
max_len=$(( ${longest:-4096} + 4096 ))
exec "$fuzzer" -max_total_time="$seconds" -max_len="$max_len" -rss_limit_mb=2048 -timeout=30 \
  -print_final_stats=1 -artifact_prefix="$run/" "$@" "$run/corpus" "$seeds"
