// mk-fuse-attention-input: an attention on (head_rms_norm ->) rotary of q | k | v
// slices of one gemv becomes mk.fused_attention on that gemv's result.
// RUN: mk-opt %s -mk-fuse-attention-input | FileCheck %s

mk.weight @wqkv : tensor<128x64xf32>
mk.weight @qn : tensor<16xf32>
mk.weight @kn : tensor<16xf32>
mk.weight @kn2 : tensor<32xf32>
mk.weight @wqkv_mqa : tensor<96x64xf32>
mk.weight @wqkv_one : tensor<48x64xf32>

// CHECK-LABEL: func.func @rope
// CHECK-SAME: %[[C:[^:]*]]: !mk.kv_cache<2, 16>, %[[POS:[^:]*]]: index
func.func @rope(%x: tensor<64xf32>, %c: !mk.kv_cache<2, 16>, %pos: index) -> tensor<64xf32> {
  // CHECK-NEXT: %[[QKV:.*]] = mk.gemv
  // CHECK-NEXT: %[[O:.*]] = mk.fused_attention %[[QKV]] cache %[[C]] at %[[POS]] {head_dim = 16 : i64, interleaved, inv_freq = dense<[1.000000e+00, 5.000000e-01]> : tensor<2xf32>, num_heads = 4 : i64, num_kv_heads = 2 : i64, rotary_dim = 4 : i64, scale = 2.500000e-01 : f32, theta = 1.000000e+04 : f64} : tensor<128xf32>, !mk.kv_cache<2, 16> -> tensor<64xf32>
  // CHECK-NEXT: return %[[O]]
  %qkv = mk.gemv %x weights [@wqkv] : tensor<64xf32> -> tensor<128xf32>
  %q = mk.slice %qkv {offset = 0 : i64} : tensor<128xf32> -> tensor<64xf32>
  %k = mk.slice %qkv {offset = 64 : i64} : tensor<128xf32> -> tensor<32xf32>
  %v = mk.slice %qkv {offset = 96 : i64} : tensor<128xf32> -> tensor<32xf32>
  %qr = mk.rotary %q at %pos {head_dim = 16 : i64, rotary_dim = 4 : i64, theta = 1.0e+04 : f64, inv_freq = dense<[1.0, 0.5]> : tensor<2xf32>, interleaved} : tensor<64xf32>
  %kr = mk.rotary %k at %pos {head_dim = 16 : i64, rotary_dim = 4 : i64, theta = 1.0e+04 : f64, inv_freq = dense<[1.0, 0.5]> : tensor<2xf32>, interleaved} : tensor<32xf32>
  %o = mk.attention %qr, %kr, %v cache %c at %pos {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 16 : i64, scale = 0.25 : f32} : tensor<64xf32>, tensor<32xf32>, tensor<32xf32>, !mk.kv_cache<2, 16> -> tensor<64xf32>
  return %o : tensor<64xf32>
}

// Qwen3: per-head q/k norm before rotary.
// CHECK-LABEL: func.func @qk_norm
func.func @qk_norm(%x: tensor<64xf32>, %c: !mk.kv_cache<2, 16>, %pos: index) -> tensor<64xf32> {
  // CHECK-NEXT: %[[QKV:.*]] = mk.gemv
  // CHECK-NEXT: mk.fused_attention %[[QKV]] cache %{{.*}} at %{{.*}} q_norm @qn k_norm @kn {{.*}}norm_eps = 9.99999997E-7 : f32{{.*}}rotary_dim = 4 : i64
  // CHECK-NEXT: return
  %qkv = mk.gemv %x weights [@wqkv] : tensor<64xf32> -> tensor<128xf32>
  %q = mk.slice %qkv {offset = 0 : i64} : tensor<128xf32> -> tensor<64xf32>
  %k = mk.slice %qkv {offset = 64 : i64} : tensor<128xf32> -> tensor<32xf32>
  %v = mk.slice %qkv {offset = 96 : i64} : tensor<128xf32> -> tensor<32xf32>
  %qn = mk.head_rms_norm %q weight @qn {eps = 1.0e-06 : f32, head_dim = 16 : i64} : tensor<64xf32>
  %kn = mk.head_rms_norm %k weight @kn {eps = 1.0e-06 : f32, head_dim = 16 : i64} : tensor<32xf32>
  %qr = mk.rotary %qn at %pos {head_dim = 16 : i64, rotary_dim = 4 : i64, inv_freq = dense<[1.0, 0.5]> : tensor<2xf32>} : tensor<64xf32>
  %kr = mk.rotary %kn at %pos {head_dim = 16 : i64, rotary_dim = 4 : i64, inv_freq = dense<[1.0, 0.5]> : tensor<2xf32>} : tensor<32xf32>
  %o = mk.attention %qr, %kr, %v cache %c at %pos {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 16 : i64, scale = 0.25 : f32} : tensor<64xf32>, tensor<32xf32>, tensor<32xf32>, !mk.kv_cache<2, 16> -> tensor<64xf32>
  return %o : tensor<64xf32>
}

