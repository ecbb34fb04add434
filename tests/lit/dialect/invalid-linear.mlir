// mk.linear: weight [out, in], optional bias [out], both mk.weight symbols.
// RUN: mk-opt %s -split-input-file -verify-diagnostics

// Laid out [in, out] by mistake.
mk.weight @w : tensor<64x32xf32>

func.func @f(%x: tensor<64xf32>) -> tensor<32xf32> {
  // expected-error @+1 {{'mk.linear' op weight @w has shape [64, 32], expected [32, 64]}}
  %y = mk.linear %x weight @w : tensor<64xf32> -> tensor<32xf32>
  return %y : tensor<32xf32>
}

// -----

mk.weight @w : tensor<32x64xf32>
mk.weight @b : tensor<64xf32>

func.func @f(%x: tensor<64xf32>) -> tensor<32xf32> {
  // expected-error @+1 {{'mk.linear' op bias @b has shape [64], expected [32]}}
  %y = mk.linear %x weight @w bias @b : tensor<64xf32> -> tensor<32xf32>
  return %y : tensor<32xf32>
}

// -----

func.func @g() {
  return
}

func.func @f(%x: tensor<64xf32>) -> tensor<32xf32> {
  // expected-error @+1 {{'mk.linear' op weight @g is not a mk.weight}}
  %y = mk.linear %x weight @g : tensor<64xf32> -> tensor<32xf32>
  return %y : tensor<32xf32>
}

// -----

mk.weight @w : tensor<32x64xf32>

func.func @f(%x: tensor<64xf32>) -> tensor<32xf32> {
  // expected-error @+1 {{'mk.linear' op bias @b is not defined}}
  %y = mk.linear %x weight @w bias @b : tensor<64xf32> -> tensor<32xf32>
  return %y : tensor<32xf32>
}

// -----

mk.weight @w : tensor<32x64xf32>

func.func @f(%x: tensor<64xf32>) -> tensor<32xf32> {
  // expected-error @+1 {{'mk.linear' op bias @f is not a mk.weight}}
  %y = mk.linear %x weight @w bias @f : tensor<64xf32> -> tensor<32xf32>
  return %y : tensor<32xf32>
}
