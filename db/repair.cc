// RepairDB: rebuilds the manifest from the readable segments and logs.
//
// Steps, in order (each leaves the directory repairable again if it fails):
//  1. Every log is replayed into new level-0 segments; damaged regions are
//     skipped and counted. The log then moves to lost/.
//  2. A segment that the last readable manifest record naming it removes is
//     a compaction's input left behind (see ScanSegments): it moves to lost/
//     unread. Every other segment is read in full with checksums on. An
//     intact one is kept. A damaged one is salvaged block by block: every
//     data block whose checksum holds goes, entry by entry with its sequence
//     number and type, into a new segment, and the original moves to lost/.
//     The data blocks are found through the index when the footer and index
//     read back; otherwise by scanning the file from offset 0, where they
//     lie back to back (see FindBlockEnd). The entries lost are the count
//     the segment's properties or the old manifests record, minus those
//     salvaged; with neither readable the report says the count is unknown.
//  3. Level 0 is searched newest first by file number, so the segments are
//     renumbered in the order of their sequence numbers. When two segments
//     share user keys and their sequence ranges interleave (a segment from
//     an old deep level next to a newer one), no order is right for every
//     key: then all segments are merged into one, keeping every entry.
//  4. A fresh manifest lists them all at level 0, with the largest sequence
//     number found, and every range tombstone (DeleteRange) found in a log
//     or in any readable record of an old manifest, retired ones included:
//     a tombstone only ever hides what was deleted, so keeping one too many
//     costs reads, while losing one would bring deleted keys back from
//     salvaged segments. CURRENT is switched to it; old manifests move to
//     lost/.
//
// Thread-safety: holds the database lock for the whole repair.
#include "bloomkv/repair.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <utility>
#include <vector>

#define XXH_STATIC_LINKING_ONLY  // for XXH3_state_t on the stack
#include <xxhash.h>

#include "bloomkv/env.h"
#include "bloomkv/write_batch.h"
#include "db/compaction.h"
#include "db/filename.h"
#include "db/filter_allocation.h"
#include "db/log_reader.h"
#include "db/memtable.h"
#include "db/merging_iterator.h"
#include "db/segment_output.h"
#include "db/version_edit.h"
#include "db/version_set.h"
#include "db/write_batch_internal.h"
#include "table/block.h"
#include "table/format.h"
#include "table/properties.h"
#include "table/segment_reader.h"
#include "table/value_codec.h"
#include "util/coding.h"

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

// A file's bytes already in memory, read through the RandomAccessFile
// interface that block reads take: salvage reads a damaged segment once and
// then looks for its blocks without going back to the disk.
class MemoryFile final : public RandomAccessFile {
 public:
  explicit MemoryFile(const Slice& data) : data_(data) {}
  Status Read(uint64_t offset, size_t n, Slice* result,
              char* /*scratch*/) const override {
    const uint64_t start = std::min<uint64_t>(offset, data_.size());
    *result = Slice(data_.data() + start,
                    std::min<uint64_t>(n, data_.size() - start));
    return Status::OK();
  }

