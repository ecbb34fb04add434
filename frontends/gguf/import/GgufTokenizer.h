// A GGUF file's vocabulary (tokenizer.ggml.*) as the HF tokenizers
// tokenizer.json a .mk carries in its TOKENIZER section, so that text goes
// in and out of a model compiled from GGUF as it does for an ONNX export
// with its tokenizer files.
//
// Only byte-level BPE is built (tokenizer.ggml.model "gpt2": the tokens,
// the merges, the control and user-defined tokens as added tokens), with
// the pre-tokenizer of the `tokenizer.ggml.pre` names whose rules are
// known here: absent, "default", "gpt-2", "gpt2", "mpt", "smollm",
// "starcoder", "refact", "command-r", "llama-bpe" (and "llama3"), "qwen2",
// "qwen35".
// Other models (SentencePiece "llama", WordPiece
// "bert", "t5", "rwkv", ...) and other pre-tokenizers are not built: the
// caller is told why, and the model compiles without a tokenizer.
#ifndef MKC_FRONTENDS_GGUF_IMPORT_GGUFTOKENIZER_H
#define MKC_FRONTENDS_GGUF_IMPORT_GGUFTOKENIZER_H

#include "frontends/gguf/GgufFile.h"

#include <string>

namespace mk {

struct GgufTokenizerJson {
  std::string json;        // tokenizer.json's text; empty when not built
  std::string unsupported; // why it was not built, when it was not
  uint64_t tokens = 0;     // the vocabulary's size
};

// "" and the tokenizer (or the reason there is none), or an error naming
// the metadata key and what is wrong with it (a merge that is not two
// tokens, a token that is not UTF-8, a token type array of another length).
std::string buildGgufTokenizerJson(const GgufFile &file, GgufTokenizerJson &result);

} // namespace mk

#endif
