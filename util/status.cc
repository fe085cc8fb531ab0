// Status and Slice out-of-line members.
#include "bloomkv/status.h"

#include <cstdio>

#include "bloomkv/slice.h"

namespace bloomkv {

Status::Status(Code code, std::string_view msg, std::string_view msg2)
    : code_(code), message_(msg) {
  if (!msg2.empty()) {
    message_.append(": ");
    message_.append(msg2);
  }
}

std::string Status::ToString() const {
  const char* prefix = "";
  switch (code_) {
    case Code::kOk:
      return "OK";
    case Code::kNotFound:
      prefix = "NotFound: ";
      break;
    case Code::kCorruption:
      prefix = "Corruption: ";
      break;
    case Code::kNotSupported:
      prefix = "Not supported: ";
      break;
    case Code::kInvalidArgument:
      prefix = "Invalid argument: ";
      break;
    case Code::kIOError:
      prefix = "IO error: ";
      break;
    case Code::kFull:
      prefix = "Full: ";
      break;
  }
  return prefix + message_;
}

std::string Slice::ToEscapedString() const {
  std::string out;
  out.reserve(size_);
  for (size_t i = 0; i < size_; i++) {
    const auto c = static_cast<unsigned char>(data_[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out.push_back(static_cast<char>(c));
    } else {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      out.append(buf);
    }
  }
  return out;
}

}  // namespace bloomkv
