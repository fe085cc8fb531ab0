// SegmentReader; see segment_reader.h and docs/segment_format.md.
#include "table/segment_reader.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <optional>

#include "bloomkv/env.h"
#include "bloomkv/filter_policy.h"
#include "table/block.h"
#include "table/format.h"
#include "table/readahead_file.h"
#include "table/two_level_iterator.h"
#include "table/value_codec.h"
#include "util/cache.h"
#include "util/coding.h"
#include "util/filter_registry.h"

namespace bloomkv {

namespace {
// A bucket of the index prefixes holds eight to sixteen entries; one with
// more (keys bunched under one prefix range) is searched without fetching
// its offsets ahead, which would take more lines than the search touches.
constexpr size_t kMaxPrefetchedOffsets = 32;

// Asks for the end of the `size`-byte block at p and its trailer: the lines
// a search of it reads before any entry. The trailer's type byte and the
// restart count come first; the restart offsets and prefixes lie before them
// at an offset the count gives, so without this they are a second round
// trip to memory, and the prefix search's steps over two or three lines a
// third. A 4 KiB block with a restart point every four entries has about
// fifteen: 12 bytes each, about 190 bytes in all.
constexpr size_t kPrefetchedBlockTail = 256;
inline void PrefetchBlockTail(const char* p, size_t size) {
  const char* const last = p + size + kBlockTrailerSize - 1;
  const char* q =
      p + (size > kPrefetchedBlockTail ? size - kPrefetchedBlockTail : 0);
  for (; q < last; q += 64) __builtin_prefetch(q);
  __builtin_prefetch(last);
}

// SegmentMeta::block_offsets of an index block with `entries` entries:
// empty when an entry's value is not a handle, or a block does not begin
// where the one before it (with its trailer) ends.
std::vector<uint64_t> BlockOffsets(std::shared_ptr<const Block> index,
                                   size_t entries) {
  std::vector<uint64_t> offsets;
  offsets.reserve(entries + 1);
  std::unique_ptr<Iterator> it = Block::NewIterator(std::move(index));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    Slice in = it->value();
    BlockHandle h;
    if (!h.DecodeFrom(&in) ||
        (!offsets.empty() && offsets.back() != h.offset) ||
        h.offset > UINT64_MAX - kBlockTrailerSize ||
        h.size > UINT64_MAX - kBlockTrailerSize - h.offset) {
      return {};
    }
    if (offsets.empty()) offsets.push_back(h.offset);
    offsets.push_back(h.offset + h.size + kBlockTrailerSize);
  }
  if (!it->status().ok() || offsets.size() != entries + 1) return {};
  return offsets;
}
}  // namespace

struct SegmentReader::Rep {
  SegmentReaderOptions options;
  std::string file_name;
  // file_name again, shared with every data block read (no copy per block).
  std::shared_ptr<const std::string> shared_file_name;
  std::unique_ptr<RandomAccessFile> file;
  // file->MappedBytes(): null unless the file lies whole in a mapping.
  const char* mapped = nullptr;
  uint64_t file_size = 0;
  std::shared_ptr<const SegmentMeta> meta;
  // *meta's, for brevity.
  const SegmentProperties* props = nullptr;
  const Block* index_block = nullptr;
  const SegmentFilter* filter = nullptr;  // null: none usable
  uint64_t cache_id = 0;
  // What lookups have learned about each data block (numbered by its index
  // entry, see Block::Find's restart_point) where it lies in the file's
  // memory (a mapping, which stays the same while the file is open): two
  // bits per block, kVerified once a lookup has verified its checksum there,
  // with kInPlace when it is stored raw as well, so that a lookup searches
  // it where it lies and skips the block cache. Empty when the index is
  // paged. Bits are only set, never cleared.
  static constexpr uint64_t kVerified = 1, kInPlace = 2;
  std::unique_ptr<std::atomic<uint64_t>[]> block_states;
  uint32_t num_block_states = 0;
  // Whether reads return the file's own bytes: unknown until the first
  // read of a data block for a lookup.
  enum FileMemory : uint8_t { kUnknown, kMapped, kNotMapped };
  mutable std::atomic<uint8_t> file_memory{kUnknown};
  // Whether the first reads of data blocks in the mapping wait for the
  // device (the store is not all in memory): raised by kSlowStep by each
  // first read that took kSlowMicros or more, lowered by one by each
  // quicker one, between 0 and kMaxColdScore. Above 0, a first read that
  // straddles a page boundary asks for its pages first: one device read
  // for both, where two page faults would make two, one after the other.
  // A warm store stays at 0 and makes no system call. Updated with relaxed
  // loads and stores: a lost update only delays the switch by a read.
  mutable std::atomic<int32_t> cold_score{0};
  static constexpr int32_t kSlowStep = 4, kMaxColdScore = 64;
  static constexpr uint64_t kSlowMicros = 20;

