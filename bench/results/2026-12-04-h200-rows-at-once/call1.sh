#!/usr/bin/env bash
# h0 = HEAD (f9a2acb); p1 = h0 + batch-rows-at-once.patch; s64 = h0 with
# the shortest attention span and chunk 64 (kShortestSpan, kShortestChunk).
# Batch checks first (qwen2_dynamo18 at 2048 with the logits cleared; the
# patch on the fixtures and the 1B shape), then timing in pairs, then traces.
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
for b in h0 p1 s64; do [ -d .gpu/$b ] || tar -C .gpu -xJf .gpu/$b.tar.xz; done
exec > >(tee $OUT/log.txt) 2>&1
python3 scripts/fused_module.py bench/configs/llama-3.2-1b*.json -o $W/l.mlir
python3 scripts/fused_module.py bench/configs/smollm2-135m-shaped.json -o $W/s.mlir
mk() { # binary name source options...
  local b=$1 n=$2 s=$3; shift 3
  ( timeout 400 .gpu/$b/compiler/tools/mkc compile $s --emit=mk --random-weights --kv-cache=bf16 $@ -o $W/$n-$b.mk 2>&1 | grep -E "error|spill" | sed "s/^/$n-$b: /" ) &
  P="$P $!"
}
P=""
for b in h0 p1 s64; do mk $b l $W/l.mlir --max-context=544 --batch=2,4,8; done
for b in h0 s64; do mk $b s $W/s.mlir --max-context=544; mk $b L $W/l.mlir --max-context=32800; done
bc() { local v=$1; shift; local t0=$SECONDS; timeout 150 .gpu/$v/tests/gpu/mk-gpu-batch-check $@ > $W/b.txt 2>&1; echo "$v batch-check $* rc=$? $(grep -c FAIL $W/b.txt) FAIL ($((SECONDS-t0)) s)"; grep -E "FAIL|max error" $W/b.txt | head -4; }
gc() { local v=$1; shift; local t0=$SECONDS; timeout 120 .gpu/$v/tests/gpu/$@ > $W/g.txt 2>&1; echo "$v $* rc=$? ($((SECONDS-t0)) s)"; grep -E "FAIL|error" $W/g.txt | head -4; }
Q="tests/fixtures/qwen2_dynamo18.onnx --batch=8 --max-context=2048"
bc h0 $Q
bc p1 $Q
bc p1 tests/fixtures/llama3_ts17.onnx --batch=4
bc p1 tests/fixtures/qwen3_ts17.onnx --batch=3 --kv-cache=bf16
gc s64 mk-gpu-check tests/fixtures/qwen2_dynamo18.onnx --max-context=2048
gc s64 mk-gpu-check tests/fixtures/llama3_ts17.onnx --max-context=3000
gc s64 mk-gpu-check --toy --kv-cache=bf16
gc s64 mk-task-kind-check AttentionChunk tests/fixtures/llama3_ts17.onnx
for p in $P; do wait $p; done
ls -la $W/*.mk | awk '{print $5, $9}'
runb() { # binary model rows position
  local ps=""; for i in $(seq 1 $3); do ps="$ps --prompt-tokens $((i+6))"; done
  timeout 60 .gpu/$1/runtime/mkrun/mkrun $W/$2-$1.mk --device gpu --start-position $4 $ps -n 33 --step-times $W/st.csv > $W/o.txt 2>&1 || { echo "FAILED $1 $2 $3 $4"; tail -3 $W/o.txt; return; }
  python3 -c "import csv,statistics as s;r=[float(x['ms']) for x in csv.DictReader(open('$W/st.csv'))][1:];print('$1 $2 rows $3 position $4: median %.3f min %.3f'%(s.median(r),min(r)))"
}
for r in 1 2; do for b in 1 2 4 8; do for v in h0 p1; do runb $v l $b 480; done; done; done
for r in 1 2; do
  for v in h0 s64; do runb $v l 1 480; runb $v l 1 1; runb $v l 4 480; runb $v s 1 480; runb $v s 1 40; done
  for v in h0 s64; do runb $v L 1 1; runb $v L 1 512; runb $v L 1 900; runb $v L 1 4096; done
done
tr() { # binary rows
  local ps=""; for i in $(seq 1 $2); do ps="$ps --prompt-tokens $((i+6))"; done
  timeout 60 .gpu/$1/runtime/mkrun/mkrun $W/l-$1.mk --device gpu --start-position 480 $ps -n 9 --trace $W/t.json > /dev/null 2>&1 || echo "trace $1 $2 FAILED"
  .gpu/$1/compiler/tools/mkc inspect $W/l-$1.mk --step=batch:$2 --format=json -o $W/i.json
  python3 bench/trace_summary.py $W/t.json $W/i.json > $OUT/trace-$1-batch$2.txt 2>&1; echo "trace $1 batch $2: $(head -1 $OUT/trace-$1-batch$2.txt)"
}
tr h0 4; tr p1 4; tr p1 8
bc p1 $W/l.mlir --batch=8 --max-context=544 --kv-cache=bf16 --against-decode
bc p1 $W/l.mlir --batch=20 --max-context=544 --kv-cache=bf16 --against-decode
echo "done at $SECONDS s"
