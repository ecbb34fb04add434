/* libmkrt: runs a model compiled by mkc (a .mk file) on the GPU, through its
 * megakernel, or on the CPU, through the CPU executor of its task graph.
 * Plain C, usable from C and C++; the library itself needs neither MLIR, LLVM
 * nor ONNX, and loads the CUDA driver only when a GPU session is created.
 *
 *   mkrt_model *model;
 *   char error[512];
 *   if (mkrt_open("model.mk", &model, error, sizeof error) != MKRT_OK) ...
 *   mkrt_session *session;
 *   mkrt_session_create(model, "auto", 0, &session, error, sizeof error);
 *   int64_t prompt[] = {1, 2, 3}, out[64];
 *   size_t n_out;
 *   mkrt_timing timing;
 *   mkrt_generate(session, prompt, 3, 64, out, &n_out, &timing);
 *   // timing.step_ms[0 .. timing.num_step_ms): each step's milliseconds
 *
 *   mkrt_sampling sampling;                 // sampled in the kernel, seeded
 *   mkrt_sampling_init(&sampling);          // greedy
 *   sampling.temperature = 0.8; sampling.top_p = 0.9; sampling.seed = 7;
 *   mkrt_session_set_sampling(session, &sampling);
 *   int on_token(void *user, int64_t token, size_t index) { ...; return 0; } // 1: stop
 *   mkrt_generate_stream(session, prompt, 3, 64, on_token, NULL, out, &n_out, &timing);
 *   mkrt_session_destroy(session);
 *   mkrt_close(model);
 *
 * Every call of a session starts a new context at position 0 (or at the
 * session's start position, for timing: mkrt_session_set_start_position);
 * mkrt_continue instead carries on the session's kept context, turn after
 * turn of a conversation. Generation is greedy unless the session's sampling
 * settings say otherwise (mkrt_session_set_sampling: picked in the kernel,
 * the same tokens for a seed on the GPU and the CPU), and teacher-forced logits
 * follow the same contract as `mkc eval` (one row of logits per token, each
 * token fed at the next position). A session is used by one thread at a time. */
#ifndef MKRT_H
#define MKRT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum mkrt_status {
  MKRT_OK = 0,
  /* A null pointer, an unknown device, a token outside the vocabulary. */
  MKRT_ERROR_INVALID_ARGUMENT = 1,
  /* An unreadable, truncated, corrupted or inconsistent .mk file. */
  MKRT_ERROR_INVALID_MODEL = 2,
  /* The device is unavailable, and nothing failed: no GPU, no driver, no
   * kernel in the file, or a GPU that cannot run it (another architecture,
   * fewer SMs than the schedule's queues). */
  MKRT_ERROR_NO_DEVICE = 3,
  /* More positions than the session's max_context. */
  MKRT_ERROR_CONTEXT_FULL = 4,
  /* The run failed on the CPU executor, or its trace could not be written. */
  MKRT_ERROR_EXECUTION = 5,
  /* A GPU is there and failed: loading the kernel's module, allocating or
   * copying memory, the launch, or the kernel's error word (a wait past its
   * bound, a non-finite logit). Before this value existed such failures
   * were MKRT_ERROR_EXECUTION, or MKRT_ERROR_NO_DEVICE when loading. */
  MKRT_ERROR_DEVICE_FAILURE = 6,
  /* The session cannot run this request: a batch with a repetition penalty
   * on the GPU, or a file compiled without a batch that large (or without
   * its kernel). */
  MKRT_ERROR_UNSUPPORTED = 7,
} mkrt_status;

typedef struct mkrt_model mkrt_model;
typedef struct mkrt_session mkrt_session;

