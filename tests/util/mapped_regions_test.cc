// Tests for MappedRegions and the POSIX Env's mapped files: a page that a
// file cut short no longer backs reads as zeros instead of ending the
// process, the region says from where, the mapped file refuses reads of the
// lost part and Recheck reports what a reader already took from it; a SIGBUS
// outside every region still ends the process, or reaches the handler that
// was there before.
#include "util/mapped_regions.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bloomkv/env.h"
#include "tests/testutil/test_util.h"

namespace bloomkv {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

const size_t kPage = static_cast<size_t>(sysconf(_SC_PAGESIZE));

// A file of `pages` pages, page i filled with the byte 'a' + i, mapped
// read-only: the file `fname`, or where `fname` is empty an anonymous one
// (memfd_create), which the death tests use: their child is ended by the
// fault and could not remove a directory. Unmapped (and unregistered, if
// registered) on destruction.
class MappedFile {
 public:
  MappedFile(const std::string& fname, size_t pages) {
    fd_ = fname.empty() ? ::memfd_create("mapped-regions-test", MFD_CLOEXEC)
                        : ::open(fname.c_str(),
                                 O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    EXPECT_GE(fd_, 0) << fname << ": " << std::strerror(errno);
    std::string data;
    for (size_t i = 0; i < pages; i++) {
      data.append(kPage, static_cast<char>('a' + i));
    }
    EXPECT_EQ(static_cast<ssize_t>(data.size()),
              ::write(fd_, data.data(), data.size()));
    length_ = data.size();
    void* base = ::mmap(nullptr, length_, PROT_READ, MAP_SHARED, fd_, 0);
    EXPECT_NE(base, MAP_FAILED);
    base_ = static_cast<const volatile char*>(base);
  }
  ~MappedFile() {
    if (slot_ >= 0) MappedRegions::Unregister(slot_);
    ::munmap(const_cast<char*>(base_), length_);
    ::close(fd_);
  }

  int Register() {
    slot_ = MappedRegions::Register(const_cast<char*>(base_), length_);
    return slot_;
  }
  void CutTo(size_t bytes) {
    EXPECT_EQ(0, ::ftruncate(fd_, static_cast<off_t>(bytes)));
  }
  // A load the compiler must do: the byte at offset, as the mapping has it.
  char At(size_t offset) const { return base_[offset]; }

 private:
  int fd_ = -1;
  const volatile char* base_ = nullptr;
  size_t length_ = 0;
  int slot_ = -1;
};

TEST(MappedRegionsTest, PagesPastACutReadAsZerosAndTheRegionSaysFromWhere) {
  test::TempDir dir;
  MappedFile file(dir.File("f"), 4);
  const int slot = file.Register();
  ASSERT_GE(slot, 0);
  EXPECT_EQ(MappedRegions::LostFrom(slot), MappedRegions::kIntact);
  EXPECT_EQ(file.At(3 * kPage), 'd');

  // Cut inside page 1: its tail reads zeros as the kernel's own (the page
  // still exists), pages 2 and 3 no longer do.
  file.CutTo(kPage + 10);
  EXPECT_EQ(file.At(kPage + 9), 'b');
  EXPECT_EQ(file.At(kPage + 10), '\0');
  EXPECT_EQ(MappedRegions::LostFrom(slot), MappedRegions::kIntact);
  EXPECT_EQ(file.At(3 * kPage + 5), '\0');  // SIGBUS, survived
  EXPECT_EQ(MappedRegions::LostFrom(slot), 3 * kPage);
  EXPECT_EQ(file.At(2 * kPage), '\0');  // an earlier page: the mark moves
  EXPECT_EQ(MappedRegions::LostFrom(slot), 2 * kPage);
  EXPECT_EQ(file.At(3 * kPage), '\0');  // now zeros without a fault
  EXPECT_EQ(MappedRegions::LostFrom(slot), 2 * kPage);
  EXPECT_EQ(file.At(0), 'a');
}

TEST(MappedRegionsTest, AReusedSlotStartsIntact) {
  test::TempDir dir;
  int first;
  {
    MappedFile file(dir.File("f"), 2);
    first = file.Register();
    ASSERT_GE(first, 0);
    file.CutTo(0);
    EXPECT_EQ(file.At(kPage), '\0');
    EXPECT_EQ(MappedRegions::LostFrom(first), kPage);
  }
  MappedFile again(dir.File("g"), 2);
  const int second = again.Register();
  EXPECT_EQ(second, first);  // the slot given back is taken first
  EXPECT_EQ(MappedRegions::LostFrom(second), MappedRegions::kIntact);
  EXPECT_EQ(again.At(kPage), 'b');
}

// Whether a child died short of its last statement (std::exit(0)): killed
// by SIGBUS, or, under a sanitizer, which installs a SIGBUS handler of its
// own before any mapping and so gets the faults that are not a region's,
// ended by that handler.
bool DiedOfTheFault(int status) {
  if (WIFSIGNALED(status)) return WTERMSIG(status) == SIGBUS;
  return WIFEXITED(status) && WEXITSTATUS(status) != 0 &&
         WEXITSTATUS(status) != 3;
}

// A mapping nobody registered: touching what its file lost ends the
// process with SIGBUS, as it would without the handler.
TEST(MappedRegionsDeathTest, AFaultOutsideEveryRegionStillEndsTheProcess) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        MappedFile guarded("", 1);
        if (guarded.Register() < 0) std::exit(3);  // installs the handler
        MappedFile unguarded("", 2);
        unguarded.CutTo(0);
        (void)unguarded.At(kPage);
        std::exit(0);
      },
      DiedOfTheFault, "");
}

