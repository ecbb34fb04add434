# The sanitized build (scripts/test.sh's second stage, in build-asan/):
#   MKC_SANITIZE=ON  everything built with AddressSanitizer and UBSan, so that
#                    an out-of-bounds access, a use after free or undefined
#                    behaviour fails the test that reaches it;
#   MKC_FUZZ=ON      (clang only) the libFuzzer targets of tests/fuzz, with
#                    every library instrumented for the fuzzer's coverage.
option(MKC_SANITIZE "Build with -fsanitize=address,undefined" OFF)
option(MKC_FUZZ "Build the libFuzzer targets in tests/fuzz (needs clang)" OFF)

if(MKC_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=all
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()

if(MKC_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "MKC_FUZZ needs clang (libFuzzer): configure with -DCMAKE_CXX_COMPILER=clang++")
  endif()
  # Coverage counters in every library; only the fuzz targets link libFuzzer.
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()
