#!/usr/bin/env bash
# Call 2, NOT YET RUN (the session's device time was spent): first the six
# kind checks of the one-warp-a-head chunks that this commit added and no
# GPU has run (tests/gpu/warp-head-shapes.json: f32 caches, chunks of 32,
# q and k norms, half of each head rotated, heads of 128 and 256), then
# two-positions-a-lane.patch (chunks of up to 64 positions on the same
# path, a lane two positions past 32: the 1B shape's and Qwen3-0.6B's
# chunks of 48 in builds for 544), its kind checks (one more: chunks of 64)
# and its timing against the commit. pack2.sh makes what it carries
# (.gpu/head.tar.xz, .gpu/tpl.tar.xz).
# Predicted for the patch: the 1B shape -1 to -2% (its chunk phase ~5 us a
# layer at 480 on an H100, chunks of 40 positions after their wait ~2.7
# us), Qwen3-0.6B -2 to -4%, the tiny layers, SmolLM2 and Qwen2.5-1.5B
# unchanged (chunks of 16 already on the path; logits bit for bit).
set -uo pipefail
mkdir -p $OUT; W=/tmp/ws; mkdir -p $W
tar -xJf .gpu/head.tar.xz
tar -C .gpu -xJf .gpu/tpl.tar.xz
exec > >(tee $OUT/log.txt) 2>&1
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
echo "the commit's warp-heads kind checks:"
PARALLEL=8 MATCH=warp-heads timeout 120 python3 scripts/gpu_tests.py
echo "the patch's warp-heads kind checks:"
(cd .gpu/tpl && ln -sfn ../../scripts scripts && ln -sfn ../../tests tests &&
  PARALLEL=8 MATCH=warp-heads timeout 120 python3 scripts/gpu_tests.py)
for s in layer-cost-64x256:t smollm2-135m-shaped:s llama-3.2-1b-shaped:l qwen3-0.6b-shaped:q qwen2.5-1.5b-shaped:w; do
  python3 scripts/fused_module.py bench/configs/${s%:*}.json -o $W/${s#*:}.mlir
done
PIDS=""
for m in t s l q w; do for v in head tpl; do
  c=build/compiler/tools/mkc; [ $v = tpl ] && c=.gpu/tpl/build/compiler/tools/mkc
  ( timeout 240 $c compile $W/$m.mlir --emit=mk --random-weights --kv-cache=bf16 \
      --max-context=544 -o $W/$m-$v.mk 2>&1 | grep -E "error|spill" | sed "s/^/$m-$v: /" ) &
  PIDS="$PIDS $!"
done; done
wait $PIDS
R=build/runtime/mkrun/mkrun
runb() { # build position
  rm -f $W/st.csv
  timeout 60 $R $W/$1.mk --device gpu --start-position $2 --prompt-tokens 7 -n 33 \
      --step-times $W/st.csv > $W/o-$1.txt 2>&1 || { echo "FAILED $1"; tail -5 $W/o-$1.txt; return; }
  python3 -c "import csv,statistics as s;r=[float(x['ms']) for x in csv.DictReader(open('$W/st.csv'))][1:];print('$1 position $2: median %.3f min %.3f'%(s.median(r),min(r)))"
}
for r in 1 2; do for m in t s l q w; do for v in head tpl; do runb $m-$v 480; done; done; done
for m in t s l q w; do for v in head tpl; do runb $m-$v 40; done; done
TOKENS=1,7,42,3,99,5,11,64,8,250,17,2
for m in t s l q w; do
  for v in head tpl; do
    timeout 60 $R $W/$m-$v.mk --device gpu --tokens $TOKENS --logits $W/g-$m-$v.npy > $W/c.txt 2>&1 ||
      { echo "logits $m-$v FAILED"; tail -5 $W/c.txt; }
  done
  python3 -c "
import numpy as np
a, b = np.load('$W/g-$m-head.npy'), np.load('$W/g-$m-tpl.npy')
same = a.shape == b.shape and (a.view(np.uint32) == b.view(np.uint32)).all()
top = np.sort(a, axis=-1)
clear = (top[..., -1] - top[..., -2]) > 1e-3 * np.abs(a).max(axis=-1)
agree = (a.argmax(-1) == b.argmax(-1))
print('logits $m: against the commit', 'bit for bit' if same else
      'max |diff| / max |logit| %.2e, argmax agrees on %d of %d clear tokens' %
      (abs(a - b).max() / abs(a).max(), (agree & clear).sum(), clear.sum()))"
done
echo "done at ${SECONDS}s"
