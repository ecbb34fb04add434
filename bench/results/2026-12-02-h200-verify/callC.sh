#!/usr/bin/env bash
# The server on the GPU again (the test's model now compiled with its kernel
# when MKRT_TEST_DEVICE=gpu); llama.cpp against the kernel with gguf-py
# carried; hops from traces; --longest-attention-chunk 256 against 2048 in a
# build for 32800 positions.
set -uo pipefail
mkdir -p $OUT; rm -rf .gpu/new; tar -C .gpu -xJf .gpu/new.tar.xz; N=$PWD/.gpu/new; W=/tmp/w; mkdir -p $W
exec > >(tee $OUT/log.txt) 2>&1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
echo "== the server on the GPU (openai client)"
(cd python/tests && export MKC=$N/compiler/tools/mkc MKRUN=$N/runtime/mkrun/mkrun MKRT_LIBRARY=$N/runtime/mkrt/libmkrt.so PYTHONPATH=..:/tmp/site
 MKRT_TEST_DEVICE=gpu timeout 240 python3 test_serve.py -v 2>&1 | tail -22)
echo "== llama.cpp against the kernel (--device gpu)"
for fam in llama3 mistral qwen2 qwen3; do for t in F32 Q8_0 Q4_0; do
  r=5e-2; [ $t = F32 ] && r=2e-2
  PYTHONPATH=.lc/python timeout 120 python3 tests/oracle/check_gguf_llama_cpp.py --mkc $N/compiler/tools/mkc --mkrun $N/runtime/mkrun/mkrun --device gpu --type $t --rtol $r tests/fixtures/${fam}_ts17.onnx > $W/lc.txt 2>&1
  echo "$fam $t rc=$? | $(tail -3 $W/lc.txt | tr '\n' ' ' | cut -c1-400)"; done; done
python3 scripts/fused_module.py bench/configs/smollm2-135m-shaped.json -o $W/smol.mlir
python3 scripts/fused_module.py bench/configs/llama-3.2-1b-shaped.json -o $W/1b.mlir
echo "== hops (traces at 480, built for 512)"
for name in 1b smol; do $N/compiler/tools/mkc compile $W/$name.mlir --emit=mk --random-weights --max-context=512 -o $W/$name.mk 2>&1 | tail -1
  $N/runtime/mkrun/mkrun $W/$name.mk --device gpu --start-position 480 --prompt-tokens 1 -n 4 --trace $W/$name-trace.json > /dev/null
  $N/compiler/tools/mkc inspect $W/$name.mk --format=json > $W/$name.json
  python3 bench/trace_summary.py $W/$name-trace.json $W/$name.json > $OUT/hops-$name.txt; tail -40 $OUT/hops-$name.txt; done
echo "== --longest-attention-chunk in a build for 32800 positions (1B shape)"
for n in 256 2048; do
  $N/compiler/tools/mkc compile $W/1b.mlir --emit=mk --random-weights --max-context=32800 --longest-attention-chunk=$n -o $W/1b32k.mk 2>&1 | tail -1
  for p in 1 512 4096 32736; do timeout 60 $N/runtime/mkrun/mkrun $W/1b32k.mk --device gpu --start-position $p --prompt-tokens 1 -n 33 > $W/c.txt 2>&1; echo "chunk $n at $p: $(grep -E '^generation' $W/c.txt)"; done; done
echo done
