// mk.gemv: weights [rows_i, K], one bias [rows_i] per weight, a norm [K]
// with its eps, a known epilogue with what it needs, and the result length
// the epilogue gives.
// RUN: mk-opt %s -split-input-file -verify-diagnostics

mk.weight @w : tensor<32x64xf32>

func.func @f(%x: tensor<64xf32>) -> tensor<32xf32> {
  // expected-error @+1 {{'mk.gemv' op epilogue must be "none", "silu_mul", "gelu_tanh_mul" or "residual", got "gelu"}}
  %y = mk.gemv %x weights [@w] {epilogue = "gelu"} : tensor<64xf32> -> tensor<32xf32>
  return %y : tensor<32xf32>
}

// -----

func.func @f(%x: tensor<64xf32>) -> tensor<32xf32> {
  // expected-error @+1 {{'mk.gemv' op needs at least one weight}}
  %y = mk.gemv %x weights [] : tensor<64xf32> -> tensor<32xf32>
  return %y : tensor<32xf32>
}

// -----

mk.weight @w : tensor<32x64xf32>
mk.weight @b : tensor<32xf32>

func.func @f(%x: tensor<64xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{'mk.gemv' op has 1 biases for 2 weights}}
  %y = mk.gemv %x weights [@w, @w] biases [@b] : tensor<64xf32> -> tensor<64xf32>
  return %y : tensor<64xf32>
}

// -----

mk.weight @w : tensor<32x64xf32>
mk.weight @n : tensor<64xf32>

func.func @f(%x: tensor<64xf32>) -> tensor<32xf32> {
  // expected-error @+1 {{'mk.gemv' op norm needs eps}}
  %y = mk.gemv %x weights [@w] norm @n : tensor<64xf32> -> tensor<32xf32>
  return %y : tensor<32xf32>
}

// -----

mk.weight @w : tensor<32x64xf32>

func.func @f(%x: tensor<64xf32>) -> tensor<32xf32> {
  // expected-error @+1 {{'mk.gemv' op eps without norm}}
  %y = mk.gemv %x weights [@w] {eps = 1.0e-05 : f32} : tensor<64xf32> -> tensor<32xf32>
  return %y : tensor<32xf32>
}

// -----

mk.weight @w : tensor<64x64xf32>

func.func @f(%x: tensor<64xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{'mk.gemv' op has a residual operand exactly when the epilogue is "residual"}}
  %y = mk.gemv %x weights [@w] {epilogue = "residual"} : tensor<64xf32> -> tensor<64xf32>
  return %y : tensor<64xf32>
}

// -----

mk.weight @w : tensor<64x64xf32>

func.func @f(%x: tensor<64xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{'mk.gemv' op has a residual operand exactly when the epilogue is "residual"}}
  %y = mk.gemv %x residual %x weights [@w] : tensor<64xf32>, tensor<64xf32> -> tensor<64xf32>
  return %y : tensor<64xf32>
}

// -----

mk.weight @w : tensor<32x64xf32>

func.func @f(%x: tensor<64xf32>) -> tensor<32xf32> {
  // expected-error @+1 {{'mk.gemv' op residual must have the result's type}}
  %y = mk.gemv %x residual %x weights [@w] {epilogue = "residual"} : tensor<64xf32>, tensor<64xf32> -> tensor<32xf32>
  return %y : tensor<32xf32>
}

// -----

mk.weight @w : tensor<32x64xf32>

func.func @f(%x: tensor<64xf32>) -> tensor<32xf32> {
  // expected-error @+1 {{'mk.gemv' op epilogue "silu_mul" needs exactly two weights (gate, up), got 3}}
  %y = mk.gemv %x weights [@w, @w, @w] {epilogue = "silu_mul"} : tensor<64xf32> -> tensor<32xf32>
  return %y : tensor<32xf32>
}

// -----

// Laid out [in, out] by mistake.
mk.weight @w : tensor<64x32xf32>

func.func @f(%x: tensor<64xf32>) -> tensor<32xf32> {
  // expected-error @+1 {{'mk.gemv' op weight @w has shape [64, 32], expected [rows, 64]}}
  %y = mk.gemv %x weights [@w] : tensor<64xf32> -> tensor<32xf32>
  return %y : tensor<32xf32>
}

// -----

mk.weight @w : tensor<32x64xf32>

func.func @f(%x: tensor<64xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{'mk.gemv' op weight @v is not defined}}
  %y = mk.gemv %x weights [@w, @v] : tensor<64xf32> -> tensor<64xf32>
  return %y : tensor<64xf32>
}

// -----

mk.weight @wq : tensor<64x64xf32>
mk.weight @wk : tensor<32x64xf32>
mk.weight @bq : tensor<64xf32>

func.func @f(%x: tensor<64xf32>) -> tensor<96xf32> {
  // expected-error @+1 {{'mk.gemv' op bias @bq has shape [64], expected [32]}}
  %y = mk.gemv %x weights [@wq, @wk] biases [@bq, @bq] : tensor<64xf32> -> tensor<96xf32>
  return %y : tensor<96xf32>
}

// -----

mk.weight @w : tensor<32x64xf32>
mk.weight @n : tensor<32xf32>

func.func @f(%x: tensor<64xf32>) -> tensor<32xf32> {
  // expected-error @+1 {{'mk.gemv' op norm @n has shape [32], expected [64]}}
  %y = mk.gemv %x weights [@w] norm @n {eps = 1.0e-05 : f32} : tensor<64xf32> -> tensor<32xf32>
  return %y : tensor<32xf32>
}

// -----

mk.weight @wq : tensor<64x64xf32>
mk.weight @wk : tensor<32x64xf32>

func.func @f(%x: tensor<64xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{'mk.gemv' op result has 64 entries, the weights have 96 rows}}
  %y = mk.gemv %x weights [@wq, @wk] : tensor<64xf32> -> tensor<64xf32>
  return %y : tensor<64xf32>
}

// -----

mk.weight @wg : tensor<64x64xf32>
mk.weight @wu : tensor<32x64xf32>

func.func @f(%x: tensor<64xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{'mk.gemv' op silu_mul needs gate and up of equal rows, got 64 and 32}}
  %y = mk.gemv %x weights [@wg, @wu] {epilogue = "silu_mul"} : tensor<64xf32> -> tensor<64xf32>
  return %y : tensor<64xf32>
}

// -----

mk.weight @wg : tensor<64x64xf32>

func.func @f(%x: tensor<64xf32>) -> tensor<128xf32> {
  // expected-error @+1 {{'mk.gemv' op result has 128 entries, silu_mul gives 64}}
  %y = mk.gemv %x weights [@wg, @wg] {epilogue = "silu_mul"} : tensor<64xf32> -> tensor<128xf32>
  return %y : tensor<128xf32>
}
