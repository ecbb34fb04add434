// mk.fused_attention: head arithmetic of qkv, the result and the cache, norms
// with their eps, rotary settings only with a rotary_dim.
// RUN: mk-opt %s -split-input-file -verify-diagnostics

func.func @f(%qkv: tensor<128xf32>, %c: !mk.kv_cache<3, 16>, %pos: index) -> tensor<64xf32> {
  // expected-error @+1 {{'mk.fused_attention' op num_heads 4 is not a multiple of num_kv_heads 3}}
  %o = mk.fused_attention %qkv cache %c at %pos {num_heads = 4 : i64, num_kv_heads = 3 : i64, head_dim = 16 : i64, scale = 0.25 : f32, rotary_dim = 0 : i64} : tensor<128xf32>, !mk.kv_cache<3, 16> -> tensor<64xf32>
  return %o : tensor<64xf32>
}

// -----

func.func @f(%qkv: tensor<128xf32>, %c: !mk.kv_cache<1, 32>, %pos: index) -> tensor<64xf32> {
  // expected-error @+1 {{'mk.fused_attention' op cache type does not match num_kv_heads and head_dim}}
  %o = mk.fused_attention %qkv cache %c at %pos {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 16 : i64, scale = 0.25 : f32, rotary_dim = 0 : i64} : tensor<128xf32>, !mk.kv_cache<1, 32> -> tensor<64xf32>
  return %o : tensor<64xf32>
}

// -----

// Sized for MHA while num_kv_heads says GQA.
func.func @f(%qkv: tensor<192xf32>, %c: !mk.kv_cache<2, 16>, %pos: index) -> tensor<64xf32> {
  // expected-error @+1 {{'mk.fused_attention' op qkv must have (num_heads + 2 * num_kv_heads) * head_dim = 128 entries}}
  %o = mk.fused_attention %qkv cache %c at %pos {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 16 : i64, scale = 0.25 : f32, rotary_dim = 0 : i64} : tensor<192xf32>, !mk.kv_cache<2, 16> -> tensor<64xf32>
  return %o : tensor<64xf32>
}

// -----

func.func @f(%qkv: tensor<128xf32>, %c: !mk.kv_cache<2, 16>, %pos: index) -> tensor<128xf32> {
  // expected-error @+1 {{'mk.fused_attention' op result must have num_heads * head_dim = 64 entries}}
  %o = mk.fused_attention %qkv cache %c at %pos {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 16 : i64, scale = 0.25 : f32, rotary_dim = 0 : i64} : tensor<128xf32>, !mk.kv_cache<2, 16> -> tensor<128xf32>
  return %o : tensor<128xf32>
}

// -----

mk.weight @qn : tensor<16xf32>

func.func @f(%qkv: tensor<128xf32>, %c: !mk.kv_cache<2, 16>, %pos: index) -> tensor<64xf32> {
  // expected-error @+1 {{'mk.fused_attention' op norm_eps is set exactly when q_norm or k_norm is}}
  %o = mk.fused_attention %qkv cache %c at %pos q_norm @qn {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 16 : i64, scale = 0.25 : f32, rotary_dim = 0 : i64} : tensor<128xf32>, !mk.kv_cache<2, 16> -> tensor<64xf32>
  return %o : tensor<64xf32>
}

// -----

func.func @f(%qkv: tensor<128xf32>, %c: !mk.kv_cache<2, 16>, %pos: index) -> tensor<64xf32> {
  // expected-error @+1 {{'mk.fused_attention' op norm_eps is set exactly when q_norm or k_norm is}}
  %o = mk.fused_attention %qkv cache %c at %pos {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 16 : i64, scale = 0.25 : f32, rotary_dim = 0 : i64, norm_eps = 1.0e-06 : f32} : tensor<128xf32>, !mk.kv_cache<2, 16> -> tensor<64xf32>
  return %o : tensor<64xf32>
}

// -----

func.func @f(%qkv: tensor<128xf32>, %c: !mk.kv_cache<2, 16>, %pos: index) -> tensor<64xf32> {
  // expected-error @+1 {{'mk.fused_attention' op inv_freq, interleaved and theta need a rotary_dim}}
  %o = mk.fused_attention %qkv cache %c at %pos {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 16 : i64, scale = 0.25 : f32, rotary_dim = 0 : i64, interleaved} : tensor<128xf32>, !mk.kv_cache<2, 16> -> tensor<64xf32>
  return %o : tensor<64xf32>
}

// -----

func.func @f(%qkv: tensor<128xf32>, %c: !mk.kv_cache<2, 16>, %pos: index) -> tensor<64xf32> {
  // expected-error @+1 {{'mk.fused_attention' op rotary_dim 16 needs inv_freq}}
  %o = mk.fused_attention %qkv cache %c at %pos {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 16 : i64, scale = 0.25 : f32, rotary_dim = 16 : i64} : tensor<128xf32>, !mk.kv_cache<2, 16> -> tensor<64xf32>
  return %o : tensor<64xf32>
}

// -----

func.func @f(%qkv: tensor<128xf32>, %c: !mk.kv_cache<2, 16>, %pos: index) -> tensor<64xf32> {
  // expected-error @+1 {{'mk.fused_attention' op rotary_dim 5 must be even and in (0, head_dim]}}
  %o = mk.fused_attention %qkv cache %c at %pos {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 16 : i64, scale = 0.25 : f32, rotary_dim = 5 : i64, inv_freq = dense<[1.0, 0.1]> : tensor<2xf32>} : tensor<128xf32>, !mk.kv_cache<2, 16> -> tensor<64xf32>
  return %o : tensor<64xf32>
}

// -----

func.func @f(%qkv: tensor<128xf32>, %c: !mk.kv_cache<2, 16>, %pos: index) -> tensor<64xf32> {
  // expected-error @+1 {{'mk.fused_attention' op inv_freq has 2 entries, expected rotary_dim/2 = 8}}
  %o = mk.fused_attention %qkv cache %c at %pos {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 16 : i64, scale = 0.25 : f32, rotary_dim = 16 : i64, inv_freq = dense<[1.0, 0.1]> : tensor<2xf32>} : tensor<128xf32>, !mk.kv_cache<2, 16> -> tensor<64xf32>
  return %o : tensor<64xf32>
}

// -----

mk.weight @kn : tensor<32xf32>

func.func @f(%qkv: tensor<128xf32>, %c: !mk.kv_cache<2, 16>, %pos: index) -> tensor<64xf32> {
  // expected-error @+1 {{'mk.fused_attention' op k_norm @kn has shape [32], expected [16]}}
  %o = mk.fused_attention %qkv cache %c at %pos k_norm @kn {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 16 : i64, scale = 0.25 : f32, rotary_dim = 0 : i64, norm_eps = 1.0e-06 : f32} : tensor<128xf32>, !mk.kv_cache<2, 16> -> tensor<64xf32>
  return %o : tensor<64xf32>
}

// -----

func.func @f(%qkv: tensor<128xf32>, %c: !mk.kv_cache<2, 16>, %pos: index) -> tensor<64xf32> {
  // expected-error @+1 {{'mk.fused_attention' op q_norm @qn is not defined}}
  %o = mk.fused_attention %qkv cache %c at %pos q_norm @qn {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 16 : i64, scale = 0.25 : f32, rotary_dim = 0 : i64, norm_eps = 1.0e-06 : f32} : tensor<128xf32>, !mk.kv_cache<2, 16> -> tensor<64xf32>
  return %o : tensor<64xf32>
}
