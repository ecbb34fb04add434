// The tensors of a llama-family GGUF file as the mk IR wants them: checked
// against the shape the hyperparameters give, dequantized to f32 (GgufQuants.h)
// and, for attn_q/attn_k of `llama` and `mistral`, put back in HF's row order.
// No MLIR.
#ifndef MKC_FRONTENDS_GGUF_GGUFWEIGHTS_H
#define MKC_FRONTENDS_GGUF_GGUFWEIGHTS_H

#include "core/weights/WeightValues.h"
#include "frontends/gguf/GgufFile.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace mk {

struct GgufMatrix {
  // Row-major [dims[1]][dims[0]] for a 2-D tensor (ggml's ne[0] is the
  // fastest-varying dimension, so a linear weight [out, in] has ne = [in, out]),
  // the values as they are for a 1-D one.
  std::vector<float> values;
  uint32_t typeCode = 0; // the ggml type it was stored in
};

// Tensor `name` with ggml dims `dims` (ne[0] first), dequantized: "" or an
// error naming the tensor, where its info is in the file, and what `what`
// expected ("missing", other dims, a type that cannot be dequantized).
std::string readGgufTensor(const GgufFile &file, const std::string &name,
                           const std::vector<uint64_t> &dims, const std::string &what,
                           GgufMatrix &out);

// Undoes llama.cpp's convert_hf_to_gguf permutation of q/k rows: within each
// head of `headDim` rows, HF row j * headDim/2 + i was written at 2i + j (the
// pairs that rotate together made adjacent, ggml's non-NEOX rope). `values`
// is [heads * headDim][cols].
void unpermuteRotaryRows(std::vector<float> &values, int64_t heads, int64_t headDim, int64_t cols);

// A 2-D tensor's values read on demand, a row at a time, from the file's
// mapping: the [out, in] matrix readGgufTensor gives (unpermuted over
// `permuteHeads` heads of `headDim` rows when not 0), dequantized row by row
// (a row of a quantized tensor is whole blocks) and the rows' pages let go
// on release(). nullptr when the tensor is not 2-D or its rows are not whole
// blocks: it is then read up front. `tensor` is one of `file`'s, which the
// values keep alive.
std::shared_ptr<const WeightValues> ggufRowValues(std::shared_ptr<const GgufFile> file,
                                                  const GgufTensor &tensor, int64_t permuteHeads,
                                                  int64_t headDim);

} // namespace mk

#endif
