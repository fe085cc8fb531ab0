// SegmentBuilder; see segment_builder.h and docs/segment_format.md.
//
// Index separators: each index entry's key is the shortest internal key we
// can cheaply find that is >= the last key of its block and < the first key
// of the next block (on the user-key part, with the newest possible
// sequence number); when no shorter user key fits, it is the block's last
// key itself. The last block's separator is a short successor of its last
// user key. A lookup key that sorts after a block's last key but not after
// its separator therefore has no entry in the segment.
#include "table/segment_builder.h"

#include <algorithm>
#include <vector>

#include "bloomkv/env.h"
#include "bloomkv/filter_policy.h"
#include "table/block_builder.h"
#include "table/format.h"
#include "table/internal_key.h"
#include "table/value_codec.h"
#include "util/hash.h"

namespace bloomkv {

namespace {

// Keys and values are limited so that a block (block_size plus one entry)
// always fits the 32-bit offsets of the block format.
constexpr size_t kMaxKeyOrValueSize = size_t{1} << 30;
constexpr size_t kMaxBlockSize = size_t{1} << 30;
// A segment of compressed values holds its first entries until they give
// its dictionary kValueDictionaryBytes of values, or until they take this
// much memory, whichever comes first.
constexpr size_t kMaxHeldBytes = 256 << 10;

std::string WithSeekTrailer(std::string user_key) {
  PutFixed64(&user_key,
             PackSequenceAndType(kMaxSequenceNumber, kValueTypeForSeek));
  return user_key;
}

// A short internal key k with start <= k < limit. REQUIRES: start < limit.
std::string FindShortSeparator(const Slice& start, const Slice& limit) {
  const Slice us = ExtractUserKey(start);
  const Slice ul = ExtractUserKey(limit);
  const size_t min_len = std::min(us.size(), ul.size());
  size_t diff = 0;
  while (diff < min_len && us[diff] == ul[diff]) diff++;
  if (diff < min_len) {
    const auto b = static_cast<uint8_t>(us[diff]);
    if (b < 0xff && b + 1 < static_cast<uint8_t>(ul[diff]) &&
        diff + 1 < us.size()) {
      std::string s(us.data(), diff + 1);
      s[diff] = static_cast<char>(b + 1);
      return WithSeekTrailer(std::move(s));
    }
  }
  return start.ToString();
}

// A short internal key k >= key (nothing else need be above it).
std::string FindShortSuccessor(const Slice& key) {
  const Slice uk = ExtractUserKey(key);
  for (size_t i = 0; i + 1 < uk.size(); i++) {
    const auto b = static_cast<uint8_t>(uk[i]);
    if (b != 0xff) {
      std::string s(uk.data(), i + 1);
      s[i] = static_cast<char>(b + 1);
      return WithSeekTrailer(std::move(s));
    }
  }
  return key.ToString();
}

bool KeyPrefixes(const SegmentBuilderOptions& o, uint32_t version) {
  return version != kSegmentFormatVersion1 &&
         (o.compression == CompressionType::kNone ||
          o.compression == CompressionType::kLZ4Values);
}

uint32_t VersionToWrite(const SegmentBuilderOptions& o) {
  if (o.format_version == kSegmentFormatVersion1) return kSegmentFormatVersion1;
  return o.compression == CompressionType::kLZ4Values ? kSegmentFormatVersion3
                                                      : kSegmentFormatVersion2;
}

int RestartInterval(const SegmentBuilderOptions& o, bool key_prefixes) {
  if (o.block_restart_interval > 0) return o.block_restart_interval;
  return key_prefixes ? 4 : 16;
}

}  // namespace

struct SegmentBuilder::Rep {
  Rep(const SegmentBuilderOptions& o, WritableFile* f)
      : options(o),
        file(f),
        version(VersionToWrite(o)),
        key_prefixes(KeyPrefixes(o, version)),
        data_block(RestartInterval(o, key_prefixes), key_prefixes),
        index_block(1) {
    options.block_size =
        std::clamp<size_t>(options.block_size, 1, kMaxBlockSize);
    values_held = version == kSegmentFormatVersion3 &&
                  options.value_dictionary == nullptr;
    if (options.values_encoded && (version != kSegmentFormatVersion3 ||
                                   options.value_dictionary == nullptr)) {
      status = Status::InvalidArgument(
          "encoded values need kLZ4Values and a value dictionary");
    }
  }

  Status WriteBlock(const Slice& payload, CompressionType type,
                    BlockHandle* handle) {
    std::string trailer;
    AppendBlockTrailer(payload, type, &trailer);
    handle->offset = offset;
    handle->size = payload.size();
    Status s = file->Append(payload);
    if (s.ok()) s = file->Append(trailer);
    if (s.ok()) offset += payload.size() + trailer.size();
    return s;
  }

