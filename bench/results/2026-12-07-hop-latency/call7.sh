#!/usr/bin/env bash
# Call 7, NOT YET RUN (the session's device time ran out): where an
# attention chunk's ~2.1 us after its wait go (NOTES item 24). Needs, made
# on the CPU machine from the commit that adds this file:
#   .gpu/amarks.tar.xz  mkc built with attention-marks.patch applied
#                       (git apply, ninja -C build mkc, tar the binary as
#                       amarks/mkc), then the patch reverted
#   .gpu/head.tar.xz    build/compiler/tools/mkc and build/runtime/mkrun/mkrun
#                       of the commit itself
# The tiny layers and SmolLM2 built for 544 with bf16 caches, 6 steps from
# 480; thread 0 of every layer-8 chunk prints its stages at step 3 (clock64
# at 1.98 GHz on either card): the wait, q's and the new entries' loads,
# the norm and rotation, the scores, the softmax, o and the stores.
set -uo pipefail
mkdir -p $OUT; W=/tmp/ws; mkdir -p $W
mkdir -p .gpu/head && tar -C .gpu/head -xJf .gpu/head.tar.xz
[ -d .gpu/amarks ] || tar -C .gpu -xJf .gpu/amarks.tar.xz
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
for s in layer-cost-64x256:t smollm2-135m-shaped:s; do
  python3 scripts/fused_module.py bench/configs/${s%:*}.json -o $W/${s#*:}.mlir
  timeout 240 .gpu/amarks/mkc compile $W/${s#*:}.mlir --emit=mk --random-weights --kv-cache=bf16 \
      --max-context=544 -o $W/${s#*:}m.mk 2>&1 | grep -E "error|spill"
  timeout 60 .gpu/head/build/runtime/mkrun/mkrun $W/${s#*:}m.mk --device gpu --start-position 480 \
      --prompt-tokens 7 -n 6 > $W/o.txt 2>&1 || { echo "marks ${s#*:} FAILED"; tail -5 $W/o.txt; }
  grep "^AMARK" $W/o.txt > $OUT/amarks-${s#*:}.txt
  python3 - $OUT/amarks-${s#*:}.txt <<'PY'
import re, statistics, sys
rows = [dict((k, int(v)) for k, v in re.findall(r"(\w+)=(-?\d+)", line)) for line in open(sys.argv[1])]
for kind, chosen in (("empty", [r for r in rows if r["count"] == 0]),
                     ("new entries", [r for r in rows if r["count"] > 0 and r["new"]]),
                     ("others", [r for r in rows if r["count"] > 0 and not r["new"]])):
    if chosen:
        stages = [k for k in chosen[0] if k not in ("group", "chunk", "count", "new")]
        print(sys.argv[1], kind, len(chosen), {k: round(statistics.median(r[k] for r in chosen) / 1.98)
                                               for k in stages}, "ns")
PY
done
echo "done at ${SECONDS}s"
