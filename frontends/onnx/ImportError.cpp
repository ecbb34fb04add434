#include "frontends/onnx/ImportError.h"

#include "onnx.pb.h"

namespace mk::onnx_import {

void failAt(const onnx::NodeProto &node, const std::string &reason) {
  const std::string name = node.name().empty() ? "<unnamed>" : node.name();
  throw ImportError("ONNX node '" + name + "' (" + node.op_type() + "): " + reason);
}

void fail(const std::string &message) { throw ImportError(message); }

} // namespace mk::onnx_import
