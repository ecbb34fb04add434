#!/usr/bin/env bash
# Issue 13's targets on nvidia-h200-x2, binaries packed as .gpu/c1:
# 1. the NCCL PyTorch carries (the kernel of ranks was linked against 2.28's
#    device part: mkc inspect names the version) as MKRT_NCCL_LIBRARY;
# 2. tests/gpu/check_tensor_parallel.py on two GPUs: two fixtures;
# 3. the Llama-3.1-8B shape and the Llama-3.2-1B shape compiled with
#    --tensor-parallel=2, each timed by bench/decode_bench.py --one-gpu-too
#    (the ranks against the same file's whole model on one GPU, one run),
#    and the AllReduces' cost per token from rank 0's trace.
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
[ -d .gpu/c1 ] || tar -C .gpu -xJf .gpu/c1.tar.xz
exec > >(tee $OUT/log.txt) 2>&1
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
B=.gpu/c1
nvidia-smi -L
N=$(python3 -c "import nvidia.nccl, glob, os; print(sorted(glob.glob(os.path.join(list(nvidia.nccl.__path__)[0], 'lib', 'libnccl.so*')))[0])")
python3 -c "import torch; print('torch', torch.__version__, 'nccl', torch.cuda.nccl.version())"
export MKRT_NCCL_LIBRARY=$N; echo "NCCL: $N"
tp() { local t0=$SECONDS; timeout 240 python3 tests/gpu/check_tensor_parallel.py --mkc $B/compiler/tools/mkc \
  --mkrun $B/runtime/mkrun/mkrun "$@"; echo "rc=$? ($((SECONDS-t0)) s): $*"; }
tp tests/fixtures/llama3_ts17.onnx --max-context=256
tp tests/fixtures/qwen3_ts17.onnx --kv-cache=bf16
for s in llama-3.2-1b llama-3.1-8b; do
  python3 scripts/fused_module.py bench/configs/$s-shaped.json -o $W/$s.mlir
  timeout 300 $B/compiler/tools/mkc compile $W/$s.mlir --emit=mk --random-weights --kv-cache=bf16 \
    --max-context=544 --tensor-parallel=2 -o $W/$s.mk 2>&1 | grep -E "error|spill|RANK"
  $B/compiler/tools/mkc inspect $W/$s.mk | grep -i -E "rank|nccl"
  timeout 300 python3 bench/decode_bench.py --mk $W/$s.mk --config bench/configs/$s-shaped.json \
    --build $B --position 480 --no-pytorch --one-gpu-too --out $OUT/$s
done
echo "done at $SECONDS s"
