// The process's limit on open file descriptors, which the table cache's
// open segments count against (each holds one when read with pread).
//
// Thread-safety: thread-safe (setrlimit is process-wide; concurrent callers
// may each raise it, never lower it).
#ifndef BLOOMKV_UTIL_FILE_LIMIT_H_
#define BLOOMKV_UTIL_FILE_LIMIT_H_

#include <cstdint>

namespace bloomkv {

struct FileLimit {
  int64_t before = -1;  // the soft limit found (-1: unknown)
  int64_t after = -1;   // the soft limit in force on return
  int64_t hard = -1;    // the hard limit, the most it can be raised to
};

// Raises the soft RLIMIT_NOFILE to at least `wanted`, or as far as the hard
// limit allows; never lowers it. Returns what it found and left.
FileLimit RaiseOpenFileLimit(int64_t wanted);

}  // namespace bloomkv

#endif  // BLOOMKV_UTIL_FILE_LIMIT_H_
