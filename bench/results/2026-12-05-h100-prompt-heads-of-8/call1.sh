#!/usr/bin/env bash
# One call (binaries .gpu/v1, main's build with these changes): the prompt
# kernels on heads of whole 8 dimensions (Phi-3's fixture: 24, the toy: 8,
# padded to k16 steps), the heads of 16 and 64 again; the tensor-core chunk
# kind checks under their range-scaled limit (tests/gpu/TaskKindCheck.cpp).
set -uo pipefail
mkdir -p $OUT /tmp/w
[ -d .gpu/v1 ] || tar -C .gpu -xJf .gpu/v1.tar.xz
N=.gpu/v1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
check() { local t0=$SECONDS; local f=/tmp/w/f-$RANDOM$RANDOM.txt; env $1 timeout 200 $N/tests/gpu/${@:2} > $f 2>&1
  echo "== ${*:2} ($1) rc=$? ($((SECONDS-t0)) s) $(grep -c FAIL $f) FAIL; $(grep -E '^ *ok|FAIL|argmax' $f | tail -2 | tr '\n' ' ')"; grep FAIL $f | head -3; }
prompts() {
  for a in X=1 MKRT_PREFILL_ATTENTION=own; do
    check $a mk-gpu-prefill-check tests/fixtures/phi3_ts17.onnx
    check $a mk-gpu-prefill-check tests/fixtures/phi3_dynamo23.onnx --kv-cache=bf16
  done
  check X=1 mk-gpu-prefill-check --toy
  check X=1 mk-gpu-prefill-check tests/fixtures/llama3_ts17.onnx
  check X=1 mk-gpu-prefill-check tests/fixtures/qwen3_ts17.onnx --kv-cache=bf16
  check X=1 mk-gpu-prefill-check tests/fixtures/extra/mistral_window6_ts17.onnx --max-context=256 --prompt=200 --kv-cache=bf16
}
kinds() {
  for f in llama3_ts17 qwen3_ts17 qwen2_dynamo18; do
    check X=1 mk-task-kind-check AttentionChunk tests/fixtures/$f.onnx --max-context=4000 --num-sms=8 --kv-cache=bf16 --chunk-attention=tensor-cores
  done
  check X=1 mk-task-kind-check AttentionChunk tests/fixtures/extra/mistral_sliding_ts17.onnx --max-context=10000 --num-sms=8 --kv-cache=bf16 --chunk-attention=tensor-cores
}
prompts > $OUT/prompts.txt 2>&1 & P=$!
kinds > $OUT/kinds.txt 2>&1
wait $P
cat $OUT/prompts.txt $OUT/kinds.txt
