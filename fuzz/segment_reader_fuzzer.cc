// Fuzz target for the segment reader (table/segment_reader.cc, format.cc,
// properties.cc, block.cc) and, through round trips, the segment builder.
//
// Each input is used twice:
//  1. As a whole segment file, opened from memory, scanned both ways, sought
//     and probed with Get. Checksums make almost every mutation fail at the
//     first block read, so the file is also tried with every checksum the
//     footer and index lead to recomputed ("repaired"), which lets mutations
//     reach the decoders behind them. Such a file may hold any bytes, sorted
//     or not, so only safety is checked: no crash, no sanitizer report, and
//     every error is Corruption or NotSupported naming the file.
//  2. As a recipe: entries and builder options decoded from the bytes are
//     written with SegmentBuilder and read back. For that genuine segment
//     the scan must return exactly the entries written, in order, both ways
//     and as the properties say; Get must find every stored version at its
//     own sequence number (so the filter never rules out a stored key) and
//     no absent key; Seek must agree with a binary search.
// Thread-safety: single-threaded.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "bloomkv/filter_policy.h"
#include "fuzz/fuzz_util.h"
#include "table/block.h"
#include "table/format.h"
#include "table/internal_key.h"
#include "table/properties.h"
#include "table/segment_builder.h"
#include "table/segment_reader.h"
#include "tests/testutil/mem_files.h"
#include "util/cache.h"
#include "util/coding.h"
#include "util/hash.h"

namespace bloomkv::fuzz {
namespace {

// The footer ends with checksum (fixed32) then magic (fixed64); see
// table/format.h. The checksum covers every footer byte before it.
constexpr size_t kFooterChecksumOffset = kFooterSize - 8 - 4;
// Bounds the work of one input on a damaged index.
constexpr int kMaxBlocksToRepair = 4096;
constexpr size_t kCacheCapacity = 1 << 20;

using Entry = std::pair<std::string, std::string>;

bool Less(const std::string& a, const std::string& b) {
  return CompareInternalKeys(Slice(a), Slice(b)) < 0;
}

// Recomputes the trailer checksum of the block at h if it lies before
// limit; returns whether it did.
bool RepairBlock(std::string* file, const BlockHandle& h, uint64_t limit) {
  if (h.offset > limit || h.size > limit - h.offset ||
      kBlockTrailerSize > limit - h.offset - h.size) {
    return false;
  }
  char* p = file->data() + h.offset;
  const size_t n = static_cast<size_t>(h.size);
  EncodeFixed32(p + n + 1, BlockChecksum(p, n + 1));
  return true;
}

// Makes every checksum reachable from the footer valid. Returns false if
// the file has no footer to start from.
bool RepairChecksums(std::string* file) {
  if (file->size() < kFooterSize) return false;
  const uint64_t footer_offset = file->size() - kFooterSize;
  char* footer = file->data() + footer_offset;
  EncodeFixed32(footer + kFooterChecksumOffset,
                BlockChecksum(footer, kFooterChecksumOffset));
  Footer f;
  if (!f.DecodeFrom(Slice(footer, kFooterSize), kFuzzFileName, footer_offset)
           .ok()) {
    return false;
  }
  RepairBlock(file, f.filter_handle, footer_offset);
  if (RepairBlock(file, f.properties_handle, footer_offset)) {
    // The value dictionary of a segment of compressed values (version 3).
    SegmentProperties props;
    if (props.DecodeFrom(Slice(file->data() + f.properties_handle.offset,
                               f.properties_handle.size))
            .ok() &&
        props.has_value_dictionary) {
      RepairBlock(file,
                  BlockHandle{props.value_dictionary_offset,
                              props.value_dictionary_size},
                  footer_offset);
    }
  }
  if (!RepairBlock(file, f.index_handle, footer_offset)) return true;
  // The index is stored raw: its payload is the block itself.
  std::shared_ptr<const Block> index;
  if (!Block::Parse(file->substr(f.index_handle.offset, f.index_handle.size),
                    kFuzzFileName, f.index_handle.offset, &index)
           .ok()) {
    return true;
  }
  BlockIter it(index.get());
  int n = 0;
  for (it.SeekToFirst(); it.Valid() && n < kMaxBlocksToRepair; it.Next()) {
    BlockHandle h;
    Slice v = it.value();
    if (h.DecodeFrom(&v)) RepairBlock(file, h, footer_offset);
    n++;
  }
  return true;
}

void CheckStatus(const Status& s) {
  if (!s.ok()) CheckDecoderError(s);
}

// The newest entry of user_key with sequence <= snapshot, in a sorted scan.
const Entry* Newest(const std::vector<Entry>& entries, const Slice& user_key,
                    SequenceNumber snapshot) {
  const std::string target =
      MakeInternalKey(user_key, snapshot, kValueTypeForSeek);
  const auto it = std::lower_bound(
      entries.begin(), entries.end(), target,
      [](const Entry& e, const std::string& k) { return Less(e.first, k); });
  if (it == entries.end() || ExtractUserKey(Slice(it->first)) != user_key) {
    return nullptr;
  }
  return &*it;
}

// Opens contents as a segment and exercises every reader operation. With
// written == nullptr the file is arbitrary bytes and only safety is
// checked; otherwise it is SegmentBuilder's output for exactly *written.
void CheckSegment(const std::string& contents,
                  std::shared_ptr<const FilterPolicy> policy,
                  const std::vector<Entry>* written) {
  Cache cache(kCacheCapacity);
  SegmentReaderOptions options;
  options.filter_policy = std::move(policy);
  options.block_cache = written != nullptr ? &cache : nullptr;
  std::unique_ptr<SegmentReader> reader;
  Status s = SegmentReader::Open(options, kFuzzFileName,
                                 std::make_unique<test::StringSource>(contents),
                                 contents.size(), &reader);
  if (written == nullptr && !s.ok()) {
    CheckDecoderError(s);
    return;
  }
  FUZZ_CHECK(s.ok(), "built segment fails to open: " + s.ToString());
  reader->TheoreticalFpRate();

  SegmentReadOptions ro;
  std::unique_ptr<Iterator> it = reader->NewIterator(ro, nullptr);
  std::vector<Entry> forward;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    forward.emplace_back(it->key().ToString(), it->value().ToString());
  }
  CheckStatus(it->status());
  const Status forward_status = it->status();
  std::vector<Entry> backward;
  for (it->SeekToLast(); it->Valid() && backward.size() <= forward.size();
       it->Prev()) {
    backward.emplace_back(it->key().ToString(), it->value().ToString());
  }
  CheckStatus(it->status());
  std::reverse(backward.begin(), backward.end());

