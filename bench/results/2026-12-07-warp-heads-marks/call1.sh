#!/usr/bin/env bash
# NOT YET RUN (written after the session's device time was spent): where a
# warp-heads chunk's time goes (bench/NOTES.md, item 30). Qwen3-0.6B's
# chunks of ~40 positions ran ~5.2 us each at 484 (H100 trace,
# ../2026-12-07-layer-cost-trace/call2) and o's loop took ~0.9 us off them
# (../2026-12-07-o-loop); the 1B shape's run ~2.1-2.6 us. warp-heads-marks.patch
# (timing only; its builds spill 44-60 B on Qwen3-0.6B and the 1B shape)
# prints, for every layer-8 chunk at step 3, from warp 1's first lane the
# time from the task's entry to its copies' landing, and from warp 0's
# first lane the wait, q ready (its load, norm, rotation and this step's k
# and v), the scores, the softmax, and o with the stores (clock64 at 1.98
# GHz on either card). Builds for 544 with bf16 caches, 6 steps from 480.
# Pack from the repository root of a checkout of the commit that adds this
# file, with its build:
#   git apply bench/results/2026-12-07-warp-heads-marks/warp-heads-marks.patch &&
#     ninja -C build mkc && mkdir -p /tmp/wm/wmarks /tmp/wm/head &&
#     cp build/compiler/tools/mkc /tmp/wm/wmarks/ &&
#     git apply -R bench/results/2026-12-07-warp-heads-marks/warp-heads-marks.patch &&
#     ninja -C build mkc mkrun &&
#     cp build/compiler/tools/mkc build/runtime/mkrun/mkrun /tmp/wm/head/ &&
#     tar -C /tmp/wm -cJf .gpu/wmarks.tar.xz wmarks head
# and carry .gpu/wmarks.tar.xz.
set -uo pipefail
mkdir -p $OUT; W=/tmp/ws; mkdir -p $W
tar -C .gpu -xJf .gpu/wmarks.tar.xz
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
for s in qwen3-0.6b-shaped:q llama-3.2-1b-shaped:l smollm2-135m-shaped:s layer-cost-64x256:t; do
  m=${s#*:}
  python3 scripts/fused_module.py bench/configs/${s%:*}.json -o $W/$m.mlir
  timeout 240 .gpu/wmarks/mkc compile $W/$m.mlir --emit=mk --random-weights --kv-cache=bf16 \
      --max-context=544 -o $W/$m.mk 2>&1 | grep -E "error|spill"
  timeout 60 .gpu/head/mkrun $W/$m.mk --device gpu --start-position 480 --prompt-tokens 7 -n 6 \
      > $W/o.txt 2>&1 || { echo "marks $m FAILED"; tail -5 $W/o.txt; }
  grep "^WMARK" $W/o.txt > $OUT/wmarks-$m.txt
  rm -f $W/$m.mk
  python3 - $OUT/wmarks-$m.txt <<'PY'
import re, statistics, sys
rows = [dict(re.findall(r"(\w+)=(-?\w+)", line)) for line in open(sys.argv[1])]
def median_ns(chosen, keys):
    return {k: round(statistics.median(int(r[k]) for r in chosen) / 1.98) for k in keys}
copiers = [r for r in rows if r["role"] == "copier" and int(r["count"]) > 0]
if copiers:
    print(sys.argv[1], "copies landed after", median_ns(copiers, ["copies"]), "ns,", len(copiers), "chunks")
heads = [r for r in rows if r["role"] == "head"]
stages = ["wait", "q_ready", "scores", "softmax", "o_and_store"]
for kind, chosen in (("holding the position", [r for r in heads if r["new"] == "1"]),
                     ("others", [r for r in heads if r["new"] == "0" and int(r["count"]) > 0])):
    if chosen:
        print(sys.argv[1], kind, len(chosen), median_ns(chosen, stages), "ns")
PY
done
echo "done at ${SECONDS}s"
