#!/usr/bin/env bash
# Call B, binaries .gpu/h5 (main with the batch timing fix: a batch whose
# prompts ran layer by layer reports its steps from the shortest prompt's
# position on, as one sequence does):
#   hd256    heads of 256 (Gemma 3's) through the attention chunks' tensor-core
#            path (a build for 32768: chunks of 512), the GPU's logits
#            against the CPU executor's at 300 and 20000 positions, and the
#            CUDA-core path beside it;
#   smollm2  the harness on the SmolLM2-135M shape (call A ran out of time
#            before it), traced;
#   batches  the harness's batches of the 1B shape (call A's batch of 2
#            failed: mkrun timed 0 of its 32 positions).
set -uo pipefail
mkdir -p $OUT /tmp/hd
[ -d .gpu/h5 ] || tar -C .gpu -xJf .gpu/h5.tar.xz
B=.gpu/h5
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 scripts/fused_module.py bench/configs/head-dim-256-tiny.json -o /tmp/hd/hd.mlir
for path in tensor-cores cuda-cores; do
  $B/compiler/tools/mkc compile /tmp/hd/hd.mlir --emit=mk --random-weights --max-context=32768 \
    --kv-cache=bf16 --chunk-attention=$path -o /tmp/hd/$path.mk 2>&1 | grep -E "megakernel|error"
  for P in 300 20000; do
    for d in gpu cpu; do
      timeout 120 $B/runtime/mkrun/mkrun /tmp/hd/$path.mk --device $d --start-position $P \
        --tokens 5,9,301 --logits /tmp/hd/$path-$P-$d.npy > /dev/null || echo "mkrun $d $P rc=$?"
    done
    python3 - /tmp/hd/$path-$P-gpu.npy /tmp/hd/$path-$P-cpu.npy $path $P <<'PY'
import sys, numpy as np
g, c = np.load(sys.argv[1]), np.load(sys.argv[2])
err = np.abs(g - c).max() / np.abs(c).max()
print(f"hd256 {sys.argv[3]} at {sys.argv[4]}: {g.shape}, max |gpu - cpu| / max |cpu| = {err:.2e}, "
      f"argmax {(g.argmax(-1) == c.argmax(-1)).sum()}/{len(c)}", "PASS" if err < 1e-3 else "FAIL")
PY
  done
done
echo "hd256 done at $SECONDS s"
timeout 200 python3 bench/harness.py --out $OUT/run --build $B --shapes smollm2-135m \
  --baselines none --also-small-context --trace-shape smollm2-135m --trace-position 480 \
  > $OUT/harness-smollm2.txt 2>&1
echo "harness smollm2 rc=$? at $SECONDS s"; tail -3 $OUT/harness-smollm2.txt
left=$((585 - SECONDS)); echo "batches with ${left} s"
timeout $left python3 bench/harness.py --out $OUT/run --build $B --shapes llama-3.2-1b \
  --positions 1 --baselines none --prompts none --no-long-check --trace-shape none \
  > $OUT/harness-batches.txt 2>&1
echo "harness batches rc=$?"; tail -3 $OUT/harness-batches.txt
mkdir -p /tmp/parts && mv $OUT/run/parts /tmp/parts/ 2>/dev/null; ls $OUT/run
