// ApiKeys; see api_keys.h.
#include "tools/shortlink/api_keys.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <fstream>
#include <sstream>

namespace shortlink {

using bloomkv::Status;

namespace {

constexpr std::string_view kSha256Tag = ":sha256:";
constexpr size_t kMaxNameBytes = 64;

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool ParseHexDigest(std::string_view hex, Sha256Digest* out) {
  if (hex.size() != 2 * kSha256Bytes) return false;
  for (size_t i = 0; i < kSha256Bytes; i++) {
    const int hi = HexValue(hex[2 * i]);
    const int lo = HexValue(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    (*out)[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  return true;
}

std::string_view TrimSpace(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
    s.remove_prefix(1);
  }
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

}  // namespace

Sha256Digest Sha256(std::string_view data) {
  Sha256Digest digest{};
  unsigned int len = 0;
  // EVP_Digest with EVP_sha256 cannot fail short of memory exhaustion.
  EVP_Digest(data.data(), data.size(), digest.data(), &len, EVP_sha256(),
             nullptr);
  return digest;
}

bool IsValidApiKeyName(std::string_view name) {
  if (name.empty() || name.size() > kMaxNameBytes) return false;
  for (const char c : name) {
    const bool ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
                    (c >= 'A' && c <= 'Z') || c == '_' || c == '.' || c == '-';
    if (!ok) return false;
  }
  return true;
}

std::string FormatApiKeyLine(std::string_view name, std::string_view key) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string line(name);
  line += kSha256Tag;
  for (const uint8_t b : Sha256(key)) {
    line += kHex[b >> 4];
    line += kHex[b & 15];
  }
  return line;
}

Status ApiKeys::Parse(std::string_view text, std::string_view file_name,
                      ApiKeys* out) {
  ApiKeys keys;
  size_t line_no = 0;
  while (!text.empty()) {
    line_no++;
    const size_t eol = text.find('\n');
    std::string_view line = TrimSpace(text.substr(0, eol));
    text.remove_prefix(eol == std::string_view::npos ? text.size() : eol + 1);
    if (line.empty() || line.front() == '#') continue;

    auto error = [&](std::string_view what) {
      return Status::InvalidArgument(std::string(file_name) + ":" +
                                     std::to_string(line_no) + ": " +
                                     std::string(what));
    };
    const size_t tag = line.find(kSha256Tag);
    if (tag == std::string_view::npos) {
      return error("expected <name>:sha256:<64 hex digits>");
    }
    Key key;
    key.name.assign(line.substr(0, tag));
    if (!IsValidApiKeyName(key.name)) {
      return error("the name must be 1-64 characters of [A-Za-z0-9_.-]");
    }
    if (!ParseHexDigest(line.substr(tag + kSha256Tag.size()), &key.digest)) {
      return error("the digest must be 64 hex digits (SHA-256)");
    }
    for (const Key& k : keys.keys_) {
      if (k.name == key.name) return error("duplicate name " + key.name);
      if (k.digest == key.digest) {
        return error("same key as " + k.name);
      }
    }
    keys.keys_.push_back(std::move(key));
  }
  *out = std::move(keys);
  return Status::OK();
}

Status ApiKeys::Load(const std::string& path, ApiKeys* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IOError(path + ": cannot open");
  std::stringstream text;
  text << in.rdbuf();
  if (in.bad()) return Status::IOError(path + ": read error");
  return Parse(text.str(), path, out);
}

const std::string* ApiKeys::Find(std::string_view key) const {
  const Sha256Digest digest = Sha256(key);
  // Every stored digest is compared, each in constant time: the time taken
  // depends only on how many keys there are.
  const std::string* found = nullptr;
  for (const Key& k : keys_) {
    if (CRYPTO_memcmp(k.digest.data(), digest.data(), kSha256Bytes) == 0) {
      found = &k.name;
    }
  }
  return found;
}

}  // namespace shortlink
