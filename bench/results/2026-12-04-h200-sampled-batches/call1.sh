#!/usr/bin/env bash
# s1 = sampled batches on the GPU (the batch argmax samples each row from
# its logits, the row's own position as the draw's counter). Its checks:
# mk-gpu-batch-check (now with sampled rows against the decode kernel's
# sampled tokens for each sequence alone) on three fixtures and the 1B
# shape, mk-gpu-check on a fixture (the decode kernel's sampling, whose
# call changed); then mkrun: a0 (before) / s1 decode at 1 row, s1 at 4
# rows greedy and sampled, two rounds. Beside it, with a0 alone: the 1B
# shape built for 544 with --longest-attention-chunk=32 (17 chunks of 32
# a KV head, 16 a round: 16 chunk tasks a head at 480 where the default's
# 12 of 48 give 10) against the default, at 1, 4 and 8 rows.
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W; rm -f $W/*.mk
V="a0 s1"
for b in $V; do [ -d .gpu/$b ] || tar -C .gpu -xJf .gpu/$b.tar.xz; done
exec > >(tee $OUT/log.txt) 2>&1
python3 scripts/fused_module.py bench/configs/llama-3.2-1b*.json -o $W/l.mlir
P=""
for b in $V; do ( timeout 200 .gpu/$b/compiler/tools/mkc compile $W/l.mlir --emit=mk --random-weights --kv-cache=bf16 --max-context=544 --batch=4,8 -o $W/l-$b.mk 2>&1 | grep -E "error|spill" | sed "s/^/$b: /" | cut -c1-150 ) & P="$P $!"; done
( timeout 200 .gpu/a0/compiler/tools/mkc compile $W/l.mlir --emit=mk --random-weights --kv-cache=bf16 --max-context=544 --batch=4,8 --longest-attention-chunk=32 -o $W/l-c32.mk 2>&1 | grep -E "error|spill" | sed "s/^/c32: /" | cut -c1-150 ) & P="$P $!"
ck() { local n=$1; shift; local t0=$SECONDS; timeout 200 .gpu/s1/tests/gpu/$@ > $W/b$n.txt 2>&1; echo "s1 $* rc=$? $(grep -c FAIL $W/b$n.txt) FAIL ($((SECONDS-t0)) s)"; grep -E "FAIL|sampl|refused" $W/b$n.txt | head -6; }
C=""
ck 1 mk-gpu-batch-check tests/fixtures/llama3_ts17.onnx --batch=4 & C="$C $!"
ck 2 mk-gpu-batch-check tests/fixtures/qwen3_ts17.onnx --batch=3 --kv-cache=bf16 & C="$C $!"
ck 3 mk-gpu-check tests/fixtures/llama3_ts17.onnx & C="$C $!"
for p in $C; do wait $p; done
C=""
ck 4 mk-gpu-batch-check tests/fixtures/qwen2_dynamo18.onnx --batch=8 --max-context=2048 & C="$C $!"
for p in $P; do wait $p; done
ck 5 mk-gpu-batch-check $W/l.mlir --batch=4 --max-context=544 --kv-cache=bf16 --against-decode & C="$C $!"
for p in $C; do wait $p; done
prompts() { local ps=""; for i in $(seq 1 $1); do ps="$ps --prompt-tokens $((i+6))"; done; echo $ps; }
runb() { # binary (c32: a0 on the chunk-32 build) rows extra...
  local v=$1 label=$1 rows=$2; shift 2
  local mk=$W/l-$v.mk; [ "$v" = c32 ] && { mk=$W/l-c32.mk; v=a0; }
  timeout 30 .gpu/$v/runtime/mkrun/mkrun $mk --device gpu --start-position 480 $(prompts $rows) -n 33 --step-times $W/st.csv "$@" > $W/o.txt 2>&1 || { echo "FAILED $v $rows $*"; tail -3 $W/o.txt; return; }
  python3 -c "import csv,statistics as s;r=[float(x['ms']) for x in csv.DictReader(open('$W/st.csv'))][1:];print('$label rows $rows $*: median %.3f min %.3f'%(s.median(r),min(r)))"
}
for r in 1 2; do
  runb a0 1; runb s1 1; runb s1 1 --temperature 1 --top-p 0.9 --seed 5
  runb s1 4; runb s1 4 --temperature 1 --top-p 0.9 --seed 5; runb s1 4 --temperature 0.8 --top-k 40 --seed 5
  for b in 1 4 8; do runb a0 $b; runb c32 $b; done
done
# The user's path: a sampled batch printed, then refused with a penalty.
timeout 30 .gpu/s1/runtime/mkrun/mkrun $W/l-s1.mk --device gpu $(prompts 4) -n 8 --temperature 1 --top-p 0.9 --seed 5 2>&1 | tail -6
timeout 30 .gpu/s1/runtime/mkrun/mkrun $W/l-s1.mk --device gpu $(prompts 4) -n 8 --temperature 1 --repetition-penalty 1.3 > $W/p.txt 2>&1; echo "rc=$?"; tail -2 $W/p.txt
echo "done at $SECONDS s"
