// mk.weight refuses what the weight table cannot store.
// RUN: mk-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{'mk.weight' op element type must be f32, f16 or bf16}}
mk.weight @w : tensor<4xi8>

// -----

// expected-error @+1 {{'mk.weight' op element type must be f32, f16 or bf16}}
mk.weight @w : tensor<4x4xf64>

// -----

// expected-error @+1 {{'mk.weight' op type must be a statically shaped tensor}}
mk.weight @w : tensor<?x64xf32>

// -----

// expected-error @+1 {{'mk.weight' op type must be a statically shaped tensor}}
mk.weight @w : memref<64xf32>

// -----

// Weights live in the module's symbol table, never inside a function.
func.func @f() {
  // expected-error @+1 {{'mk.weight' op expects parent op 'builtin.module'}}
  mk.weight @w : tensor<64xf32>
  return
}
