// The files a model ships beside its weights that say how to turn text into
// tokens and when to stop: tokenizer.json (HF tokenizers, carried into the
// .mk byte for byte as its TOKENIZER section), tokenizer_config.json (the
// chat template, the BOS and EOS tokens by name) and generation_config.json
// (EOS and BOS ids, sampling defaults). Read once at compile time, so that a
// loader needs no JSON and no files beside the .mk.
#ifndef MKC_COMPILER_DRIVER_TOKENIZERFILES_H
#define MKC_COMPILER_DRIVER_TOKENIZERFILES_H

#include "runtime/format/Artifact.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mk {

struct TokenizerFiles {
  std::string tokenizerJson;       // tokenizer.json as read
  uint64_t vocabSize = 0;          // the largest token id in it, plus one
  std::vector<int64_t> eosTokens;  // generation_config.json, else tokenizer_config.json's
  GenerationFacts generation;
};

// Reads the files in `folder`: tokenizer.json must be there, the two config
// files may be. Errors name the file and what in it is wrong (JSON errors
// with their line and column).
llvm::Expected<TokenizerFiles> readTokenizerFiles(const std::string &folder);

// The folder of `model` when it holds a tokenizer.json, else nothing: the
// layout of an HF checkpoint or an ONNX export beside its tokenizer.
std::optional<std::string> tokenizerBeside(const std::string &model);

} // namespace mk

#endif
