// Reading an .onnx file: the protobuf itself, and initializers with their
// data inline or in external files beside the model.
#ifndef MKC_FRONTENDS_ONNX_ONNXLOADER_H
#define MKC_FRONTENDS_ONNX_ONNXLOADER_H

#include "frontends/onnx/Tensor.h"

#include "onnx.pb.h"

#include <string>

namespace mk::onnx_import {

struct LoadedModel {
  onnx::ModelProto proto;
  std::string directory; // where external data locations are resolved
};

// The opsets of the default ONNX domain the importer accepts.
constexpr int64_t kMinOpset = 13;
constexpr int64_t kMaxOpset = 23;
// The IR versions (the file format's own version) it reads.
constexpr int64_t kMinIrVersion = 3;
constexpr int64_t kMaxIrVersion = 14;

// Throws ImportError when the file is missing, truncated or not an ONNX model.
LoadedModel loadModel(const std::string &path);

// Decodes an initializer (or a Constant's tensor) to f32 / int64 values.
// `what` names it in errors. External data must stay inside `directory`.
// A float tensor of external data with lazyWeightElements() or more
// elements is checked the same way but not read: its values come from the
// file when asked for (Tensor::lazy, LazyValues.h).
Tensor decodeTensor(const onnx::TensorProto &proto, const std::string &directory,
                    const std::string &what);

// Element i of little-endian raw bytes of the ONNX float type `dataType`
// (FLOAT, DOUBLE, FLOAT16, BFLOAT16), as f32.
float rawFloatElement(const char *data, int64_t i, int dataType);

} // namespace mk::onnx_import

#endif
