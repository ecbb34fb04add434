/* Generates tokens from a .mk model with libmkrt's C API:
 *
 *   generate MODEL.mk [N]
 *
 * feeds the prompt 1, 2, 3 and prints N (default 16) new tokens, on the GPU
 * when this machine and the model allow it, else on the CPU, then the time
 * per token and a summary of each decode step's time. */
#include "mkrt.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  if (argc < 2 || argc > 3) {
    fprintf(stderr, "usage: %s MODEL.mk [N]\n", argv[0]);
    return 1;
  }
  size_t n_new = argc == 3 ? (size_t)strtoul(argv[2], NULL, 10) : 16;

  char error[512];
  mkrt_model *model = NULL;
  if (mkrt_open(argv[1], &model, error, sizeof error) != MKRT_OK) {
    fprintf(stderr, "cannot open the model: %s\n", error);
    return 2;
  }
  mkrt_info info;
  mkrt_model_info(model, &info);
  printf("%lld layers, hidden %lld, vocabulary %lld, context %lld, compiled by %s\n",
         (long long)info.num_layers, (long long)info.hidden, (long long)info.vocab,
         (long long)info.max_context, info.compiler_version);

  mkrt_session *session = NULL;
  if (mkrt_session_create(model, "auto", 0, &session, error, sizeof error) != MKRT_OK) {
    fprintf(stderr, "cannot start a session: %s\n", error);
    mkrt_close(model);
    return 2;
  }

  int64_t prompt[] = {1, 2, 3};
  const size_t n_prompt = sizeof prompt / sizeof *prompt;
  int64_t *tokens = malloc((n_new ? n_new : 1) * sizeof *tokens);
  size_t n_out = 0;
  mkrt_timing timing;
  int status = 0;
  if (!tokens || mkrt_generate(session, prompt, n_prompt, n_new, tokens, &n_out, &timing) != MKRT_OK) {
    fprintf(stderr, "generation failed: %s\n", tokens ? mkrt_last_error() : "out of memory");
    status = 2;
  } else {
    printf("tokens:");
    for (size_t i = 0; i < n_out; ++i)
      printf(" %lld", (long long)tokens[i]);
    printf("\n");
    /* The prompt's steps, then the generation's: the last prompt step
     * already yields the first new token, so the two are timed apart. */
    size_t prompt_steps = timing.num_step_ms < n_prompt ? timing.num_step_ms : n_prompt;
    double prompt_ms = 0, generation_ms = 0;
    for (size_t i = 0; i < timing.num_step_ms; ++i)
      *(i < prompt_steps ? &prompt_ms : &generation_ms) += timing.step_ms[i];
    printf("prompt: %zu tokens in %.3f ms\n", prompt_steps, prompt_ms);
    size_t generated = timing.num_step_ms - prompt_steps;
    if (generated > 0)
      printf("generation: %zu tokens, %.3f ms/token on %s\n", generated,
             generation_ms / generated, mkrt_session_device(session));
    else
      printf("generation: no step after the prompt on %s\n", mkrt_session_device(session));
  }
  free(tokens);
  mkrt_session_destroy(session);
  mkrt_close(model);
  return status;
}
