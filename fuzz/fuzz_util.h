// Helpers shared by the fuzz targets: an invariant check that works the same
// under libFuzzer and in the corpus replay, and the file name every target
// gives the decoders (error messages must name it).
//
// A fuzz target defines LLVMFuzzerTestOneInput and checks invariants with
// FUZZ_CHECK. A failed check prints what broke and aborts, which libFuzzer
// reports as a crash (and saves the input) and the replay reports as a
// failed test.
// Thread-safety: stateless.
#ifndef BLOOMKV_FUZZ_FUZZ_UTIL_H_
#define BLOOMKV_FUZZ_FUZZ_UTIL_H_

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "bloomkv/status.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace bloomkv::fuzz {

// The name under which every target hands its input to a decoder.
inline constexpr char kFuzzFileName[] = "fuzz-input";

[[noreturn]] inline void CheckFailed(const char* file, int line,
                                     const char* cond, const std::string& why) {
  std::fprintf(stderr, "%s:%d: invariant violated: %s %s\n", file, line, cond,
               why.c_str());
  std::abort();
}

#define FUZZ_CHECK(cond, why)                                 \
  do {                                                        \
    if (!(cond))                                              \
      ::bloomkv::fuzz::CheckFailed(__FILE__, __LINE__, #cond, \
                                   std::string(why));         \
  } while (0)

// What a decoder may say about untrusted bytes: Corruption (or NotSupported
// for a well-formed but unknown version), with a message naming the file.
inline void CheckDecoderError(const Status& s) {
  FUZZ_CHECK(s.IsCorruption() || s.IsNotSupported(),
             "unexpected status kind: " + s.ToString());
  FUZZ_CHECK(s.ToString().find(kFuzzFileName) != std::string::npos,
             "error does not name the file: " + s.ToString());
}

}  // namespace bloomkv::fuzz

#endif  // BLOOMKV_FUZZ_FUZZ_UTIL_H_
