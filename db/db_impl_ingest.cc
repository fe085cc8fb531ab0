// DBImpl::IngestSegments: adding segments written by SegmentWriter in one
// manifest edit. The rules are in include/bloomkv/db.h; this is how they
// are kept.
//
//  1. Validate, without mu_: every source is read whole (checksums, key
//     order, sequence 0, limits, the filter answering yes for every key),
//     and the sources' ranges must not overlap one another. Nothing in the
//     database has changed yet.
//  2. Under mu_: wait for running compactions that touch a file's range
//     (at any level), then check that no memtable entry and no segment
//     range overlaps a file. Then claim the ranges: one Compaction per file
//     and level, registered in running_compactions_, so that no compaction
//     starts in those ranges until the ingest is over (PickCompaction and
//     manual compactions skip what conflicts with a running compaction).
//     That keeps level 6 non-overlapping: nothing can write there across a
//     file's range between the check and the commit.
//  3. Reserve file numbers and make the reservation durable with an edit
//     that changes nothing else (it only records the next file number).
//     Without it a crash before the commit could leave a linked file whose
//     number the next Open reuses for a replayed log's segment, and
//     NewWritableFile would truncate it: with a hard link, that is the
//     application's source file.
//  4. Without mu_: link (or copy) each source to its new number, fsync it,
//     fsync the directory, open it through the table cache (which loads its
//     filter).
//  5. Under mu_: check the overlap again (writes may have arrived since),
//     then one edit adds every file to level 6; it is the commit point.
//
// Failures: before the commit the new files are removed and the database is
// as it was (the reservation record aside, when step 3 was reached). A
// failed manifest write is the sticky background error, as everywhere: the
// edit may be durable, so the files stay, and the next Open either finds
// them listed or deletes them as obsolete.
//
// Thread-safety: runs alongside reads, writes and background work; mu_ is
// held only for the checks and the manifest edits.
#include <algorithm>
#include <cinttypes>
#include <memory>

#include "db/compaction.h"
#include "db/db_impl.h"
#include "db/filename.h"
#include "db/filter_allocation.h"
#include "util/hash.h"
#include "util/logging.h"