  // Before a first read of [offset, offset + n) in the mapping: asks for
  // its pages when the file has been cold and it straddles a page.
  void MaybeAskForPages(uint64_t offset, size_t n) const {
    constexpr uint64_t kPage = 4096;
    if (cold_score.load(std::memory_order_relaxed) > 0 &&
        offset / kPage != (offset + n - 1) / kPage) {
      file->WillNeed(offset, n);
    }
  }
  // After it: whether it waited.
  void RecordFirstRead(uint64_t micros) const {
    const int32_t score = cold_score.load(std::memory_order_relaxed);
    const int32_t next = micros >= kSlowMicros
                             ? std::min(score + kSlowStep, kMaxColdScore)
                             : std::max(score - 1, 0);
    if (next != score) cold_score.store(next, std::memory_order_relaxed);
  }

  uint64_t BlockState(uint32_t block) const {
    if (block >= num_block_states) return 0;
    return block_states[block / 32].load(std::memory_order_relaxed) >>
               (2 * (block % 32)) & 3;
  }
  void SetBlockState(uint32_t block, uint64_t state) const {
    if (block < num_block_states) {
      block_states[block / 32].fetch_or(state << (2 * (block % 32)),
                                        std::memory_order_relaxed);
    }
  }

  void SetMeta(std::shared_ptr<const SegmentMeta> m) {
    meta = std::move(m);
    props = &meta->props;
    index_block = meta->index_block.get();
    filter = meta->filter.get();
  }

  // Corruption unless the block at h, trailer included, lies before the
  // footer.
  Status CheckHandle(const BlockHandle& h, const char* what) const {
    const uint64_t limit = file_size - kFooterSize;
    if (h.offset > limit || h.size > limit - h.offset ||
        kBlockTrailerSize > limit - h.offset - h.size) {
      return CorruptionAt(file_name,
                          std::string(what) + " block handle (size " +
                              std::to_string(h.size) +
                              ") past the end of the file",
                          h.offset);
    }
    return Status::OK();
  }

  Status ReadDataBlock(const SegmentReadOptions& ro, const BlockHandle& h,
                       SegmentReadStats* stats,
                       std::shared_ptr<const Block>* block) const {
    Status s = CheckHandle(h, "data");
    if (!s.ok()) return s;
    Cache* cache = options.block_cache;
    const CacheKey key{cache_id, h.offset};
    if (cache != nullptr) {
      std::shared_ptr<const void> v = cache->Lookup(key);
      if (v != nullptr) {
        if (stats != nullptr) stats->cache_hits++;
        *block = std::static_pointer_cast<const Block>(std::move(v));
        return Status::OK();
      }
      if (stats != nullptr) stats->cache_misses++;
    }
    const bool insert = cache != nullptr && ro.fill_cache;
    // Blocks served from the cache count as verified, so a block headed for
    // the cache is always checksummed.
    return ReadOwnedBlock(h, ro.verify_checksums || insert,
                          insert ? &key : nullptr, stats, block);
  }

  // Reads, checks and parses the data block at h into a block of its own,
  // inserted into the cache under *key unless key is null, and counts the
  // read in *stats.
  Status ReadOwnedBlock(const BlockHandle& h, bool verify_checksum,
                        const CacheKey* key, SegmentReadStats* stats,
                        std::shared_ptr<const Block>* block) const {
    BlockContents contents;
    uint64_t bytes = 0;
    Status s =
        ReadBlock(file.get(), file_name, h, verify_checksum, &contents, &bytes);
    CountRead(bytes, stats);
    if (s.ok()) {
      s = Block::Parse(std::move(contents), shared_file_name, h.offset, block);
    }
    if (s.ok() && key != nullptr) Admit(*key, *block);
    return s;
  }

  void Admit(const CacheKey& key, const std::shared_ptr<const Block>& block)
      const {
    options.block_cache->Insert(
        key, block, block->size() + sizeof(Block) + file_name.size());
  }

  static void CountRead(uint64_t bytes, SegmentReadStats* stats) {
    if (stats != nullptr) {
      stats->data_blocks_read++;
      stats->bytes_read += bytes;
    }
  }

