// Status: the outcome of an operation — OK, or an error code with a message.
//
// bloomkv reports every error through a Status; no exception crosses the API.
// Status is [[nodiscard]], so a dropped error is a compile-time warning.
// Thread-safety: a Status is a value; distinct objects may be used from
// distinct threads without synchronization.
#ifndef BLOOMKV_INCLUDE_STATUS_H_
#define BLOOMKV_INCLUDE_STATUS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "bloomkv/slice.h"

namespace bloomkv {

class [[nodiscard]] Status {
 public:
  // Stored nowhere on disk; values may change between releases.
  enum class Code : unsigned char {
    kOk = 0,
    kNotFound,
    kCorruption,
    kNotSupported,
    kInvalidArgument,
    kIOError,
    kFull,
  };

  Status() noexcept = default;

  static Status OK() { return Status(); }
  static Status NotFound(std::string_view msg, std::string_view msg2 = {}) {
    return Status(Code::kNotFound, msg, msg2);
  }
  static Status Corruption(std::string_view msg, std::string_view msg2 = {}) {
    return Status(Code::kCorruption, msg, msg2);
  }
  static Status NotSupported(std::string_view msg, std::string_view msg2 = {}) {
    return Status(Code::kNotSupported, msg, msg2);
  }
  static Status InvalidArgument(std::string_view msg,
                                std::string_view msg2 = {}) {
    return Status(Code::kInvalidArgument, msg, msg2);
  }
  static Status IOError(std::string_view msg, std::string_view msg2 = {}) {
    return Status(Code::kIOError, msg, msg2);
  }

  // A fixed-capacity structure (a cuckoo filter, a non-scaling bloom
  // filter) has no room for another item. Nothing was changed; the
  // operation can succeed only after room is made (a delete) or in a larger
  // structure. Not an IOError: retrying the same call fails the same way.
  static Status Full(std::string_view msg, std::string_view msg2 = {}) {
    return Status(Code::kFull, msg, msg2);
  }

  // An IOError caused by a resource that someone else holds: the database's
  // LOCK, held by another process or by another handle in this one.
  // IsIOError() is true as well (code() is kIOError and ToString() reads
  // "IO error: ..."), so callers that treat every IOError alike need not
  // change; IsBusy() tells contention from a failure to take the lock.
  static Status Busy(std::string_view msg, std::string_view msg2 = {}) {
    Status s(Code::kIOError, msg, msg2);
    s.busy_ = true;
    return s;
  }

  bool ok() const { return code_ == Code::kOk; }
  bool IsNotFound() const { return code_ == Code::kNotFound; }
  bool IsCorruption() const { return code_ == Code::kCorruption; }
  bool IsNotSupported() const { return code_ == Code::kNotSupported; }
  bool IsInvalidArgument() const { return code_ == Code::kInvalidArgument; }
  bool IsIOError() const { return code_ == Code::kIOError; }
  bool IsFull() const { return code_ == Code::kFull; }
  bool IsBusy() const { return busy_; }

  // The same status, recording that the file its message names is damaged
  // (or unreadable) at byte `offset`, as the message says ("... at offset
  // N"): tools report offset() without parsing messages.
  Status AtOffset(uint64_t offset) const {
    Status s = *this;
    s.offset_ = offset;
    return s;
  }
  // The byte offset AtOffset recorded, if any.
  std::optional<uint64_t> offset() const {
    if (offset_ == kNoOffset) return std::nullopt;
    return offset_;
  }

  Code code() const { return code_; }
  // The message without the code prefix ("" for OK).
  const std::string& message() const { return message_; }
  // "OK", or e.g. "Corruption: 000012.seg: bad block checksum at offset 4096".
  std::string ToString() const;

  // Explicitly discards a status the caller has decided not to act on.
  void PermitUncheckedError() const {}

 private:
  Status(Code code, std::string_view msg, std::string_view msg2);

  static constexpr uint64_t kNoOffset = UINT64_MAX;

  Code code_ = Code::kOk;
  bool busy_ = false;  // only with kIOError: see Busy()
  uint64_t offset_ = kNoOffset;
  std::string message_;
};

}  // namespace bloomkv

#endif  // BLOOMKV_INCLUDE_STATUS_H_
