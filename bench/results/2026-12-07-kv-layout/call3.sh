#!/usr/bin/env bash
# NOT YET RUN: the head-major caches built for real (branch
# head-major-caches: every engine keeps a sequence's caches
# [KV head][position][head dim]; NOTES item 28), once call 1 or call 2 says
# the layout matters. First the branch's GPU checks that touch the caches
# (the chunk kind checks, the fixtures' decode and prompts, the batches),
# then its timing against main: the 1B shape and Qwen3-0.6B built for
# 32800 at 32700 (two rounds) and 4064. PART=checks or PART=ab runs one
# half alone (each fills most of a 10-minute call).
# Pack, from a checkout of main with its build (the branch changes the
# runtime, so its build keeps its own mkrun: scripts/pack_builds.sh):
#   git diff main head-major-caches -- . ':!bench' > /tmp/hm.patch
#   scripts/pack_builds.sh .gpu/hm.tar.xz head= hm=/tmp/hm.patch
#   git checkout head-major-caches && ninja -C build &&
#     tar -cJf .gpu/hmtests.tar.xz build/tests/gpu/CTestTestfile.cmake \
#       build/tests/gpu/mk-* build/compiler/tools/mkc build/runtime/mkrun/mkrun &&
#     git checkout main && ninja -C build
# and carry .gpu/hm.tar.xz and .gpu/hmtests.tar.xz (run from a checkout of
# the branch, so that the tests' paths and fixtures are the branch's).
set -uo pipefail
mkdir -p $OUT
tar -C .gpu -xJf .gpu/hm.tar.xz
tar -xJf .gpu/hmtests.tar.xz
exec > >(tee $OUT/log.txt) 2>&1
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
if [ "${PART:-checks}" = checks ]; then
  ROOT=$PWD PARALLEL=8 MATCH='kind\.AttentionChunk|prefill\.|batch|context2048|one-gpu|extra\.' \
    timeout ${CHECKS_S:-540} python3 scripts/gpu_tests.py; echo "checks rc=$?"
  exit 0
fi
B=.gpu/builds C=bench/configs
timeout 540 python3 bench/ab_builds.py --builds head=$B/head hm=$B/hm \
  --shapes l=$C/llama-3.2-1b-shaped.json,q=$C/qwen3-0.6b-shaped.json \
  --context 32800 --positions 32700,4064 --rounds 2 --out $OUT/ab
echo "ab rc=$?"
rm -f $OUT/ab/*.mk $OUT/ab/*.npy $OUT/ab/*.mlir $OUT/ab/steps.csv