typedef struct mkrt_info {
  int64_t num_layers, hidden, num_heads, num_kv_heads, head_dim, vocab;
  int64_t max_context;            /* the most positions a session may use */
  uint32_t num_sms;               /* of the target the schedule was compiled for */
  int has_kernel;                 /* 0: the file runs on the CPU only */
  const char *target_arch;        /* "sm_90a" */
  const char *compiler_version;   /* "mkc 0.1.0" */
  const char *kernel_fingerprint; /* SHA-256 (hex) of the kernel, "" without one */
  const int64_t *eos_tokens;      /* generation stops after any of them */
  size_t num_eos_tokens;
} mkrt_info;

typedef struct mkrt_timing {
  double total_ms;          /* the whole call: every step of the prompt and the generation */
  double kernel_ms;         /* on the GPU, the launch alone (CUDA events); on the CPU, total_ms */
  int64_t steps;            /* decode steps run: one per position */
  double ms_per_token;      /* total_ms / steps */
  double tokens_per_second; /* steps per second */
  int stopped_at_eos;       /* generation ended on an EOS token, before n_new */
  /* The milliseconds of each decode step, the first position first: from the end of
   * the previous step (step 0: the start of the launch) to the end of the
   * step's argmax, by the GPU's %globaltimer or the CPU's steady clock.
   * A prompt the CPU fed through a prefill chunk (mkc compile
   * --prefill-chunk) counts each chunk's time in equal shares for the
   * positions it fed. num_step_ms == steps. Owned by the session: valid
   * until its next call. */
  const double *step_ms;
  size_t num_step_ms;
  int stopped_by_callback; /* a streaming call's callback asked to stop */
} mkrt_timing;

/* How generation picks each token, in the kernel (or the CPU executor),
 * the same way on both (docs/mk-format.md's "Sampling" has the rules):
 * the repetition penalty (HF's: over every token of the context so far),
 * then greedy when temperature is 0, else the logits divided by the
 * temperature, cut to the top_k most likely (0: no cut), then to the fewest
 * whose probabilities reach top_p (over at most the 1024 most likely), then
 * those below min_p times the most likely one's dropped, and drawn with a
 * counter-based generator: the draw at context position p of seed S is a
 * function of (S, p) alone, so a seed gives the same tokens on the GPU and
 * the CPU, in one call or turn by turn (for a GPU prompt of 32 tokens or
 * more where its logits' top-2 gaps are clear: see
 * mkrt_session_set_prompt_by_step). */
typedef struct mkrt_sampling {
  double temperature;        /* >= 0; 0: greedy, the default */
  int64_t top_k;             /* [0, 1024]; 0: off */
  double top_p;              /* (0, 1]; 1: off */
  double min_p;              /* [0, 1]; 0: off */
  double repetition_penalty; /* > 0; 1: off */
  uint64_t seed;
} mkrt_sampling;

/* Greedy settings: temperature 0, top_k 0, top_p 1, min_p 0, penalty 1, seed 0. */
void mkrt_sampling_init(mkrt_sampling *sampling);

/* Called with each new token as it is produced, `index` counting the call's
 * new tokens from 0, in order; nonzero stops the generation after this
 * token (the kernel ends after the step, as after an EOS). On the GPU it
 * runs on the calling thread while the kernel runs (tokens come from
 * host-mapped memory the kernel writes, with no relaunch); on the CPU after
 * each step, on a thread of the executor, never two at once. It must not
 * call libmkrt on the same session. */
typedef int (*mkrt_token_callback)(void *user_data, int64_t token, size_t index);

/* What the model's own files say about generation (`mkc compile
 * --tokenizer=DIR`, or the files beside the model; docs/mk-format.md): what
 * turns text into tokens and back. The vocabulary and the EOS tokens are in
 * mkrt_info. The strings live as long as the model. */
typedef struct mkrt_generation_info {
  /* The TOKENIZER section: HF tokenizers' tokenizer.json, byte for byte, NUL
   * terminated; "" and 0 when the file has none. */
  const char *tokenizer_json;
  size_t tokenizer_json_size;
  int has_bos;                  /* 0: prompts start with no BOS token */
  int64_t bos_token;            /* -1 without one */
  const char *chat_template;    /* Jinja, as shipped; "" without one */
  const char *tokenizer_source; /* the folder they came from, "" when unknown */
  /* generation_config.json's sampling defaults, where it samples: each
   * meaningful only with its has_ flag. */
  int has_temperature, has_top_k, has_top_p;
  double temperature, top_p;
  int64_t top_k;
} mkrt_generation_info;