// Neither q nor k rotated: rotary_dim 0.
// CHECK-LABEL: func.func @no_rotary
func.func @no_rotary(%x: tensor<64xf32>, %c: !mk.kv_cache<2, 16>, %pos: index) -> tensor<64xf32> {
  // CHECK: mk.fused_attention {{.*}}rotary_dim = 0 : i64
  %qkv = mk.gemv %x weights [@wqkv] : tensor<64xf32> -> tensor<128xf32>
  %q = mk.slice %qkv {offset = 0 : i64} : tensor<128xf32> -> tensor<64xf32>
  %k = mk.slice %qkv {offset = 64 : i64} : tensor<128xf32> -> tensor<32xf32>
  %v = mk.slice %qkv {offset = 96 : i64} : tensor<128xf32> -> tensor<32xf32>
  %o = mk.attention %q, %k, %v cache %c at %pos {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 16 : i64, scale = 0.25 : f32} : tensor<64xf32>, tensor<32xf32>, tensor<32xf32>, !mk.kv_cache<2, 16> -> tensor<64xf32>
  return %o : tensor<64xf32>
}

// Left alone: k and v swapped in the gemv, q and k rotated differently,
// slices of something that is not a gemv, rotary at another position.
// CHECK-LABEL: func.func @not_fused
func.func @not_fused(%x: tensor<64xf32>, %raw: tensor<128xf32>, %c: !mk.kv_cache<2, 16>, %pos: index, %other: index) -> (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) {
  // CHECK-NOT: mk.fused_attention
  %qkv = mk.gemv %x weights [@wqkv] : tensor<64xf32> -> tensor<128xf32>
  %q = mk.slice %qkv {offset = 0 : i64} : tensor<128xf32> -> tensor<64xf32>
  %k = mk.slice %qkv {offset = 64 : i64} : tensor<128xf32> -> tensor<32xf32>
  %v = mk.slice %qkv {offset = 96 : i64} : tensor<128xf32> -> tensor<32xf32>
  %o1 = mk.attention %q, %v, %k cache %c at %pos {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 16 : i64, scale = 0.25 : f32} : tensor<64xf32>, tensor<32xf32>, tensor<32xf32>, !mk.kv_cache<2, 16> -> tensor<64xf32>
  %qr = mk.rotary %q at %pos {head_dim = 16 : i64, rotary_dim = 4 : i64, inv_freq = dense<[1.0, 0.5]> : tensor<2xf32>} : tensor<64xf32>
  %kr = mk.rotary %k at %pos {head_dim = 16 : i64, rotary_dim = 4 : i64, inv_freq = dense<[1.0, 0.25]> : tensor<2xf32>} : tensor<32xf32>
  %o2 = mk.attention %qr, %kr, %v cache %c at %pos {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 16 : i64, scale = 0.25 : f32} : tensor<64xf32>, tensor<32xf32>, tensor<32xf32>, !mk.kv_cache<2, 16> -> tensor<64xf32>
  %rq = mk.slice %raw {offset = 0 : i64} : tensor<128xf32> -> tensor<64xf32>
  %rk = mk.slice %raw {offset = 64 : i64} : tensor<128xf32> -> tensor<32xf32>
  %rv = mk.slice %raw {offset = 96 : i64} : tensor<128xf32> -> tensor<32xf32>
  %o3 = mk.attention %rq, %rk, %rv cache %c at %pos {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 16 : i64, scale = 0.25 : f32} : tensor<64xf32>, tensor<32xf32>, tensor<32xf32>, !mk.kv_cache<2, 16> -> tensor<64xf32>
  %qo = mk.rotary %q at %other {head_dim = 16 : i64, rotary_dim = 4 : i64, inv_freq = dense<[1.0, 0.5]> : tensor<2xf32>} : tensor<64xf32>
  %ko = mk.rotary %k at %other {head_dim = 16 : i64, rotary_dim = 4 : i64, inv_freq = dense<[1.0, 0.5]> : tensor<2xf32>} : tensor<32xf32>
  %o4 = mk.attention %qo, %ko, %v cache %c at %pos {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 16 : i64, scale = 0.25 : f32} : tensor<64xf32>, tensor<32xf32>, tensor<32xf32>, !mk.kv_cache<2, 16> -> tensor<64xf32>
  // CHECK-COUNT-4: mk.attention
  return %o1, %o2, %o3, %o4 : tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>
}

