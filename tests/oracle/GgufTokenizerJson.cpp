// mk-gguf-tokenizer-json VOCAB.gguf OUT.json: the tokenizer.json that
// `mkc compile` would put in the .mk for this GGUF file's vocabulary, written
// alone. llama.cpp ships vocabulary-only GGUF files (no tensors, so nothing
// to compile) with the original tokenizers' encodings of test texts;
// check_gguf_vocab.py compares this tokenizer.json against those.
//
// Exit codes: 0 written; 3 no tokenizer built, with the reason `mkc compile`
// would warn with on stdout; 2 the file or its vocabulary refused; 1 usage.
#include "frontends/gguf/GgufFile.h"
#include "frontends/gguf/import/GgufTokenizer.h"

#include <fstream>
#include <iostream>
#include <memory>
#include <string>

int main(int argc, char **argv) {
  if (argc != 3) {
    std::cerr << "usage: mk-gguf-tokenizer-json VOCAB.gguf OUT.json\n";
    return 1;
  }
  std::string error;
  std::unique_ptr<mk::GgufFile> file = mk::GgufFile::open(argv[1], error);
  if (!file) {
    std::cerr << "error: " << error << "\n";
    return 2;
  }
  mk::GgufTokenizerJson tokenizer;
  if (std::string problem = mk::buildGgufTokenizerJson(*file, tokenizer); !problem.empty()) {
    std::cerr << "error: '" << argv[1] << "': " << problem << "\n";
    return 2;
  }
  if (tokenizer.json.empty()) {
    std::cout << "no tokenizer: "
              << (tokenizer.unsupported.empty() ? "the file has no vocabulary"
                                                : tokenizer.unsupported)
              << "\n";
    return 3;
  }
  std::ofstream out(argv[2], std::ios::binary);
  out << tokenizer.json;
  if (!out.flush()) {
    std::cerr << "error: cannot write '" << argv[2] << "'\n";
    return 2;
  }
  std::cout << tokenizer.tokens << " tokens\n";
  return 0;
}
