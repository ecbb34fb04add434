#!/usr/bin/env python3
"""Writes the GGUF fixtures of the reader's tests into OUTDIR, made at test
time (nothing binary is committed):

  model.gguf     a tiny llama-architecture file written by gguf-py's
                 GGUFWriter: llama.* hyperparameters, a tokenizer (tokens,
                 scores, types), and one tensor per ggml type the reader
                 dequantizes, with random data;
  quants.gguf    one tensor of each further ggml type the reader
                 dequantizes (the types llama.cpp's Q2_K to Q5_K_M and
                 IQ4 files hold, and falls back to where a row is not
                 whole blocks of 256), random blocks with small f16 scales;
                 not a model;
  NAME.npy       for each tensor of both, gguf.quants.dequantize's result
                 on the bytes read back from the file (the oracle);
  corrupt/*.gguf damaged files: model.gguf truncated at several offsets,
                 and small hand-built files, each wrong in one way;
  corrupt.tsv    one line per damaged file: its name, then the texts the
                 refusal must contain, tab-separated.

  make_gguf_fixtures.py OUTDIR
"""
import os
import struct
import sys

import numpy as np
import gguf
from gguf import GGMLQuantizationType as T
from gguf.quants import dequantize, quantize

HIDDEN, FFN, HEADS, KV_HEADS, VOCAB = 256, 512, 4, 2, 32


def random_halves(rng, count, scale):
    """f16 scales that are finite and small, as a quantizer writes them."""
    return (rng.standard_normal(count) * scale).astype(np.float16)


