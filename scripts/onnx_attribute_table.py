#!/usr/bin/env python3
"""Prints the table of frontends/onnx/OpAttributes.cpp: for each default-domain
op the importer reads, the attributes ONNX defines for it in the opsets mkc
supports (13 to 23, frontends/onnx/OnnxLoader.h), with their types, and the
ones every one of those opsets requires.

  scripts/onnx_attribute_table.py Abs Add ... > table.txt
"""
import sys

import onnx.defs
from onnx import AttributeProto

MIN_OPSET, MAX_OPSET = 13, 23
TYPES = {AttributeProto.INT: "Int", AttributeProto.FLOAT: "Float",
         AttributeProto.INTS: "Ints", AttributeProto.FLOATS: "Floats",
         AttributeProto.STRING: "String", AttributeProto.STRINGS: "Strings",
         AttributeProto.TENSOR: "Tensor", AttributeProto.SPARSE_TENSOR: "SparseTensor"}


def main(ops):
    for op in sorted(set(ops)):
        known, required = {}, None
        for version in range(MIN_OPSET, MAX_OPSET + 1):
            try:
                schema = onnx.defs.get_schema(op, version, "")
            except onnx.defs.SchemaError:
                continue
            for name, attribute in schema.attributes.items():
                known[name] = TYPES[attribute.type]
            needed = {n for n, a in schema.attributes.items() if a.required}
            required = needed if required is None else required & needed
        if required is None:
            print(f"// {op}: no ONNX schema in opsets {MIN_OPSET}-{MAX_OPSET}", file=sys.stderr)
            continue
        cells = ", ".join(f'{{"{n}", {t}, {"true" if n in required else "false"}}}'
                          for n, t in sorted(known.items()))
        print(f'    {{"{op}", {{{cells}}}}},')


if __name__ == "__main__":
    main(sys.argv[1:])
