#!/usr/bin/env bash
# The branch pending-gpu on the H200, against main in the same call:
# .gpu/p1 the branch's binaries (attention merges of 64 dimensions of a q
# head, each element's chunks over 8 lanes; the sampler's histogram counted
# a warp at a time; a batch's rows sampled by teams of warps), .gpu/m1
# main's (the merge a KV head).
#   checks  the AttentionMerge kind on the toy, three fixtures, the
#           Qwen2.5-1.5B and 1B shapes (the merges against the CPU
#           executor); mk-gpu-check on four fixtures, inline merges too;
#           mk-gpu-batch-check (merges of several rows, sampled rows);
#   timing  mkrun, ms a step: Qwen2.5-1.5B built for 32800 at 1, 512 and
#           4096 (W), SmolLM2 (s), the 1B shape (l) and Qwen3-0.6B (q)
#           built for 544 at 40 and 480; the 1B shape sampled (top-p 0.9);
#           a batch of 4 on the 1B shape from 480, greedy and sampled (b);
#           a trace of W at 4096 from each build.
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
for b in p1 m1; do [ -d .gpu/$b ] || tar -C .gpu -xJf .gpu/$b.tar.xz; done
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
P=.gpu/p1
for s in llama-3.2-1b smollm2-135m qwen3-0.6b qwen2.5-1.5b; do python3 scripts/fused_module.py bench/configs/$s*.json -o $W/$s.mlir; done
{ for b in p1 m1; do echo "$b llama-3.2-1b l 544"; echo "$b smollm2-135m s 544"; echo "$b qwen3-0.6b q 544"; echo "$b qwen2.5-1.5b W 32800"; echo "$b llama-3.2-1b b 544 --batch=4"; done; } |
  xargs -P 10 -L 1 bash -c 'timeout 300 .gpu/$0/compiler/tools/mkc compile '$W'/$1.mlir --emit=mk --random-weights --kv-cache=bf16 --max-context=$3 ${4:-} -o '$W'/$2-$0.mk 2>&1 | grep -E "error|registers" | sed "s/^/$2-$0: /" | sed "s/bytes of shared.*spilled/.../"' &
CP=$!
check() { local t0=$SECONDS; local f=$W/c-$RANDOM.txt; timeout 300 $P/tests/gpu/$@ > $f 2>&1; local rc=$?; echo "== $* rc=$rc ($((SECONDS-t0)) s) $(grep -c FAIL $f) FAIL; $(tail -1 $f)"; grep FAIL $f | head -3; }
# Three groups of checks side by side (each compiles its kernels with NVRTC).
kinds() {
  check mk-task-kind-check AttentionMerge --toy
  for f in llama3_ts17 qwen3_ts17 qwen2_dynamo18 mistral_ts17; do check mk-task-kind-check AttentionMerge tests/fixtures/$f.onnx --max-context=4000 --num-sms=8; done
  check mk-task-kind-check AttentionMerge $W/qwen2.5-1.5b.mlir --max-context=4096 --kv-cache=bf16
  check mk-task-kind-check AttentionMerge $W/llama-3.2-1b.mlir --max-context=544 --kv-cache=bf16
}
decode() {
  for f in llama3_ts17 qwen3_ts17 qwen2_dynamo18 mistral_ts17; do check mk-gpu-check tests/fixtures/$f.onnx; done
  check mk-gpu-check --toy --inline-merge
  check mk-gpu-check tests/fixtures/llama3_ts17.onnx --max-context=64 --inline-merge
}
batches() {
  check mk-gpu-batch-check tests/fixtures/llama3_ts17.onnx --batch=4
  check mk-gpu-batch-check tests/fixtures/qwen2_dynamo18.onnx --batch=8 --max-context=2048
  check mk-gpu-batch-check tests/fixtures/qwen3_ts17.onnx --batch=3 --kv-cache=bf16
  check mk-gpu-batch-check $W/llama-3.2-1b.mlir --batch=4 --max-context=544 --kv-cache=bf16 --against-decode
}
kinds > $OUT/kinds.txt 2>&1 & K=$!
decode > $OUT/decode.txt 2>&1 & D=$!
batches > $OUT/batches.txt 2>&1 & BA=$!
wait $K $D $BA
cat $OUT/kinds.txt $OUT/decode.txt $OUT/batches.txt
wait $CP
# A batch of 4 from 480, greedy and sampled (the rows' sampling in teams).
prompts() { local ps=""; for i in $(seq 1 $1); do ps="$ps --prompt-tokens $((i+6))"; done; echo $ps; }
runb() { timeout 30 .gpu/$1/runtime/mkrun/mkrun $W/b-$1.mk --device gpu --start-position 480 $(prompts $2) -n 33 \
  --step-times $W/st.csv "${@:3}" > $W/o.txt 2>&1 || { echo "FAILED $*"; tail -3 $W/o.txt; return; }
  python3 -c "import csv,statistics as s;r=[float(x['ms']) for x in csv.DictReader(open('$W/st.csv'))][1:];print('batch $* : median %.3f min %.3f'%(s.median(r),min(r)))"; }
for b in p1 m1; do runb $b 4; runb $b 4 --temperature 1 --top-p 0.9 --seed 5; done
run() { echo "$1 position $2 ${3:-}: $(timeout 60 .gpu/${1##*-}/runtime/mkrun/mkrun $W/$1.mk --device gpu --start-position $2 --prompt-tokens 1 -n 33 ${3:-} 2>&1 | grep -E '^generation|error')"; }
for r in 1; do
  for b in p1 m1; do
    for x in 1 512 4096; do run W-$b $x; done
    for m in s l q; do for x in 40 480; do run $m-$b $x; done; done
    run l-$b 480 "--temperature 1 --top-p 0.9 --seed 7"
  done
done
for b in p1 m1; do
  timeout 60 .gpu/$b/runtime/mkrun/mkrun $W/W-$b.mk --device gpu --start-position 4096 --prompt-tokens 1 -n 9 --trace $W/W-$b.json > /dev/null
  .gpu/$b/compiler/tools/mkc inspect $W/W-$b.mk --format=json > $W/W-$b.inspect.json
  python3 bench/trace_summary.py $W/W-$b.json $W/W-$b.inspect.json > $OUT/trace-W-$b.txt 2>&1; echo "trace W-$b: $(head -1 $OUT/trace-W-$b.txt)"
done
