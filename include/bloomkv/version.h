// The version of the bloomkv library these headers belong to.
//
// BLOOMKV_VERSION_* are the headers' version, known at compile time;
// bloomkv::VersionString() is the version of the library actually linked,
// so an application can check at run time that the two agree (a shared
// library may be upgraded under it). CMake reads the project version from
// this file: it is the one place the version is written.
//
// Thread-safety: VersionString() is thread-safe.
#ifndef BLOOMKV_INCLUDE_VERSION_H_
#define BLOOMKV_INCLUDE_VERSION_H_

#define BLOOMKV_VERSION_MAJOR 0
#define BLOOMKV_VERSION_MINOR 2
#define BLOOMKV_VERSION_PATCH 0

// One integer that orders versions: 10000 * major + 100 * minor + patch.
#define BLOOMKV_VERSION                                          \
  (BLOOMKV_VERSION_MAJOR * 10000 + BLOOMKV_VERSION_MINOR * 100 + \
   BLOOMKV_VERSION_PATCH)

namespace bloomkv {

// "MAJOR.MINOR.PATCH" of the linked library.
const char* VersionString();

}  // namespace bloomkv

#endif  // BLOOMKV_INCLUDE_VERSION_H_
