#!/usr/bin/env bash
# Call 3, binaries .gpu/b3 (main with weighHeadChunks shared by the Gemv
# merging every head, --merge-in-o-proj, and HeadProjection): the kinds and
# whole models of both against the CPU, and prompts of a by-head build.
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
[ -d .gpu/b3 ] || tar -C .gpu -xJf .gpu/b3.tar.xz
B=.gpu/b3
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
check() { local t0=$SECONDS; local f=$W/f-$RANDOM$RANDOM.txt; timeout 240 $B/tests/gpu/"$@" > $f 2>&1
  echo "== $* rc=$? ($((SECONDS-t0)) s) $(grep -c FAIL $f) FAIL; $(tail -1 $f)"; grep FAIL $f | head -3; }
F=tests/fixtures
check mk-task-kind-check Gemv $F/llama3_ts17.onnx --merge-in-o-proj
check mk-task-kind-check Gemv $F/extra/gemma3_ts17.onnx --merge-in-o-proj
check mk-task-kind-check HeadProjection $F/llama3_ts17.onnx --o-proj-by-head
check mk-task-kind-check HeadProjection $F/qwen3_ts17.onnx --o-proj-by-head --max-context=2048 --kv-cache=bf16
check mk-task-kind-check HeadProjection $F/phi3_ts17.onnx --o-proj-by-head
check mk-gpu-check $F/llama3_ts17.onnx --max-context=64 --merge-in-o-proj
check mk-gpu-check $F/qwen2_dynamo18.onnx --max-context=2048 --kv-cache=bf16 --o-proj-by-head
check mk-gpu-prefill-check $F/qwen3_ts17.onnx --kv-cache=bf16 --o-proj-by-head
echo "all done at $SECONDS s"
