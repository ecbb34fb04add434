// The state of one import: the symbolic value of every ONNX value seen so
// far, the mk function being built, and the weights registered. The rules
// (LayoutRules.cpp, ArithmeticRules.cpp, AttentionRules.cpp) each handle a
// family of ONNX ops on symbolic inputs.
#ifndef MKC_FRONTENDS_ONNX_GRAPHIMPORTER_H
#define MKC_FRONTENDS_ONNX_GRAPHIMPORTER_H

#include "compiler/dialect/MkDialect.h"
#include "core/weights/WeightTable.h"
#include "frontends/onnx/OnnxLoader.h"
#include "frontends/onnx/SymbolicValue.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include <functional>
#include <optional>
#include <map>
#include <tuple>
#include <string>
#include <vector>

namespace mk::onnx_import {

class GraphImporter;
using Inputs = std::vector<Symbolic>; // nullptr for an omitted optional input
using Rule = std::function<std::vector<Symbolic>(GraphImporter &, const onnx::NodeProto &,
                                                 const Inputs &)>;

// Rules by ONNX op type, for nodes with at least one symbolic input.
void addLayoutRules(std::map<std::string, Rule> &rules);
void addArithmeticRules(std::map<std::string, Rule> &rules);
void addAttentionRules(std::map<std::string, Rule> &rules);
void addGeluRules(std::map<std::string, Rule> &rules);
// GELU's pieces combined by Add and Mul (GeluRules.cpp), or nullptr when
// `a` and `b` are none of them. `b` is the other operand.
Symbolic addGeluPart(GraphImporter &importer, const onnx::NodeProto &node, const Symbolic &a,
                     const Symbolic &b);
Symbolic mulGeluPart(GraphImporter &importer, const onnx::NodeProto &node, const Symbolic &a,
                     const Symbolic &b);
// Whether `value` is one of GELU's pieces (a multiplication keeps a scaled
// activation beside it as it is).
bool isGeluPart(const Symbolic &value);

// Rotary embedding of a heads x head_dim activation with rotary_dim / 2
// frequencies (ArithmeticRules.cpp).
Symbolic emitRotary(GraphImporter &importer, const onnx::NodeProto &node, mlir::Value input,
                    std::vector<int64_t> shape, int64_t headDim, const std::vector<float> &inv,
                    bool interleaved);
// Frequencies of cos/sin tables indexed by position (ArithmeticRules.cpp).
std::vector<float> freqsFromTables(const onnx::NodeProto &node, const Tensor &cos,
                                   const Tensor &sin);

// The sliding window an attention mask of a decode step leaves, over the
// last axis of `mask` (the cached positions and this step's): 0 when it
// hides nothing, W when it hides all but the last W positions in every row;
// any other mask is refused (AttentionRules.cpp).
int64_t slidingWindowOf(const onnx::NodeProto &node, const Tensor &mask);

// MatMul on attention's operands: q.k^T and softmax(..).v (AttentionRules.cpp).
std::vector<Symbolic> attentionMatMul(GraphImporter &importer, const onnx::NodeProto &node,
                                      const Inputs &inputs);

struct AttentionRecord {
  mlir::Value key, value; // this step's entries written to the cache
};

class GraphImporter {
public:
  GraphImporter(mlir::MLIRContext &context, LoadedModel &model, WeightTable &weights,
                int64_t pastLength);

  // Runs the whole graph; throws ImportError.
  mlir::OwningOpRef<mlir::ModuleOp> run();

  // --- for the rules ---
  mlir::OpBuilder builder;
  mlir::Location loc;
  mlir::Value positionArgument() { return function.getArgument(1); }
  mlir::Value cacheArgument(int64_t layer);
  std::map<int64_t, AttentionRecord> attentionByLayer;

  Symbolic constant(Tensor tensor) const;
  Symbolic activation(mlir::Value value, std::vector<int64_t> shape) const;
  static Symbolic with(const SymbolicValue &base, std::vector<int64_t> shape);
  mlir::RankedTensorType vectorType(int64_t length);
  // The mk.weight holding `tensor` as [rows, cols] (transposed first when
  // asked); the same initializer used twice gets one weight.
  mlir::FlatSymbolRefAttr weightFor(const Tensor &tensor, bool transpose, const std::string &hint);
  // The weight `symbol` names with every value times `factor`, as a weight
  // of its own (PlainActivations.cpp).
  mlir::FlatSymbolRefAttr scaledWeight(mlir::FlatSymbolRefAttr symbol, double factor);
  // Rows [begin, end) of the weight `symbol` names, as a weight of its own.
  mlir::FlatSymbolRefAttr weightRows(mlir::FlatSymbolRefAttr symbol, int64_t begin, int64_t end);
  // `value` as a plain activation, for a rule that needs one
  // (PlainActivations.cpp): a scaled activation gets its scale folded into
  // the op that produced it (an embedding, linear layer or RMSNorm rebuilt
  // with scaled weights); a slice of a vector becomes a linear layer of the
  // rows it takes when a linear layer made the vector, else mk.slice. Other kinds
  // come back as they are, for the rule's own check. The same value asked
  // for twice gets the same mk value. `node` names the consumer in errors;
  // nullptr is the graph output 'logits'.
  Symbolic asActivation(const Symbolic &value, const onnx::NodeProto *node);

private:
  void checkOpsAreKnown() const;
  void declareInputs();
  void importNode(const onnx::NodeProto &node);
  void checkOutputs();
  const Symbolic &lookup(const std::string &name, const onnx::NodeProto &node) const;

  LoadedModel &model;
  WeightTable &weights;
  int64_t pastLength;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  mlir::func::FuncOp function;
  std::map<std::string, Symbolic> values;
  std::map<std::string, Rule> rules;
  std::map<std::string, mlir::FlatSymbolRefAttr> weightsByOrigin;
  std::map<uint64_t, std::vector<std::pair<std::string, mlir::FlatSymbolRefAttr>>>
      weightsByContent;
  std::vector<int64_t> cacheLayers;
  // asActivation's results, by (mk value, kind, scale, slice bounds).
  std::map<std::tuple<const void *, int, double, int64_t, int64_t>, mlir::Value> plainValues;
};

// Small helpers shared by the rules.
bool isKind(const Symbolic &value, SymbolicKind kind);
const Tensor &constantOf(const Symbolic &value);
// The scalar value of a constant with one element.
std::optional<double> scalarOf(const Symbolic &value);
// Dims of size 1 removed.
std::vector<int64_t> nonUnitDims(const std::vector<int64_t> &shape);
int64_t intAttribute(const onnx::NodeProto &node, const std::string &name, int64_t fallback);
float floatAttribute(const onnx::NodeProto &node, const std::string &name, float fallback);
std::vector<int64_t> intsAttribute(const onnx::NodeProto &node, const std::string &name);
bool hasAttribute(const onnx::NodeProto &node, const std::string &name);
std::string shapeText(const std::vector<int64_t> &shape);

} // namespace mk::onnx_import

#endif
