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

// Throws ImportError when the file is missing, truncated or not an ONNX model.
LoadedModel loadModel(const std::string &path);

// Decodes an initializer (or a Constant's tensor) to f32 / int64 values.
// `what` names it in errors. External data must stay inside `directory`.
Tensor decodeTensor(const onnx::TensorProto &proto, const std::string &directory,
                    const std::string &what);

} // namespace mk::onnx_import

#endif
