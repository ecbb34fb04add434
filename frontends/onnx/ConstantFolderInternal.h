// Shared by the constant folder's op families (ConstantFolder*.cpp): the
// per-node context that validates inputs and attributes, and the strided
// walk that every layout op and broadcast is built on.
#ifndef MKC_FRONTENDS_ONNX_CONSTANTFOLDERINTERNAL_H
#define MKC_FRONTENDS_ONNX_CONSTANTFOLDERINTERNAL_H

#include "frontends/onnx/Tensor.h"

#include "onnx.pb.h"

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace mk::onnx_import::folding {

// Folded tensors live in host memory during import; anything larger than
// this is a malformed shape, not a model we could hold.
inline constexpr int64_t kMaxElements = int64_t{1} << 31;

using Results = std::vector<Tensor>;

class FoldContext {
public:
  FoldContext(const onnx::NodeProto &node, const std::vector<const Tensor *> &inputs)
      : node_(node), inputs_(inputs) {}

  const onnx::NodeProto &node() const { return node_; }
  [[noreturn]] void fail(const std::string &reason) const;

  size_t numInputs() const { return inputs_.size(); }
  size_t numOutputs() const { return static_cast<size_t>(node_.output_size()); }
  void requireInputs(size_t min, size_t max) const;
  const Tensor &input(size_t index) const;
  const Tensor *optionalInput(size_t index) const;
  // The single element of a scalar (or one-element) input, as an integer.
  int64_t scalarIntInput(size_t index) const;

  const onnx::AttributeProto *attribute(std::string_view name) const;
  int64_t intAttribute(std::string_view name, int64_t fallback) const;
  std::optional<std::vector<int64_t>> intsAttribute(std::string_view name) const;
  // Lists such as axes and split moved from attributes to inputs in newer
  // opsets; either form is accepted, the input winning when present.
  std::optional<std::vector<int64_t>> intsFromInputOrAttribute(size_t index,
                                                               std::string_view name) const;

  // A possibly negative axis normalized against `rank`, or a failure.
  int64_t axis(int64_t axis, int64_t rank) const;
  // Normalized, distinct axes.
  std::vector<int64_t> axes(const std::vector<int64_t> &axes, int64_t rank) const;
  // The element count of `shape`, failing on negative dims or overflow.
  int64_t elementCount(const std::vector<int64_t> &shape) const;
  // A zero-filled tensor of that shape, after elementCount's checks.
  Tensor allocate(ElementKind kind, std::vector<int64_t> shape) const;
  std::vector<int64_t> broadcast(const std::vector<int64_t> &a,
                                 const std::vector<int64_t> &b) const;

private:
  const onnx::NodeProto &node_;
  const std::vector<const Tensor *> &inputs_;
};

using FoldFunction = Results (*)(const FoldContext &);
using FoldTable = std::unordered_map<std::string, FoldFunction>;

void addTypeFolders(FoldTable &table);
void addLayoutFolders(FoldTable &table);
void addIndexingFolders(FoldTable &table);
void addElementwiseFolders(FoldTable &table);
void addReductionFolders(FoldTable &table);

std::string shapeString(const std::vector<int64_t> &shape);
// Float wins over Int, Int over Bool: the kind mixed operands compute in.
ElementKind joinKinds(ElementKind a, ElementKind b);
// Float to integer truncates toward zero; NaN becomes 0 and out-of-range
// values saturate, so no input can reach undefined behaviour.
int64_t truncateToInt(double value);
// A fresh tensor of `kind`: values converted, provenance (origin) dropped.
Tensor convertKind(const Tensor &tensor, ElementKind kind);
// `tensor` itself when it already has `kind`, else a converted copy kept in
// `storage`; spares copying large weights that need no conversion.
const Tensor &asKind(const Tensor &tensor, ElementKind kind, Tensor &storage);

// Strides of `from` when read as the broadcast shape `to`: 0 on broadcast dims.
std::vector<int64_t> broadcastStrides(const std::vector<int64_t> &from,
                                      const std::vector<int64_t> &to);

// Visits every position of `shape` in row-major order, passing its flat index
// and, for each of N strided views, the matching source offset. Incremental,
// so that transposing or broadcasting a large weight costs no div/mod per
// element.
template <size_t N, typename Fn>
void walkStrided(const std::vector<int64_t> &shape,
                 const std::array<std::vector<int64_t>, N> &strides, std::array<int64_t, N> offsets,
                 Fn &&fn) {
  int64_t total = 1;
  for (int64_t d : shape)
    total *= d;
  if (total == 0)
    return;
  std::vector<int64_t> counter(shape.size(), 0);
  for (int64_t flat = 0; flat < total; ++flat) {
    fn(flat, offsets);
    for (size_t d = shape.size(); d-- > 0;) {
      ++counter[d];
      for (size_t k = 0; k < N; ++k)
        offsets[k] += strides[k][d];
      if (counter[d] < shape[d])
        break;
      for (size_t k = 0; k < N; ++k)
        offsets[k] -= strides[k][d] * shape[d];
      counter[d] = 0;
    }
  }
}

// Runs `fn(sourceData, destData)` on the element vectors that both tensors'
// (equal) kind uses, so that data movement is written once for every kind.
template <typename Fn> void withSameData(const Tensor &source, Tensor &dest, Fn &&fn) {
  if (source.kind == ElementKind::Float)
    fn(source.floats, dest.floats);
  else
    fn(source.ints, dest.ints);
}

// A copy of `source`'s elements read through a strided view onto `shape`.
Tensor gatherStrided(const FoldContext &context, const Tensor &source, std::vector<int64_t> shape,
                     const std::vector<int64_t> &strides, int64_t offset);

} // namespace mk::onnx_import::folding

#endif
