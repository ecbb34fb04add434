/* The launch ABI of the persistent kernel, shared by the loader (g++,
 * runtime/gpu/GpuDevice.cpp) and the device library (NVRTC,
 * codegen/device/): the kernel's one parameter, the control block through
 * which a launch is asked for and answered, and the facts the generated
 * kernel publishes about itself. Plain C of fixed-width fields; device
 * addresses travel as 64-bit integers so that both compilers agree on every
 * offset. */
#ifndef MKC_RUNTIME_FORMAT_CONTROLBLOCK_H
#define MKC_RUNTIME_FORMAT_CONTROLBLOCK_H

#include "core/protocol/Sampling.h"
#include "runtime/format/ScheduleBlob.h"

#define MK_KERNEL_ABI_VERSION 6u /* 3: the kernel publishes its variants; 4: sampling, streaming; 5: steps of several rows (MkRowPlan), variants of up to 8 arguments; 6: ranks (MkRanks) */
#define MK_KERNEL_NAME "mk_megakernel"
#define MK_ONE_TASK_KERNEL_NAME "mk_run_task" /* (MkKernelArgs, unsigned task, long long position) */
#define MK_KERNEL_INFO_NAME "mk_kernel_info"
#define MK_KERNEL_VARIANTS_NAME "mk_kernel_variants"

/* The kernel's only parameter, passed by value. */
typedef struct MkKernelArgs {
  mk_u64 blob;        /* the schedule blob (ScheduleBlob.h), params included */
  mk_u64 activations; /* f32[activationElements]; the token slot's two hold an i64 */
  mk_u64 kv;          /* f32[kvElements] */
  mk_u64 weights;     /* bf16 weights section */
  mk_u64 counters;    /* u32[numEvents], zero at launch */
  mk_u64 control;     /* MkControlBlock */
} MkKernelArgs;

/* Why a launch ended early. The first error wins; the others are dropped. */
enum MkDeviceError {
  MK_ERROR_NONE = 0,
  MK_ERROR_WAIT_TIMEOUT = 1,        /* errorTask waited on errorEvent past the bound */
  MK_ERROR_NON_FINITE_LOGIT = 2,    /* errorDetail: the lowest index of a NaN or infinity */
  MK_ERROR_TOKEN_OUT_OF_RANGE = 3,  /* errorDetail: the token an Embed was given */
  MK_ERROR_LAUNCH_MISMATCH = 4,     /* the blob, grid or block is not the kernel's; errorDetail says which */
  MK_ERROR_UNKNOWN_VARIANT = 5,     /* errorTask's operation has a shape the kernel was not generated for */
  MK_ERROR_EMPTY_ATTENTION = 6,     /* errorTask's merge found no chunk holding a position */
  MK_ERROR_RANK_WAIT_TIMEOUT = 7,   /* errorTask waited on errorEvent of another rank past the
                                       bound; errorDetail: that rank x 2^32 + the count awaited */
};

/* MK_ERROR_LAUNCH_MISMATCH details. */
enum MkLaunchMismatch {
  MK_MISMATCH_BLOB_MAGIC = 1,
  MK_MISMATCH_BLOB_VERSION = 2,
  MK_MISMATCH_GRID = 3,   /* gridDim.x != the blob's numSms */
  MK_MISMATCH_BLOCK = 4,  /* blockDim.x != the kernel's threads */
  MK_MISMATCH_STEPS = 5,  /* steps past the blob's maxContext */
  MK_MISMATCH_NO_ARGMAX = 6,
  MK_MISMATCH_BLOB_ALIGNMENT = 7, /* a section of the blob is not 8-byte aligned */
  MK_MISMATCH_ROWS = 8, /* the blob's rows or sequences are not the kernel's, or a kernel of
                           several rows has no row plans, or a plan's sequence or positions
                           (those of its steps before activeUntil) fall outside the caches */
  MK_MISMATCH_RANKS = 9, /* the blob's ranks are not the kernel's, or a kernel of several ranks
                            has no MkRanks, or its rank is out of range */
};

/* Where a tensor-parallel kernel (MkKernelInfo.ranks > 1) finds the other
 * ranks (docs/tensor-parallel.md): every rank's counters and activation
 * arena lie in one NCCL window, registered by every rank with the same
 * layout, which the kernel reads through NCCL's device API
 * (codegen/ranks/NcclDevice.cu). Without a window (0), every rank runs on
 * this GPU, on its share of the SMs, and `bases` gives each rank's memory
 * of the same layout: how one GPU checks the kernel of ranks. */
