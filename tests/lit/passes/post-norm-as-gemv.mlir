// mk-post-norm-as-gemv: add(x, rms_norm(y)) of a norm with no other user
// becomes a gemv of y through an identity of y's width, the norm its
// prologue and x its residual, in either order; one identity a width.
// RUN: mk-opt %s -mk-post-norm-as-gemv | FileCheck %s

mk.weight @post : tensor<64xf32>
mk.weight @wide : tensor<32xf32>

// CHECK: mk.weight @mk.identity.64 : tensor<64x64xf32> {source = "mk.identity"}
// CHECK: mk.weight @mk.identity.32 : tensor<32x32xf32> {source = "mk.identity"}
// CHECK-NOT: mk.identity.64 :
// CHECK-LABEL: func.func @folded
// CHECK-SAME: (%[[X:[^:]*]]: tensor<64xf32>, %[[Y:[^:]*]]: tensor<64xf32>, %[[Z:[^:]*]]: tensor<32xf32>)
func.func @folded(%x: tensor<64xf32>, %y: tensor<64xf32>, %z: tensor<32xf32>) -> (tensor<64xf32>, tensor<32xf32>) {
  // CHECK-NEXT: %[[H:.*]] = mk.gemv %[[Y]] residual %[[X]] weights [@mk.identity.64] norm @post {epilogue = "residual", eps = 9.99999997E-7 : f32} : tensor<64xf32>, tensor<64xf32> -> tensor<64xf32>
  // CHECK-NEXT: %[[H2:.*]] = mk.gemv %[[Y]] residual %[[H]] weights [@mk.identity.64] norm @post {epilogue = "residual", eps = 9.99999997E-7 : f32}
  // CHECK-NEXT: %[[W:.*]] = mk.gemv %[[Z]] residual %[[Z]] weights [@mk.identity.32] norm @wide
  // CHECK-NEXT: return %[[H2]], %[[W]]
  %n = mk.rms_norm %y weight @post {eps = 1.0e-06 : f32} : tensor<64xf32>
  %h = mk.add %x, %n : tensor<64xf32>
  %n2 = mk.rms_norm %y weight @post {eps = 1.0e-06 : f32} : tensor<64xf32>
  %h2 = mk.add %n2, %h : tensor<64xf32>
  %m = mk.rms_norm %z weight @wide {eps = 1.0e-06 : f32} : tensor<32xf32>
  %w = mk.add %z, %m : tensor<32xf32>
  return %h2, %w : tensor<64xf32>, tensor<32xf32>
}

// Left alone: a norm with another user, a norm that feeds no add.
// CHECK-LABEL: func.func @not_folded
func.func @not_folded(%x: tensor<64xf32>, %y: tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>) {
  // CHECK-NOT: mk.gemv
  %n = mk.rms_norm %y weight @post {eps = 1.0e-06 : f32} : tensor<64xf32>
  %h = mk.add %x, %n : tensor<64xf32>
  return %h, %n : tensor<64xf32>, tensor<64xf32>
}
