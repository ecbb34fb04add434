// Every op and type prints in a form that parses back to the same IR, in the
// custom and in the generic syntax.
// RUN: mk-opt %s | mk-opt | FileCheck %s
// RUN: mk-opt %s -mlir-print-op-generic | mk-opt | FileCheck %s

// CHECK: mk.weight @embed : tensor<256x64xbf16> {source = "model.embed_tokens.weight"}
// CHECK: mk.weight @wk : tensor<32x64xf16>

mk.weight @embed : tensor<256x64xbf16> {source = "model.embed_tokens.weight"}
mk.weight @norm : tensor<64xf32>
mk.weight @wq : tensor<64x64xf32>
mk.weight @bq : tensor<64xf32>
mk.weight @wk : tensor<32x64xf16>
mk.weight @wv : tensor<32x64xf32>
mk.weight @qn : tensor<16xf32>
mk.weight @bk : tensor<32xf32>
mk.weight @bv : tensor<32xf32>

// CHECK-LABEL: func.func @decode_step
// CHECK-SAME: %{{.*}}: !mk.kv_cache<2, 16>
func.func @decode_step(%token: i64, %pos: index, %cache: !mk.kv_cache<2, 16>) -> (tensor<256xf32>, i64) {
  // CHECK: %[[X:.*]] = mk.embedding @embed[%{{.*}}] : tensor<64xf32>
  %x = mk.embedding @embed[%token] : tensor<64xf32>
  // CHECK: mk.rms_norm %[[X]] weight @norm {eps = 9.99999974E-6 : f32} : tensor<64xf32>
  %n = mk.rms_norm %x weight @norm {eps = 1.0e-05 : f32} : tensor<64xf32>
  // CHECK: mk.linear %{{.*}} weight @wq bias @bq : tensor<64xf32> -> tensor<64xf32>
  %q = mk.linear %n weight @wq bias @bq : tensor<64xf32> -> tensor<64xf32>
  %k = mk.linear %n weight @wk : tensor<64xf32> -> tensor<32xf32>
  %v = mk.linear %n weight @wv : tensor<64xf32> -> tensor<32xf32>
  // CHECK: mk.head_rms_norm
  %qn = mk.head_rms_norm %q weight @qn {eps = 1.0e-06 : f32, head_dim = 16 : i64} : tensor<64xf32>
  // CHECK: mk.rotary %{{.*}} at %{{.*}} {
  %qr = mk.rotary %qn at %pos {head_dim = 16 : i64, rotary_dim = 16 : i64, theta = 1.0e+04 : f64, inv_freq = dense<[1.0, 0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625, 0.0078125]> : tensor<8xf32>} : tensor<64xf32>
  // CHECK: mk.attention %{{.*}}, %{{.*}}, %{{.*}} cache %{{.*}} at %{{.*}} {{{.*}}window = 4096 : i64}
  %o = mk.attention %qr, %k, %v cache %cache at %pos {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 16 : i64, scale = 0.25 : f32, window = 4096 : i64} : tensor<64xf32>, tensor<32xf32>, tensor<32xf32>, !mk.kv_cache<2, 16> -> tensor<64xf32>
  %h = mk.add %x, %o : tensor<64xf32>
  %m = mk.silu_mul %h, %h : tensor<64xf32>
  // CHECK: mk.gelu_tanh_mul %{{.*}}, %{{.*}} : tensor<64xf32>
  %g = mk.gelu_tanh_mul %m, %h : tensor<64xf32>
  // CHECK: mk.logits %{{.*}} weight @embed : tensor<64xf32> -> tensor<256xf32>
  %l = mk.logits %g weight @embed : tensor<64xf32> -> tensor<256xf32>
  // CHECK: mk.argmax %{{.*}} : tensor<256xf32>
  %t = mk.argmax %l : tensor<256xf32>
  return %l, %t : tensor<256xf32>, i64
}

