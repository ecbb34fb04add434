// A libmkrt model and session on the CPU executor, opened from a .mk file
// and closed at scope's end, and a generation through it: what the libmkrt
// tests share.
#ifndef MKC_TESTS_UNIT_MKRTCPUSESSION_H
#define MKC_TESTS_UNIT_MKRTCPUSESSION_H

#include "mkrt.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace mk::test {

struct CpuSession {
  mkrt_model *model = nullptr;
  mkrt_session *session = nullptr;
  explicit CpuSession(const std::string &path) {
    char error[512];
    EXPECT_EQ(mkrt_open(path.c_str(), &model, error, sizeof error), MKRT_OK) << error;
    EXPECT_EQ(mkrt_session_create(model, "cpu", 0, &session, error, sizeof error), MKRT_OK)
        << error;
  }
  ~CpuSession() {
    mkrt_session_destroy(session);
    mkrt_close(model);
  }
  CpuSession(const CpuSession &) = delete;
  CpuSession &operator=(const CpuSession &) = delete;
};

// mkrt_generate of up to n tokens after `prompt`, expected to succeed.
inline std::vector<int64_t> generate(mkrt_session *session, const std::vector<int64_t> &prompt,
                                     size_t n) {
  std::vector<int64_t> out(n);
  size_t produced = 0;
  EXPECT_EQ(mkrt_generate(session, prompt.data(), prompt.size(), n, out.data(), &produced,
                          nullptr),
            MKRT_OK)
      << mkrt_last_error();
  out.resize(produced);
  return out;
}

} // namespace mk::test

#endif
