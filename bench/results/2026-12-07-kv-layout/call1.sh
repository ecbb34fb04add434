#!/usr/bin/env bash
# NOT YET RUN (written after the session's device time was spent): does
# the caches' position-major layout hold long attention at half the
# streaming rate (bench/NOTES.md, item 28)? bench/stream/kv_layout_stream.cu,
# nothing to carry; then, where a machine is left over, ../2026-12-07-layer-
# cost-trace/call2.sh (carry .gpu/ab5.tar.xz for it).
set -uo pipefail
mkdir -p $OUT; W=/tmp/ws; mkdir -p $W
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
nvcc -O3 -arch=sm_90 -o $W/kv_layout_stream bench/stream/kv_layout_stream.cu &&
  timeout 120 $W/kv_layout_stream 15 > $OUT/kv-layout.json; echo "probe rc=$?"; cat $OUT/kv-layout.json
[ -f .gpu/ab5.tar.xz ] && timeout 400 bash bench/results/2026-12-07-layer-cost-trace/call2.sh
echo "traces rc=$?"
