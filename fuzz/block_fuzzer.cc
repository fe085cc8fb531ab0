// Fuzz target for the block decoder (table/block.cc): Block::Parse, then
// every BlockIter movement, checked against a reference decoder written
// here from the format in table/block_builder.h.
//
// Invariants, for any input:
//  * no crash, no sanitizer report, every error is Corruption naming the
//    file;
//  * a forward scan yields exactly the entries the reference decodes from
//    offset 0, and ends OK exactly when the reference reaches the restart
//    array cleanly;
//  * after Seek(t), a valid iterator is at a key >= t.
//  * the point lookup (Block::Find) finds nothing or an entry >= its
//    target.
// And when the reference finds the block well formed (entries sorted,
// restart points at entries with unshared keys): a backward scan is the
// forward scan reversed, Seek/SeekForPrev and Find agree with a binary
// search over the reference's entries, and Next/Prev are inverses.
// Thread-safety: single-threaded.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "fuzz/fuzz_util.h"
#include "table/block.h"
#include "table/internal_key.h"
#include "util/coding.h"

namespace bloomkv::fuzz {
namespace {

using Entry = std::pair<std::string, std::string>;  // internal key, value

struct Reference {
  std::vector<Entry> entries;  // decoded from offset 0 until damage
  bool entries_ok = false;     // decoding ended exactly at the restart array
  bool well_formed = false;    // entries_ok, sorted, sane restart array
};

bool Less(const std::string& a, const std::string& b) {
  return CompareInternalKeys(Slice(a), Slice(b)) < 0;
}

// REQUIRES: contents passed Block::Parse (restart count in bounds).
Reference Decode(const std::string& contents) {
  Reference ref;
  const size_t size = contents.size();
  const uint32_t num_restarts = DecodeFixed32(contents.data() + size - 4);
  const size_t restarts = size - 4 - size_t{num_restarts} * 4;
  const char* data = contents.data();
  std::vector<uint32_t> offsets;  // entry start offsets
  std::vector<bool> unshared;     // entry stores its whole key
  std::string key;
  size_t pos = 0;
  while (pos < restarts) {
    uint32_t shared, non_shared, value_len;
    const char* p = GetVarint32Ptr(data + pos, data + restarts, &shared);
    if (p != nullptr) p = GetVarint32Ptr(p, data + restarts, &non_shared);
    if (p != nullptr) p = GetVarint32Ptr(p, data + restarts, &value_len);
    if (p == nullptr || shared > key.size()) return ref;
    const uint64_t avail = static_cast<uint64_t>(data + restarts - p);
    if (uint64_t{non_shared} + value_len > avail) return ref;
    if (uint64_t{shared} + non_shared < kInternalKeyTrailerSize) return ref;
    key.resize(shared);
    key.append(p, non_shared);
    offsets.push_back(static_cast<uint32_t>(pos));
    unshared.push_back(shared == 0);
    ref.entries.emplace_back(key, std::string(p + non_shared, value_len));
    pos = static_cast<size_t>(p + non_shared + value_len - data);
  }
  ref.entries_ok = true;
  for (size_t i = 1; i < ref.entries.size(); i++) {
    if (!Less(ref.entries[i - 1].first, ref.entries[i].first)) return ref;
  }
  uint32_t prev = 0;
  for (uint32_t i = 0; i < num_restarts; i++) {
    const uint32_t r = DecodeFixed32(data + restarts + 4 * size_t{i});
    if (ref.entries.empty()) {
      // An empty block has one restart point, at 0.
      if (num_restarts != 1 || r != 0) return ref;
      continue;
    }
    if (i > 0 && r <= prev) return ref;
    const auto it = std::lower_bound(offsets.begin(), offsets.end(), r);
    if (it == offsets.end() || *it != r || !unshared[it - offsets.begin()]) {
      return ref;
    }
    prev = r;
  }
  ref.well_formed = true;
  return ref;
}

// Block::Find of target: whatever it finds is >= target, and an error is
// a decoder error. Sets *ok to whether it answered.
bool Find(const Block& block, const std::string& target, Entry* found,
          bool* ok) {
  BlockKeyBuffer key_buf;
  Slice key, value;
  bool hit = false;
  const Status s = block.Find(target, &key_buf, &key, &value, &hit);
  *ok = s.ok();
  if (!s.ok()) {
    CheckDecoderError(s);
    return false;
  }
  if (!hit) return false;
  FUZZ_CHECK(CompareInternalKeys(key, Slice(target)) >= 0,
             "Find found an entry before its target");
  *found = Entry(key.ToString(), value.ToString());
  return true;
}

std::vector<Entry> ScanForward(Iterator* it) {
  std::vector<Entry> out;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    FUZZ_CHECK(it->key().size() >= kInternalKeyTrailerSize, "short key");
    out.emplace_back(it->key().ToString(), it->value().ToString());
  }
  return out;
}

std::vector<Entry> ScanBackward(Iterator* it, size_t max_steps) {
  std::vector<Entry> out;
  for (it->SeekToLast(); it->Valid() && out.size() <= max_steps; it->Prev()) {
    out.emplace_back(it->key().ToString(), it->value().ToString());
  }
  return out;
}

void CheckStatus(const Iterator& it) {
  if (!it.status().ok()) CheckDecoderError(it.status());
}

// Seek targets: every key, and each key with its sequence moved by one
// either way (which lands between versions), plus short-key probes.
std::vector<std::string> Targets(const std::vector<Entry>& entries) {
  std::vector<std::string> targets;
  for (const auto& [key, value] : entries) {
    targets.push_back(key);
    std::string up = key;
    const uint64_t tag = DecodeFixed64(key.data() + key.size() - 8);
    EncodeFixed64(&up[up.size() - 8], tag + 0x100);
    targets.push_back(up);
    std::string down = key;
    EncodeFixed64(&down[down.size() - 8], tag - 0x100);
    targets.push_back(down);
  }
  targets.push_back(std::string(8, '\0'));
  targets.push_back(std::string(16, '\xff'));
  return targets;
}

void CheckWellFormed(const std::shared_ptr<const Block>& block,
                     const Reference& ref) {
  const std::vector<Entry>& entries = ref.entries;
  BlockIter it(block.get());
  std::vector<Entry> backward = ScanBackward(&it, entries.size());
  FUZZ_CHECK(it.status().ok(), it.status().ToString());
  std::reverse(backward.begin(), backward.end());
  FUZZ_CHECK(backward == entries, "backward scan differs from forward scan");

  for (const std::string& t : Targets(entries)) {
    const auto lb = std::lower_bound(
        entries.begin(), entries.end(), t,
        [](const Entry& e, const std::string& k) { return Less(e.first, k); });
    it.Seek(t);
    FUZZ_CHECK(it.status().ok(), it.status().ToString());
    if (lb == entries.end()) {
      FUZZ_CHECK(!it.Valid(), "Seek past the last key is valid");
    } else {
      FUZZ_CHECK(it.Valid() && it.key() == Slice(lb->first),
                 "Seek disagrees with binary search");
      if (lb + 1 != entries.end()) {
        // Next then Prev comes back.
        it.Next();
        FUZZ_CHECK(it.Valid() && it.key() == Slice((lb + 1)->first),
                   "Next skips an entry");
        it.Prev();
        FUZZ_CHECK(it.Valid() && it.key() == Slice(lb->first),
                   "Next then Prev does not come back");
      }
    }
    Entry found;
    bool ok;
    const bool hit = Find(*block, t, &found, &ok);
    FUZZ_CHECK(ok, "Find in a well-formed block failed");
    FUZZ_CHECK(lb == entries.end() ? !hit : hit && found == *lb,
               "Find disagrees with binary search");
    it.SeekForPrev(t);
    FUZZ_CHECK(it.status().ok(), it.status().ToString());
    const auto ub = std::upper_bound(
        entries.begin(), entries.end(), t,
        [](const std::string& k, const Entry& e) { return Less(k, e.first); });
    if (ub == entries.begin()) {
      FUZZ_CHECK(!it.Valid(), "SeekForPrev before the first key is valid");
    } else {
      FUZZ_CHECK(it.Valid() && it.key() == Slice((ub - 1)->first),
                 "SeekForPrev disagrees with binary search");
    }
  }
}

}  // namespace
}  // namespace bloomkv::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace bloomkv;
  using namespace bloomkv::fuzz;
  std::string contents(reinterpret_cast<const char*>(data), size);
  std::shared_ptr<const Block> block;
  Status s = Block::Parse(contents, kFuzzFileName, 0, &block);
  if (!s.ok()) {
    CheckDecoderError(s);
    return 0;
  }
  const Reference ref = Decode(contents);

  BlockIter it(block.get());
  const std::vector<Entry> forward = ScanForward(&it);
  CheckStatus(it);
  if (ref.entries_ok) {
    FUZZ_CHECK(it.status().ok(),
               "sound entries reported corrupt: " + it.status().ToString());
    FUZZ_CHECK(forward == ref.entries, "forward scan differs from reference");
  } else {
    FUZZ_CHECK(!it.status().ok(), "damaged entries scanned without error");
    FUZZ_CHECK(
        forward.size() <= ref.entries.size() &&
            std::equal(forward.begin(), forward.end(), ref.entries.begin()),
        "forward scan is not a prefix of the reference's entries");
  }

  if (ref.well_formed) {
    CheckWellFormed(block, ref);
    return 0;
  }
  // Damaged or unsorted: movements must stay safe, and Seek must not land
  // before its target.
  ScanBackward(&it, size);
  CheckStatus(it);
  for (const std::string& t : Targets(ref.entries)) {
    it.Seek(t);
    CheckStatus(it);
    if (it.Valid()) {
      FUZZ_CHECK(CompareInternalKeys(it.key(), Slice(t)) >= 0,
                 "Seek landed before its target");
      it.Prev();
      CheckStatus(it);
    }
    it.SeekForPrev(t);
    CheckStatus(it);
    if (it.Valid()) {
      it.Next();
      CheckStatus(it);
    }
    Entry found;
    bool ok;
    Find(*block, t, &found, &ok);
  }
  it.Seek(Slice("short"));
  FUZZ_CHECK(it.status().IsInvalidArgument() && !it.Valid(),
             "a short Seek target is accepted");
  return 0;
}