typedef struct MkRanks {
  mk_u32 rank, ranks;
  mk_u64 window;            /* ncclWindow_t, a device address; 0: every rank on this GPU */
  mk_u64 countersOffset;    /* bytes into the window: u32[numEvents] */
  mk_u64 activationsOffset; /* bytes into the window: f32[activationElements] */
  mk_u64 bases[MK_MAX_RANKS]; /* without a window: each rank's memory, laid out as one */
} MkRanks;

/* A step of several rows (core/taskgraph/StepRows.h; a batch: row r is
 * sequence r): what row r does over the launch, the control block's own
 * fields (firstPosition, forcedSteps, tokens, eosFromStep) made per row. A
 * kernel of one row a step reads the control block's fields instead. */
typedef struct MkRowPlan {
  mk_i64 sequence;         /* whose KV cache slots the row reads and writes */
  mk_i64 firstPosition;    /* its position at step 0 */
  mk_i64 positionsPerStep; /* 1: the next token of its sequence each step */
  mk_i64 forcedSteps;      /* steps [0, forcedSteps) embed tokens[step]; later ones its last pick */
  mk_u64 tokens;           /* i64[forcedSteps] */
  mk_i64 eosFromStep;      /* an EOS pick stops the row only from this step on */
  /* Steps [0, activeUntil) the row runs; from activeUntil on it idles (fed
   * token 0, attending to nothing, writing no KV slot, picking nothing).
   * The host sets the row's step count; the argmax lowers it to step + 1
   * when the row picks an EOS at `step`, and sets the control block's stop
   * once no row runs the next step. */
  mk_i64 activeUntil;
  /* i64 by position, [0, the context's positions]: the row's tokens as far
   * as known (-1 where not), which the argmax extends with the row's picks;
   * read by the repetition penalty. 0: none. */
  mk_u64 contextTokens;
} MkRowPlan;

typedef struct MkControlBlock {
  /* Filled by the host before the launch. */
  mk_i64 steps;         /* steps to run at most */
  mk_i64 firstPosition; /* the context position of step 0 */
  mk_i64 forcedSteps;   /* steps [0, forcedSteps) embed tokens[step]; later ones the previous argmax */
  mk_i64 eosFromStep;   /* an EOS argmax ends the launch only from this step on */
  mk_u64 tokens;        /* i64[forcedSteps] */
  mk_u64 outputTokens;  /* i64[steps][rows]: each step's argmax of each row (-1: an idle row) */
  mk_u64 logits;        /* f32[steps][rows][vocab], or 0: each step's logits */
  mk_u64 timestamps;    /* u64[steps] of %globaltimer (ns) as each argmax ends, or 0 */
  mk_u64 trace;         /* u64[steps][numTasks][3], zeroed, or 0: see MkTraceTime */
  mk_u64 eosTokens;     /* i64[numEos] */
  mk_u32 numEos, reserved;
  mk_u64 waitTimeoutNs; /* one wait longer than this raises MK_ERROR_WAIT_TIMEOUT */

  /* Written by the kernel. */
  mk_u32 stop;      /* set by an argmax that read EOS: every CTA ends after that step */
  mk_u32 error;     /* MkDeviceError */
  mk_i64 stepsDone; /* steps whose argmax completed */
  mk_i64 errorStep;
  mk_u32 errorTask, errorEvent, errorSm, reserved2;
  mk_i64 errorDetail;
  mk_u64 startNs; /* %globaltimer when CTA 0 began the launch, once its checks passed */

  /* Filled by the host: how the argmax task picks tokens
   * (core/protocol/Sampling.h; all zeros: greedy). */
  MkSamplingSettings sampling;
  mk_u64 contextTokens; /* i64[firstPosition + steps + 1], or 0: the token at each position (-1:
                           unknown), the prompt's filled in; the argmax writes each token it
                           feeds at the next position. What the repetition penalty counts. */
  mk_u64 penaltyMarks;  /* u64[vocab], or 0 (no penalty): which tokens a step has penalized */
  mk_u64 penaltyLogits; /* f32[vocab], or 0 (no penalty): the step's logits, penalized */
  mk_u64 penaltyTag;    /* distinct per launch, low 32 bits 0: step s marks penaltyTag + s + 1 */

  /* Streaming, in host-mapped memory (0: none): see MkStream. */
  mk_u64 stream;       /* MkStream */
  mk_u64 streamTokens; /* i64[steps]: each step's token, before stream->published counts it */

  /* Filled by the host: MkRowPlan[rows] for a kernel of several rows a step
   * (MkKernelInfo.rows; no sampling, penalty or streaming then), else 0. */
  mk_u64 rowPlans;

  /* Filled by the host: MkRanks for a kernel of several ranks, else 0. */
  mk_u64 ranks;
} MkControlBlock;

