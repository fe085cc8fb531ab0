// Clang thread-safety annotations: locking rules the compiler checks.
//
// Under clang, -Wthread-safety checks every rule these state against the
// capability types of util/mutex.h (scripts/test.sh builds the library that
// way, with the warnings as errors); elsewhere they expand to nothing and
// remain precise documentation.
// Thread-safety: macros only.
#ifndef BLOOMKV_UTIL_THREAD_ANNOTATIONS_H_
#define BLOOMKV_UTIL_THREAD_ANNOTATIONS_H_

#if defined(__clang__)
#define BLOOMKV_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define BLOOMKV_THREAD_ANNOTATION(x)
#endif

// A type whose objects are capabilities (a mutex, or a role a thread takes).
#define CAPABILITY(x) BLOOMKV_THREAD_ANNOTATION(capability(x))
// An RAII type that holds a capability for its lifetime.
#define SCOPED_CAPABILITY BLOOMKV_THREAD_ANNOTATION(scoped_lockable)
// The member may only be read or written with the given capability held.
#define GUARDED_BY(x) BLOOMKV_THREAD_ANNOTATION(guarded_by(x))
// What the pointer member points at may only be used with it held.
#define PT_GUARDED_BY(x) BLOOMKV_THREAD_ANNOTATION(pt_guarded_by(x))
// The function must be called with the given capabilities held...
#define REQUIRES(...) \
  BLOOMKV_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
// ... or without them (it takes them itself).
#define EXCLUDES(...) BLOOMKV_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
// The function takes the capability and returns holding it ...
#define ACQUIRE(...) \
  BLOOMKV_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
// ... or gives it up.
#define RELEASE(...) \
  BLOOMKV_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
// The function is not checked; its comment must say why it is right.
#define NO_THREAD_SAFETY_ANALYSIS \
  BLOOMKV_THREAD_ANNOTATION(no_thread_safety_analysis)

#endif  // BLOOMKV_UTIL_THREAD_ANNOTATIONS_H_
