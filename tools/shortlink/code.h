// Short codes: generation, the shape of a well-formed code, custom aliases.
//
// Generated codes are kGeneratedCodeLength characters of base62 drawn from a
// RandomSource (the system's cryptographic generator in production) by
// rejection sampling, so every character is exactly uniform: a byte b < 248
// (= 4 * 62) maps to kBase62[b % 62], larger bytes are thrown away. 62^7 is
// about 3.5e12 codes, so guessing live codes is hopeless and collisions with
// existing codes are rare (the store still checks and retries).
//
// Custom aliases are 3 to 32 characters of [0-9A-Za-z_-], case-sensitive,
// and never one of the reserved words that name the service's own routes.
//
// Thread-safety: the free functions are stateless; SystemRandomSource is
// thread-safe; other RandomSources document their own rules.
#ifndef BLOOMKV_TOOLS_SHORTLINK_CODE_H_
#define BLOOMKV_TOOLS_SHORTLINK_CODE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "bloomkv/status.h"

namespace shortlink {

constexpr size_t kGeneratedCodeLength = 7;
constexpr size_t kMinCodeLength = 3;
constexpr size_t kMaxCodeLength = 32;
constexpr std::string_view kBase62 =
    "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

// Bytes of randomness.
class RandomSource {
 public:
  virtual ~RandomSource();
  // Fills buf[0..n-1] with random bytes. Returns IOError if it cannot.
  virtual bloomkv::Status Fill(uint8_t* buf, size_t n) = 0;
};

// getrandom(2): the kernel's cryptographic generator. Thread-safe.
class SystemRandomSource final : public RandomSource {
 public:
  bloomkv::Status Fill(uint8_t* buf, size_t n) override;
};

// A new random code of `length` base62 characters in *code.
// REQUIRES: 0 < length <= kMaxCodeLength.
bloomkv::Status GenerateCode(RandomSource* random, size_t length,
                             std::string* code);

// True if `code` could name a link: kMinCodeLength to kMaxCodeLength
// characters of [0-9A-Za-z_-]. Anything else is answered 404 without a look
// at the store.
bool IsWellFormedCode(std::string_view code);

// True for the words that name the service's routes ("api", "admin",
// "healthz", "metrics", ...). Case-sensitive, like codes.
bool IsReservedWord(std::string_view word);

// OK if `alias` is a well-formed code and not a reserved word; otherwise
// InvalidArgument saying why.
bloomkv::Status ValidateAlias(std::string_view alias);

}  // namespace shortlink

#endif  // BLOOMKV_TOOLS_SHORTLINK_CODE_H_