/* Opens and checks a .mk file: checksums, format version, the manifest, and
 * the task graph through the validator. On failure *model is NULL and
 * `errbuf` (when not NULL) holds the reason. The strings of
 * mkrt_info live as long as the model. */
mkrt_status mkrt_open(const char *path, mkrt_model **model, char *errbuf, size_t errbuf_size);
void mkrt_close(mkrt_model *model);
mkrt_status mkrt_model_info(const mkrt_model *model, mkrt_info *info);
mkrt_status mkrt_model_generation_info(const mkrt_model *model, mkrt_generation_info *info);
/* The batch sizes the file holds (`mkc compile --batch=B`: the B sequences
 * mkrt_generate_batch may run in one launch), increasing, into
 * sizes[0, capacity); *count receives how many there are (0: none; it may
 * pass capacity, and then only the first capacity are written). */
mkrt_status mkrt_model_batch_sizes(const mkrt_model *model, int64_t *sizes, size_t capacity,
                                   size_t *count);

/* `device`: "cpu", "gpu", or "auto" (the GPU when it can run this file, else
 * the CPU, with a note on stderr). `max_context`: positions available to
 * each call, at most the compiled one; 0 takes the compiled one. Fails with
 * MKRT_ERROR_NO_DEVICE when "gpu" is unavailable (no GPU, no driver, no
 * kernel, a GPU that cannot run the file), and with
 * MKRT_ERROR_DEVICE_FAILURE when "gpu" or "auto" finds a GPU that fails to
 * load the model ("auto" does not hide a failing GPU behind the CPU). The
 * model must outlive its sessions. */
mkrt_status mkrt_session_create(mkrt_model *model, const char *device, int64_t max_context,
                                mkrt_session **session, char *errbuf, size_t errbuf_size);
void mkrt_session_destroy(mkrt_session *session);
/* "cpu (132 threads)" or the GPU's description. */
const char *mkrt_session_device(const mkrt_session *session);

/* Feeds the prompt, then generates up to `n_new` tokens (greedily, or as
 * the session's sampling settings say) into
 * `out_tokens` (room for n_new), stopping after an EOS token of the model.
 * `n_out` receives the count; `timing` may be NULL. Needs n_prompt >= 1 and
 * start position + n_prompt + n_new - 1 <= max_context (the start position
 * is 0 unless set). */
mkrt_status mkrt_generate(mkrt_session *session, const int64_t *prompt, size_t n_prompt,
                          size_t n_new, int64_t *out_tokens, size_t *n_out, mkrt_timing *timing);

/* A context kept between calls, for a conversation: feeds `tokens` at the
 * positions after the session's kept context (its first call: from 0), the
 * cache below them being what earlier mkrt_continue calls wrote, on the GPU
 * and the CPU alike, then generates up to `n_new` tokens greedily as
 * mkrt_generate does (n_new may be 0: the tokens are only fed). The kept
 * context then holds the tokens fed and every generated token but the last,
 * which was not fed: to carry the generation on, the next call feeds it
 * first. So a conversation fed turn by turn gives the tokens and logits of
 * one mkrt_generate over the whole of it. Needs n >= 1 and context length +
 * n + n_new - 1 <= max_context (else MKRT_ERROR_CONTEXT_FULL, the context
 * kept as it was). The start position does not apply; tracing does, the
 * positions counted from the kept context's end. mkrt_generate and
 * mkrt_eval_logits start new contexts and so end the kept one (its length
 * becomes 0), and so does a run that failed (MKRT_ERROR_EXECUTION,
 * MKRT_ERROR_DEVICE_FAILURE); a refused call (an invalid argument, a full
 * context) leaves it as it was. */