 private:
  const Slice data_;
};

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
    if (s.IsBusy()) {
      return Status::Busy(dbname_, "database is in use: " + s.message());
    }
    if (!s.ok()) return Status::IOError("cannot create or lock " + s.message());
    s = FindFiles();
    if (s.ok()) ReadManifests();
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
      if (type == FileType::kManifestFile)
        manifests_.emplace_back(number, name);
    }
    std::sort(logs_.begin(), logs_.end());
    std::sort(segment_numbers_.begin(), segment_numbers_.end());
    return Status::OK();
  }

  // Notes how many entries the old manifests say each segment held, for
  // segments whose own properties cannot be read, and which segments their
  // last record naming them removes (manifest_removed_). Best effort: a
  // manifest that is damaged or unreadable (often why repair runs) yields
  // what it can.
  void ReadManifests() {
    // Oldest first, so that the newest record naming a segment decides.
    std::sort(manifests_.begin(), manifests_.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    struct Ignore final : log::Reader::Reporter {
      void Corruption(size_t, const Status&) override {}
    } ignore;
    for (const auto& [number, name] : manifests_) {
      const std::string fname = dbname_ + "/" + name;
      std::unique_ptr<SequentialFile> file;
      if (!env_->NewSequentialFile(fname, &file).ok()) continue;
      log::Reader reader(file.get(), fname, &ignore, /*verify_checksums=*/true);
      Slice record;
      std::string scratch;
      while (reader.ReadRecord(&record, &scratch)) {
        VersionEdit edit;
        if (!edit.DecodeFrom(record).ok()) continue;
        // A move between levels removes and adds the same number in one
        // edit: removals first.
        for (const auto& [level, removed] : edit.deleted_files()) {
          manifest_removed_.insert(removed);
        }
        for (const auto& [level, f] : edit.new_files()) {
          listed_entries_[f->number] = f->num_entries;
          manifest_removed_.erase(f->number);
        }
        for (const RangeTombstone& t : edit.range_tombstones()) {
          KeepRangeTombstone(t);
        }
      }
      reader.status().PermitUncheckedError();
    }
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
    // level 0's configured policy as is, no per-level allocation.
    SegmentOutput out(options_, dbname_, next_file_number_++,
                      ConfiguredFilterPolicy(options_, 0),
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

  // Writes a memtable's entries to a new segment, and keeps its range
  // tombstones for the manifest.
  Status FlushMemTable(MemTable* mem) {
    if (mem->HasRangeTombstones()) {
      for (const RangeTombstone& t : mem->range_tombstones()->tombstones()) {
        KeepRangeTombstone(t);
      }
    }
    std::unique_ptr<Iterator> it(mem->NewIterator());
    return WriteSegment(it.get());
  }

  void KeepRangeTombstone(const RangeTombstone& t) {
    range_tombstones_.emplace(t.sequence, t);
    // Later writes must not take a sequence the tombstone would cover.
    max_sequence_ = std::max(max_sequence_, t.sequence);
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

  // Opens segment `number` for reading and takes its size.
  Status OpenSegmentFile(uint64_t number,
                         std::unique_ptr<RandomAccessFile>* file,
                         uint64_t* size) {
    const std::string fname = SegmentFileName(dbname_, number);
    Status s = env_->GetFileSize(fname, size);
    if (s.ok()) s = env_->NewRandomAccessFile(fname, file);
    return s;
  }

  Status OpenSegment(uint64_t number, std::unique_ptr<SegmentReader>* reader) {
    const std::string fname = SegmentFileName(dbname_, number);
    uint64_t size = 0;
    std::unique_ptr<RandomAccessFile> file;
    Status s = OpenSegmentFile(number, &file, &size);
    if (!s.ok()) return s;
    SegmentReaderOptions ro;
    ro.filter_policy = ReaderFilterPolicy(options_);
    return SegmentReader::Open(ro, fname, std::move(file), size, reader);
  }

  Status ScanSegments() {
    for (uint64_t number : segment_numbers_) {
      // A compaction's input that outlived the edit replacing it (a reader
      // still held it, then a crash): the compaction's outputs, synced
      // before that edit was written, carry what it held except what the
      // compaction dropped, such as a value together with the tombstone
      // that deleted it. Kept, it would bring that value back.
      if (manifest_removed_.count(number) != 0) {
        Status s = MoveToLost(BaseName(SegmentFileName(dbname_, number)));
        if (!s.ok()) return s;
        report_.segments_removed_by_manifest++;
        continue;
      }
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

  // Reads entries from it's position on while they are well-formed and in
  // order, adding each to *seg's key and sequence range. Returns how many.
  static uint64_t Take(Iterator* it, RepairedSegment* seg) {
    uint64_t n = 0;
    std::string previous;
    for (; it->Valid(); it->Next()) {
      ParsedInternalKey parsed;
      if (!ParseInternalKey(it->key(), &parsed)) break;
      if (n > 0 && CompareInternalKeys(it->key(), previous) <= 0) break;
      previous.assign(it->key().data(), it->key().size());
      if (n == 0) seg->meta->smallest = previous;
      seg->meta->largest = previous;
      NoteSequence(it->key(), seg);
      n++;
    }
    return n;
  }

  Status ScanSegment(uint64_t number) {
    const std::string name = BaseName(SegmentFileName(dbname_, number));
    std::unique_ptr<SegmentReader> reader;
    Status s = OpenSegment(number, &reader);
    if (s.IsIOError()) return s;  // not damage: let the operator retry
    if (s.IsNotSupported()) {
      // A format this build does not read: set aside whole, not scanned.
      report_.segments_lost++;
      CountDropped(number, /*from_properties=*/false, 0, 0);
      return MoveToLost(name);
    }
    if (s.ok()) {
      SegmentReadOptions ro;
      ro.fill_cache = false;
      RepairedSegment seg;
      seg.meta = std::make_shared<FileMetaData>();
      std::unique_ptr<Iterator> it = reader->NewIterator(ro, nullptr);
      it->SeekToFirst();
      const uint64_t n = Take(it.get(), &seg);
      if (it->status().ok() && !it->Valid() &&
          n == reader->properties().num_entries) {
        seg.meta->number = number;
        seg.meta->file_size = reader->file_size();
        seg.meta->num_entries = n;
        max_sequence_ = std::max(max_sequence_, seg.max_sequence);
        report_.segments_kept++;
        if (n > 0) segments_.push_back(std::move(seg));
        return Status::OK();
      }
    }
    reader.reset();
    s = SalvageSegment(number);
    if (!s.ok()) return s;
    return MoveToLost(name);
  }

  // Adds to the report what a damaged segment lost: the entries its
  // properties (when from_properties) or the old manifests list, minus the
  // `salvaged` ones; or, when neither is known, that the loss is unknown.
  void CountDropped(uint64_t number, bool from_properties, uint64_t listed,
                    uint64_t salvaged) {
    if (!from_properties) {
      auto it = listed_entries_.find(number);
      if (it == listed_entries_.end()) {
        report_.segments_with_unknown_loss++;
        return;
      }
      listed = it->second;
    }
    if (listed > salvaged) report_.entries_dropped += listed - salvaged;
  }

  // Whether a raw (uncompressed) block payload can end at `end` given that
  // it starts at `start`: its trailer (a restart count, and the restart
  // array it describes) fits, and the first restart offset is 0. A cheap
  // test that spares most candidate ends the checksum.
  static bool PlausibleRawBlock(const char* data, uint64_t start,
                                uint64_t end) {
    uint32_t restarts, num_restarts;
    bool key_prefixes;
    return Block::DecodeTrailer(data + start, end - start, &restarts,
                                &num_restarts, &key_prefixes) &&
           DecodeFixed32(data + start + restarts) == 0;
  }

  // Finds the block that starts at `start` in data[0..limit-1], for a
  // segment whose index cannot be read. Data blocks lie back to back from
  // offset 0, each payload || type || fixed32 checksum of (payload || type),
  // so the block ends at the first candidate whose type byte is valid and
  // whose checksum matches. One streaming hash state grows over the bytes
  // from `start` on and is asked for its digest at each candidate, so the
  // search is linear in the bytes it passes: O(file) for a block that is
  // damaged (its end is never found, and the scan stops there).
  // any_payload: the block need not be block-structured (a value
  // dictionary).
  static bool FindBlockEnd(const char* data, uint64_t start, uint64_t limit,
                           BlockHandle* handle, bool any_payload = false) {
    XXH3_state_t state;
    XXH3_64bits_reset(&state);
    uint64_t hashed = start;  // data[start..hashed-1] is in the state
    for (uint64_t end = start + 1; end + kBlockTrailerSize <= limit; end++) {
      const auto type =
          static_cast<CompressionType>(static_cast<uint8_t>(data[end]));
      if (type != CompressionType::kNone && type != CompressionType::kLZ4 &&
          type != CompressionType::kZSTD &&
          type != CompressionType::kLZ4Values) {
        continue;
      }
      if ((type == CompressionType::kNone ||
           type == CompressionType::kLZ4Values) &&
          !any_payload && !PlausibleRawBlock(data, start, end)) {
        continue;
      }
      XXH3_64bits_update(&state, data + hashed, end + 1 - hashed);
      hashed = end + 1;
      const auto checksum = static_cast<uint32_t>(XXH3_64bits_digest(&state));
      if (checksum == DecodeFixed32(data + end + 1)) {
        handle->offset = start;
        handle->size = end - start;
        return true;
      }
    }
    return false;
  }

  // The data block handles of a segment, from its index, when the footer
  // and the index read back. Also the properties' entry count, when they
  // read back, and the end of the data blocks, when the footer does.
  struct SegmentLayout {
    bool have_index = false;
    std::vector<BlockHandle> data_blocks;
    bool have_properties = false;
    uint64_t num_entries = 0;
    uint64_t data_end = 0;  // the file size unless the footer is intact
    // The value dictionary, the first block of a segment of compressed
    // values, when it reads back: without it, blocks of compressed values
    // cannot be salvaged. data_start is where the data blocks begin, after
    // it.
    std::shared_ptr<const ValueDictionary> values;
    uint64_t data_start = 0;
  };

  // The value dictionary block at the front of data, found by its magic and
  // its checksum (the footer may be lost), into *layout.
  static void ReadValueDictionary(const RandomAccessFile* file,
                                  const std::string& fname, const Slice& data,
                                  SegmentLayout* layout) {
    if (!data.starts_with(Slice(kValueDictionaryMagic,
                                kValueDictionaryMagicSize))) {
      return;
    }
    BlockHandle h;
    std::string block;
    Slice dictionary;
    if (FindBlockEnd(data.data(), 0, layout->data_end, &h,
                     /*any_payload=*/true) &&
        ReadBlock(file, fname, h, true, &block, nullptr).ok() &&
        DecodeValueDictionaryBlock(block, &dictionary)) {
      layout->values =
          std::make_shared<const ValueDictionary>(dictionary.ToString());
      layout->data_start = h.size + kBlockTrailerSize;
    }
  }

  static SegmentLayout ReadLayout(const RandomAccessFile* file,
                                  const std::string& fname, const Slice& data) {
    SegmentLayout layout;
    layout.data_end = data.size();
    if (data.size() < kFooterSize) return layout;
    const uint64_t footer_offset = data.size() - kFooterSize;
    Footer footer;
    if (!footer
             .DecodeFrom(Slice(data.data() + footer_offset, kFooterSize), fname,
                         footer_offset)
             .ok()) {
      return layout;
    }
    const BlockHandle& first_meta = footer.filter_handle.size > 0
                                        ? footer.filter_handle
                                        : footer.properties_handle;
    layout.data_end = std::min(first_meta.offset, footer_offset);
    std::string contents;
    SegmentProperties props;
    if (ReadBlock(file, fname, footer.properties_handle, true, &contents,
                  nullptr)
            .ok() &&
        props.DecodeFrom(contents).ok()) {
      layout.have_properties = true;
      layout.num_entries = props.num_entries;

    }
    std::shared_ptr<const Block> index;
    if (!ReadBlock(file, fname, footer.index_handle, true, &contents, nullptr)
             .ok() ||
        !Block::Parse(contents, fname, footer.index_handle.offset, &index)
             .ok()) {
      return layout;
    }
    std::unique_ptr<Iterator> it = Block::NewIterator(index);
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      Slice v = it->value();
      BlockHandle h;
      if (!h.DecodeFrom(&v) || h.offset > layout.data_end ||
          h.size > layout.data_end - h.offset) {
        return layout;
      }
      layout.data_blocks.push_back(h);
    }
    layout.have_index = it->status().ok();
    return layout;
  }

  // The entries of the data block at handle, if its checksum holds and
  // every entry is a well-formed internal key of a data entry, in order
  // after *last (the last key taken from the segment so far; updated), and
  // its values decode (with `values`, for a block of compressed values).
  static bool ReadDataBlock(
      const RandomAccessFile* file, const std::string& fname,
      const BlockHandle& handle, const ValueDictionary* values,
      std::string* last,
      std::vector<std::pair<std::string, std::string>>* entries) {
    entries->clear();
    BlockContents contents;
    std::shared_ptr<const Block> block;
    if (!ReadBlock(file, fname, handle, /*verify_checksum=*/true, &contents,
                   nullptr)
             .ok() ||
        !Block::Parse(std::move(contents), fname, handle.offset, &block)
             .ok() ||
        (block->values_compressed() && values == nullptr)) {
      return false;
    }
    std::string previous = *last;
    std::unique_ptr<Iterator> it = Block::NewIterator(block);
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      ParsedInternalKey parsed;
      // An index separator carries the largest sequence number: a block of
      // those is the index, met by a scan past the data blocks.
      if (!ParseInternalKey(it->key(), &parsed) ||
          parsed.sequence >= kMaxSequenceNumber ||
          (!previous.empty() &&
           CompareInternalKeys(it->key(), previous) <= 0)) {
        return false;
      }
      previous.assign(it->key().data(), it->key().size());
      std::string value;
      if (!block->values_compressed()) {
        value = it->value().ToString();
      } else if (!values->Decode(it->value(), &value)) {
        return false;
      }
      entries->emplace_back(previous, std::move(value));
    }
    if (!it->status().ok()) return false;
    *last = std::move(previous);
    return true;
  }

  // Rewrites every readable data block of a damaged segment into new
  // segments and counts what was lost. The caller moves the file to lost/.
  Status SalvageSegment(uint64_t number) {
    const std::string fname = SegmentFileName(dbname_, number);
    uint64_t size = 0;
    std::unique_ptr<RandomAccessFile> file;
    Status s = OpenSegmentFile(number, &file, &size);
    if (!s.ok()) return s;
    std::string scratch(static_cast<size_t>(size), '\0');
    Slice data;
    s = file->Read(0, static_cast<size_t>(size), &data, scratch.data());
    if (!s.ok()) return s;
    const MemoryFile contents(data);
    SegmentLayout layout = ReadLayout(&contents, fname, data);
    ReadValueDictionary(&contents, fname, data, &layout);

    std::shared_ptr<MemTable> mem = NewMemTable();
    std::vector<std::pair<std::string, std::string>> entries;
    std::string last;  // the last internal key taken
    uint64_t salvaged = 0;
    auto take = [&]() -> Status {
      for (const auto& [key, value] : entries) {
        ParsedInternalKey parsed;
        if (ParseInternalKey(key, &parsed)) {
          mem->Add(parsed.sequence, parsed.type, parsed.user_key, value);
        }
      }
      salvaged += entries.size();
      if (mem->ApproximateMemoryUsage() <= options_.write_buffer_size) {
        return Status::OK();
      }
      Status flushed = FlushMemTable(mem.get());
      mem = NewMemTable();
      return flushed;
    };
    if (layout.have_index) {
      for (const BlockHandle& h : layout.data_blocks) {
        if (!ReadDataBlock(&contents, fname, h, layout.values.get(), &last,
                           &entries)) {
          continue;
        }
        s = take();
        if (!s.ok()) return s;
      }
    } else {
      // Without the index, a block that cannot be read ends the scan: where
      // the next one starts is unknown.
      BlockHandle h;
      for (uint64_t pos = layout.data_start;
           FindBlockEnd(data.data(), pos, layout.data_end, &h) &&
           ReadDataBlock(&contents, fname, h, layout.values.get(), &last,
                         &entries);
           pos = h.offset + h.size + kBlockTrailerSize) {
        s = take();
        if (!s.ok()) return s;
      }
    }
    s = FlushMemTable(mem.get());
    if (!s.ok()) return s;
    CountDropped(number, layout.have_properties, layout.num_entries, salvaged);
    (salvaged > 0 ? report_.segments_salvaged : report_.segments_lost)++;
    return Status::OK();
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
    for (const auto& [sequence, t] : range_tombstones_) {
      edit.AddRangeTombstone(t);
    }
    const std::string fname = ManifestFileName(dbname_, manifest_number);
    Status s = WriteManifestFile(env_, fname, edit);
    if (!s.ok()) {
      env_->RemoveFile(fname).PermitUncheckedError();
      return s;
    }
    // On error CURRENT may already name the new manifest: it stays.
    s = SetCurrentFile(env_, dbname_, manifest_number);
    if (!s.ok()) return s;
    for (const auto& [number, name] : manifests_) {
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
  std::vector<std::pair<uint64_t, std::string>> manifests_;  // number, name
  // Segments that the last manifest record naming them removes.
  std::set<uint64_t> manifest_removed_;
  // Entries per segment number, as the old manifests record them.
  std::map<uint64_t, uint64_t> listed_entries_;
  std::vector<RepairedSegment> segments_;  // the repaired database
  // By sequence: the same one may be found in several manifests.
  std::map<SequenceNumber, RangeTombstone> range_tombstones_;
};

}  // namespace

Status RepairDB(const Options& options, const std::string& path,
                RepairReport* report) {
  Repairer repairer(options, path);
  return repairer.Run(report);
}

}  // namespace bloomkv
