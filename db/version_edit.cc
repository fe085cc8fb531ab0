// VersionEdit encoding; see version_edit.h and docs/manifest_format.md.
#include "db/version_edit.h"

#include "util/coding.h"

namespace bloomkv {
namespace {

// Never change: tags are stored in the manifest.
enum Tag : uint32_t {
  kLogNumber = 1,
  kNextFileNumber = 2,
  kLastSequence = 3,
  kDeletedFile = 4,
  kNewFile = 5,
  kLog = 6,
  kRangeTombstone = 7,
  kRemovedRangeTombstone = 8,
  // kNewFile's payload, then the file's range_deletions_applied; written
  // instead of kNewFile only when that is not 0, so that a database that
  // never deletes a range keeps manifests older builds read.
  kNewFileWithRangeDeletions = 9,
};

bool GetLevel(Slice* input, int* level) {
  uint32_t v;
  if (GetVarint32(input, &v) && v < static_cast<uint32_t>(kNumLevels)) {
    *level = static_cast<int>(v);
    return true;
  }
  return false;
}

bool GetInternalKey(Slice* input, std::string* dst) {
  Slice s;
  ParsedInternalKey parsed;
  if (GetLengthPrefixedSlice(input, &s) && ParseInternalKey(s, &parsed)) {
    dst->assign(s.data(), s.size());
    return true;
  }
  return false;
}

}  // namespace

void VersionEdit::EncodeTo(std::string* dst) const {
  if (has_log_number_) {
    PutVarint32(dst, kLogNumber);
    PutVarint64(dst, log_number_);
  }
  if (has_next_file_number_) {
    PutVarint32(dst, kNextFileNumber);
    PutVarint64(dst, next_file_number_);
  }
  if (has_last_sequence_) {
    PutVarint32(dst, kLastSequence);
    PutVarint64(dst, last_sequence_);
  }
  for (const auto& [level, number] : deleted_files_) {
    PutVarint32(dst, kDeletedFile);
    PutVarint32(dst, static_cast<uint32_t>(level));
    PutVarint64(dst, number);
  }
  for (const auto& [level, f] : new_files_) {
    const bool applied = f->range_deletions_applied != 0;
    PutVarint32(dst, applied ? kNewFileWithRangeDeletions : kNewFile);
    PutVarint32(dst, static_cast<uint32_t>(level));
    PutVarint64(dst, f->number);
    PutVarint64(dst, f->file_size);
    PutVarint64(dst, f->num_entries);
    PutLengthPrefixedSlice(dst, f->smallest);
    PutLengthPrefixedSlice(dst, f->largest);
    if (applied) PutVarint64(dst, f->range_deletions_applied);
  }
  for (const RangeTombstone& t : range_tombstones_) {
    PutVarint32(dst, kRangeTombstone);
    PutVarint64(dst, t.sequence);
    PutLengthPrefixedSlice(dst, t.begin);
    PutLengthPrefixedSlice(dst, t.end);
  }
  for (SequenceNumber sequence : removed_range_tombstones_) {
    PutVarint32(dst, kRemovedRangeTombstone);
    PutVarint64(dst, sequence);
  }
  for (const auto& [number, synced_size] : logs_) {
    PutVarint32(dst, kLog);
    PutVarint64(dst, number);
    PutVarint64(dst, synced_size);
  }
}

Status VersionEdit::DecodeFrom(const Slice& src) {
  Clear();
  Slice input = src;
  const char* msg = nullptr;
  uint32_t tag;
  while (msg == nullptr && !input.empty()) {
    if (!GetVarint32(&input, &tag)) {
      msg = "tag";
      break;
    }
    int level;
    uint64_t number;
    switch (tag) {
      case kLogNumber:
        if (GetVarint64(&input, &log_number_)) {
          has_log_number_ = true;
        } else {
          msg = "log number";
        }
        break;
      case kNextFileNumber:
        if (GetVarint64(&input, &next_file_number_)) {
          has_next_file_number_ = true;
        } else {
          msg = "next file number";
        }
        break;
      case kLastSequence:
        if (GetVarint64(&input, &last_sequence_) &&
            last_sequence_ <= kMaxSequenceNumber) {
          has_last_sequence_ = true;
        } else {
          msg = "last sequence number";
        }
        break;
      case kDeletedFile:
        if (GetLevel(&input, &level) && GetVarint64(&input, &number)) {
          deleted_files_.insert({level, number});
        } else {
          msg = "deleted file";
        }
        break;
      case kNewFile:
      case kNewFileWithRangeDeletions: {
        auto f = std::make_shared<FileMetaData>();
        if (GetLevel(&input, &level) && GetVarint64(&input, &f->number) &&
            GetVarint64(&input, &f->file_size) &&
            GetVarint64(&input, &f->num_entries) &&
            GetInternalKey(&input, &f->smallest) &&
            GetInternalKey(&input, &f->largest) &&
            (tag == kNewFile ||
             (GetVarint64(&input, &f->range_deletions_applied) &&
              f->range_deletions_applied <= kMaxSequenceNumber))) {
          new_files_.emplace_back(level, std::move(f));
        } else {
          msg = "new-file entry";
        }
        break;
      }
      case kRangeTombstone: {
        RangeTombstone t;
        Slice begin, end;
        if (GetVarint64(&input, &t.sequence) &&
            t.sequence <= kMaxSequenceNumber &&
            GetLengthPrefixedSlice(&input, &begin) &&
            GetLengthPrefixedSlice(&input, &end) && begin.compare(end) < 0) {
          t.begin = begin.ToString();
          t.end = end.ToString();
          range_tombstones_.push_back(std::move(t));
        } else {
          msg = "range tombstone";
        }
        break;
      }
      case kRemovedRangeTombstone: {
        SequenceNumber sequence;
        if (GetVarint64(&input, &sequence)) {
          removed_range_tombstones_.insert(sequence);
        } else {
          msg = "removed range tombstone";
        }
        break;
      }
      case kLog: {
        uint64_t synced_size;
        if (GetVarint64(&input, &number) && GetVarint64(&input, &synced_size)) {
          logs_.emplace_back(number, synced_size);
        } else {
          msg = "log entry";
        }
        break;
      }
      default:
        msg = "unknown tag";
        break;
    }
  }
  if (msg != nullptr) {
    return Status::Corruption("version edit", std::string("bad ") + msg);
  }
  return Status::OK();
}

std::string VersionEdit::DebugString() const {
  std::string r = "VersionEdit {";
  if (has_log_number_) r += "\n  log_number: " + std::to_string(log_number_);
  if (has_next_file_number_) {
    r += "\n  next_file_number: " + std::to_string(next_file_number_);
  }
  if (has_last_sequence_) {
    r += "\n  last_sequence: " + std::to_string(last_sequence_);
  }
  for (const auto& [level, number] : deleted_files_) {
    r +=
        "\n  remove: L" + std::to_string(level) + " #" + std::to_string(number);
  }
  for (const auto& [level, f] : new_files_) {
    r += "\n  add: L" + std::to_string(level) + " #" +
         std::to_string(f->number) + " " + std::to_string(f->file_size) +
         " bytes, " + std::to_string(f->num_entries) + " entries";
    if (f->range_deletions_applied != 0) {
      r += ", range deletions applied through sequence " +
           std::to_string(f->range_deletions_applied);
    }
  }
  for (const RangeTombstone& t : range_tombstones_) {
    r += "\n  range tombstone: @" + std::to_string(t.sequence) + " [" +
         Slice(t.begin).ToEscapedString() + ", " +
         Slice(t.end).ToEscapedString() + ")";
  }
  for (SequenceNumber sequence : removed_range_tombstones_) {
    r += "\n  retire range tombstone: @" + std::to_string(sequence);
  }
  for (const auto& [number, synced_size] : logs_) {
    r += "\n  log: #" + std::to_string(number) + ", " +
         std::to_string(synced_size) + " bytes synced";
  }
  r += "\n}\n";
  return r;
}

}  // namespace bloomkv
