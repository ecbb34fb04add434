#include "frontends/gguf/GgufDecoder.h"

#include "frontends/gguf/GgufQuants.h"

#include <cmath>
#include <cstring>

namespace mk {

namespace {

// The architectures whose tensors and hyperparameters are llama's, with what
// each adds; anything else is refused by name.
// (GgufDecoderConfig says what each part means.)
struct Architecture {
  const char *name;
  bool permutedQK = false, qkvBias = false, qkNorm = false;
  bool fusedProjections = false, geluMlp = false, multipliers = false, scaledEmbedding = false;
  bool preNorms = true, postNorms = false;
  int64_t noRopeEvery = 0;
  bool gemma3Layers = false;  // sliding and full layers, llama.cpp's gemma3 scale
  bool exaone4Layers = false; // the 64-block hybrid refused
};
constexpr Architecture kArchitectures[] = {
    {.name = "llama", .permutedQK = true},
    {.name = "mistral", .permutedQK = true},
    {.name = "qwen2", .qkvBias = true},
    {.name = "qwen3", .qkNorm = true},
    {.name = "phi3", .fusedProjections = true},
    {.name = "granite", .permutedQK = true, .multipliers = true},
    {.name = "gemma", .geluMlp = true, .scaledEmbedding = true},
    {.name = "gemma3", .qkNorm = true, .geluMlp = true, .scaledEmbedding = true,
     .postNorms = true, .gemma3Layers = true},
    {.name = "smollm3", .permutedQK = true, .noRopeEvery = 4},
    {.name = "exaone4", .qkNorm = true, .preNorms = false, .postNorms = true,
     .exaone4Layers = true},
};
constexpr const char *kArchitectureNames =
    "llama, mistral, qwen2, qwen3, phi3, granite, gemma, gemma3, smollm3, exaone4";

std::string dimsText(const std::vector<uint64_t> &dims) {
  std::string text = "[";
  for (size_t i = 0; i < dims.size(); ++i)
    text += (i ? ", " : "") + std::to_string(dims[i]);
  return text + "]";
}

constexpr uint32_t kMaxCount = 1u << 24;

// A positive count under `key`; `required` false leaves `value` alone when
// the key is absent.
std::string positive(const GgufFile &file, const std::string &key, int64_t &value,
                     bool required = true) {
  if (!required && !file.find(key))
    return "";
  uint32_t raw = 0;
  if (std::string error = file.uint32(key, raw); !error.empty())
    return error;
  if (raw == 0)
    return "metadata key '" + key + "' is 0; it must be positive";
  // Far above any model's widths, and small enough that products of two
  // (heads x head dim, rows x columns) never overflow.
  if (raw > kMaxCount)
    return "metadata key '" + key + "' is " + std::to_string(raw) + ", above the " +
           std::to_string(kMaxCount) + " mkc supports";
  value = raw;
  return "";
}

std::string positiveFloat(const GgufFile &file, const std::string &key, float &value,
                          bool required = true) {
  if (!required && !file.find(key))
    return "";
  if (std::string error = file.float32(key, value); !error.empty())
    return error;
  if (!(value > 0.0f) || !std::isfinite(value))
    return "metadata key '" + key + "' is " + std::to_string(value) +
           "; it must be a positive finite number";
  return "";
}

// 1 / base^(2i/d) for i < d / 2, as transformers computes them in f32 step
// by step (so that they equal the ONNX exports' to the bit).
std::vector<float> plainFrequencies(float base, int64_t rotaryDim) {
  std::vector<float> frequencies(rotaryDim / 2);
  for (size_t i = 0; i < frequencies.size(); ++i) {
    float exponent = static_cast<float>(2 * i) / static_cast<float>(rotaryDim);
    frequencies[i] = 1.0f / std::pow(base, exponent);
  }
  return frequencies;
}

// Frequencies as transformers computes them (plainFrequencies), then the
// scaling the file asks for: linear (every frequency divided by the factor)
// or llama.cpp's rope_freqs.weight (Llama 3's per-frequency divisors, which
// its converter computes from the HF rope_scaling). Other kinds are refused
// rather than approximated.
std::string readRotary(const GgufFile &file, const std::string &arch, float base,
                       GgufDecoderConfig &config) {
  int64_t half = config.rotaryDim / 2;
  config.invFreq = plainFrequencies(base, config.rotaryDim);
  config.ropeTheta = base;

  std::string typeKey = arch + ".rope.scaling.type";
  std::string_view type = "none";
  if (file.find(typeKey))
    if (std::string error = file.string(typeKey, type); !error.empty())
      return error;
  float factor = 1.0f;
  if (type == "linear") {
    if (std::string error = positiveFloat(file, arch + ".rope.scaling.factor", factor);
        !error.empty())
      return error;
  } else if (type != "none") {
    return "metadata key '" + typeKey + "' is '" + std::string(type) +
           "': only rope scaling 'none', 'linear' and Llama 3's rope_freqs.weight are supported";
  }
  // The older key for the same linear scaling.
  std::string oldKey = arch + ".rope.scale_linear";
  if (type == "none" && file.find(oldKey))
    if (std::string error = positiveFloat(file, oldKey, factor); !error.empty())
      return error;
  if (factor != 1.0f) {
    for (float &f : config.invFreq)
      f /= factor;
    config.ropeTheta.reset();
  }

  if (const GgufTensor *freqs = file.findTensor("rope_freqs.weight")) {
    if (freqs->dims != std::vector<uint64_t>{static_cast<uint64_t>(half)})
      return "tensor 'rope_freqs.weight' (info at offset " + std::to_string(freqs->infoOffset) +
             ") has dims " + dimsText(freqs->dims) + ", expected [" + std::to_string(half) +
             "] (rotary dims / 2)";
    std::vector<float> divisors(half);
    if (std::string error = dequantizeTensor(*freqs, divisors); !error.empty())
      return error;
    for (int64_t i = 0; i < half; ++i) {
      if (!(divisors[i] > 0.0f) || !std::isfinite(divisors[i]))
        return "tensor 'rope_freqs.weight': entry " + std::to_string(i) + " is " +
               std::to_string(divisors[i]) + "; rotary divisors must be positive";
      config.invFreq[i] /= divisors[i];
    }
    config.ropeTheta.reset();
  }
  return "";
}

// gemma3's layers, as llama.cpp reads them: with a sliding window, the layers
// attention.sliding_window_pattern names (an array of bools, or every n-th
// layer full, n = 6 by default) are sliding ones, rotating by
// rope.freq_base_swa (10000 by default) unscaled; the queries' scale; no
// logit soft-capping.
std::string readGemma3Layers(const GgufFile &file, int64_t window, GgufDecoderConfig &config) {
  const std::string p = config.architecture + ".";
  const std::string softcapKey = p + "final_logit_softcapping";
  if (file.find(softcapKey)) {
    float softcap = 0.0f;
    if (std::string error = file.float32(softcapKey, softcap); !error.empty())
      return error;
    if (softcap != 0.0f)
      return "metadata key '" + softcapKey + "' is " + std::to_string(softcap) +
             ": mkc does not soft-cap logits";
  }
  config.attentionScale =
      config.layers == 62
          ? static_cast<double>(1.0f / std::sqrt(static_cast<float>(config.hidden / config.heads)))
          : static_cast<double>(1.0f / std::sqrt(static_cast<float>(config.headDim)));
  if (window == 0)
    return ""; // every layer full, as llama.cpp's
  const std::string patternKey = p + "attention.sliding_window_pattern";
  config.slidingLayers.assign(config.layers, false);
  const GgufValue *pattern = file.find(patternKey);
  if (pattern && pattern->type == GgufValueType::Array) {
    if (pattern->elementType != GgufValueType::Bool ||
        pattern->count != static_cast<uint64_t>(config.layers))
      return "metadata key '" + patternKey + "' is an array of " + std::to_string(pattern->count) +
             " " + ggufValueTypeName(pattern->elementType) + ", not of " +
             std::to_string(config.layers) + " bool (one a layer, " + p + "block_count)";
    for (int64_t layer = 0; layer < config.layers; ++layer)
      config.slidingLayers[layer] = pattern->elements[layer] != 0;
  } else {
    uint32_t every = 6;
    if (pattern)
      if (std::string error = file.uint32(patternKey, every); !error.empty())
        return error;
    for (int64_t layer = 0; layer < config.layers; ++layer)
      config.slidingLayers[layer] = every == 0 || layer % every < every - 1;
  }
  float slidingBase = 10000.0f;
  if (std::string error = positiveFloat(file, p + "rope.freq_base_swa", slidingBase, false);
      !error.empty())
    return error;
  config.slidingInvFreq = plainFrequencies(slidingBase, config.rotaryDim);
  config.slidingRopeTheta = slidingBase;
  return "";
}

} // namespace

std::string readDecoderConfig(const GgufFile &file, GgufDecoderConfig &config) {
  std::string_view archName;
  if (std::string error = file.string("general.architecture", archName); !error.empty())
    return error;
  const Architecture *arch = nullptr;
  for (const Architecture &candidate : kArchitectures)
    if (archName == candidate.name)
      arch = &candidate;
  if (!arch)
    return "general.architecture is '" + std::string(archName) +
           "': mkc compiles the llama family only (" + kArchitectureNames + ")";
  config.architecture = std::string(archName);
  config.permutedQK = arch->permutedQK;
  config.qkvBias = arch->qkvBias;
  config.qkNorm = arch->qkNorm;
  config.fusedProjections = arch->fusedProjections;
  config.geluMlp = arch->geluMlp;
  config.noRopeEvery = arch->noRopeEvery;
  config.preNorms = arch->preNorms;
  config.postNorms = arch->postNorms;
  const std::string p = config.architecture + ".";

  for (auto [key, field] : {std::pair{"embedding_length", &config.hidden},
                            {"block_count", &config.layers},
                            {"attention.head_count", &config.heads},
                            {"feed_forward_length", &config.ffn}})
    if (std::string error = positive(file, p + key, *field); !error.empty())
      return error;
  // The context is not a width: only its type and sign are checked.
  {
    uint32_t context = 0;
    if (std::string error = file.uint32(p + "context_length", context); !error.empty())
      return error;
    if (context == 0)
      return "metadata key '" + p + "context_length' is 0; it must be positive";
    config.contextLength = context;
  }
  config.kvHeads = config.heads;
  if (std::string error = positive(file, p + "attention.head_count_kv", config.kvHeads, false);
      !error.empty())
    return error;
  if (config.heads % config.kvHeads != 0)
    return "metadata key '" + p + "attention.head_count_kv' is " +
           std::to_string(config.kvHeads) + ", which does not divide " + p +
           "attention.head_count (" + std::to_string(config.heads) + ")";

  // Without key_length the heads split the hidden state evenly.
  if (!file.find(p + "attention.key_length") && config.hidden % config.heads != 0)
    return "metadata key '" + p + "attention.key_length' is missing and " + p +
           "embedding_length (" + std::to_string(config.hidden) + ") is not a multiple of " +
           p + "attention.head_count (" + std::to_string(config.heads) + ")";
  config.headDim = config.hidden / config.heads;
  if (std::string error = positive(file, p + "attention.key_length", config.headDim, false);
      !error.empty())
    return error;
  int64_t valueLength = config.headDim;
  if (std::string error = positive(file, p + "attention.value_length", valueLength, false);
      !error.empty())
    return error;
  if (valueLength != config.headDim)
    return "metadata key '" + p + "attention.value_length' is " + std::to_string(valueLength) +
           ", not the key length " + std::to_string(config.headDim) +
           " (mk attention has one head dimension)";

  if (std::string error = positiveFloat(file, p + "attention.layer_norm_rms_epsilon", config.rmsEps);
      !error.empty())
    return error;

  config.rotaryDim = config.headDim;
  if (std::string error = positive(file, p + "rope.dimension_count", config.rotaryDim, false);
      !error.empty())
    return error;
  if (config.rotaryDim > config.headDim || config.rotaryDim % 2 != 0)
    return "metadata key '" + p + "rope.dimension_count' is " + std::to_string(config.rotaryDim) +
           ": rotary dims must be even and at most the head dim " + std::to_string(config.headDim);
  // The converter's permutation runs over the whole head; a partial rotary
  // would have been permuted in a way this reader does not undo.
  if (config.permutedQK && config.rotaryDim != config.headDim)
    return "metadata key '" + p + "rope.dimension_count' is " + std::to_string(config.rotaryDim) +
           ": partial rotary is not supported for '" + config.architecture +
           "' (its q/k rows are permuted over the whole head of " + std::to_string(config.headDim) +
           ")";
  float base = 10000.0f; // llama.cpp's default
  if (std::string error = positiveFloat(file, p + "rope.freq_base", base, false); !error.empty())
    return error;
  if (std::string error = readRotary(file, config.architecture, base, config); !error.empty())
    return error;

  // A sliding window narrower than the context is the attention's window
  // (a window as long as the context hides nothing).
  int64_t window = 0;
  if (std::string error = positive(file, p + "attention.sliding_window", window, false);
      !error.empty())
    return error;
  if (window && window < config.contextLength)
    config.slidingWindow = window;
  if (arch->gemma3Layers)
    if (std::string error = readGemma3Layers(file, window, config); !error.empty())
      return error;
  if (arch->exaone4Layers) {
    // llama.cpp gives only the 64-layer (32B) model its sliding layers
    // (and full ones without rotary); the others attend to every position.
    if (config.layers == 64)
      return "an exaone4 file of 64 blocks (EXAONE 4.0 32B) has sliding and full layers, the "
             "full ones without rotary, as llama.cpp reads it: not supported yet";
    config.slidingWindow = 0;
  }

  if (arch->scaledEmbedding)
    config.embeddingScale = std::sqrt(static_cast<double>(config.hidden));
  if (arch->multipliers) {
    // Absent keys leave llama.cpp's defaults: factors of 1, and the
    // attention's 1 / sqrt(head dim).
    float embedding = 1.0f, residual = 1.0f, logit = 1.0f, attention = 0.0f;
    for (auto [key, field] : {std::pair{"embedding_scale", &embedding},
                              {"residual_scale", &residual},
                              {"logit_scale", &logit},
                              {"attention.scale", &attention}})
      if (std::string error = positiveFloat(file, p + key, *field, false); !error.empty())
        return error;
    config.embeddingScale = embedding;
    config.residualScale = residual;
    config.logitScale = 1.0 / static_cast<double>(logit);
    if (attention != 0.0f)
      config.attentionScale = attention;
  }

  const GgufTensor *embedding = file.findTensor("token_embd.weight");
  if (!embedding)
    return "tensor 'token_embd.weight' is missing";
  if (embedding->dims.size() != 2 || embedding->dims[0] != static_cast<uint64_t>(config.hidden))
    return "tensor 'token_embd.weight' (info at offset " + std::to_string(embedding->infoOffset) +
           ") has dims " + dimsText(embedding->dims) + ", expected [" +
           std::to_string(config.hidden) + ", vocab] (" + p + "embedding_length first)";
  config.vocab = static_cast<int64_t>(embedding->dims[1]);
  int64_t declaredVocab = config.vocab;
  if (std::string error = positive(file, p + "vocab_size", declaredVocab, false); !error.empty())
    return error;
  if (declaredVocab != config.vocab)
    return "metadata key '" + p + "vocab_size' is " + std::to_string(declaredVocab) +
           ", but tensor 'token_embd.weight' has " + std::to_string(config.vocab) + " rows";
  config.tied = file.findTensor("output.weight") == nullptr;
  return "";
}

std::string readSpecialTokens(const GgufFile &file, GgufSpecialTokens &tokens) {
  auto optionalId = [&](const char *key, std::optional<int64_t> &id) -> std::string {
    if (!file.find(key))
      return "";
    uint32_t value = 0;
    if (std::string error = file.uint32(key, value); !error.empty())
      return error;
    id = value;
    return "";
  };
  std::optional<int64_t> eos, eot;
  if (std::string error = optionalId("tokenizer.ggml.eos_token_id", eos); !error.empty())
    return error;
  // End of turn: llama.cpp stops at it too (Llama 3's <|eot_id|>).
  if (std::string error = optionalId("tokenizer.ggml.eot_token_id", eot); !error.empty())
    return error;
  if (std::string error = optionalId("tokenizer.ggml.bos_token_id", tokens.bosToken);
      !error.empty())
    return error;
  // tokenizer.ggml.add_bos_token false (SmolLM2's <|im_start|> is its BOS
  // id but never prepended): no BOS for a runtime to prepend, as llama.cpp.
  if (const GgufValue *addBos = file.find("tokenizer.ggml.add_bos_token")) {
    if (addBos->type != GgufValueType::Bool)
      return "metadata key 'tokenizer.ggml.add_bos_token' is " +
             std::string(ggufValueTypeName(addBos->type)) + ", not bool";
    if (addBos->scalar[0] == 0)
      tokens.bosToken.reset();
  }
  tokens.eosTokens.clear();
  if (eos)
    tokens.eosTokens.push_back(*eos);
  if (eot && eot != eos)
    tokens.eosTokens.push_back(*eot);
  if (file.find("tokenizer.chat_template")) {
    std::string_view text;
    if (std::string error = file.string("tokenizer.chat_template", text); !error.empty())
      return error;
    tokens.chatTemplate = std::string(text);
  }
  return "";
}

} // namespace mk
