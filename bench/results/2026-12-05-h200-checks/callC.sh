#!/usr/bin/env bash
# Call C, binaries .gpu/c3 (c1 with the sampled-batches patch of
# results/2026-12-04-h200-sampled-batches, cuDNN's attention taken by
# default where it runs, and a SiLU-mul's GEMM products in bf16 for its
# prompt epilogue), against c1 for the prompt timings:
#   sampled  mk-gpu-batch-check (sampled rows against the decode kernel's
#            draws for each sequence alone) on three fixtures and the 1B shape,
#            mk-gpu-check on a fixture (the decode kernel's sampling);
#   default  mk-gpu-prefill-check on the 1B shape with cuDNN found and no
#            MKRT_PREFILL_ATTENTION: it must say cuDNN's attention runs;
#            and with the prompt kernels' attention (bf16 products);
#   timing   prefill_bench at 32000 and 32768 tokens (the issue's
#            length), cuDNN's attention, c1 (f32 products) and c3, HF SDPA
#            in the same run; mkrun at 1 and 4 rows greedy and sampled from
#            480 (sampled batches).
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
for b in c1 c3; do [ -d .gpu/$b ] || tar -C .gpu -xJf .gpu/$b.tar.xz; done
exec > >(tee $OUT/log.txt) 2>&1
B=.gpu/c3
E=$(python3 bench/cudnn_library.py)
python3 scripts/fused_module.py bench/configs/llama-3.2-1b-shaped.json -o $W/l.mlir
( timeout 300 $B/compiler/tools/mkc compile $W/l.mlir --emit=mk --random-weights --kv-cache=bf16 \
    --max-context=32800 -o $W/l.mk 2>&1 | grep -E "error|spill";
  timeout 300 $B/compiler/tools/mkc compile $W/l.mlir --emit=mk --random-weights --kv-cache=bf16 \
    --max-context=544 --batch=4 -o $W/lb.mk 2>&1 | grep -E "error|spill" ) &
P0=$!
# c1's prompt kernels speak the prompt ABI 2: its own file.
( timeout 300 .gpu/c1/compiler/tools/mkc compile $W/l.mlir --emit=mk --random-weights --kv-cache=bf16 \
    --max-context=32800 -o $W/l1.mk 2>&1 | grep -E "error" ) &
P=$!
sampled() {
  for args in "mk-gpu-batch-check tests/fixtures/llama3_ts17.onnx --batch=4" \
              "mk-gpu-batch-check tests/fixtures/qwen3_ts17.onnx --batch=3 --kv-cache=bf16" \
              "mk-gpu-batch-check tests/fixtures/qwen2_dynamo18.onnx --batch=8 --max-context=2048" \
              "mk-gpu-check tests/fixtures/llama3_ts17.onnx" \
              "mk-gpu-batch-check $W/l.mlir --batch=4 --max-context=544 --kv-cache=bf16 --against-decode"; do
    local t0=$SECONDS; timeout 300 $B/tests/gpu/$args
    echo "== $args rc=$? ($((SECONDS-t0)) s)"
  done
}
default() {
  local t0=$SECONDS; env $E timeout 300 $B/tests/gpu/mk-gpu-prefill-check $W/l.mlir --max-context=1024 --prompt=1000 --kv-cache=bf16
  echo "== default 1B rc=$? ($((SECONDS-t0)) s)"
  t0=$SECONDS; MKRT_PREFILL_ATTENTION=own timeout 300 $B/tests/gpu/mk-gpu-prefill-check $W/l.mlir --max-context=1024 --prompt=1000 --kv-cache=bf16
  echo "== own 1B rc=$? ($((SECONDS-t0)) s)"
}
sampled > $OUT/sampled.txt 2>&1 & P1=$!
default > $OUT/default.txt 2>&1 & P2=$!
wait $P2; wait $P; wait $P0; wait $P1
timeout 200 python3 bench/prefill_bench.py --config bench/configs/llama-3.2-1b-shaped.json \
  --mk $W/l1.mk --mkrun .gpu/c1/runtime/mkrun/mkrun --lengths 32000,32768 --repeats 2 \
  --attention cudnn --no-hf --out $W/c1 | grep -E "^\| [0-9]"
timeout 300 python3 bench/prefill_bench.py --config bench/configs/llama-3.2-1b-shaped.json \
  --mk $W/l.mk --mkrun $B/runtime/mkrun/mkrun --lengths 32000,32768 --repeats 2 \
  --attention cudnn --profile --out $OUT
prompts() { local ps=""; for i in $(seq 1 $1); do ps="$ps --prompt-tokens $((i+6))"; done; echo $ps; }
runb() { timeout 30 $B/runtime/mkrun/mkrun $W/lb.mk --device gpu --start-position 480 $(prompts $1) -n 33 \
  --step-times $W/st.csv "${@:2}" > $W/o.txt 2>&1 || { echo "FAILED $*"; tail -3 $W/o.txt; return; }
  python3 -c "import csv,statistics as s;r=[float(x['ms']) for x in csv.DictReader(open('$W/st.csv'))][1:];print('rows $* : median %.3f min %.3f'%(s.median(r),min(r)))"; }
for r in 1; do runb 1; runb 1 --temperature 1 --top-p 0.9 --seed 5; runb 4; runb 4 --temperature 1 --top-p 0.9 --seed 5; done
timeout 30 $B/runtime/mkrun/mkrun $W/lb.mk --device gpu $(prompts 4) -n 8 --temperature 1 --repetition-penalty 1.3 > $W/p.txt 2>&1; echo "penalty rc=$?"; tail -2 $W/p.txt
grep -h -E "^== |FAIL|prompts' attention|attention asked" $OUT/sampled.txt $OUT/default.txt
echo "done at $SECONDS s"
