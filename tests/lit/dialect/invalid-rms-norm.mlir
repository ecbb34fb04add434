// mk.rms_norm: one weight entry per entry of the vector.
// RUN: mk-opt %s -split-input-file -verify-diagnostics

mk.weight @norm : tensor<32xf32>

func.func @f(%x: tensor<64xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{'mk.rms_norm' op weight @norm has shape [32], expected [64]}}
  %y = mk.rms_norm %x weight @norm {eps = 1.0e-05 : f32} : tensor<64xf32>
  return %y : tensor<64xf32>
}

// -----

mk.weight @norm : tensor<1x64xf32>

func.func @f(%x: tensor<64xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{'mk.rms_norm' op weight @norm has shape [1, 64], expected [64]}}
  %y = mk.rms_norm %x weight @norm {eps = 1.0e-05 : f32} : tensor<64xf32>
  return %y : tensor<64xf32>
}

// -----

func.func @f(%x: tensor<64xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{'mk.rms_norm' op weight @f is not a mk.weight}}
  %y = mk.rms_norm %x weight @f {eps = 1.0e-05 : f32} : tensor<64xf32>
  return %y : tensor<64xf32>
}