  // The data block at h for one point lookup, in *block: a cached block
  // (held by *cached), or one read and admitted into the cache, or, when the
  // cache does not admit it (or there is none, or !ro.fill_cache), one read
  // for this lookup only into *transient, borrowing scratch or the mapped
  // file: no allocation, no insertion that would evict a block read again.
  // A raw block of a mapped file never goes to the cache: once verified it
  // is searched where it lies, without asking the cache or reading it.
  // *in_place tells whether *block lies in the file's memory, whose bytes
  // the caller rechecks once it is done with them (RandomAccessFile::Recheck).
  Status ReadDataBlockForLookup(const SegmentReadOptions& ro,
                                const BlockHandle& h, uint32_t block_number,
                                SegmentReadStats* stats,
                                char* scratch, size_t scratch_size,
                                std::shared_ptr<const Block>* cached,
                                std::optional<Block>* transient,
                                const Block** block, bool* in_place) const {
    *in_place = false;
    Status s = CheckHandle(h, "data");
    if (!s.ok()) return s;
    const uint64_t state = BlockState(block_number);
    if ((state & kInPlace) != 0 && mapped != nullptr) {
      // Verified by an earlier read where it lies, raw: used in place.
      const char* const p = mapped + h.offset;
      const auto n = static_cast<size_t>(h.size);
      PrefetchBlockTail(p, n);
      BlockContents contents = BlockContents::Borrowed(p, n);
      contents.set_values_compressed(
          static_cast<CompressionType>(static_cast<uint8_t>(p[n])) ==
          CompressionType::kLZ4Values);
      CountRead(n + kBlockTrailerSize, stats);
      if (stats != nullptr) stats->checksums_trusted++;
      *in_place = true;
      return ParseTransient(std::move(contents), h, transient, block);
    }
    Cache* cache = options.block_cache;
    const CacheKey key{cache_id, h.offset};
    bool admit = false;
    // A block verified where it lies raw in the mapping is as good as a
    // cached one, with no cache to ask.
    if (cache != nullptr && (state & kInPlace) == 0) {
      std::shared_ptr<const void> v = cache->Lookup(key, &admit);
      if (v != nullptr) {
        if (stats != nullptr) stats->cache_hits++;
        *cached = std::static_pointer_cast<const Block>(std::move(v));
        *block = cached->get();
        return Status::OK();
      }
      if (stats != nullptr) stats->cache_misses++;
    }
    admit = admit && ro.fill_cache;
    const uint8_t memory = file_memory.load(std::memory_order_relaxed);
    if (admit && memory == kNotMapped) {
      s = ReadOwnedBlock(h, /*verify_checksum=*/true, &key, stats, cached);
      if (s.ok()) *block = cached->get();
      return s;
    }
    BlockContents contents;
    uint64_t bytes = 0;
    const bool verified = (state & kVerified) != 0;
    Env* const clock = options.clock;
    const bool timed = !verified && memory == kMapped && clock != nullptr;
    uint64_t start = 0;
    if (timed) {
      MaybeAskForPages(h.offset,
                       static_cast<size_t>(h.size) + kBlockTrailerSize);
      start = clock->NowMicros();
    }
    TransientSource source;
    s = ReadTransientBlock(file.get(), file_name, h, !verified, scratch,
                           scratch_size, &contents, &bytes, &source);
    if (timed) RecordFirstRead(clock->NowMicros() - start);
    CountRead(bytes, stats);
    if (!s.ok()) return s;
    if (verified && stats != nullptr) stats->checksums_trusted++;
    if (memory == kUnknown) {
      file_memory.store(source == TransientSource::kRead ? kNotMapped : kMapped,
                        std::memory_order_relaxed);
    }
    if (source != TransientSource::kRead && !verified) {
      SetBlockState(block_number,
                    source == TransientSource::kFileInPlace
                        ? kVerified | kInPlace
                        : kVerified);
    }
    *in_place = source == TransientSource::kFileInPlace;
    if (admit && source != TransientSource::kFileInPlace) {
      // Verified now, or before where it lies in the mapping: it goes to the
      // cache, copied out of scratch unless it has a buffer of its own.
      BlockContents owned;
      if (contents.mutable_data() != nullptr) {
        owned = std::move(contents);
      } else {
        owned = BlockContents(contents.size());
        std::memcpy(owned.mutable_data(), contents.data(), contents.size());
        owned.set_values_compressed(contents.values_compressed());
      }
      s = Block::Parse(std::move(owned), shared_file_name, h.offset, cached);
      if (s.ok()) {
        Admit(key, *cached);
        *block = cached->get();
      }
      return s;
    }
    return ParseTransient(std::move(contents), h, transient, block);
  }

  // Parses the contents of the block at h into *transient, for one lookup.
  Status ParseTransient(BlockContents contents, const BlockHandle& h,
                        std::optional<Block>* transient,
                        const Block** block) const {
    // The name outlives the block: no reference count to touch.
    std::shared_ptr<const std::string> name(std::shared_ptr<void>(),
                                            shared_file_name.get());
    Status s =
        Block::Parse(std::move(contents), std::move(name), h.offset, transient);
    if (s.ok()) *block = &**transient;
    return s;
  }

  // The newest entry of user_key at or before the snapshot of `target` (its
  // lookup key) in the data block at h, into *result, *value and *sequence.
  Status FindInDataBlock(const Block& block, const Slice& target,
                         const Slice& user_key, const BlockHandle& h,
                         BlockKeyBuffer* key_buf, LookupResult* result,
                         std::string* value, SequenceNumber* sequence) const {
    Slice key, entry_value;
    bool found;
    Status s = block.Find(target, key_buf, &key, &entry_value, &found);
    if (!s.ok() || !found) return s;
    ParsedInternalKey parsed;
    if (!ParseInternalKey(key, &parsed)) {
      return CorruptionAt(file_name, "bad internal key in data block",
                          h.offset);
    }
    if (parsed.user_key != user_key) return Status::OK();
    if (sequence != nullptr) *sequence = parsed.sequence;
    if (parsed.type == ValueType::kValue) {
      if (!block.values_compressed()) {
        value->assign(entry_value.data(), entry_value.size());
      } else if (meta->values == nullptr ||
                 !meta->values->Decode(entry_value, value)) {
        return BadCompressedValue(h.offset);
      }
      *result = LookupResult::kFound;
    } else {
      *result = LookupResult::kDeleted;
    }
    return Status::OK();
  }

