// The one error the ONNX importer raises: it names the node (name and op
// type) or the file section that could not be taken, and why.
#ifndef MKC_FRONTENDS_ONNX_IMPORTERROR_H
#define MKC_FRONTENDS_ONNX_IMPORTERROR_H

#include <stdexcept>
#include <string>

namespace onnx {
class NodeProto;
}

namespace mk::onnx_import {

class ImportError : public std::runtime_error {
public:
  explicit ImportError(const std::string &message) : std::runtime_error(message) {}
};

// "ONNX node 'name' (OpType): reason"
[[noreturn]] void failAt(const onnx::NodeProto &node, const std::string &reason);
[[noreturn]] void fail(const std::string &message);

} // namespace mk::onnx_import

#endif