mkrt_status mkrt_continue(mkrt_session *session, const int64_t *tokens, size_t n, size_t n_new,
                          int64_t *out_tokens, size_t *n_out, mkrt_timing *timing);
/* Teacher forcing in the kept context: feeds `tokens` after it as
 * mkrt_continue does and writes the logits after each into `out_logits`
 * (room for n * vocab floats), row by row; the kept context then holds them
 * all. The last row is the distribution of
 * the next token, which the next call feeds. The same rules as
 * mkrt_continue: n >= 1, the context's room, a refused call keeping it. */
mkrt_status mkrt_continue_logits(mkrt_session *session, const int64_t *tokens, size_t n,
                                 float *out_logits);
/* The positions the kept context holds; 0 for a NULL session. */
int64_t mkrt_session_context_length(const mkrt_session *session);
/* Keeps only the first `length` positions of the kept context (at most its
 * length; 0 ends it): the next mkrt_continue feeds from there, overwriting
 * what followed. Attention never reads past a step's position, so nothing of
 * the cut part reaches later steps. */
mkrt_status mkrt_session_rewind(mkrt_session *session, int64_t length);

/* Starts every later mkrt_generate, mkrt_eval_logits and
 * mkrt_generate_batch (each of its sequences) of the session at context
 * position `position` instead of 0: the first token fed goes there,
 * and the cache slots below it are attended to holding whatever the
 * session's cache holds: zeros on the CPU (every call) and in a new GPU
 * session, later on the GPU what earlier calls wrote. It exists to time a
 * step at a position (up to max_context) without feeding a prompt through
 * every position before it: the tokens and logits then belong to no real
 * context. A later call whose position plus the positions it needs pass
 * max_context fails with MKRT_ERROR_CONTEXT_FULL, and so does a position
 * that leaves no room (>= max_context); a negative one is
 * MKRT_ERROR_INVALID_ARGUMENT. 0 restores the default. Traces and step times
 * count positions from it. */
mkrt_status mkrt_session_set_start_position(mkrt_session *session, int64_t position);

/* How a GPU session feeds a prompt to mkrt_generate: by default a prompt
 * of 32 tokens or more runs layer by layer, every token of it through one
 * layer before the next (the matrices by cuBLASLt, found at run time, on
 * bf16 inputs: its logits differ from the decode kernel's by up to ~1e-2 of
 * the largest, so a token whose top-2 gap is within that may differ from
 * the CPU executor's); the first new token is then, when picked greedily
 * without a repetition penalty, the argmax of the prompt's own last logits
 * row, else the decode kernel's pick after it feeds the prompt's last
 * token (sampled as asked); a shorter prompt goes one token a decode step,
 * as the CPU's does, where it takes little time. With `by_step` non-zero
 * every prompt goes by step. Where prompts cannot run layer by layer (no
 * cuBLASLt, a file of an older mkc, a trace asked for) they go by step
 * either way. The CPU executor ignores it. */
mkrt_status mkrt_session_set_prompt_by_step(mkrt_session *session, int by_step);

/* Traces every later mkrt_generate (and mkrt_generate_batch) of the
 * session: each call records when
 * every task of every step waited, started and ended on its SM (on the CPU,
 * on its emulated SM), and writes them to `path` as a Chrome trace-event
 * JSON file (chrome://tracing, ui.perfetto.dev), replacing the last call's.
 * One row per SM; one "X" event per task run, named as messages name the
 * task ("task 12 (Gemv 'layer0.qkv', rows [0, 32))"), and a "wait" event
 * before it when its SM waited on its events; times in microseconds from
 * the launch's start; args: step, position, task (its id). A NULL `path`
 * stops tracing. mkrt_eval_logits is never traced. A trace costs memory (24
 * bytes per task and step; past 1 GiB the call fails) and a little time; a
 * trace that cannot be written fails mkrt_generate with
 * MKRT_ERROR_EXECUTION after its outputs and timing were filled. */