  [[gnu::cold]] Status BadCompressedValue(uint64_t block_offset) const {
    return CorruptionAt(file_name,
                        meta->values == nullptr
                            ? "block of compressed values in a segment "
                              "without a value dictionary"
                            : "corrupt compressed value in data block",
                        block_offset);
  }

  // An iterator over the entries of a data block that returns values as
  // they were written, or (recoder not null) in recoder's stored form.
  std::unique_ptr<Iterator> DataBlockIterator(std::shared_ptr<const Block> block,
                                              ValueRecoder* recoder) const {
    const uint64_t offset = block->offset();
    // The dictionary its values are stored against; null: stored raw.
    std::shared_ptr<const ValueDictionary> stored_with;
    if (block->values_compressed()) {
      if (meta->values == nullptr) {
        return std::unique_ptr<Iterator>(
            NewErrorIterator(BadCompressedValue(offset)));
      }
      stored_with = meta->values;
    }
    // Values already in the form wanted: as written when no recoder asks,
    // or stored against the recoder's own dictionary.
    const bool as_stored = recoder == nullptr
                               ? stored_with == nullptr
                               : stored_with != nullptr &&
                                     recoder->SameDictionary(stored_with);
    if (as_stored) return Block::NewIterator(std::move(block));
    if (recoder == nullptr) {
      return NewValueDecodingIterator(Block::NewIterator(std::move(block)),
                                      std::move(stored_with), file_name,
                                      offset);
    }
    return NewValueRecodingIterator(Block::NewIterator(std::move(block)),
                                    std::move(stored_with), recoder, file_name,
                                    offset);
  }

  // Reads and checksums a metadata block (properties, value dictionary,
  // index, filter), read whole once: a mapped file is asked for all its
  // pages first rather than fault them in one by one. (A data block is
  // not: a lookup touches its one or two pages, and a warm store would pay
  // a system call for every block's first lookup.)
  template <typename Contents>
  Status ReadMetaBlock(const BlockHandle& h, Contents* contents,
                       uint64_t* bytes_read) const {
    file->WillNeed(h.offset, h.size + kBlockTrailerSize);
    return ReadBlock(file.get(), file_name, h, /*verify_checksum=*/true,
                     contents, bytes_read);
  }

