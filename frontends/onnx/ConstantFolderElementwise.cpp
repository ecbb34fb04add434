// Elementwise ops with numpy broadcasting: arithmetic, comparisons, logic,
// Where, the variadic Max/Min/Sum and the unary math functions. Float
// tensors compute in float, as onnxruntime does for float32; integers in
// int64 with wrap-around instead of undefined overflow.
#include "frontends/onnx/ConstantFolderInternal.h"

#include <algorithm>
#include <cmath>

namespace mk::onnx_import::folding {
namespace {

int64_t wrapAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
int64_t wrapSub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
int64_t wrapMul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

float nanAwareMax(float a, float b) {
  return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
}
float nanAwareMin(float a, float b) {
  return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b);
}

// out[i] = fn(a[..], b[..]) over the broadcast of the two shapes.
template <typename A, typename B, typename R, typename Fn>
void zipBroadcast(const std::vector<int64_t> &shape, const std::vector<A> &a,
                  const std::vector<int64_t> &aShape, const std::vector<B> &b,
                  const std::vector<int64_t> &bShape, std::vector<R> &out, Fn &&fn) {
  walkStrided<2>(
      shape, {broadcastStrides(aShape, shape), broadcastStrides(bShape, shape)}, {0, 0},
      [&](int64_t flat, const std::array<int64_t, 2> &at) { out[flat] = fn(a[at[0]], b[at[1]]); });
}

// Arithmetic in the joined kind of both operands: Float if either is.
template <typename FloatFn, typename IntFn>
Tensor arithmetic(const FoldContext &context, const Tensor &a, const Tensor &b, FloatFn &&onFloats,
                  IntFn &&onInts) {
  if (a.kind == ElementKind::Bool || b.kind == ElementKind::Bool)
    context.fail("arithmetic on booleans");
  ElementKind kind = joinKinds(a.kind, b.kind);
  Tensor aStorage, bStorage;
  const Tensor &x = asKind(a, kind, aStorage), &y = asKind(b, kind, bStorage);
  Tensor out = context.allocate(kind, context.broadcast(a.shape, b.shape));
  if (kind == ElementKind::Float)
    zipBroadcast(out.shape, x.floats, x.shape, y.floats, y.shape, out.floats, onFloats);
  else
    zipBroadcast(out.shape, x.ints, x.shape, y.ints, y.shape, out.ints, onInts);
  return out;
}

template <typename FloatFn, typename IntFn>
Results binaryArithmetic(const FoldContext &context, FloatFn &&onFloats, IntFn &&onInts) {
  context.requireInputs(2, 2);
  return {arithmetic(context, context.input(0), context.input(1), onFloats, onInts)};
}

Results foldAdd(const FoldContext &context) {
  return binaryArithmetic(
      context, [](float a, float b) { return a + b; }, wrapAdd);
}

Results foldSub(const FoldContext &context) {
  return binaryArithmetic(
      context, [](float a, float b) { return a - b; }, wrapSub);
}

Results foldMul(const FoldContext &context) {
  return binaryArithmetic(
      context, [](float a, float b) { return a * b; }, wrapMul);
}

// Integer division truncates toward zero, as C and onnxruntime do.
Results foldDiv(const FoldContext &context) {
  return binaryArithmetic(
      context, [](float a, float b) { return a / b; },
      [&](int64_t a, int64_t b) {
        if (b == 0)
          context.fail("integer division by zero");
        return b == -1 ? wrapSub(0, a) : a / b;
      });
}

// fmod=0 takes the divisor's sign (Python's %), fmod=1 the dividend's (C's
// fmod); ONNX allows only the latter for floats.
Results foldMod(const FoldContext &context) {
  bool cStyle = context.intAttribute("fmod", 0) != 0;
  auto onInts = [&](int64_t a, int64_t b) -> int64_t {
    if (b == 0)
      context.fail("integer modulo by zero");
    if (b == -1)
      return 0;
    int64_t r = a % b;
    if (!cStyle && r != 0 && (r < 0) != (b < 0))
      r += b;
    return r;
  };
  auto onFloats = [&](float a, float b) {
    if (!cStyle)
      context.fail("Mod of floats requires fmod=1");
    return std::fmod(a, b);
  };
  return binaryArithmetic(context, onFloats, onInts);
}

// Exponentiation by squaring, wrapping like int64 multiplication; negative
// exponents truncate 1/base^n toward zero.
int64_t integerPower(int64_t base, int64_t exponent) {
  if (exponent < 0)
    return base == 1 ? 1 : base == -1 ? (exponent % 2 ? -1 : 1) : 0;
  int64_t result = 1;
  for (; exponent > 0; exponent >>= 1) {
    if (exponent & 1)
      result = wrapMul(result, base);
    base = wrapMul(base, base);
  }
  return result;
}

// Pow's result has the base's type, whatever the exponent's.
Results foldPow(const FoldContext &context) {
  context.requireInputs(2, 2);
  const Tensor &base = context.input(0), &exponent = context.input(1);
  if (base.kind == ElementKind::Bool || exponent.kind == ElementKind::Bool)
    context.fail("Pow of booleans");
  Tensor out = context.allocate(base.kind, context.broadcast(base.shape, exponent.shape));
  if (base.kind == ElementKind::Float) {
    Tensor storage;
    const Tensor &e = asKind(exponent, ElementKind::Float, storage);
    zipBroadcast(out.shape, base.floats, base.shape, e.floats, e.shape, out.floats,
                 [](float b, float x) { return std::pow(b, x); });
  } else if (exponent.kind == ElementKind::Float) {
    zipBroadcast(out.shape, base.ints, base.shape, exponent.floats, exponent.shape, out.ints,
                 [](int64_t b, float x) {
                   return truncateToInt(std::pow(static_cast<double>(b), static_cast<double>(x)));
                 });
  } else {
    zipBroadcast(out.shape, base.ints, base.shape, exponent.ints, exponent.shape, out.ints,
                 integerPower);
  }
  return {std::move(out)};
}

// Max, Min and Sum take any number of inputs, broadcast together.
template <typename FloatFn, typename IntFn>
Results variadic(const FoldContext &context, FloatFn &&onFloats, IntFn &&onInts) {
  if (context.numInputs() == 0)
    context.fail("expected at least one input");
  const Tensor &first = context.input(0);
  if (first.kind == ElementKind::Bool)
    context.fail("arithmetic on booleans");
  Tensor result = convertKind(first, first.kind);
  for (size_t i = 1; i < context.numInputs(); ++i)
    result = arithmetic(context, result, context.input(i), onFloats, onInts);
  return {std::move(result)};
}

Results foldMax(const FoldContext &context) {
  return variadic(context, nanAwareMax, [](int64_t a, int64_t b) { return std::max(a, b); });
}

Results foldMin(const FoldContext &context) {
  return variadic(context, nanAwareMin, [](int64_t a, int64_t b) { return std::min(a, b); });
}

Results foldSum(const FoldContext &context) {
  return variadic(
      context, [](float a, float b) { return a + b; }, wrapAdd);
}

// Comparisons give Bool; mixed kinds compare as floats.
template <typename Compare> Results comparison(const FoldContext &context, Compare &&compare) {
  context.requireInputs(2, 2);
  const Tensor &a = context.input(0), &b = context.input(1);
  Tensor out = context.allocate(ElementKind::Bool, context.broadcast(a.shape, b.shape));
  bool useFloats = a.kind == ElementKind::Float || b.kind == ElementKind::Float;
  Tensor aStorage, bStorage;
  if (useFloats) {
    const Tensor &x = asKind(a, ElementKind::Float, aStorage);
    const Tensor &y = asKind(b, ElementKind::Float, bStorage);
    zipBroadcast(out.shape, x.floats, x.shape, y.floats, y.shape, out.ints,
                 [&](float l, float r) -> int64_t { return compare(l, r); });
  } else {
    zipBroadcast(out.shape, a.ints, a.shape, b.ints, b.shape, out.ints,
                 [&](int64_t l, int64_t r) -> int64_t { return compare(l, r); });
  }
  return {std::move(out)};
}

Results foldEqual(const FoldContext &context) {
  return comparison(context, [](auto a, auto b) { return a == b; });
}
Results foldLess(const FoldContext &context) {
  return comparison(context, [](auto a, auto b) { return a < b; });
}
Results foldLessOrEqual(const FoldContext &context) {
  return comparison(context, [](auto a, auto b) { return a <= b; });
}
Results foldGreater(const FoldContext &context) {
  return comparison(context, [](auto a, auto b) { return a > b; });
}
Results foldGreaterOrEqual(const FoldContext &context) {
  return comparison(context, [](auto a, auto b) { return a >= b; });
}

// Logic ops read any nonzero value as true.
template <typename Logic> Results logical(const FoldContext &context, Logic &&logic) {
  context.requireInputs(2, 2);
  Tensor a = convertKind(context.input(0), ElementKind::Bool);
  Tensor b = convertKind(context.input(1), ElementKind::Bool);
  Tensor out = context.allocate(ElementKind::Bool, context.broadcast(a.shape, b.shape));
  zipBroadcast(out.shape, a.ints, a.shape, b.ints, b.shape, out.ints,
               [&](int64_t l, int64_t r) -> int64_t { return logic(l != 0, r != 0); });
  return {std::move(out)};
}

Results foldAnd(const FoldContext &context) {
  return logical(context, [](bool a, bool b) { return a && b; });
}
Results foldOr(const FoldContext &context) {
  return logical(context, [](bool a, bool b) { return a || b; });
}
Results foldXor(const FoldContext &context) {
  return logical(context, [](bool a, bool b) { return a != b; });
}

Results foldNot(const FoldContext &context) {
  context.requireInputs(1, 1);
  Tensor out = convertKind(context.input(0), ElementKind::Bool);
  for (int64_t &v : out.ints)
    v = !v;
  return {std::move(out)};
}

template <typename T>
void select(const std::vector<int64_t> &shape, const std::array<std::vector<int64_t>, 3> &strides,
            const std::vector<int64_t> &condition, const std::vector<T> &a, const std::vector<T> &b,
            std::vector<T> &out) {
  walkStrided<3>(shape, strides, {0, 0, 0}, [&](int64_t flat, const std::array<int64_t, 3> &at) {
    out[flat] = condition[at[0]] ? a[at[1]] : b[at[2]];
  });
}

Results foldWhere(const FoldContext &context) {
  context.requireInputs(3, 3);
  Tensor condition = convertKind(context.input(0), ElementKind::Bool);
  const Tensor &x = context.input(1), &y = context.input(2);
  ElementKind kind = joinKinds(x.kind, y.kind);
  Tensor xStorage, yStorage;
  const Tensor &a = asKind(x, kind, xStorage), &b = asKind(y, kind, yStorage);
  Tensor out = context.allocate(
      kind, context.broadcast(context.broadcast(condition.shape, a.shape), b.shape));
  std::array<std::vector<int64_t>, 3> strides = {broadcastStrides(condition.shape, out.shape),
                                                 broadcastStrides(a.shape, out.shape),
                                                 broadcastStrides(b.shape, out.shape)};
  if (kind == ElementKind::Float)
    select(out.shape, strides, condition.ints, a.floats, b.floats, out.floats);
  else
    select(out.shape, strides, condition.ints, a.ints, b.ints, out.ints);
  return {std::move(out)};
}

// Unary ops defined only on floats (ONNX gives them no integer types).
template <typename Fn> Results unaryFloat(const FoldContext &context, Fn &&fn) {
  context.requireInputs(1, 1);
  const Tensor &input = context.input(0);
  if (input.kind != ElementKind::Float)
    context.fail("needs a float input");
  Tensor out = context.allocate(ElementKind::Float, input.shape);
  for (size_t i = 0; i < out.floats.size(); ++i)
    out.floats[i] = fn(input.floats[i]);
  return {std::move(out)};
}

// Unary ops defined on floats and signed integers.
template <typename FloatFn, typename IntFn>
Results unaryNumeric(const FoldContext &context, FloatFn &&onFloats, IntFn &&onInts) {
  context.requireInputs(1, 1);
  const Tensor &input = context.input(0);
  if (input.kind == ElementKind::Bool)
    context.fail("needs a numeric input");
  Tensor out = context.allocate(input.kind, input.shape);
  for (size_t i = 0; i < out.floats.size(); ++i)
    out.floats[i] = onFloats(input.floats[i]);
  for (size_t i = 0; i < out.ints.size(); ++i)
    out.ints[i] = onInts(input.ints[i]);
  return {std::move(out)};
}

Results foldNeg(const FoldContext &context) {
  return unaryNumeric(
      context, [](float x) { return -x; }, [](int64_t x) { return wrapSub(0, x); });
}
Results foldAbs(const FoldContext &context) {
  return unaryNumeric(
      context, [](float x) { return std::fabs(x); },
      [](int64_t x) { return x < 0 ? wrapSub(0, x) : x; });
}
Results foldRelu(const FoldContext &context) {
  return unaryNumeric(
      context, [](float x) { return x > 0.0f ? x : 0.0f; },
      [](int64_t x) { return std::max<int64_t>(x, 0); });
}
Results foldSqrt(const FoldContext &context) {
  return unaryFloat(context, [](float x) { return std::sqrt(x); });
}
Results foldReciprocal(const FoldContext &context) {
  return unaryFloat(context, [](float x) { return 1.0f / x; });
}
Results foldExp(const FoldContext &context) {
  return unaryFloat(context, [](float x) { return std::exp(x); });
}
Results foldLog(const FoldContext &context) {
  return unaryFloat(context, [](float x) { return std::log(x); });
}
Results foldFloor(const FoldContext &context) {
  return unaryFloat(context, [](float x) { return std::floor(x); });
}
Results foldCeil(const FoldContext &context) {
  return unaryFloat(context, [](float x) { return std::ceil(x); });
}
Results foldSin(const FoldContext &context) {
  return unaryFloat(context, [](float x) { return std::sin(x); });
}
Results foldCos(const FoldContext &context) {
  return unaryFloat(context, [](float x) { return std::cos(x); });
}
Results foldTanh(const FoldContext &context) {
  return unaryFloat(context, [](float x) { return std::tanh(x); });
}
Results foldSigmoid(const FoldContext &context) {
  return unaryFloat(context, [](float x) { return 1.0f / (1.0f + std::exp(-x)); });
}

// A float test on each element; integers are never NaN or infinite.
template <typename Test> Results classify(const FoldContext &context, Test &&test) {
  context.requireInputs(1, 1);
  const Tensor &input = context.input(0);
  Tensor out = context.allocate(ElementKind::Bool, input.shape);
  for (size_t i = 0; i < input.floats.size(); ++i)
    out.ints[i] = test(input.floats[i]);
  return {std::move(out)};
}

Results foldIsNaN(const FoldContext &context) {
  return classify(context, [](float x) { return std::isnan(x); });
}

Results foldIsInf(const FoldContext &context) {
  bool negative = context.intAttribute("detect_negative", 1) != 0;
  bool positive = context.intAttribute("detect_positive", 1) != 0;
  return classify(context, [&](float x) { return std::isinf(x) && (x > 0 ? positive : negative); });
}

} // namespace

