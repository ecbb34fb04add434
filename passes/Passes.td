//===- Passes.td - the fusion passes of mkc --------------------------------===//
//
// The passes that turn the model-card ops of the mk dialect into the few fused
// ops a megakernel task runs: mk.gemv (norm, stacked projections, epilogue)
// and mk.fused_attention (q/k norm, rotary, cache write, attention). Each
// works on one func.func; buildFusionPipeline (Pipeline.h) orders them.
//
//===----------------------------------------------------------------------===//

#ifndef MK_PASSES
#define MK_PASSES

include "mlir/Pass/PassBase.td"

class Mk_FunctionPass<string argument> : Pass<argument, "::mlir::func::FuncOp"> {
  let dependentDialects = ["::mk::MkDialect"];
}

def LinearToGemv : Mk_FunctionPass<"mk-linear-to-gemv"> {
  let summary = "Rewrites mk.linear and mk.logits as one-weight mk.gemv";
  let description = [{
    Every mk.linear becomes an mk.gemv of its weight (and its bias), every
    mk.logits an mk.gemv of the lm_head weight, so that the later passes have
    one matrix-vector op to fuse into.

    ```mlir
    %q = mk.linear %x weight @wq bias @bq : tensor<64xf32> -> tensor<64xf32>
    // becomes
    %q = mk.gemv %x weights [@wq] biases [@bq] : tensor<64xf32> -> tensor<64xf32>
    ```
  }];
  let constructor = "::mk::createLinearToGemvPass()";
}

def ConcatProjections : Mk_FunctionPass<"mk-concat-projections"> {
  let summary = "Stacks the q/k/v and the gate/up gemvs of one input into one gemv";
  let description = [{
    Plain gemvs (no norm, no epilogue) of the same input whose results are
    the q, k and v of one mk.attention (directly or through a per-head norm
    and mk.rotary), or the gate and up of one mk.silu_mul, become one gemv
    whose weights (and biases) are theirs in that order; each former result
    is an mk.slice of it. Biases are stacked only when every part has one;
    otherwise the gemvs are left alone. A per-head norm is one that
    mk-fuse-attention-input folds: mk.head_rms_norm of the attention's
    head_dim, or mk.rms_norm of exactly head_dim entries (one head).

    ```mlir
    %g = mk.gemv %x weights [@wg] : tensor<64xf32> -> tensor<160xf32>
    %u = mk.gemv %x weights [@wu] : tensor<64xf32> -> tensor<160xf32>
    %h = mk.silu_mul %g, %u : tensor<160xf32>
    // becomes
    %gu = mk.gemv %x weights [@wg, @wu] : tensor<64xf32> -> tensor<320xf32>
    %g = mk.slice %gu {offset = 0 : i64} : tensor<320xf32> -> tensor<160xf32>
    %u = mk.slice %gu {offset = 160 : i64} : tensor<320xf32> -> tensor<160xf32>
    %h = mk.silu_mul %g, %u : tensor<160xf32>
    ```
  }];
  let constructor = "::mk::createConcatProjectionsPass()";
}

def FuseAttentionInput : Mk_FunctionPass<"mk-fuse-attention-input"> {
  let summary = "Folds q/k norm and rotary into mk.fused_attention on the qkv gemv";
  let description = [{
    An mk.attention whose q and k are (mk.head_rms_norm ->) mk.rotary of
    slices of one gemv result, and whose v is a plain slice of it, in q | k | v
    order and covering it exactly, becomes mk.fused_attention on that result.
    q and k must be rotated alike (or both not at all) at the attention's
    position; when both are normalized, with the same eps.

    The per-head norm may be written either way the dialect allows:
    mk.head_rms_norm with the attention's head_dim, or, for a vector of one
    head, mk.rms_norm of head_dim entries. The importer writes the latter
    for Qwen3's k norm with a single KV head (and both norms with a single
    query head); the arithmetic is the same, so both fuse. The pass accepts
    both rather than canonicalizing first, because a head-long mk.rms_norm
    turned into mk.head_rms_norm everywhere would hide plain norms from
    mk-fold-rms-norm, and one turned the other way would still need this
    match. An mk.rms_norm over several heads at once is a different norm and
    leaves the attention alone.

    ```mlir
    %kn = mk.rms_norm %k weight @kn {eps = 1.0e-06 : f32} : tensor<16xf32>
    %kr = mk.rotary %kn at %pos {head_dim = 16 : i64, ...} : tensor<16xf32>
    %o = mk.attention %qr, %kr, %v cache %c at %pos {num_kv_heads = 1 : i64, head_dim = 16 : i64, ...}
    // k_norm @kn, as if %kn were mk.head_rms_norm {head_dim = 16}
    ```

    ```mlir
    %q = mk.slice %qkv {offset = 0 : i64} : tensor<128xf32> -> tensor<64xf32>
    %k = mk.slice %qkv {offset = 64 : i64} : tensor<128xf32> -> tensor<32xf32>
    %v = mk.slice %qkv {offset = 96 : i64} : tensor<128xf32> -> tensor<32xf32>
    %qr = mk.rotary %q at %pos {...} : tensor<64xf32>
    %kr = mk.rotary %k at %pos {...} : tensor<32xf32>
    %o = mk.attention %qr, %kr, %v cache %c at %pos {...} : ...
    // becomes
    %o = mk.fused_attention %qkv cache %c at %pos {rotary_dim = 16 : i64, ...} : ...
    ```
  }];
  let constructor = "::mk::createFuseAttentionInputPass()";
}

