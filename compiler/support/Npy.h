// NumPy's .npy format for float32 arrays: how the interpreter's logits are
// handed to the Python oracle scripts, and how their reference logits come back.
#ifndef MKC_COMPILER_SUPPORT_NPY_H
#define MKC_COMPILER_SUPPORT_NPY_H

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mk {

struct NpyArray {
  std::vector<float> data; // C order
  std::vector<int64_t> shape;
};

// Writes a little-endian float32, C-order, NPY version 1.0 file. An empty
// shape writes a 0-d array holding one value.
llvm::Error writeNpy(const std::string &path, const std::vector<float> &data,
                     const std::vector<int64_t> &shape);

// Reads a float32 ('<f4') C-order NPY file of any format version.
llvm::Expected<NpyArray> readNpy(const std::string &path);

} // namespace mk

#endif