  // Probe keys: every user key seen, and neighbours that are not stored.
  std::vector<std::string> probes;
  for (const auto& [key, value] : forward) {
    if (key.size() < kInternalKeyTrailerSize) continue;
    probes.push_back(ExtractUserKey(Slice(key)).ToString());
    probes.push_back(probes.back() + '\0');
  }
  probes.push_back("");
  probes.push_back("\xff\xff");

  if (written == nullptr) {
    for (const std::string& user_key : probes) {
      LookupResult result;
      std::string value;
      CheckStatus(reader->Get(ro, user_key, KeyHash(user_key),
                              kMaxSequenceNumber, &result, &value, nullptr));
      it->Seek(
          MakeInternalKey(user_key, kMaxSequenceNumber, kValueTypeForSeek));
      CheckStatus(it->status());
      if (it->Valid()) it->Prev();
      CheckStatus(it->status());
    }
    return;
  }

  FUZZ_CHECK(forward_status.ok(), forward_status.ToString());
  FUZZ_CHECK(it->status().ok(), it->status().ToString());
  FUZZ_CHECK(forward == *written, "scan differs from the entries written");
  FUZZ_CHECK(backward == forward, "backward scan differs from forward scan");
  const SegmentProperties& props = reader->properties();
  FUZZ_CHECK(props.num_entries == forward.size(),
             "properties count another number of entries");
  if (!forward.empty()) {
    FUZZ_CHECK(props.smallest_key == forward.front().first &&
                   props.largest_key == forward.back().first,
               "properties' key range differs from the scan's");
  }
  for (const auto& [key, value] : forward) {
    ParsedInternalKey parsed;
    FUZZ_CHECK(ParseInternalKey(key, &parsed), "bad internal key");
    const uint64_t hash = KeyHash(parsed.user_key);
    FUZZ_CHECK(reader->KeyMayMatch(hash), "filter rules out a stored key");
    const Entry* expected = Newest(forward, parsed.user_key, parsed.sequence);
    FUZZ_CHECK(expected != nullptr, "model lost a key");
    LookupResult result;
    std::string got;
    s = reader->Get(ro, parsed.user_key, hash, parsed.sequence, &result, &got,
                    nullptr);
    FUZZ_CHECK(s.ok(), s.ToString());
    ParsedInternalKey want;
    ParseInternalKey(expected->first, &want);
    if (want.type == ValueType::kValue) {
      FUZZ_CHECK(result == LookupResult::kFound && got == expected->second,
                 "Get misses a stored value");
    } else {
      FUZZ_CHECK(result == LookupResult::kDeleted, "Get misses a tombstone");
    }
  }
  for (const std::string& user_key : probes) {
    const std::string target =
        MakeInternalKey(user_key, kMaxSequenceNumber, kValueTypeForSeek);
    const auto lb = std::lower_bound(
        forward.begin(), forward.end(), target,
        [](const Entry& e, const std::string& k) { return Less(e.first, k); });
    it->Seek(target);
    FUZZ_CHECK(it->status().ok(), it->status().ToString());
    FUZZ_CHECK(lb == forward.end()
                   ? !it->Valid()
                   : it->Valid() && it->key() == Slice(lb->first),
               "Seek disagrees with binary search");
    LookupResult result;
    std::string got;
    s = reader->Get(ro, user_key, KeyHash(user_key), kMaxSequenceNumber,
                    &result, &got, nullptr);
    FUZZ_CHECK(s.ok(), s.ToString());
    const Entry* expected = Newest(forward, user_key, kMaxSequenceNumber);
    if (expected == nullptr) {
      FUZZ_CHECK(result == LookupResult::kNotFound ||
                     result == LookupResult::kFilterNegative,
                 "Get finds an absent key");
    } else {
      FUZZ_CHECK(
          result == LookupResult::kFound || result == LookupResult::kDeleted,
          "Get misses a stored key");
    }
  }
}

// Reads builder options and entries from the input: one options byte, then
// records of (key length, key, value length, value, version byte). The
// entries are sorted and deduplicated by internal key, as SegmentBuilder
// requires. Returns false if the input is too short to hold the options.
bool DecodeRecipe(const std::string& in, SegmentBuilderOptions* options,
                  std::vector<Entry>* entries) {
  if (in.empty()) return false;
  const uint8_t opts = static_cast<uint8_t>(in[0]);
  options->block_size = 64 + 64 * (opts & 0x7);
  options->block_restart_interval = 1 + ((opts >> 3) & 0x7);
  // LZ4 blocks, or (with bit 0 set too) values compressed one by one.
  options->compression = (opts & 0x40) == 0   ? CompressionType::kNone
                         : (opts & 0x1) != 0 ? CompressionType::kLZ4Values
                                             : CompressionType::kLZ4;
  if ((opts & 0x80) == 0) options->filter_policy = NewBloomFilterPolicy(10.0);
  std::vector<Entry> v;
  size_t pos = 1;
  auto take = [&](size_t n) {
    n = std::min(n, in.size() - pos);
    std::string s = in.substr(pos, n);
    pos += n;
    return s;
  };
  while (pos < in.size()) {
    const size_t key_len = static_cast<uint8_t>(in[pos++]) % 16;
    std::string user_key = take(key_len);
    const size_t value_len =
        pos < in.size() ? static_cast<uint8_t>(in[pos++]) : 0;
    std::string value = take(value_len);
    const uint8_t version =
        pos < in.size() ? static_cast<uint8_t>(in[pos++]) : 0;
    const ValueType type =
        (version & 1) != 0 ? ValueType::kDeletion : ValueType::kValue;
    v.emplace_back(MakeInternalKey(user_key, version >> 1, type),
                   type == ValueType::kValue ? std::move(value) : "");
  }
  std::stable_sort(v.begin(), v.end(), [](const Entry& a, const Entry& b) {
    return Less(a.first, b.first);
  });
  v.erase(std::unique(v.begin(), v.end(),
                      [](const Entry& a, const Entry& b) {
                        return a.first == b.first;
                      }),
          v.end());
  *entries = std::move(v);
  return true;
}

void CheckRoundTrip(const std::string& in) {
  SegmentBuilderOptions options;
  std::vector<Entry> entries;
  if (!DecodeRecipe(in, &options, &entries)) return;
  test::StringSink sink;
  SegmentBuilder builder(options, &sink);
  for (const auto& [key, value] : entries) {
    Status s = builder.Add(key, value);
    FUZZ_CHECK(s.ok(), "builder rejects sorted entries: " + s.ToString());
  }
  Status s = builder.Finish();
  FUZZ_CHECK(s.ok(), s.ToString());
  FUZZ_CHECK(builder.FileSize() == sink.contents().size(),
             "builder miscounts its file size");
  CheckSegment(sink.contents(), options.filter_policy, &entries);
}

}  // namespace
}  // namespace bloomkv::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace bloomkv;
  using namespace bloomkv::fuzz;
  const std::string contents(reinterpret_cast<const char*>(data), size);
  const auto policy = NewBloomFilterPolicy(10.0);
  CheckSegment(contents, policy, nullptr);
  std::string repaired = contents;
  if (RepairChecksums(&repaired) && repaired != contents) {
    CheckSegment(repaired, policy, nullptr);
  }
  CheckRoundTrip(contents);
  return 0;
}
