// SegmentReader: point lookups and iteration over one open segment file.
//
// Open() reads and verifies the footer, the index, the properties and the
// filter, and keeps them in memory; data blocks are read on demand (through
// the block cache when one is given). A point lookup probes the filter with
// the caller's precomputed key hash before it touches the index or any data
// block, so a filter negative costs no IO at all.
//
// What Open reads besides the footer (properties, index block, filter) is a
// SegmentMeta of its own, shared: a database keeps every live segment's
// SegmentMeta in memory while closing and reopening the files themselves
// (db/table_cache.h), asks the filter first and only calls Search() on a
// positive; a reader reopened with the SegmentMeta it had before reads
// nothing at all from the file until a lookup needs a data block. A reader
// given a paged SegmentMeta (SegmentMeta::Paged, for a database over its
// Options::filter_and_index_memory_limit) reads the index block and the
// filter like data blocks, through the block cache, when a lookup needs
// them.
//
// Every read error or checksum mismatch is returned as Corruption (or the
// Env's IOError) with a message naming the file and offset.
// Thread-safety: immutable after Open(); safe for concurrent use. Iterators
// need external synchronization and must not outlive the reader.
#ifndef BLOOMKV_TABLE_SEGMENT_READER_H_
#define BLOOMKV_TABLE_SEGMENT_READER_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "bloomkv/filter_policy.h"
#include "bloomkv/iterator.h"
#include "bloomkv/slice.h"
#include "bloomkv/status.h"
#include "table/format.h"
#include "table/internal_key.h"
#include "table/properties.h"
#include "util/binary_fuse.h"
#include "util/blocked_bloom.h"
#include "util/prefix_index.h"

namespace bloomkv {

class Cache;
class Env;
class FilterPolicy;
class RandomAccessFile;

// One segment's filter, as read (checksummed) from its filter block, with
// the policy that interprets it; or, not resident(), what is known of a
// filter whose bytes stay in the file (SegmentMeta::Paged). Thread-safety:
// immutable; safe for concurrent use.
class SegmentFilter {
 public:
  // REQUIRES: policy is non-null and of the Name() that wrote data.
  SegmentFilter(std::shared_ptr<const FilterPolicy> policy, std::string data,
                uint64_t num_keys, double bits_per_key);
  SegmentFilter(const SegmentFilter&) = delete;
  SegmentFilter& operator=(const SegmentFilter&) = delete;

  // The same filter without its bytes: policy, size, keys, bits per key
  // and the theoretical rate (computed here, from the bytes).
  static std::shared_ptr<const SegmentFilter> PagedCopy(
      const SegmentFilter& resident);
  // A resident filter of this one's policy, keys and bits per key, over
  // data (the filter block, read again).
  std::shared_ptr<const SegmentFilter> WithBytes(std::string data) const;

  // False: the key is definitely not in the segment.
  // REQUIRES: resident().
  bool KeyMayMatch(uint64_t key_hash) const {
    if (fuse_parsed_) return binary_fuse::MayContain(fuse_, key_hash);
    if (bloom_parsed_) return blocked_bloom::MayContain(bloom_, key_hash);
    return policy_->KeyMayMatch(key_hash, data());
  }
  // Starts loading what KeyMayMatch(key_hash) will read.
  // REQUIRES: resident().
  void Prefetch(uint64_t key_hash) const {
    if (fuse_parsed_) return binary_fuse::Prefetch(fuse_, key_hash);
    if (bloom_parsed_) return blocked_bloom::Prefetch(bloom_, key_hash);
    policy_->Prefetch(key_hash, data());
  }
  // The filter's bytes, at a 64-byte-aligned address.
  Slice data() const { return Slice(data_.get(), size_); }
  // Whether the filter's bytes are held here.
  bool resident() const { return resident_; }
  // Bytes of filter held in memory: size() when resident, else 0.
  uint64_t memory() const { return size_; }
  // Bytes of the filter, resident or not.
  uint64_t size() const { return stored_size_; }
  double bits_per_key() const { return bits_per_key_; }
  // The policy that interprets the filter (its Name() is the stored one).
  const FilterPolicy& policy() const { return *policy_; }
  // The false-positive rate theory predicts; computed (about a millisecond)
  // on the first call only.
  double TheoreticalFpRate() const;

 private:
  struct AlignedDelete {
    void operator()(char* p) const {
      ::operator delete[](p, std::align_val_t(kFilterAlignment));
    }
  };
  // Filters are kept at cache-line-aligned addresses: the built-in filter
  // reads one 64-byte line per probe, which then is one cache line, not
  // two.
  static constexpr size_t kFilterAlignment = 64;

