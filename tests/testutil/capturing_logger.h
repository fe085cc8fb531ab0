// A Logger that keeps every line it is given, for tests of what a database
// logs.
#ifndef BLOOMKV_TESTS_TESTUTIL_CAPTURING_LOGGER_H_
#define BLOOMKV_TESTS_TESTUTIL_CAPTURING_LOGGER_H_

#include <cstdarg>
#include <cstdio>
#include <mutex>
#include <regex>
#include <string>
#include <vector>

#include "bloomkv/env.h"

namespace bloomkv {
namespace test {

class CapturingLogger final : public Logger {
 public:
  void Logv(const char* format, va_list ap) override {
    char buf[4096];
    std::vsnprintf(buf, sizeof(buf), format, ap);
    std::lock_guard<std::mutex> guard(mu_);
    lines_.emplace_back(buf);
  }
  std::vector<std::string> Lines() const {
    std::lock_guard<std::mutex> guard(mu_);
    return lines_;
  }
  // The lines that match re from their start.
  std::vector<std::smatch> Matching(const std::string& re) {
    matched_lines_ = Lines();
    std::vector<std::smatch> result;
    const std::regex r(re);
    for (const std::string& line : matched_lines_) {
      std::smatch m;
      if (std::regex_search(line, m, r,
                            std::regex_constants::match_continuous)) {
        result.push_back(m);
      }
    }
    return result;
  }
  size_t Count(const std::string& re) { return Matching(re).size(); }
  std::string Dump() const {
    std::string r;
    for (const auto& line : Lines()) r += line + "\n";
    return r;
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::string> lines_;
  std::vector<std::string> matched_lines_;  // what Matching's results point at
};

}  // namespace test
}  // namespace bloomkv

#endif  // BLOOMKV_TESTS_TESTUTIL_CAPTURING_LOGGER_H_
