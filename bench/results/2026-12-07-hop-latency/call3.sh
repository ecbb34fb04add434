#!/usr/bin/env bash
# Call 3 (either card): the last warp's release as built into the
# interpreter (.gpu/c2: the build of the working tree, releaseTask in
# codegen/device/Interpreter.cuh) against main (.gpu/main), and the same
# with `--gemv-first-weights=before-wait-but-controller` (the controller's
# warp issues its first weights after its wait: 2026-12-06 measured it no
# better while the controller also released); the 64 tiny layers, SmolLM2
# and the 1B shape, built for 544 with bf16 caches, from 480, two rounds.
# Then SmolLM2's layer-8 attention chunks from a trace: each chunk's run
# by its place in the KV head (the phase's runs spread 2.5 us).
set -uo pipefail
mkdir -p $OUT; W=/tmp/ws; mkdir -p $W
[ -d .gpu/main ] || tar -C .gpu -xJf .gpu/main.tar.xz
tar -xJf .gpu/c2.tar.xz
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
for s in layer-cost-64x256:t smollm2-135m-shaped:s llama-3.2-1b-shaped:l; do
  python3 scripts/fused_module.py bench/configs/${s%:*}.json -o $W/${s#*:}.mlir
done
PIDS=""
for b in t s l tn sn ln tc sc lc; do
  m=${b:0:1}; c=.gpu/main/compiler/tools/mkc; extra=""
  case $b in ?n) c=build/compiler/tools/mkc;;
             ?c) c=build/compiler/tools/mkc; extra=--gemv-first-weights=before-wait-but-controller;; esac
  ( timeout 240 $c compile $W/$m.mlir --emit=mk --random-weights --kv-cache=bf16 \
      --max-context=544 $extra -o $W/$b.mk 2>&1 | grep -E "error|spill" | sed "s/^/$b: /" ) &
  PIDS="$PIDS $!"
done
wait $PIDS
echo "compiled at ${SECONDS}s"
R=build/runtime/mkrun/mkrun
runb() { # build position
  rm -f $W/st.csv
  timeout 60 $R $W/$1.mk --device gpu --start-position $2 --prompt-tokens 7 -n 33 \
      --step-times $W/st.csv > $W/o-$1.txt 2>&1 || { echo "FAILED $1"; tail -5 $W/o-$1.txt; return; }
  python3 -c "import csv,statistics as s;r=[float(x['ms']) for x in csv.DictReader(open('$W/st.csv'))][1:];print('$1 position $2: median %.3f min %.3f'%(s.median(r),min(r)))"
}
for r in 1 2; do for b in t tn tc s sn sc l ln lc; do runb $b 480; done; done
for b in t s l; do runb $b 40; runb ${b}n 40; done
timeout 60 $R $W/sn.mk --device gpu --start-position 480 --prompt-tokens 7 -n 9 --trace $W/t.json > /dev/null 2>&1
build/compiler/tools/mkc inspect $W/sn.mk --format=json -o $W/i.json
python3 - <<'PY'
import json, statistics, collections
g = json.load(open("/tmp/ws/i.json")); ev = json.load(open("/tmp/ws/t.json"))["traceEvents"]
tasks = {t["id"]: t for t in g["tasks"]}
op = next(i for i, o in enumerate(g["operations"]) if o["name"] == "layer8.attention")
runs = collections.defaultdict(list); waits = {}
for e in ev:
    if e.get("ph") != "X" or e["args"]["step"] < 1: continue
    t = tasks[e["args"]["task"]]
    if t["op"] != op: continue
    key = (e["args"]["step"], t["id"])
    if e["name"] == "wait": waits[key] = e["dur"]
    else: runs[t["ordinal"]].append((e["dur"], e["ts"]))
print("layer8.attention: chunk ordinal, kv head (begin), median run us, median start us after the op's first")
first = {}
for e in ev:
    if e.get("ph") == "X" and e["name"] != "wait" and e["args"]["step"] >= 1 and tasks[e["args"]["task"]]["op"] == op:
        s = e["args"]["step"]; first[s] = min(first.get(s, 1e18), e["ts"])
by = collections.defaultdict(list)
for e in ev:
    if e.get("ph") == "X" and e["name"] != "wait" and e["args"]["step"] >= 1 and tasks[e["args"]["task"]]["op"] == op:
        by[e["args"]["task"]].append((e["dur"], e["ts"] - first[e["args"]["step"]]))
for tid in sorted(by, key=lambda i: tasks[i]["ordinal"]):
    d = by[tid]
    print(f"{tasks[tid]['ordinal']:4d} {tasks[tid]['begin']:3d}-{tasks[tid]['end']:<3d} "
          f"{statistics.median(x[0] for x in d):6.2f} {statistics.median(x[1] for x in d):6.2f}")
PY
echo "done at ${SECONDS}s"
