#!/usr/bin/env bash
# Call 1: attention chunks make their rotary cosines and sines before the
# wait, into shared memory (prepareRotation, codegen/device/
# AttentionChunkTask.cuh), and round this step's k as they rotate it (a
# barrier fewer; rotation-ahead.patch over facd677),
# against facd677 (.gpu/head.tar.xz: its mkc and mkrun) in the same call.
# Carries .gpu/rot.tar.xz: mkc, mkrun, the four GPU test programs and
# build/tests/gpu/CTestTestfile.cmake built with the patch applied.
# Predicted (H100 or H200): the 64 tiny layers -0.5 to -1.5%, SmolLM2 -0.5
# to -1%, the 1B shape and Qwen3-0.6B under -0.5%; logits bit for bit.
# Then the GPU tests that run the chunk kind (MATCH below), eight at a time.
set -uo pipefail
mkdir -p $OUT; W=/tmp/ws; mkdir -p $W
mkdir -p .gpu/head && tar -C .gpu/head -xJf .gpu/head.tar.xz
tar -xJf .gpu/rot.tar.xz
exec > >(tee $OUT/log.txt) 2>&1
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
for s in layer-cost-64x256:t smollm2-135m-shaped:s llama-3.2-1b-shaped:l qwen3-0.6b-shaped:q qwen2.5-1.5b-shaped:w; do
  python3 scripts/fused_module.py bench/configs/${s%:*}.json -o $W/${s#*:}.mlir
done
PIDS=""
for m in t s l q w; do for v in head rot; do
  c=build/compiler/tools/mkc; [ $v = head ] && c=.gpu/head/build/compiler/tools/mkc
  ( timeout 240 $c compile $W/$m.mlir --emit=mk --random-weights --kv-cache=bf16 \
      --max-context=544 -o $W/$m-$v.mk 2>&1 | grep -E "error|spill" | sed "s/^/$m-$v: /" ) &
  PIDS="$PIDS $!"
done; done
wait $PIDS
echo "compiled at ${SECONDS}s"
R=build/runtime/mkrun/mkrun
runb() { # build position
  rm -f $W/st.csv
  timeout 60 $R $W/$1.mk --device gpu --start-position $2 --prompt-tokens 7 -n 33 \
      --step-times $W/st.csv > $W/o-$1.txt 2>&1 || { echo "FAILED $1"; tail -5 $W/o-$1.txt; return; }
  python3 -c "import csv,statistics as s;r=[float(x['ms']) for x in csv.DictReader(open('$W/st.csv'))][1:];print('$1 position $2: median %.3f min %.3f'%(s.median(r),min(r)))"
}
for r in 1 2; do for m in t s l q w; do for v in head rot; do runb $m-$v 480; done; done; done
for m in t s l q w; do for v in head rot; do runb $m-$v 40; done; done
TOKENS=1,7,42,3,99,5,11,64,8,250,17,2
for m in t s l q w; do
  for v in head rot; do
    timeout 60 $R $W/$m-$v.mk --device gpu --tokens $TOKENS --logits $W/g-$m-$v.npy > $W/c.txt 2>&1 ||
      { echo "logits $m-$v FAILED"; tail -5 $W/c.txt; }
  done
  python3 -c "
import numpy as np
a, b = np.load('$W/g-$m-head.npy'), np.load('$W/g-$m-rot.npy')
print('logits $m: rot against HEAD', 'bit for bit' if a.shape == b.shape and (a.view(np.uint32) == b.view(np.uint32)).all() else 'DIFFER max %g' % abs(a - b).max())"
done
echo "timed at ${SECONDS}s"
left=$((560 - SECONDS))
ROOT=$PWD PARALLEL=8 MATCH="${MATCH:-AttentionChunk|batch|context64|context2048|context3000|toy}" \
  timeout $left python3 scripts/gpu_tests.py
echo "done at ${SECONDS}s"
