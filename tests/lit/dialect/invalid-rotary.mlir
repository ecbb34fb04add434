// mk.rotary: whole heads, an even rotary_dim within a head, and exactly
// rotary_dim/2 frequencies.
// RUN: mk-opt %s -split-input-file -verify-diagnostics

func.func @f(%x: tensor<64xf32>, %pos: index) -> tensor<64xf32> {
  // expected-error @+1 {{'mk.rotary' op input length 64 is not a multiple of head_dim 24}}
  %r = mk.rotary %x at %pos {head_dim = 24 : i64, rotary_dim = 4 : i64, theta = 1.0e+04 : f64, inv_freq = dense<[1.0, 0.01]> : tensor<2xf32>} : tensor<64xf32>
  return %r : tensor<64xf32>
}

// -----

func.func @f(%x: tensor<64xf32>, %pos: index) -> tensor<64xf32> {
  // expected-error @+1 {{'mk.rotary' op rotary_dim 5 must be even and in (0, head_dim]}}
  %r = mk.rotary %x at %pos {head_dim = 16 : i64, rotary_dim = 5 : i64, theta = 1.0e+04 : f64, inv_freq = dense<[1.0, 0.01]> : tensor<2xf32>} : tensor<64xf32>
  return %r : tensor<64xf32>
}

// -----

func.func @f(%x: tensor<64xf32>, %pos: index) -> tensor<64xf32> {
  // expected-error @+1 {{'mk.rotary' op rotary_dim 32 must be even and in (0, head_dim]}}
  %r = mk.rotary %x at %pos {head_dim = 16 : i64, rotary_dim = 32 : i64, theta = 1.0e+04 : f64, inv_freq = dense<1.0> : tensor<16xf32>} : tensor<64xf32>
  return %r : tensor<64xf32>
}

// -----

func.func @f(%x: tensor<64xf32>, %pos: index) -> tensor<64xf32> {
  // expected-error @+1 {{'mk.rotary' op rotary_dim 0 must be even and in (0, head_dim]}}
  %r = mk.rotary %x at %pos {head_dim = 16 : i64, rotary_dim = 0 : i64, theta = 1.0e+04 : f64, inv_freq = dense<> : tensor<0xf32>} : tensor<64xf32>
  return %r : tensor<64xf32>
}

// -----

func.func @f(%x: tensor<64xf32>, %pos: index) -> tensor<64xf32> {
  // expected-error @+1 {{'mk.rotary' op inv_freq has 4 entries, expected rotary_dim/2 = 8}}
  %r = mk.rotary %x at %pos {head_dim = 16 : i64, rotary_dim = 16 : i64, theta = 1.0e+04 : f64, inv_freq = dense<[1.0, 0.1, 0.01, 0.001]> : tensor<4xf32>} : tensor<64xf32>
  return %r : tensor<64xf32>
}

// -----

func.func @f(%x: tensor<64xf32>, %pos: index) -> tensor<64xf32> {
  // expected-error @+1 {{'mk.rotary' op inv_freq must be a 1-D tensor}}
  %r = mk.rotary %x at %pos {head_dim = 16 : i64, rotary_dim = 16 : i64, theta = 1.0e+04 : f64, inv_freq = dense<1.0> : tensor<2x4xf32>} : tensor<64xf32>
  return %r : tensor<64xf32>
}
