# lit configuration of mkc's tests of the IR and the tools. It is loaded by the
# lit.site.cfg.py that CMake writes into the build folder (which sets the
# paths used below), so run lit on that folder: `lit -v build/tests/lit`.
import os
import re
import shutil
import subprocess

import lit.formats

config.name = "mkc"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs", "lit.cfg.py", "lit.site.cfg.py.in"]
config.test_source_root = os.path.dirname(os.path.abspath(__file__))
config.test_exec_root = os.path.join(config.mkc_binary_dir, "tests", "lit")

# On PATH as well, so that a tool one RUN line starts finds its neighbours.
config.environment["PATH"] = os.pathsep.join(
    [config.mkc_tools_dir, config.llvm_tools_dir, config.environment["PATH"]])


def tool(name, path):
    # Substitutions are regular expressions; match whole command words only, so
    # that `not` leaves `--implicit-check-not` alone and `mk-opt` leaves paths
    # that merely end in it.
    return (r"(?<![\w.\-/])" + re.escape(name) + r"(?![\w.\-/])", path)


mkc_root = config.mkc_source_dir
config.substitutions += [
    ("%python", config.python_executable),
    ("%fixtures", os.path.join(mkc_root, "tests", "fixtures")),
    ("%scripts", os.path.join(mkc_root, "scripts")),
    ("%testtools", os.path.join(mkc_root, "tests", "tools")),
    tool("mk-opt", os.path.join(config.mkc_tools_dir, "mk-opt")),
    tool("mkc", os.path.join(config.mkc_tools_dir, "mkc")),
    tool("mkrun", os.path.join(config.mkc_runtime_tools_dir, "mkrun")),
    tool("mkrt-generate", os.path.join(config.mkc_examples_dir, "mkrt-generate")),
    tool("FileCheck", os.path.join(config.llvm_tools_dir, "FileCheck")),
    tool("not", os.path.join(config.llvm_tools_dir, "not")),
]


def has_gpu():
    # A GPU the driver sees; tests of `mkrun --device gpu` refusing to run
    # only hold without one (UNSUPPORTED: gpu), the others need one.
    smi = shutil.which("nvidia-smi")
    if not smi:
        return False
    try:
        listing = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return False
    return listing.returncode == 0 and "GPU" in listing.stdout


if has_gpu():
    config.available_features.add("gpu")

# The tools are built with AddressSanitizer (build-asan/): tests/tools/
# expect_exit.py then caps allocations through ASan instead of the address
# space, which ASan's shadow memory fills.
if config.mkc_sanitized.upper() in ("ON", "1", "TRUE", "YES"):
    config.environment["MKC_SANITIZED"] = "1"
