// The ONNX importer's reading of a decode step's attention mask: a sliding
// window hides the oldest positions of every row alike; anything else
// (padding, a hole, rows that differ) is refused by name.
#include "frontends/onnx/GraphImporter.h"
#include "frontends/onnx/ImportError.h"

#include "onnx.pb.h"

#include <gtest/gtest.h>

#include <limits>

namespace mk::onnx_import {
namespace {

constexpr float kHidden = std::numeric_limits<float>::lowest();

onnx::NodeProto maskNode() {
  onnx::NodeProto node;
  node.set_op_type("Add");
  node.set_name("mask_add");
  return node;
}

Tensor floatMask(std::vector<int64_t> shape, std::vector<float> values) {
  Tensor mask;
  mask.shape = std::move(shape);
  mask.floats = std::move(values);
  return mask;
}

TEST(SlidingWindow, NothingHiddenIsNoWindow) {
  EXPECT_EQ(slidingWindowOf(maskNode(), floatMask({1, 1, 1, 4}, {0, 0, 0, 0})), 0);
}

TEST(SlidingWindow, HiddenOldestPositionsLeaveTheRest) {
  EXPECT_EQ(slidingWindowOf(maskNode(), floatMask({1, 1, 1, 5}, {kHidden, kHidden, 0, 0, 0})), 3);
  float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(slidingWindowOf(maskNode(), floatMask({1, 2, 1, 3}, {-inf, 0, 0, -inf, 0, 0})), 2);
}

TEST(SlidingWindow, BooleanMasksHideWhereFalse) {
  Tensor mask;
  mask.kind = ElementKind::Bool;
  mask.shape = {1, 1, 1, 4};
  mask.ints = {0, 1, 1, 1};
  EXPECT_EQ(slidingWindowOf(maskNode(), mask), 3);
}

TEST(SlidingWindow, OtherMasksAreRefusedByNode) {
  auto refused = [](const Tensor &mask) {
    try {
      slidingWindowOf(maskNode(), mask);
    } catch (const ImportError &error) {
      return std::string(error.what());
    }
    return std::string("accepted");
  };
  std::string hole = refused(floatMask({1, 1, 1, 4}, {0, kHidden, 0, 0}));
  EXPECT_NE(hole.find("ONNX node 'mask_add' (Add): the attention mask of a decode step hides "
                      "positions other than the oldest"),
            std::string::npos)
      << hole;
  // The newest positions hidden (padding at the end), every position
  // hidden, rows with different windows, and a bias that is no mask.
  EXPECT_NE(refused(floatMask({1, 1, 1, 3}, {0, 0, kHidden})), "accepted");
  EXPECT_NE(refused(floatMask({1, 1, 1, 2}, {kHidden, kHidden})), "accepted");
  EXPECT_NE(refused(floatMask({1, 2, 1, 3}, {kHidden, 0, 0, kHidden, kHidden, 0})), "accepted");
  EXPECT_NE(refused(floatMask({1, 1, 1, 3}, {0, 0.5f, 0})), "accepted");
}

} // namespace
} // namespace mk::onnx_import
