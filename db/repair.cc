// RepairDB: rebuilds the manifest from the readable segments and logs.
//
// Steps, in order (each leaves the directory repairable again if it fails):
//  1. Every log is replayed into new level-0 segments; damaged regions are
//     skipped and counted. The log then moves to lost/.
//  2. Every other segment is read in full with checksums on. An intact one
//     is kept. One with a bad data block is salvaged: the entries before the
//     first bad block (reading forward) and after the last one (reading
//     backward) go into a new segment, and the original moves to lost/. One
//     that cannot be opened (footer, index or properties damaged, or
//     truncated) moves to lost/ whole.
//  3. Level 0 is searched newest first by file number, so the segments are
//     renumbered in the order of their sequence numbers. When two segments
//     share user keys and their sequence ranges interleave (a segment from
//     an old deep level next to a newer one), no order is right for every
//     key: then all segments are merged into one, keeping every entry.
//  4. A fresh manifest lists them all at level 0, with the largest sequence
//     number found; CURRENT is switched to it; old manifests move to lost/.
//
// Thread-safety: holds the database lock for the whole repair.
#include "bloomkv/repair.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "bloomkv/env.h"
#include "bloomkv/write_batch.h"
#include "db/compaction.h"
#include "db/filename.h"
#include "db/log_reader.h"
#include "db/memtable.h"
#include "db/merging_iterator.h"
#include "db/segment_output.h"
#include "db/version_edit.h"
#include "db/version_set.h"
#include "db/write_batch_internal.h"
#include "table/segment_reader.h"

namespace bloomkv {
namespace {

// The directory, inside the database, that receives what repair set aside.
constexpr char kLostDirName[] = "lost";

// A segment of the repaired database.
struct RepairedSegment {
  std::shared_ptr<FileMetaData> meta;
  SequenceNumber min_sequence = kMaxSequenceNumber;
  SequenceNumber max_sequence = 0;
};

// Tracks the sequence range of what is written to a segment.
void NoteSequence(const Slice& internal_key, RepairedSegment* seg) {
  ParsedInternalKey parsed;
  if (ParseInternalKey(internal_key, &parsed)) {
    seg->min_sequence = std::min(seg->min_sequence, parsed.sequence);
    seg->max_sequence = std::max(seg->max_sequence, parsed.sequence);
  }
}

class Repairer {
 public:
  Repairer(const Options& options, std::string dbname)
      : options_(options),
        env_(options.env != nullptr ? options.env : Env::Default()),
        dbname_(std::move(dbname)) {
    options_.env = env_;
  }

  Status Run(RepairReport* report) {
    if (!env_->IsDirectory(dbname_)) {
      return Status::InvalidArgument(dbname_, "is not a directory");
    }
    std::unique_ptr<FileLock> lock;
    Status s = env_->LockFile(LockFileName(dbname_), &lock);
    if (!s.ok()) {
      return Status::IOError(dbname_, "database is in use: " + s.message());
    }
    s = FindFiles();
    if (s.ok()) s = ConvertLogs();
    if (s.ok()) s = ScanSegments();
    if (s.ok()) s = OrderSegments();
    if (s.ok()) s = WriteManifest();
    env_->UnlockFile(std::move(lock)).PermitUncheckedError();
    report_.last_sequence = max_sequence_;
    if (report != nullptr) *report = report_;
    return s;
  }

 private:
  Status FindFiles() {
    std::vector<std::string> children;
    Status s = env_->GetChildren(dbname_, &children);
    if (!s.ok()) return s;
    for (const std::string& name : children) {
      uint64_t number;
      FileType type;
      if (!ParseFileName(name, &number, &type)) continue;
      next_file_number_ = std::max(next_file_number_, number + 1);
      if (type == FileType::kLogFile) logs_.push_back(number);
      if (type == FileType::kSegmentFile) segment_numbers_.push_back(number);
      if (type == FileType::kManifestFile) manifests_.push_back(name);
    }
    std::sort(logs_.begin(), logs_.end());
    std::sort(segment_numbers_.begin(), segment_numbers_.end());
    return Status::OK();
  }

