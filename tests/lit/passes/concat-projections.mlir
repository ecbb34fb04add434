// mk-concat-projections: plain gemvs of one input feeding one attention
// (q, k, v) or one silu_mul (gate, up) become one gemv and slices of it.
// RUN: mk-opt %s -mk-concat-projections | FileCheck %s

mk.weight @wq : tensor<64x64xf32>
mk.weight @wk : tensor<32x64xf32>
mk.weight @wv : tensor<32x64xf32>
mk.weight @bq : tensor<64xf32>
mk.weight @bk : tensor<32xf32>
mk.weight @bv : tensor<32xf32>
mk.weight @qn : tensor<16xf32>
mk.weight @wg : tensor<160x64xf32>
mk.weight @wu : tensor<160x64xf32>
mk.weight @ln : tensor<64xf32>
mk.weight @wk1 : tensor<16x64xf32>
mk.weight @wv1 : tensor<16x64xf32>
mk.weight @kn : tensor<16xf32>
mk.weight @kn2 : tensor<32xf32>

// Stacked before the first projection (v here), in q, k, v order; the per-head
// norm and rotary now read the slices.
// CHECK-LABEL: func.func @qkv
// CHECK-SAME: (%[[X:[^:]*]]: tensor<64xf32>
func.func @qkv(%x: tensor<64xf32>, %c: !mk.kv_cache<2, 16>, %pos: index) -> tensor<64xf32> {
  // CHECK-NEXT: %[[QKV:.*]] = mk.gemv %[[X]] weights [@wq, @wk, @wv] : tensor<64xf32> -> tensor<128xf32>
  // CHECK-NEXT: %[[Q:.*]] = mk.slice %[[QKV]] {offset = 0 : i64} : tensor<128xf32> -> tensor<64xf32>
  // CHECK-NEXT: %[[K:.*]] = mk.slice %[[QKV]] {offset = 64 : i64} : tensor<128xf32> -> tensor<32xf32>
  // CHECK-NEXT: %[[V:.*]] = mk.slice %[[QKV]] {offset = 96 : i64} : tensor<128xf32> -> tensor<32xf32>
  // CHECK-NOT: mk.gemv
  %v = mk.gemv %x weights [@wv] : tensor<64xf32> -> tensor<32xf32>
  %q = mk.gemv %x weights [@wq] : tensor<64xf32> -> tensor<64xf32>
  // CHECK: %[[QN:.*]] = mk.head_rms_norm %[[Q]]
  %qn = mk.head_rms_norm %q weight @qn {eps = 1.0e-06 : f32, head_dim = 16 : i64} : tensor<64xf32>
  // CHECK: %[[QR:.*]] = mk.rotary %[[QN]]
  %qr = mk.rotary %qn at %pos {head_dim = 16 : i64, rotary_dim = 4 : i64, inv_freq = dense<[1.0, 0.5]> : tensor<2xf32>} : tensor<64xf32>
  %k = mk.gemv %x weights [@wk] : tensor<64xf32> -> tensor<32xf32>
  // CHECK: %[[KR:.*]] = mk.rotary %[[K]]
  %kr = mk.rotary %k at %pos {head_dim = 16 : i64, rotary_dim = 4 : i64, inv_freq = dense<[1.0, 0.5]> : tensor<2xf32>} : tensor<32xf32>
  // CHECK: mk.attention %[[QR]], %[[KR]], %[[V]] cache
  %o = mk.attention %qr, %kr, %v cache %c at %pos {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 16 : i64, scale = 0.25 : f32} : tensor<64xf32>, tensor<32xf32>, tensor<32xf32>, !mk.kv_cache<2, 16> -> tensor<64xf32>
  return %o : tensor<64xf32>
}