// Qwen3 with one KV head: the importer writes the k norm, one head long, as
// mk.rms_norm. It is the per-head norm of that one head and fuses as k_norm.
// CHECK-LABEL: func.func @one_kv_head
// CHECK-SAME: %[[C:[^:]*]]: !mk.kv_cache<1, 16>, %[[POS:[^:]*]]: index
func.func @one_kv_head(%x: tensor<64xf32>, %c: !mk.kv_cache<1, 16>, %pos: index) -> tensor<64xf32> {
  // CHECK-NEXT: %[[QKV:.*]] = mk.gemv
  // CHECK-NEXT: %[[O:.*]] = mk.fused_attention %[[QKV]] cache %[[C]] at %[[POS]] q_norm @qn k_norm @kn {{.*}}norm_eps = 9.99999997E-7 : f32, num_heads = 4 : i64, num_kv_heads = 1 : i64, rotary_dim = 4 : i64{{.*}} : tensor<96xf32>, !mk.kv_cache<1, 16> -> tensor<64xf32>
  // CHECK-NEXT: return %[[O]]
  %qkv = mk.gemv %x weights [@wqkv_mqa] : tensor<64xf32> -> tensor<96xf32>
  %q = mk.slice %qkv {offset = 0 : i64} : tensor<96xf32> -> tensor<64xf32>
  %k = mk.slice %qkv {offset = 64 : i64} : tensor<96xf32> -> tensor<16xf32>
  %v = mk.slice %qkv {offset = 80 : i64} : tensor<96xf32> -> tensor<16xf32>
  %qn = mk.head_rms_norm %q weight @qn {eps = 1.0e-06 : f32, head_dim = 16 : i64} : tensor<64xf32>
  %kn = mk.rms_norm %k weight @kn {eps = 1.0e-06 : f32} : tensor<16xf32>
  %qr = mk.rotary %qn at %pos {head_dim = 16 : i64, rotary_dim = 4 : i64, inv_freq = dense<[1.0, 0.5]> : tensor<2xf32>} : tensor<64xf32>
  %kr = mk.rotary %kn at %pos {head_dim = 16 : i64, rotary_dim = 4 : i64, inv_freq = dense<[1.0, 0.5]> : tensor<2xf32>} : tensor<16xf32>
  %o = mk.attention %qr, %kr, %v cache %c at %pos {num_heads = 4 : i64, num_kv_heads = 1 : i64, head_dim = 16 : i64, scale = 0.25 : f32} : tensor<64xf32>, tensor<16xf32>, tensor<16xf32>, !mk.kv_cache<1, 16> -> tensor<64xf32>
  return %o : tensor<64xf32>
}

