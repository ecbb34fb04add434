#include "frontends/onnx/ImportError.h"

#include "onnx.pb.h"

#include <cstdio>

namespace mk::onnx_import {

namespace {

// Names come from the file: a corrupt one must not put raw bytes on the
// terminal, so anything outside printable ASCII is shown as \xNN.
std::string printable(const std::string &text) {
  std::string out;
  for (unsigned char c : text) {
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      char escaped[5];
      std::snprintf(escaped, sizeof(escaped), "\\x%02x", c);
      out += escaped;
    }
  }
  return out;
}

} // namespace

void failAt(const onnx::NodeProto &node, const std::string &reason) {
  const std::string name = node.name().empty() ? "<unnamed>" : node.name();
  throw ImportError(printable("ONNX node '" + name + "' (" + node.op_type() + "): " + reason));
}

void fail(const std::string &message) { throw ImportError(printable(message)); }

} // namespace mk::onnx_import