  Status MoveToLost(const std::string& name) {
    const std::string lost = dbname_ + "/" + kLostDirName;
    if (!env_->IsDirectory(lost)) {
      Status s = env_->CreateDir(lost);
      if (!s.ok()) return s;
    }
    // A file set aside by an earlier repair is never replaced.
    std::string target = lost + "/" + name;
    for (int i = 1; env_->FileExists(target); i++) {
      target = lost + "/" + name + "." + std::to_string(i);
    }
    Status s = env_->RenameFile(dbname_ + "/" + name, target);
    if (s.ok()) report_.files_moved_to_lost++;
    return s;
  }

  static std::string BaseName(const std::string& path) {
    return path.substr(path.find_last_of('/') + 1);
  }

  // Writes the entries `it` yields (in internal-key order) to a new segment,
  // skipping repeats of the same internal key. No segment for no entries.
  Status WriteSegment(Iterator* it) {
    RepairedSegment seg;
    // Repaired segments all sit in level 0 until compaction rewrites them:
    // the configured policy as is, no per-level allocation.
    SegmentOutput out(options_, dbname_, next_file_number_++,
                      options_.filter_policy,
                      CompressionForLevel(options_, 0));
    Status s = out.Open();
    std::string last;
    bool empty = true;
    for (it->SeekToFirst(); s.ok() && it->Valid(); it->Next()) {
      if (!empty && it->key() == Slice(last)) continue;
      s = out.Add(it->key(), it->value());
      NoteSequence(it->key(), &seg);
      last.assign(it->key().data(), it->key().size());
      empty = false;
    }
    if (s.ok()) s = it->status();
    if (!s.ok() || empty) {
      out.Abandon();
      return s;
    }
    s = out.Finish(&seg.meta);
    if (!s.ok()) return s;
    report_.segments_written++;
    max_sequence_ = std::max(max_sequence_, seg.max_sequence);
    segments_.push_back(std::move(seg));
    return Status::OK();
  }

  // Writes a memtable's entries to a new segment.
  Status FlushMemTable(MemTable* mem) {
    std::unique_ptr<Iterator> it(mem->NewIterator());
    return WriteSegment(it.get());
  }

  Status ConvertLogs() {
    for (uint64_t number : logs_) {
      Status s = ConvertLog(number);
      if (!s.ok()) return s;
      s = MoveToLost(BaseName(LogFileName(dbname_, number)));
      if (!s.ok()) return s;
      report_.logs_replayed++;
    }
    return Status::OK();
  }

  Status ConvertLog(uint64_t number) {
    const std::string fname = LogFileName(dbname_, number);
    std::unique_ptr<SequentialFile> file;
    Status s = env_->NewSequentialFile(fname, &file);
    if (!s.ok()) return s;
    // Damage is skipped and counted; the reader resynchronizes after it.
    struct Counter final : log::Reader::Reporter {
      RepairReport* report;
      void Corruption(size_t bytes, const Status&) override {
        report->log_regions_dropped++;
        report->log_bytes_dropped += bytes;
      }
    } counter;
    counter.report = &report_;
    log::Reader reader(file.get(), fname, &counter, /*verify_checksums=*/true);
    std::shared_ptr<MemTable> mem = NewMemTable();
    Slice record;
    std::string scratch;
    WriteBatch batch;
    while (s.ok() && reader.ReadRecord(&record, &scratch)) {
      if (!WriteBatchInternal::SetContents(&batch, record).ok() ||
          !WriteBatchInternal::InsertInto(&batch, mem.get()).ok()) {
        report_.log_regions_dropped++;
        report_.log_bytes_dropped += record.size();
        continue;
      }
      report_.log_records_replayed++;
      if (mem->ApproximateMemoryUsage() > options_.write_buffer_size) {
        s = FlushMemTable(mem.get());
        mem = NewMemTable();
      }
    }
    if (s.ok()) s = reader.status();
    if (s.ok()) s = FlushMemTable(mem.get());
    return s;
  }

  Status OpenSegment(uint64_t number, std::unique_ptr<SegmentReader>* reader) {
    const std::string fname = SegmentFileName(dbname_, number);
    uint64_t size = 0;
    Status s = env_->GetFileSize(fname, &size);
    std::unique_ptr<RandomAccessFile> file;
    if (s.ok()) s = env_->NewRandomAccessFile(fname, &file);
    if (!s.ok()) return s;
    SegmentReaderOptions ro;
    ro.filter_policy = options_.filter_policy;
    return SegmentReader::Open(ro, fname, std::move(file), size, reader);
  }