def FuseSwiglu : Mk_FunctionPass<"mk-fuse-swiglu"> {
  let summary = "Folds mk.silu_mul of a gate/up gemv into its epilogue";
  let description = [{
    `mk.silu_mul(slice(y, 0, N), slice(y, N, N))` where y is a two-weight
    gemv of N rows each with epilogue "none" becomes that gemv with epilogue
    "silu_mul".

    ```mlir
    %h = mk.gemv %x weights [@wg, @wu] {epilogue = "silu_mul"} : tensor<64xf32> -> tensor<160xf32>
    ```
  }];
  let constructor = "::mk::createFuseSwigluPass()";
}

def FoldRMSNorm : Mk_FunctionPass<"mk-fold-rms-norm"> {
  let summary = "Folds an mk.rms_norm into the gemvs that read it";
  let description = [{
    An mk.rms_norm all of whose users are gemvs without a norm, reading it as
    their input, disappears: each gemv reads the norm's input and carries the
    norm's weight and eps, recomputing the norm itself. A norm with any other
    user stays as it is. An mk.head_rms_norm whose head_dim is its input's
    whole length is this same norm of one head and is folded alike.

    ```mlir
    %qkv = mk.gemv %x weights [@wq, @wk, @wv] norm @ln {eps = 1.0e-05 : f32}
             : tensor<64xf32> -> tensor<128xf32>
    ```
  }];
  let constructor = "::mk::createFoldRMSNormPass()";
}

def FoldResidual : Mk_FunctionPass<"mk-fold-residual"> {
  let summary = "Folds a residual mk.add into the epilogue of the gemv it adds";
  let description = [{
    `mk.add(x, g)` (or `mk.add(g, x)`) where g is a gemv with epilogue "none"
    and no other user becomes g with epilogue "residual" and residual x,
    placed where the add was.

    ```mlir
    %h = mk.gemv %o residual %x weights [@wo] {epilogue = "residual"}
           : tensor<64xf32>, tensor<64xf32> -> tensor<64xf32>
    ```
  }];
  let constructor = "::mk::createFoldResidualPass()";
}

def PostNormAsGemv : Pass<"mk-post-norm-as-gemv", "::mlir::ModuleOp"> {
  let summary = "Makes a norm before a residual add a gemv through an identity";
  let description = [{
    `mk.add(x, mk.rms_norm(y))` (either order), the norm used only there,
    becomes a gemv of y with the norm as its prologue and x as its residual,
    through an N x N identity weight `@mk.identity.N` (source
    "mk.identity"), declared once a width: a norm after attention or MLP
    (Gemma 3) then runs as the Gemv task kind does.

    ```mlir
    %h = mk.gemv %o residual %x weights [@mk.identity.64] norm @post
           {epilogue = "residual", eps = 1.0e-06 : f32}
           : tensor<64xf32>, tensor<64xf32> -> tensor<64xf32>
    ```
  }];
  let constructor = "::mk::createPostNormAsGemvPass()";
  let dependentDialects = ["::mk::MkDialect"];
}

#endif // MK_PASSES
