#!/usr/bin/env bash
# c1 = the prompts' attention by cuDNN (MKRT_PREFILL_ATTENTION=cudnn,
# runtime/gpu/CudnnAttention.h), binaries packed under .gpu/c1.
# 1. where this machine's cuDNN is (bench/cudnn_library.py) and PyTorch's
#    cuDNN version;
# 2. mk-gpu-prefill-check with cuDNN's attention (every position's logits
#    against the decode kernel, passes of 37 rows, a second call, decode
#    after the prompt, two runs bit for bit, the first token): qwen3_ts17
#    with bf16 caches (head dim 32), the Llama-3.2-1B shape (1000 of 1024
#    positions), the SmolLM2 shape (groups of 3 q heads, 650 of 700); and
#    the 1B shape once with the prompt kernels' own attention;
# 3. bench/prefill_bench.py on the 1B shape built for 32800 with bf16
#    caches: own and cuDNN's attention at 512, 4096 and 32000, the profile
#    by kernel kind, HF SDPA and the dense matmul rate in the same run.
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
[ -d .gpu/c1 ] || tar -C .gpu -xJf .gpu/c1.tar.xz
exec > >(tee $OUT/log.txt) 2>&1
export NCCL_NVLS_ENABLE=0
E=$(python3 bench/cudnn_library.py); echo "cuDNN: $E"
python3 -c "import torch; print('torch', torch.__version__, 'cudnn', torch.backends.cudnn.version())"
python3 scripts/fused_module.py bench/configs/llama-3.2-1b-shaped.json -o $W/l.mlir
python3 scripts/fused_module.py bench/configs/smollm2-135m-shaped.json -o $W/s.mlir
( timeout 300 .gpu/c1/compiler/tools/mkc compile $W/l.mlir --emit=mk --random-weights \
    --kv-cache=bf16 --max-context=32800 -o $W/l.mk 2>&1 | grep -E "error|spill" ) &
P=$!
ck() { # attention, check's arguments
  local a=$1; shift; local t0=$SECONDS
  env $E MKRT_PREFILL_ATTENTION=$a timeout 300 .gpu/c1/tests/gpu/mk-gpu-prefill-check "$@" > $W/p.txt 2>&1
  echo "$a $* rc=$? ($((SECONDS-t0)) s)"; head -14 $W/p.txt
}
ck cudnn tests/fixtures/qwen3_ts17.onnx --kv-cache=bf16
ck cudnn $W/l.mlir --max-context=1024 --prompt=1000 --kv-cache=bf16
ck cudnn $W/s.mlir --max-context=700 --prompt=650 --kv-cache=bf16
ck own $W/l.mlir --max-context=1024 --prompt=1000 --kv-cache=bf16
wait $P
timeout 420 python3 bench/prefill_bench.py --config bench/configs/llama-3.2-1b-shaped.json \
  --mk $W/l.mk --mkrun .gpu/c1/runtime/mkrun/mkrun --lengths 512,4096,32000 --repeats 2 \
  --attention own,cudnn --profile --out $OUT/prefill
echo "done at $SECONDS s"
