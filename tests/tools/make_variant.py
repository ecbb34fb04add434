#!/usr/bin/env python3
"""Makes a variant of a fixture for the importer's tests: broken models that
must be refused with a clear message, and valid models stored differently
(weights in fp16/bf16, external data) that must give the same logits.

  make_variant.py KIND SOURCE.onnx OUT.onnx
"""
import os
import random
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper


def first_node(model, op_type):
    for node in model.graph.node:
        if node.op_type == op_type:
            return node
    raise SystemExit(f"no {op_type} node in the source model")


def weight_initializers(model):
    """Names of 2-D float initializers that MatMul nodes read: the linear weights."""
    inits = {i.name: i for i in model.graph.initializer}
    names = []
    for node in model.graph.node:
        if node.op_type == "MatMul" and node.input[1] in inits:
            if len(inits[node.input[1]].dims) == 2 and node.input[1] not in names:
                names.append(node.input[1])
    return names


def store_weights_as(model, data_type):
    """Stores the linear weights in fp16/bf16, read back through a Cast to float."""
    inits = {i.name: i for i in model.graph.initializer}
    casts = []
    for name in weight_initializers(model):
        values = numpy_helper.to_array(inits[name]).astype(np.float32)
        stored = name + ".stored"
        if data_type == onnx.TensorProto.FLOAT16:
            tensor = numpy_helper.from_array(values.astype(np.float16), stored)
        else:
            bits = (values.view(np.uint32) + 0x8000) >> 16  # round to nearest bf16
            tensor = helper.make_tensor(stored, onnx.TensorProto.BFLOAT16, values.shape,
                                        bits.astype(np.uint16).tobytes(), raw=True)
        model.graph.initializer.remove(inits[name])
        model.graph.initializer.append(tensor)
        casts.append(helper.make_node("Cast", [stored], [name], name=f"cast_{name}",
                                      to=onnx.TensorProto.FLOAT))
    for cast in reversed(casts):
        model.graph.node.insert(0, cast)