  // Reads and checks the footer, the properties, the index block and (when
  // a policy interprets it) the filter. Metadata blocks are always
  // checksummed: they are read once and trusted for the segment's life.
  Status ReadMeta(const std::shared_ptr<const FilterPolicy>& filter_policy,
                  std::shared_ptr<const SegmentMeta>* result) const {
    const uint64_t footer_offset = file_size - kFooterSize;
    char footer_buf[kFooterSize];
    Slice footer_input;
    Status s = file->Read(footer_offset, kFooterSize, &footer_input, footer_buf);
    if (!s.ok()) return s;
    if (footer_input.size() != kFooterSize) {
      return CorruptionAt(file_name, "truncated footer read", footer_offset);
    }
    Footer footer;
    s = footer.DecodeFrom(footer_input, file_name, footer_offset);
    if (s.ok()) s = file->Recheck(footer_offset, kFooterSize);
    if (!s.ok()) return s;
    s = CheckHandle(footer.properties_handle, "properties");
    if (s.ok()) s = CheckHandle(footer.index_handle, "index");
    if (!s.ok()) return s;

    auto meta = std::make_shared<SegmentMeta>();
    meta->index_handle = footer.index_handle;
    meta->filter_handle = footer.filter_handle;
    std::string contents;
    s = ReadMetaBlock(footer.properties_handle, &contents, nullptr);
    if (!s.ok()) return s;
    s = meta->props.DecodeFrom(contents);
    if (!s.ok()) {
      return CorruptionAt(file_name,
                          "bad properties block (" + s.message() + ")",
                          footer.properties_handle.offset);
    }
    if (meta->props.format_version != footer.format_version) {
      return CorruptionAt(file_name,
                          "properties format version " +
                              std::to_string(meta->props.format_version) +
                              " disagrees with the footer's",
                          footer.properties_handle.offset);
    }

    if (meta->props.has_value_dictionary) {
      const BlockHandle h{meta->props.value_dictionary_offset,
                          meta->props.value_dictionary_size};
      if (footer.format_version < kSegmentFormatVersion3) {
        return CorruptionAt(file_name,
                            "value dictionary in a segment of format version " +
                                std::to_string(footer.format_version),
                            footer.properties_handle.offset);
      }
      s = CheckHandle(h, "value dictionary");
      std::string block;
      if (s.ok()) s = ReadMetaBlock(h, &block, nullptr);
      if (!s.ok()) return s;
      Slice dictionary;
      if (!DecodeValueDictionaryBlock(block, &dictionary)) {
        return CorruptionAt(file_name, "bad value dictionary block", h.offset);
      }
      meta->values =
          std::make_shared<const ValueDictionary>(dictionary.ToString());
    }

    BlockContents index_contents;
    s = ReadMetaBlock(footer.index_handle, &index_contents, nullptr);
    if (s.ok()) {
      s = Block::Parse(std::move(index_contents), file_name,
                       footer.index_handle.offset, &meta->index_block);
    }
    if (!s.ok()) return s;
    std::vector<uint64_t> prefixes;
    if (meta->index_block->RestartKeyPrefixes(&prefixes)) {
      meta->block_offsets = BlockOffsets(meta->index_block, prefixes.size());
    }
    meta->index_prefixes = PrefixIndex(std::move(prefixes));

    // A filter is interpreted by a policy of the name that wrote it: the
    // configured one, or else the built-in one of that name. A filter of
    // another name is ignored and the data blocks are searched instead.
    const std::string& name = meta->props.filter_policy;
    std::shared_ptr<const FilterPolicy> policy;
    if (filter_policy != nullptr && !name.empty()) {
      policy = name == filter_policy->Name() ? filter_policy
                                             : BuiltinFilterPolicy(name);
    }
    if (policy != nullptr) {
      s = CheckHandle(footer.filter_handle, "filter");
      std::string filter;
      if (s.ok()) {
        s = ReadMetaBlock(footer.filter_handle, &filter, nullptr);
      }
      if (!s.ok()) return s;
      meta->filter = std::make_shared<const SegmentFilter>(
          std::move(policy), std::move(filter), meta->props.num_filter_keys,
          meta->props.bits_per_key);
    }
    *result = std::move(meta);
    return Status::OK();
  }

  // The block at h of a paged meta (the index or the filter, as T): from
  // the block cache, or read from the file, checksummed, made by
  // make(contents, &result) and inserted.
  template <typename T, typename Contents, typename Make>
  Status PagedMetaBlock(const BlockHandle& h, const char* what,
                        SegmentReadStats* stats, Make&& make,
                        std::shared_ptr<const T>* result) const {
    Cache* cache = options.block_cache;
    const CacheKey key{cache_id, h.offset};
    if (cache != nullptr) {
      std::shared_ptr<const void> v = cache->Lookup(key);
      if (v != nullptr) {
        *result = std::static_pointer_cast<const T>(std::move(v));
        return Status::OK();
      }
    }
    Status s = CheckHandle(h, what);
    Contents contents;
    uint64_t bytes = 0;
    if (s.ok()) {
      s = ReadMetaBlock(h, &contents, &bytes);
    }
    if (stats != nullptr) {
      stats->meta_blocks_read++;
      stats->bytes_read += bytes;
    }
    if (s.ok()) s = make(std::move(contents), result);
    if (s.ok() && cache != nullptr) {
      cache->Insert(key, *result, MemoryOf(**result) + file_name.size());
    }
    return s;
  }
  static size_t MemoryOf(const Block& b) { return b.size() + sizeof(Block); }
  static size_t MemoryOf(const SegmentFilter& f) {
    return f.memory() + sizeof(SegmentFilter);
  }

  // The index block, resident or (paged) read through the block cache.
  Status Index(SegmentReadStats* stats,
               std::shared_ptr<const Block>* index) const {
    if (meta->index_block != nullptr) {
      *index = meta->index_block;
      return Status::OK();
    }
    return PagedMetaBlock<Block, BlockContents>(
        meta->index_handle, "index", stats,
        [this](BlockContents contents, std::shared_ptr<const Block>* b) {
          return Block::Parse(std::move(contents), shared_file_name,
                              meta->index_handle.offset, b);
        },
        index);
  }

  // The filter with its bytes: *filter itself, or (paged) the one read
  // through the block cache into *holder. REQUIRES: filter != nullptr.
  Status ResidentFilter(SegmentReadStats* stats,
                        std::shared_ptr<const SegmentFilter>* holder,
                        const SegmentFilter** resident) const {
    if (filter->resident()) {
      *resident = filter;
      return Status::OK();
    }
    Status s = PagedMetaBlock<SegmentFilter, std::string>(
        meta->filter_handle, "filter", stats,
        [this](std::string bytes, std::shared_ptr<const SegmentFilter>* f) {
          *f = filter->WithBytes(std::move(bytes));
          return Status::OK();
        },
        holder);
    if (s.ok()) *resident = holder->get();
    return s;
  }

