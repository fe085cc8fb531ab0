// FilterPolicy base class.
#include "bloomkv/filter_policy.h"

namespace bloomkv {

FilterPolicy::~FilterPolicy() = default;

}  // namespace bloomkv
