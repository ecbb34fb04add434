// Evaluates ONNX nodes whose inputs are all known constants, so that shape
// arithmetic, masks and scales reach the importer as concrete tensors.
#ifndef MKC_FRONTENDS_ONNX_CONSTANTFOLDER_H
#define MKC_FRONTENDS_ONNX_CONSTANTFOLDER_H

#include "frontends/onnx/Tensor.h"

#include <string>
#include <vector>

namespace onnx {
class NodeProto;
}

namespace mk::onnx_import {

// Evaluates an ONNX node all of whose present inputs are constants.
// `inputs[i]` is nullptr for an omitted optional input (empty name).
// Throws ImportError via failAt(node, reason) for an op or attribute it
// cannot evaluate. Shape is not handled here: only the caller knows the
// shapes of non-constant values.
std::vector<Tensor> foldConstantNode(const onnx::NodeProto &node,
                                     const std::vector<const Tensor *> &inputs);

// Whether the constant folder evaluates the default-domain op `opType`.
bool canFoldOp(const std::string &opType);

// Converts an ONNX TensorProto data type code to the Tensor kind used here
// (FLOAT/FLOAT16/BFLOAT16/DOUBLE -> Float, INT*/UINT* -> Int, BOOL -> Bool);
// fails on others (string, complex, 8-bit floats).
ElementKind elementKindOfOnnxType(int onnxType, const onnx::NodeProto &node);

} // namespace mk::onnx_import

#endif
