// NumPy's .npy format for float32 arrays: how logits are handed to the
// Python oracle scripts and how their reference logits come back. Plain C++
// (no LLVM), so that both mkc and the runtime's mkrun use this one writer.
#ifndef MKC_CORE_SUPPORT_NPY_H
#define MKC_CORE_SUPPORT_NPY_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mk {

struct NpyArray {
  std::vector<float> data; // C order
  std::vector<int64_t> shape;
};

// Writes a little-endian float32, C-order, NPY version 1.0 file. An empty
// shape writes a 0-d array holding one value. Returns "" or why it failed,
// naming the path.
std::string writeNpy(const std::string &path, const std::vector<float> &data,
                     const std::vector<int64_t> &shape);

// Reads a float32 ('<f4') C-order NPY file of any format version; on failure
// returns nothing and sets `error` (naming the path).
std::optional<NpyArray> readNpy(const std::string &path, std::string &error);

} // namespace mk

#endif
