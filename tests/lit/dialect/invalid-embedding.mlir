// mk.embedding: the table must be a [vocab, hidden] mk.weight.
// RUN: mk-opt %s -split-input-file -verify-diagnostics

mk.weight @embed : tensor<256x32xf32>

func.func @f(%token: i64) -> tensor<64xf32> {
  // expected-error @+1 {{'mk.embedding' op table @embed has shape [256, 32], expected [vocab, 64]}}
  %x = mk.embedding @embed[%token] : tensor<64xf32>
  return %x : tensor<64xf32>
}

// -----

mk.weight @embed : tensor<64xf32>

func.func @f(%token: i64) -> tensor<64xf32> {
  // expected-error @+1 {{'mk.embedding' op table @embed has shape [64], expected [vocab, 64]}}
  %x = mk.embedding @embed[%token] : tensor<64xf32>
  return %x : tensor<64xf32>
}

// -----

func.func @f(%token: i64) -> tensor<64xf32> {
  // expected-error @+1 {{'mk.embedding' op table @missing is not defined}}
  %x = mk.embedding @missing[%token] : tensor<64xf32>
  return %x : tensor<64xf32>
}

// -----

func.func @f(%token: i64) -> tensor<64xf32> {
  // expected-error @+1 {{'mk.embedding' op table @f is not a mk.weight}}
  %x = mk.embedding @f[%token] : tensor<64xf32>
  return %x : tensor<64xf32>
}
