// Fuzz target for the binary fuse filters (util/binary_fuse.h): their
// construction from arbitrary hash sets, the segment filter decoder
// (FilterPolicy::KeyMayMatch of "bloomkv.BinaryFuse8"/"16") and
// StaticFilter::Deserialize.
//
// Input: byte 0 selects what the rest is.
//   even: a hash set. Byte 1 picks the width (odd: 16 bits) and how many
//         times the set is repeated (bits 1..3: 1 to 8 copies, for
//         duplicates); then 8 bytes per hash. The filter is built by the
//         policy and by StaticFilter.
//   odd:  arbitrary bytes, given to both policies as a segment filter and to
//         StaticFilter::Deserialize.
// Invariants: no crash, no sanitizer report; a built filter has no false
// negative and its serialization round-trips; the decoder answers "may
// match" for any input it cannot parse (checked through
// TheoreticalFpRate, which is 1.0 exactly then); Deserialize either fails
// with Corruption or accepts an encoding that re-serializes to the same
// bytes.
// Thread-safety: single-threaded.
#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "bloomkv/filter_policy.h"
#include "bloomkv/static_filter.h"
#include "fuzz/fuzz_util.h"
#include "util/binary_fuse.h"
#include "util/coding.h"

namespace bloomkv::fuzz {
namespace {

// Hashes derived from the input, so probes reach every part of the array.
uint64_t ProbeHash(uint64_t i) {
  return binary_fuse::Remix(i, 0x5EED5EED5EED5EEDull);
}

void CheckBuild(const uint8_t* data, size_t size) {
  if (size < 2) return;
  const int bits = (data[1] & 1) != 0 ? 16 : 8;
  const int copies = 1 + ((data[1] >> 1) & 7);
  std::vector<uint64_t> hashes;
  for (size_t off = 2; off + 8 <= size; off += 8) {
    hashes.push_back(DecodeFixed64(reinterpret_cast<const char*>(data) + off));
  }
  const std::vector<uint64_t> given = hashes;
  for (int c = 1; c < copies; c++) {
    hashes.insert(hashes.end(), given.begin(), given.end());
  }
  const auto policy = NewBinaryFuseFilterPolicy(bits);
  std::string filter;
  policy->CreateFilter(hashes.data(), hashes.size(), &filter);
  for (uint64_t h : hashes) {
    FUZZ_CHECK(policy->KeyMayMatch(h, filter), "false negative");
  }
  for (uint64_t i = 0; i < 64; i++) policy->KeyMayMatch(ProbeHash(i), filter);

  const StaticFilter sf =
      StaticFilter::BuildFromHashes(hashes.data(), hashes.size(), bits);
  FUZZ_CHECK(sf.num_keys() <= given.size(), "more keys than were given");
  for (uint64_t h : hashes) {
    FUZZ_CHECK(sf.MightContainHash(h), "static filter false negative");
  }
  std::string encoded;
  sf.Serialize(&encoded);
  StaticFilter decoded;
  const Status s = StaticFilter::Deserialize(encoded, &decoded);
  FUZZ_CHECK(s.ok(), "own encoding rejected: " + s.ToString());
  std::string again;
  decoded.Serialize(&again);
  FUZZ_CHECK(again == encoded, "round trip changes the encoding");
}

void CheckDecode(const uint8_t* data, size_t size) {
  const Slice input(reinterpret_cast<const char*>(data), size);
  for (int bits : {8, 16}) {
    const auto policy = NewBinaryFuseFilterPolicy(bits);
    binary_fuse::FilterView view;
    const bool parses = binary_fuse::Parse(input, bits, &view, nullptr);
    const double fp = policy->TheoreticalFpRate(input, 100);
    FUZZ_CHECK(parses || fp == 1.0, "unparseable filter with a rate");
    for (uint64_t i = 0; i < 64; i++) {
      const uint64_t h = ProbeHash(i);
      policy->Prefetch(h, input);
      const bool match = policy->KeyMayMatch(h, input);
      FUZZ_CHECK(parses || match, "unparseable filter answered no");
    }
  }
  StaticFilter out;
  const Status s = StaticFilter::Deserialize(input, &out);
  if (!s.ok()) {
    FUZZ_CHECK(s.IsCorruption(), "unexpected status: " + s.ToString());
    FUZZ_CHECK(out.num_keys() == 0 && out.bytes() == 0,
               "failed Deserialize changed its output");
    return;
  }
  for (uint64_t i = 0; i < 64; i++) out.MightContainHash(ProbeHash(i));
  std::string again;
  out.Serialize(&again);
  FUZZ_CHECK(again == input.ToString(), "accepted input does not round-trip");
}

}  // namespace
}  // namespace bloomkv::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  if ((data[0] & 1) == 0) {
    bloomkv::fuzz::CheckBuild(data, size);
  } else {
    bloomkv::fuzz::CheckDecode(data + 1, size - 1);
  }
  return 0;
}