  Status DecodeIndexValue(const Slice& value, const Block& index,
                          BlockHandle* h) const {
    Slice in = value;
    if (!h->DecodeFrom(&in)) {
      return CorruptionAt(file_name, "bad block handle in index block",
                          index.offset());
    }
    return Status::OK();
  }
};

SegmentFilter::SegmentFilter(std::shared_ptr<const FilterPolicy> policy,
                             std::string data, uint64_t num_keys,
                             double bits_per_key)
    : policy_(std::move(policy)),
      size_(data.size()),
      stored_size_(size_),
      data_(static_cast<char*>(::operator new[](
          std::max<size_t>(size_, 1), std::align_val_t(kFilterAlignment)))),
      num_keys_(num_keys),
      bits_per_key_(bits_per_key) {
  std::memcpy(data_.get(), data.data(), size_);
  const BuiltinFilterKind kind = BuiltinFilterKindOf(policy_->Name());
  if (kind == BuiltinFilterKind::kBinaryFuse8 ||
      kind == BuiltinFilterKind::kBinaryFuse16) {
    fuse_parsed_ = binary_fuse::Parse(
        this->data(), kind == BuiltinFilterKind::kBinaryFuse8 ? 8 : 16, &fuse_,
        nullptr);
  } else if (kind == BuiltinFilterKind::kBlockedBloom) {
    bloom_parsed_ = blocked_bloom::ParseFilter(data_.get(), size_, &bloom_);
  }
}

std::shared_ptr<const SegmentFilter> SegmentFilter::PagedCopy(
    const SegmentFilter& resident) {
  auto paged = std::make_shared<SegmentFilter>(
      resident.policy_, std::string(), resident.num_keys_,
      resident.bits_per_key_);
  paged->stored_size_ = resident.stored_size_;
  paged->resident_ = false;
  paged->fp_rate_ = resident.TheoreticalFpRate();
  return paged;
}

std::shared_ptr<const SegmentFilter> SegmentFilter::WithBytes(
    std::string data) const {
  return std::make_shared<SegmentFilter>(policy_, std::move(data), num_keys_,
                                         bits_per_key_);
}

double SegmentFilter::TheoreticalFpRate() const {
  if (!resident_) return fp_rate_;  // computed by PagedCopy
  // Costly and only wanted by reports: computed once, on demand.
  std::call_once(fp_rate_once_, [this] {
    fp_rate_ = policy_->TheoreticalFpRate(data(), num_keys_);
  });
  return fp_rate_;
}

SegmentReader::SegmentReader(std::unique_ptr<Rep> rep) : rep_(std::move(rep)) {}
SegmentReader::~SegmentReader() = default;

Status SegmentReader::Open(const SegmentReaderOptions& options,
                           const std::string& file_name,
                           std::unique_ptr<RandomAccessFile> file,
                           uint64_t file_size,
                           std::unique_ptr<SegmentReader>* result) {
  result->reset();
  if (file == nullptr) return Status::InvalidArgument("null segment file");
  if (file_size < kFooterSize) {
    return Status::Corruption(file_name + ": file too short (" +
                              std::to_string(file_size) +
                              " bytes) to be a segment");
  }
  auto rep = std::make_unique<Rep>();
  rep->options = options;
  rep->file_name = file_name;
  rep->shared_file_name = std::make_shared<const std::string>(file_name);
  rep->file = std::move(file);
  rep->mapped = rep->file->MappedBytes();
  rep->file_size = file_size;

  if (options.meta == nullptr) {
    std::shared_ptr<const SegmentMeta> meta;
    Status s = rep->ReadMeta(options.filter_policy, &meta);
    if (!s.ok()) return s;
    rep->SetMeta(std::move(meta));
  } else {
    rep->SetMeta(options.meta);
  }
  if (rep->index_block != nullptr) {
    rep->num_block_states = rep->index_block->num_restarts();
    rep->block_states = std::make_unique<std::atomic<uint64_t>[]>(
        (rep->num_block_states + 31) / 32);
  }
  if (options.block_cache != nullptr) {
    rep->cache_id =
        options.cache_id != 0 ? options.cache_id : options.block_cache->NewId();
  }
  result->reset(new SegmentReader(std::move(rep)));
  return Status::OK();
}

bool SegmentReader::KeyMayMatch(uint64_t key_hash) const {
  const SegmentFilter* f = rep_->filter;
  return f == nullptr || !f->resident() || f->KeyMayMatch(key_hash);
}

Status SegmentReader::Get(const SegmentReadOptions& options,
                          const Slice& user_key, uint64_t key_hash,
                          SequenceNumber snapshot, LookupResult* result,
                          std::string* value, SegmentReadStats* stats,
                          SequenceNumber* sequence) const {
  if (rep_->filter != nullptr) {
    std::shared_ptr<const SegmentFilter> paged;
    const SegmentFilter* filter;
    Status s = rep_->ResidentFilter(stats, &paged, &filter);
    if (!s.ok()) return s;
    if (!filter->KeyMayMatch(key_hash)) {
      *result = LookupResult::kFilterNegative;
      return Status::OK();
    }
  }
  return Search(options, user_key, snapshot, result, value, stats, sequence);
}

