// The binary fuse segment filter policies "bloomkv.BinaryFuse8" and
// "bloomkv.BinaryFuse16": static filters near the information-theoretic
// bound, built once from a segment's key hashes (core in
// util/binary_fuse.h, encoding in docs/filters.md).
//
// A filter this policy cannot parse, or one written with the other
// fingerprint width, answers "may match" for every key: a reader never
// produces a false negative from bytes it does not understand.
//
// Thread-safety: the policy is immutable; every method is safe to call
// concurrently.
#include <cmath>

#include "bloomkv/filter_policy.h"
#include "util/binary_fuse.h"

namespace bloomkv {

namespace {

namespace bf = binary_fuse;

// never change: on disk.
constexpr char kFuse8Name[] = "bloomkv.BinaryFuse8";
constexpr char kFuse16Name[] = "bloomkv.BinaryFuse16";

// Slots per key of a large filter (the paper's minimum size factor, reached
// from about 10^6 keys; smaller filters get more, see docs/filters.md).
constexpr double kLargeFilterSlotsPerKey = 1.125;

class BinaryFusePolicy final : public FilterPolicy {
 public:
  explicit BinaryFusePolicy(int fingerprint_bits) : bits_(fingerprint_bits) {}

  BinaryFusePolicy(const BinaryFusePolicy&) = delete;
  BinaryFusePolicy& operator=(const BinaryFusePolicy&) = delete;

  const char* Name() const override {
    return bits_ == 8 ? kFuse8Name : kFuse16Name;
  }

  void CreateFilter(const uint64_t* hashes, size_t n,
                    std::string* dst) const override {
    bf::Build(hashes, n, bits_, dst);
  }

  bool KeyMayMatch(uint64_t hash, const Slice& filter) const override {
    bf::FilterView view;
    if (!bf::Parse(filter, bits_, &view, nullptr)) return true;
    return bf::MayContain(view, hash);
  }

  void Prefetch(uint64_t hash, const Slice& filter) const override {
    bf::FilterView view;
    if (bf::Parse(filter, bits_, &view, nullptr)) bf::Prefetch(view, hash);
  }

  // The average of a large filter: 9.0 (8-bit) or 18.0 (16-bit). Filters
  // of fewer than about 10^6 keys use more (10.2 at 10^4 keys, 8-bit).
  double BitsPerKey() const override { return kLargeFilterSlotsPerKey * bits_; }

  // Resized() stays nullptr: a binary fuse filter has one size per key for a
  // fingerprint width, and the other width is another encoding (another
  // Name()). Under FilterAllocation::kMinimizeFalsePositives these policies
  // act as kUniform.

  double TheoreticalFpRate(const Slice& filter,
                           uint64_t /*num_keys*/) const override {
    bf::FilterView view;
    if (!bf::Parse(filter, bits_, &view, nullptr) || view.match_all) {
      return 1.0;
    }
    if (view.empty) return 0.0;
    return std::ldexp(1.0, -bits_);
  }

 private:
  const int bits_;
};

}  // namespace

std::shared_ptr<const FilterPolicy> NewBinaryFuseFilterPolicy(
    int fingerprint_bits) {
  return std::make_shared<BinaryFusePolicy>(fingerprint_bits <= 12 ? 8 : 16);
}

}  // namespace bloomkv