// Partial, interleaved rotary (GPT-J style pairs) and MQA attention.
// CHECK-LABEL: func.func @variants
func.func @variants(%x: tensor<64xf32>, %k: tensor<16xf32>, %pos: index, %cache: !mk.kv_cache<1, 16>) -> tensor<64xf32> {
  // CHECK: mk.rotary %{{.*}} at %{{.*}} {head_dim = 16 : i64, interleaved, inv_freq = dense<[1.000000e+00, 1.000000e-01]> : tensor<2xf32>, rotary_dim = 4 : i64, theta = 1.000000e+02 : f64} : tensor<64xf32>
  %r = mk.rotary %x at %pos {head_dim = 16 : i64, rotary_dim = 4 : i64, theta = 100.0 : f64, inv_freq = dense<[1.0, 0.1]> : tensor<2xf32>, interleaved} : tensor<64xf32>
  // CHECK: mk.attention {{.*}} {head_dim = 16 : i64, num_heads = 4 : i64, num_kv_heads = 1 : i64, scale = 2.500000e-01 : f32} : tensor<64xf32>, tensor<16xf32>, tensor<16xf32>, !mk.kv_cache<1, 16> -> tensor<64xf32>
  %o = mk.attention %r, %k, %k cache %cache at %pos {num_heads = 4 : i64, num_kv_heads = 1 : i64, head_dim = 16 : i64, scale = 0.25 : f32} : tensor<64xf32>, tensor<16xf32>, tensor<16xf32>, !mk.kv_cache<1, 16> -> tensor<64xf32>
  return %o : tensor<64xf32>
}

// The fused ops: a stacked gemv with biases and a norm, its slices, a fused
// attention with q/k norm and rotary, gemvs with each epilogue.
// CHECK-LABEL: func.func @fused
func.func @fused(%x: tensor<64xf32>, %pos: index, %cache: !mk.kv_cache<2, 16>) -> (tensor<64xf32>, tensor<32xf32>) {
  // CHECK: %[[QKV:.*]] = mk.gemv %{{.*}} weights [@wq, @wk, @wv] biases [@bq, @bk, @bv] norm @norm {eps = 9.99999974E-6 : f32} : tensor<64xf32> -> tensor<128xf32>
  %qkv = mk.gemv %x weights [@wq, @wk, @wv] biases [@bq, @bk, @bv] norm @norm {eps = 1.0e-05 : f32} : tensor<64xf32> -> tensor<128xf32>
  // CHECK: mk.slice %[[QKV]] {offset = 64 : i64} : tensor<128xf32> -> tensor<32xf32>
  %k = mk.slice %qkv {offset = 64 : i64} : tensor<128xf32> -> tensor<32xf32>
  // CHECK: %[[O:.*]] = mk.fused_attention %[[QKV]] cache %{{.*}} at %{{.*}} q_norm @qn k_norm @qn {head_dim = 16 : i64, interleaved, inv_freq = dense<[1.000000e+00, 5.000000e-01]> : tensor<2xf32>, norm_eps = 9.99999997E-7 : f32, num_heads = 4 : i64, num_kv_heads = 2 : i64, rotary_dim = 4 : i64, scale = 2.500000e-01 : f32, theta = 1.000000e+04 : f64} : tensor<128xf32>, !mk.kv_cache<2, 16> -> tensor<64xf32>
  %o = mk.fused_attention %qkv cache %cache at %pos q_norm @qn k_norm @qn {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 16 : i64, scale = 0.25 : f32, norm_eps = 1.0e-06 : f32, rotary_dim = 4 : i64, inv_freq = dense<[1.0, 0.5]> : tensor<2xf32>, interleaved, theta = 1.0e+04 : f64} : tensor<128xf32>, !mk.kv_cache<2, 16> -> tensor<64xf32>
  // CHECK: %[[H:.*]] = mk.gemv %[[O]] residual %{{.*}} weights [@wq] {epilogue = "residual"} : tensor<64xf32>, tensor<64xf32> -> tensor<64xf32>
  %h = mk.gemv %o residual %x weights [@wq] {epilogue = "residual"} : tensor<64xf32>, tensor<64xf32> -> tensor<64xf32>
  // CHECK: mk.gemv %[[H]] weights [@wk, @wv] {epilogue = "silu_mul"} : tensor<64xf32> -> tensor<32xf32>
  %m = mk.gemv %h weights [@wk, @wv] {epilogue = "silu_mul"} : tensor<64xf32> -> tensor<32xf32>
  return %h, %m : tensor<64xf32>, tensor<32xf32>
}
