// The linked library's version; see include/bloomkv/version.h.
#include "bloomkv/version.h"

namespace bloomkv {

#define BLOOMKV_STR2(x) #x
#define BLOOMKV_STR(x) BLOOMKV_STR2(x)

const char* VersionString() {
  return BLOOMKV_STR(BLOOMKV_VERSION_MAJOR) "." BLOOMKV_STR(
      BLOOMKV_VERSION_MINOR) "." BLOOMKV_STR(BLOOMKV_VERSION_PATCH);
}

}  // namespace bloomkv
