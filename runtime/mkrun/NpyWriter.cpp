#include "runtime/mkrun/NpyWriter.h"

#include <cerrno>
#include <cstring>
#include <fstream>

namespace mk {

std::string writeNpyMatrix(const std::string &path, const std::vector<float> &data, int64_t rows,
                           int64_t cols) {
  if (rows < 0 || cols < 0 || static_cast<uint64_t>(rows * cols) != data.size())
    return "the logits are not a [" + std::to_string(rows) + ", " + std::to_string(cols) +
           "] matrix";
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" +
                       std::to_string(rows) + ", " + std::to_string(cols) + "), }";
  // Magic (6), version (2), header length (2), then the header padded with
  // spaces and ended by a newline so the data starts on a 64-byte boundary.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file)
    return "cannot open '" + path + "' for writing: " + std::strerror(errno);
  const char magic[8] = {'\x93', 'N', 'U', 'M', 'P', 'Y', 1, 0};
  file.write(magic, sizeof magic);
  uint16_t length = static_cast<uint16_t>(header.size());
  const char lengthBytes[2] = {static_cast<char>(length & 0xff), static_cast<char>(length >> 8)};
  file.write(lengthBytes, 2);
  file.write(header.data(), static_cast<std::streamsize>(header.size()));
  file.write(reinterpret_cast<const char *>(data.data()),
             static_cast<std::streamsize>(data.size() * sizeof(float)));
  file.flush();
  if (!file)
    return "cannot write '" + path + "': " + std::strerror(errno);
  return "";
}

} // namespace mk
