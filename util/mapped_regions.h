// MappedRegions: read-only file mappings whose lost pages fail the reads
// that need them instead of ending the process.
//
// Touching a page of a mapped file that the file no longer backs (another
// process cut it short) or that the kernel cannot read in (a disk error)
// raises SIGBUS, whose default action ends the process, where pread would
// have returned a short read or EIO. A mapping registered here is guarded
// by a process-wide SIGBUS handler, installed with the first registration:
// a fault inside a registered region records the region as lost from the
// faulting page on, maps zero-filled pages over it (up to the region's
// end) and returns, so that the faulting load reads zeros. A reader tells
// such bytes from the file's with LostFrom(): the mapped file refuses
// reads of a lost range, and a reader that used bytes it had not checked
// against a checksum asks again once it is done with them
// (RandomAccessFile::Recheck). A SIGBUS outside every registered region
// goes to the handler installed before this one, or ends the process as it
// would have without it. An application that installs its own SIGBUS
// handler after bloomkv mapped a file replaces this one: lost pages then
// end the process again.
//
// Thread-safety: thread-safe. The signal handler reads the registry with
// atomic loads only; registration takes a mutex the handler never does.
#ifndef BLOOMKV_UTIL_MAPPED_REGIONS_H_
#define BLOOMKV_UTIL_MAPPED_REGIONS_H_

#include <cstddef>
#include <cstdint>

namespace bloomkv {

class MappedRegions {
 public:
  // No region lost: LostFrom's answer while every page is the file's.
  static constexpr uint64_t kIntact = UINT64_MAX;

  // Guards the mapping [base, base + length). Returns its slot, or -1 when
  // it cannot be guarded (the handler could not be installed, or 2^20
  // regions are registered): the caller must then read the file another
  // way. REQUIRES: base is page-aligned, length > 0.
  static int Register(const void* base, size_t length);
  // Stops guarding the region of slot, before it is unmapped.
  // REQUIRES: slot came from Register and was not unregistered since.
  static void Unregister(int slot);
  // The offset from the region's base at which its pages were lost
  // (zeros are read from there to its end), or kIntact.
  static uint64_t LostFrom(int slot);
};

}  // namespace bloomkv

#endif  // BLOOMKV_UTIL_MAPPED_REGIONS_H_
