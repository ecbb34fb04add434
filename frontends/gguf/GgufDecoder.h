// What a GGUF file of the llama family (llama.cpp's architectures `llama`,
// `mistral`, `qwen2`, `qwen3`, and `phi3`, `granite`, `gemma`, `gemma3`,
// `smollm3`, `exaone4`, which differ
// from it in ways the importer folds away) says about its decoder: the hyperparameters
// under `<arch>.*`, the rotary frequencies (rope scaling included), which
// optional parts the architecture has, and the tokenizer's special tokens
// and chat template. No MLIR: the importer (frontends/gguf/import/) turns
// this and the tensors (GgufWeights.h) into mk IR.
#ifndef MKC_FRONTENDS_GGUF_GGUFDECODER_H
#define MKC_FRONTENDS_GGUF_GGUFDECODER_H

#include "frontends/gguf/GgufFile.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mk {

struct GgufDecoderConfig {
  std::string architecture; // general.architecture
  int64_t hidden = 0, layers = 0, heads = 0, kvHeads = 0, headDim = 0, ffn = 0, vocab = 0;
  int64_t contextLength = 0;
  // attention.sliding_window when shorter than the context: each position
  // attends to the last `slidingWindow` (mk.attention's window); 0: all.
  int64_t slidingWindow = 0;
  // gemma3: which layers are sliding ones (attention.sliding_window_pattern,
  // llama.cpp's default five of every six), each with the window above and
  // rotary frequencies of its own (`slidingInvFreq`: rope.freq_base_swa,
  // default 10000, unscaled); the others attend to every position and
  // rotate by `invFreq`. Empty: every layer takes `slidingWindow` and
  // `invFreq`.
  std::vector<bool> slidingLayers;
  std::vector<float> slidingInvFreq;
  std::optional<double> slidingRopeTheta;
  float rmsEps = 0;
  // rotary_dim / 2 frequencies, as the model rotates (scaling applied);
  // `ropeTheta` is set only when they are the plain base^(-2i/rotary_dim).
  int64_t rotaryDim = 0;
  std::vector<float> invFreq;
  std::optional<double> ropeTheta;
  // llama.cpp's converter permutes the rows of attn_q/attn_k of `llama` and
  // `mistral` from HF's rotate-half layout to ggml's adjacent pairs; the
  // importer undoes it (GgufWeights.h) so the IR is the ONNX one.
  bool permutedQK = false;
  bool qkvBias = false; // qwen2: attn_q/k/v.bias
  bool qkNorm = false;  // qwen3: attn_q_norm/attn_k_norm.weight
  bool tied = false;    // no output.weight: the lm_head is token_embd
  // phi3: q | k | v in one attn_qkv, gate | up in one ffn_up of 2 x ffn rows.
  bool fusedProjections = false;
  bool geluMlp = false; // gemma: GELU's tanh approximation gates the MLP, not SiLU
  // gemma3: RMSNorms of attention's and the MLP's outputs before their
  // residual adds (post_attention_norm, post_ffw_norm).
  bool postNorms = false;
  // exaone4: no RMSNorm before attention and the MLP (its norms are after).
  bool preNorms = true;
  // smollm3: every `noRopeEvery`-th layer (the 4th, 8th, ...) rotates
  // nothing, as llama.cpp's graph has it; 0: every layer rotates.
  int64_t noRopeEvery = 0;
  // Factors llama.cpp multiplies by in its graph: the looked-up embedding
  // (granite's embedding_scale, gemma's sqrt(embedding_length)), each
  // block's attention and MLP outputs before the residual adds (granite's
  // residual_scale) and the logits (1 / granite's logit_scale). The importer
  // folds them into the weights that make those vectors.
  double embeddingScale = 1.0, residualScale = 1.0, logitScale = 1.0;
  // The attention's scale: granite's attention.scale; gemma3's as llama.cpp
  // takes it (1 / sqrt(hidden / heads) for the 62-layer 27B, else
  // 1 / sqrt(headDim)); else 1 / sqrt(headDim).
  std::optional<double> attentionScale;
};

// Reads and checks the hyperparameters against each other and against the
// tensors' shapes that define them (token_embd.weight gives the vocabulary):
// "" or an error naming the metadata key or tensor.
std::string readDecoderConfig(const GgufFile &file, GgufDecoderConfig &config);

struct GgufSpecialTokens {
  std::vector<int64_t> eosTokens; // tokenizer.ggml.eos_token_id (and eot when distinct)
  std::optional<int64_t> bosToken; // bos_token_id, unless add_bos_token is false
  std::string chatTemplate;       // tokenizer.chat_template
};

// The tokenizer's facts a .mk carries; keys that are absent are left empty,
// keys of the wrong type are an error.
std::string readSpecialTokens(const GgufFile &file, GgufSpecialTokens &tokens);

} // namespace mk

#endif
