//===- MkOps.td - the mk dialect: one decode step of a decoder LLM ---------===//
//
// The mk dialect describes one decode step of a decoder-only transformer at
// the level a person reads a model card: embedding, norms, linears, rotary
// embedding, attention over a KV cache, the gated MLP, logits. Activations are
// rank-1 f32 tensors (batch 1, one token per step). Weights are never inlined:
// ops name a `mk.weight` symbol, whose values live in the compiler's weight
// table (and later in the .mk artifact).
//
//===----------------------------------------------------------------------===//

#ifndef MK_OPS
#define MK_OPS

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

def Mk_Dialect : Dialect {
  let name = "mk";
  let cppNamespace = "::mk";
  let summary = "A decoder-only LLM decode step, as mkc understands it";
  let useDefaultTypePrinterParser = 1;
  let emitAccessorPrefix = kEmitAccessorPrefix_Prefixed;
}

class Mk_Op<string mnemonic, list<Trait> traits = []>
    : Op<Mk_Dialect, mnemonic, traits>;

// Static, because every verifier and engine does its arithmetic on lengths.
def Mk_Vector : TensorOf<[F32], [HasAnyRankOfPred<[1]>, HasStaticShapePred],
                         "statically sized 1-D tensor">;

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

def Mk_KVCacheType : TypeDef<Mk_Dialect, "KVCache"> {
  let mnemonic = "kv_cache";
  let summary = "The key/value cache of one attention layer";
  let description = [{
    State carried from step to step: for each KV head, the keys and values of
    every position seen so far. Its length is not part of the type; the
    runtime chooses the maximum context.

    ```mlir
    !mk.kv_cache<2, 16>   // 2 KV heads of dimension 16
    ```
  }];
  let parameters = (ins "int64_t":$numKvHeads, "int64_t":$headDim);
  let assemblyFormat = "`<` $numKvHeads `,` $headDim `>`";
  let genVerifyDecl = 1;
}

//===----------------------------------------------------------------------===//
// Weights
//===----------------------------------------------------------------------===//