void addElementwiseFolders(FoldTable &table) {
  table.insert({{"Add", foldAdd},         {"Sub", foldSub},
                {"Mul", foldMul},         {"Div", foldDiv},
                {"Mod", foldMod},         {"Pow", foldPow},
                {"Max", foldMax},         {"Min", foldMin},
                {"Sum", foldSum},         {"Equal", foldEqual},
                {"Less", foldLess},       {"LessOrEqual", foldLessOrEqual},
                {"Greater", foldGreater}, {"GreaterOrEqual", foldGreaterOrEqual},
                {"And", foldAnd},         {"Or", foldOr},
                {"Xor", foldXor},         {"Not", foldNot},
                {"Where", foldWhere},     {"Neg", foldNeg},
                {"Abs", foldAbs},         {"Relu", foldRelu},
                {"Sqrt", foldSqrt},       {"Reciprocal", foldReciprocal},
                {"Exp", foldExp},         {"Log", foldLog},
                {"Floor", foldFloor},     {"Ceil", foldCeil},
                {"Sin", foldSin},         {"Cos", foldCos},
                {"Tanh", foldTanh},       {"Sigmoid", foldSigmoid},
                {"IsNaN", foldIsNaN},     {"IsInf", foldIsInf}});
}

} // namespace mk::onnx_import::folding