mkrt_status mkrt_session_set_trace(mkrt_session *session, const char *path);

/* The settings every later generation of the session uses (mkrt_generate,
 * mkrt_continue and their _stream forms); NULL restores greedy. Refused
 * (MKRT_ERROR_INVALID_ARGUMENT, naming the setting) outside the ranges of
 * mkrt_sampling, the session keeping its settings. Teacher-forced logits
 * are never sampled. */
mkrt_status mkrt_session_set_sampling(mkrt_session *session, const mkrt_sampling *sampling);

/* mkrt_generate and mkrt_continue, with `callback` (not NULL) called on
 * each new token as it is produced; its stop ends the call with MKRT_OK,
 * the tokens through the one it stopped after in out_tokens, and
 * timing->stopped_by_callback set. The kept context of mkrt_continue_stream
 * then ends after that token, as after an EOS. */
mkrt_status mkrt_generate_stream(mkrt_session *session, const int64_t *prompt, size_t n_prompt,
                                 size_t n_new, mkrt_token_callback callback, void *user_data,
                                 int64_t *out_tokens, size_t *n_out, mkrt_timing *timing);
mkrt_status mkrt_continue_stream(mkrt_session *session, const int64_t *tokens, size_t n,
                                 size_t n_new, mkrt_token_callback callback, void *user_data,
                                 int64_t *out_tokens, size_t *n_out, mkrt_timing *timing);

/* Several independent sequences in one launch, a row of each step per
 * sequence (a .mk compiled with `mkc compile --batch=B`; the smallest batch
 * of at least n_sequences is used, its other rows idle): sequence i is fed
 * prompts[i] (n_prompts[i] >= 1 tokens) from position 0 (or the session's
 * start position) and then generates
 * up to n_new tokens with the session's sampling settings, stopping after
 * an EOS token of the model, as mkrt_generate would for it alone, into
 * out_tokens[i * n_new ...]; n_out[i] receives its count. `timing` may be
 * NULL; its steps and step_ms are the launch's steps (one for every
 * sequence at once), its tokens_per_second all the sequences' new tokens
 * over kernel_ms (the launch alone, and on a GPU the prompts run layer by
 * layer). A GPU session runs the file's batch kernel (loading it on its
 * first use, on the weights the session's kernel already holds), greedy or
 * sampled (each sequence's draws counted by its own positions, as alone; a
 * repetition penalty counting each sequence's own tokens). There a prompt
 * of 32 tokens or more first runs layer by layer as mkrt_generate's does
 * (unless mkrt_session_set_prompt_by_step), into its sequence's cache of
 * the batch, and the launch starts that sequence at the prompt's last
 * token. For a file without such a batch (or, on a GPU session, without
 * its kernel), MKRT_ERROR_UNSUPPORTED. The kept context is not
 * touched. A session's trace (mkrt_session_set_trace) records the launch
 * too: the batch step's tasks, each of which covers every row. */
mkrt_status mkrt_generate_batch(mkrt_session *session, const int64_t *const *prompts,
                                const size_t *n_prompts, size_t n_sequences, size_t n_new,
                                int64_t *out_tokens, size_t *n_out, mkrt_timing *timing);

/* Teacher forcing: `out_logits` (room for n * vocab floats) receives the
 * logits after each token, row by row. */
mkrt_status mkrt_eval_logits(mkrt_session *session, const int64_t *tokens, size_t n,
                             float *out_logits);

/* What this libmkrt is: "libmkrt for .mk format 1, Release build, git
 * 1a2b3c4" (the revision when the build knew it). */
const char *mkrt_version(void);
/* The CUDA driver's version, "12.4", or why there is none ("not found
 * (...)"). Loads the driver without starting it. */
const char *mkrt_cuda_driver_version(void);

/* The message of this thread's last failed call, "" when none failed. */
const char *mkrt_last_error(void);

#ifdef __cplusplus
}
#endif

#endif
