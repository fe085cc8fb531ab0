// log::Reader; see log_reader.h and docs/wal_format.md.
#include "db/log_reader.h"

#include <algorithm>

#include "bloomkv/env.h"
#include "db/log_format.h"
#include "util/coding.h"
#include "util/hash.h"

namespace bloomkv {
namespace log {

namespace {

bool AllZero(const Slice& s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c == 0; });
}

}  // namespace

Reader::Reporter::~Reporter() = default;

Reader::Reader(SequentialFile* file, std::string file_name, Reporter* reporter,
               bool verify_checksums)
    : file_(file),
      file_name_(std::move(file_name)),
      reporter_(reporter),
      verify_checksums_(verify_checksums),
      backing_store_(new char[kBlockSize]) {}

Reader::~Reader() = default;

Status Reader::TornTailWithinSynced(uint64_t synced) const {
  if (!torn_tail_ || torn_tail_offset_ >= synced) return Status::OK();
  return Status::Corruption(
             file_name_ + " at offset " + std::to_string(torn_tail_offset_),
             "damaged record within the " + std::to_string(synced) +
                 " bytes the manifest records as synced")
      .AtOffset(torn_tail_offset_);
}

bool Reader::ReadRecord(Slice* record, std::string* scratch) {
  scratch->clear();
  *record = Slice();
  bool in_fragmented_record = false;
  uint64_t record_offset = 0;  // first header of the record being assembled

  while (true) {
    Slice fragment;
    uint64_t offset = 0;
    const char* reason = nullptr;
    const int type = ReadPhysicalRecord(&fragment, &offset, &reason);
    switch (type) {
      case kFullType:
      case kFirstType:
        if (in_fragmented_record) {
          // The writer never starts a record before finishing the previous
          // one, so the unfinished one is damage, not a torn append.
          BeginDrop(record_offset,
                    "fragmented record without its last fragment",
                    record_offset);
          in_fragmented_record = false;
        }
        ReportDrop(offset);
        if (type == kFullType) {
          last_record_offset_ = offset;
          scratch->clear();
          *record = fragment;
          return true;
        }
        in_fragmented_record = true;
        record_offset = offset;
        scratch->assign(fragment.data(), fragment.size());
        break;

      case kMiddleType:
      case kLastType:
        if (!in_fragmented_record) {
          // Usually the rest of a record whose start was damaged: it joins
          // that region (BeginDrop keeps an open region as it is).
          BeginDrop(offset, "fragment without a first fragment", offset);
          break;
        }
        scratch->append(fragment.data(), fragment.size());
        if (type == kLastType) {
          last_record_offset_ = record_offset;
          *record = Slice(*scratch);
          return true;
        }
        break;

      case kBadRecord:
        if (in_fragmented_record) {
          BeginDrop(record_offset, reason, offset);
          in_fragmented_record = false;
        } else {
          BeginDrop(offset, reason, offset);
        }
        break;

      case kEof:
      default:
        if (in_fragmented_record) {
          BeginDrop(record_offset,
                    "fragmented record without its last fragment",
                    record_offset);
        }
        scratch->clear();
        if (!status_.ok()) {
          // Whether anything valid followed is unknown: never call it torn.
          if (!status_reported_ && reporter_ != nullptr) {
            reporter_->Corruption(
                dropping_ ? end_of_buffer_offset_ - drop_start_ : 0, status_);
          }
          status_reported_ = true;
          dropping_ = false;
        } else if (dropping_) {
          torn_tail_ = true;
          torn_tail_offset_ = drop_start_;
          torn_tail_bytes_ = end_of_buffer_offset_ - drop_start_;
          dropping_ = false;
        }
        return false;
    }
  }
}

int Reader::ReadPhysicalRecord(Slice* payload, uint64_t* offset,
                               const char** reason) {
  while (true) {
    if (buffer_.size() < kHeaderSize) {
      if (!eof_) {
        // The tail of a full block: padding the writer filled with zeros.
        if (!AllZero(buffer_)) {
          *offset = CurrentOffset();
          *reason = "non-zero block padding";
          buffer_.clear();
          return kBadRecord;
        }
        buffer_.clear();
        if (!ReadBlock()) return kEof;
        continue;
      }
      if (!buffer_.empty()) {
        *offset = CurrentOffset();
        const bool in_block_tail =
            *offset % kBlockSize > kBlockSize - kHeaderSize;
        const bool padding = in_block_tail && AllZero(buffer_);
        buffer_.clear();
        // Padding the writer wrote before a record that never followed
        // holds no data, and a writer continuing the file completes it.
        if (padding) return kEof;
        *reason = "truncated record header";
        return kBadRecord;
      }
      return kEof;
    }

    const char* header = buffer_.data();
    const size_t length = DecodeFixed16(header + 4);
    const auto type = static_cast<uint8_t>(header[6]);
    *offset = CurrentOffset();
    if (type == kZeroType || type > kMaxRecordType) {
      // All zeros is worth naming: space allocated but never written.
      *reason = AllZero(Slice(header, kHeaderSize)) ? "zeroed record header"
                                                    : "unknown record type";
      SkipDamaged(length);
      return kBadRecord;
    }
    if (kHeaderSize + length > buffer_.size()) {
      const bool fits_block =
          *offset % kBlockSize + kHeaderSize + length <= kBlockSize;
      if (eof_ && fits_block && !FindNextRecord()) {
        // The file ends inside the payload and no intact record follows:
        // a torn append. (Had one followed, the length was damaged, which
        // FindNextRecord has already skipped past.)
        *reason = "truncated record";
        buffer_.clear();
      } else if (eof_ && fits_block) {
        *reason = "bad record length";
      } else {
        *reason = "bad record length";
        SkipDamaged(length);
      }
      return kBadRecord;
    }
    if (verify_checksums_) {
      const uint32_t expected = DecodeFixed32(header);
      // The type byte and the payload follow each other.
      const uint32_t actual = BlockChecksum(header + 6, 1 + length);
      if (actual != expected) {
        *reason = "checksum mismatch";
        SkipDamaged(length);
        return kBadRecord;
      }
    }
    *payload = Slice(header + kHeaderSize, length);
    buffer_.remove_prefix(kHeaderSize + length);
    skipped_by_length_ = false;
    return type;
  }
}

