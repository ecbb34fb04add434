// mk-fuse-swiglu: silu_mul of the two halves of a gate/up gemv becomes that
// gemv with epilogue "silu_mul".
// RUN: mk-opt %s -mk-fuse-swiglu | FileCheck %s

mk.weight @wg : tensor<160x64xf32>
mk.weight @wu : tensor<160x64xf32>
mk.weight @bg : tensor<160xf32>
mk.weight @bu : tensor<160xf32>
mk.weight @w96 : tensor<96x64xf32>
mk.weight @w224 : tensor<224x64xf32>
mk.weight @ln : tensor<64xf32>

// The norm, if any, stays with the gemv.
// CHECK-LABEL: func.func @swiglu
// CHECK-SAME: (%[[X:[^:]*]]: tensor<64xf32>)
func.func @swiglu(%x: tensor<64xf32>) -> tensor<160xf32> {
  // CHECK-NEXT: %[[H:.*]] = mk.gemv %[[X]] weights [@wg, @wu] biases [@bg, @bu] norm @ln {epilogue = "silu_mul", eps = 9.99999974E-6 : f32} : tensor<64xf32> -> tensor<160xf32>
  // CHECK-NEXT: return %[[H]]
  %gu = mk.gemv %x weights [@wg, @wu] biases [@bg, @bu] norm @ln {eps = 1.0e-05 : f32} : tensor<64xf32> -> tensor<320xf32>
  %g = mk.slice %gu {offset = 0 : i64} : tensor<320xf32> -> tensor<160xf32>
  %u = mk.slice %gu {offset = 160 : i64} : tensor<320xf32> -> tensor<160xf32>
  %h = mk.silu_mul %g, %u : tensor<160xf32>
  return %h : tensor<160xf32>
}

// Left alone: halves swapped, weights of unequal rows split at the wrong
// place, a gemv of three weights.
// CHECK-LABEL: func.func @not_fused
func.func @not_fused(%x: tensor<64xf32>) -> (tensor<160xf32>, tensor<160xf32>, tensor<160xf32>) {
  // CHECK-NOT: silu_mul"
  // CHECK-COUNT-3: mk.silu_mul
  %gu = mk.gemv %x weights [@wg, @wu] : tensor<64xf32> -> tensor<320xf32>
  %g = mk.slice %gu {offset = 0 : i64} : tensor<320xf32> -> tensor<160xf32>
  %u = mk.slice %gu {offset = 160 : i64} : tensor<320xf32> -> tensor<160xf32>
  %h1 = mk.silu_mul %u, %g : tensor<160xf32>
  %uneven = mk.gemv %x weights [@w96, @w224] : tensor<64xf32> -> tensor<320xf32>
  %a = mk.slice %uneven {offset = 0 : i64} : tensor<320xf32> -> tensor<160xf32>
  %b = mk.slice %uneven {offset = 160 : i64} : tensor<320xf32> -> tensor<160xf32>
  %h2 = mk.silu_mul %a, %b : tensor<160xf32>
  %three = mk.gemv %x weights [@wg, @wu, @wg] : tensor<64xf32> -> tensor<480xf32>
  %c = mk.slice %three {offset = 0 : i64} : tensor<480xf32> -> tensor<160xf32>
  %d = mk.slice %three {offset = 160 : i64} : tensor<480xf32> -> tensor<160xf32>
  %h3 = mk.silu_mul %c, %d : tensor<160xf32>
  return %h1, %h2, %h3 : tensor<160xf32>, tensor<160xf32>, tensor<160xf32>
}
