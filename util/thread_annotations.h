// Clang thread-safety annotations, as documentation the compiler can check.
//
// Under clang with -Wthread-safety (and an annotated mutex type) these let
// the compiler check the locking rules they state; elsewhere they expand to
// nothing and remain precise documentation.
// Thread-safety: macros only.
#ifndef BLOOMKV_UTIL_THREAD_ANNOTATIONS_H_
#define BLOOMKV_UTIL_THREAD_ANNOTATIONS_H_

#if defined(__clang__)
#define BLOOMKV_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define BLOOMKV_THREAD_ANNOTATION(x)
#endif

// The member may only be read or written with the given mutex held.
#define GUARDED_BY(x) BLOOMKV_THREAD_ANNOTATION(guarded_by(x))
// The function must be called with the given mutex held.
#define REQUIRES(...) \
  BLOOMKV_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))

#endif  // BLOOMKV_UTIL_THREAD_ANNOTATIONS_H_
