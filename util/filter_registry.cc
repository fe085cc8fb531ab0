// Registry of the built-in filter policies; see filter_registry.h.
#include "util/filter_registry.h"

#include <array>

namespace bloomkv {
namespace {

// Indexes into Builtins().
constexpr size_t kBloom = 0, kFuse8 = 1, kFuse16 = 2;

const std::array<std::shared_ptr<const FilterPolicy>, 3>& Builtins() {
  // The bloom filter's bits per key only matter for building, which the
  // registry's bloom instance never does; the fuse policies have no knob,
  // so their instances build as any other would.
  static const std::array<std::shared_ptr<const FilterPolicy>, 3> kBuiltins = {
      NewBloomFilterPolicy(10.0), NewBinaryFuseFilterPolicy(8),
      NewBinaryFuseFilterPolicy(16)};
  return kBuiltins;
}

}  // namespace

std::shared_ptr<const FilterPolicy> BuiltinFilterPolicy(const Slice& name) {
  for (const auto& policy : Builtins()) {
    if (name == Slice(policy->Name())) return policy;
  }
  return nullptr;
}

BuiltinFilterKind BuiltinFilterKindOf(const Slice& name) {
  const auto& b = Builtins();
  if (name == Slice(b[kBloom]->Name())) return BuiltinFilterKind::kBlockedBloom;
  if (name == Slice(b[kFuse8]->Name())) return BuiltinFilterKind::kBinaryFuse8;
  if (name == Slice(b[kFuse16]->Name())) {
    return BuiltinFilterKind::kBinaryFuse16;
  }
  return BuiltinFilterKind::kOther;
}

std::shared_ptr<const FilterPolicy> BuiltinBinaryFusePolicy(
    int fingerprint_bits) {
  return Builtins()[fingerprint_bits == 8 ? kFuse8 : kFuse16];
}

}  // namespace bloomkv