  Status ScanSegments() {
    for (uint64_t number : segment_numbers_) {
      Status s = ScanSegment(number);
      if (!s.ok()) return s;
    }
    return Status::OK();
  }

  // A memtable owned by a shared_ptr (memtables are reference counted).
  static std::shared_ptr<MemTable> NewMemTable() {
    auto* mem = new MemTable;
    mem->Ref();
    return std::shared_ptr<MemTable>(mem, [](MemTable* m) { m->Unref(); });
  }

  // Reads entries from it's position on, forward or backward, while they
  // are well-formed and in order, and (backward) after `stop`. Adds each to
  // *seg's key and sequence range, and to *mem when given.
  static uint64_t Take(Iterator* it, bool forward, const std::string& stop,
                       RepairedSegment* seg, MemTable* mem) {
    uint64_t n = 0;
    std::string previous;
    for (; it->Valid(); forward ? it->Next() : it->Prev()) {
      ParsedInternalKey parsed;
      if (!ParseInternalKey(it->key(), &parsed)) break;
      if (n > 0 && (CompareInternalKeys(it->key(), previous) > 0) != forward) {
        break;
      }
      if (!stop.empty() && CompareInternalKeys(it->key(), stop) <= 0) break;
      previous.assign(it->key().data(), it->key().size());
      if (n == 0)
        (forward ? seg->meta->smallest : seg->meta->largest) = previous;
      (forward ? seg->meta->largest : seg->meta->smallest) = previous;
      NoteSequence(it->key(), seg);
      if (mem != nullptr) {
        mem->Add(parsed.sequence, parsed.type, parsed.user_key, it->value());
      }
      n++;
    }
    return n;
  }

  Status ScanSegment(uint64_t number) {
    const std::string name = BaseName(SegmentFileName(dbname_, number));
    std::unique_ptr<SegmentReader> reader;
    Status s = OpenSegment(number, &reader);
    if (!s.ok()) {
      if (s.IsIOError()) return s;  // not damage: let the operator retry
      report_.segments_lost++;
      return MoveToLost(name);
    }
    SegmentReadOptions ro;
    ro.fill_cache = false;
    RepairedSegment seg;
    seg.meta = std::make_shared<FileMetaData>();
    std::unique_ptr<Iterator> it = reader->NewIterator(ro, nullptr);
    it->SeekToFirst();
    const uint64_t n = Take(it.get(), /*forward=*/true, "", &seg, nullptr);
    const uint64_t listed = reader->properties().num_entries;
    if (it->status().ok() && !it->Valid() && n == listed) {
      seg.meta->number = number;
      seg.meta->file_size = reader->file_size();
      seg.meta->num_entries = n;
      max_sequence_ = std::max(max_sequence_, seg.max_sequence);
      report_.segments_kept++;
      if (n > 0) segments_.push_back(std::move(seg));
      return Status::OK();
    }
    // Salvage: the entries before the first unreadable one, then those after
    // the last one (reading backward), into a new segment.
    std::shared_ptr<MemTable> mem = NewMemTable();
    RepairedSegment head, tail;
    head.meta = std::make_shared<FileMetaData>();
    tail.meta = std::make_shared<FileMetaData>();
    it = reader->NewIterator(ro, nullptr);
    it->SeekToFirst();
    uint64_t salvaged = Take(it.get(), true, "", &head, mem.get());
    it = reader->NewIterator(ro, nullptr);
    it->SeekToLast();
    salvaged += Take(it.get(), false, head.meta->largest, &tail, mem.get());
    if (listed > salvaged) report_.entries_dropped += listed - salvaged;
    it.reset();
    reader.reset();
    s = FlushMemTable(mem.get());
    if (!s.ok()) return s;
    report_.segments_salvaged++;
    return MoveToLost(name);
  }

