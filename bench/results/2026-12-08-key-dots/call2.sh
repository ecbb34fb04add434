#!/usr/bin/env bash
# NOT RUN: no machine started for it in five asks (01:13-01:45 UTC), and
# then the session's device time was spent.
# The GPU tests call 1 left (its 330 s ran out after 107 of 133, none
# failing), then a trace of Qwen3-0.6B's and the 1B shape's layer 14 / 8
# from 480 in builds for 544, main and the change, to see the chunk
# phase's span move (bench/trace_summary.py and bench/waterfall.py).
# Carried as call 1; ONLY= the tests to run.
set -uo pipefail
mkdir -p $OUT
tar -C .gpu -xJf .gpu/h200a.tar.xz && tar -C .gpu -xJf .gpu/keys.tar.xz && tar -xJf .gpu/keystests.tar.xz
exec > >(tee $OUT/log.txt) 2>&1
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
ROOT=$PWD PARALLEL=${PARALLEL:-9} ONLY=$ONLY timeout ${TESTS_S:-250} python3 scripts/gpu_tests.py > $OUT/tests.txt 2>&1
echo "tests rc=$?"; grep -v "^ok" $OUT/tests.txt | tail; grep -c "^ok" $OUT/tests.txt
W=/tmp/ws; mkdir -p $W $OUT/traces
cp .gpu/builds/new/runtime/mkrun/mkrun $W/mkrun
for s in ${TRACE_SHAPES:-qwen3-0.6b-shaped:q:14 llama-3.2-1b-shaped:l:8}; do
  IFS=: read cfg m layer <<< "$s"
  python3 scripts/fused_module.py bench/configs/$cfg.json -o $W/$m.mlir
  for b in new keys; do
    .gpu/builds/$b/compiler/tools/mkc compile $W/$m.mlir --emit=mk --random-weights --kv-cache=bf16 \
      --max-context=544 -o $W/$m.mk 2>&1 | tail -1 | cut -c1-90
    .gpu/builds/new/compiler/tools/mkc inspect $W/$m.mk --format=json > $W/$m.json
    $W/mkrun $W/$m.mk --device gpu --start-position 480 --prompt-tokens 7 -n 5 --trace $W/t.json > /dev/null
    python3 bench/trace_summary.py $W/t.json $W/$m.json --skip-steps 1 > $OUT/traces/$m-$b-summary.txt 2>&1
    python3 bench/waterfall.py $W/t.json $W/$m.json --layer $layer --json $W/w.json > $OUT/traces/$m-$b-waterfall.txt 2>&1
    echo "== $m $b"; head -9 $OUT/traces/$m-$b-waterfall.txt
  done
done
echo "done at ${SECONDS}s"
