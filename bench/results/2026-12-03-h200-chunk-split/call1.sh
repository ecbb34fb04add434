#!/usr/bin/env bash
# Three questions in one call (package .gpu/c1: mkc built three ways from
# d134424, the attention chunk's staged path as is, without its copies
# (MK_EXP_NO_COPIES: the ring commits empty groups) and without its
# arithmetic (MK_EXP_NO_COMPUTE: scores and o skipped after each block's
# barrier); the macros were temporary edits, not committed):
#  1. loads in flight per gemv lane 8 / 12 / 16, 1B shape built for 544;
#  2. where a long chunk's time goes: 1B shape built for 32800 at 32736 and
#     4096 with the three mkc binaries;
#  3. Qwen3-0.6B built for 32800 at 32736: bf16 caches, f32 caches, bf16
#     with --gemv-early-copy.
set -uo pipefail
mkdir -p $OUT; W=/tmp/w; mkdir -p $W
[ -d .gpu/c1 ] || tar -C .gpu -xJf .gpu/c1.tar.xz
N=.gpu/c1; MKC=$N/compiler/tools; MKRUN=$N/runtime/mkrun/mkrun
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
python3 scripts/fused_module.py bench/configs/llama-3.2-1b-shaped.json -o $W/l.mlir
python3 scripts/fused_module.py bench/configs/qwen3-0.6b-shaped.json -o $W/q.mlir
build() { # name mkc-binary mlir args...
  local name=$1 bin=$2 mlir=$3; shift 3
  timeout 150 $MKC/$bin compile $mlir --emit=mk --random-weights "$@" -o $W/$name.mk 2>&1 | grep -E "error|registers" | sed "s/^/$name: /"
}
export -f build; export MKC W
printf '%s\n' \
 "g8 mkc $W/l.mlir --kv-cache=bf16 --max-context=544 --gemv-loads=8" \
 "g12 mkc $W/l.mlir --kv-cache=bf16 --max-context=544 --gemv-loads=12" \
 "g16 mkc $W/l.mlir --kv-cache=bf16 --max-context=544 --gemv-loads=16" \
 "cNONE mkc-NONE $W/l.mlir --kv-cache=bf16 --max-context=32800" \
 "cNO_COPIES mkc-NO_COPIES $W/l.mlir --kv-cache=bf16 --max-context=32800" \
 "cNO_COMPUTE mkc-NO_COMPUTE $W/l.mlir --kv-cache=bf16 --max-context=32800" \
 "qbf16 mkc $W/q.mlir --kv-cache=bf16 --max-context=32800" \
 "qf32 mkc $W/q.mlir --kv-cache=f32 --max-context=32800" \
 "qearly mkc $W/q.mlir --kv-cache=bf16 --max-context=32800 --gemv-early-copy" \
 | xargs -P 5 -I{} bash -c 'build {}'
ls -la $W/*.mk | awk '{print $5, $9}'
for n in 8 12 16; do timeout 60 $MKRUN $W/g$n.mk --device gpu --start-position 470 --tokens 1,7,42,3 --logits $W/g$n.npy > /dev/null || echo "FAILED $n"; done
cmp $W/g8.npy $W/g12.npy && cmp $W/g8.npy $W/g16.npy && echo "logits identical at 8, 12, 16"
timeout 60 $MKRUN $W/cNONE.mk --device gpu --start-position 32700 --tokens 1,7,42,3 --logits $W/c.npy > /dev/null && echo "cNONE ran at 32700"
run() { echo "$1 position $2: $(timeout 60 $MKRUN $W/$1.mk --device gpu --start-position $2 --prompt-tokens 1 -n 33 2>&1 | grep -E '^generation|error')"; }
for r in 1 2; do
  for p in 1 480; do for n in 8 12 16; do run g$n $p; done; done
  for p in 4064 32700; do for v in NONE NO_COPIES NO_COMPUTE; do run c$v $p; done; done
  for p in 1 32700; do for v in bf16 f32 early; do run q$v $p; done; done
done
