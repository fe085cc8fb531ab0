// Block: an immutable, parsed data or index block (see block_builder.h for
// the format), and BlockIter, the iterator over its entries.
//
// Block keys are internal keys (table/internal_key.h) and are ordered with
// CompareInternalKeys. The contents come from a file and are not trusted:
// every varint, length and restart offset is checked against the block
// bounds, and any malformation turns into a Corruption status from the
// iterator naming the file and the block's offset, never an out-of-bounds
// read. (Checksums are ReadBlock's job; this code stays safe without them.)
// Thread-safety: a Block is immutable and may be shared between threads; a
// BlockIter requires external synchronization.
#ifndef BLOOMKV_TABLE_BLOCK_H_
#define BLOOMKV_TABLE_BLOCK_H_

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bloomkv/iterator.h"
#include "bloomkv/slice.h"
#include "bloomkv/status.h"
#include "table/format.h"
#include "util/prefix_index.h"

namespace bloomkv {

// Storage for one key assembled from a block's prefix-compressed entries:
// keys up to kInlineSize bytes stay inside the object (no heap allocation),
// longer ones go to the heap.
// Thread-safety: external synchronization required.
class BlockKeyBuffer {
 public:
  static constexpr size_t kInlineSize = 64;

  BlockKeyBuffer() = default;
  BlockKeyBuffer(const BlockKeyBuffer&) = delete;
  BlockKeyBuffer& operator=(const BlockKeyBuffer&) = delete;

  // Keeps the first `shared` bytes and appends n bytes from p.
  // REQUIRES: shared <= size().
  void Assemble(uint32_t shared, const char* p, uint32_t n) {
    const size_t need = size_t{shared} + n;
    if (need > capacity_) Grow(need);
    std::memcpy(data_ + shared, p, n);
    size_ = need;
  }
  void Clear() { size_ = 0; }
  size_t size() const { return size_; }
  Slice slice() const { return Slice(data_, size_); }

 private:
  void Grow(size_t need);

  char inline_[kInlineSize];
  std::string heap_;
  char* data_ = inline_;
  size_t capacity_ = kInlineSize;
  size_t size_ = 0;
};

class Block {
 public:
  // Validates the restart array trailer. file_name and offset (of the block
  // in its file) name the block in error messages.
  static Status Parse(BlockContents contents, const std::string& file_name,
                      uint64_t offset, std::shared_ptr<const Block>* block);
  // The same with a name shared by every block of one file, so that reading
  // a block does not allocate a copy of the name.
  // REQUIRES: file_name is not null.
  static Status Parse(BlockContents contents,
                      std::shared_ptr<const std::string> file_name,
                      uint64_t offset, std::shared_ptr<const Block>* block);
  // The same into *block, for a block that lives on the stack: one searched
  // once and dropped (its contents typically Borrowed), with no allocation.
  // file_name may then be a non-owning pointer to a name that outlives it.
  static Status Parse(BlockContents contents,
                      std::shared_ptr<const std::string> file_name,
                      uint64_t offset, std::optional<Block>* block);
  // The same from bytes in a string (copied), for blocks built in memory.
  static Status Parse(const std::string& contents, const std::string& file_name,
                      uint64_t offset, std::shared_ptr<const Block>* block);

  // Only Parse can name a ConstructionKey; the constructor is public for
  // std::make_shared, which puts the block and its reference count in one
  // allocation (one cache line less to fetch per cached hit).
  class ConstructionKey {
    friend class Block;
    ConstructionKey() = default;
  };
  Block(ConstructionKey, BlockContents contents,
        std::shared_ptr<const std::string> file_name, uint64_t offset,
        uint32_t restarts_offset, uint32_t num_restarts, bool key_prefixes);

  // Locates the trailer of a block payload of `size` bytes: the restart
  // array starts at *restarts_offset and holds *num_restarts offsets, and
  // then as many restart prefixes if *key_prefixes. False if the count or
  // the layout does not fit in the payload.
  static bool DecodeTrailer(const char* data, size_t size,
                            uint32_t* restarts_offset, uint32_t* num_restarts,
                            bool* key_prefixes);

  Block(const Block&) = delete;
  Block& operator=(const Block&) = delete;

  // Bytes of memory the block holds, for cache charging.
  size_t size() const { return contents_.size(); }
  // Its values are each compressed (table/value_codec.h): Find and the
  // iterator return them as stored, for the segment reader to decode.
  bool values_compressed() const { return contents_.values_compressed(); }
  const std::string& file_name() const { return *file_name_; }
  uint64_t offset() const { return offset_; }

