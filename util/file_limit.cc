// RaiseOpenFileLimit; see file_limit.h.
#include "util/file_limit.h"

#include <sys/resource.h>

#include <algorithm>

namespace bloomkv {
namespace {

int64_t AsInt(rlim_t v) {
  return v == RLIM_INFINITY ? INT64_MAX : static_cast<int64_t>(v);
}

}  // namespace

FileLimit RaiseOpenFileLimit(int64_t wanted) {
  FileLimit r;
  struct rlimit lim;
  if (::getrlimit(RLIMIT_NOFILE, &lim) != 0) return r;
  r.before = r.after = AsInt(lim.rlim_cur);
  r.hard = AsInt(lim.rlim_max);
  if (r.before >= wanted) return r;
  lim.rlim_cur = static_cast<rlim_t>(std::min(wanted, r.hard));
  if (::setrlimit(RLIMIT_NOFILE, &lim) == 0) r.after = AsInt(lim.rlim_cur);
  return r;
}

}  // namespace bloomkv
