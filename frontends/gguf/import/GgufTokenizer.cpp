#include "frontends/gguf/import/GgufTokenizer.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>
#include <optional>

namespace mk {

namespace {

// llama.cpp's token types (llama_token_type): control tokens are special
// (<|im_end|>), user-defined ones are matched whole but decoded as text.
constexpr int32_t kTokenControl = 3;
constexpr int32_t kTokenUserDefined = 4;

// The splitting rules HF's tokenizer.json of each model family holds, by the
// name llama.cpp's converter gives them (tokenizer.ggml.pre). Patterns are
// the ones those tokenizer.json files carry, character for character.
constexpr const char *kLlama3Pattern =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
constexpr const char *kQwen2Pattern =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
// Qwen3.5's: Qwen2's, with combining marks (\p{M}) kept in a word.
constexpr const char *kQwen35Pattern =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| "
    "?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

// DeepSeek's (LLM and Coder), as their tokenizer.json files split before
// the bytes: words of the Latin, Greek, Cyrillic, Armenian, Georgian...
// letters; runs of ASCII and full-width punctuation; CJK and Hangul runs.
constexpr const char *kDeepSeekLlmWords =
    "\\s?[A-Za-zµÀ-ÖØ-öø-ƺƼ-ƿǄ-ʓʕ-ʯͰ-ͳͶͷͻ-ͽͿΆ"
    "Έ-ΊΌΎ-ΡΣ-ϵϷ-ҁҊ-ԯԱ-ՖႠ-ჅᎠ-Ᏽᏸ-ᏽᲐ-ᲺᲽ-Ჿᴀ-ᴫᵫ-ᵷ"
    "ᵹ-ᶚḀ-ἕἘ-Ἕἠ-ὅὈ-Ὅὐ-ὗὙὛὝὟ-ώᾀ-ᾴᾶ-ᾼιῂ-ῄῆ-ῌῐ-ΐ"
    "ῖ-Ίῠ-Ῥῲ-ῴῶ-ῼℂℇℊ-ℓℕℙ-ℝℤΩℨK-ℭℯ-ℴℹℼ-ℿⅅ-ⅉⅎↃↄ"
    "Ⰰ-ⱻⱾ-ⳤⳫ-ⳮⳲⳳꙀ-ꙭꚀ-ꚛꜢ-ꝯꝱ-ꞇꞋ-ꞎꭰ-ꮿﬀ-ﬆﬓ-ﬗＡ-Ｚａ-ｚ"
    "𐐀-𐑏𐒰-𐓓𐓘-𐓻𐲀-𐲲𐳀-𐳲𑢠-𑣟𞤀-𞥃]+";
constexpr const char *kDeepSeekPunctuation = "\\s?[!-/:-~！-／：-～‘-‟　-。]+";
constexpr const char *kCjkRuns = "[一-龥ࠀ-一가-퟿]+";

// One step of a tokenizer.json pre_tokenizer Sequence, in order.
struct PreTokenizerStep {
  enum class Kind { Split, Digits, ByteLevel, Punctuation } kind;
  const char *pattern = nullptr; // Split: the regex, isolated
  bool flag = false;             // Digits: individual_digits; ByteLevel: use_regex
};

struct PreTokenizer {
  std::vector<PreTokenizerStep> steps; // empty: GPT-2's ByteLevel with its own regex
  bool ignoreMerges = false;           // a word that is a token is taken whole (Llama 3)
  bool nfc = false;                    // NFC normalization first (Qwen2)
};

PreTokenizerStep split(const char *pattern) { return {PreTokenizerStep::Kind::Split, pattern}; }
PreTokenizerStep digits(bool individual) {
  return {PreTokenizerStep::Kind::Digits, nullptr, individual};
}
PreTokenizerStep byteLevel(bool useRegex) {
  return {PreTokenizerStep::Kind::ByteLevel, nullptr, useRegex};
}
PreTokenizerStep punctuation() { return {PreTokenizerStep::Kind::Punctuation}; }

// A Split (or several) first: the byte-level step then only maps bytes.
PreTokenizer splitThenBytes(std::vector<PreTokenizerStep> splits, bool nfc = false) {
  splits.push_back(byteLevel(false));
  return PreTokenizer{std::move(splits), false, nfc};
}

// Each name's rules are checked against the original tokenizer's encodings
// of llama.cpp's test texts (tests/oracle/check_gguf_vocab.py).
std::optional<PreTokenizer> preTokenizerNamed(std::string_view name) {
  if (name.empty() || name == "default" || name == "gpt-2" || name == "gpt2")
    return PreTokenizer{};
  // GPT-NeoX's tokenizer (MPT's): GPT-2's split after NFC.
  if (name == "mpt")
    return PreTokenizer{{}, false, true};
  // BigCode's (StarCoder, Refact, SmolLM): single digits first.
  if (name == "smollm" || name == "starcoder" || name == "refact")
    return PreTokenizer{{digits(true), byteLevel(true)}, false, false};
  // Command-R's: single digits after NFC.
  if (name == "command-r")
    return PreTokenizer{{digits(true), byteLevel(true)}, false, true};
  if (name == "llama-bpe" || name == "llama3")
    return PreTokenizer{{split(kLlama3Pattern), byteLevel(false)}, true, false};
  if (name == "qwen2")
    return splitThenBytes({split(kQwen2Pattern)}, /*nfc=*/true);
  // Qwen3.5's has no NFC step: a decomposed "é" stays two characters.
  if (name == "qwen35")
    return splitThenBytes({split(kQwen35Pattern)});
  if (name == "deepseek-llm")
    return splitThenBytes({split("[\r\n]"), split(kDeepSeekLlmWords),
                           split(kDeepSeekPunctuation), split("\\s+$"), split(kCjkRuns),
                           split("\\p{N}+")});
  if (name == "deepseek-coder")
    return splitThenBytes({split("[\r\n]"), split("\\s?\\p{L}+"), split("\\s?\\p{P}+"),
                           split(kCjkRuns), digits(true)});
  // Falcon's: punctuation runs, GPT-2's split, digit runs cut in threes.
  if (name == "falcon")
    return PreTokenizer{{punctuation(), byteLevel(true), digits(false), split("[0-9][0-9][0-9]")},
                        false, false};
  return std::nullopt;
}

std::string quoted(std::string_view key) { return "metadata key '" + std::string(key) + "'"; }

// An optional string key: "" or an error when present with another type.
std::string optionalString(const GgufFile &file, std::string_view key, std::string_view &value) {
  value = {};
  if (!file.find(key))
    return "";
  return file.string(key, value);
}

// tokenizer.ggml.token_type: one int32 per token, or none at all.
std::string tokenTypes(const GgufFile &file, size_t tokens, std::vector<int32_t> &types) {
  types.clear();
  constexpr std::string_view key = "tokenizer.ggml.token_type";
  const GgufValue *value = file.find(key);
  if (!value)
    return "";
  if (value->type != GgufValueType::Array || value->elementType != GgufValueType::Int32)
    return quoted(key) + " is not an array of int32";
  if (value->count != tokens)
    return quoted(key) + " has " + std::to_string(value->count) + " entries for " +
           std::to_string(tokens) + " tokens";
  types.resize(tokens);
  std::memcpy(types.data(), value->elements.data(), tokens * sizeof(int32_t));
  return "";
}

void writeByteLevel(llvm::json::OStream &out, bool useRegex) {
  out.object([&] {
    out.attribute("type", "ByteLevel");
    out.attribute("add_prefix_space", false);
    out.attribute("trim_offsets", true);
    out.attribute("use_regex", useRegex);
  });
}

void writeStep(llvm::json::OStream &out, const PreTokenizerStep &step) {
  using Kind = PreTokenizerStep::Kind;
  switch (step.kind) {
  case Kind::ByteLevel:
    writeByteLevel(out, step.flag);
    return;
  case Kind::Digits:
    out.object([&] {
      out.attribute("type", "Digits");
      out.attribute("individual_digits", step.flag);
    });
    return;
  case Kind::Split:
    out.object([&] {
      out.attribute("type", "Split");
      out.attributeObject("pattern", [&] { out.attribute("Regex", step.pattern); });
      out.attribute("behavior", "Isolated");
      out.attribute("invert", false);
    });
    return;
  case Kind::Punctuation:
    out.object([&] {
      out.attribute("type", "Punctuation");
      out.attribute("behavior", "Contiguous");
    });
    return;
  }
}

void writePreTokenizer(llvm::json::OStream &out, const PreTokenizer &rules) {
  if (rules.steps.empty()) {
    writeByteLevel(out, /*useRegex=*/true);
    return;
  }
  out.object([&] {
    out.attribute("type", "Sequence");
    out.attributeArray("pretokenizers", [&] {
      for (const PreTokenizerStep &step : rules.steps)
        writeStep(out, step);
    });
  });
}

} // namespace

std::string buildGgufTokenizerJson(const GgufFile &file, GgufTokenizerJson &result) {
  result = {};
  std::string_view model, pre;
  if (std::string error = optionalString(file, "tokenizer.ggml.model", model); !error.empty())
    return error;
  if (model.empty()) // no vocabulary at all: nothing to say
    return "";
  if (model != "gpt2") {
    result.unsupported = "tokenizer.ggml.model '" + std::string(model) +
                         "' is not built into a tokenizer.json here (only 'gpt2', byte-level BPE)";
    return "";
  }
  if (std::string error = optionalString(file, "tokenizer.ggml.pre", pre); !error.empty())
    return error;
  std::optional<PreTokenizer> rules = preTokenizerNamed(pre);
  if (!rules) {
    result.unsupported = "tokenizer.ggml.pre '" + std::string(pre) +
                         "' is a pre-tokenizer whose rules are not known here";
    return "";
  }

  std::vector<std::string_view> tokens, merges;
  if (std::string error = file.stringArray("tokenizer.ggml.tokens", tokens); !error.empty())
    return error;
  if (std::string error = file.stringArray("tokenizer.ggml.merges", merges); !error.empty())
    return error;
  std::vector<int32_t> types;
  if (std::string error = tokenTypes(file, tokens.size(), types); !error.empty())
    return error;
  // The JSON writer would silently replace bad bytes; a token must be what
  // the file says or nothing.
  for (size_t i = 0; i < tokens.size(); ++i)
    if (!llvm::json::isUTF8(llvm::StringRef(tokens[i].data(), tokens[i].size())))
      return quoted("tokenizer.ggml.tokens") + ": token " + std::to_string(i) + " is not UTF-8";
  // tokenizer.json's vocabulary maps text to one id: a text twice would lose one.
  llvm::StringSet<> seen;
  for (size_t i = 0; i < tokens.size(); ++i)
    if (!seen.insert(llvm::StringRef(tokens[i].data(), tokens[i].size())).second) {
      result.unsupported = "token " + std::to_string(i) + " ('" + std::string(tokens[i]) +
                           "') repeats an earlier token's text, which tokenizer.json cannot hold";
      return "";
    }
  std::vector<std::pair<std::string_view, std::string_view>> pairs;
  pairs.reserve(merges.size());
  for (size_t i = 0; i < merges.size(); ++i) {
    std::string_view merge = merges[i];
    // As llama.cpp splits them: at the first space after the first byte.
    size_t space = merge.size() > 1 ? merge.find(' ', 1) : std::string_view::npos;
    if (space == std::string_view::npos || space + 1 == merge.size())
      return quoted("tokenizer.ggml.merges") + ": merge " + std::to_string(i) + " ('" +
             std::string(merge) + "') is not two tokens separated by a space";
    if (!llvm::json::isUTF8(llvm::StringRef(merge.data(), merge.size())))
      return quoted("tokenizer.ggml.merges") + ": merge " + std::to_string(i) + " is not UTF-8";
    pairs.emplace_back(merge.substr(0, space), merge.substr(space + 1));
  }

  auto ref = [](std::string_view text) { return llvm::StringRef(text.data(), text.size()); };
  llvm::raw_string_ostream stream(result.json);
  llvm::json::OStream out(stream);
  out.object([&] {
    out.attribute("version", "1.0");
    out.attribute("truncation", nullptr);
    out.attribute("padding", nullptr);
    out.attributeArray("added_tokens", [&] {
      for (size_t i = 0; i < types.size(); ++i) {
        if (types[i] != kTokenControl && types[i] != kTokenUserDefined)
          continue;
        out.object([&] {
          out.attribute("id", static_cast<int64_t>(i));
          out.attribute("content", ref(tokens[i]));
          out.attribute("single_word", false);
          out.attribute("lstrip", false);
          out.attribute("rstrip", false);
          out.attribute("normalized", false);
          out.attribute("special", types[i] == kTokenControl);
        });
      }
    });
    if (rules->nfc)
      out.attributeObject("normalizer", [&] { out.attribute("type", "NFC"); });
    else
      out.attribute("normalizer", nullptr);
    out.attributeBegin("pre_tokenizer");
    writePreTokenizer(out, *rules);
    out.attributeEnd();
    // No post-processor: the .mk's BOS (from tokenizer.ggml.bos_token_id)
    // is what a runtime prepends, once.
    out.attribute("post_processor", nullptr);
    out.attributeObject("decoder", [&] {
      out.attribute("type", "ByteLevel");
      out.attribute("add_prefix_space", true);
      out.attribute("trim_offsets", true);
      out.attribute("use_regex", true);
    });
    out.attributeObject("model", [&] {
      out.attribute("type", "BPE");
      out.attribute("dropout", nullptr);
      out.attribute("unk_token", nullptr);
      out.attribute("continuing_subword_prefix", nullptr);
      out.attribute("end_of_word_suffix", nullptr);
      out.attribute("fuse_unk", false);
      out.attribute("byte_fallback", false);
      out.attribute("ignore_merges", rules->ignoreMerges);
      out.attributeObject("vocab", [&] {
        for (size_t i = 0; i < tokens.size(); ++i)
          out.attribute(ref(tokens[i]), static_cast<int64_t>(i));
      });
      out.attributeArray("merges", [&] {
        // A pair, not structured bindings: clang 14 (the sanitized build)
        // cannot capture those in the lambda.
        for (const auto &pair : pairs)
          out.array([&] {
            out.value(ref(pair.first));
            out.value(ref(pair.second));
          });
      });
    });
  });
  stream.flush();
  result.tokens = tokens.size();
  return "";
}

} // namespace mk
