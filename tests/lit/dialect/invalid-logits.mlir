// mk.logits: weight [vocab, hidden].
// RUN: mk-opt %s -split-input-file -verify-diagnostics

mk.weight @lm_head : tensor<64x256xf32>

func.func @f(%x: tensor<64xf32>) -> tensor<256xf32> {
  // expected-error @+1 {{'mk.logits' op weight @lm_head has shape [64, 256], expected [256, 64]}}
  %l = mk.logits %x weight @lm_head : tensor<64xf32> -> tensor<256xf32>
  return %l : tensor<256xf32>
}

// -----

func.func @f(%x: tensor<64xf32>) -> tensor<256xf32> {
  // expected-error @+1 {{'mk.logits' op weight @lm_head is not defined}}
  %l = mk.logits %x weight @lm_head : tensor<64xf32> -> tensor<256xf32>
  return %l : tensor<256xf32>
}