Status SegmentReader::Search(const SegmentReadOptions& options,
                             const Slice& user_key, SequenceNumber snapshot,
                             LookupResult* result, std::string* value,
                             SegmentReadStats* stats,
                             SequenceNumber* sequence) const {
  const Rep* r = rep_.get();
  *result = LookupResult::kNotFound;
  const LookupKey lookup(user_key, snapshot);

  // The first block whose separator is >= lookup is the only one that can
  // hold the newest visible entry: keys after the block's last key and up to
  // its separator are absent from the segment (see segment_builder.cc).
  std::shared_ptr<const Block> paged_index;
  const Block* index = r->index_block;
  if (index == nullptr) {
    Status s = r->Index(stats, &paged_index);
    if (!s.ok()) return s;
    index = paged_index.get();
  }
  BlockKeyBuffer key_buf;
  BlockHandle handle;
  uint32_t block_number = Block::kNotARestartPoint;
  Block::PrefixRange range;
  const SegmentMeta::Placement placed =
      index == r->index_block
          ? r->meta->PlaceKey(user_key, &handle, &block_number, &range)
          : SegmentMeta::Placement::kUndecided;
  if (placed == SegmentMeta::Placement::kNone) return Status::OK();
  Status s;
  if (placed == SegmentMeta::Placement::kUndecided) {
    Slice key, index_value;
    bool found;
    s = index->Find(lookup.internal_key(), &key_buf, &key, &index_value,
                    &found, &block_number,
                    index == r->index_block ? &range : nullptr);
    if (!s.ok() || !found) return s;
    if (index != r->index_block) block_number = Block::kNotARestartPoint;
    s = r->DecodeIndexValue(index_value, *index, &handle);
    if (!s.ok()) return s;
  }
  // Big enough for a data block of the default block size, uncompressed.
  char scratch[8 << 10];
  std::shared_ptr<const Block> cached;
  std::optional<Block> transient;
  const Block* block;
  bool in_place;
  s = r->ReadDataBlockForLookup(options, handle, block_number, stats, scratch,
                                sizeof(scratch), &cached, &transient, &block,
                                &in_place);
  if (!s.ok()) return s;
  s = r->FindInDataBlock(*block, lookup.internal_key(), user_key, handle,
                         &key_buf, result, value, sequence);
  // A block searched where it lies in a mapping was not checksummed by
  // this lookup: a page of it lost since (reading as zeros) fails the
  // lookup rather than answer from the zeros.
  if (in_place) {
    Status lost =
        r->file->Recheck(handle.offset, handle.size + kBlockTrailerSize);
    if (!lost.ok()) {
      *result = LookupResult::kNotFound;
      return lost;
    }
  }
  return s;
}

std::unique_ptr<Iterator> SegmentReader::NewIterator(
    const SegmentReadOptions& options, SegmentReadStats* stats) const {
  const Rep* r = rep_.get();
  std::shared_ptr<const Block> index;
  Status index_status = r->Index(stats, &index);
  if (!index_status.ok()) {
    return std::unique_ptr<Iterator>(NewErrorIterator(index_status));
  }
  if (options.readahead_size > 0) {
    // A scan of the whole segment: large reads through a buffer of its own,
    // over the data blocks (at the front of the file) only; blocks read
    // once have no business in the cache.
    const uint64_t data_end = r->props->data_size > 0
                                  ? std::min(r->props->data_end(), r->file_size)
                                  : r->file_size;
    auto file = std::make_shared<ReadaheadFile>(
        r->file.get(), options.readahead_size, data_end);
    auto read_block = [r, options, stats, file,
                       index](const Slice& index_value) {
      BlockHandle handle;
      Status s = r->DecodeIndexValue(index_value, *index, &handle);
      if (s.ok()) s = r->CheckHandle(handle, "data");
      BlockContents contents;
      uint64_t bytes = 0;
      if (s.ok()) {
        s = ReadBlock(file.get(), r->file_name, handle,
                      options.verify_checksums, &contents, &bytes);
      }
      Rep::CountRead(bytes, stats);
      std::shared_ptr<const Block> block;
      if (s.ok()) {
        s = Block::Parse(std::move(contents), r->file_name, handle.offset,
                         &block);
      }
      if (!s.ok()) return std::unique_ptr<Iterator>(NewErrorIterator(s));
      return r->DataBlockIterator(std::move(block), options.recoder);
    };
    return NewTwoLevelIterator(Block::NewIterator(index),
                               std::move(read_block));
  }
  auto block_function = [r, options, stats, index](const Slice& index_value) {
    BlockHandle handle;
    Status s = r->DecodeIndexValue(index_value, *index, &handle);
    std::shared_ptr<const Block> block;
    if (s.ok()) s = r->ReadDataBlock(options, handle, stats, &block);
    if (!s.ok()) return std::unique_ptr<Iterator>(NewErrorIterator(s));
    return r->DataBlockIterator(std::move(block), options.recoder);
  };
  return NewTwoLevelIterator(Block::NewIterator(std::move(index)),
                             std::move(block_function));
}

