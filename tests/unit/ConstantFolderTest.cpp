// The ONNX importer's constant folder, checked op by op against values
// worked out by hand from the ONNX operator specs.
#include "frontends/onnx/ConstantFolder.h"
#include "frontends/onnx/ImportError.h"

#include "onnx.pb.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace mk::onnx_import {
namespace {

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();

onnx::NodeProto makeNode(const std::string &opType, const std::string &name = "n",
                         int outputs = 1) {
  onnx::NodeProto node;
  node.set_op_type(opType);
  node.set_name(name);
  for (int i = 0; i < outputs; ++i)
    node.add_output(name + "_out" + std::to_string(i));
  return node;
}

void setInt(onnx::NodeProto &node, const std::string &name, int64_t value) {
  onnx::AttributeProto *attribute = node.add_attribute();
  attribute->set_name(name);
  attribute->set_type(onnx::AttributeProto::INT);
  attribute->set_i(value);
}

void setInts(onnx::NodeProto &node, const std::string &name, const std::vector<int64_t> &values) {
  onnx::AttributeProto *attribute = node.add_attribute();
  attribute->set_name(name);
  attribute->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values)
    attribute->add_ints(v);
}

Tensor floats(std::vector<int64_t> shape, std::vector<float> values) {
  Tensor t;
  t.shape = std::move(shape);
  t.floats = std::move(values);
  return t;
}

Tensor ints(std::vector<int64_t> shape, std::vector<int64_t> values) {
  Tensor t;
  t.kind = ElementKind::Int;
  t.shape = std::move(shape);
  t.ints = std::move(values);
  return t;
}

Tensor bools(std::vector<int64_t> shape, std::vector<int64_t> values) {
  Tensor t = ints(std::move(shape), std::move(values));
  t.kind = ElementKind::Bool;
  return t;
}

Tensor fold(const onnx::NodeProto &node, const std::vector<const Tensor *> &inputs) {
  std::vector<Tensor> results = foldConstantNode(node, inputs);
  EXPECT_EQ(results.size(), 1u);
  return results.at(0);
}

// The ImportError message `fn` throws, or a marker when it throws none.
template <typename Fn> std::string errorOf(Fn &&fn) {
  try {
    fn();
  } catch (const ImportError &error) {
    return error.what();
  }
  return "<no error>";
}

using Shape = std::vector<int64_t>;
using Floats = std::vector<float>;
using Ints = std::vector<int64_t>;

