// mk.attention: head arithmetic of q, k, v, the result and the cache.
// RUN: mk-opt %s -split-input-file -verify-diagnostics

func.func @f(%q: tensor<64xf32>, %k: tensor<32xf32>, %v: tensor<32xf32>, %c: !mk.kv_cache<2, 16>, %pos: index) -> tensor<64xf32> {
  // expected-error @+1 {{'mk.attention' op num_heads, num_kv_heads and head_dim must be positive}}
  %o = mk.attention %q, %k, %v cache %c at %pos {num_heads = 4 : i64, num_kv_heads = 0 : i64, head_dim = 16 : i64, scale = 0.25 : f32} : tensor<64xf32>, tensor<32xf32>, tensor<32xf32>, !mk.kv_cache<2, 16> -> tensor<64xf32>
  return %o : tensor<64xf32>
}

// -----

func.func @f(%q: tensor<64xf32>, %k: tensor<48xf32>, %v: tensor<48xf32>, %c: !mk.kv_cache<3, 16>, %pos: index) -> tensor<64xf32> {
  // expected-error @+1 {{'mk.attention' op num_heads 4 is not a multiple of num_kv_heads 3}}
  %o = mk.attention %q, %k, %v cache %c at %pos {num_heads = 4 : i64, num_kv_heads = 3 : i64, head_dim = 16 : i64, scale = 0.25 : f32} : tensor<64xf32>, tensor<48xf32>, tensor<48xf32>, !mk.kv_cache<3, 16> -> tensor<64xf32>
  return %o : tensor<64xf32>
}

// -----

func.func @f(%q: tensor<48xf32>, %k: tensor<32xf32>, %v: tensor<32xf32>, %c: !mk.kv_cache<2, 16>, %pos: index) -> tensor<64xf32> {
  // expected-error @+1 {{'mk.attention' op q and result must have num_heads * head_dim = 64 entries}}
  %o = mk.attention %q, %k, %v cache %c at %pos {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 16 : i64, scale = 0.25 : f32} : tensor<48xf32>, tensor<32xf32>, tensor<32xf32>, !mk.kv_cache<2, 16> -> tensor<64xf32>
  return %o : tensor<64xf32>
}

// -----

func.func @f(%q: tensor<64xf32>, %k: tensor<32xf32>, %v: tensor<32xf32>, %c: !mk.kv_cache<2, 16>, %pos: index) -> tensor<32xf32> {
  // expected-error @+1 {{'mk.attention' op q and result must have num_heads * head_dim = 64 entries}}
  %o = mk.attention %q, %k, %v cache %c at %pos {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 16 : i64, scale = 0.25 : f32} : tensor<64xf32>, tensor<32xf32>, tensor<32xf32>, !mk.kv_cache<2, 16> -> tensor<32xf32>
  return %o : tensor<32xf32>
}

// -----

// k sized for MHA while num_kv_heads says GQA.
func.func @f(%q: tensor<64xf32>, %k: tensor<64xf32>, %v: tensor<32xf32>, %c: !mk.kv_cache<2, 16>, %pos: index) -> tensor<64xf32> {
  // expected-error @+1 {{'mk.attention' op k and v must have num_kv_heads * head_dim = 32 entries}}
  %o = mk.attention %q, %k, %v cache %c at %pos {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 16 : i64, scale = 0.25 : f32} : tensor<64xf32>, tensor<64xf32>, tensor<32xf32>, !mk.kv_cache<2, 16> -> tensor<64xf32>
  return %o : tensor<64xf32>
}

// -----

func.func @f(%q: tensor<64xf32>, %k: tensor<32xf32>, %v: tensor<32xf32>, %c: !mk.kv_cache<1, 32>, %pos: index) -> tensor<64xf32> {
  // expected-error @+1 {{'mk.attention' op cache type does not match num_kv_heads and head_dim}}
  %o = mk.attention %q, %k, %v cache %c at %pos {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 16 : i64, scale = 0.25 : f32} : tensor<64xf32>, tensor<32xf32>, tensor<32xf32>, !mk.kv_cache<1, 32> -> tensor<64xf32>
  return %o : tensor<64xf32>
}

// -----

func.func @f(%q: tensor<64xf32>, %k: tensor<32xf32>, %v: tensor<32xf32>, %c: !mk.kv_cache<2, 16>, %pos: index) -> tensor<64xf32> {
  // expected-error @+1 {{'mk.attention' op window must be positive, not 0}}
  %o = mk.attention %q, %k, %v cache %c at %pos {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 16 : i64, scale = 0.25 : f32, window = 0 : i64} : tensor<64xf32>, tensor<32xf32>, tensor<32xf32>, !mk.kv_cache<2, 16> -> tensor<64xf32>
  return %o : tensor<64xf32>
}
