// SegmentWriter: writes a segment file outside any database, from keys in
// sorted order, for DB::IngestSegments to add to a database in one step.
//
//   std::unique_ptr<bloomkv::SegmentWriter> w;
//   bloomkv::Status s = bloomkv::SegmentWriter::Open(options, "/load/1.seg",
//                                                    &w);
//   for (...) s = w->Put(key, value);        // keys strictly increasing
//   bloomkv::SegmentFileInfo info;
//   s = w->Finish(&info);
//   s = db->IngestSegments({info.file_path}, bloomkv::IngestOptions());
//
// The file is an ordinary segment (docs/segment_format.md), byte for byte
// what a compaction of the same entries into the last level would write:
//   * data blocks of Options::block_size, compressed as the database
//     compresses the last level (CompressionForLevel of level 6:
//     compression_per_level[6] if given, else Options::compression, values
//     compressed one by one by default), because that is where IngestSegments puts every segment it
//     accepts (see db.h);
//   * a filter built, over every key, by the policy the database
//     configures for the last level: Options::deep_filter_policy when set
//     (deep_filter_level is at most the last level), else
//     Options::filter_policy (under FilterAllocation::kMinimizeFalsePositives
//     the database would plan a last-level segment's filter with the rest
//     of the tree: the writer uses the configured policy as it is);
//   * every entry stored with sequence number 0 and type "value", the
//     oldest possible version of a key. That is what lets an ingest add
//     the file unchanged, and why IngestSegments accepts it only where the
//     database holds no other version of its keys (db.h).
// Use the same Options (block_size, compression, filter_policy,
// deep_filter_policy) as the database the file is meant for;
// IngestSegments refuses a file whose filter the database cannot read.
//
// Call pattern: Open (Put)* (Finish | Abandon). Open creates
// "<path>.tmp"; Finish writes the metadata blocks, fsyncs the file, renames
// it to `path` and fsyncs the directory, so a file at `path` is always
// complete, and writing a path again never changes a file an earlier ingest
// hard-linked into a database. Abandon, or destroying an unfinished writer,
// removes the temporary file. There is no Delete: a tombstone with sequence
// number 0 could never hide anything an ingest accepts.
//
// Thread-safety: external synchronization required (one thread at a time
// per writer); separate writers are independent.
#ifndef BLOOMKV_INCLUDE_SEGMENT_WRITER_H_
#define BLOOMKV_INCLUDE_SEGMENT_WRITER_H_

#include <cstdint>
#include <memory>
#include <string>

#include "bloomkv/options.h"
#include "bloomkv/slice.h"
#include "bloomkv/status.h"

namespace bloomkv {

// What SegmentWriter::Finish wrote.
struct SegmentFileInfo {
  std::string file_path;     // the finished file, as given to Open
  std::string smallest_key;  // user keys; empty when num_entries is 0
  std::string largest_key;
  uint64_t num_entries = 0;
  uint64_t file_size = 0;  // bytes
};

class SegmentWriter {
 public:
  // Starts writing a segment that Finish will leave at `path`, with the
  // block size, compression and filter policy of `options` (see above) and
  // its Env (Env::Default() when null). An existing file at `path` is
  // replaced only by Finish. InvalidArgument for a block size or filter
  // options DB::Open would refuse.
  static Status Open(const Options& options, const std::string& path,
                     std::unique_ptr<SegmentWriter>* writer);

  SegmentWriter() = default;
  SegmentWriter(const SegmentWriter&) = delete;
  SegmentWriter& operator=(const SegmentWriter&) = delete;
  // Abandons the segment unless Finish or Abandon was called.
  virtual ~SegmentWriter();

  // Appends key -> value. InvalidArgument, with nothing written and the
  // writer unchanged, if key is empty or over kMaxKeySize, value over
  // kMaxValueSize, or key not strictly greater (bytewise, as the database
  // orders keys) than the previous key. An IO error is sticky: every later
  // call returns it, and only Abandon is left.
  // REQUIRES: Finish and Abandon not called.
  virtual Status Put(const Slice& key, const Slice& value) = 0;

  // Entries put so far.
  virtual uint64_t NumEntries() const = 0;
  // Bytes written so far: compressed data blocks (the block being built is
  // not counted). For cutting input into segments of a target size.
  virtual uint64_t FileSize() const = 0;

  // Completes the segment as described above and fills *info. A segment
  // with no entries is valid (and ingesting it adds nothing). On error the
  // temporary file is removed and nothing is left at `path` by this writer.
  // REQUIRES: Finish and Abandon not called.
  virtual Status Finish(SegmentFileInfo* info) = 0;

  // Gives up: removes the temporary file. Safe after a failed call.
  virtual void Abandon() = 0;
};

}  // namespace bloomkv

#endif  // BLOOMKV_INCLUDE_SEGMENT_WRITER_H_
