// -mk-fusion: all fusion passes in pipeline order turn one decoder layer
// into embedding, gemv, fused_attention and argmax.
// RUN: mk-opt %s -mk-fusion | FileCheck %s --implicit-check-not="= mk.slice"

mk.weight @embed : tensor<256x64xf32>
mk.weight @ln1 : tensor<64xf32>
mk.weight @wq : tensor<64x64xf32>
mk.weight @wk : tensor<32x64xf32>
mk.weight @wv : tensor<32x64xf32>
mk.weight @wo : tensor<64x64xf32>
mk.weight @ln2 : tensor<64xf32>
mk.weight @wg : tensor<160x64xf32>
mk.weight @wu : tensor<160x64xf32>
mk.weight @wd : tensor<64x160xf32>
mk.weight @lnf : tensor<64xf32>

// CHECK-LABEL: func.func @decode_step
// CHECK-SAME: (%[[TOKEN:[^:]*]]: i64, %[[POS:[^:]*]]: index, %[[CACHE:[^:]*]]: !mk.kv_cache<2, 16>)
func.func @decode_step(%token: i64, %pos: index, %cache: !mk.kv_cache<2, 16>) -> (tensor<256xf32>, i64) {
  // CHECK-NEXT: %[[X:.*]] = mk.embedding @embed[%[[TOKEN]]]
  // CHECK-NEXT: %[[QKV:.*]] = mk.gemv %[[X]] weights [@wq, @wk, @wv] norm @ln1 {eps = 9.99999974E-6 : f32} : tensor<64xf32> -> tensor<128xf32>
  // CHECK-NEXT: %[[O:.*]] = mk.fused_attention %[[QKV]] cache %[[CACHE]] at %[[POS]] {head_dim = 16 : i64, inv_freq = dense<[1.000000e+00, 5.000000e-01]> : tensor<2xf32>, num_heads = 4 : i64, num_kv_heads = 2 : i64, rotary_dim = 4 : i64, scale = 2.500000e-01 : f32}
  // CHECK-NEXT: %[[H:.*]] = mk.gemv %[[O]] residual %[[X]] weights [@wo] {epilogue = "residual"}
  // CHECK-NEXT: %[[M:.*]] = mk.gemv %[[H]] weights [@wg, @wu] norm @ln2 {epilogue = "silu_mul", eps = 9.99999974E-6 : f32} : tensor<64xf32> -> tensor<160xf32>
  // CHECK-NEXT: %[[H2:.*]] = mk.gemv %[[M]] residual %[[H]] weights [@wd] {epilogue = "residual"}
  // CHECK-NEXT: %[[L:.*]] = mk.gemv %[[H2]] weights [@embed] norm @lnf {eps = 9.99999974E-6 : f32} : tensor<64xf32> -> tensor<256xf32>
  // CHECK-NEXT: %[[T:.*]] = mk.argmax %[[L]]
  // CHECK-NEXT: return %[[L]], %[[T]]
  %x = mk.embedding @embed[%token] : tensor<64xf32>
  %n = mk.rms_norm %x weight @ln1 {eps = 1.0e-05 : f32} : tensor<64xf32>
  %q = mk.linear %n weight @wq : tensor<64xf32> -> tensor<64xf32>
  %k = mk.linear %n weight @wk : tensor<64xf32> -> tensor<32xf32>
  %v = mk.linear %n weight @wv : tensor<64xf32> -> tensor<32xf32>
  %qr = mk.rotary %q at %pos {head_dim = 16 : i64, rotary_dim = 4 : i64, inv_freq = dense<[1.0, 0.5]> : tensor<2xf32>} : tensor<64xf32>
  %kr = mk.rotary %k at %pos {head_dim = 16 : i64, rotary_dim = 4 : i64, inv_freq = dense<[1.0, 0.5]> : tensor<2xf32>} : tensor<32xf32>
  %o = mk.attention %qr, %kr, %v cache %cache at %pos {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 16 : i64, scale = 0.25 : f32} : tensor<64xf32>, tensor<32xf32>, tensor<32xf32>, !mk.kv_cache<2, 16> -> tensor<64xf32>
  %a = mk.linear %o weight @wo : tensor<64xf32> -> tensor<64xf32>
  %h = mk.add %x, %a : tensor<64xf32>
  %n2 = mk.rms_norm %h weight @ln2 {eps = 1.0e-05 : f32} : tensor<64xf32>
  %g = mk.linear %n2 weight @wg : tensor<64xf32> -> tensor<160xf32>
  %u = mk.linear %n2 weight @wu : tensor<64xf32> -> tensor<160xf32>
  %m = mk.silu_mul %g, %u : tensor<160xf32>
  %d = mk.linear %m weight @wd : tensor<160xf32> -> tensor<64xf32>
  %h2 = mk.add %h, %d : tensor<64xf32>
  %nf = mk.rms_norm %h2 weight @lnf {eps = 1.0e-05 : f32} : tensor<64xf32>
  %l = mk.logits %nf weight @embed : tensor<64xf32> -> tensor<256xf32>
  %t = mk.argmax %l : tensor<256xf32>
  return %l, %t : tensor<256xf32>, i64
}
