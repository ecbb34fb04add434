#include "runtime/cpu/Tasks.h"

namespace mk::cpu {

void runTask(TaskContext &context) {
  switch (context.task.kind) {
  case TaskKind::Embed:
    runEmbedTask(context);
    break;
  case TaskKind::Gemv:
    runGemvTask(context);
    break;
  case TaskKind::AttentionPrepare:
    runAttentionPrepareTask(context);
    break;
  case TaskKind::AttentionChunk:
    runAttentionChunkTask(context);
    break;
  case TaskKind::AttentionMerge:
    runAttentionMergeTask(context);
    break;
  case TaskKind::Argmax:
    runArgmaxTask(context);
    break;
  }
  context.recheckReads();
}

} // namespace mk::cpu