void Reader::SkipDamaged(size_t length) {
  if (!verify_checksums_) {
    // Without checksums nothing after the damage can be confirmed: trust the
    // length once (a flipped payload byte leaves it intact), and if that
    // leads to damage again, give up on the block; the next one starts with
    // a header.
    if (!skipped_by_length_ && kHeaderSize + length <= buffer_.size()) {
      buffer_.remove_prefix(kHeaderSize + length);
      skipped_by_length_ = true;
    } else {
      buffer_.clear();
    }
    return;
  }
  // First trust the length: right for damage to the payload, the checksum
  // or the type, the common cases.
  if (kHeaderSize + length <= buffer_.size()) {
    Slice rest(buffer_.data() + kHeaderSize + length,
               buffer_.size() - kHeaderSize - length);
    if (IsRecordBoundary(rest)) {
      buffer_ = rest;
      return;
    }
  }
  if (!FindNextRecord()) buffer_.clear();
}

bool Reader::FindNextRecord() {
  // Look for the next position in this block where a record with a good
  // checksum starts and ends at another record boundary. The second
  // condition guards against stopping inside a payload that happens to
  // embed bytes in log format.
  if (!verify_checksums_) return false;
  for (size_t p = 1; p + kHeaderSize <= buffer_.size(); p++) {
    Slice candidate(buffer_.data() + p, buffer_.size() - p);
    const size_t n = ValidRecordSize(candidate);
    if (n == 0) continue;
    if (IsRecordBoundary(Slice(candidate.data() + n, candidate.size() - n))) {
      buffer_ = candidate;
      return true;
    }
  }
  return false;
}

size_t Reader::ValidRecordSize(const Slice& s) const {
  if (s.size() < kHeaderSize) return 0;
  const char* header = s.data();
  const size_t length = DecodeFixed16(header + 4);
  const auto type = static_cast<uint8_t>(header[6]);
  if (type == kZeroType || type > kMaxRecordType) return 0;
  if (kHeaderSize + length > s.size()) return 0;
  if (BlockChecksum(header + 6, 1 + length) !=
      DecodeFixed32(header)) {
    return 0;
  }
  return kHeaderSize + length;
}

bool Reader::IsRecordBoundary(const Slice& rest) const {
  if (rest.size() < kHeaderSize) {
    // The end of the data read, block padding, or (at the end of the file)
    // a header cut short by a crash.
    return eof_ || AllZero(rest);
  }
  return ValidRecordSize(rest) > 0;
}

bool Reader::ReadBlock() {
  const uint64_t block_offset = end_of_buffer_offset_;
  Status s = file_->Read(kBlockSize, &buffer_, backing_store_.get());
  skipped_by_length_ = false;
  if (!s.ok()) {
    buffer_.clear();
    eof_ = true;
    status_ = Status::IOError(file_name_ + ": read error at offset " +
                                  std::to_string(block_offset),
                              s.message())
                  .AtOffset(block_offset);
    return false;
  }
  end_of_buffer_offset_ += buffer_.size();
  if (buffer_.size() < kBlockSize) eof_ = true;
  return true;
}

void Reader::BeginDrop(uint64_t start, const char* reason,
                       uint64_t reason_offset) {
  if (dropping_) return;
  dropping_ = true;
  drop_start_ = start;
  drop_reason_ = reason;
  drop_reason_offset_ = reason_offset;
}

void Reader::ReportDrop(uint64_t next_record) {
  if (!dropping_) return;
  dropping_ = false;
  const uint64_t bytes = next_record - drop_start_;
  if (reporter_ == nullptr) return;
  reporter_->Corruption(
      static_cast<size_t>(bytes),
      Status::Corruption(file_name_ + ": " + drop_reason_ + " at offset " +
                             std::to_string(drop_reason_offset_),
                         "dropped " + std::to_string(bytes) +
                             " bytes starting at offset " +
                             std::to_string(drop_start_))
          .AtOffset(drop_reason_offset_));
}

}  // namespace log
}  // namespace bloomkv