def Mk_WeightOp : Mk_Op<"weight", [Symbol, HasParent<"::mlir::ModuleOp">]> {
  let summary = "Declares one tensor of the model's weight table";
  let description = [{
    The element type is the dtype the weight is stored in (f32, f16 or bf16);
    ops compute in f32. Linear and logits weights are laid out [out, in].
    `source` names where the values came from (the ONNX initializer).

    ```mlir
    mk.weight @"model.embed_tokens.weight" : tensor<256x64xf32> {source = "model.embed_tokens.weight"}
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, TypeAttr:$type,
                       OptionalAttr<StrAttr>:$source);
  let assemblyFormat = "$sym_name `:` $type attr-dict";
  let hasVerifier = 1;
}

class Mk_WeightUserOp<string mnemonic, list<Trait> traits = []>
    : Mk_Op<mnemonic, !listconcat(traits, [NoSideEffect,
        DeclareOpInterfaceMethods<SymbolUserOpInterface>])>;

//===----------------------------------------------------------------------===//
// Ops
//===----------------------------------------------------------------------===//

def Mk_EmbeddingOp : Mk_WeightUserOp<"embedding"> {
  let summary = "Looks up a token's row of the embedding table";
  let description = [{
    ```mlir
    %x = mk.embedding @embed[%token] : tensor<64xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$table, I64:$token);
  let results = (outs Mk_Vector:$result);
  let assemblyFormat = "$table `[` $token `]` attr-dict `:` type($result)";
}

def Mk_RMSNormOp : Mk_WeightUserOp<"rms_norm", [SameOperandsAndResultType]> {
  let summary = "RMS normalization over the whole vector, times a weight";
  let description = [{
    `y = x / sqrt(mean(x^2) + eps) * weight`, weight of shape [n].

    ```mlir
    %y = mk.rms_norm %x weight @w {eps = 1.0e-05 : f32} : tensor<64xf32>
    ```
  }];
  let arguments = (ins Mk_Vector:$input, FlatSymbolRefAttr:$weight, F32Attr:$eps);
  let results = (outs Mk_Vector:$result);
  let assemblyFormat = "$input `weight` $weight attr-dict `:` type($result)";
}

def Mk_HeadRMSNormOp : Mk_WeightUserOp<"head_rms_norm", [SameOperandsAndResultType]> {
  let summary = "RMS normalization of each head separately (Qwen3's q/k norm)";
  let description = [{
    The input is heads x head_dim; each head is normalized on its own and
    multiplied by the same weight of shape [head_dim].

    ```mlir
    %y = mk.head_rms_norm %q weight @qn {eps = 1.0e-06 : f32, head_dim = 32 : i64} : tensor<128xf32>
    ```
  }];
  let arguments = (ins Mk_Vector:$input, FlatSymbolRefAttr:$weight, F32Attr:$eps,
                       I64Attr:$head_dim);
  let results = (outs Mk_Vector:$result);
  let assemblyFormat = "$input `weight` $weight attr-dict `:` type($result)";
}

def Mk_LinearOp : Mk_WeightUserOp<"linear"> {
  let summary = "y = W x (+ b), W laid out [out, in]";
  let description = [{
    ```mlir
    %q = mk.linear %x weight @wq bias @bq : tensor<64xf32> -> tensor<64xf32>
    ```
  }];
  let arguments = (ins Mk_Vector:$input, FlatSymbolRefAttr:$weight,
                       OptionalAttr<FlatSymbolRefAttr>:$bias);
  let results = (outs Mk_Vector:$result);
  let assemblyFormat = [{
    $input `weight` $weight (`bias` $bias^)? attr-dict `:` type($input) `->` type($result)
  }];
}

def Mk_RotaryOp : Mk_Op<"rotary", [NoSideEffect, AllTypesMatch<["input", "result"]>]> {
  let summary = "Rotary position embedding of every head at a position";
  let description = [{
    The input is heads x head_dim. The first `rotary_dim` entries of each head
    are rotated in pairs by angles `pos * inv_freq[i]`; the rest pass through.
    Pairs are (i, i + rotary_dim/2) unless `interleaved`, then (2i, 2i+1).
    `inv_freq` holds the rotary_dim/2 frequencies exactly as the model computes
    them, so frequency scaling such as Llama-3's is part of it. `theta` is set
    when the frequencies are the plain theta^(-2i/rotary_dim), for reading;
    scaled frequencies have no single theta and leave it out.

    ```mlir
    %r = mk.rotary %q at %pos {head_dim = 16 : i64, rotary_dim = 16 : i64,
           theta = 1.0e+04 : f64, inv_freq = dense<[...]> : tensor<8xf32>} : tensor<64xf32>
    ```
  }];
  let arguments = (ins Mk_Vector:$input, Index:$pos, I64Attr:$head_dim,
                       I64Attr:$rotary_dim, OptionalAttr<F64Attr>:$theta,
                       FloatElementsAttr<32>:$inv_freq,
                       UnitAttr:$interleaved);
  let results = (outs Mk_Vector:$result);
  let assemblyFormat = "$input `at` $pos attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Mk_AttentionOp : Mk_Op<"attention"> {
  let summary = "Appends k, v to the cache at pos, then causal attention of q";
  let description = [{
    Writes the new key and value into `cache` at position `pos`, then each of
    the `num_heads` query heads attends over positions 0..pos of KV head
    `h / (num_heads / num_kv_heads)` (GQA; MQA and MHA are its edge cases),
    with softmax(q.k * scale). With a sliding `window`, only the last
    `window` positions (pos - window + 1..pos) are attended to.

    ```mlir
    %o = mk.attention %q, %k, %v cache %c at %pos {num_heads = 4 : i64,
           num_kv_heads = 2 : i64, head_dim = 16 : i64, scale = 2.5e-01 : f32}
         : tensor<64xf32>, tensor<32xf32>, tensor<32xf32>, !mk.kv_cache<2, 16> -> tensor<64xf32>
    ```
  }];
  let arguments = (ins Mk_Vector:$q, Mk_Vector:$k, Mk_Vector:$v, Mk_KVCacheType:$cache,
                       Index:$pos, I64Attr:$num_heads, I64Attr:$num_kv_heads,
                       I64Attr:$head_dim, F32Attr:$scale, OptionalAttr<I64Attr>:$window);
  let results = (outs Mk_Vector:$result);
  let assemblyFormat = [{
    $q `,` $k `,` $v `cache` $cache `at` $pos attr-dict `:` type($q) `,` type($k) `,`
    type($v) `,` qualified(type($cache)) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Mk_SiluMulOp : Mk_Op<"silu_mul", [NoSideEffect, SameOperandsAndResultType]> {
  let summary = "silu(gate) * up, the gated MLP's activation";
  let description = [{
    ```mlir
    %h = mk.silu_mul %gate, %up : tensor<160xf32>
    ```
  }];
  let arguments = (ins Mk_Vector:$gate, Mk_Vector:$up);
  let results = (outs Mk_Vector:$result);
  let assemblyFormat = "$gate `,` $up attr-dict `:` type($result)";
}

def Mk_GeluTanhMulOp : Mk_Op<"gelu_tanh_mul", [NoSideEffect, SameOperandsAndResultType]> {
  let summary = "gelu(gate) * up with GELU's tanh approximation (Gemma's gated MLP)";
  let description = [{
    `gelu(x) = 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))`.

    ```mlir
    %h = mk.gelu_tanh_mul %gate, %up : tensor<160xf32>
    ```
  }];
  let arguments = (ins Mk_Vector:$gate, Mk_Vector:$up);
  let results = (outs Mk_Vector:$result);
  let assemblyFormat = "$gate `,` $up attr-dict `:` type($result)";
}

def Mk_AddOp : Mk_Op<"add", [NoSideEffect, SameOperandsAndResultType, Commutative]> {
  let summary = "Residual add";
  let description = [{
    ```mlir
    %h = mk.add %x, %attn : tensor<64xf32>
    ```
  }];
  let arguments = (ins Mk_Vector:$lhs, Mk_Vector:$rhs);
  let results = (outs Mk_Vector:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($result)";
}

def Mk_LogitsOp : Mk_WeightUserOp<"logits"> {
  let summary = "The lm_head: logits = W x, W laid out [vocab, hidden]";
  let description = [{
    With tied embeddings, W is the embedding table itself.

    ```mlir
    %l = mk.logits %x weight @lm_head : tensor<64xf32> -> tensor<256xf32>
    ```
  }];
  let arguments = (ins Mk_Vector:$input, FlatSymbolRefAttr:$weight);
  let results = (outs Mk_Vector:$result);
  let assemblyFormat = "$input `weight` $weight attr-dict `:` type($input) `->` type($result)";
}

def Mk_ArgmaxOp : Mk_Op<"argmax", [NoSideEffect]> {
  let summary = "Index of the largest logit; the lowest index wins ties";
  let description = [{
    ```mlir
    %next = mk.argmax %logits : tensor<256xf32>
    ```
  }];
  let arguments = (ins Mk_Vector:$input);
  let results = (outs I64:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

//===----------------------------------------------------------------------===//
// Fused ops: what the passes in passes/ make of the ops above. Each is the
// exact composition of the ops it replaces, so engines can compare against it.
//===----------------------------------------------------------------------===//

def Mk_GemvOp : Mk_WeightUserOp<"gemv"> {
  let summary = "One pass over the input: optional RMSNorm, stacked W x + b, epilogue";
  let description = [{
    `a = norm ? rms_norm(input) * norm_weight : input` (with `eps`), then
    `y = concat_i(W_i a + b_i)`: the output rows are those of every weight in
    `weights` ([rows_i, K] each, K the input length), one bias per weight
    when `biases` is set. The `epilogue` then makes the result:

    - `"none"`: `y`;
    - `"silu_mul"`: two weights of N rows each; `silu(y[j]) * y[N + j]`, N entries;
    - `"gelu_tanh_mul"`: the same with GELU's tanh approximation in place of
      silu (mk.gelu_tanh_mul);
    - `"residual"`: `residual + y`; the `residual` operand is present exactly
      for this epilogue.

    ```mlir
    %qkv = mk.gemv %x weights [@wq, @wk, @wv] biases [@bq, @bk, @bv] norm @ln
             {eps = 1.0e-05 : f32} : tensor<64xf32> -> tensor<128xf32>
    %h = mk.gemv %o residual %x weights [@wo] {epilogue = "residual"}
           : tensor<64xf32>, tensor<64xf32> -> tensor<64xf32>
    ```
  }];
  let arguments = (ins Mk_Vector:$input, Optional<Mk_Vector>:$residual,
                       FlatSymbolRefArrayAttr:$weights,
                       OptionalAttr<FlatSymbolRefArrayAttr>:$biases,
                       OptionalAttr<FlatSymbolRefAttr>:$norm, OptionalAttr<F32Attr>:$eps,
                       DefaultValuedStrAttr<StrAttr, "none">:$epilogue);
  let results = (outs Mk_Vector:$result);
  let assemblyFormat = [{
    $input (`residual` $residual^)? `weights` $weights (`biases` $biases^)? (`norm` $norm^)?
    attr-dict `:` type($input) (`,` type($residual)^)? `->` type($result)
  }];
  let hasVerifier = 1;
}

def Mk_SliceOp : Mk_Op<"slice", [NoSideEffect]> {
  let summary = "The entries offset..offset+len of a vector, len the result's length";
  let description = [{
    ```mlir
    %k = mk.slice %qkv {offset = 64 : i64} : tensor<128xf32> -> tensor<32xf32>
    ```
  }];
  let arguments = (ins Mk_Vector:$input, I64Attr:$offset);
  let results = (outs Mk_Vector:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Mk_FusedAttentionOp : Mk_Op<"fused_attention",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "mk.attention on q | k | v of one vector, with q/k norm and rotary";
  let description = [{
    `qkv` holds q (num_heads heads), k and v (num_kv_heads heads each), all of
    `head_dim`. q and k are normalized per head by `q_norm` / `k_norm`
    ([head_dim] weights, with `norm_eps`) when set, then rotated at `pos` by
    the first `rotary_dim` entries of each head as mk.rotary does (0: no
    rotary; `inv_freq`, `interleaved` and `theta` as there). What follows is
    exactly mk.attention of q, k, v: k and v are written into `cache` at
    `pos`, then q attends over 0..pos (the last `window` positions, when set).

    ```mlir
    %o = mk.fused_attention %qkv cache %c at %pos q_norm @qn k_norm @kn {norm_eps = 1.0e-06 : f32,
           num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 16 : i64, scale = 2.5e-01 : f32,
           rotary_dim = 16 : i64, inv_freq = dense<[...]> : tensor<8xf32>}
         : tensor<128xf32>, !mk.kv_cache<2, 16> -> tensor<64xf32>
    ```
  }];
  let arguments = (ins Mk_Vector:$qkv, Mk_KVCacheType:$cache, Index:$pos,
                       I64Attr:$num_heads, I64Attr:$num_kv_heads, I64Attr:$head_dim,
                       F32Attr:$scale,
                       OptionalAttr<FlatSymbolRefAttr>:$q_norm,
                       OptionalAttr<FlatSymbolRefAttr>:$k_norm,
                       OptionalAttr<F32Attr>:$norm_eps,
                       I64Attr:$rotary_dim,
                       OptionalAttr<FloatElementsAttr<32>>:$inv_freq,
                       UnitAttr:$interleaved, OptionalAttr<F64Attr>:$theta,
                       OptionalAttr<I64Attr>:$window);
  let results = (outs Mk_Vector:$result);
  let assemblyFormat = [{
    $qkv `cache` $cache `at` $pos (`q_norm` $q_norm^)? (`k_norm` $k_norm^)? attr-dict
    `:` type($qkv) `,` qualified(type($cache)) `->` type($result)
  }];
  let hasVerifier = 1;
}

#endif // MK_OPS
