#!/usr/bin/env bash
# Call 2: call1.sh's timings alone (call 1's checks passed, but the merge
# kind check on the Qwen2.5-1.5B shape at 4096 ran past its 300 s, so the
# timings never started): the same builds and runs, the branch (.gpu/p1)
# against main (.gpu/m1) on one machine.
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
for b in p1 m1; do [ -d .gpu/$b ] || tar -C .gpu -xJf .gpu/$b.tar.xz; done
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for s in llama-3.2-1b smollm2-135m qwen3-0.6b qwen2.5-1.5b; do python3 scripts/fused_module.py bench/configs/$s*.json -o $W/$s.mlir; done
{ for b in p1 m1; do echo "$b llama-3.2-1b l 544"; echo "$b smollm2-135m s 544"; echo "$b qwen3-0.6b q 544"; echo "$b qwen2.5-1.5b W 32800"; echo "$b llama-3.2-1b b 544 --batch=4"; done; } |
  xargs -P 10 -L 1 bash -c 'timeout 300 .gpu/$0/compiler/tools/mkc compile '$W'/$1.mlir --emit=mk --random-weights --kv-cache=bf16 --max-context=$3 ${4:-} -o '$W'/$2-$0.mk 2>&1 | grep -E "error"'
prompts() { local ps=""; for i in $(seq 1 $1); do ps="$ps --prompt-tokens $((i+6))"; done; echo $ps; }
runb() { timeout 30 .gpu/$1/runtime/mkrun/mkrun $W/b-$1.mk --device gpu --start-position 480 $(prompts $2) -n 33 \
  --step-times $W/st.csv "${@:3}" > $W/o.txt 2>&1 || { echo "FAILED $*"; tail -3 $W/o.txt; return; }
  python3 -c "import csv,statistics as s;r=[float(x['ms']) for x in csv.DictReader(open('$W/st.csv'))][1:];print('batch $* : median %.3f min %.3f'%(s.median(r),min(r)))"; }
for b in p1 m1; do runb $b 4; runb $b 4 --temperature 1 --top-p 0.9 --seed 5; done
run() { echo "$1 position $2 ${3:-}: $(timeout 60 .gpu/${1##*-}/runtime/mkrun/mkrun $W/$1.mk --device gpu --start-position $2 --prompt-tokens 1 -n 33 ${3:-} 2>&1 | grep -E '^generation|error')"; }
for b in p1 m1 p1 m1; do
  for x in 1 512 4096; do run W-$b $x; done
  for m in s l q; do for x in 40 480; do run $m-$b $x; done; done
  run l-$b 480 "--temperature 1 --top-p 0.9 --seed 7"
done
