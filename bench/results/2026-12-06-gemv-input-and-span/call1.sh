#!/usr/bin/env bash
# Call 1. (a) A batch gemv's input by loads through registers where its
# first weights are staged by cp.async (`v1`: main with v1-input-loads.patch)
# against main (`m0`, 0e957c2), the 1B shape built for 544 with batches of
# 4 and 8 (bf16 KV caches), 1, 4 and 8 rows from 480, two rounds; v1's
# batch checks (with the sampled-rows check that re-samples each row's own
# logits on the CPU). (b) The shortest attention span and chunk 64
# (`p64`: main with p64-shortest-span.patch) against m0: the 1B shape and
# SmolLM2-135M's shape built for 544, one row from 40 and from 480, two
# rounds; p64's GPU-against-CPU checks.
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
for b in m0 v1 p64; do [ -d .gpu/$b ] || tar -C .gpu -xJf .gpu/$b.tar.xz; done
R=.gpu/v1 # mkrun and the batch checks (the runtime is main's in all three)
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv
python3 scripts/fused_module.py bench/configs/llama-3.2-1b-shaped.json -o $W/l.mlir
python3 scripts/fused_module.py bench/configs/smollm2-135m-shaped.json -o $W/s.mlir
PIDS=""
mk() { # binary model out options...
  local b=$1 m=$2 o=$3; shift 3
  ( timeout 300 .gpu/$b/compiler/tools/mkc compile $W/$m.mlir --emit=mk --random-weights --kv-cache=bf16 --max-context=544 "$@" -o $W/$o.mk 2>&1 | grep -E "error|registers|spill|wrote" | sed "s/^/$o: /" ) &
  PIDS="$PIDS $!"
}
mk m0 l m0-l --batch=4,8; mk v1 l v1-l --batch=4,8; mk p64 l p64-l; mk m0 s m0-s; mk p64 s p64-s
wait $PIDS
runb() { # mk rows position
  local ps=""; for i in $(seq 1 $2); do ps="$ps --prompt-tokens $((i+6))"; done
  timeout 60 $R/runtime/mkrun/mkrun $W/$1.mk --device gpu --start-position $3 $ps -n 33 --step-times $W/st.csv > $W/o.txt 2>&1 || { echo "FAILED $1 $2"; tail -5 $W/o.txt; }
  python3 -c "import csv,statistics as s;r=[float(x['ms']) for x in csv.DictReader(open('$W/st.csv'))][1:];print('$1 rows $2 position $3: median %.3f min %.3f'%(s.median(r),min(r)))"
}
for r in 1 2; do
  for b in 1 4 8; do for k in m0-l v1-l; do runb $k $b 480; done; done
  for p in 40 480; do for k in m0-l p64-l m0-s p64-s; do runb $k 1 $p; done; done
done
bc() { timeout 200 $R/tests/gpu/mk-gpu-batch-check $@ > $W/b.txt 2>&1; echo "v1 batch-check $* rc=$? $(grep -c FAIL $W/b.txt) FAIL"; grep -E "FAIL|rror" $W/b.txt | head -3; grep -E "teacher-forced|sampled rows" $W/b.txt | head -2; }
bc tests/fixtures/llama3_ts17.onnx --batch=4
bc tests/fixtures/llama3_ts17.onnx --batch=8 --kv-cache=bf16
bc tests/fixtures/qwen3_ts17.onnx --batch=8 --kv-cache=bf16
bc tests/fixtures/qwen3_ts17.onnx --batch=3 --kv-cache=bf16
bc tests/fixtures/phi3_ts17.onnx --batch=4
bc tests/fixtures/qwen2_dynamo18.onnx --batch=8 --max-context=2048 --kv-cache=bf16
bc $W/l.mlir --batch=8 --max-context=544 --kv-cache=bf16 --against-decode
gc() { timeout 200 .gpu/p64/tests/gpu/mk-gpu-check $@ > $W/g.txt 2>&1; echo "p64 gpu-check $* rc=$? $(grep -c FAIL $W/g.txt) FAIL"; grep -E "FAIL|rror" $W/g.txt | head -3; grep "teacher-forced" $W/g.txt | head -1; }
gc tests/fixtures/llama3_ts17.onnx --max-context=3000
gc tests/fixtures/qwen3_ts17.onnx --max-context=64 --kv-cache=bf16
gc tests/fixtures/qwen3_ts17.onnx --max-context=2048 --kv-cache=bf16
gc tests/fixtures/phi3_ts17.onnx --max-context=64
gc tests/fixtures/extra/mistral_window6_ts17.onnx --max-context=256
