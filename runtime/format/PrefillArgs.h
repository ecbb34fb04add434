/* The launch ABI of the prompt kernels, shared by the loader (g++,
 * runtime/gpu/Prefill.cpp) and the device library (NVRTC,
 * codegen/device/PrefillKernels.cuh, PrefillAttention.cuh). A prompt runs
 * layer by layer over all its rows at once (docs/m-token-steps.md): these
 * kernels do the row-wise parts, the library GEMMs the matrices. They live
 * in the decode kernel's CUBIN, so a .mk holds them without a section of
 * their own. Plain C of fixed-width fields; device addresses as 64-bit
 * integers (0: none), as in ControlBlock.h. */
#ifndef MKC_RUNTIME_FORMAT_PREFILLARGS_H
#define MKC_RUNTIME_FORMAT_PREFILLARGS_H

#include "core/protocol/Portable.h"

#define MK_PREFILL_ABI_VERSION 4u
#define MK_PREFILL_ABI_NAME "mk_prefill_abi" /* a __constant__ u32: the version the CUBIN's kernels speak */
#define MK_PREFILL_EMBED_NAME "mk_prefill_embed"
#define MK_PREFILL_NORM_NAME "mk_prefill_norm"
#define MK_PREFILL_EPILOGUE_NAME "mk_prefill_epilogue"
#define MK_PREFILL_ARGMAX_NAME "mk_prefill_argmax"
/* Per attention shape, "_d<headDim>_c<cache bytes>": mk_prefill_prepare_d64_c4. */
#define MK_PREFILL_PREPARE_PREFIX "mk_prefill_prepare"
#define MK_PREFILL_ATTENTION_PREFIX "mk_prefill_attention"

#define MK_PREFILL_THREADS 256           /* embed, norm, epilogue */
#define MK_PREFILL_ARGMAX_THREADS 1024
#define MK_PREFILL_PREPARE_HEADS 4       /* heads a CTA of the prepare kernel takes, a warp each */
/* Warps of an attention CTA: 4 of 32 query rows for heads of up to 64
 * dimensions, else 8 of 16 (the registers of o and S). */
#define MK_PREFILL_ATTENTION_WARPS(headDim) ((headDim) <= 64 ? 4 : 8)
/* Query rows of an attention CTA: a query row is a prompt row and one q
 * head of the CTA's KV head's group (row * group + head in the group). */
#define MK_PREFILL_ATTENTION_ROWS 128
#define MK_PREFILL_ATTENTION_KEYS 64     /* cache positions an attention CTA stages at a time */
#define MK_PREFILL_MAX_HEAD_DIM 128      /* larger heads are not prefilled (registers) */
/* Heads of whole 8 dimensions are taken (the 16-byte units of a bf16
 * row); the mma's k16 steps see them padded to whole 16s with zeros. */
#define MK_PREFILL_HEAD_DIM_UNIT 8
#define MK_PREFILL_PADDED_HEAD_DIM(headDim) (((headDim) + 15) / 16 * 16)
/* A staged key or value row, in bf16 elements: the padded head and 8 more,
 * so that a fragment's reads of 8 rows fall in different banks. */
#define MK_PREFILL_ATTENTION_STRIDE(headDim) (MK_PREFILL_PADDED_HEAD_DIM(headDim) + 8)
/* An attention CTA's dynamic shared memory: two stages of a block's keys and values. */
#define MK_PREFILL_ATTENTION_SHARED_BYTES(headDim) \
  (2 * 2 * MK_PREFILL_ATTENTION_KEYS * MK_PREFILL_ATTENTION_STRIDE(headDim) * 2)

/* out[r] = table[tokens[r]] as f32; grid (rows), MK_PREFILL_THREADS. */
typedef struct MkPrefillEmbedArgs {
  mk_u64 table;  /* bf16 [vocab][hidden] */
  mk_u64 tokens; /* i64 [rows], within the vocabulary (the host checks) */
  mk_u64 output; /* f32 [rows][hidden] */
  mk_u64 rows, hidden;
} MkPrefillEmbedArgs;

/* output[r] = bf16(rmsnorm(input[r]) * norm), or bf16(input[r]) without a
 * norm; grid (rows), MK_PREFILL_THREADS. The rows are the GEMM's input. */
typedef struct MkPrefillNormArgs {
  mk_u64 input;  /* f32 [rows][length] */
  mk_u64 output; /* bf16 [rows][length] */
  mk_u64 norm;   /* f32 [length], or 0 */
  mk_u64 rows, length;
  float eps;
  mk_u32 reserved;
} MkPrefillNormArgs;

