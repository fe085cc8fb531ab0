// ApiKeys: the API keys allowed to create links, as read from
// --api-keys-file. The file holds SHA-256 digests, never the keys, so a
// leaked file (a backup, a config repository) cannot be used to call the
// API:
//
//   # comment lines and blank lines are ignored
//   ci-bot:sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08
//   <name>:sha256:<64 lower- or upper-case hex digits>
//
// Names are 1-64 characters of [A-Za-z0-9_.-], unique in the file; they
// identify the key in the access log and its rate-limit bucket. A presented
// key is hashed and its digest compared with every stored one in constant
// time, so the time taken reveals nothing about how close a guess was.
// `shortlinkd hash-api-key NAME` prints a line for a key read on stdin
// (FormatApiKeyLine).
//
// Thread-safety: immutable after Parse/Load; Find may be called
// concurrently.
#ifndef BLOOMKV_TOOLS_SHORTLINK_API_KEYS_H_
#define BLOOMKV_TOOLS_SHORTLINK_API_KEYS_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "bloomkv/status.h"

namespace shortlink {

constexpr size_t kSha256Bytes = 32;
using Sha256Digest = std::array<uint8_t, kSha256Bytes>;

// SHA-256 of `data` (OpenSSL's libcrypto).
Sha256Digest Sha256(std::string_view data);

// The --api-keys-file line for `key` under `name`.
// REQUIRES: IsValidApiKeyName(name).
std::string FormatApiKeyLine(std::string_view name, std::string_view key);

bool IsValidApiKeyName(std::string_view name);

class ApiKeys {
 public:
  ApiKeys() = default;

  // Parses the text of a keys file. An unusable line is InvalidArgument
  // naming `file_name`, the line number and what is wrong; nothing of the
  // key itself is echoed.
  [[nodiscard]] static bloomkv::Status Parse(std::string_view text,
                                             std::string_view file_name,
                                             ApiKeys* out);
  // Reads and parses the file at `path`.
  [[nodiscard]] static bloomkv::Status Load(const std::string& path,
                                            ApiKeys* out);

  // The name of the key `key`, or nullptr if it is not one of them.
  const std::string* Find(std::string_view key) const;

  size_t size() const { return keys_.size(); }

 private:
  struct Key {
    std::string name;
    Sha256Digest digest;
  };
  std::vector<Key> keys_;
};

}  // namespace shortlink

#endif  // BLOOMKV_TOOLS_SHORTLINK_API_KEYS_H_
