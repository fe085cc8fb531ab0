// Fuzz target for CuckooFilter: Deserialize on arbitrary bytes, and scripted
// adds, conditional adds, deletes and counts checked against a multiset of
// the keys added and not deleted.
//
// Input: byte 0 selects what the rest is.
//   odd:  arbitrary bytes, given to Deserialize. An accepted filter is then
//         added to and deleted from, and must still encode consistently.
//   even: a script. Byte 1: slots per bucket 1..8 (bits 0-2) and max kicks
//         1..32 (bits 3-7); byte 2: fingerprint bits 4..32; byte 3:
//         capacity 1..256; then pairs of (operation, key) bytes.
// Invariants: no crash, no sanitizer report; Deserialize either fails with
// Corruption and leaves its output alone or accepts an encoding that
// re-serializes to the same bytes; no false negative for a key added and
// not deleted; Count never below the model's; a Full Add changes nothing;
// items() is the model's size; every filter round-trips.
// Thread-safety: single-threaded.
#include <cstddef>
#include <set>
#include <string>

#include "bloomkv/cuckoo_filter.h"
#include "fuzz/fuzz_util.h"

namespace bloomkv::fuzz {
namespace {

std::string Encode(const CuckooFilter& f) {
  std::string s;
  f.Serialize(&s);
  return s;
}

void CheckRoundTrip(const CuckooFilter& f) {
  const std::string enc = Encode(f);
  CuckooFilter g;
  const Status s = CuckooFilter::Deserialize(enc, &g);
  FUZZ_CHECK(s.ok(), "own encoding rejected: " + s.ToString());
  FUZZ_CHECK(Encode(g) == enc, "round trip changes the encoding");
}

void CheckDecode(const Slice& input) {
  CuckooFilterOptions o;
  o.capacity = 3;
  CuckooFilter f;
  FUZZ_CHECK(CuckooFilter::Create(o, &f).ok(), "Create failed");
  FUZZ_CHECK(f.Add("sentinel").ok(), "Add to an empty filter failed");
  const std::string before = Encode(f);
  const Status s = CuckooFilter::Deserialize(input, &f);
  if (!s.ok()) {
    FUZZ_CHECK(s.IsCorruption(), "unexpected status: " + s.ToString());
    FUZZ_CHECK(Encode(f) == before, "failed Deserialize changed its output");
    return;
  }
  FUZZ_CHECK(Encode(f) == input.ToString(),
             "accepted input does not round-trip");
  for (uint64_t i = 0; i < 32; i++) {
    const uint64_t h = i * 0x9E3779B97F4A7C15ull;
    if (f.MightContainHash(h)) {
      FUZZ_CHECK(f.CountHash(h) > 0, "may contain, but no copy counted");
      FUZZ_CHECK(f.DeleteHash(h), "may contain, but nothing to delete");
    }
    const Status a = f.AddHash(h);
    FUZZ_CHECK(a.ok() || a.IsFull(), "unexpected status: " + a.ToString());
  }
  CheckRoundTrip(f);
}

void CheckScript(const uint8_t* data, size_t size) {
  if (size < 3) return;
  CuckooFilterOptions o;
  o.bucket_size = 1 + (data[0] & 7);
  o.max_kicks = 1 + (data[0] >> 3);
  o.fingerprint_bits = 4 + data[1] % 29;
  o.capacity = 1 + data[2];
  CuckooFilter f;
  Status s = CuckooFilter::Create(o, &f);
  FUZZ_CHECK(s.ok(), s.ToString());
  std::multiset<std::string> model;
  for (size_t off = 3; off + 2 <= size; off += 2) {
    const std::string k = "k" + std::to_string(data[off + 1]);
    switch (data[off] % 4) {
      case 0: {
        const std::string before = Encode(f);
        s = f.Add(k);
        if (s.ok()) {
          model.insert(k);
        } else {
          FUZZ_CHECK(s.IsFull(), "unexpected status: " + s.ToString());
          FUZZ_CHECK(Encode(f) == before, "a failed Add changed the filter");
        }
        break;
      }
      case 1: {
        bool added = false;
        const bool maybe = f.MightContain(k);
        s = f.AddIfAbsent(k, &added);
        FUZZ_CHECK(s.ok() || s.IsFull(), "unexpected status: " + s.ToString());
        FUZZ_CHECK(!added || !maybe, "added a key that may be present");
        if (added) model.insert(k);
        break;
      }
      case 2: {
        auto it = model.find(k);
        if (it != model.end()) {
          FUZZ_CHECK(f.Delete(k), "could not delete " + k);
          model.erase(it);
        }
        break;
      }
      default:
        FUZZ_CHECK(f.Count(k) >= model.count(k), "count below the model");
        break;
    }
    FUZZ_CHECK(f.items() == model.size(), "items differ from the model");
  }
  for (const std::string& k : model) {
    FUZZ_CHECK(f.MightContain(k), "false negative for " + k);
  }
  CheckRoundTrip(f);
}

}  // namespace
}  // namespace bloomkv::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  if ((data[0] & 1) != 0) {
    bloomkv::fuzz::CheckDecode(
        bloomkv::Slice(reinterpret_cast<const char*>(data + 1), size - 1));
  } else {
    bloomkv::fuzz::CheckScript(data + 1, size - 1);
  }
  return 0;
}