/* y[r][j] = epilogue(products[r][j] + bias[j]) (MkBlobEpilogue): SiluMul
 * silu(p[j]) * p[length + j], Residual residual[r][j] + p[j]; into
 * output[r] as f32 when `output`, and into gemmInput[r] as bf16 when
 * `gemmInput` (the next Gemv's GEMM input, that Gemv having no norm);
 * grid (ceil(length / (4 MK_PREFILL_THREADS)), rows): four elements a
 * thread. */
typedef struct MkPrefillEpilogueArgs {
  mk_u64 products;  /* f32 (or bf16) [rows][productStride]: the GEMMs' outputs, stacked */
  mk_u64 bias;      /* f32 [productStride], or 0 */
  mk_u64 residual;  /* f32 [rows][length] (Residual) */
  mk_u64 output;    /* f32 [rows][length], or 0 */
  mk_u64 gemmInput; /* bf16 [rows][length], or 0 */
  mk_u64 rows, length, productStride;
  mk_u32 epilogue;
  mk_u32 bf16Products; /* 1: `products` is bf16 (a SiLU-mul's: half the bytes to read) */
} MkPrefillEpilogueArgs;

/* The greedy pick of one logits row (the prompt's last: its first new
 * token): picked[0] = the largest finite logit's index, of equals the
 * lowest; picked[1] = the lowest index of a NaN or infinite logit,
 * 0xffffffff if none; grid (1), MK_PREFILL_ARGMAX_THREADS. */
typedef struct MkPrefillArgmaxArgs {
  mk_u64 logits; /* f32 [vocab] */
  mk_u64 picked; /* u32 [2] */
  mk_u64 vocab;
} MkPrefillArgmaxArgs;

/* Rows at positions firstPosition + r: q head-normed and rotated into
 * `queries` as bf16, k head-normed and rotated and v into the caches' slots
 * (rounded to the cache's element), as the decode kernel's chunk 0 writes
 * them; grid (ceil((numHeads + 2 numKvHeads) / MK_PREFILL_PREPARE_HEADS),
 * rows), 32 x MK_PREFILL_PREPARE_HEADS threads. */
typedef struct MkPrefillPrepareArgs {
  mk_u64 qkv;        /* f32 [rows][(numHeads + 2 numKvHeads) headDim] */
  mk_u64 queries;    /* bf16 [rows][numHeads][headDim] */
  mk_u64 keyCache;   /* the sequence's slots [numKvHeads][maxContext][headDim] */
  mk_u64 valueCache;
  mk_u64 qNorm, kNorm, invFreq; /* f32, or 0 */
  mk_u64 rows;
  mk_i64 firstPosition;
  mk_u64 numHeads, numKvHeads;
  mk_u64 capacity; /* each KV head's positions in the slots (cacheEntry's stride) */
  mk_u64 rotaryDim;
  mk_u32 interleaved;
  float eps;
} MkPrefillPrepareArgs;

/* Causal attention of every row over the cache's positions up to its own
 * (the last `window` of them with a sliding window):
 * output[r][h] = softmax(q . k * scale) v, on tensor cores (bf16 q, k, v and
 * weights; f32 sums); grid (numKvHeads, ceil(rows x numHeads / numKvHeads /
 * MK_PREFILL_ATTENTION_ROWS)), 32 x MK_PREFILL_ATTENTION_WARPS(headDim) threads,
 * MK_PREFILL_ATTENTION_SHARED_BYTES(headDim) of dynamic shared memory. */
typedef struct MkPrefillAttentionArgs {
  mk_u64 queries; /* bf16 [rows][numHeads][headDim] */
  mk_u64 keyCache, valueCache;
  mk_u64 output;  /* f32 (or bf16) [rows][numHeads][headDim] */
  mk_u64 rows;
  mk_i64 firstPosition;
  mk_u64 numHeads, numKvHeads;
  mk_u64 capacity; /* as MkPrefillPrepareArgs' */
  float scale;
  mk_u32 bf16Output; /* 1: `output` is bf16, the next Gemv's GEMM input */
  mk_u32 window;     /* a sliding window's positions (attentionWindowStart), 0: none */
} MkPrefillAttentionArgs;

#if defined(__cplusplus) && !defined(__CUDACC_RTC__)
#include <string>
/* The kernel of a prefix for one attention shape: mk_prefill_attention_d64_c2. */
inline std::string mkPrefillKernelName(const char *prefix, mk_u64 headDim, mk_u64 cacheBytes) {
  return std::string(prefix) + "_d" + std::to_string(headDim) + "_c" + std::to_string(cacheBytes);
}
#endif

#endif