namespace bloomkv {
namespace {

// Where every ingested segment goes: nothing overlaps it anywhere, so the
// deepest level is where it fits.
constexpr int kIngestLevel = kNumLevels - 1;

// Sources are read this many bytes at a time for validation, and copied in
// chunks of this size.
constexpr size_t kIngestReadSize = 1 << 20;

struct IngestFile {
  std::string source;
  uint64_t size = 0;
  uint64_t num_entries = 0;
  std::string smallest;  // internal keys; empty when num_entries is 0
  std::string largest;
  bool linked = false;  // hard-linked into the database, not copied
  std::shared_ptr<FileMetaData> meta;
};

Slice UserSmallest(const IngestFile& f) { return ExtractUserKey(f.smallest); }
Slice UserLargest(const IngestFile& f) { return ExtractUserKey(f.largest); }

std::string RangeString(const Slice& smallest, const Slice& largest) {
  return "[" + smallest.ToEscapedString() + ", " + largest.ToEscapedString() +
         "]";
}

// Reads the source f->source whole and checks it against the rules of
// DB::IngestSegments; fills the rest of *f.
Status ValidateSource(Env* env,
                      const std::shared_ptr<const FilterPolicy>& policy,
                      IngestFile* f) {
  const std::string& fname = f->source;
  if (!env->FileExists(fname)) {
    return Status::InvalidArgument(fname, "cannot be ingested: no such file");
  }
  Status s = env->GetFileSize(fname, &f->size);
  std::unique_ptr<RandomAccessFile> file;
  if (s.ok()) s = env->NewRandomAccessFile(fname, &file);
  if (!s.ok()) return s;
  SegmentReaderOptions ro;
  ro.filter_policy = policy;
  std::unique_ptr<SegmentReader> reader;
  s = SegmentReader::Open(ro, fname, std::move(file), f->size, &reader);
  if (!s.ok()) return s;
  if (policy != nullptr && !reader->has_filter()) {
    return Status::InvalidArgument(
        fname, "has no filter that the database reads (its policies: " +
                   std::string(policy->Name()) +
                   " and the built-in ones): write it with the database's "
                   "Options");
  }

  SegmentReadOptions sro;
  sro.verify_checksums = true;
  sro.fill_cache = false;
  sro.readahead_size = kIngestReadSize;
  std::unique_ptr<Iterator> it = reader->NewIterator(sro, nullptr);
  uint64_t n = 0;
  std::string previous;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    const Slice key = it->key();
    ParsedInternalKey parsed;
    if (!ParseInternalKey(key, &parsed)) {
      return Status::Corruption(fname, "holds a malformed key");
    }
    if (parsed.sequence != 0 || parsed.type != ValueType::kValue) {
      return Status::InvalidArgument(
          fname,
          "holds " + parsed.user_key.ToEscapedString() +
              " with sequence number " + std::to_string(parsed.sequence) +
              (parsed.type == ValueType::kValue ? "" : " (a tombstone)") +
              ": only segments written by SegmentWriter (sequence 0, "
              "values only) can be ingested");
    }
    if (parsed.user_key.empty() || parsed.user_key.size() > kMaxKeySize ||
        it->value().size() > kMaxValueSize) {
      return Status::InvalidArgument(
          fname, "holds a key or value beyond the database's limits at " +
                     parsed.user_key.ToEscapedString());
    }
    if (n > 0 && parsed.user_key.compare(ExtractUserKey(previous)) <= 0) {
      return Status::Corruption(
          fname, "keys out of order at " + parsed.user_key.ToEscapedString());
    }
    // A filter that denies one of its own keys would hide it from every
    // lookup: no segment goes in with one.
    if (!reader->KeyMayMatch(KeyHash(parsed.user_key))) {
      return Status::Corruption(
          fname, "filter denies its key " + parsed.user_key.ToEscapedString());
    }
    if (n == 0) f->smallest = key.ToString();
    previous.assign(key.data(), key.size());
    n++;
  }
  s = it->status();
  it.reset();
  if (!s.ok()) return s;
  const SegmentProperties& props = reader->properties();
  if (n != props.num_entries || (n > 0 && (f->smallest != props.smallest_key ||
                                           previous != props.largest_key))) {
    return Status::Corruption(
        fname, "holds " + std::to_string(n) +
                   " entries that do not match its properties (" +
                   std::to_string(props.num_entries) + " entries)");
  }
  f->num_entries = n;
  f->largest = std::move(previous);
  return Status::OK();
}

// Copies src (size bytes) into the new file dst and fsyncs it.
Status CopyFile(Env* env, const std::string& src, uint64_t size,
                const std::string& dst) {
  std::unique_ptr<SequentialFile> in;
  Status s = env->NewSequentialFile(src, &in);
  if (!s.ok()) return s;
  std::unique_ptr<WritableFile> out;
  s = env->NewWritableFile(dst, &out);
  if (!s.ok()) return s;
  std::unique_ptr<char[]> buffer(new char[kIngestReadSize]);
  while (s.ok() && size > 0) {
    Slice chunk;
    const size_t want =
        static_cast<size_t>(std::min<uint64_t>(size, kIngestReadSize));
    s = in->Read(want, &chunk, buffer.get());
    if (s.ok() && chunk.empty()) {
      s = Status::IOError(src, "ended " + std::to_string(size) +
                                   " bytes early while being copied");
    }
    if (s.ok()) s = out->Append(chunk);
    size -= std::min<uint64_t>(size, chunk.size());
  }
  if (s.ok()) s = out->Sync();
  Status close = out->Close();
  return s.ok() ? close : s;
}

// Makes dst a durable copy of src: a hard link when the Env and the
// filesystem allow it, a copy otherwise. A linked file is fsynced too: its
// writer may never have done so.
Status PlaceFile(Env* env, const std::string& src, uint64_t size,
                 const std::string& dst, bool* linked) {
  *linked = env->LinkFile(src, dst).ok();
  if (!*linked) return CopyFile(env, src, size, dst);
  std::unique_ptr<WritableFile> file;
  Status s = env->NewAppendableFile(dst, &file);
  if (!s.ok()) return s;
  s = file->Sync();
  Status close = file->Close();
  return s.ok() ? close : s;
}

// Whether mem holds an entry (of any sequence, tombstones included) whose
// user key is in [smallest, largest]; sets *key to the first such key.
bool MemTableOverlaps(MemTable* mem, const Slice& smallest,
                      const Slice& largest, std::string* key) {
  if (mem == nullptr || mem->Empty()) return false;
  std::unique_ptr<Iterator> it(mem->NewIterator());
  it->Seek(MakeInternalKey(smallest, kMaxSequenceNumber, kValueTypeForSeek));
  if (!it->Valid() || ExtractUserKey(it->key()).compare(largest) > 0) {
    return false;
  }
  *key = ExtractUserKey(it->key()).ToString();
  return true;
}

// The first thing v or the memtables hold in one of the files' ranges
// (InvalidArgument saying what), or OK.
Status CheckIngestOverlap(const std::vector<IngestFile>& ingest,
                          const Version& v, MemTable* mem, MemTable* imm) {
  for (const IngestFile& f : ingest) {
    const Slice lo = UserSmallest(f), hi = UserLargest(f);
    std::string key;
    if (MemTableOverlaps(mem, lo, hi, &key) ||
        MemTableOverlaps(imm, lo, hi, &key)) {
      return Status::InvalidArgument(
          f.source + " " + RangeString(lo, hi),
          "overlaps the memtable (key " + Slice(key).ToEscapedString() +
              "): ingested key ranges must hold nothing yet");
    }
    // An ingested entry (sequence 0) is older than any range tombstone.
    const auto mem_set = mem->range_tombstones();
    const auto imm_set = imm != nullptr ? imm->range_tombstones() : nullptr;
    for (const RangeTombstoneSet* set :
         {v.range_tombstones().get(), mem_set.get(), imm_set.get()}) {
      if (set == nullptr) continue;
      for (const RangeTombstone& t : set->tombstones()) {
        if (t.Overlaps(lo, hi)) {
          return Status::InvalidArgument(
              f.source + " " + RangeString(lo, hi),
              "overlaps the range deletion [" +
                  Slice(t.begin).ToEscapedString() + ", " +
                  Slice(t.end).ToEscapedString() +
                  "), which would hide it: compact the range first");
        }
      }
    }
    for (int level = 0; level < kNumLevels; level++) {
      for (const auto& g : v.files(level)) {
        const Slice glo = ExtractUserKey(g->smallest);
        const Slice ghi = ExtractUserKey(g->largest);
        if (lo.compare(ghi) <= 0 && glo.compare(hi) <= 0) {
          return Status::InvalidArgument(
              f.source + " " + RangeString(lo, hi),
              "overlaps segment " + std::to_string(g->number) + " at level " +
                  std::to_string(level) + " " + RangeString(glo, ghi) +
                  ": ingested key ranges must hold nothing yet");
        }
      }
    }
  }
  return Status::OK();
}

// Whether one of the claims conflicts with a running compaction.
bool ClaimsConflict(const std::vector<std::unique_ptr<Compaction>>& claims,
                    const std::vector<const Compaction*>& running) {
  for (const auto& c : claims) {
    for (const Compaction* r : running) {
      if (CompactionsConflict(*c, *r)) return true;
    }
  }
  return false;
}

}  // namespace