const SegmentProperties& SegmentReader::properties() const {
  return *rep_->props;
}
const std::string& SegmentReader::file_name() const { return rep_->file_name; }
uint64_t SegmentReader::file_size() const { return rep_->file_size; }
bool SegmentReader::has_filter() const { return rep_->filter != nullptr; }
const std::shared_ptr<const SegmentFilter>& SegmentReader::filter() const {
  return rep_->meta->filter;
}
const std::shared_ptr<const SegmentMeta>& SegmentReader::meta() const {
  return rep_->meta;
}
uint64_t SegmentReader::filter_memory() const {
  return rep_->filter != nullptr ? rep_->filter->memory() : 0;
}
uint64_t SegmentReader::index_memory() const {
  return rep_->meta->index_memory();
}
uint64_t SegmentMeta::index_memory() const {
  return index_block != nullptr
             ? index_block->size() + index_prefixes.MemoryUsage() +
                   block_offsets.capacity() * sizeof(uint64_t)
             : 0;
}

SegmentMeta::Placement SegmentMeta::PlaceKey(
    const Slice& user_key, BlockHandle* handle, uint32_t* block_number,
    std::pair<size_t, size_t>* range) const {
  if (index_prefixes.empty()) {
    *range = {0, SIZE_MAX};
    return Placement::kUndecided;
  }
  // Separators with a smaller prefix are smaller than every internal key of
  // user_key, those with a larger one larger: with none sharing it, the
  // first larger one ends the only block that can hold the key.
  // The offsets of the entries the prefix search goes over (and of the one
  // after them, where a key past them all lands), asked for while it waits
  // on the prefixes: in a store whose index outgrows the CPU caches both
  // are cache misses, and this makes them one round trip instead of two.
  const auto fetch_offsets = [this](size_t begin, size_t end) {
    if (block_offsets.empty() || end - begin > kMaxPrefetchedOffsets) return;
    const uint64_t* p = block_offsets.data();
    const uint64_t* last = p + std::min(end + 1, block_offsets.size() - 1);
    for (p += begin; p < last; p += 64 / sizeof(uint64_t)) {
      __builtin_prefetch(p);
    }
    __builtin_prefetch(last);
  };
  *range = index_prefixes.EqualRange(UserKeyPrefix(user_key), fetch_offsets);
  const auto [lo, hi] = *range;
  if (lo == index_prefixes.size()) return Placement::kNone;
  if (lo != hi || block_offsets.empty()) return Placement::kUndecided;
  handle->offset = block_offsets[lo];
  handle->size = block_offsets[lo + 1] - block_offsets[lo] - kBlockTrailerSize;
  *block_number = static_cast<uint32_t>(lo);
  return Placement::kBlock;
}
uint64_t SegmentMeta::value_dictionary_memory() const {
  return values != nullptr ? values->memory() : 0;
}
uint64_t SegmentMeta::memory() const {
  return index_memory() + (filter != nullptr ? filter->memory() : 0);
}
std::shared_ptr<const SegmentMeta> SegmentMeta::Paged(bool keep_filter) const {
  auto paged = std::make_shared<SegmentMeta>();
  paged->props = props;
  paged->index_handle = index_handle;
  paged->filter_handle = filter_handle;
  paged->values = values;
  if (filter != nullptr) {
    paged->filter = keep_filter || !filter->resident()
                        ? filter
                        : SegmentFilter::PagedCopy(*filter);
  }
  return paged;
}

namespace {
// SegmentMeta::ApproximateOffsetOf in index block `index`.
uint64_t OffsetInIndex(const Block& index, const Slice& ikey,
                       uint64_t data_size) {
  BlockKeyBuffer key_buf;
  Slice key, index_value;
  bool found = false;
  const Status s = index.Find(ikey, &key_buf, &key, &index_value, &found);
  BlockHandle handle;
  Slice in = index_value;
  if (!s.ok() || !found || !handle.DecodeFrom(&in)) return data_size;
  return handle.offset;
}
}  // namespace

uint64_t SegmentMeta::ApproximateOffsetOf(const Slice& ikey) const {
  return OffsetInIndex(*index_block, ikey, props.data_end());
}
uint64_t SegmentReader::ApproximateOffsetOf(const Slice& ikey) const {
  std::shared_ptr<const Block> index;
  if (!rep_->Index(nullptr, &index).ok()) return rep_->props->data_end();
  return OffsetInIndex(*index, ikey, rep_->props->data_end());
}
double SegmentReader::TheoreticalFpRate() const {
  return rep_->filter != nullptr ? rep_->filter->TheoreticalFpRate() : 1.0;
}

}  // namespace bloomkv
