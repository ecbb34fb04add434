#!/usr/bin/env bash
# Call 7, run later on 2026-12-07 with call 8 in one call (README: "Calls 7 and 8"): whether a poll
# waits behind the SM's weight loads (NOTES item 25, the probe
# bench/stream/poll_behind_loads.cu), then where an attention chunk's
# ~2.1 us after its wait go (NOTES item 24). pack.sh makes what it
# carries. Needs, made
# on the CPU machine from the commit that adds this file:
#   .gpu/amarks.tar.xz  mkc built with attention-marks.patch applied
#                       (git apply, ninja -C build mkc, tar the binary as
#                       amarks/mkc), then the patch reverted
#   .gpu/bmarks.tar.xz  the same with between-marks.patch (bmarks/mkc)
#   .gpu/head.tar.xz    build/compiler/tools/mkc and build/runtime/mkrun/mkrun
#                       of the commit itself
# The tiny layers and SmolLM2 built for 544 with bf16 caches, 6 steps from
# 480; thread 0 of every layer-8 chunk prints its stages at step 3 (clock64
# at 1.98 GHz on either card): the wait, q's and the new entries' loads,
# the norm and rotation, the scores, the softmax, o and the stores.
# Then where the 1B shape's time between tasks goes (2.9 us before gate_up,
# 1.9 before down in call 2's trace, against ~1 us that item 22's marks
# account for on the first and last tiles): between-marks.patch prints, for
# every layer-8 gemv tile at step 3, the time from the CTA's last task end
# (the controller's globaltimer) to the gemv's entry, the first weights'
# issue, and from there to the wait's end (its poll and barrier); the 1B
# shape and SmolLM2. (The timing build spills 60 B on the 1B shape.)
set -uo pipefail
mkdir -p $OUT; W=/tmp/ws; mkdir -p $W
mkdir -p .gpu/head && tar -C .gpu/head -xJf .gpu/head.tar.xz
for b in amarks bmarks; do [ -d .gpu/$b ] || tar -C .gpu -xJf .gpu/$b.tar.xz; done
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
# First, card-independent (NOTES item 25): does a poll wait behind the weights?
nvcc -O3 -arch=sm_90 -o $W/poll_behind_loads bench/stream/poll_behind_loads.cu &&
  $W/poll_behind_loads 200 > $OUT/poll.json; echo "poll probe rc=$?"; cat $OUT/poll.json
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
python3 scripts/fused_module.py bench/configs/llama-3.2-1b-shaped.json -o $W/l.mlir
for m in l s; do
  timeout 240 .gpu/bmarks/mkc compile $W/$m.mlir --emit=mk --random-weights --kv-cache=bf16 \
      --max-context=544 -o $W/${m}b.mk 2>&1 | grep -E "error|spill"
  timeout 60 .gpu/head/build/runtime/mkrun/mkrun $W/${m}b.mk --device gpu --start-position 480 \
      --prompt-tokens 7 -n 6 > $W/o.txt 2>&1 || { echo "between marks $m FAILED"; tail -5 $W/o.txt; }
  grep "^BMARK" $W/o.txt > $OUT/bmarks-$m.txt
  python3 - $OUT/bmarks-$m.txt <<'PY'
import collections, re, statistics, sys
by_op = collections.defaultdict(list)
for line in open(sys.argv[1]):
    row = dict((k, int(v)) for k, v in re.findall(r"(\w+)=(-?\d+)", line))
    by_op[row["op"]].append(row)
for op, rows in sorted(by_op.items()):
    print(sys.argv[1], "op", op, len(rows), "tiles, median ns:",
          {k: statistics.median(r[k] for r in rows)
           for k in ("ended_to_entry", "first", "first_to_started")})
PY
done
echo "done at ${SECONDS}s"
