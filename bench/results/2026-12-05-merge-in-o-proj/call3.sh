#!/usr/bin/env bash
# Call 3, NOT RUN (the device time ran out): binaries .gpu/h8, main with
# wide-copies.patch (this folder) applied: call 2's merge in o_proj with
# the partials copied in 16-byte pieces where every head's start and length
# allow (all of SmolLM2's at 40 and 480), 8-byte ones else: is the copy
# what holds o_proj at 7.3 us? SmolLM2 built for 544, merge tasks (d)
# against the merge in o_proj (m), and the checks of the merged Gemv.
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
[ -d .gpu/h8 ] || tar -C .gpu -xJf .gpu/h8.tar.xz
B=.gpu/h8
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
F=tests/fixtures
( timeout 60 $B/tests/gpu/mk-task-kind-check Gemv $F/llama3_ts17.onnx --merge-in-o-proj | tail -1
  timeout 60 $B/tests/gpu/mk-gpu-check $F/llama3_ts17.onnx --max-context=64 --merge-in-o-proj | grep -c FAIL ) > $W/checks.txt 2>&1 &
python3 scripts/fused_module.py bench/configs/smollm2-135m-shaped.json -o $W/s.mlir
for f in d m; do F2=""; [ $f = m ] && F2=--merge-in-o-proj; timeout 60 $B/compiler/tools/mkc compile $W/s.mlir --emit=mk --random-weights --kv-cache=bf16 --max-context=544 $F2 -o $W/s-$f.mk 2>&1 | grep -E "error|megakernel" & done; wait
cat $W/checks.txt
run() { echo "$1 position $2: $(timeout 30 $B/runtime/mkrun/mkrun $W/$1.mk --device gpu --start-position $2 --prompt-tokens 1 -n 33 2>&1 | grep -E '^generation|error')"; }
for f in d m d m; do for x in 40 480; do run s-$f $x; done; done
timeout 30 $B/runtime/mkrun/mkrun $W/s-m.mk --device gpu --start-position 480 --prompt-tokens 7 -n 3 --trace $W/t.json > /dev/null
$B/compiler/tools/mkc inspect $W/s-m.mk --format=json -o $W/s-m.json
python3 bench/trace_summary.py --skip-steps 2 $W/t.json $W/s-m.json > $OUT/trace-s-m.txt 2>&1; grep -E "layer15\." $OUT/trace-s-m.txt
echo "all done at $SECONDS s"
