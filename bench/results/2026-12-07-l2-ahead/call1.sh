#!/usr/bin/env bash
# Call 1: whether weights asked into L2 by SMs with nothing to stream make
# a later stream shorter (bench/stream/l2_ahead_stream.cu; bench/NOTES.md,
# item 27), then ../2026-12-07-layer-cost-trace/call1.sh (traces of the 64
# tiny layers, SmolLM2 and the 1B shape on main). Carries .gpu/ab5.tar.xz
# (scripts/pack_builds.sh .gpu/ab5.tar.xz new=).
set -uo pipefail
mkdir -p $OUT; W=/tmp/ws; mkdir -p $W
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
nvcc -O3 -arch=sm_90 -o $W/l2_ahead_stream bench/stream/l2_ahead_stream.cu &&
  timeout 120 $W/l2_ahead_stream 15 > $OUT/l2-ahead.json; echo "probe rc=$?"; cat $OUT/l2-ahead.json
timeout 400 bash bench/results/2026-12-07-layer-cost-trace/call1.sh; echo "traces rc=$?"
