#!/usr/bin/env bash
# The warp-heads chunk's scores as four running sums a row with both of a
# lane's rows at once, and o's weights read from shared memory four at a
# time (bench/NOTES.md, item 31), against main 54d3619 in the same call:
# first the whole GPU test list on the change (fixtures against
# onnxruntime, task kinds against the CPU executor), then bench/ab_builds.py
# on four shapes built for 544 at 480 and 40.
# Carried: .gpu/h200a.tar.xz (main's mkc and mkrun, builds/new),
# .gpu/keys.tar.xz (the change's mkc, builds/keys), .gpu/keystests.tar.xz
# (the change's build/tests/gpu, mkc and mkrun).
set -uo pipefail
mkdir -p $OUT
tar -C .gpu -xJf .gpu/h200a.tar.xz && tar -C .gpu -xJf .gpu/keys.tar.xz && tar -xJf .gpu/keystests.tar.xz
exec > >(tee $OUT/log.txt) 2>&1
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
ROOT=$PWD PARALLEL=${PARALLEL:-8} timeout ${TESTS_S:-330} python3 scripts/gpu_tests.py > $OUT/tests.txt 2>&1
echo "tests rc=$?"; tail -15 $OUT/tests.txt
C=bench/configs
timeout $((${TOTAL_S:-585} - SECONDS)) python3 bench/ab_builds.py --builds main=.gpu/builds/new keys=.gpu/builds/keys \
  --shapes q=$C/qwen3-0.6b-shaped.json,l=$C/llama-3.2-1b-shaped.json,s=$C/smollm2-135m-shaped.json,t=$C/layer-cost-64x256.json \
  --context 544 --positions 480,40 --rounds ${ROUNDS:-2} --out $OUT/ab
echo "ab rc=$? at ${SECONDS}s"
rm -f $OUT/ab/*.mk $OUT/ab/*.npy $OUT/ab/*.mlir $OUT/ab/steps.csv
