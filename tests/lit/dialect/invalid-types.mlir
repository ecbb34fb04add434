// Activations are statically sized f32 vectors, and a KV cache has positive
// sizes: the verifiers' length arithmetic relies on both.
// RUN: mk-opt %s -split-input-file -verify-diagnostics

func.func @f(%a: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{'mk.add' op operand #0 must be statically sized 1-D tensor of 32-bit float values}}
  %h = mk.add %a, %a : tensor<?xf32>
  return %h : tensor<?xf32>
}

// -----

func.func @f(%a: tensor<64xf16>) -> tensor<64xf16> {
  // expected-error @+1 {{'mk.silu_mul' op operand #0 must be statically sized 1-D tensor of 32-bit float values}}
  %h = mk.silu_mul %a, %a : tensor<64xf16>
  return %h : tensor<64xf16>
}

// -----

func.func @f(%a: tensor<8x8xf32>) -> i64 {
  // expected-error @+1 {{'mk.argmax' op operand #0 must be statically sized 1-D tensor of 32-bit float values}}
  %t = mk.argmax %a : tensor<8x8xf32>
  return %t : i64
}

// -----

// expected-error @+1 {{kv_cache needs a positive number of KV heads and head_dim, got <0, 16>}}
func.func @f(%c: !mk.kv_cache<0, 16>) {
  return
}
