// Process and directory figures for kvbench: peak resident memory (VmHWM)
// and its reset, the kernel's read/write counters (/proc/self/io), and the
// bytes a directory holds.
//
// rchar counts every byte returned by read-like system calls (including
// those served from the page cache, and kvbench's own reads of /proc);
// read_bytes counts bytes fetched from storage only, so it is 0 when the
// page cache holds the files. kvbench compares the counting Env's bytes
// with rchar. Reads through mmap appear in neither.
//
// Thread-safety: thread-safe (reads of /proc and the file system only).
#ifndef BLOOMKV_BENCH_KVBENCH_PROCESS_STATS_H_
#define BLOOMKV_BENCH_KVBENCH_PROCESS_STATS_H_

#include <cstdint>
#include <string>

namespace bloomkv::bench {

struct ProcIo {
  uint64_t rchar = 0;
  uint64_t wchar = 0;
  uint64_t read_bytes = 0;
  uint64_t write_bytes = 0;
};

// Zeroes when /proc/self/io cannot be read.
ProcIo ReadProcIo();

// VmHWM and VmRSS from /proc/self/status, in bytes; 0 when unavailable.
uint64_t PeakRssBytes();
uint64_t CurrentRssBytes();

// Resets VmHWM to the current RSS (Linux >= 4.0, by writing 5 to
// /proc/self/clear_refs). False if the kernel refused.
bool ResetPeakRss();

// Open file descriptors of this process (the entries of /proc/self/fd, the
// one used to list them included), or how many of them refer to a file
// under dir when dir (an absolute path) is given.
// 0 when /proc/self/fd cannot be read.
uint64_t OpenFileDescriptors(const std::string& dir = "");

// CPU time used so far by every thread of this process, in nanoseconds.
uint64_t ProcessCpuNanos();
// CPU time of the calling thread: unlike wall time, it does not grow when
// other processes take the cores, so ops per CPU second shows whether
// threads slow each other down.
uint64_t ThreadCpuNanos();

// Sum of the sizes of the regular files under dir, recursively.
uint64_t DirectoryBytes(const std::string& dir);

}  // namespace bloomkv::bench

#endif  // BLOOMKV_BENCH_KVBENCH_PROCESS_STATS_H_
