// mk.head_rms_norm: whole heads, and one weight entry per entry of a head.
// RUN: mk-opt %s -split-input-file -verify-diagnostics

mk.weight @qn : tensor<24xf32>

func.func @f(%q: tensor<64xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{'mk.head_rms_norm' op input length 64 is not a multiple of head_dim 24}}
  %y = mk.head_rms_norm %q weight @qn {eps = 1.0e-06 : f32, head_dim = 24 : i64} : tensor<64xf32>
  return %y : tensor<64xf32>
}

// -----

mk.weight @qn : tensor<16xf32>

func.func @f(%q: tensor<64xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{'mk.head_rms_norm' op input length 64 is not a multiple of head_dim 0}}
  %y = mk.head_rms_norm %q weight @qn {eps = 1.0e-06 : f32, head_dim = 0 : i64} : tensor<64xf32>
  return %y : tensor<64xf32>
}

// -----

// The weight is per head_dim, not per whole vector.
mk.weight @qn : tensor<64xf32>

func.func @f(%q: tensor<64xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{'mk.head_rms_norm' op weight @qn has shape [64], expected [16]}}
  %y = mk.head_rms_norm %q weight @qn {eps = 1.0e-06 : f32, head_dim = 16 : i64} : tensor<64xf32>
  return %y : tensor<64xf32>
}

// -----

func.func @f(%q: tensor<64xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{'mk.head_rms_norm' op weight @qn is not defined}}
  %y = mk.head_rms_norm %q weight @qn {eps = 1.0e-06 : f32, head_dim = 16 : i64} : tensor<64xf32>
  return %y : tensor<64xf32>
}