  const std::shared_ptr<const FilterPolicy> policy_;
  const size_t size_;
  size_t stored_size_;
  bool resident_ = true;
  const std::unique_ptr<char[], AlignedDelete> data_;
  const uint64_t num_keys_;
  const double bits_per_key_;
  // A built-in filter is parsed once, here, instead of by the policy on
  // every probe and prefetch, each a virtual call. Unparsable bytes leave
  // it to the policy, which answers "may match".
  binary_fuse::FilterView fuse_;
  bool fuse_parsed_ = false;
  blocked_bloom::FilterView bloom_;
  bool bloom_parsed_ = false;
  mutable std::once_flag fp_rate_once_;
  mutable double fp_rate_ = 1.0;
};

class Block;
class ValueDictionary;
class ValueRecoder;

// What a segment's reader keeps in memory for its whole life, read and
// checked once when the file is first opened: the properties, the index
// block and the filter. A paged meta (Paged()) keeps the properties, where
// the index and filter blocks are, and perhaps the filter; its readers read
// the blocks it does not keep from the file when a lookup needs them,
// through the block cache, checksummed on every read from the file. Thread-safety: immutable; safe for
// concurrent use.
struct SegmentMeta {
  SegmentProperties props;
  // Null when paged.
  std::shared_ptr<const Block> index_block;
  // The UserKeyPrefix of each index entry's separator (empty when the index
  // is paged or is not one entry per restart point): a point lookup's search
  // runs over these eight-byte integers, through their bucket table, and
  // over the index block's keys only among separators that share its
  // prefix.
  PrefixIndex index_prefixes;
  // Beside index_prefixes: the offset of each data block in index order,
  // then the end of the last one's trailer (empty when index_prefixes is,
  // or when a block does not begin where the one before it ends). A lookup
  // whose prefix no separator shares has its block's number from the prefix
  // search alone, and its handle from here, without reading the index
  // block's entries.
  std::vector<uint64_t> block_offsets;
  // Null: none usable. Not resident() when paged.
  std::shared_ptr<const SegmentFilter> filter;
  // The dictionary of a segment whose values are compressed one by one
  // (format version 3); null otherwise. Always in memory.
  std::shared_ptr<const ValueDictionary> values;
  BlockHandle index_handle;
  BlockHandle filter_handle;

  // The same segment with its index block, and its filter too unless
  // keep_filter, left in the file.
  std::shared_ptr<const SegmentMeta> Paged(bool keep_filter) const;
  bool index_paged() const { return index_block == nullptr; }
  bool filter_paged() const {
    return filter != nullptr && !filter->resident();
  }
  // Bytes of the index block held in memory (0 when paged).
  uint64_t index_memory() const;
  // Bytes of the index block and filter held in memory (what
  // filter_and_index_memory_limit counts; a value dictionary, at most
  // 8 KiB, is kept beside them, never paged).
  uint64_t memory() const;
  // Bytes of the value dictionary held in memory (0 when there is none).
  uint64_t value_dictionary_memory() const;
  // About where the entries at or after internal key `ikey` start: the
  // offset of the data block a lookup of it reads, or the end of the data
  // blocks when it is past them. From the index in memory: no IO.
  // REQUIRES: !index_paged() (SegmentReader::ApproximateOffsetOf reads a paged
  // index).
  uint64_t ApproximateOffsetOf(const Slice& ikey) const;

