// Parsing of /proc/self/{io,status} and a recursive directory size.
#include "bench/kvbench/process_stats.h"

#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

namespace bloomkv::bench {
namespace {

// The number after "name:" in a /proc file of "name: value" lines.
bool FindField(const std::string& text, const char* name, uint64_t* value) {
  const std::string key = std::string(name) + ":";
  size_t pos = 0;
  while ((pos = text.find(key, pos)) != std::string::npos) {
    if (pos == 0 || text[pos - 1] == '\n') {
      *value = std::strtoull(text.c_str() + pos + key.size(), nullptr, 10);
      return true;
    }
    pos += key.size();
  }
  return false;
}

std::string Slurp(const char* path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in),
                     std::istreambuf_iterator<char>());
}

uint64_t StatusKiB(const char* name) {
  uint64_t kib = 0;
  FindField(Slurp("/proc/self/status"), name, &kib);
  return kib * 1024;
}

uint64_t CpuNanos(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000 + uint64_t(ts.tv_nsec);
}

}  // namespace

ProcIo ReadProcIo() {
  ProcIo io;
  const std::string text = Slurp("/proc/self/io");
  FindField(text, "rchar", &io.rchar);
  FindField(text, "wchar", &io.wchar);
  FindField(text, "read_bytes", &io.read_bytes);
  FindField(text, "write_bytes", &io.write_bytes);
  return io;
}

uint64_t PeakRssBytes() { return StatusKiB("VmHWM"); }
uint64_t CurrentRssBytes() { return StatusKiB("VmRSS"); }

bool ResetPeakRss() {
  FILE* f = std::fopen("/proc/self/clear_refs", "w");
  if (f == nullptr) return false;
  const bool ok = std::fputs("5", f) >= 0;
  return std::fclose(f) == 0 && ok;
}

uint64_t ProcessCpuNanos() { return CpuNanos(CLOCK_PROCESS_CPUTIME_ID); }
uint64_t ThreadCpuNanos() { return CpuNanos(CLOCK_THREAD_CPUTIME_ID); }

uint64_t DirectoryBytes(const std::string& dir) {
  uint64_t total = 0;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator();
       it.increment(ec)) {
    std::error_code size_ec;
    if (it->is_regular_file(size_ec)) {
      const uint64_t size = it->file_size(size_ec);
      if (!size_ec) total += size;
    }
  }
  return total;
}

uint64_t OpenFileDescriptors(const std::string& dir) {
  std::error_code ec;
  const std::string prefix = dir.empty() ? "" : dir + "/";
  uint64_t n = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator("/proc/self/fd", ec)) {
    if (prefix.empty()) {
      n++;
      continue;
    }
    const std::filesystem::path target =
        std::filesystem::read_symlink(entry.path(), ec);
    if (!ec && target.string().rfind(prefix, 0) == 0) n++;
  }
  return n;
}

}  // namespace bloomkv::bench