def raw_q4_k(rng, rows, cols):
    blocks = rows * cols // 256
    data = rng.integers(0, 256, size=(blocks, 144), dtype=np.uint8)
    data[:, 0:2] = random_halves(rng, blocks, 1e-2).view(np.uint8).reshape(blocks, 2)
    data[:, 2:4] = random_halves(rng, blocks, 1e-2).view(np.uint8).reshape(blocks, 2)
    return data.reshape(rows, cols // 256 * 144)


def raw_q6_k(rng, rows, cols):
    blocks = rows * cols // 256
    data = rng.integers(0, 256, size=(blocks, 210), dtype=np.uint8)
    data[:, 208:210] = random_halves(rng, blocks, 1e-3).view(np.uint8).reshape(blocks, 2)
    return data.reshape(rows, cols // 256 * 210)


def raw_blocks(rng, rows, cols, block_elements, block_bytes, halves):
    """Random blocks of a ggml type, each f16 field at the byte offsets
    `halves` a small finite scale."""
    blocks = rows * cols // block_elements
    data = rng.integers(0, 256, size=(blocks, block_bytes), dtype=np.uint8)
    for offset in halves:
        data[:, offset:offset + 2] = random_halves(rng, blocks, 1e-2).view(np.uint8).reshape(blocks, 2)
    return data.reshape(rows, cols // block_elements * block_bytes)


def every_16_bit_pattern(rows, cols):
    """All 65536 bit patterns of a 16-bit float (inf, NaN, subnormals, -0)."""
    assert rows * cols == 65536
    return np.arange(65536, dtype=np.uint16).reshape(rows, cols)


def tensors(rng):
    """(name, raw bytes or float array, ggml type); shapes are numpy's (rows, cols)."""
    weights = lambda *shape: rng.standard_normal(shape).astype(np.float32)
    return [
        ("token_embd.weight", raw_q4_k(rng, VOCAB, HIDDEN), T.Q4_K),
        ("blk.0.attn_norm.weight", weights(HIDDEN), T.F32),
        ("blk.0.attn_q.weight", quantize(weights(HIDDEN, HIDDEN), T.Q8_0), T.Q8_0),
        ("blk.0.attn_k.weight", quantize(weights(HIDDEN // 2, HIDDEN), T.Q4_0), T.Q4_0),
        ("blk.0.attn_v.weight", quantize(weights(HIDDEN // 2, HIDDEN), T.Q4_1), T.Q4_1),
        ("blk.0.attn_output.weight", every_16_bit_pattern(HIDDEN, HIDDEN).view(np.uint8), T.F16),
        ("blk.0.ffn_down.weight", raw_q6_k(rng, HIDDEN, FFN), T.Q6_K),
        ("blk.0.ffn_up.weight", every_16_bit_pattern(HIDDEN, HIDDEN).view(np.uint8), T.BF16),
        ("output_norm.weight", weights(HIDDEN), T.F32),
    ]


def quant_tensors(rng):
    """The further types, each a (name, raw bytes, ggml type) of 64 x 256."""
    weights = lambda *shape: rng.standard_normal(shape).astype(np.float32)
    return [
        ("q5_0", quantize(weights(64, 256), T.Q5_0), T.Q5_0),
        ("q5_1", quantize(weights(64, 256), T.Q5_1), T.Q5_1),
        ("q2_k", raw_blocks(rng, 64, 256, 256, 84, [80, 82]), T.Q2_K),
        ("q3_k", raw_blocks(rng, 64, 256, 256, 110, [108]), T.Q3_K),
        ("q5_k", raw_blocks(rng, 64, 256, 256, 176, [0, 2]), T.Q5_K),
        ("iq4_nl", raw_blocks(rng, 64, 256, 32, 18, [0]), T.IQ4_NL),
        ("iq4_xs", raw_blocks(rng, 64, 256, 256, 136, [0]), T.IQ4_XS),
    ]


def write_quants(path, rng):
    writer = gguf.GGUFWriter(path, "llama")
    writer.add_name("mkc-gguf-quants")
    for name, data, qtype in quant_tensors(rng):
        writer.add_tensor(name, data, raw_dtype=qtype)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def write_model(path, rng):
    writer = gguf.GGUFWriter(path, "llama")
    writer.add_name("mkc-gguf-fixture")
    writer.add_context_length(2048)
    writer.add_embedding_length(HIDDEN)
    writer.add_block_count(1)
    writer.add_feed_forward_length(FFN)
    writer.add_head_count(HEADS)
    writer.add_head_count_kv(KV_HEADS)
    writer.add_rope_dimension_count(HIDDEN // HEADS)
    writer.add_rope_freq_base(500000.0)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_tokenizer_model("llama")
    writer.add_token_list([f"<t{i}>" for i in range(VOCAB)])
    writer.add_token_scores([-float(i) for i in range(VOCAB)])
    writer.add_token_types([1] * VOCAB)
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(2)
    for name, data, qtype in tensors(rng):
        writer.add_tensor(name, data, raw_dtype=None if data.dtype == np.float32 else qtype)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def write_oracle(path, outdir):
    reader = gguf.GGUFReader(path)
    for tensor in reader.tensors:
        raw = np.asarray(tensor.data).view(np.uint8).reshape(-1)
        values = dequantize(raw, tensor.tensor_type).reshape(-1).astype(np.float32)
        np.save(os.path.join(outdir, tensor.name + ".npy"), values)
    return reader


# Hand-built files: each is small and wrong in exactly one way.
def gguf_string(text):
    data = text.encode()
    return struct.pack("<Q", len(data)) + data


def kv_u32(key, value):
    return gguf_string(key) + struct.pack("<II", 4, value)


def tensor_info(name, dims, ggml_type, offset):
    return (gguf_string(name) + struct.pack("<I", len(dims)) +
            b"".join(struct.pack("<Q", d) for d in dims) + struct.pack("<IQ", ggml_type, offset))


def build(kvs=(), infos=(), data=b"", version=3, magic=b"GGUF", counts=None, alignment=32):
    tensor_count, kv_count = counts if counts else (len(infos), len(kvs))
    head = magic + struct.pack("<IQQ", version, tensor_count, kv_count) + b"".join(kvs) + \
        b"".join(infos)
    head += b"\0" * (-len(head) % alignment)
    return head + data


def hand_built():
    """(name, bytes, texts the refusal must contain)."""
    f32_16 = tensor_info("blk.0.attn_norm.weight", [16], 0, 0)
    data = bytes(64)
    overflowing = tensor_info("huge", [1 << 40, 1 << 40], 0, 0)
    return [
        ("bad_magic", build(infos=[f32_16], data=data, magic=b"GGML"), ["bad magic at offset 0"]),
        ("version_1", build(infos=[f32_16], data=data, version=1),
         ["unsupported GGUF version 1 at offset 4"]),
        ("version_99", build(infos=[f32_16], data=data, version=99),
         ["unsupported GGUF version 99 at offset 4"]),
        ("key_length_past_end",
         build(kvs=[struct.pack("<Q", 1 << 40) + b"general.name"]),
         ["string length 1099511627776 at offset 24", "the key of metadata entry 0",
          "runs past the end of the file"]),
        ("string_value_past_end",
         build(kvs=[gguf_string("general.name") + struct.pack("<IQ", 8, 500) + b"abc"]),
         ["string length 500 at offset 48", "metadata key 'general.name'",
          "runs past the end of the file"]),
        ("array_past_end",
         build(kvs=[gguf_string("tokenizer.ggml.scores") + struct.pack("<IIQ", 9, 6, 1 << 61)]),
         ["array of 2305843009213693952 float32", "tokenizer.ggml.scores",
          "runs past the end of the file"]),
        ("nested_array",
         build(kvs=[gguf_string("x.nested") + struct.pack("<IIQ", 9, 9, 1)]),
         ["arrays of arrays are not supported", "'x.nested'"]),
        ("unknown_value_type", build(kvs=[gguf_string("x.odd") + struct.pack("<II", 13, 0)]),
         ["unknown value type 13", "'x.odd'"]),
        ("duplicate_key", build(kvs=[kv_u32("llama.block_count", 1), kv_u32("llama.block_count", 2)]),
         ["duplicate metadata key 'llama.block_count'"]),
        ("alignment_not_power_of_two", build(kvs=[kv_u32("general.alignment", 48)]),
         ["'general.alignment'", "is 48, not a power of two"]),
        ("alignment_wrong_type",
         build(kvs=[gguf_string("general.alignment") + struct.pack("<IQ", 10, 32)]),
         ["metadata key 'general.alignment' is uint64, not uint32"]),
        ("tensor_count_too_large", build(counts=(1 << 40, 0)),
         ["tensor count 1099511627776 at offset 8 cannot fit the file"]),
        ("metadata_count_too_large", build(counts=(0, 1 << 40)),
         ["metadata count 1099511627776 at offset 16 cannot fit the file"]),
        ("tensor_offset_past_end",
         build(infos=[tensor_info("blk.0.attn_norm.weight", [16], 0, 4096)], data=data),
         ["tensor 'blk.0.attn_norm.weight'", "at offset 4096 of the data section",
          "runs past the end of the file"]),
        ("tensor_data_past_end", build(infos=[f32_16], data=bytes(40)),
         ["tensor 'blk.0.attn_norm.weight': data of 64 bytes", "runs past the end of the file"]),
        ("unknown_ggml_type", build(infos=[tensor_info("t", [32], 99, 0)], data=data),
         ["tensor 't': unknown ggml type 99 at offset"]),
        ("retired_ggml_type", build(infos=[tensor_info("t", [32], 4, 0)], data=data),
         ["tensor 't': unknown ggml type 4"]),
        ("dimension_overflow", build(infos=[overflowing], data=data),
         ["tensor 'huge': dimensions [1099511627776, 1099511627776] overflow 64 bits"]),
        ("too_many_dims", build(infos=[tensor_info("t", [1, 1, 1, 1, 1], 0, 0)], data=data),
         ["tensor 't': 5 dimensions", "(1 to 4 are allowed)"]),
        ("zero_dims", build(infos=[tensor_info("t", [], 0, 0)], data=data),
         ["tensor 't': 0 dimensions"]),
        ("misaligned_offset",
         build(infos=[tensor_info("a", [4], 0, 0), tensor_info("b", [4], 0, 20)], data=data),
         ["tensor 'b': data offset 20", "is not a multiple of the alignment 32"]),
        ("partial_block", build(infos=[tensor_info("q", [48], 8, 0)], data=data),
         ["tensor 'q': first dimension 48 is not a multiple of Q8_0's block of 32"]),
        ("duplicate_tensor",
         build(infos=[tensor_info("a", [4], 0, 0), tensor_info("a", [4], 0, 32)], data=data),
         ["duplicate tensor name 'a'"]),
        ("overlapping_tensors",
         build(infos=[tensor_info("a", [16], 0, 0), tensor_info("b", [4], 0, 32)], data=data),
         ["tensors 'a' and 'b' overlap: data [0, 64) and [32, 48)"]),
        ("empty", b"", ["truncated at offset 0 while reading the magic"]),
    ]


def truncations(model_bytes, reader):
    """model.gguf cut inside the header, a key, a value, a tensor info and the data."""
    # Cuts late enough that the counts in the header still fit what is left
    # (a count that cannot fit is refused first, as the header is read).
    key_field = reader.fields["tokenizer.ggml.scores"]
    tokens = reader.fields["tokenizer.ggml.tokens"]
    first_info = reader.tensors[0].field.offset
    cuts = [
        ("truncated_magic", 2, ["truncated at offset 0 while reading the magic"]),
        ("truncated_version", 6, ["truncated at offset 4 while reading the version"]),
        ("truncated_counts", 20, ["truncated at offset 16 while reading the metadata count"]),
        ("truncated_key", key_field.offset + 10,
         [f"at offset {key_field.offset}", "the key of metadata entry"]),
        ("truncated_token_list", tokens.offset + 200, ["'tokenizer.ggml.tokens'"]),
        ("truncated_tensor_info", first_info + 12,
         [f"at offset {first_info}", "tensor info 0", "runs past the end of the file"]),
        ("truncated_data", reader.data_offset + 1000,
         ["runs past the end of the file"]),
        ("truncated_last_byte", len(model_bytes) - 1, ["runs past the end of the file"]),
    ]
    return [(name, model_bytes[:cut], texts) for name, cut, texts in cuts]


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    outdir = sys.argv[1]
    os.makedirs(os.path.join(outdir, "corrupt"), exist_ok=True)
    model = os.path.join(outdir, "model.gguf")
    write_model(model, np.random.default_rng(20260517))
    reader = write_oracle(model, outdir)
    quants = os.path.join(outdir, "quants.gguf")
    write_quants(quants, np.random.default_rng(20261205))
    write_oracle(quants, outdir)
    with open(model, "rb") as f:
        model_bytes = f.read()
    with open(os.path.join(outdir, "corrupt.tsv"), "w") as listing:
        for name, data, texts in hand_built() + truncations(model_bytes, reader):
            with open(os.path.join(outdir, "corrupt", name + ".gguf"), "wb") as f:
                f.write(data)
            listing.write("\t".join([name] + texts) + "\n")


if __name__ == "__main__":
    main()
