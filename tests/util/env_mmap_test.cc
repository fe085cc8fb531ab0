// Tests for the POSIX Env's random-access files, mapped (EnvOptions::
// use_mmap_reads) and read with pread: both give the same bytes and the same
// end-of-file behaviour, a mapped file hands out its own bytes, and the bound
// on mapped files falls back to pread without failing.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bloomkv/env.h"
#include "tests/testutil/test_util.h"
#include "util/random.h"

namespace bloomkv {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

std::unique_ptr<Env> MakeEnv(bool mmap, int max_mmap_files = 1000) {
  EnvOptions options;
  options.use_mmap_reads = mmap;
  options.max_mmap_files = max_mmap_files;
  return NewPosixEnv(options);
}

// True when a read of f returned bytes that lie outside the scratch buffer:
// the file handed out memory it owns, as a mapped file does.
bool ReadsInPlace(const RandomAccessFile& f) {
  char scratch[4];
  Slice r;
  EXPECT_TRUE(f.Read(0, sizeof(scratch), &r, scratch).ok());
  EXPECT_FALSE(r.empty());
  return r.data() != scratch;
}

class EnvMmapTest : public testing::TestWithParam<bool> {
 protected:
  bool mmap() const { return GetParam(); }

  std::unique_ptr<Env> env_ = MakeEnv(GetParam());
  test::TempDir dir_;
};

INSTANTIATE_TEST_SUITE_P(ReadModes, EnvMmapTest, testing::Bool(),
                         [](const testing::TestParamInfo<bool>& info) {
                           return info.param ? "Mmap" : "Pread";
                         });

TEST_P(EnvMmapTest, RandomReadsAndTheEndOfTheFile) {
  Random rnd(11);
  const std::string data = test::RandomBytes(&rnd, 100000);
  const std::string fname = dir_.File("random");
  ASSERT_TRUE(WriteStringToFile(env_.get(), data, fname, false).ok());
  std::unique_ptr<RandomAccessFile> f;
  ASSERT_TRUE(env_->NewRandomAccessFile(fname, &f).ok());
  EXPECT_EQ(ReadsInPlace(*f), mmap());
  std::string scratch(5000, '\0');
  for (int i = 0; i < 300; i++) {
    const uint64_t off = rnd.Uniform(data.size());
    const size_t n = rnd.Uniform(scratch.size() + 1);
    Slice r;
    ASSERT_TRUE(f->Read(off, n, &r, scratch.data()).ok());
    const size_t want = std::min<size_t>(n, data.size() - off);
    ASSERT_EQ(Slice(data.data() + off, want), r) << off << " " << n;
  }
  // At and past the end: an empty result, not an error.
  for (uint64_t off : {uint64_t{data.size()}, uint64_t{data.size()} + 1,
                       uint64_t{1} << 40, ~uint64_t{0}}) {
    Slice r("garbage");
    ASSERT_TRUE(f->Read(off, 10, &r, scratch.data()).ok()) << off;
    EXPECT_TRUE(r.empty()) << off;
  }
  // Crossing the end: the bytes that exist.
  Slice r;
  ASSERT_TRUE(f->Read(data.size() - 3, 10, &r, scratch.data()).ok());
  EXPECT_EQ(Slice(data.data() + data.size() - 3, 3), r);
}

TEST_P(EnvMmapTest, EmptyFileReadsNothing) {
  const std::string fname = dir_.File("empty");
  ASSERT_TRUE(WriteStringToFile(env_.get(), "", fname, false).ok());
  std::unique_ptr<RandomAccessFile> f;
  ASSERT_TRUE(env_->NewRandomAccessFile(fname, &f).ok());
  char scratch[8];
  Slice r("garbage");
  ASSERT_TRUE(f->Read(0, sizeof(scratch), &r, scratch).ok());
  EXPECT_TRUE(r.empty());
}

TEST_P(EnvMmapTest, MissingFileIsNotFound) {
  std::unique_ptr<RandomAccessFile> f;
  EXPECT_TRUE(env_->NewRandomAccessFile(dir_.File("missing"), &f).IsNotFound());
}

// A mapped file covers the size the file had when it was opened: bytes
// appended later are not seen (a segment file never grows once written; a
// reader that saw them could disagree with the size it was told).
TEST_P(EnvMmapTest, BytesAppendedAfterOpen) {
  const std::string fname = dir_.File("growing");
  ASSERT_TRUE(WriteStringToFile(env_.get(), "0123456789", fname, false).ok());
  std::unique_ptr<RandomAccessFile> f;
  ASSERT_TRUE(env_->NewRandomAccessFile(fname, &f).ok());
  {
    std::unique_ptr<WritableFile> w;
    ASSERT_TRUE(env_->NewAppendableFile(fname, &w).ok());
    ASSERT_TRUE(w->Append("abcdef").ok());
    ASSERT_TRUE(w->Close().ok());
  }
  char scratch[32];
  Slice r;
  ASSERT_TRUE(f->Read(5, sizeof(scratch), &r, scratch).ok());
  EXPECT_EQ(r, Slice(mmap() ? "56789" : "56789abcdef"));
}

// A file deleted while open stays readable (segment files are deleted while
// iterators or lookups may still hold them).
TEST_P(EnvMmapTest, FileRemovedWhileOpenStaysReadable) {
  Random rnd(12);
  const std::string data = test::RandomBytes(&rnd, 20000);
  const std::string fname = dir_.File("doomed");
  ASSERT_TRUE(WriteStringToFile(env_.get(), data, fname, false).ok());
  std::unique_ptr<RandomAccessFile> f;
  ASSERT_TRUE(env_->NewRandomAccessFile(fname, &f).ok());
  ASSERT_TRUE(env_->RemoveFile(fname).ok());
  std::string scratch(data.size(), '\0');
  Slice r;
  ASSERT_TRUE(f->Read(0, data.size(), &r, scratch.data()).ok());
  EXPECT_EQ(r, Slice(data));
}

TEST_P(EnvMmapTest, ConcurrentReaders) {
  Random rnd(13);
  const std::string data = test::RandomBytes(&rnd, 1 << 16);
  const std::string fname = dir_.File("shared");
  ASSERT_TRUE(WriteStringToFile(env_.get(), data, fname, false).ok());
  std::unique_ptr<RandomAccessFile> f;
  ASSERT_TRUE(env_->NewRandomAccessFile(fname, &f).ok());
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; t++) {
    threads.emplace_back([&, t] {
      Random r(100 + t);
      char scratch[512];
      for (int i = 0; i < 2000; i++) {
        const uint64_t off = r.Uniform(data.size() - sizeof(scratch));
        Slice got;
        if (!f->Read(off, sizeof(scratch), &got, scratch).ok() ||
            got != Slice(data.data() + off, sizeof(scratch))) {
          mismatches++;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(0, mismatches.load());
}

// Beyond max_mmap_files, files are read with pread, and a closed mapped file
// gives its place back.
// WillNeed is a hint: over any range, in bounds or not, aligned or not,
// it changes no byte a read returns (a mapped file asks the kernel for the
// pages; a file read with pread ignores it).
TEST_P(EnvMmapTest, WillNeedChangesNothingReadsReturn) {
  Random rnd(13);
  const std::string data = test::RandomBytes(&rnd, 3 * 4096 + 123);
  const std::string fname = dir_.File("hinted");
  ASSERT_TRUE(WriteStringToFile(env_.get(), data, fname, false).ok());
  std::unique_ptr<RandomAccessFile> f;
  ASSERT_TRUE(env_->NewRandomAccessFile(fname, &f).ok());
  const uint64_t size = data.size();
  for (const auto& [offset, n] :
       std::vector<std::pair<uint64_t, size_t>>{{0, 0},
                                                {0, 1},
                                                {4095, 2},
                                                {100, 10000},
                                                {size - 1, 1},
                                                {size - 10, 1000},
                                                {size, 10},
                                                {size + 4096, 4096},
                                                {1, SIZE_MAX},
                                                {UINT64_MAX - 5, 100}}) {
    f->WillNeed(offset, n);
  }
  std::string scratch(data.size(), '\0');
  Slice r;
  ASSERT_TRUE(f->Read(0, data.size(), &r, scratch.data()).ok());
  EXPECT_EQ(r.ToString(), data);
}

// A mapped file is read a page at a time: touching one page of a file the
// page cache does not hold brings in that page, not the kernel's read-around
// of the pages near it (which, at a typical read_ahead_kb, would be dozens
// of pages: a whole small segment per fault).
TEST(EnvMmapRandomTest, AFaultReadsItsPageOnly) {
  const test::TempDir dir = test::TempDir::OnDisk();
  const std::string fname = dir.File("cold");
  Random rnd(17);
  const std::string data = test::RandomBytes(&rnd, 4 << 20);
  std::unique_ptr<Env> env = MakeEnv(true);
  ASSERT_TRUE(WriteStringToFile(env.get(), data, fname, /*sync=*/true).ok());
  // Evict the file's clean pages (no root needed).
  const int fd = ::open(fname.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::close(fd);
  std::unique_ptr<RandomAccessFile> f;
  ASSERT_TRUE(env->NewRandomAccessFile(fname, &f).ok());
  Slice whole;
  ASSERT_TRUE(f->Read(0, data.size(), &whole, nullptr).ok());
  ASSERT_EQ(whole.size(), data.size());
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> resident(data.size() / page);
  auto count = [&]() {
    EXPECT_EQ(0, ::mincore(const_cast<char*>(whole.data()), data.size(),
                           resident.data()));
    size_t n = 0;
    for (unsigned char r : resident) n += r & 1;
    return n;
  };
  if (count() > 0) {
    GTEST_SKIP() << "the page cache kept the file (tmpfs?): nothing to see";
  }
  volatile char c = whole.data()[data.size() / 2];
  (void)c;
  EXPECT_LE(count(), 4u);
}

// The FilePmdMapped bytes of the mapping that starts at `base` in
// /proc/self/smaps (file pages mapped through 2 MiB page-table entries);
// -1 if the mapping or the field is not there.
long long FilePmdMappedKiB(const void* base) {
  char start[32];
  std::snprintf(start, sizeof(start), "%lx-",
                reinterpret_cast<unsigned long>(base));
  std::string smaps;
  if (!ReadFileToString(Env::Default(), "/proc/self/smaps", &smaps).ok()) {
    return -1;
  }
  const size_t at = smaps.find(std::string("\n") + start);
  if (at == std::string::npos) return -1;
  const size_t last = smaps.find("VmFlags:", at);  // a mapping's last field
  const size_t field = smaps.find("FilePmdMapped:", at);
  if (field == std::string::npos || field > last) return -1;
  return std::atoll(smaps.c_str() + field + std::strlen("FilePmdMapped:"));
}

// Opens fname as the Env opens a segment (mapped, MADV_RANDOM), touches
// every page, and returns the mapping's FilePmdMapped KiB.
long long TouchAndCountHugeKiB(const std::string& fname, size_t size) {
  std::unique_ptr<Env> env = MakeEnv(true);  // outlives f (its limiter)
  std::unique_ptr<RandomAccessFile> f;
  if (!env->NewRandomAccessFile(fname, &f).ok() ||
      f->MappedBytes() == nullptr) {
    return -1;
  }
  const volatile char* base = f->MappedBytes();
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  unsigned sum = 0;
  for (size_t i = 0; i < size; i += page) sum += base[i];
  (void)sum;
  return FilePmdMappedKiB(f->MappedBytes());
}

// A file appended in block-sized pieces, as a segment is, is written in
// whole 2 MiB chunks, so where the kernel keeps 2 MiB page-cache folios for
// such writes a mapping of the file uses huge pages for every whole chunk.
// Skipped where a file written with plain 2 MiB writes gets none either
// (another kernel or file system).
TEST(EnvMmapHugeTest, ASegmentWrittenInBlocksIsMappedWithHugePages) {
  const test::TempDir dir = test::TempDir::OnDisk();
  constexpr size_t kChunk = size_t{2} << 20;
  const size_t size = 4 * kChunk + (100 << 10);
  Random rnd(23);
  const std::string data = test::RandomBytes(&rnd, size);

  const std::string control = dir.File("control");
  {
    const int fd = ::open(control.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
    ASSERT_GE(fd, 0);
    for (size_t at = 0; at < size; at += kChunk) {
      const size_t n = std::min(kChunk, size - at);
      ASSERT_EQ(static_cast<ssize_t>(n), ::write(fd, data.data() + at, n));
    }
    ::close(fd);
  }
  const long long control_kib = TouchAndCountHugeKiB(control, size);
  if (control_kib <= 0) {
    GTEST_SKIP() << "no 2 MiB folios for written files here (FilePmdMapped "
                 << control_kib << ")";
  }

  const std::string fname = dir.File("segment");
  std::unique_ptr<WritableFile> f;
  ASSERT_TRUE(Env::Default()->NewWritableFile(fname, &f).ok());
  for (size_t at = 0; at < size;) {
    const size_t n = std::min<size_t>(1 + rnd.Uniform(8 << 10), size - at);
    ASSERT_TRUE(f->Append(Slice(data.data() + at, n)).ok());
    at += n;
  }
  ASSERT_TRUE(f->Close().ok());
  EXPECT_EQ(control_kib, TouchAndCountHugeKiB(fname, size));
}

TEST(EnvMmapLimitTest, FilesBeyondTheBoundAreReadWithPread) {
  test::TempDir dir;
  std::unique_ptr<Env> env = MakeEnv(true, /*max_mmap_files=*/2);
  std::vector<std::string> names;
  for (int i = 0; i < 4; i++) {
    names.push_back(dir.File("f" + std::to_string(i)));
    ASSERT_TRUE(WriteStringToFile(env.get(), "contents " + std::to_string(i),
                                  names.back(), false)
                    .ok());
  }
  std::vector<std::unique_ptr<RandomAccessFile>> files(4);
  for (int i = 0; i < 4; i++) {
    ASSERT_TRUE(env->NewRandomAccessFile(names[i], &files[i]).ok());
  }
  EXPECT_TRUE(ReadsInPlace(*files[0]));
  EXPECT_TRUE(ReadsInPlace(*files[1]));
  EXPECT_FALSE(ReadsInPlace(*files[2]));
  EXPECT_FALSE(ReadsInPlace(*files[3]));
  for (int i = 0; i < 4; i++) {
    char scratch[32];
    Slice r;
    ASSERT_TRUE(files[i]->Read(0, sizeof(scratch), &r, scratch).ok());
    EXPECT_EQ(r, Slice("contents " + std::to_string(i)));
  }
  files[0].reset();
  std::unique_ptr<RandomAccessFile> again;
  ASSERT_TRUE(env->NewRandomAccessFile(names[0], &again).ok());
  EXPECT_TRUE(ReadsInPlace(*again));
  std::unique_ptr<RandomAccessFile> one_more;
  ASSERT_TRUE(env->NewRandomAccessFile(names[3], &one_more).ok());
  EXPECT_FALSE(ReadsInPlace(*one_more));
}

TEST(EnvMmapLimitTest, ZeroMapsNothing) {
  test::TempDir dir;
  std::unique_ptr<Env> env = MakeEnv(true, /*max_mmap_files=*/0);
  const std::string fname = dir.File("f");
  ASSERT_TRUE(WriteStringToFile(env.get(), "abcdef", fname, false).ok());
  std::unique_ptr<RandomAccessFile> f;
  ASSERT_TRUE(env->NewRandomAccessFile(fname, &f).ok());
  EXPECT_FALSE(ReadsInPlace(*f));
}

// A file opened as short-lived is read with pread even by an Env that
// maps, gives the same bytes and errors, and takes none of the mappings
// max_mmap_files allows.
TEST(EnvMmapLimitTest, ShortLivedFilesAreReadWithPread) {
  test::TempDir dir;
  std::unique_ptr<Env> env = MakeEnv(true, /*max_mmap_files=*/1);
  Random rnd(14);
  const std::string data = test::RandomBytes(&rnd, 10000);
  const std::string fname = dir.File("f");
  ASSERT_TRUE(WriteStringToFile(env.get(), data, fname, false).ok());
  std::unique_ptr<RandomAccessFile> short_lived;
  ASSERT_TRUE(env->NewShortLivedRandomAccessFile(fname, &short_lived).ok());
  EXPECT_FALSE(ReadsInPlace(*short_lived));
  EXPECT_EQ(nullptr, short_lived->MappedBytes());
  std::string scratch(data.size(), '\0');
  Slice r;
  ASSERT_TRUE(short_lived->Read(0, data.size(), &r, scratch.data()).ok());
  EXPECT_EQ(Slice(data), r);
  std::unique_ptr<RandomAccessFile> mapped;
  ASSERT_TRUE(env->NewRandomAccessFile(fname, &mapped).ok());
  EXPECT_TRUE(ReadsInPlace(*mapped));
  EXPECT_TRUE(
      env->NewShortLivedRandomAccessFile(dir.File("missing"), &short_lived)
          .IsNotFound());
}

// An EnvWrapper that overrides NewRandomAccessFile alone sees the
// short-lived opens too (the hint stops there).
TEST(EnvMmapLimitTest, AWrapperSeesShortLivedOpens) {
  class OpenCounting : public EnvWrapper {
   public:
    using EnvWrapper::EnvWrapper;
    Status NewRandomAccessFile(
        const std::string& f, std::unique_ptr<RandomAccessFile>* r) override {
      opens++;
      return EnvWrapper::NewRandomAccessFile(f, r);
    }
    int opens = 0;
  };
  test::TempDir dir;
  const std::string fname = dir.File("f");
  ASSERT_TRUE(WriteStringToFile(Env::Default(), "abcdef", fname, false).ok());
  OpenCounting env(Env::Default());
  std::unique_ptr<RandomAccessFile> f;
  ASSERT_TRUE(env.NewShortLivedRandomAccessFile(fname, &f).ok());
  EXPECT_EQ(1, env.opens);
}

// The default Env maps segment files; EnvOptions turns it off. (A file cut
// short under a mapping fails the reads of its lost pages, as pread's short
// reads do: DBCutSegmentTest.)
TEST(EnvMmapLimitTest, DefaultEnvMapsFiles) {
  test::TempDir dir;
  const std::string fname = dir.File("f");
  ASSERT_TRUE(WriteStringToFile(Env::Default(), "abcdef", fname, false).ok());
  std::unique_ptr<RandomAccessFile> f;
  ASSERT_TRUE(Env::Default()->NewRandomAccessFile(fname, &f).ok());
  EXPECT_TRUE(ReadsInPlace(*f));
  EXPECT_TRUE(EnvOptions().use_mmap_reads);

  EnvOptions off;
  off.use_mmap_reads = false;
  std::unique_ptr<Env> pread_env = NewPosixEnv(off);
  ASSERT_TRUE(pread_env->NewRandomAccessFile(fname, &f).ok());
  EXPECT_FALSE(ReadsInPlace(*f));
}

}  // namespace
}  // namespace bloomkv
