// What a GGUF file holds, as `mkc inspect MODEL.gguf` prints it: the
// header, the architecture and the llama-family hyperparameters under
// `<arch>.*`, the tokenizer, and every tensor with its ggml type, shape and
// bytes. Read through frontends/gguf's GgufFile only.
#ifndef MKC_COMPILER_INSPECT_GGUFSUMMARY_H
#define MKC_COMPILER_INSPECT_GGUFSUMMARY_H

#include "frontends/gguf/GgufFile.h"

#include <ostream>

namespace mk {

void printGgufSummary(std::ostream &os, const GgufFile &file);

// The same facts as one JSON document: {"gguf": {...}}.
void printGgufJson(std::ostream &os, const GgufFile &file);

} // namespace mk

#endif
