#!/usr/bin/env python3
"""Checks that the folders are the pipeline: each stage includes only itself
and the stages before it, and the core and the runtime stay free of MLIR,
LLVM, ONNX and every compiler-side header (the loader must build and run
without them). Prints every offending include and exits 1 when there is one.

  check_layering.py SOURCE_ROOT
"""
import os
import re
import sys

# Folder: the include prefixes it may use ("" = system headers in <>, always allowed).
ALLOWED = {
    "core": ["core/"],
    "runtime": ["core/", "runtime/", "mkrt.h", "manifest.pb.h"],
    "codegen": ["core/", "codegen/", "runtime/format/ScheduleBlob.h",
                "runtime/format/ControlBlock.h", "runtime/format/PrefillArgs.h", "llvm/"],
    "frontends": ["core/", "frontends/", "compiler/dialect/", "mlir/", "llvm/", "onnx"],
    "passes": ["core/", "passes/", "compiler/dialect/", "mlir/", "llvm/"],
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
SOURCES = (".h", ".cpp", ".cuh", ".c", ".inc")


def main():
    root = sys.argv[1]
    problems, files = [], 0
    for folder, prefixes in ALLOWED.items():
        for directory, _, names in os.walk(os.path.join(root, folder)):
            for name in names:
                if not name.endswith(SOURCES):
                    continue
                path = os.path.join(directory, name)
                files += 1
                with open(path, encoding="utf-8") as source:
                    for number, line in enumerate(source, 1):
                        match = INCLUDE.match(line)
                        if match and not any(match.group(1).startswith(p) for p in prefixes):
                            relative = os.path.relpath(path, root)
                            problems.append(f"{relative}:{number}: includes \"{match.group(1)}\", "
                                            f"which {folder}/ may not (allowed: {', '.join(prefixes)})")
    if files == 0:
        print(f"no sources found under {root}: the check would be void", file=sys.stderr)
        return 1
    for problem in problems:
        print(problem)
    print(f"{files} files checked, {len(problems)} includes out of their layer")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
