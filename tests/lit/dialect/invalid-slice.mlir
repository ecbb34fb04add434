// mk.slice: the entries it takes lie within its input.
// RUN: mk-opt %s -split-input-file -verify-diagnostics

func.func @f(%x: tensor<128xf32>) -> tensor<32xf32> {
  // expected-error @+1 {{'mk.slice' op entries [100, 132) are outside the input's 128}}
  %y = mk.slice %x {offset = 100 : i64} : tensor<128xf32> -> tensor<32xf32>
  return %y : tensor<32xf32>
}

// -----

func.func @f(%x: tensor<128xf32>) -> tensor<32xf32> {
  // expected-error @+1 {{'mk.slice' op entries [-1, 31) are outside the input's 128}}
  %y = mk.slice %x {offset = -1 : i64} : tensor<128xf32> -> tensor<32xf32>
  return %y : tensor<32xf32>
}
