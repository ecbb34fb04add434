/* The schedule blob: the device's view of a compiled model, read by the
 * persistent kernel (CUDA C++, compiled by NVRTC) and written by the host
 * (g++). Plain structs of fixed-width fields, little-endian, no pointers:
 * every location is an offset the loader turns into an address.
 *
 *   MkBlobHeader
 *   MkQueue[numSms]              per SM: its slice of taskOrder
 *   uint32_t taskOrder[numTasks] task ids, SM by SM, in queue order; then the
 *                                inline tasks' (in no queue), by id
 *   MkTaskRecord[numTasks]       by task id
 *   MkWaitRecord[numWaits]       the tasks' waits, task by task
 *   MkEventRecord[numEvents]
 *   MkOperationRecord[numOperations]
 *   float params[numParams]      small f32 parameters: norms, biases, inv_freq
 *   MkQueueEntry[numTasks]       taskOrder's tasks, each with what running it
 *                                reads: its record, its operation's, its waits
 *                                resolved (one contiguous copy a task ahead)
 *
 * Offsets in records count elements of one of four regions the loader
 * allocates: the activation arena (f32), the KV arena (f32), the params
 * array above (f32), and the weights section of the .mk file (bf16). */
#ifndef MKC_RUNTIME_FORMAT_SCHEDULEBLOB_H
#define MKC_RUNTIME_FORMAT_SCHEDULEBLOB_H

#include "core/protocol/Portable.h"
#include "core/protocol/TaskKindList.h"

#define MK_BLOB_MAGIC 0x42534b4du /* "MKSB" */
#define MK_BLOB_VERSION 11u /* 2: task records carry their kernel variant; 3: no attention prepare; 4: queue entries; 5: chunksPerRound; 6: bf16 KV caches packed in the KV arena, task ordinals, the logits' picks; 7: inline tasks' entries; 8: Mlp operations, fixed64 buffers (two f32 elements each), seeds; 9: rows and sequences of the step; 10: ranks, waits on every rank, releases to every rank; 11: attention windows */

/* TaskKind values (core/protocol/TaskKindList.h) and Epilogue values, as in
 * core/taskgraph/TaskGraph.h. */
#define MK_BLOB_TASK_KIND(Name, NAME, opcode) MK_TASK_##NAME = opcode,
enum MkBlobTaskKind { MK_TASK_KINDS(MK_BLOB_TASK_KIND) };
#undef MK_BLOB_TASK_KIND
enum MkBlobEpilogue {
  MK_EPILOGUE_NONE = 0,
  MK_EPILOGUE_SILU_MUL = 1,
  MK_EPILOGUE_RESIDUAL = 2,
  MK_EPILOGUE_GELU_TANH_MUL = 3
};
/* The gated epilogues (isGated): output row j reads gate row j and up row N + j. */
#define MK_EPILOGUE_GATED(e) ((e) == MK_EPILOGUE_SILU_MUL || (e) == MK_EPILOGUE_GELU_TANH_MUL)

#define MK_NO_OFFSET 0xffffffffffffffffull
#define MK_MAX_RANKS 8 /* of tensor parallelism a kernel runs (codegen/device/Ranks.cuh) */
#define MK_MAX_GEMV_WEIGHTS 4
#define MK_ENTRY_WAITS 4 /* waits a queue entry holds resolved; the rest stay in the waits region */

typedef struct MkBlobHeader {
  mk_u32 magic, version;
  mk_u32 numSms, numTasks, numWaits, numEvents, numOperations;
  mk_u32 ranks; /* of tensor parallelism (docs/tensor-parallel.md): 1 for one GPU */
  /* The step's rows and the sequences the KV caches hold
   * (core/taskgraph/StepRows.h): 1, 1 for decode. Row r of an activation
   * buffer starts r x (its elements / rows) into it; sequence s's KV slots
   * s x maxContext slots into a cache. */
  mk_u32 rows, sequences;
  mk_u64 numParams;
  mk_u64 activationElements; /* f32 elements of the activation arena */
  mk_u64 kvElements;         /* f32 elements of the KV arena at the compiled maxContext */
  mk_i64 maxContext;
  mk_u64 tokenSlot;   /* activation-arena element where the current token starts: an int64 over two f32 elements, one a row */
  mk_u64 logitsOffset, vocab; /* activation-arena offset and length of the logits */
  /* byte offsets from the start of the blob */
  mk_u64 queuesOffset, taskOrderOffset, tasksOffset, waitsOffset, eventsOffset, operationsOffset,
      paramsOffset, entriesOffset, totalBytes;
} MkBlobHeader;

