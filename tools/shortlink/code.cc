// Short-code generation and validation; see code.h.
#include "tools/shortlink/code.h"

#include <sys/random.h>

#include <array>
#include <cerrno>
#include <cstring>

namespace shortlink {

using bloomkv::Status;

RandomSource::~RandomSource() = default;

Status SystemRandomSource::Fill(uint8_t* buf, size_t n) {
  size_t done = 0;
  while (done < n) {
    const ssize_t r = getrandom(buf + done, n - done, 0);
    if (r < 0) {
      if (errno == EINTR) continue;
      return Status::IOError("getrandom", std::strerror(errno));
    }
    done += static_cast<size_t>(r);
  }
  return Status::OK();
}

Status GenerateCode(RandomSource* random, size_t length, std::string* code) {
  if (length == 0 || length > kMaxCodeLength) {
    return Status::InvalidArgument("code length out of range");
  }
  // The largest multiple of 62 that fits in a byte; bytes at or above it
  // would favour the first characters of the alphabet.
  constexpr unsigned kAcceptBelow = 256 / kBase62.size() * kBase62.size();
  static_assert(kAcceptBelow == 248);
  code->clear();
  std::array<uint8_t, 16> buf;
  // Each byte is accepted with probability 248/256, so a handful of refills
  // is the worst that ever happens; the bound only guards a broken source.
  for (int refill = 0; refill < 64 && code->size() < length; refill++) {
    Status s = random->Fill(buf.data(), buf.size());
    if (!s.ok()) return s;
    for (uint8_t b : buf) {
      if (b >= kAcceptBelow) continue;
      code->push_back(kBase62[b % kBase62.size()]);
      if (code->size() == length) break;
    }
  }
  if (code->size() != length) {
    return Status::IOError("random source keeps returning rejected bytes");
  }
  return Status::OK();
}

bool IsWellFormedCode(std::string_view code) {
  if (code.size() < kMinCodeLength || code.size() > kMaxCodeLength) {
    return false;
  }
  for (char c : code) {
    const bool ok = (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') ||
                    (c >= 'a' && c <= 'z') || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

bool IsReservedWord(std::string_view word) {
  static constexpr std::string_view kReserved[] = {
      "api", "admin", "healthz", "metrics", "static", "assets", "favicon",
  };
  for (std::string_view r : kReserved) {
    if (word == r) return true;
  }
  return false;
}

Status ValidateAlias(std::string_view alias) {
  if (!IsWellFormedCode(alias)) {
    return Status::InvalidArgument(
        "alias must be 3 to 32 characters of [0-9A-Za-z_-]");
  }
  if (IsReservedWord(alias)) {
    return Status::InvalidArgument("alias is a reserved word");
  }
  return Status::OK();
}

}  // namespace shortlink
