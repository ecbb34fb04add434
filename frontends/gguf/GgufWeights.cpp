#include "frontends/gguf/GgufWeights.h"

#include "frontends/gguf/GgufQuants.h"

#include <cstring>

namespace mk {

namespace {

std::string dimsText(const std::vector<uint64_t> &dims) {
  std::string text = "[";
  for (size_t i = 0; i < dims.size(); ++i)
    text += (i ? ", " : "") + std::to_string(dims[i]);
  return text + "]";
}

} // namespace

std::string readGgufTensor(const GgufFile &file, const std::string &name,
                           const std::vector<uint64_t> &dims, const std::string &what,
                           GgufMatrix &out) {
  const GgufTensor *tensor = file.findTensor(name);
  if (!tensor)
    return "tensor '" + name + "' (" + what + ") is missing";
  std::string where = "tensor '" + name + "' (info at offset " + std::to_string(tensor->infoOffset) + ")";
  if (tensor->dims != dims)
    return where + " has dims " + dimsText(tensor->dims) + " (ne[0] first), expected " +
           dimsText(dims) + " for " + what;
  if (!canDequantize(tensor->typeCode))
    return where + " is " + ggmlTypeName(tensor->typeCode) +
           ", which cannot be dequantized yet (F32, F16, BF16, Q4_0, Q4_1, Q8_0, Q4_K, Q6_K can)";
  out.values.assign(tensor->elements, 0.0f);
  out.typeCode = tensor->typeCode;
  return dequantizeTensor(*tensor, out.values);
}

void unpermuteRotaryRows(std::vector<float> &values, int64_t heads, int64_t headDim, int64_t cols) {
  std::vector<float> head(static_cast<size_t>(headDim * cols));
  int64_t half = headDim / 2;
  for (int64_t h = 0; h < heads; ++h) {
    float *base = values.data() + h * headDim * cols;
    for (int64_t i = 0; i < half; ++i)
      for (int64_t j = 0; j < 2; ++j)
        std::memcpy(head.data() + (j * half + i) * cols, base + (2 * i + j) * cols,
                    sizeof(float) * cols);
    std::memcpy(base, head.data(), sizeof(float) * head.size());
  }
}

} // namespace mk
