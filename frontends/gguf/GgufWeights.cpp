#include "frontends/gguf/GgufWeights.h"

#include "frontends/gguf/GgufQuants.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace mk {

namespace {

std::string dimsText(const std::vector<uint64_t> &dims) {
  std::string text = "[";
  for (size_t i = 0; i < dims.size(); ++i)
    text += (i ? ", " : "") + std::to_string(dims[i]);
  return text + "]";
}

// The source row that holds output row `row` once unpermuted (see
// unpermuteRotaryRows): within a head, output j * half + i is source 2i + j.
uint64_t sourceRow(uint64_t row, int64_t permuteHeads, int64_t headDim) {
  if (permuteHeads == 0)
    return row;
  uint64_t dim = static_cast<uint64_t>(headDim), half = dim / 2;
  uint64_t head = row / dim, within = row % dim;
  uint64_t j = within / half, i = within % half;
  return head * dim + 2 * i + j;
}

class GgufRowValues final : public WeightValues {
public:
  GgufRowValues(std::shared_ptr<const GgufFile> file, const GgufTensor &tensor,
                int64_t permuteHeads, int64_t headDim)
      : file(std::move(file)), tensor(tensor), permuteHeads(permuteHeads), headDim(headDim),
        rowLength(tensor.dims[0]), rowBytes(tensor.bytes / tensor.dims[1]) {}

  void read(uint64_t begin, uint64_t count, float *out) const override {
    std::vector<float> row(rowLength);
    for (uint64_t done = 0; done < count;) {
      uint64_t at = begin + done, r = at / rowLength, column = at % rowLength;
      uint64_t n = std::min(count - done, rowLength - column);
      std::span<const uint8_t> raw =
          tensor.data.subspan(sourceRow(r, permuteHeads, headDim) * rowBytes, rowBytes);
      if (std::string problem = dequantize(tensor.typeCode, raw, row); !problem.empty())
        throw std::runtime_error("tensor '" + std::string(tensor.name) + "': " + problem);
      std::copy_n(row.begin() + static_cast<ptrdiff_t>(column), n, out + done);
      done += n;
    }
  }

  void release() const override { file->releasePages(tensor.data); }

private:
  std::shared_ptr<const GgufFile> file;
  const GgufTensor &tensor;
  int64_t permuteHeads, headDim;
  uint64_t rowLength, rowBytes;
};

} // namespace

std::shared_ptr<const WeightValues> ggufRowValues(std::shared_ptr<const GgufFile> file,
                                                  const GgufTensor &tensor, int64_t permuteHeads,
                                                  int64_t headDim) {
  if (tensor.dims.size() != 2 || tensor.dims[0] == 0 || tensor.dims[1] == 0 ||
      !canDequantize(tensor.typeCode) || tensor.dims[0] % tensor.type->blockElements != 0 ||
      tensor.bytes % tensor.dims[1] != 0 ||
      (permuteHeads != 0 && (headDim < 2 || headDim % 2 != 0 ||
                             tensor.dims[1] != static_cast<uint64_t>(permuteHeads * headDim))))
    return nullptr;
  return std::make_shared<GgufRowValues>(std::move(file), tensor, permuteHeads, headDim);
}

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
           ", which cannot be dequantized yet (" + kDequantizedTypes + " can)";
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