/* The kernel's side of streaming, in host memory the device maps
 * (runtime/README.md has the protocol). After a step's token is in
 * streamTokens, the argmax's thread makes it visible system-wide
 * (__threadfence_system) and then stores published = step + 1; the host
 * polls published while the kernel runs. The host writes cancel (nonzero)
 * to stop the launch: the argmax of each step reads it (a volatile load)
 * and, when set, sets the control block's stop flag, so every CTA ends
 * after that step as after an EOS. */
typedef struct MkStream {
  mk_i64 published; /* steps whose token is in streamTokens */
  mk_u32 cancel;    /* written by the host */
  mk_u32 reserved;
} MkStream;

/* The three %globaltimer times (ns) the CTA running a task writes into the
 * trace for each step it runs it; a step the launch did not reach keeps its
 * zeros. The wait is [MK_TRACE_WAIT, MK_TRACE_START), the task itself
 * [MK_TRACE_START, MK_TRACE_END), its trigger right after. */
enum MkTraceTime {
  MK_TRACE_WAIT = 0,  /* began waiting on the task's events */
  MK_TRACE_START = 1, /* the waits were satisfied */
  MK_TRACE_END = 2,   /* every thread finished the task (before its trigger) */
  MK_TRACE_TIMES = 3,
};

/* Published by the generated kernel as a __constant__ named
 * MK_KERNEL_INFO_NAME, so that the loader launches it as it was built. */
typedef struct MkKernelInfo {
  mk_u32 abiVersion;
  mk_u32 threads;     /* per CTA */
  mk_u32 sharedBytes; /* dynamic shared memory per CTA */
  mk_u32 numSms;      /* CTAs: one per queue of the schedule */
  mk_u32 numTasks, numEvents, numOperations;
  mk_u32 numVariants; /* entries of MK_KERNEL_VARIANTS_NAME */
  mk_i64 maxContext;
  mk_u64 vocab;
  mk_u32 rows, sequences; /* of the graph's step: 1, 1 for decode */
  mk_u32 ranks;           /* of tensor parallelism: 1 for one GPU */
  mk_u32 reserved;
} MkKernelInfo;

/* One instantiation of a task kind's device function the kernel holds, by
 * its number (MkTaskRecord.variant), published as a __constant__ array named
 * MK_KERNEL_VARIANTS_NAME: the loader refuses a graph that needs another. */
#define MK_MAX_VARIANT_ARGUMENTS 8
typedef struct MkKernelVariant {
  mk_u32 kind; /* MkBlobTaskKind */
  mk_u32 numArguments;
  mk_i64 arguments[MK_MAX_VARIANT_ARGUMENTS]; /* the kind's variant parameters, in order */
} MkKernelVariant;

#ifdef __cplusplus
/* Both compilers must agree on these; a field added without its padding
 * shows here first. */
static_assert(sizeof(MkKernelArgs) == 48, "MkKernelArgs is 6 addresses");
static_assert(sizeof(MkControlBlock) == 248, "MkControlBlock has no hidden padding");
static_assert(sizeof(MkRowPlan) == 64, "MkRowPlan has no hidden padding");
static_assert(sizeof(MkSamplingSettings) == 32, "MkSamplingSettings has no hidden padding");
static_assert(sizeof(MkRanks) == 32 + 8 * MK_MAX_RANKS, "MkRanks has no hidden padding");
static_assert(sizeof(MkStream) == 16, "MkStream has no hidden padding");
static_assert(sizeof(MkKernelInfo) == 64, "MkKernelInfo has no hidden padding");
static_assert(sizeof(MkKernelVariant) == 72, "MkKernelVariant has no hidden padding");
#endif

#endif
