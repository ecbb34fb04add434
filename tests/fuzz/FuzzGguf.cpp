// libFuzzer target: the GGUF reader (frontends/gguf) on arbitrary bytes. A
// file it accepts has its decoder config and special tokens read and every
// tensor it can dequantize dequantized, so that a hostile header, metadata
// value or tensor info reaches every reader that trusts the parse.
#include "frontends/gguf/GgufDecoder.h"
#include "frontends/gguf/GgufFile.h"
#include "frontends/gguf/GgufQuants.h"

#include <cstddef>
#include <cstdint>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string error;
  auto file = mk::GgufFile::view(std::span(data, size), error);
  if (!file)
    return 0;
  mk::GgufDecoderConfig config;
  (void)mk::readDecoderConfig(*file, config);
  mk::GgufSpecialTokens tokens;
  (void)mk::readSpecialTokens(*file, tokens);
  // Small tensors only: the fuzzer's inputs are small, and a declared
  // element count is checked against the bytes held, not allocated first.
  for (const mk::GgufTensor &tensor : file->tensors()) {
    if (!mk::canDequantize(tensor.typeCode) || tensor.elements > (1u << 20))
      continue;
    std::vector<float> values(tensor.elements);
    (void)mk::dequantizeTensor(tensor, values);
  }
  return 0;
}
