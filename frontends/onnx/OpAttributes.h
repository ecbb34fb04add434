// The attributes ONNX defines for the default-domain ops the importer reads:
// a misspelled or mistyped attribute, or a missing required one, would
// otherwise be read as its default.
#ifndef MKC_FRONTENDS_ONNX_OPATTRIBUTES_H
#define MKC_FRONTENDS_ONNX_OPATTRIBUTES_H

#include <string>

namespace onnx {
class NodeProto;
}

namespace mk::onnx_import {

// "" when every attribute of `node` is one ONNX defines for its op, with the
// type ONNX gives it, and every attribute ONNX requires is there; else what
// is wrong, naming the attribute. Ops of other domains, and default-domain
// ops the table does not hold, are not checked.
std::string checkAttributes(const onnx::NodeProto &node);

} // namespace mk::onnx_import

#endif
