// mk-linear-to-gemv: every mk.linear and mk.logits becomes a one-weight
// mk.gemv, the bias kept; no other op changes.
// RUN: mk-opt %s -mk-linear-to-gemv | FileCheck %s

mk.weight @w : tensor<32x64xf32>
mk.weight @b : tensor<32xf32>
mk.weight @lm : tensor<256x64xf32>
mk.weight @norm : tensor<64xf32>

// CHECK-LABEL: func.func @projections
// CHECK-SAME: (%[[X:.*]]: tensor<64xf32>)
func.func @projections(%x: tensor<64xf32>) -> (tensor<32xf32>, tensor<32xf32>, tensor<256xf32>) {
  // CHECK: %[[BIASED:.*]] = mk.gemv %[[X]] weights [@w] biases [@b] : tensor<64xf32> -> tensor<32xf32>
  %biased = mk.linear %x weight @w bias @b : tensor<64xf32> -> tensor<32xf32>
  // CHECK: %[[PLAIN:.*]] = mk.gemv %[[X]] weights [@w] : tensor<64xf32> -> tensor<32xf32>
  %plain = mk.linear %x weight @w : tensor<64xf32> -> tensor<32xf32>
  // CHECK: %[[LOGITS:.*]] = mk.gemv %[[X]] weights [@lm] : tensor<64xf32> -> tensor<256xf32>
  %logits = mk.logits %x weight @lm : tensor<64xf32> -> tensor<256xf32>
  // CHECK: return %[[BIASED]], %[[PLAIN]], %[[LOGITS]]
  return %biased, %plain, %logits : tensor<32xf32>, tensor<32xf32>, tensor<256xf32>
}

// Not a linear map of one weight: left as it is.
// CHECK-LABEL: func.func @others
func.func @others(%x: tensor<64xf32>) -> tensor<64xf32> {
  // CHECK-NEXT: %[[N:.*]] = mk.rms_norm
  %n = mk.rms_norm %x weight @norm {eps = 1.0e-05 : f32} : tensor<64xf32>
  // CHECK-NEXT: %[[H:.*]] = mk.silu_mul %[[N]], %[[N]]
  %h = mk.silu_mul %n, %n : tensor<64xf32>
  // CHECK-NEXT: return %[[H]]
  return %h : tensor<64xf32>
}
