// Tests for Status: codes, predicates, messages and ToString.
#include "bloomkv/status.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>

namespace bloomkv {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

TEST(StatusTest, DefaultIsOk) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(Status::Code::kOk, s.code());
  EXPECT_EQ("", s.message());
  EXPECT_EQ("OK", s.ToString());
  EXPECT_TRUE(Status::OK().ok());
  EXPECT_FALSE(s.IsNotFound() || s.IsCorruption() || s.IsNotSupported() ||
               s.IsInvalidArgument() || s.IsIOError() || s.IsFull());
}

TEST(StatusTest, EachCodeHasOnePredicateAndPrefix) {
  struct Case {
    Status status;
    Status::Code code;
    const char* text;
  };
  const Case cases[] = {
      {Status::NotFound("m"), Status::Code::kNotFound, "NotFound: m"},
      {Status::Corruption("m"), Status::Code::kCorruption, "Corruption: m"},
      {Status::NotSupported("m"), Status::Code::kNotSupported,
       "Not supported: m"},
      {Status::InvalidArgument("m"), Status::Code::kInvalidArgument,
       "Invalid argument: m"},
      {Status::IOError("m"), Status::Code::kIOError, "IO error: m"},
      {Status::Full("m"), Status::Code::kFull, "Full: m"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    const Status& s = c.status;
    EXPECT_FALSE(s.ok());
    EXPECT_EQ(c.code, s.code());
    EXPECT_EQ("m", s.message());
    EXPECT_EQ(c.text, s.ToString());
    const int predicates = s.IsNotFound() + s.IsCorruption() +
                           s.IsNotSupported() + s.IsInvalidArgument() +
                           s.IsIOError() + s.IsFull();
    EXPECT_EQ(1, predicates);
  }
}

// Busy is an IOError that says the resource is held by someone else; no
// other status says so.
TEST(StatusTest, BusyIsAnIOErrorThatSaysSo) {
  Status s = Status::Busy("LOCK", "held by another process");
  EXPECT_TRUE(s.IsIOError());
  EXPECT_TRUE(s.IsBusy());
  EXPECT_EQ(Status::Code::kIOError, s.code());
  EXPECT_EQ("LOCK: held by another process", s.message());
  EXPECT_EQ("IO error: LOCK: held by another process", s.ToString());
  Status copy = s;
  EXPECT_TRUE(copy.IsBusy());
  Status moved = std::move(copy);
  EXPECT_TRUE(moved.IsBusy());
  moved = Status::IOError("LOCK", "Permission denied");
  EXPECT_FALSE(moved.IsBusy());
  for (const Status& other :
       {Status::OK(), Status::NotFound("m"), Status::Corruption("m"),
        Status::NotSupported("m"), Status::InvalidArgument("m"),
        Status::IOError("m"), Status::Full("m")}) {
    EXPECT_FALSE(other.IsBusy()) << other.ToString();
  }
}

TEST(StatusTest, TwoPartMessage) {
  Status s = Status::Corruption("000012.seg", "bad block checksum at 4096");
  EXPECT_EQ("000012.seg: bad block checksum at 4096", s.message());
  EXPECT_EQ("Corruption: 000012.seg: bad block checksum at 4096", s.ToString());
  // An empty second part adds no separator.
  EXPECT_EQ("x", Status::IOError("x", "").message());
  EXPECT_EQ(": y", Status::IOError("", "y").message());
}

TEST(StatusTest, MessageMayContainNul) {
  const std::string raw("a\0b", 3);
  Status s = Status::InvalidArgument(raw);
  EXPECT_EQ(raw, s.message());
  EXPECT_EQ(3u, s.message().size());
}

TEST(StatusTest, CopyAndMove) {
  Status a = Status::NotFound("key");
  Status b = a;
  EXPECT_TRUE(b.IsNotFound());
  EXPECT_EQ("key", b.message());
  EXPECT_TRUE(a.IsNotFound());  // the copy left the source alone
  Status c = std::move(b);
  EXPECT_TRUE(c.IsNotFound());
  EXPECT_EQ("key", c.message());
  c = Status::OK();
  EXPECT_TRUE(c.ok());
  EXPECT_EQ("", c.message());
}

// The offset of the damage travels with the status, so tools never parse
// it out of the message; the message and code stay as they were.
TEST(StatusTest, AtOffsetRecordsWhereTheDamageIs) {
  EXPECT_FALSE(Status::Corruption("x").offset().has_value());
  EXPECT_FALSE(Status::OK().offset().has_value());
  const Status s =
      Status::Corruption("000012.seg: bad block at offset 4096").AtOffset(4096);
  EXPECT_TRUE(s.IsCorruption());
  EXPECT_EQ("000012.seg: bad block at offset 4096", s.message());
  ASSERT_TRUE(s.offset().has_value());
  EXPECT_EQ(4096u, *s.offset());
  EXPECT_EQ(0u, *Status::IOError("x").AtOffset(0).offset());
  const Status busy = Status::Busy("LOCK").AtOffset(7);
  EXPECT_TRUE(busy.IsBusy());
  Status copy = busy;
  EXPECT_EQ(7u, copy.offset().value_or(0));
}

}  // namespace
}  // namespace bloomkv
