#!/usr/bin/env bash
# n1 = a0 (the kernel as it was, with the argmax tidy) with the gemvs of
# several rows on tensor cores taking their input in chunks that the warps
# start on as they land, and the prologue norm folded into the sums.
# Batch checks of n1, then a0 / n1 timed at 1, 4 and 8 rows in two rounds,
# and n1 traced at 4 rows.
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W; rm -f $W/*.mk
V="a0 n1"
for b in $V; do [ -d .gpu/$b ] || tar -C .gpu -xJf .gpu/$b.tar.xz; done
exec > >(tee $OUT/log.txt) 2>&1
R=bench/results/2026-12-04-h200-gemv-rows-phases
python3 scripts/fused_module.py bench/configs/llama-3.2-1b*.json -o $W/l.mlir
python3 scripts/fused_module.py $R/wide-slices.json -o $W/wide.mlir
P=""
for b in $V; do ( timeout 200 .gpu/$b/compiler/tools/mkc compile $W/l.mlir --emit=mk --random-weights --kv-cache=bf16 --max-context=544 --batch=4,8 -o $W/l-$b.mk 2>&1 | grep -E "error|spill" | sed "s/^/$b: /" | cut -c1-150 ) & P="$P $!"; done
bc() { local v=$1 n=$2; shift 2; local t0=$SECONDS; timeout 200 .gpu/$v/tests/gpu/mk-gpu-batch-check $@ > $W/b$n.txt 2>&1; echo "$v batch-check $* rc=$? $(grep -c FAIL $W/b$n.txt) FAIL ($((SECONDS-t0)) s)"; grep -E "FAIL|max error" $W/b$n.txt | head -4; }
C=""
bc n1 1 tests/fixtures/llama3_ts17.onnx --batch=4 & C="$C $!"
bc n1 2 tests/fixtures/qwen2_dynamo18.onnx --batch=8 --max-context=2048 & C="$C $!"
bc n1 3 $W/wide.mlir --batch=8 --max-context=256 --against-decode & C="$C $!"
for p in $C; do wait $p; done
C=""
bc n1 4 tests/fixtures/qwen3_ts17.onnx --batch=4 --kv-cache=bf16 & C="$C $!"
bc n1 5 $W/l.mlir --batch=8 --max-context=544 --kv-cache=bf16 --against-decode & C="$C $!"
bc n1 6 $W/l.mlir --batch=4 --max-context=544 --kv-cache=bf16 --against-decode & C="$C $!"
for p in $C $P; do wait $p; done
prompts() { local ps=""; for i in $(seq 1 $1); do ps="$ps --prompt-tokens $((i+6))"; done; echo $ps; }
runb() { # binary rows
  timeout 30 .gpu/$1/runtime/mkrun/mkrun $W/l-$1.mk --device gpu --start-position 480 $(prompts $2) -n 33 --step-times $W/st.csv > $W/o.txt 2>&1 || { echo "FAILED $1 $2"; tail -3 $W/o.txt; return; }
  python3 -c "import csv,statistics as s;r=[float(x['ms']) for x in csv.DictReader(open('$W/st.csv'))][1:];print('$1 rows $2 position 480: median %.3f min %.3f'%(s.median(r),min(r)))"
}
for r in 1 2; do for b in 1 4 8; do for v in $V; do runb $v $b; done; done; done
for v in n1; do
  timeout 30 .gpu/$v/runtime/mkrun/mkrun $W/l-$v.mk --device gpu --start-position 480 $(prompts 4) -n 9 --trace $W/t.json > /dev/null 2>&1 || echo "trace $v FAILED"
  .gpu/$v/compiler/tools/mkc inspect $W/l-$v.mk --step=batch:4 --format=json -o $W/i.json
  python3 bench/trace_summary.py $W/t.json $W/i.json > $OUT/trace-$v-batch4.txt 2>&1
  echo "$v: $(grep -E 'layer8\.(qkv|o_proj|gate_up|down) ' $OUT/trace-$v-batch4.txt | awk '{printf "%s %s us  ", $1, $4}')"
done
echo "done at $SECONDS s"