  Status FlushDataBlock() {
    if (data_block.empty()) return Status::OK();
    const Slice raw = data_block.Finish();
    Status s;
    if (version == kSegmentFormatVersion3) {
      s = WriteBlock(raw, CompressionType::kLZ4Values, &pending_handle);
    } else {
      compressed.clear();
      const CompressionType used =
          CompressBlock(raw, options.compression, &compressed);
      s = WriteBlock(compressed, used, &pending_handle);
    }
    if (!s.ok()) return s;
    data_block.Reset();
    pending_index_entry = true;
    props.num_data_blocks++;
    props.data_size += pending_handle.size + kBlockTrailerSize;
    return Status::OK();
  }

  // Puts an entry into the current data block; previous_key is the entry
  // before it (the last key of a data block written and waiting for its
  // index entry).
  Status Place(const Slice& previous_key, const Slice& internal_key,
               const Slice& value) {
    if (pending_index_entry) {
      AddIndexEntry(FindShortSeparator(previous_key, internal_key));
    }
    if (values != nullptr) {
      stored_value.clear();
      values->Encode(value, &stored_value);
      data_block.Add(internal_key, stored_value);
    } else {
      data_block.Add(internal_key, value);
    }
    if (data_block.CurrentSizeEstimate() >= options.block_size) {
      return FlushDataBlock();
    }
    return Status::OK();
  }

  // With compressed values: writes the dictionary block, the first block
  // of the file, so that a segment whose footer is lost can still be read
  // from the front (db/repair.cc).
  Status WriteDictionary(const Slice& dictionary) {
    std::string block;
    EncodeValueDictionaryBlock(dictionary, &block);
    Status s = WriteBlock(block, CompressionType::kNone, &dictionary_handle);
    dictionary_written = s.ok();
    return s;
  }

  // With a dictionary given in the options: writes it before the first
  // entry and, unless the values come encoded, compresses them against it.
  Status StartGivenDictionary() {
    if (!options.values_encoded) {
      values = std::make_unique<ValueCompressor>(
          options.value_dictionary->bytes());
    }
    return WriteDictionary(options.value_dictionary->bytes());
  }

  // With compressed values: makes the dictionary of the values held so far
  // and places the entries held.
  Status PlaceHeld() {
    std::string dictionary;
    for (const auto& [key, value] : held) {
      if (dictionary.size() >= kValueDictionaryBytes) break;
      dictionary.append(value);
    }
    values = std::make_unique<ValueCompressor>(dictionary);
    values_held = false;
    Status s = WriteDictionary(values->dictionary());
    for (size_t i = 0; i < held.size() && s.ok(); i++) {
      s = Place(i > 0 ? Slice(held[i - 1].first) : Slice(), held[i].first,
                held[i].second);
    }
    held = {};
    return s;
  }

  void AddIndexEntry(const std::string& separator) {
    std::string handle;
    pending_handle.EncodeTo(&handle);
    index_block.Add(separator, handle);
    pending_index_entry = false;
  }