TEST(ConstantFolder, AddBroadcastsRowAgainstMatrix) {
  Tensor a = floats({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor b = floats({3}, {10, 20, 30});
  Tensor out = fold(makeNode("Add"), {&a, &b});
  EXPECT_EQ(out.kind, ElementKind::Float);
  EXPECT_EQ(out.shape, (Shape{2, 3}));
  EXPECT_EQ(out.floats, (Floats{11, 22, 33, 14, 25, 36}));
}

TEST(ConstantFolder, MulBroadcastsColumnAgainstRow) {
  Tensor a = ints({2, 1}, {2, 3});
  Tensor b = ints({1, 3}, {1, 10, 100});
  Tensor out = fold(makeNode("Mul"), {&a, &b});
  EXPECT_EQ(out.kind, ElementKind::Int);
  EXPECT_EQ(out.shape, (Shape{2, 3}));
  EXPECT_EQ(out.ints, (Ints{2, 20, 200, 3, 30, 300}));
}

TEST(ConstantFolder, MixedKindsComputeInFloat) {
  Tensor a = ints({2}, {1, 2});
  Tensor b = Tensor::floatScalar(0.5f);
  Tensor out = fold(makeNode("Sub"), {&a, &b});
  EXPECT_EQ(out.kind, ElementKind::Float);
  EXPECT_EQ(out.floats, (Floats{0.5f, 1.5f}));
}

TEST(ConstantFolder, IntegerDivisionTruncatesAndModFollowsDivisorSign) {
  Tensor a = ints({4}, {7, -7, 7, -7});
  Tensor b = ints({4}, {2, 2, -2, -2});
  EXPECT_EQ(fold(makeNode("Div"), {&a, &b}).ints, (Ints{3, -3, -3, 3}));
  EXPECT_EQ(fold(makeNode("Mod"), {&a, &b}).ints, (Ints{1, 1, -1, -1}));
  onnx::NodeProto cMod = makeNode("Mod");
  setInt(cMod, "fmod", 1);
  EXPECT_EQ(fold(cMod, {&a, &b}).ints, (Ints{1, -1, 1, -1}));
}

TEST(ConstantFolder, IntegerDivisionByZeroFails) {
  Tensor a = ints({1}, {1}), zero = ints({1}, {0});
  EXPECT_EQ(errorOf([&] {
              fold(makeNode("Div", "d"), {&a, &zero});
            }),
            "ONNX node 'd' (Div): integer division by zero");
}

TEST(ConstantFolder, ComparisonsAndLogicGiveBool) {
  Tensor a = ints({3}, {1, 2, 3});
  Tensor b = Tensor::floatScalar(2.0f);
  Tensor less = fold(makeNode("Less"), {&a, &b});
  EXPECT_EQ(less.kind, ElementKind::Bool);
  EXPECT_EQ(less.ints, (Ints{1, 0, 0}));
  Tensor equal = fold(makeNode("Equal"), {&a, &b});
  EXPECT_EQ(equal.ints, (Ints{0, 1, 0}));
  Tensor notLess = fold(makeNode("Not"), {&less});
  EXPECT_EQ(notLess.ints, (Ints{0, 1, 1}));
  Tensor both = fold(makeNode("And"), {&less, &notLess});
  EXPECT_EQ(both.ints, (Ints{0, 0, 0}));
  Tensor either = fold(makeNode("Or"), {&less, &equal});
  EXPECT_EQ(either.ints, (Ints{1, 1, 0}));
}

TEST(ConstantFolder, WhereBroadcastsAllThreeInputs) {
  // A causal mask: condition [2, 2], x a scalar, y a row.
  Tensor condition = bools({2, 2}, {1, 0, 1, 1});
  Tensor x = Tensor::floatScalar(0.0f);
  Tensor y = floats({1, 2}, {-5, -6});
  Tensor out = fold(makeNode("Where"), {&condition, &x, &y});
  EXPECT_EQ(out.shape, (Shape{2, 2}));
  EXPECT_EQ(out.floats, (Floats{0, -6, 0, 0}));
}

TEST(ConstantFolder, SliceClampsHugeEnds) {
  Tensor data = ints({6}, {0, 1, 2, 3, 4, 5});
  Tensor starts = Tensor::intVector({2}), ends = Tensor::intVector({kInt64Max});
  Tensor out = fold(makeNode("Slice"), {&data, &starts, &ends});
  EXPECT_EQ(out.shape, (Shape{4}));
  EXPECT_EQ(out.ints, (Ints{2, 3, 4, 5}));
}

TEST(ConstantFolder, SliceWithNegativeStepReversesToTheFront) {
  Tensor data = ints({6}, {0, 1, 2, 3, 4, 5});
  Tensor starts = Tensor::intVector({-1}), ends = Tensor::intVector({kInt64Min});
  Tensor axes = Tensor::intVector({0}), steps = Tensor::intVector({-2});
  Tensor out = fold(makeNode("Slice"), {&data, &starts, &ends, &axes, &steps});
  EXPECT_EQ(out.ints, (Ints{5, 3, 1}));

  Tensor full = Tensor::intVector({-1});
  Tensor reversed = fold(makeNode("Slice"), {&data, &full, &ends, &axes, &full});
  EXPECT_EQ(reversed.ints, (Ints{5, 4, 3, 2, 1, 0}));
}

// onnxruntime, the oracle, reads INT64_MAX as "to the far end" for a
// negative step too (numpy's a[::-1]), where plain clamping would give [].
TEST(ConstantFolder, SliceToInt64MaxWithNegativeStepReverses) {
  Tensor data = ints({4}, {0, 1, 2, 3});
  Tensor starts = Tensor::intVector({kInt64Max}), ends = Tensor::intVector({kInt64Max});
  Tensor axes = Tensor::intVector({0}), steps = Tensor::intVector({-1});
  EXPECT_EQ(fold(makeNode("Slice"), {&data, &starts, &ends, &axes, &steps}).ints,
            (Ints{3, 2, 1, 0}));
}

TEST(ConstantFolder, SliceAlongNegativeAxisOfMatrix) {
  Tensor data = ints({2, 4}, {0, 1, 2, 3, 4, 5, 6, 7});
  Tensor starts = Tensor::intVector({1}), ends = Tensor::intVector({-1});
  Tensor axes = Tensor::intVector({-1});
  Tensor out = fold(makeNode("Slice"), {&data, &starts, &ends, &axes, nullptr});
  EXPECT_EQ(out.shape, (Shape{2, 2}));
  EXPECT_EQ(out.ints, (Ints{1, 2, 5, 6}));
}

TEST(ConstantFolder, SliceOutOfRangeIsEmpty) {
  Tensor data = ints({3}, {0, 1, 2});
  Tensor starts = Tensor::intVector({5}), ends = Tensor::intVector({10});
  Tensor out = fold(makeNode("Slice"), {&data, &starts, &ends});
  EXPECT_EQ(out.shape, (Shape{0}));
  EXPECT_TRUE(out.ints.empty());
}

TEST(ConstantFolder, ReshapeCopiesZeroAndInfersMinusOne) {
  Tensor data = Tensor::filled(ElementKind::Float, {2, 3, 4}, 1.0);
  Tensor shape = Tensor::intVector({0, -1});
  Tensor out = fold(makeNode("Reshape"), {&data, &shape});
  EXPECT_EQ(out.shape, (Shape{2, 12}));
  EXPECT_EQ(out.floats.size(), 24u);

  Tensor empty = Tensor::filled(ElementKind::Float, {0, 3}, 0.0);
  Tensor literal = Tensor::intVector({3, 0});
  onnx::NodeProto allowZero = makeNode("Reshape");
  setInt(allowZero, "allowzero", 1);
  EXPECT_EQ(fold(allowZero, {&empty, &literal}).shape, (Shape{3, 0}));
}

TEST(ConstantFolder, ReshapeToWrongCountFails) {
  Tensor data = Tensor::filled(ElementKind::Float, {2, 3}, 1.0);
  Tensor shape = Tensor::intVector({4, -1});
  EXPECT_EQ(errorOf([&] {
              fold(makeNode("Reshape", "r"), {&data, &shape});
            }),
            "ONNX node 'r' (Reshape): cannot infer the -1 of shape [4, -1] for 6 elements");
}

TEST(ConstantFolder, UnsqueezeAndSqueezeTakeAxesEitherWay) {
  Tensor data = ints({3}, {1, 2, 3});
  onnx::NodeProto attributeForm = makeNode("Unsqueeze");
  setInts(attributeForm, "axes", {0, -1});
  Tensor unsqueezed = fold(attributeForm, {&data});
  EXPECT_EQ(unsqueezed.shape, (Shape{1, 3, 1}));
  Tensor axes = Tensor::intVector({2});
  EXPECT_EQ(fold(makeNode("Squeeze"), {&unsqueezed, &axes}).shape, (Shape{1, 3}));
  EXPECT_EQ(fold(makeNode("Squeeze"), {&unsqueezed}).shape, (Shape{3}));
}

TEST(ConstantFolder, GatherTakesNegativeIndices) {
  Tensor data = ints({3, 2}, {0, 1, 10, 11, 20, 21});
  Tensor indices = ints({2}, {-1, 0});
  Tensor rows = fold(makeNode("Gather"), {&data, &indices});
  EXPECT_EQ(rows.shape, (Shape{2, 2}));
  EXPECT_EQ(rows.ints, (Ints{20, 21, 0, 1}));

  onnx::NodeProto columns = makeNode("Gather");
  setInt(columns, "axis", 1);
  Tensor scalar = ints({}, {-1});
  Tensor last = fold(columns, {&data, &scalar});
  EXPECT_EQ(last.shape, (Shape{3}));
  EXPECT_EQ(last.ints, (Ints{1, 11, 21}));
}

TEST(ConstantFolder, GatherOutOfRangeFailsCleanly) {
  Tensor data = ints({3}, {0, 1, 2});
  Tensor indices = ints({2}, {0, 3});
  EXPECT_EQ(errorOf([&] {
              fold(makeNode("Gather", "g"), {&data, &indices});
            }),
            "ONNX node 'g' (Gather): index 3 is out of range for axis 0 of size 3");
  Tensor tooNegative = ints({1}, {-4});
  EXPECT_NE(errorOf([&] { fold(makeNode("Gather"), {&data, &tooNegative}); }), "<no error>");
}

TEST(ConstantFolder, GatherNDPicksElementsAndSlices) {
  Tensor data = ints({2, 2}, {0, 1, 2, 3});
  Tensor pairs = ints({2, 2}, {0, 0, 1, 1});
  EXPECT_EQ(fold(makeNode("GatherND"), {&data, &pairs}).ints, (Ints{0, 3}));
  Tensor rows = ints({2, 1}, {1, 0});
  Tensor sliced = fold(makeNode("GatherND"), {&data, &rows});
  EXPECT_EQ(sliced.shape, (Shape{2, 2}));
  EXPECT_EQ(sliced.ints, (Ints{2, 3, 0, 1}));
}

TEST(ConstantFolder, GatherNDWithBatchDims) {
  // The spec's example 5: data [2, 2, 2], indices [[1], [0]], batch_dims 1.
  Tensor data = ints({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  Tensor indices = ints({2, 1}, {1, 0});
  onnx::NodeProto node = makeNode("GatherND");
  setInt(node, "batch_dims", 1);
  Tensor out = fold(node, {&data, &indices});
  EXPECT_EQ(out.shape, (Shape{2, 2}));
  EXPECT_EQ(out.ints, (Ints{2, 3, 4, 5}));
}

TEST(ConstantFolder, GatherElementsAlongAxisOne) {
  Tensor data = ints({2, 2}, {1, 2, 3, 4});
  Tensor indices = ints({2, 2}, {0, 0, 1, 0});
  onnx::NodeProto node = makeNode("GatherElements");
  setInt(node, "axis", 1);
  EXPECT_EQ(fold(node, {&data, &indices}).ints, (Ints{1, 1, 4, 3}));
}

TEST(ConstantFolder, ScatterNDReplacesSlices) {
  Tensor data = ints({4}, {1, 2, 3, 4});
  Tensor indices = ints({2, 1}, {3, -4});
  Tensor updates = ints({2}, {40, 10});
  EXPECT_EQ(fold(makeNode("ScatterND"), {&data, &indices, &updates}).ints, (Ints{10, 2, 3, 40}));
}

TEST(ConstantFolder, TriluKeepsUpperOrLowerTriangle) {
  Tensor data = ints({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  EXPECT_EQ(fold(makeNode("Trilu"), {&data}).ints, (Ints{1, 2, 3, 0, 5, 6, 0, 0, 9}));
  onnx::NodeProto lower = makeNode("Trilu");
  setInt(lower, "upper", 0);
  Tensor k = ints({}, {-1});
  EXPECT_EQ(fold(lower, {&data, &k}).ints, (Ints{0, 0, 0, 4, 0, 0, 7, 8, 0}));
  Tensor one = ints({}, {1});
  EXPECT_EQ(fold(makeNode("Trilu"), {&data, &one}).ints, (Ints{0, 2, 3, 0, 0, 6, 0, 0, 0}));
}

TEST(ConstantFolder, CumSumExclusiveAndReverse) {
  Tensor data = floats({4}, {1, 2, 3, 4});
  Tensor axis = ints({}, {0});
  EXPECT_EQ(fold(makeNode("CumSum"), {&data, &axis}).floats, (Floats{1, 3, 6, 10}));
  onnx::NodeProto exclusive = makeNode("CumSum");
  setInt(exclusive, "exclusive", 1);
  EXPECT_EQ(fold(exclusive, {&data, &axis}).floats, (Floats{0, 1, 3, 6}));
  onnx::NodeProto both = makeNode("CumSum");
  setInt(both, "exclusive", 1);
  setInt(both, "reverse", 1);
  EXPECT_EQ(fold(both, {&data, &axis}).floats, (Floats{9, 7, 4, 0}));
}

TEST(ConstantFolder, ReduceMeanKeepsOrDropsDims) {
  Tensor data = floats({2, 3}, {1, 2, 3, 4, 5, 6});
  onnx::NodeProto kept = makeNode("ReduceMean");
  setInts(kept, "axes", {-1});
  Tensor rows = fold(kept, {&data});
  EXPECT_EQ(rows.shape, (Shape{2, 1}));
  EXPECT_EQ(rows.floats, (Floats{2, 5}));

  onnx::NodeProto dropped = makeNode("ReduceMean");
  setInt(dropped, "keepdims", 0);
  Tensor axes = Tensor::intVector({0});
  Tensor columns = fold(dropped, {&data, &axes});
  EXPECT_EQ(columns.shape, (Shape{3}));
  EXPECT_EQ(columns.floats, (Floats{2.5f, 3.5f, 4.5f}));

  Tensor all = fold(makeNode("ReduceSum"), {&data});
  EXPECT_EQ(all.shape, (Shape{1, 1}));
  EXPECT_EQ(all.floats, (Floats{21}));
}

TEST(ConstantFolder, TransposeKeepsOriginOnlyIn2D) {
  Tensor weight = floats({2, 3}, {1, 2, 3, 4, 5, 6});
  weight.origin = "w";
  weight.storage = StorageType::F16;
  Tensor out = fold(makeNode("Transpose"), {&weight});
  EXPECT_EQ(out.shape, (Shape{3, 2}));
  EXPECT_EQ(out.floats, (Floats{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(out.origin, "w");
  EXPECT_TRUE(out.originTransposed);
  EXPECT_EQ(out.storage, StorageType::F16);

  Tensor cube = floats({1, 2, 2}, {1, 2, 3, 4});
  cube.origin = "c";
  onnx::NodeProto node = makeNode("Transpose");
  setInts(node, "perm", {0, 2, 1});
  Tensor turned = fold(node, {&cube});
  EXPECT_EQ(turned.floats, (Floats{1, 3, 2, 4}));
  EXPECT_TRUE(turned.origin.empty());
}

TEST(ConstantFolder, CastKeepsOriginBetweenFloatTypes) {
  Tensor weight = floats({2}, {1.5f, -2.7f});
  weight.origin = "w";
  weight.storage = StorageType::BF16;
  onnx::NodeProto toFloat = makeNode("Cast");
  setInt(toFloat, "to", onnx::TensorProto::FLOAT);
  Tensor same = fold(toFloat, {&weight});
  EXPECT_EQ(same.origin, "w");
  EXPECT_EQ(same.storage, StorageType::BF16);

  onnx::NodeProto toInt = makeNode("Cast");
  setInt(toInt, "to", onnx::TensorProto::INT64);
  Tensor truncated = fold(toInt, {&weight});
  EXPECT_EQ(truncated.kind, ElementKind::Int);
  EXPECT_EQ(truncated.ints, (Ints{1, -2}));
  EXPECT_TRUE(truncated.origin.empty());

  onnx::NodeProto toHalf = makeNode("Cast");
  setInt(toHalf, "to", onnx::TensorProto::FLOAT16);
  Tensor third = Tensor::floatScalar(1.0f / 3.0f);
  EXPECT_EQ(fold(toHalf, {&third}).floats, (Floats{0.333251953125f}));
}

TEST(ConstantFolder, ConstantKeepsInt64Exact) {
  onnx::NodeProto node = makeNode("Constant");
  onnx::AttributeProto *value = node.add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  onnx::TensorProto *tensor = value->mutable_t();
  tensor->set_data_type(onnx::TensorProto::INT64);
  tensor->add_dims(2);
  tensor->add_int64_data(kInt64Max);
  tensor->add_int64_data(kInt64Min);
  Tensor out = fold(node, {});
  EXPECT_EQ(out.kind, ElementKind::Int);
  EXPECT_EQ(out.ints, (Ints{kInt64Max, kInt64Min}));

  onnx::NodeProto list = makeNode("Constant");
  setInts(list, "value_ints", {3, 4});
  EXPECT_EQ(fold(list, {}).ints, (Ints{3, 4}));
}

TEST(ConstantFolder, ConstantOfShapeDefaultsToFloatZero) {
  Tensor shape = Tensor::intVector({2, 2});
  Tensor out = fold(makeNode("ConstantOfShape"), {&shape});
  EXPECT_EQ(out.kind, ElementKind::Float);
  EXPECT_EQ(out.floats, (Floats{0, 0, 0, 0}));
}

TEST(ConstantFolder, HugeShapesFailInsteadOfAllocating) {
  Tensor shape = Tensor::intVector({1 << 20, 1 << 20});
  std::string error = errorOf([&] { fold(makeNode("ConstantOfShape", "c"), {&shape}); });
  EXPECT_EQ(
      error.rfind("ONNX node 'c' (ConstantOfShape): shape [1048576, 1048576] is too large", 0), 0u)
      << error;
  Tensor negative = Tensor::intVector({-2});
  EXPECT_NE(errorOf([&] { fold(makeNode("ConstantOfShape"), {&negative}); }), "<no error>");
}

TEST(ConstantFolder, ExpandTileAndConcat) {
  Tensor row = ints({1, 2}, {1, 2});
  Tensor target = Tensor::intVector({3, 1});
  Tensor expanded = fold(makeNode("Expand"), {&row, &target});
  EXPECT_EQ(expanded.shape, (Shape{3, 2}));
  EXPECT_EQ(expanded.ints, (Ints{1, 2, 1, 2, 1, 2}));

  Tensor repeats = Tensor::intVector({2, 2});
  Tensor tiled = fold(makeNode("Tile"), {&row, &repeats});
  EXPECT_EQ(tiled.shape, (Shape{2, 4}));
  EXPECT_EQ(tiled.ints, (Ints{1, 2, 1, 2, 1, 2, 1, 2}));

  Tensor other = ints({1, 1}, {9});
  onnx::NodeProto concat = makeNode("Concat");
  setInt(concat, "axis", -1);
  Tensor joined = fold(concat, {&row, &other});
  EXPECT_EQ(joined.shape, (Shape{1, 3}));
  EXPECT_EQ(joined.ints, (Ints{1, 2, 9}));
}

TEST(ConstantFolder, SplitEvenlyOrBySizes) {
  Tensor data = ints({5}, {0, 1, 2, 3, 4});
  onnx::NodeProto uneven = makeNode("Split", "s", 2);
  setInt(uneven, "num_outputs", 2);
  std::vector<Tensor> halves = foldConstantNode(uneven, {&data});
  ASSERT_EQ(halves.size(), 2u);
  EXPECT_EQ(halves[0].ints, (Ints{0, 1, 2}));
  EXPECT_EQ(halves[1].ints, (Ints{3, 4}));

  Tensor sizes = Tensor::intVector({1, 4});
  std::vector<Tensor> parts = foldConstantNode(makeNode("Split", "s", 2), {&data, &sizes});
  EXPECT_EQ(parts[0].ints, (Ints{0}));
  EXPECT_EQ(parts[1].ints, (Ints{1, 2, 3, 4}));
}

TEST(ConstantFolder, MatMulBroadcastsBatchesAndVectors) {
  Tensor a = floats({2, 1, 2}, {1, 2, 3, 4});
  Tensor b = floats({2, 2}, {1, 0, 0, 2});
  Tensor product = fold(makeNode("MatMul"), {&a, &b});
  EXPECT_EQ(product.shape, (Shape{2, 1, 2}));
  EXPECT_EQ(product.floats, (Floats{1, 4, 3, 8}));

  Tensor v = floats({2}, {1, 1});
  Tensor rowSums = fold(makeNode("MatMul"), {&b, &v});
  EXPECT_EQ(rowSums.shape, (Shape{2}));
  EXPECT_EQ(rowSums.floats, (Floats{1, 2}));
}

TEST(ConstantFolder, RangeAndSoftmax) {
  Tensor start = Tensor::floatScalar(0.0f), limit = Tensor::floatScalar(1.0f);
  Tensor delta = Tensor::floatScalar(0.25f);
  EXPECT_EQ(fold(makeNode("Range"), {&start, &limit, &delta}).floats,
            (Floats{0, 0.25f, 0.5f, 0.75f}));

  Tensor logits = floats({2}, {0.0f, std::log(3.0f)});
  Tensor probabilities = fold(makeNode("Softmax"), {&logits});
  EXPECT_NEAR(probabilities.floats[0], 0.25f, 1e-6);
  EXPECT_NEAR(probabilities.floats[1], 0.75f, 1e-6);
}

TEST(ConstantFolder, UnsupportedOpNamesTheNode) {
  Tensor a = floats({1}, {1});
  EXPECT_EQ(errorOf([&] { fold(makeNode("Einsum", "mix"), {&a}); }),
            "ONNX node 'mix' (Einsum): operator cannot be constant-folded");
  EXPECT_EQ(errorOf([&] { fold(makeNode("Shape", ""), {&a}); }),
            "ONNX node '<unnamed>' (Shape): operator cannot be constant-folded");
}

TEST(ConstantFolder, ShapeMismatchNamesTheNode) {
  Tensor a = floats({2}, {1, 2}), b = floats({3}, {1, 2, 3});
  EXPECT_EQ(errorOf([&] {
              fold(makeNode("Add", "sum"), {&a, &b});
            }),
            "ONNX node 'sum' (Add): shapes [2] and [3] do not broadcast");
}

TEST(ConstantFolder, InconsistentInputFailsInsteadOfReading) {
  Tensor broken = floats({4}, {1, 2});
  EXPECT_NE(errorOf([&] { fold(makeNode("Identity"), {&broken}); }), "<no error>");
}

TEST(ConstantFolder, ElementKindOfOnnxTypes) {
  onnx::NodeProto node = makeNode("Cast");
  EXPECT_EQ(elementKindOfOnnxType(onnx::TensorProto::BFLOAT16, node), ElementKind::Float);
  EXPECT_EQ(elementKindOfOnnxType(onnx::TensorProto::UINT8, node), ElementKind::Int);
  EXPECT_EQ(elementKindOfOnnxType(onnx::TensorProto::BOOL, node), ElementKind::Bool);
  EXPECT_THROW(elementKindOfOnnxType(onnx::TensorProto::STRING, node), ImportError);
}

} // namespace
} // namespace mk::onnx_import
