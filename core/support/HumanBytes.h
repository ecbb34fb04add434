// A byte count for a reader's eye: "512 bytes", "12.3 MiB".
#ifndef MKC_CORE_SUPPORT_HUMANBYTES_H
#define MKC_CORE_SUPPORT_HUMANBYTES_H

#include <cstdint>
#include <string>

namespace mk {

std::string humanBytes(uint64_t bytes);

} // namespace mk

#endif
