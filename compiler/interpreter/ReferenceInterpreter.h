// The reference interpreter: runs the mk IR's decode_step one token at a time
// in plain f32 on the CPU. It is the meaning of the IR that every later engine
// (the CPU schedule executor, the GPU megakernel) is compared against.
#ifndef MKC_COMPILER_INTERPRETER_REFERENCEINTERPRETER_H
#define MKC_COMPILER_INTERPRETER_REFERENCEINTERPRETER_H

#include "core/weights/WeightTable.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace mk {

class ReferenceInterpreter {
public:
  // Checks that `module` has a func.func @decode_step whose signature is
  // (i64 token, index pos, !mk.kv_cache...) -> (tensor<V x f32>, i64), that
  // every op in it is known, and that every weight it names is in `weights`.
  // `module` and `weights` must outlive the interpreter.
  static llvm::Expected<std::unique_ptr<ReferenceInterpreter>>
  create(mlir::ModuleOp module, const WeightTable &weights, int64_t maxContext);

  // Runs decode_step for `token` at the next position (0 for the first call)
  // and returns the logits. Fails once maxContext positions are used.
  llvm::Expected<std::vector<float>> step(int64_t token);

  int64_t position() const { return nextPosition; }

  ~ReferenceInterpreter();

private:
  ReferenceInterpreter(mlir::ModuleOp module, const WeightTable &weights, int64_t maxContext);
  struct State;
  std::unique_ptr<State> state;
  int64_t nextPosition = 0;
};

} // namespace mk

#endif