  SegmentBuilderOptions options;
  WritableFile* const file;
  uint64_t offset = 0;
  Status status;
  bool done = false;        // Finish() or Abandon() called
  const uint32_t version;   // the segment format version written
  const bool key_prefixes;  // data blocks carry restart prefixes
  BlockBuilder data_block;
  BlockBuilder index_block;
  std::string last_key;
  // After a data block is written its index entry waits for the next key,
  // so that the separator can be shortened against it.
  bool pending_index_entry = false;
  BlockHandle pending_handle;
  std::vector<uint64_t> hashes;
  std::string compressed;
  SegmentProperties props;
  // A version 3 segment holds its first entries here until their values
  // make the dictionary that compresses every value of the segment.
  bool values_held = false;
  std::vector<std::pair<std::string, std::string>> held;
  size_t held_value_bytes = 0;
  size_t held_bytes = 0;  // keys and values
  // Set once the dictionary is, unless the values come encoded.
  std::unique_ptr<ValueCompressor> values;
  bool dictionary_written = false;
  BlockHandle dictionary_handle;
  std::string stored_value;
};

SegmentBuilder::SegmentBuilder(const SegmentBuilderOptions& options,
                               WritableFile* file)
    : rep_(std::make_unique<Rep>(options, file)) {}

SegmentBuilder::~SegmentBuilder() = default;

Status SegmentBuilder::Add(const Slice& internal_key, const Slice& value) {
  Rep* r = rep_.get();
  if (!r->status.ok()) return r->status;
  if (r->done) {
    return Status::InvalidArgument("SegmentBuilder::Add after Finish/Abandon");
  }
  ParsedInternalKey parsed;
  if (!ParseInternalKey(internal_key, &parsed)) {
    r->status = Status::InvalidArgument("malformed internal key: " +
                                        internal_key.ToEscapedString());
    return r->status;
  }
  if (internal_key.size() > kMaxKeyOrValueSize ||
      value.size() > kMaxKeyOrValueSize) {
    r->status = Status::InvalidArgument("key or value larger than 1 GiB");
    return r->status;
  }
  const bool first = r->props.num_entries == 0;
  if (!first && CompareInternalKeys(internal_key, r->last_key) <= 0) {
    r->status =
        Status::InvalidArgument("key " + internal_key.ToEscapedString() +
                                " is not greater than the previous key " +
                                Slice(r->last_key).ToEscapedString());
    return r->status;
  }
  if (r->options.filter_policy != nullptr &&
      (first || ExtractUserKey(Slice(r->last_key)) != parsed.user_key)) {
    r->hashes.push_back(KeyHash(parsed.user_key));
  }
  if (first) r->props.smallest_key = internal_key.ToString();
  r->props.num_entries++;
  if (parsed.type == ValueType::kDeletion) r->props.num_deletions++;
  r->props.raw_key_bytes += internal_key.size();
  if (r->options.values_encoded) {
    uint32_t raw_size;
    if (!StoredValueSize(value, &raw_size)) {
      r->status = Status::InvalidArgument("malformed stored value for key " +
                                          internal_key.ToEscapedString());
      return r->status;
    }
    r->props.raw_value_bytes += raw_size;
  } else {
    r->props.raw_value_bytes += value.size();
  }
  if (first && r->options.value_dictionary != nullptr &&
      r->version == kSegmentFormatVersion3) {
    r->status = r->StartGivenDictionary();
    if (!r->status.ok()) return r->status;
  }
  if (r->values_held) {
    r->held.emplace_back(internal_key.ToString(), value.ToString());
    r->held_value_bytes += value.size();
    r->held_bytes += internal_key.size() + value.size();
    // Values enough for the dictionary, or (short or empty values: a
    // key-only store) as many entries as the builder may keep waiting.
    if (r->held_value_bytes >= kValueDictionaryBytes ||
        r->held_bytes >= kMaxHeldBytes) {
      r->status = r->PlaceHeld();
    }
  } else {
    r->status = r->Place(r->last_key, internal_key, value);
  }
  r->last_key.assign(internal_key.data(), internal_key.size());
  return r->status;
}

Status SegmentBuilder::Finish() {
  Rep* r = rep_.get();
  if (!r->status.ok()) return r->status;
  if (r->done) {
    return Status::InvalidArgument("SegmentBuilder::Finish called twice");
  }
  r->done = true;
  if (r->values_held) {
    r->status = r->PlaceHeld();
  } else if (r->version == kSegmentFormatVersion3 && !r->dictionary_written) {
    r->status = r->StartGivenDictionary();  // a segment of no entries
  }
  if (r->status.ok()) r->status = r->FlushDataBlock();
  if (!r->status.ok()) return r->status;
  SegmentProperties& props = r->props;

  if (r->dictionary_written) {
    props.has_value_dictionary = true;
    props.value_dictionary_offset = r->dictionary_handle.offset;
    props.value_dictionary_size = r->dictionary_handle.size;
  }

  Footer footer;
  if (r->options.filter_policy != nullptr) {
    const FilterPolicy& policy = *r->options.filter_policy;
    std::string filter;
    policy.CreateFilter(r->hashes.data(), r->hashes.size(), &filter);
    r->status =
        r->WriteBlock(filter, CompressionType::kNone, &footer.filter_handle);
    if (!r->status.ok()) return r->status;
    props.filter_size = filter.size() + kBlockTrailerSize;
    props.filter_policy = policy.Name();
    props.bits_per_key = policy.BitsPerKey();
    props.num_filter_keys = r->hashes.size();
  }
  r->hashes = std::vector<uint64_t>();

  if (r->pending_index_entry) r->AddIndexEntry(FindShortSuccessor(r->last_key));
  // The index is built before the properties are written because they
  // record its size.
  const Slice index = r->index_block.Finish();
  props.index_size = index.size() + kBlockTrailerSize;
  props.format_version = r->version;
  footer.format_version = r->version;
  if (props.num_entries > 0) props.largest_key = r->last_key;

  std::string encoded_props;
  props.EncodeTo(&encoded_props);
  r->status = r->WriteBlock(encoded_props, CompressionType::kNone,
                            &footer.properties_handle);
  if (r->status.ok()) {
    r->status =
        r->WriteBlock(index, CompressionType::kNone, &footer.index_handle);
  }
  if (!r->status.ok()) return r->status;

  std::string footer_bytes;
  footer.EncodeTo(&footer_bytes);
  r->status = r->file->Append(footer_bytes);
  if (r->status.ok()) r->offset += footer_bytes.size();
  return r->status;
}

void SegmentBuilder::Abandon() { rep_->done = true; }

Status SegmentBuilder::status() const { return rep_->status; }
uint64_t SegmentBuilder::NumEntries() const { return rep_->props.num_entries; }
uint64_t SegmentBuilder::FileSize() const { return rep_->offset; }
const SegmentProperties& SegmentBuilder::properties() const {
  return rep_->props;
}

}  // namespace bloomkv
