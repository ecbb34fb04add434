#!/usr/bin/env bash
# Call 1, binaries .gpu/h6 (main with --merge-in-o-proj): o_proj merges the
# attention chunks' partials as it loads its input, so that a layer has no
# merge phase.
#   checks   the Gemv kind (the merged o_proj) against the CPU reference on
#            four fixtures; whole models on the GPU against the CPU executor
#            with --merge-in-o-proj; heads of 256 through the tensor-core
#            chunks, teacher-forced over 2000 positions (real cache entries,
#            where call B of ../2026-12-05-harness had zeros)
#   timings  builds for 544 (SmolLM2, the 1B shape, Qwen3-0.6B, 64 tiny
#            layers) at 40 and 480, and the 1B shape built for 32800 at 512,
#            4096 and 32700: the merge tasks (d) against the merge in o_proj
#            (m), two rounds; then a trace of SmolLM2 with each at 480.
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
[ -d .gpu/h6 ] || tar -C .gpu -xJf .gpu/h6.tar.xz
B=.gpu/h6
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
check() { local t0=$SECONDS; local f=$W/f-$RANDOM$RANDOM.txt; timeout 200 $B/tests/gpu/"$@" > $f 2>&1
  echo "== $* rc=$? ($((SECONDS-t0)) s) $(grep -c FAIL $f) FAIL; $(tail -1 $f)"; grep FAIL $f | head -3; }
F=tests/fixtures
checks() {
  check mk-task-kind-check Gemv $F/llama3_ts17.onnx --merge-in-o-proj
  check mk-task-kind-check Gemv $F/qwen3_ts17.onnx --merge-in-o-proj --max-context=2048 --kv-cache=bf16
  check mk-task-kind-check Gemv $F/extra/mistral_window6_ts17.onnx --merge-in-o-proj
  check mk-task-kind-check Gemv $F/extra/gemma3_ts17.onnx --merge-in-o-proj
  check mk-gpu-check $F/llama3_ts17.onnx --max-context=64 --merge-in-o-proj
  check mk-gpu-check $F/qwen2_dynamo18.onnx --max-context=2048 --kv-cache=bf16 --merge-in-o-proj
  check mk-gpu-check $F/extra/mistral_window6_ts17.onnx --max-context=64 --merge-in-o-proj
  check mk-gpu-check $F/extra/gemma3_ts17.onnx --max-context=64 --merge-in-o-proj
}
checks > $W/checks.txt 2>&1 &
CHECKS=$!
python3 scripts/fused_module.py bench/configs/head-dim-256-tiny.json -o $W/hd.mlir
for s in llama-3.2-1b smollm2-135m qwen3-0.6b layer-cost-64x256; do python3 scripts/fused_module.py bench/configs/$s*.json -o $W/$s.mlir; done
{ for f in d m; do echo "$f llama-3.2-1b l 544"; echo "$f smollm2-135m s 544"; echo "$f qwen3-0.6b q 544"; echo "$f layer-cost-64x256 t 544"; echo "$f llama-3.2-1b L 32800"; echo "$f hd h 32768"; done; } |
  xargs -P 12 -L 1 bash -c 'F=""; [ $0 = m ] && F=--merge-in-o-proj; timeout 300 '$B'/compiler/tools/mkc compile '$W'/$1.mlir --emit=mk --random-weights --kv-cache=bf16 --max-context=$3 $F -o '$W'/$2-$0.mk 2>&1 | grep -E "error|megakernel" | sed "s/^/$2-$0: /"'
echo "builds done at $SECONDS s"
T=$(python3 -c "print(','.join(str((i*37)%1000+1) for i in range(2000)))")
for f in d m; do
  for d in gpu cpu; do timeout 200 $B/runtime/mkrun/mkrun $W/h-$f.mk --device $d --tokens $T --logits $W/h-$f-$d.npy > /dev/null || echo "hd256 $f $d rc=$?"; done
  python3 - $W/h-$f-gpu.npy $W/h-$f-cpu.npy $f <<'PY'
import sys, numpy as np
g, c = np.load(sys.argv[1]), np.load(sys.argv[2])
err = (np.abs(g - c).max(-1) / np.abs(c).max(-1)).max()
top2 = np.sort(c, -1)[:, -2:]; clear = (top2[:, 1] - top2[:, 0]) > 1e-3 * np.abs(c).max(-1)
agree = (g.argmax(-1) == c.argmax(-1))[clear].mean()
print(f"hd256 teacher-forced 2000 ({sys.argv[3]}): largest relative error {err:.2e}, clear argmax {agree:.4f} of {clear.sum()}", "PASS" if err < 1e-3 and agree == 1 else "FAIL")
PY
done
echo "hd256 done at $SECONDS s"
wait $CHECKS; cat $W/checks.txt
echo "checks done at $SECONDS s"
run() { echo "$1 position $2: $(timeout 60 $B/runtime/mkrun/mkrun $W/$1.mk --device gpu --start-position $2 --prompt-tokens 1 -n 33 2>&1 | grep -E '^generation|error')"; }
for r in 1 2; do for f in d m; do
  for m in s l q t; do for x in 40 480; do run $m-$f $x; done; done
  for x in 512 4096 32700; do run L-$f $x; done
done; done
echo "timings done at $SECONDS s"
for f in d m; do for m in s l; do
  timeout 60 $B/runtime/mkrun/mkrun $W/$m-$f.mk --device gpu --start-position 480 --prompt-tokens 7 -n 3 --trace $W/trace-$m-$f.json > /dev/null
  $B/compiler/tools/mkc inspect $W/$m-$f.mk --format=json -o $W/$m-$f.json
  python3 bench/trace_summary.py --skip-steps 2 $W/trace-$m-$f.json $W/$m-$f.json > $OUT/trace-$m-$f.txt 2>&1; head -1 $OUT/trace-$m-$f.txt
done; done
echo "all done at $SECONDS s"
