#!/usr/bin/env bash
# NOTES item 20 on the H200: the batch checks of the GPU test list (every
# test whose name starts gpu.batch) on main f2a7939's build, carried as
# .gpu/gpubatch.tar.xz (build/tests/gpu/CTestTestfile.cmake and
# mk-gpu-batch-check, mkc, mkrun). Then, with the time left, the two
# ways the 1B shape can go without its merge phase against its default
# merge tasks, on this card: o_proj by head (`--o-proj-by-head=on`;
# 2026-12-07-o-proj-by-head-again ran it on an H100 only: -0.1 to -1.1%)
# and each merge on its KV head's last chunk's SM (`--inline-merge`; -2%
# on builds for 544 on 2026-12-03, before the warp-heads chunks). The
# trace of layer 8 (../2026-12-07-layer-cost-trace) puts 6.5 us between
# qkv's end and o_proj's start, of which the merge's span and its two
# hops ~3.3. Predicted: by head -1 to +1%, inline -1 to -3%.
# With little device time: CHECKS_S, TOTAL_S, BUILDS, FLAGS, POSITIONS
# (the call that ran: CHECKS_S=170 TOTAL_S=300 PARALLEL=6
# BUILDS="merge=build byhead=build" FLAGS=byhead=--o-proj-by-head=on
# POSITIONS=480).
set -uo pipefail
mkdir -p $OUT
tar -xJf .gpu/gpubatch.tar.xz
exec > >(tee $OUT/log.txt) 2>&1
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
ROOT=$PWD PARALLEL=${PARALLEL:-4} MATCH='^gpu\.batch' timeout ${CHECKS_S:-270} python3 scripts/gpu_tests.py; echo "checks rc=$?"
left=$((${TOTAL_S:-470} - SECONDS)); C=bench/configs
[ $left -gt 100 ] && timeout $left python3 bench/ab_builds.py --builds ${BUILDS:-merge=build byhead=build inline=build} \
  --build-flags ${FLAGS:-byhead=--o-proj-by-head=on inline=--inline-merge} --shapes l=$C/llama-3.2-1b-shaped.json \
  --positions ${POSITIONS:-480,40} --rounds 2 --out $OUT/ab
echo "ab rc=$?"
rm -f $OUT/ab/*.mk $OUT/ab/*.npy $OUT/ab/*.mlir $OUT/ab/steps.csv
