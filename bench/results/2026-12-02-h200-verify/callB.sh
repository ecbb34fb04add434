#!/usr/bin/env bash
# The server through the openai client on the GPU; llama.cpp (built portable,
# CPU) against the kernel on GGUF files of every family and type; the
# streaming loader on the Llama-3.1-8B shape; what sampling costs a token.
set -uo pipefail
mkdir -p /tmp/stash $OUT; cp .xfer/* /tmp/stash/ 2>/dev/null
rm -rf .gpu/new; tar -C .gpu -xJf .gpu/new.tar.xz; N=$PWD/.gpu/new; W=/tmp/w; mkdir -p $W
exec > >(tee $OUT/log.txt) 2>&1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
echo "== the server on the GPU (openai client)"
(cd python/tests && export MKC=$N/compiler/tools/mkc MKRUN=$N/runtime/mkrun/mkrun MKRT_LIBRARY=$N/runtime/mkrt/libmkrt.so PYTHONPATH=..:/tmp/site
 MKRT_TEST_DEVICE=gpu timeout 240 python3 test_serve.py -v 2>&1 | tail -25)
echo "== llama.cpp against the kernel (--device gpu)"
for fam in llama3 mistral qwen2 qwen3; do for t in F32 Q8_0 Q4_0; do
  r=5e-2; [ $t = F32 ] && r=2e-2
  PYTHONPATH=.lc/python timeout 120 python3 tests/oracle/check_gguf_llama_cpp.py --mkc $N/compiler/tools/mkc --mkrun $N/runtime/mkrun/mkrun --device gpu --type $t --rtol $r tests/fixtures/${fam}_ts17.onnx > $W/lc.txt 2>&1
  echo "$fam $t rc=$? | $(tail -2 $W/lc.txt | tr '\n' ' ' | cut -c1-300)"; done; done
echo "== the loader on the Llama-3.1-8B shape"
python3 scripts/fused_module.py bench/configs/llama-3.1-8b-shaped.json -o $W/8b.mlir
/usr/bin/time -v $N/compiler/tools/mkc compile $W/8b.mlir --emit=mk --random-weights --max-context=512 -o $W/8b.mk 2>&1 | grep -E "wrote|Maximum resident|Elapsed"
/usr/bin/time -v $N/runtime/mkrun/mkrun $W/8b.mk --prompt-tokens 1,2,3 -n 8 --device gpu > $W/8b.txt 2>&1; echo "rc=$?"; grep -E "mkrt:|tokens|generation|Maximum resident|Elapsed" $W/8b.txt | cut -c1-200
echo "expected: 98961 113689 68279 68279 9850 103197 103418 75751"
script -qc "$N/runtime/mkrun/mkrun $W/8b.mk --device gpu --prompt-tokens 1,2,3 -n 2" /dev/null | tr '\r' '\n' | grep -E "mkrt" | sed -n '1p;$p'
rm -f $W/8b.mk
echo "== sampling cost (SmolLM2-135M shape, 256 tokens from 0)"
python3 scripts/fused_module.py bench/configs/smollm2-135m-shaped.json -o $W/smol.mlir
$N/compiler/tools/mkc compile $W/smol.mlir --emit=mk --random-weights --max-context=512 -o $W/smol.mk 2>&1 | tail -1
for flags in "" "--temperature 0.8 --seed 7" "--temperature 0.8 --top-p 0.9 --seed 7" "--temperature 0.8 --top-k 40 --min-p 0.05 --repetition-penalty 1.1 --seed 7" "--stream"; do
  timeout 60 $N/runtime/mkrun/mkrun $W/smol.mk --device gpu --prompt-tokens 1,2,3 -n 256 $flags > $W/s.txt 2>&1; echo "[$flags] $(grep -E '^generation' $W/s.txt)"; done
echo done
