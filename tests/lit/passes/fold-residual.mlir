// mk-fold-residual: add(x, g) of a gemv g with epilogue "none" and no other
// user becomes g with epilogue "residual" and residual x, in either order.
// RUN: mk-opt %s -mk-fold-residual | FileCheck %s

mk.weight @wo : tensor<64x128xf32>
mk.weight @wg : tensor<128x64xf32>
mk.weight @wu : tensor<128x64xf32>
mk.weight @ln : tensor<128xf32>

// The second residual is defined after its gemv: the folded gemv takes the
// add's place, after it.
// CHECK-LABEL: func.func @folded
// CHECK-SAME: (%[[X:[^:]*]]: tensor<64xf32>, %[[O:[^:]*]]: tensor<128xf32>)
func.func @folded(%x: tensor<64xf32>, %o: tensor<128xf32>) -> tensor<64xf32> {
  // CHECK-NEXT: %[[H:.*]] = mk.gemv %[[O]] residual %[[X]] weights [@wo] norm @ln {epilogue = "residual", eps = 9.99999974E-6 : f32} : tensor<128xf32>, tensor<64xf32> -> tensor<64xf32>
  // CHECK-NEXT: %[[Y:.*]] = mk.add %[[H]], %[[H]]
  // CHECK-NEXT: %[[H2:.*]] = mk.gemv %[[O]] residual %[[Y]] weights [@wo] {epilogue = "residual"} : tensor<128xf32>, tensor<64xf32> -> tensor<64xf32>
  // CHECK-NEXT: return %[[H2]]
  %g = mk.gemv %o weights [@wo] norm @ln {eps = 1.0e-05 : f32} : tensor<128xf32> -> tensor<64xf32>
  %h = mk.add %x, %g : tensor<64xf32>
  %g2 = mk.gemv %o weights [@wo] : tensor<128xf32> -> tensor<64xf32>
  %y = mk.add %h, %h : tensor<64xf32>
  %h2 = mk.add %g2, %y : tensor<64xf32>
  return %h2 : tensor<64xf32>
}

// Left alone: a gemv with another user, one with the silu_mul epilogue.
// CHECK-LABEL: func.func @not_folded
func.func @not_folded(%x: tensor<64xf32>, %o: tensor<128xf32>, %z: tensor<128xf32>) -> (tensor<64xf32>, tensor<64xf32>, tensor<128xf32>) {
  // CHECK-NOT: "residual"
  // CHECK-COUNT-2: mk.add
  %g = mk.gemv %o weights [@wo] : tensor<128xf32> -> tensor<64xf32>
  %h = mk.add %x, %g : tensor<64xf32>
  %s = mk.gemv %x weights [@wg, @wu] {epilogue = "silu_mul"} : tensor<64xf32> -> tensor<128xf32>
  %t = mk.add %s, %z : tensor<128xf32>
  return %h, %g, %t : tensor<64xf32>, tensor<64xf32>, tensor<128xf32>
}
