#!/usr/bin/env bash
# Long contexts in one round of chunk tasks: the 1B shape and Qwen3-0.6B
# built for 32800 with the default longest chunk (1024 positions there: 33
# chunks a KV head, two rounds of 264 tasks over 132 SMs at 32700) against
# --longest-attention-chunk=2048 (17 chunks; a step of 32700 spreads over 16,
# one round of 128 tasks), with and without inline merges. .gpu/i3.
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
[ -d .gpu/i3 ] || tar -C .gpu -xJf .gpu/i3.tar.xz
N=.gpu/i3
exec > >(tee $OUT/log.txt) 2>&1
# First: the inline merges' interpreter under racecheck again, after the
# inline task's trigger is read before its closing barrier (the loader may
# copy the next inline entry over it once the barrier is passed).
timeout 100 compute-sanitizer --tool racecheck --error-exitcode 9 $N/tests/gpu/mk-gpu-check --toy --inline-merge > $W/cs.txt 2>&1
echo "compute-sanitizer racecheck toy inline rc=$? $(grep -E 'RACECHECK SUMMARY' $W/cs.txt | head -1)"; grep -m3 -A6 "Error\|Hazard" $W/cs.txt | head -20
for s in llama-3.2-1b qwen3-0.6b; do python3 scripts/fused_module.py bench/configs/$s*.json -o $W/$s.mlir; done
{ echo "llama-3.2-1b l"; echo "llama-3.2-1b l2k --longest-attention-chunk=2048";
  echo "llama-3.2-1b l2ki --longest-attention-chunk=2048 --inline-merge";
  echo "qwen3-0.6b q"; echo "qwen3-0.6b q2k --longest-attention-chunk=2048"; } |
  xargs -P 5 -L 1 bash -c 'timeout 200 '$N'/compiler/tools/mkc compile '$W'/$0.mlir --emit=mk --random-weights --kv-cache=bf16 --max-context=32800 $2 $3 -o '$W'/$1.mk 2>&1 | grep -E "error|registers" | sed "s/^/$1: /"'
lg() { timeout 60 $N/runtime/mkrun/mkrun $W/$1.mk --device gpu --start-position $3 --tokens 1,7,42,3 --logits $2 > /dev/null || echo "FAILED $1"; }
rel() { python3 -c "import numpy as n,sys;a=n.load(sys.argv[1]);b=n.load(sys.argv[2]);print('$1 at $2: max rel err %.2e, argmax equal %s'%(float(n.abs(a-b).max()/n.abs(b).max()),(a.argmax(-1)==b.argmax(-1)).all()))" $W/a.npy $W/b.npy; }
for m in l q; do lg ${m}2k $W/a.npy 32700; lg $m $W/b.npy 32700; rel ${m}2k-vs-default 32700; done
run() { echo "$1 position $2: $(timeout 60 $N/runtime/mkrun/mkrun $W/$1.mk --device gpu --start-position $2 --prompt-tokens 1 -n 33 2>&1 | grep -E '^generation|error')"; }
for r in 1; do
  for p in 1 16400 24000 32700; do run l $p; run l2k $p; run l2ki $p; done
  for p in 16400 32700; do run q $p; run q2k $p; done
done
