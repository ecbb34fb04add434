// -mk-fusion on a Qwen3 layer with one KV head, as the importer writes it:
// the k norm, one head long, is an mk.rms_norm, the q norm an
// mk.head_rms_norm. Both fold into mk.fused_attention, and the model lowers
// to tasks like any other.
// RUN: mk-opt %s -mk-fusion | FileCheck %s --implicit-check-not="= mk.slice" --implicit-check-not="rms_norm"
// RUN: mkc compile %s --emit=tasks --max-context=32 --num-sms=8 | FileCheck %s --check-prefix=TASKS

// TASKS: model: 1 layers, max context 32

mk.weight @embed : tensor<256x64xf32>
mk.weight @ln1 : tensor<64xf32>
mk.weight @wq : tensor<64x64xf32>
mk.weight @wk : tensor<16x64xf32>
mk.weight @wv : tensor<16x64xf32>
mk.weight @qn : tensor<16xf32>
mk.weight @kn : tensor<16xf32>
mk.weight @wo : tensor<64x64xf32>
mk.weight @ln2 : tensor<64xf32>
mk.weight @wg : tensor<160x64xf32>
mk.weight @wu : tensor<160x64xf32>
mk.weight @wd : tensor<64x160xf32>
mk.weight @lnf : tensor<64xf32>

// CHECK-LABEL: func.func @decode_step
// CHECK-NEXT: %[[X:.*]] = mk.embedding @embed
// CHECK-NEXT: %[[QKV:.*]] = mk.gemv %[[X]] weights [@wq, @wk, @wv] norm @ln1 {eps = 9.99999974E-6 : f32} : tensor<64xf32> -> tensor<96xf32>
// CHECK-NEXT: %[[O:.*]] = mk.fused_attention %[[QKV]] cache %{{.*}} at %{{.*}} q_norm @qn k_norm @kn {{.*}}num_heads = 4 : i64, num_kv_heads = 1 : i64, rotary_dim = 16 : i64{{.*}} : tensor<96xf32>, !mk.kv_cache<1, 16> -> tensor<64xf32>
// CHECK-NEXT: %[[H:.*]] = mk.gemv %[[O]] residual %[[X]] weights [@wo] {epilogue = "residual"}
// CHECK-NEXT: mk.gemv %[[H]] weights [@wg, @wu] norm @ln2 {epilogue = "silu_mul"
// CHECK-NEXT: mk.gemv
// CHECK-NEXT: mk.gemv {{.*}} weights [@embed] norm @lnf
// CHECK-NEXT: mk.argmax
func.func @decode_step(%token: i64, %pos: index, %cache: !mk.kv_cache<1, 16>) -> (tensor<256xf32>, i64) {
  %x = mk.embedding @embed[%token] : tensor<64xf32>
  %n = mk.rms_norm %x weight @ln1 {eps = 1.0e-05 : f32} : tensor<64xf32>
  %q = mk.linear %n weight @wq : tensor<64xf32> -> tensor<64xf32>
  %k = mk.linear %n weight @wk : tensor<64xf32> -> tensor<16xf32>
  %v = mk.linear %n weight @wv : tensor<64xf32> -> tensor<16xf32>
  %qn = mk.head_rms_norm %q weight @qn {eps = 1.0e-06 : f32, head_dim = 16 : i64} : tensor<64xf32>
  %kn = mk.rms_norm %k weight @kn {eps = 1.0e-06 : f32} : tensor<16xf32>
  %qr = mk.rotary %qn at %pos {head_dim = 16 : i64, rotary_dim = 16 : i64, inv_freq = dense<[1.0, 0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625, 0.0078125]> : tensor<8xf32>} : tensor<64xf32>
  %kr = mk.rotary %kn at %pos {head_dim = 16 : i64, rotary_dim = 16 : i64, inv_freq = dense<[1.0, 0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625, 0.0078125]> : tensor<8xf32>} : tensor<16xf32>
  %o = mk.attention %qr, %kr, %v cache %cache at %pos {num_heads = 4 : i64, num_kv_heads = 1 : i64, head_dim = 16 : i64, scale = 0.25 : f32} : tensor<64xf32>, tensor<16xf32>, tensor<16xf32>, !mk.kv_cache<1, 16> -> tensor<64xf32>
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