// CHECK-LABEL: func.func @qkv_biases
func.func @qkv_biases(%x: tensor<64xf32>, %c: !mk.kv_cache<2, 16>, %pos: index) -> tensor<64xf32> {
  // CHECK: mk.gemv %{{.*}} weights [@wq, @wk, @wv] biases [@bq, @bk, @bv] : tensor<64xf32> -> tensor<128xf32>
  %q = mk.gemv %x weights [@wq] biases [@bq] : tensor<64xf32> -> tensor<64xf32>
  %k = mk.gemv %x weights [@wk] biases [@bk] : tensor<64xf32> -> tensor<32xf32>
  %v = mk.gemv %x weights [@wv] biases [@bv] : tensor<64xf32> -> tensor<32xf32>
  %o = mk.attention %q, %k, %v cache %c at %pos {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 16 : i64, scale = 0.25 : f32} : tensor<64xf32>, tensor<32xf32>, tensor<32xf32>, !mk.kv_cache<2, 16> -> tensor<64xf32>
  return %o : tensor<64xf32>
}

// CHECK-LABEL: func.func @gate_up
// CHECK-SAME: (%[[X:[^:]*]]: tensor<64xf32>)
func.func @gate_up(%x: tensor<64xf32>) -> tensor<160xf32> {
  // CHECK-NEXT: %[[GU:.*]] = mk.gemv %[[X]] weights [@wg, @wu] : tensor<64xf32> -> tensor<320xf32>
  // CHECK-NEXT: %[[G:.*]] = mk.slice %[[GU]] {offset = 0 : i64} : tensor<320xf32> -> tensor<160xf32>
  // CHECK-NEXT: %[[U:.*]] = mk.slice %[[GU]] {offset = 160 : i64} : tensor<320xf32> -> tensor<160xf32>
  // CHECK-NEXT: %[[H:.*]] = mk.silu_mul %[[G]], %[[U]] : tensor<160xf32>
  // CHECK-NEXT: return %[[H]]
  %g = mk.gemv %x weights [@wg] : tensor<64xf32> -> tensor<160xf32>
  %u = mk.gemv %x weights [@wu] : tensor<64xf32> -> tensor<160xf32>
  %h = mk.silu_mul %g, %u : tensor<160xf32>
  return %h : tensor<160xf32>
}

// Left alone: biases on some parts only, different inputs, a part that
// already has a norm, the same gemv read twice.
// CHECK-LABEL: func.func @not_stacked
func.func @not_stacked(%x: tensor<64xf32>, %y: tensor<64xf32>, %c: !mk.kv_cache<2, 16>, %pos: index) -> (tensor<64xf32>, tensor<160xf32>, tensor<160xf32>, tensor<160xf32>) {
  // CHECK-NOT: mk.slice
  %q = mk.gemv %x weights [@wq] biases [@bq] : tensor<64xf32> -> tensor<64xf32>
  %k = mk.gemv %x weights [@wk] : tensor<64xf32> -> tensor<32xf32>
  %v = mk.gemv %x weights [@wv] : tensor<64xf32> -> tensor<32xf32>
  %o = mk.attention %q, %k, %v cache %c at %pos {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 16 : i64, scale = 0.25 : f32} : tensor<64xf32>, tensor<32xf32>, tensor<32xf32>, !mk.kv_cache<2, 16> -> tensor<64xf32>
  %g1 = mk.gemv %x weights [@wg] : tensor<64xf32> -> tensor<160xf32>
  %u1 = mk.gemv %y weights [@wu] : tensor<64xf32> -> tensor<160xf32>
  %h1 = mk.silu_mul %g1, %u1 : tensor<160xf32>
  %g2 = mk.gemv %x weights [@wg] norm @ln {eps = 1.0e-05 : f32} : tensor<64xf32> -> tensor<160xf32>
  %u2 = mk.gemv %x weights [@wu] : tensor<64xf32> -> tensor<160xf32>
  %h2 = mk.silu_mul %g2, %u2 : tensor<160xf32>
  %h3 = mk.silu_mul %u2, %u2 : tensor<160xf32>
  return %o, %h1, %h2, %h3 : tensor<64xf32>, tensor<160xf32>, tensor<160xf32>, tensor<160xf32>
}

