// Where tests/tools/make_gguf_fixtures.py wrote the GGUF fixtures (the ctest
// fixture gguf.fixtures runs it first), and reading its files.
#ifndef MKC_TESTS_UNIT_GGUFFIXTURE_H
#define MKC_TESTS_UNIT_GGUFFIXTURE_H

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace mk::testing {

inline std::string ggufFixturePath(const std::string &name) {
  return std::string(MKC_GGUF_FIXTURES_DIR) + "/" + name;
}

inline std::vector<uint8_t> fileBytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

} // namespace mk::testing

#endif
