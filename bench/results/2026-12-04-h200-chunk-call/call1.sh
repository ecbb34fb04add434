#!/usr/bin/env bash
# Long attention chunks (the staging ring's path) as a call of their own
# (.gpu/d1) against fbcb1c4 (.gpu/c2), builds for 32800: ptxas spills
# Qwen2.5-1.5B 252 -> 4 B, the 1B shape 0 -> 4 B (and a 224-byte stack
# frame for the call). Checks: the staged chunk's kind check, a long
# context fixture run, logits bit-identical to fbcb1c4's; then ms/token.
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
for b in c2 d1; do [ -d .gpu/$b ] || tar -C .gpu -xJf .gpu/$b.tar.xz; done
N=.gpu/d1
exec > >(tee $OUT/log.txt) 2>&1
for s in llama-3.2-1b qwen2.5-1.5b; do python3 scripts/fused_module.py bench/configs/$s*.json -o $W/$s.mlir; done
{ for b in c2 d1; do echo "$b llama-3.2-1b L 32800"; echo "$b qwen2.5-1.5b W 32800"; done; } |
  xargs -P 4 -L 1 bash -c 'timeout 200 .gpu/$0/compiler/tools/mkc compile '$W'/$1.mlir --emit=mk --random-weights --kv-cache=bf16 --max-context=$3 -o '$W'/$2-$0.mk 2>&1 | grep -E "error|registers|spill" | sed "s/^/$2-$0: /"' &
CP=$!
timeout 100 $N/tests/gpu/mk-task-kind-check AttentionChunk tests/fixtures/llama3_ts17.onnx --max-context=4096 --num-sms=8 --longest-attention-chunk=1024 --kv-cache=bf16 > $W/k.txt 2>&1; echo "kind-check staged chunk rc=$? $(tail -1 $W/k.txt)"
timeout 100 $N/tests/gpu/mk-gpu-check tests/fixtures/qwen3_ts17.onnx --max-context=4000 --kv-cache=bf16 > $W/g.txt 2>&1; echo "gpu-check qwen3_ts17 4000 rc=$? $(grep -c FAIL $W/g.txt) FAIL"
wait $CP
lg() { timeout 60 .gpu/${1##*-}/runtime/mkrun/mkrun $W/$1.mk --device gpu --start-position 4000 --tokens 1,7,42 --logits $2 > /dev/null 2>&1 || echo "FAILED $1"; }
for m in L W; do lg $m-d1 $W/a.npy; lg $m-c2 $W/b.npy; cmp -s $W/a.npy $W/b.npy && echo "$m-d1 logits at 4000 bit-identical to fbcb1c4's" || echo "$m-d1 logits DIFFER from fbcb1c4's"; done
run() { echo "$1 position $2: $(timeout 60 .gpu/${1##*-}/runtime/mkrun/mkrun $W/$1.mk --device gpu --start-position $2 --prompt-tokens 1 -n 33 2>&1 | grep -E '^generation|error')"; }
for r in 1 2; do for m in W-c2 W-d1 L-c2 L-d1; do for p in 1 32700; do run $m $p; done; done; done