  // Where a point lookup of user_key must search, from index_prefixes and
  // block_offsets alone: kBlock with the data block's handle and number in
  // the index, or kNone when the key is past every separator; kUndecided
  // when a separator shares the key's prefix (or there are no offsets), and
  // the index block's keys decide among the entries in *range (every entry
  // when there are no prefixes), which goes to Block::Find.
  // REQUIRES: !index_paged().
  enum class Placement { kBlock, kNone, kUndecided };
  Placement PlaceKey(const Slice& user_key, BlockHandle* handle,
                     uint32_t* block_number,
                     std::pair<size_t, size_t>* range) const;
};

struct SegmentReaderOptions {
  // The policy whose filters this reader interprets. A segment whose stored
  // policy name differs is read with the built-in policy of that name
  // (util/filter_registry.h), or, if there is none, without its filter:
  // every lookup then goes to the index and data blocks. A null policy reads
  // no filters at all.
  std::shared_ptr<const FilterPolicy> filter_policy;
  // Optional block cache shared by many readers; not owned.
  Cache* block_cache = nullptr;
  // When reopening a file: what an earlier reader of the same file read (its
  // meta()). Open shares it instead of reading the footer, properties, index
  // and filter again (it reads nothing), and ignores filter_policy.
  std::shared_ptr<const SegmentMeta> meta;
  // The file's id in the block cache; 0 takes a new one. A file reopened
  // with its earlier id finds the blocks its earlier reader cached.
  uint64_t cache_id = 0;
  // A clock (NowMicros) for a mapped file's first read of each data block:
  // while such reads keep waiting for the device, a block that straddles
  // a page boundary asks for all its pages first (RandomAccessFile::
  // WillNeed), so that its pages come in one device read instead of one
  // page fault after the other. Null: never asked. Not owned.
  Env* clock = nullptr;
};

// IO done by one operation; the reader adds to it, never resets it.
struct SegmentReadStats {
  uint64_t data_blocks_read = 0;  // data blocks read from the file
  // Index and filter blocks read from the file (paged metas only).
  uint64_t meta_blocks_read = 0;
  uint64_t bytes_read = 0;        // bytes read from the file (trailers incl.)
  uint64_t cache_hits = 0;
  uint64_t cache_misses = 0;
  // Data blocks read from a mapping without their checksum: a lookup had
  // verified them there before (docs/durability.md).
  uint64_t checksums_trusted = 0;
};

// Per-read knobs, mirroring ReadOptions.
struct SegmentReadOptions {
  bool verify_checksums = true;
  bool fill_cache = true;
  // For iterators only: > 0 reads data blocks this many bytes at a time
  // (table/readahead_file.h), bypassing the block cache; for one scan of
  // the whole segment, as compaction makes.
  size_t readahead_size = 0;
  // For iterators only: not null makes value() return each value in this
  // recoder's stored form (table/value_codec.h), for a compaction writing
  // segments of its dictionary; a segment of that dictionary gives its
  // stored values as they are. REQUIRES: outlives the iterators.
  ValueRecoder* recoder = nullptr;
};

enum class LookupResult {
  kFilterNegative,  // the filter ruled the key out; nothing was read
  kNotFound,        // searched (filter positive or no filter): not present
  kFound,           // newest visible entry is a value; *value holds it
  kDeleted,         // newest visible entry is a tombstone
};

class SegmentReader {
 public:
  // Takes ownership of file. file_name is used in error messages only.
  static Status Open(const SegmentReaderOptions& options,
                     const std::string& file_name,
                     std::unique_ptr<RandomAccessFile> file, uint64_t file_size,
                     std::unique_ptr<SegmentReader>* result);

  SegmentReader(const SegmentReader&) = delete;
  SegmentReader& operator=(const SegmentReader&) = delete;
  ~SegmentReader();

  // Finds the newest entry for user_key with sequence <= snapshot; sets
  // *sequence (unless null) to its sequence when one is found.
  // REQUIRES: key_hash == KeyHash(user_key).
  // On a non-OK status *result is unspecified.
  Status Get(const SegmentReadOptions& options, const Slice& user_key,
             uint64_t key_hash, SequenceNumber snapshot, LookupResult* result,
             std::string* value, SegmentReadStats* stats,
             SequenceNumber* sequence = nullptr) const;
  // Get without the filter probe, for a caller that asked filter() itself:
  // index and data block. *result is never kFilterNegative.
  Status Search(const SegmentReadOptions& options, const Slice& user_key,
                SequenceNumber snapshot, LookupResult* result,
                std::string* value, SegmentReadStats* stats,
                SequenceNumber* sequence = nullptr) const;

  // The filter's answer alone; true when the segment has no usable filter
  // or its filter is paged (Get reads a paged filter).
  bool KeyMayMatch(uint64_t key_hash) const;

  // SegmentMeta::ApproximateOffsetOf, reading a paged index (the end of the
  // data blocks if that read fails).
  uint64_t ApproximateOffsetOf(const Slice& ikey) const;

  // Iterates internal keys and values in order. stats may be null; when
  // given it must outlive the iterator.
  std::unique_ptr<Iterator> NewIterator(const SegmentReadOptions& options,
                                        SegmentReadStats* stats) const;

  const SegmentProperties& properties() const;
  const std::string& file_name() const;
  uint64_t file_size() const;
  // True when the segment has a filter this reader interprets.
  bool has_filter() const;
  // The usable filter, or null; not resident() when the meta is paged.
  const std::shared_ptr<const SegmentFilter>& filter() const;
  // The properties, index and filter, to reopen the file without reading
  // them again (SegmentReaderOptions::meta).
  const std::shared_ptr<const SegmentMeta>& meta() const;
  // Bytes of filter held in memory (0 without a usable filter, or paged).
  uint64_t filter_memory() const;
  // Bytes of the index block held in memory (0 when paged).
  uint64_t index_memory() const;
  // False-positive rate theory predicts for this segment's filter; 1.0 when
  // there is no usable filter.
  double TheoreticalFpRate() const;

 private:
  struct Rep;
  explicit SegmentReader(std::unique_ptr<Rep> rep);
  std::unique_ptr<Rep> rep_;
};

}  // namespace bloomkv

#endif  // BLOOMKV_TABLE_SEGMENT_READER_H_