// One query head (and so one KV head): both norms are plain mk.rms_norm, and
// one may be written either way; the k norm alone, without rotary.
// CHECK-LABEL: func.func @one_head
func.func @one_head(%x: tensor<64xf32>, %c: !mk.kv_cache<1, 16>, %pos: index) -> (tensor<16xf32>, tensor<16xf32>) {
  // CHECK-NEXT: %[[QKV:.*]] = mk.gemv
  // CHECK-NEXT: %[[O1:.*]] = mk.fused_attention %[[QKV]] cache %{{.*}} at %{{.*}} q_norm @qn k_norm @kn {{.*}}num_heads = 1 : i64, num_kv_heads = 1 : i64, rotary_dim = 4 : i64
  // CHECK-NEXT: %[[O2:.*]] = mk.fused_attention %[[QKV]] cache %{{.*}} at %{{.*}} k_norm @kn {{.*}}rotary_dim = 0 : i64
  // CHECK-NEXT: return %[[O1]], %[[O2]]
  %qkv = mk.gemv %x weights [@wqkv_one] : tensor<64xf32> -> tensor<48xf32>
  %q = mk.slice %qkv {offset = 0 : i64} : tensor<48xf32> -> tensor<16xf32>
  %k = mk.slice %qkv {offset = 16 : i64} : tensor<48xf32> -> tensor<16xf32>
  %v = mk.slice %qkv {offset = 32 : i64} : tensor<48xf32> -> tensor<16xf32>
  %qn = mk.rms_norm %q weight @qn {eps = 1.0e-06 : f32} : tensor<16xf32>
  %kn = mk.head_rms_norm %k weight @kn {eps = 1.0e-06 : f32, head_dim = 16 : i64} : tensor<16xf32>
  %qr = mk.rotary %qn at %pos {head_dim = 16 : i64, rotary_dim = 4 : i64, inv_freq = dense<[1.0, 0.5]> : tensor<2xf32>} : tensor<16xf32>
  %kr = mk.rotary %kn at %pos {head_dim = 16 : i64, rotary_dim = 4 : i64, inv_freq = dense<[1.0, 0.5]> : tensor<2xf32>} : tensor<16xf32>
  %o1 = mk.attention %qr, %kr, %v cache %c at %pos {num_heads = 1 : i64, num_kv_heads = 1 : i64, head_dim = 16 : i64, scale = 0.25 : f32} : tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, !mk.kv_cache<1, 16> -> tensor<16xf32>
  %kn2 = mk.rms_norm %k weight @kn {eps = 1.0e-06 : f32} : tensor<16xf32>
  %o2 = mk.attention %q, %kn2, %v cache %c at %pos {num_heads = 1 : i64, num_kv_heads = 1 : i64, head_dim = 16 : i64, scale = 0.25 : f32} : tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, !mk.kv_cache<1, 16> -> tensor<16xf32>
  return %o1, %o2 : tensor<16xf32>, tensor<16xf32>
}

// Left alone: norms that are not per head. An mk.rms_norm over both KV heads
// of k together (32 entries, head_dim 16), an mk.head_rms_norm whose heads
// are 32 long, and one-head norms of q and k with different eps.
// CHECK-LABEL: func.func @not_per_head
func.func @not_per_head(%x: tensor<64xf32>, %c: !mk.kv_cache<2, 16>, %c1: !mk.kv_cache<1, 16>, %pos: index) -> (tensor<64xf32>, tensor<64xf32>, tensor<16xf32>) {
  // CHECK-NOT: mk.fused_attention
  %qkv = mk.gemv %x weights [@wqkv] : tensor<64xf32> -> tensor<128xf32>
  %q = mk.slice %qkv {offset = 0 : i64} : tensor<128xf32> -> tensor<64xf32>
  %k = mk.slice %qkv {offset = 64 : i64} : tensor<128xf32> -> tensor<32xf32>
  %v = mk.slice %qkv {offset = 96 : i64} : tensor<128xf32> -> tensor<32xf32>
  %kw = mk.rms_norm %k weight @kn2 {eps = 1.0e-06 : f32} : tensor<32xf32>
  %o1 = mk.attention %q, %kw, %v cache %c at %pos {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 16 : i64, scale = 0.25 : f32} : tensor<64xf32>, tensor<32xf32>, tensor<32xf32>, !mk.kv_cache<2, 16> -> tensor<64xf32>
  %kh = mk.head_rms_norm %k weight @kn2 {eps = 1.0e-06 : f32, head_dim = 32 : i64} : tensor<32xf32>
  %o2 = mk.attention %q, %kh, %v cache %c at %pos {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 16 : i64, scale = 0.25 : f32} : tensor<64xf32>, tensor<32xf32>, tensor<32xf32>, !mk.kv_cache<2, 16> -> tensor<64xf32>
  %one = mk.gemv %x weights [@wqkv_one] : tensor<64xf32> -> tensor<48xf32>
  %q1 = mk.slice %one {offset = 0 : i64} : tensor<48xf32> -> tensor<16xf32>
  %k1 = mk.slice %one {offset = 16 : i64} : tensor<48xf32> -> tensor<16xf32>
  %v1 = mk.slice %one {offset = 32 : i64} : tensor<48xf32> -> tensor<16xf32>
  %q1n = mk.rms_norm %q1 weight @qn {eps = 1.0e-06 : f32} : tensor<16xf32>
  %k1n = mk.rms_norm %k1 weight @kn {eps = 1.0e-05 : f32} : tensor<16xf32>
  %o3 = mk.attention %q1n, %k1n, %v1 cache %c1 at %pos {num_heads = 1 : i64, num_kv_heads = 1 : i64, head_dim = 16 : i64, scale = 0.25 : f32} : tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, !mk.kv_cache<1, 16> -> tensor<16xf32>
  // CHECK-COUNT-3: mk.attention
  return %o1, %o2, %o3 : tensor<64xf32>, tensor<64xf32>, tensor<16xf32>
}