void PreviousHandler(int) { std::_Exit(42); }

// A handler installed before the first mapping gets the faults that are
// not a region's.
TEST(MappedRegionsDeathTest, AFaultOutsideEveryRegionReachesTheEarlierHandler) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        // The death test's child runs this test alone: no region was
        // registered in it yet, so this handler is the one found.
        struct sigaction action = {};
        action.sa_handler = PreviousHandler;
        sigemptyset(&action.sa_mask);
        if (sigaction(SIGBUS, &action, nullptr) != 0) std::exit(3);
        MappedFile guarded("", 2);
        if (guarded.Register() < 0) std::exit(4);
        guarded.CutTo(0);
        if (guarded.At(kPage) != '\0') std::exit(5);  // the region's own
        MappedFile unguarded("", 2);
        unguarded.CutTo(0);
        (void)unguarded.At(kPage);
        std::exit(0);
      },
      testing::ExitedWithCode(42), "");
}

// The POSIX Env's mapped file: bytes before the cut read as before, a read
// of the lost part fails with Corruption naming the file, and Recheck tells
// a reader that bytes it already took were lost.
TEST(MappedRegionsTest, AMappedFileFailsTheReadsOfWhatItLost) {
  test::TempDir dir;
  EnvOptions eo;
  eo.use_mmap_reads = true;
  std::unique_ptr<Env> env = NewPosixEnv(eo);
  const std::string fname = dir.File("segment");
  std::string data;
  for (size_t i = 0; i < 4; i++) data.append(kPage, static_cast<char>('a' + i));
  ASSERT_TRUE(WriteStringToFile(env.get(), data, fname, false).ok());
  std::unique_ptr<RandomAccessFile> f;
  ASSERT_TRUE(env->NewRandomAccessFile(fname, &f).ok());
  char scratch[16];
  Slice late;
  ASSERT_TRUE(f->Read(3 * kPage, 16, &late, scratch).ok());
  ASSERT_NE(late.data(), scratch);  // the mapping's own bytes
  EXPECT_TRUE(f->Recheck(3 * kPage, 16).ok());

  std::filesystem::resize_file(fname, 2 * kPage);
  EXPECT_EQ(late.ToString(), std::string(16, '\0'));  // SIGBUS, survived
  const Status lost = f->Recheck(3 * kPage, 16);
  EXPECT_TRUE(lost.IsCorruption()) << lost.ToString();
  EXPECT_NE(lost.ToString().find(fname), std::string::npos) << lost.ToString();
  Slice r;
  const Status read = f->Read(3 * kPage + 100, 10, &r, scratch);
  EXPECT_TRUE(read.IsCorruption()) << read.ToString();
  EXPECT_TRUE(r.empty());
  // Page 2 is gone too, which the mapping learns when it is touched.
  ASSERT_TRUE(f->Read(2 * kPage, 16, &r, scratch).ok());
  EXPECT_EQ(r.ToString(), std::string(16, '\0'));
  EXPECT_TRUE(f->Recheck(2 * kPage, 16).IsCorruption());
  ASSERT_TRUE(f->Read(kPage, 16, &r, scratch).ok());
  EXPECT_EQ(r.ToString(), std::string(16, 'b'));
  EXPECT_TRUE(f->Recheck(0, 2 * kPage).ok());
}

// Readers of a mapped file cut under them, beside threads that register
// and unregister other regions: each byte read is the file's or zero, the
// region ends up lost from the cut's first whole page, and the registry
// stays consistent (for ThreadSanitizer).
TEST(MappedRegionsTest, ReadersOfACutFileBesideRegistrations) {
  test::TempDir dir;
  constexpr size_t kPages = 16;
  MappedFile file(dir.File("f"), kPages);
  const int slot = file.Register();
  ASSERT_GE(slot, 0);
  std::atomic<bool> stop{false};
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; t++) {
    threads.emplace_back([&, t] {
      size_t i = static_cast<size_t>(t);
      while (!stop.load()) {
        const size_t page = i++ % kPages;
        const char c = file.At(page * kPage + i % kPage);
        if (c != static_cast<char>('a' + page) && c != '\0') wrong++;
      }
    });
  }
  threads.emplace_back([&] {
    int n = 0;
    while (!stop.load()) {
      MappedFile other(dir.File("other" + std::to_string(n++ % 4)), 1);
      if (other.Register() < 0) wrong++;
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  file.CutTo(4 * kPage);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  stop = true;
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(MappedRegions::LostFrom(slot), 4 * kPage);
  EXPECT_EQ(file.At(3 * kPage), 'd');
}

}  // namespace BLOOMKV_FILE_NAMESPACE
}  // namespace bloomkv
