#!/usr/bin/env bash
# llama.cpp, the GGUF front end's oracle written by others, as pinned and
# hash-checked in scripts/requirements-llama-cpp.txt: llama-cpp-python's
# sdist (which vendors llama.cpp) under build/llama-cpp/. Two steps, each
# skipped when done already from the same requirements and options:
#
#   fetch  the sdist, unpacked in build/llama-cpp/sdist/ (its
#          vendor/llama.cpp/models/ holds the vocabulary test files that
#          tests/oracle/check_gguf_vocab.py reads);
#   build  llama.cpp's libraries built from it with CMake, only what the
#          Python package loads (ggml's CPU backend and libllama: no tools,
#          examples, tests, server, common or multimodal library), and
#          build/llama-cpp/python/: the package's Python code with those
#          libraries in its lib/, as its wheel lays it out, and diskcache,
#          which it imports. The tests put that folder on PYTHONPATH.
#
# Building llama-cpp-python's wheel instead (pip install) builds the
# multimodal and common libraries too, and nothing of it is kept between
# runs. Run after scripts/setup.sh (the venv, CMake, Ninja, g++).
#
#   install_llama_cpp.sh [fetch|build|all]    (default: all)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

PYTHON=.venv/bin/python
REQUIREMENTS=scripts/requirements-llama-cpp.txt
DIR=build/llama-cpp
SDIST="$DIR/sdist"
PACKAGE="$DIR/python"
# Only the libraries the Python package loads. The computation is left as
# llama.cpp's defaults choose it (this machine's instruction set, the
# llamafile and repacked kernels, OpenMP), as a user's build would run it.
CMAKE_OPTIONS=(
  -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=ON
  -DLLAMA_BUILD_COMMON=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_TOOLS=OFF
  -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_APP=OFF
  -DLLAMA_OPENSSL=OFF
  # Without -Wall and more: tens of thousands of lines of warnings otherwise.
  -DLLAMA_ALL_WARNINGS=OFF -DGGML_ALL_WARNINGS=OFF
  # One CPU backend, for this machine, linked in (not loaded at run time).
  -DGGML_NATIVE=ON -DGGML_BACKEND_DL=OFF -DGGML_CPU_ALL_VARIANTS=OFF
  # The libraries find each other beside themselves, in the package's lib/.
  -DCMAKE_BUILD_WITH_INSTALL_RPATH=ON '-DCMAKE_INSTALL_RPATH=$ORIGIN'
)
# What a step was done from: a change redoes it.
FETCHED_STAMP="$DIR/fetched.txt"
BUILT_STAMP="$DIR/built.txt"

fetch() {
  if [[ -d "$SDIST/vendor/llama.cpp" ]] && cmp -s "$REQUIREMENTS" "$FETCHED_STAMP"; then
    echo "llama.cpp's sdist is unpacked in $SDIST"
    return
  fi
  rm -rf -- "$DIR"
  mkdir -p "$DIR/download" "$SDIST"
  "$PYTHON" -m pip download --disable-pip-version-check --no-deps --require-hashes \
    --no-binary llama-cpp-python -d "$DIR/download" -r "$REQUIREMENTS"
  tar -xzf "$DIR"/download/llama_cpp_python-*.tar.gz -C "$SDIST" --strip-components=1
  cp "$REQUIREMENTS" "$FETCHED_STAMP"
}

stamp_of_build() {
  cat "$REQUIREMENTS"
  printf '%s\n' "${CMAKE_OPTIONS[@]}"
}

build() {
  if [[ -f "$PACKAGE/llama_cpp/lib/libllama.so" ]] && cmp -s <(stamp_of_build) "$BUILT_STAMP"; then
    echo "llama.cpp is built in $PACKAGE"
    return
  fi
  if ! cmp -s "$REQUIREMENTS" "$FETCHED_STAMP"; then
    echo "install_llama_cpp.sh: the sdist is not fetched; run '$0 fetch' first" >&2
    exit 1
  fi
  rm -rf -- "$DIR/build" "$PACKAGE" "$BUILT_STAMP"
  cmake -S "$SDIST/vendor/llama.cpp" -B "$DIR/build" -G Ninja "${CMAKE_OPTIONS[@]}"
  ninja -C "$DIR/build"
  mkdir -p "$PACKAGE"
  cp -r "$SDIST/llama_cpp" "$PACKAGE/"
  mkdir -p "$PACKAGE/llama_cpp/lib"
  cp -P "$DIR"/build/bin/lib*.so* "$PACKAGE/llama_cpp/lib/"
  "$PYTHON" -m pip install --disable-pip-version-check --no-deps --no-index \
    --target "$PACKAGE" "$DIR"/download/diskcache-*.whl
  PYTHONPATH="$PACKAGE" "$PYTHON" -c "import llama_cpp; print('llama-cpp-python', llama_cpp.__version__)"
  stamp_of_build > "$BUILT_STAMP"
}

case "${1:-all}" in
  fetch) fetch ;;
  build) build ;;
  all) fetch && build ;;
  *) echo "usage: $0 [fetch|build|all]" >&2; exit 1 ;;
esac
