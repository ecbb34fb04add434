// Writes the logits mkrun returns as a NumPy .npy file, the format `mkc eval`
// writes and scripts/compare_logits.py reads. The runtime's own writer:
// compiler/support's needs LLVM, which mkrun must not link.
#ifndef MKC_RUNTIME_MKRUN_NPYWRITER_H
#define MKC_RUNTIME_MKRUN_NPYWRITER_H

#include <cstdint>
#include <string>
#include <vector>

namespace mk {

// A little-endian float32, C-order, NPY 1.0 file of shape [rows, cols].
// Returns "" or why it failed.
std::string writeNpyMatrix(const std::string &path, const std::vector<float> &data, int64_t rows,
                           int64_t cols);

} // namespace mk

#endif
