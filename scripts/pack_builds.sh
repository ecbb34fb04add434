#!/usr/bin/env bash
# Packs builds of mkc that differ by patches, for bench/ab_builds.py on a
# machine with a GPU, from the repository root of a checkout with its build
# (scripts/setup.sh) and no changes under the folders the patches touch:
#
#   scripts/pack_builds.sh OUT.tar.xz head= tpl=a.patch both=a.patch+b.patch
#
# NAME= is the checkout as it is. Each NAME's mkc lands in
# builds/NAME/compiler/tools/mkc, and mkrun in builds/NAME/runtime/mkrun/
# mkrun for the first NAME and for each NAME whose mkrun differs from the
# first's (a kernel patch leaves the runtime as it is; one that changes it
# keeps its own). The tree is restored after each build, and on any failure.
set -euo pipefail
out="$1"; shift
[[ $# -gt 0 ]] || { echo "usage: $0 OUT.tar.xz NAME=[PATCH[+PATCH...]] ..." >&2; exit 2; }
stage=$(mktemp -d)
applied=()
restore() {
  local i
  for ((i = ${#applied[@]} - 1; i >= 0; i--)); do git apply -R "${applied[$i]}"; done
  applied=()
}
trap 'restore; rm -rf "$stage"' EXIT
first=""
for spec in "$@"; do
  name="${spec%%=*}" patches="${spec#*=}"
  [[ "$spec" == *=* && -n "$name" ]] || { echo "$0: '$spec' is not NAME=PATCHES" >&2; exit 2; }
  if [[ -n "$patches" ]]; then
    IFS=+ read -ra list <<< "$patches"
    for patch in "${list[@]}"; do
      git apply "$patch" || { echo "$0: $patch does not apply for $name" >&2; exit 1; }
      applied+=("$patch")
    done
  fi
  (cd build && cmake . > /dev/null && ninja mkc mkrun > /dev/null)
  mkdir -p "$stage/builds/$name/compiler/tools"
  cp build/compiler/tools/mkc "$stage/builds/$name/compiler/tools/"
  # The first NAME's mkrun, and any other NAME's that differs from it (a
  # patch that changes the runtime: bench/ab_builds.py runs each build on
  # its own mkrun where it has one).
  if [[ -z "$first" ]] || ! cmp -s build/runtime/mkrun/mkrun "$stage/builds/$first/runtime/mkrun/mkrun"; then
    mkdir -p "$stage/builds/$name/runtime/mkrun"
    cp build/runtime/mkrun/mkrun "$stage/builds/$name/runtime/mkrun/"
  fi
  [[ -n "$first" ]] || first="$name"
  restore
done
(cd build && cmake . > /dev/null && ninja mkc mkrun > /dev/null)
tar -C "$stage" -cJf "$out" builds
ls -la "$out"