def declare_huge(model, count, storage):
    """Gives the first linear weight a shape of `count` elements while keeping
    its few bytes: the loader must compare the two before it allocates.
    storage: raw (raw_data), typed (float_data) or external (a data file)."""
    name = weight_initializers(model)[0]
    init = next(i for i in model.graph.initializer if i.name == name)
    values = numpy_helper.to_array(init).astype(np.float32).ravel()[:16]
    del init.dims[:]
    init.dims.extend([count // 1024, 1024])
    init.ClearField("raw_data")
    init.ClearField("float_data")
    if storage == "raw":
        init.raw_data = values.tobytes()
    elif storage == "typed":
        init.float_data.extend(values.tolist())
    return init


def set_external_location(model, out, location, offset=None):
    onnx.save(model, out, save_as_external_data=True, all_tensors_to_one_file=True,
              location=os.path.basename(out) + ".data", size_threshold=1024)
    model = onnx.load(out, load_external_data=False)
    for init in model.graph.initializer:
        if init.data_location == onnx.TensorProto.EXTERNAL:
            for entry in init.external_data:
                if entry.key == "location" and location is not None:
                    entry.value = location
                if entry.key == "offset" and offset is not None:
                    entry.value = str(offset)
            break
    onnx.save(model, out)


def main(kind, source, out):
    data = open(source, "rb").read()
    if kind == "truncated":
        open(out, "wb").write(data[: len(data) // 2])
        return
    if kind == "garbage":
        rng = random.Random(7)
        open(out, "wb").write(bytes(rng.randrange(256) for _ in range(4096)))
        return
    model = onnx.load(source)
    if kind == "unsupported-op":
        first_node(model, "Sigmoid").op_type = "Exp"
    elif kind == "scaled-residual":
        # The residual stream after layer 0's attention times 0.5: a factor on
        # a sum, which no weight can absorb.
        add = next(n for n in model.graph.node if n.name == "/model/model/layers.0/Add")
        scaled = add.output[0] + ".scaled"
        for node in model.graph.node:
            for i, name in enumerate(node.input):
                if name == add.output[0]:
                    node.input[i] = scaled
        model.graph.initializer.append(numpy_helper.from_array(np.array(0.5, np.float32), "half"))
        model.graph.node.insert(list(model.graph.node).index(add) + 1,
                                helper.make_node("Mul", [add.output[0], "half"], [scaled],
                                                 name="scale_residual"))
    elif kind == "float-input-ids":
        for i in model.graph.input:
            if i.name == "input_ids":
                i.type.tensor_type.elem_type = onnx.TensorProto.FLOAT
    elif kind == "missing-weight":
        name = weight_initializers(model)[0]
        model.graph.initializer.remove(next(i for i in model.graph.initializer if i.name == name))
    elif kind == "quantized":
        weight = weight_initializers(model)[0]
        node = next(n for n in model.graph.node if n.op_type == "MatMul" and n.input[1] == weight)
        node.op_type, node.domain = "MatMulNBits", "com.microsoft"
    elif kind == "no-position-ids":
        model.graph.input.remove(next(i for i in model.graph.input if i.name == "position_ids"))
    elif kind == "fp16-weights":
        store_weights_as(model, onnx.TensorProto.FLOAT16)
    elif kind == "bf16-weights":
        store_weights_as(model, onnx.TensorProto.BFLOAT16)
    elif kind == "external-data":
        set_external_location(model, out, None)
        return
    elif kind == "external-escape":
        set_external_location(model, out, "../../../../etc/passwd")
        return
    elif kind == "external-missing":
        set_external_location(model, out, "missing.data")
        return
    elif kind.startswith("huge-"):
        # huge-raw-33: an initializer declaring 2^33 elements over 64 bytes.
        _, storage, log2 = kind.split("-")
        init = declare_huge(model, 1 << int(log2), storage)
        if storage == "external":
            data = out + ".data"
            open(data, "wb").write(np.zeros(16, np.float32).tobytes())
            init.data_location = onnx.TensorProto.EXTERNAL
            init.external_data.add(key="location", value=os.path.basename(data))
            init.external_data.add(key="length", value=str(4 << int(log2)))
    elif kind == "external-offset":
        set_external_location(model, out, None, offset=1 << 40)
        return
    elif kind == "external-offset-text":
        set_external_location(model, out, None, offset="64abc")
        return
    elif kind.startswith("opset-"):
        model.opset_import[0].version = int(kind.split("-")[1])
    elif kind == "no-opset":
        del model.opset_import[:]
    elif kind.startswith("ir-version-"):
        model.ir_version = int(kind.split("-")[2])
    elif kind == "misspelled-attribute":
        next(a for a in first_node(model, "Concat").attribute if a.name == "axis").name = "axsi"
    elif kind == "missing-attribute":
        node = first_node(model, "Concat")
        node.attribute.remove(next(a for a in node.attribute if a.name == "axis"))
    elif kind == "mistyped-attribute":
        axis = next(a for a in first_node(model, "Softmax").attribute if a.name == "axis")
        axis.type, axis.f = onnx.AttributeProto.FLOAT, float(axis.i)
        axis.ClearField("i")
    elif kind == "unsupported-ops":
        # Three ops no one handles: on activations (Erf, Celu) and on
        # constants (a Range), each to be named.
        first_node(model, "Sigmoid").op_type = "Erf"
        first_node(model, "Sqrt").op_type = "Celu"
        first_node(model, "Range").op_type = "Bogus"
    elif kind == "unknown-constant-op":
        first_node(model, "Range").op_type = "Bogus"
    elif kind in ("nan-weights", "inf-weights"):
        name = weight_initializers(model)[0]
        init = next(i for i in model.graph.initializer if i.name == name)
        values = numpy_helper.to_array(init).copy()
        values.flat[5] = np.nan if kind == "nan-weights" else -np.inf
        init.CopyFrom(numpy_helper.from_array(values, name))
    elif kind == "inf-rotary":
        # The rotary inverse frequencies, a [1, head_dim/2, 1] Constant.
        for node in model.graph.node:
            if node.op_type == "Constant" and node.attribute[0].name == "value":
                values = numpy_helper.to_array(node.attribute[0].t)
                if values.ndim == 3 and values.shape[0] == 1 and values.shape[2] == 1:
                    values = values.copy()
                    values.flat[1] = np.inf
                    node.attribute[0].t.CopyFrom(numpy_helper.from_array(values))
                    break
        else:
            raise SystemExit("no rotary frequencies in the source model")
    else:
        raise SystemExit(f"unknown variant {kind}")
    onnx.save(model, out)


if __name__ == "__main__":
    main(*sys.argv[1:])