  // Point lookup: finds the first entry whose key is >= target (internal-key
  // order), without an iterator. A binary search over the restart points
  // compares the restart keys in place; only the entries after the chosen
  // restart point are assembled, into *key_buf. On OK, *found tells whether
  // there is such an entry; if so *key (in *key_buf) and *value (in the
  // block) hold it, valid while both live and *key_buf is not reused.
  // If restart_point is not null and an entry is found, *restart_point is
  // the number of the restart point that entry is, or kNotARestartPoint
  // (in an index block, built with a restart point per entry, the number
  // of the data block the entry names).
  // REQUIRES: target is an internal key (at least 8 bytes), else
  // InvalidArgument.
  // With prefix_range (the restart points whose UserKeyPrefix equals the
  // target's, [first, second), as a PrefixIndex of this block's
  // RestartKeyPrefixes gives them), or in a block that stores its restart
  // prefixes, the search runs over those integers first: restart points
  // whose prefix is smaller than the target's come before it and those with
  // a larger one after it, so the keys compared are only those with the
  // target's prefix.
  static constexpr uint32_t kNotARestartPoint = UINT32_MAX;
  using PrefixRange = std::pair<size_t, size_t>;
  Status Find(const Slice& target, BlockKeyBuffer* key_buf, Slice* key,
              Slice* value, bool* found, uint32_t* restart_point = nullptr,
              const PrefixRange* prefix_range = nullptr) const;
  uint32_t num_restarts() const { return num_restarts_; }

  // The UserKeyPrefix of every entry's user key, in order, into *prefixes,
  // for a block with a restart point per entry (an index block); false,
  // leaving *prefixes empty, when the block has entries between restart
  // points or a damaged entry.
  bool RestartKeyPrefixes(std::vector<uint64_t>* prefixes) const;

  // An iterator that keeps the block alive.
  static std::unique_ptr<Iterator> NewIterator(
      std::shared_ptr<const Block> block);

 private:
  friend class BlockIter;

  // One entry's header, decoded and checked against the block bounds.
  struct Entry {
    uint32_t shared;      // bytes taken from the previous key
    uint32_t non_shared;  // bytes of key_delta
    uint32_t value_len;   // bytes of value, right after the key delta
    const char* key_delta;
    uint32_t next;  // offset of the entry after this one
  };
  // The one entry decoder, for point lookups and iterators: decodes the
  // entry at offset `at` whose predecessor's key has key_size bytes. Null on
  // success, else what is wrong with the entry.
  const char* DecodeEntry(uint32_t at, size_t key_size, Entry* e) const;
  // Offset of restart point i; false if the stored offset is out of bounds.
  bool RestartPoint(uint32_t i, uint32_t* offset) const;
  [[gnu::cold]] Status BadRestartPoint(uint32_t i) const;
  // The one restart-point search: *index is the last restart point in
  // left..right whose key is < target (left when there is none), comparing
  // restart keys in place; false, with *error set, for a damaged restart
  // array or entry.
  // REQUIRES: target is an internal key, left <= right < num_restarts_.
  bool SearchRestarts(const Slice& target, uint32_t left, uint32_t right,
                      uint32_t* index, Status* error) const;
  // In a block with stored restart prefixes: the range left..right of
  // restart points SearchRestarts has to compare keys of, from the prefixes
  // alone (left: the last point whose prefix is below the target's; right:
  // the last whose prefix is at most the target's).
  void RestartRangeByPrefix(const Slice& target, uint32_t* left,
                            uint32_t* right) const;

  // Checks the restart array trailer of contents and locates it.
  static Status ParseTrailer(const BlockContents& contents,
                             const std::string& file_name, uint64_t offset,
                             uint32_t* restarts_offset, uint32_t* num_restarts,
                             bool* key_prefixes);
  // "<what> at byte <at> of block" as a Corruption naming file and block.
  [[gnu::cold]] Status CorruptionInBlock(const std::string& what,
                                         uint32_t at) const;

  const BlockContents contents_;
  const std::shared_ptr<const std::string> file_name_;
  const uint64_t offset_;
  const uint32_t restarts_offset_;  // where the restart array starts
  const uint32_t num_restarts_;     // >= 1
  const bool key_prefixes_;  // restart prefixes follow the restart offsets
};

class BlockIter final : public Iterator {
 public:
  // REQUIRES: block outlives the iterator unless pin holds it.
  explicit BlockIter(const Block* block,
                     std::shared_ptr<const Block> pin = nullptr);

  bool Valid() const override { return current_ < restarts_; }
  void SeekToFirst() override;
  void SeekToLast() override;
  // target must be an internal key (at least 8 bytes) else InvalidArgument.
  void Seek(const Slice& target) override;
  void SeekForPrev(const Slice& target) override;
  void Next() override;
  void Prev() override;
  Slice key() const override { return Slice(key_); }
  Slice value() const override { return value_; }
  Status status() const override { return status_; }

 private:
  // Offset of restart point i, or false (and the iterator in error) if the
  // stored offset is out of bounds.
  bool RestartPoint(uint32_t i, uint32_t* offset);
  void SeekToRestart(uint32_t i, uint32_t offset);
  // Decodes the entry at next_; false at the end of the block or on error.
  bool ParseNextKey();
  void CorruptionError(const std::string& what, uint32_t at);
  // Records s (unless an error is recorded already) and invalidates.
  void SetError(const Status& s);
  void InvalidArgumentError(const std::string& what);

  const Block* const block_;
  const std::shared_ptr<const Block> pin_;
  const char* const data_;
  const uint32_t restarts_;
  const uint32_t num_restarts_;

  uint32_t current_;  // offset of the current entry; restarts_ if invalid
  uint32_t next_;     // offset of the entry after the current one
  uint32_t restart_index_ = 0;  // last restart point at or before current_
  std::string key_;
  Slice value_;
  Status status_;
};

}  // namespace bloomkv

#endif  // BLOOMKV_TABLE_BLOCK_H_
