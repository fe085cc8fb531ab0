// Registry of the built-in filter policies; see filter_registry.h.
#include "util/filter_registry.h"

#include <array>

namespace bloomkv {

std::shared_ptr<const FilterPolicy> BuiltinFilterPolicy(const Slice& name) {
  // The bits per key given here only matter for building, which these
  // instances never do.
  static const std::array<std::shared_ptr<const FilterPolicy>, 3> kBuiltins = {
      NewBloomFilterPolicy(10.0), NewBinaryFuseFilterPolicy(8),
      NewBinaryFuseFilterPolicy(16)};
  for (const auto& policy : kBuiltins) {
    if (name == Slice(policy->Name())) return policy;
  }
  return nullptr;
}

}  // namespace bloomkv