// One KV head: the k norm, one head long, is an mk.rms_norm, looked through
// as the per-head norm it is.
// CHECK-LABEL: func.func @one_kv_head
func.func @one_kv_head(%x: tensor<64xf32>, %c: !mk.kv_cache<1, 16>, %pos: index) -> tensor<64xf32> {
  // CHECK-NEXT: %[[QKV:.*]] = mk.gemv %{{.*}} weights [@wq, @wk1, @wv1] : tensor<64xf32> -> tensor<96xf32>
  // CHECK-NEXT: %[[Q:.*]] = mk.slice %[[QKV]] {offset = 0 : i64}
  // CHECK-NEXT: %[[K:.*]] = mk.slice %[[QKV]] {offset = 64 : i64} : tensor<96xf32> -> tensor<16xf32>
  // CHECK-NEXT: %[[V:.*]] = mk.slice %[[QKV]] {offset = 80 : i64}
  // CHECK-NEXT: %[[QN:.*]] = mk.head_rms_norm %[[Q]]
  // CHECK-NEXT: %[[KN:.*]] = mk.rms_norm %[[K]]
  // CHECK-NEXT: mk.attention %[[QN]], %[[KN]], %[[V]]
  %q = mk.gemv %x weights [@wq] : tensor<64xf32> -> tensor<64xf32>
  %k = mk.gemv %x weights [@wk1] : tensor<64xf32> -> tensor<16xf32>
  %v = mk.gemv %x weights [@wv1] : tensor<64xf32> -> tensor<16xf32>
  %qn = mk.head_rms_norm %q weight @qn {eps = 1.0e-06 : f32, head_dim = 16 : i64} : tensor<64xf32>
  %kn = mk.rms_norm %k weight @kn {eps = 1.0e-06 : f32} : tensor<16xf32>
  %o = mk.attention %qn, %kn, %v cache %c at %pos {num_heads = 4 : i64, num_kv_heads = 1 : i64, head_dim = 16 : i64, scale = 0.25 : f32} : tensor<64xf32>, tensor<16xf32>, tensor<16xf32>, !mk.kv_cache<1, 16> -> tensor<64xf32>
  return %o : tensor<64xf32>
}

// Left alone: a norm over both KV heads of k at once, as mk.rms_norm or as
// mk.head_rms_norm of heads longer than the attention's, is no per-head norm
// and could not be fused.
// CHECK-LABEL: func.func @not_per_head
func.func @not_per_head(%x: tensor<64xf32>, %c: !mk.kv_cache<2, 16>, %pos: index) -> (tensor<64xf32>, tensor<64xf32>) {
  // CHECK-NOT: mk.slice
  %q = mk.gemv %x weights [@wq] : tensor<64xf32> -> tensor<64xf32>
  %k = mk.gemv %x weights [@wk] : tensor<64xf32> -> tensor<32xf32>
  %v = mk.gemv %x weights [@wv] : tensor<64xf32> -> tensor<32xf32>
  %kn = mk.rms_norm %k weight @kn2 {eps = 1.0e-06 : f32} : tensor<32xf32>
  %o1 = mk.attention %q, %kn, %v cache %c at %pos {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 16 : i64, scale = 0.25 : f32} : tensor<64xf32>, tensor<32xf32>, tensor<32xf32>, !mk.kv_cache<2, 16> -> tensor<64xf32>
  %q2 = mk.gemv %x weights [@wq] : tensor<64xf32> -> tensor<64xf32>
  %k2 = mk.gemv %x weights [@wk] : tensor<64xf32> -> tensor<32xf32>
  %v2 = mk.gemv %x weights [@wv] : tensor<64xf32> -> tensor<32xf32>
  %kh = mk.head_rms_norm %k2 weight @kn2 {eps = 1.0e-06 : f32, head_dim = 32 : i64} : tensor<32xf32>
  %o2 = mk.attention %q2, %kh, %v2 cache %c at %pos {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 16 : i64, scale = 0.25 : f32} : tensor<64xf32>, tensor<32xf32>, tensor<32xf32>, !mk.kv_cache<2, 16> -> tensor<64xf32>
  // CHECK: return
  return %o1, %o2 : tensor<64xf32>, tensor<64xf32>
}
