#!/usr/bin/env bash
# new (a672f9f): a step spreads over one round's chunks only while one
# round holds it, else over every chunk as before (call 1: spreading over
# one round past its reach cost 1.2% at 32736). Call 4 runs this script on
# the next commit (the spans' divisions in 32 bits). Logits: new against old
# (b844481) where the spans are equal (0-7 and 32700-32703 now both), GPU
# against CPU where they differ (510-513); mk-gpu-check on two fixtures;
# compute-sanitizer on a small shape of 8 KV heads (16 chunks a round of 33)
# across the position where one round stops holding a step; then ms/token,
# old and new alternating.
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
for b in old new; do [ -d .gpu/$b ] || tar -C .gpu -xJf .gpu/$b.tar.xz; done
N=.gpu/new
exec > >(tee $OUT/log.txt) 2>&1
for f in qwen3_ts17 llama3_ts17; do timeout 100 $N/tests/gpu/mk-gpu-check tests/fixtures/$f.onnx --max-context=4096 > $W/g.txt 2>&1; echo "mk-gpu-check $f 4096 rc=$?"; grep FAIL $W/g.txt | head -5; done
python3 - <<'PY'
import json
c = json.load(open("bench/configs/llama-3.2-1b-shaped.json"))
c.update(hidden_size=512, intermediate_size=1024, num_hidden_layers=2, vocab_size=1024, head_dim=64,
         num_attention_heads=16, num_key_value_heads=8)
json.dump(c, open("/tmp/w/kv8.json", "w"))
PY
python3 scripts/fused_module.py $W/kv8.json -o $W/kv8.mlir && timeout 100 $N/compiler/tools/mkc compile $W/kv8.mlir --emit=mk --random-weights --max-context=32800 -o $W/kv8.mk 2>&1 | grep -E "error"
$N/compiler/tools/mkc compile $W/kv8.mlir --emit=tasks --max-context=32800 | grep -m1 "attention:"
for p in 510 16380; do
  timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 $N/runtime/mkrun/mkrun $W/kv8.mk --device gpu --start-position $p --tokens 1,7,42,3,5,9 --logits $W/s$p.npy > $W/san.txt 2>&1; echo "compute-sanitizer kv8 at $p-$((p+5)) rc=$?"; grep -E "ERROR SUMMARY|Invalid" $W/san.txt | head -3
  timeout 60 $N/runtime/mkrun/mkrun $W/kv8.mk --device cpu --start-position $p --tokens 1,7,42,3,5,9 --logits $W/c$p.npy > /dev/null && echo "kv8 at $p GPU (sanitized) vs CPU: $(python3 scripts/compare_logits.py $W/s$p.npy $W/c$p.npy --rtol 1e-3)"
done
python3 scripts/fused_module.py bench/configs/llama-3.2-1b-shaped.json -o $W/1b.mlir
python3 scripts/fused_module.py bench/configs/qwen3-0.6b-shaped.json -o $W/q.mlir
{ echo "1b old l32k"; echo "1b new l32k"; [ -n "${QWEN:-}" ] && { echo "q old q32k"; echo "q new q32k"; }; } | xargs -P 4 -L 1 bash -c 'timeout 150 .gpu/$1/compiler/tools/mkc compile '$W'/$0.mlir --emit=mk --random-weights --max-context=32800 -o '$W'/$2-$1.mk 2>&1 | grep -E "error"'
lg() { timeout 40 .gpu/$2/runtime/mkrun/mkrun $W/$1-$2.mk --device gpu $3 --logits $4 > /dev/null || echo "FAILED $1 $2 $3"; }
for b in old new; do lg l32k $b "--start-position 32700 --tokens 1,7,42,3" $W/g32k-$b.npy; lg l32k $b "--tokens 1,7,42,3,99,5,11,64" $W/g0-$b.npy; done
cmp $W/g32k-old.npy $W/g32k-new.npy && cmp $W/g0-old.npy $W/g0-new.npy && echo "l32k: logits at 0-7 and 32700-32703, old and new identical"
run() { echo "$1 $2 position $3: $(timeout 40 .gpu/$2/runtime/mkrun/mkrun $W/$1-$2.mk --device gpu --start-position $3 --prompt-tokens 1 -n 33 2>&1 | grep -E '^generation|error')"; }
for r in 1 2; do for p in 1 512 4096 16000 32736; do run l32k old $p; run l32k new $p; done; done
[ -n "${QWEN:-}" ] && for r in 1 2; do for p in 1 512 4096; do run q32k old $p; run q32k new $p; done; done
echo done