void DBImpl::EndIngestClaims(
    const std::vector<std::unique_ptr<Compaction>>& claims,
    const std::vector<uint64_t>& numbers) {
  for (const auto& c : claims) std::erase(running_compactions_, c.get());
  for (uint64_t number : numbers) pending_outputs_.erase(number);
  bg_work_cv_.SignalAll();
  bg_done_cv_.SignalAll();
}

Status DBImpl::IngestSegments(const std::vector<std::string>& files,
                              const IngestOptions& options) {
  if (read_only_) {
    return Status::NotSupported(dbname_, "database is open read-only");
  }
  const uint64_t start_micros = env_->NowMicros();

  // 1. Validation: nothing changes before every file has passed.
  std::vector<IngestFile> ingest;
  for (const std::string& fname : files) {
    IngestFile f;
    f.source = fname;
    Status s = ValidateSource(env_, ReaderFilterPolicy(options_), &f);
    if (!s.ok()) {
      Log(info_log_, "Ingest refused: %s", s.ToString().c_str());
      return s;
    }
    if (f.num_entries > 0) ingest.push_back(std::move(f));
  }
  if (ingest.empty()) return Status::OK();
  std::sort(ingest.begin(), ingest.end(),
            [](const IngestFile& a, const IngestFile& b) {
              return UserSmallest(a).compare(UserSmallest(b)) < 0;
            });
  for (size_t i = 1; i < ingest.size(); i++) {
    const IngestFile& a = ingest[i - 1];
    const IngestFile& b = ingest[i];
    if (UserSmallest(b).compare(UserLargest(a)) <= 0) {
      Status s = Status::InvalidArgument(
          "files to ingest overlap: " + a.source + " " +
          RangeString(UserSmallest(a), UserLargest(a)) + " and " + b.source +
          " " + RangeString(UserSmallest(b), UserLargest(b)));
      Log(info_log_, "Ingest refused: %s", s.ToString().c_str());
      return s;
    }
  }
  uint64_t total_bytes = 0, total_entries = 0;
  for (IngestFile& f : ingest) {
    f.meta = std::make_shared<FileMetaData>();
    f.meta->file_size = f.size;
    f.meta->num_entries = f.num_entries;
    f.meta->smallest = f.smallest;
    f.meta->largest = f.largest;
    total_bytes += f.size;
    total_entries += f.num_entries;
  }

  ReleasableMutexLock lock(&mu_);

  // 2. Claims on the files' ranges at every level, and the first check.
  std::vector<std::unique_ptr<Compaction>> claims;
  for (const IngestFile& f : ingest) {
    for (int level = 0; level < kNumLevels; level++) {
      auto c = std::make_unique<Compaction>(versions_->current(), level, level);
      c->mutable_inputs(0)->push_back(f.meta);
      claims.push_back(std::move(c));
    }
  }
  while (bg_error_.ok() && !shutting_down_ &&
         ClaimsConflict(claims, running_compactions_)) {
    bg_done_cv_.Wait(&mu_);
  }
  if (!bg_error_.ok()) return bg_error_;
  if (shutting_down_) return Status::IOError("database closing");
  Status s = CheckIngestOverlap(ingest, *versions_->current(), mem_.get(),
                                imm_.get());
  if (!s.ok()) {
    Log(info_log_, "Ingest refused: %s", s.ToString().c_str());
    return s;
  }
  for (const auto& c : claims) running_compactions_.push_back(c.get());
  // The claims and the reservations end whatever the outcome
  // (EndIngestClaims).
  std::vector<uint64_t> numbers;

  // 3. File numbers, durable before any file bears one.
  for (IngestFile& f : ingest) {
    f.meta->number = versions_->NewFileNumber();
    pending_outputs_.insert(f.meta->number);
    numbers.push_back(f.meta->number);
  }
  {
    VersionEdit reserve;
    s = versions_->LogAndApply(&reserve, &mu_);
    if (s.ok()) InstallReadView();
  }
  if (!s.ok()) {
    RecordBackgroundError(s);
    EndIngestClaims(claims, numbers);
    return s;
  }

  // 4. The files, in place and open.
  mu_.Unlock();
  size_t placed = 0;
  for (IngestFile& f : ingest) {
    s = PlaceFile(env_, f.source, f.size,
                  SegmentFileName(dbname_, f.meta->number), &f.linked);
    placed++;  // a failed copy may have left a partial file
    if (!s.ok()) break;
  }
  if (s.ok()) s = env_->SyncDir(dbname_);
  for (size_t i = 0; s.ok() && i < ingest.size(); i++) {
    OpenSegment(ingest[i].meta.get());
    s = ingest[i].meta->open_status;
  }
  mu_.Lock();

  // 5. The commit.
  bool manifest_attempted = false;
  if (s.ok()) s = bg_error_;
  if (s.ok()) {
    s = CheckIngestOverlap(ingest, *versions_->current(), mem_.get(),
                           imm_.get());
  }
  if (s.ok()) {
    VersionEdit edit;
    for (const IngestFile& f : ingest) edit.AddFile(kIngestLevel, f.meta);
    manifest_attempted = true;
    s = versions_->LogAndApply(&edit, &mu_);
    if (s.ok()) {
      InstallReadView();
    } else {
      // The edit may be in the manifest: the files stay (no file is
      // deleted after this), and the next Open sorts it out.
      RecordBackgroundError(s);
    }
  }
  if (!s.ok() && !manifest_attempted) {
    for (size_t i = 0; i < placed; i++) {
      const uint64_t number = ingest[i].meta->number;
      table_cache_->Evict(number);
      env_->RemoveFile(SegmentFileName(dbname_, number)).PermitUncheckedError();
    }
  }
  EndIngestClaims(claims, numbers);
  if (!s.ok()) {
    Log(info_log_, "Ingest of %zu segment(s) failed: %s", ingest.size(),
        s.ToString().c_str());
    return s;
  }
  size_t linked = 0;
  for (const IngestFile& f : ingest) linked += f.linked ? 1 : 0;
  Log(info_log_,
      "Ingested %zu segment(s) into L%d (%zu linked, %zu copied): %" PRIu64
      " entries, %" PRIu64 " bytes in %" PRIu64 " us",
      ingest.size(), kIngestLevel, linked, ingest.size() - linked,
      total_entries, total_bytes, env_->NowMicros() - start_micros);
  lock.Release();
  if (options.move_files) {
    // After the commit: a failure here leaves a source behind, nothing
    // worse, so the ingest still succeeded.
    for (const IngestFile& f : ingest) {
      Status r = env_->RemoveFile(f.source);
      if (!r.ok()) {
        Log(info_log_, "Ingested %s but could not remove it: %s",
            f.source.c_str(), r.ToString().c_str());
      }
    }
  }
  return Status::OK();
}

}  // namespace bloomkv
