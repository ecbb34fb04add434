// mk-fold-rms-norm: an rms_norm read only as the input of gemvs without a
// norm is folded into each of them and disappears.
// RUN: mk-opt %s -mk-fold-rms-norm | FileCheck %s

mk.weight @ln : tensor<64xf32>
mk.weight @ln2 : tensor<64xf32>
mk.weight @wqkv : tensor<128x64xf32>
mk.weight @wo : tensor<64x64xf32>
mk.weight @hn : tensor<16xf32>
mk.weight @w16 : tensor<8x16xf32>

// CHECK-LABEL: func.func @folded
// CHECK-SAME: (%[[X:[^:]*]]: tensor<64xf32>)
func.func @folded(%x: tensor<64xf32>) -> (tensor<128xf32>, tensor<64xf32>) {
  // CHECK-NEXT: %[[A:.*]] = mk.gemv %[[X]] weights [@wqkv] norm @ln {eps = 9.99999974E-6 : f32} : tensor<64xf32> -> tensor<128xf32>
  // CHECK-NEXT: %[[B:.*]] = mk.gemv %[[X]] weights [@wo] norm @ln {eps = 9.99999974E-6 : f32} : tensor<64xf32> -> tensor<64xf32>
  // CHECK-NEXT: return %[[A]], %[[B]]
  %n = mk.rms_norm %x weight @ln {eps = 1.0e-05 : f32} : tensor<64xf32>
  %a = mk.gemv %n weights [@wqkv] : tensor<64xf32> -> tensor<128xf32>
  %b = mk.gemv %n weights [@wo] : tensor<64xf32> -> tensor<64xf32>
  return %a, %b : tensor<128xf32>, tensor<64xf32>
}

// Left alone: a norm also read by an add, one read as a residual, one
// read by a gemv that already has a norm.
// CHECK-LABEL: func.func @not_folded
func.func @not_folded(%x: tensor<64xf32>, %y: tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) {
  // CHECK-COUNT-3: mk.rms_norm
  // CHECK-NOT: mk.rms_norm
  %n1 = mk.rms_norm %x weight @ln {eps = 1.0e-05 : f32} : tensor<64xf32>
  %a = mk.gemv %n1 weights [@wo] : tensor<64xf32> -> tensor<64xf32>
  %s = mk.add %n1, %x : tensor<64xf32>
  %n2 = mk.rms_norm %x weight @ln {eps = 1.0e-05 : f32} : tensor<64xf32>
  %r = mk.gemv %y residual %n2 weights [@wo] {epilogue = "residual"} : tensor<64xf32>, tensor<64xf32> -> tensor<64xf32>
  %n3 = mk.rms_norm %x weight @ln {eps = 1.0e-05 : f32} : tensor<64xf32>
  %d = mk.gemv %n3 weights [@wo] norm @ln2 {eps = 1.0e-05 : f32} : tensor<64xf32> -> tensor<64xf32>
  return %a, %s, %r, %d : tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>
}

// An mk.head_rms_norm of one head (head_dim is its whole length) is the
// plain norm and folds alike.
// CHECK-LABEL: func.func @one_head
// CHECK-SAME: (%[[X:[^:]*]]: tensor<16xf32>)
func.func @one_head(%x: tensor<16xf32>) -> tensor<8xf32> {
  // CHECK-NEXT: %[[A:.*]] = mk.gemv %[[X]] weights [@w16] norm @hn {eps = 9.99999974E-6 : f32} : tensor<16xf32> -> tensor<8xf32>
  // CHECK-NEXT: return %[[A]]
  %n = mk.head_rms_norm %x weight @hn {eps = 1.0e-05 : f32, head_dim = 16 : i64} : tensor<16xf32>
  %a = mk.gemv %n weights [@w16] : tensor<16xf32> -> tensor<8xf32>
  return %a : tensor<8xf32>
}

// Left alone: a head norm of several heads is not a gemv's norm.
// CHECK-LABEL: func.func @several_heads
func.func @several_heads(%x: tensor<64xf32>) -> tensor<64xf32> {
  // CHECK-NEXT: %[[N:.*]] = mk.head_rms_norm
  // CHECK-NEXT: mk.gemv %[[N]] weights [@wo] :
  %n = mk.head_rms_norm %x weight @hn {eps = 1.0e-05 : f32, head_dim = 16 : i64} : tensor<64xf32>
  %a = mk.gemv %n weights [@wo] : tensor<64xf32> -> tensor<64xf32>
  return %a : tensor<64xf32>
}