typedef struct MkQueue {
  mk_u32 first, count; /* into taskOrder */
} MkQueue;

/* MkTaskRecord.flags */
#define MK_TASK_RELEASES_TO_RANKS 1u /* some rank's wait on its event is an allRanks wait: the
                                        trigger releases at system scope, for the other GPUs */

typedef struct MkTaskRecord {
  mk_u8 kind, flags;
  mk_u16 ordinal; /* a Gemv tile's slot in its operation's picks; 0 where it writes none */
  mk_u32 op;
  mk_u32 begin, end; /* the tile, as in TaskGraph.h */
  mk_u32 firstWait, numWaits;
  mk_u32 trigger;
  mk_u32 variant; /* its kernel variant: the dispatch case that runs it (core/taskgraph/KernelVariants.h) */
} MkTaskRecord;

typedef struct MkWaitRecord {
  mk_u32 event;
  mk_i32 stepOffset; /* 0 or -1 */
  mk_u32 allRanks;   /* 1: satisfied when the event reaches its count on every rank */
  mk_u32 reserved;
} MkWaitRecord;

typedef struct MkEventRecord {
  mk_u32 triggerCount, reserved;
} MkEventRecord;

typedef struct MkOperationRecord {
  mk_u8 kind;      /* OpKind: 0 Embed, 1 Gemv, 2 Attention, 3 Argmax, 4 AllReduce, 5 Mlp */
  mk_u8 epilogue;  /* MkBlobEpilogue */
  mk_u8 interleaved, numWeights;
  mk_i32 layer;
  mk_u64 input, output, residual; /* activation-arena element offsets (MK_NO_OFFSET: none) */
  mk_u64 inputLength, outputLength;
  /* Embed: weights[0] is the table [vocab, hidden]. Gemv: weights[i] is
   * [weightRows[i], inputLength], stacked by rows. Mlp: gate and up
   * [I, inputLength] stacked, then down [outputLength, I]. Offsets in bf16
   * elements of the weights section. */
  mk_u64 weights[MK_MAX_GEMV_WEIGHTS];
  mk_u64 weightRows[MK_MAX_GEMV_WEIGHTS];
  mk_u64 bias; /* params offset of the stacked biases (all rows), or MK_NO_OFFSET */
  mk_u64 norm; /* params offset of the RMSNorm weight [inputLength], or MK_NO_OFFSET */
  float eps, scale;
  /* Attention */
  mk_i64 numHeads, numKvHeads, headDim, rotaryDim;
  mk_i32 chunkSize;      /* below 2^31, as maxContext */
  mk_i32 window;         /* a sliding window's positions, 0: none (attentionChunkPositions) */
  mk_i32 numChunks;      /* below 2^31, as maxContext (the validator); a Gemv or
                            Argmax with picks: numPicks */
  mk_i32 chunksPerRound; /* the chunks a step's positions spread over (attentionSpan) */
  mk_u64 qNorm, kNorm, invFreq;  /* params offsets, or MK_NO_OFFSET */
  union {
    mk_u64 keyCache; /* KV-arena offset: per sequence [numKvHeads][maxContext][headDim] */
    mk_u64 seed;     /* an Embed or Gemv seeding a fixed64 output: its activation-arena offset */
  };
  mk_u64 valueCache; /* KV-arena offset, as keyCache */
  mk_u64 partials;               /* activation-arena offset (scratch); a Gemv or Argmax
                                    with picks: the picks' */
} MkOperationRecord;

/* A wait with its event's trigger count, so that its threshold needs no
 * further load. */
typedef struct MkResolvedWait {
  mk_u32 event, triggerCount;
  mk_i32 stepOffset;
  mk_u32 allRanks;
} MkResolvedWait;

/* Everything a CTA reads to run the task at one place of its queue, in one
 * block of whole 16-byte units: the kernel copies the next entry into shared
 * memory while the current task runs, so that a task starts with no record
 * load between its events and its first instruction. The first
 * min(task.numWaits, MK_ENTRY_WAITS) waits are here, any more in the waits
 * region from task.firstWait + MK_ENTRY_WAITS. */
#define MK_NO_INLINE 0xffffffffu

typedef struct MkQueueEntry {
  MkTaskRecord task;
  mk_u32 id;
  /* The entry of the inline task (Task::runsInline) that waits on this
   * task's trigger event, or MK_NO_INLINE: the CTA whose trigger completes
   * the event's count for the step runs it next (codegen/device/
   * Interpreter.cuh). */
  mk_u32 inlineEntry;
  MkResolvedWait waits[MK_ENTRY_WAITS];
  MkOperationRecord operation;
} MkQueueEntry;

#endif