  // Whether searching the segments newest first by max sequence finds the
  // newest entry of every key: any two that share user keys must have
  // disjoint sequence ranges.
  bool OrderIsUnambiguous() const {
    for (size_t i = 0; i < segments_.size(); i++) {
      for (size_t j = i + 1; j < segments_.size(); j++) {
        const RepairedSegment& a = segments_[i];
        const RepairedSegment& b = segments_[j];
        const bool keys_overlap =
            ExtractUserKey(a.meta->smallest)
                    .compare(ExtractUserKey(b.meta->largest)) <= 0 &&
            ExtractUserKey(b.meta->smallest)
                    .compare(ExtractUserKey(a.meta->largest)) <= 0;
        // i precedes j in max-sequence order.
        if (keys_overlap && b.min_sequence <= a.max_sequence) return false;
      }
    }
    return true;
  }

  Status OrderSegments() {
    std::sort(segments_.begin(), segments_.end(),
              [](const RepairedSegment& a, const RepairedSegment& b) {
                return a.max_sequence != b.max_sequence
                           ? a.max_sequence < b.max_sequence
                           : a.meta->number < b.meta->number;
              });
    if (!OrderIsUnambiguous()) {
      Status s = MergeAll();
      if (!s.ok()) return s;
    }
    // Renumber oldest first, so file numbers grow with sequence numbers.
    for (RepairedSegment& seg : segments_) {
      const uint64_t number = next_file_number_++;
      Status s = env_->RenameFile(SegmentFileName(dbname_, seg.meta->number),
                                  SegmentFileName(dbname_, number));
      if (!s.ok()) return s;
      seg.meta->number = number;
    }
    return env_->SyncDir(dbname_);
  }

  // Replaces every segment with one holding all their entries. The inputs
  // move to lost/: each is intact, but no longer part of the database.
  Status MergeAll() {
    std::vector<RepairedSegment> inputs = std::move(segments_);
    segments_.clear();
    std::vector<std::unique_ptr<SegmentReader>> readers;
    std::vector<std::unique_ptr<Iterator>> children;
    SegmentReadOptions ro;
    ro.fill_cache = false;
    for (const RepairedSegment& seg : inputs) {
      std::unique_ptr<SegmentReader> reader;
      Status s = OpenSegment(seg.meta->number, &reader);
      if (!s.ok()) return s;
      children.push_back(reader->NewIterator(ro, nullptr));
      readers.push_back(std::move(reader));
    }
    std::unique_ptr<Iterator> merged = NewMergingIterator(std::move(children));
    Status s = WriteSegment(merged.get());
    merged.reset();
    readers.clear();
    for (const RepairedSegment& seg : inputs) {
      if (!s.ok()) break;
      s = MoveToLost(BaseName(SegmentFileName(dbname_, seg.meta->number)));
    }
    return s;
  }

  Status WriteManifest() {
    const uint64_t manifest_number = next_file_number_++;
    VersionEdit edit;
    edit.SetLogNumber(0);  // every log was converted and moved away
    edit.SetNextFileNumber(next_file_number_);
    edit.SetLastSequence(max_sequence_);
    for (const RepairedSegment& seg : segments_) edit.AddFile(0, seg.meta);
    const std::string fname = ManifestFileName(dbname_, manifest_number);
    Status s = WriteManifestFile(env_, fname, edit);
    if (!s.ok()) {
      env_->RemoveFile(fname).PermitUncheckedError();
      return s;
    }
    // On error CURRENT may already name the new manifest: it stays.
    s = SetCurrentFile(env_, dbname_, manifest_number);
    if (!s.ok()) return s;
    for (const std::string& name : manifests_) {
      s = MoveToLost(name);
      if (!s.ok()) return s;
    }
    const std::string lost = dbname_ + "/" + kLostDirName;
    if (report_.files_moved_to_lost > 0) s = env_->SyncDir(lost);
    if (s.ok()) s = env_->SyncDir(dbname_);
    return s;
  }

  Options options_;
  Env* const env_;
  const std::string dbname_;
  RepairReport report_;
  uint64_t next_file_number_ = 2;
  SequenceNumber max_sequence_ = 0;
  std::vector<uint64_t> logs_;
  std::vector<uint64_t> segment_numbers_;  // found on disk, oldest first
  std::vector<std::string> manifests_;
  std::vector<RepairedSegment> segments_;  // the repaired database
};

}  // namespace

Status RepairDB(const Options& options, const std::string& path,
                RepairReport* report) {
  Repairer repairer(options, path);
  return repairer.Run(report);
}

}  // namespace bloomkv
