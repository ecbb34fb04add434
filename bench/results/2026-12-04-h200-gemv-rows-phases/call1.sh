#!/usr/bin/env bash
# The gemvs of several rows with one phase
# left out at a time (gemv-rows-ablation.patch; timing only, the results
# are wrong). Binaries .gpu/a0 .. .gpu/a3 built with MK_GEMV_ROWS_ABLATE's
# default set to 0 .. 3 (a0 is the kernel as it is). Each is timed at 4 and
# 8 rows in two rounds, and traced at 4 rows (bench/trace_summary.py): what
# a gemv's span loses without a phase is that phase's cost.
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W; rm -f $W/*.mk
V="a0 a1 a2 a3"
for b in $V; do [ -d .gpu/$b ] || tar -C .gpu -xJf .gpu/$b.tar.xz; done
exec > >(tee $OUT/log.txt) 2>&1
python3 scripts/fused_module.py bench/configs/llama-3.2-1b*.json -o $W/l.mlir
P=""
for b in $V; do ( timeout 200 .gpu/$b/compiler/tools/mkc compile $W/l.mlir --emit=mk --random-weights --kv-cache=bf16 --max-context=544 --batch=4,8 -o $W/l-$b.mk 2>&1 | grep -E "error|spill" | sed "s/^/$b: /" | cut -c1-150 ) & P="$P $!"; done
bc() { local v=$1; shift; local t0=$SECONDS; timeout 150 .gpu/$v/tests/gpu/mk-gpu-batch-check $@ > $W/b.txt 2>&1; echo "$v batch-check $* rc=$? $(grep -c FAIL $W/b.txt) FAIL ($((SECONDS-t0)) s)"; grep -E "FAIL|max error" $W/b.txt | head -4; }
# a0 also carries the batch argmax's tidy (argmax-rows-tidy.patch): its checks
bc a0 tests/fixtures/llama3_ts17.onnx --batch=4
bc a0 tests/fixtures/qwen3_ts17.onnx --batch=3 --kv-cache=bf16
bc a0 tests/fixtures/qwen2_dynamo18.onnx --batch=8 --max-context=2048
for p in $P; do wait $p; done
bc a0 $W/l.mlir --batch=8 --max-context=544 --kv-cache=bf16 --against-decode
prompts() { local ps=""; for i in $(seq 1 $1); do ps="$ps --prompt-tokens $((i+6))"; done; echo $ps; }
runb() { # binary rows
  timeout 30 .gpu/$1/runtime/mkrun/mkrun $W/l-$1.mk --device gpu --start-position 480 $(prompts $2) -n 33 --step-times $W/st.csv > $W/o.txt 2>&1 || { echo "FAILED $1 $2"; tail -3 $W/o.txt; return; }
  python3 -c "import csv,statistics as s;r=[float(x['ms']) for x in csv.DictReader(open('$W/st.csv'))][1:];print('$1 rows $2 position 480: median %.3f min %.3f'%(s.median(r),min(r)))"
}
for r in 1 2; do runb a0 1; for b in 4 8; do for v in $V; do runb $v $b; done; done; done
for v in $V; do
  timeout 30 .gpu/$v/runtime/mkrun/mkrun $W/l-$v.mk --device gpu --start-position 480 $(prompts 4) -n 9 --trace $W/t.json > /dev/null 2>&1 || echo "trace $v FAILED"
  .gpu/$v/compiler/tools/mkc inspect $W/l-$v.mk --step=batch:4 --format=json -o $W/i.json
  python3 bench/trace_summary.py $W/t.json $W/i.json > $OUT/trace-$v-batch4.txt 2>&1
  echo "$v: $(grep -E 'layer8\.(qkv|o_proj|gate_up|down) ' $OUT/trace-$v-batch4.txt | awk '{printf "%s %s us  ", $1, $4}')"
done
echo "done at $SECONDS s"
