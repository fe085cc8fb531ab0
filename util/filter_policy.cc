// FilterPolicy base class.
#include "bloomkv/filter_policy.h"

namespace bloomkv {

FilterPolicy::~FilterPolicy() = default;

std::shared_ptr<const FilterPolicy> FilterPolicy::Resized(double) const {
  return nullptr;
}

void FilterPolicy::Prefetch(uint64_t, const Slice&) const {}

}  // namespace bloomkv
