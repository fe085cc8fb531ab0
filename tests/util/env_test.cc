// Tests for the POSIX Env: file reads and writes, directory operations,
// atomic rename, and LockFile semantics within and across processes.
#include "bloomkv/env.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/testutil/test_util.h"
#include "util/random.h"

namespace bloomkv {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

class EnvTest : public testing::Test {
 protected:
  Env* env_ = Env::Default();
  test::TempDir dir_;
};

std::string ReadAll(Env* env, const std::string& fname) {
  std::string data;
  Status s = ReadFileToString(env, fname, &data);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return data;
}

TEST_F(EnvTest, WriteThenReadSequentially) {
  Random rnd(1);
  // Sizes straddle the writer's 64 KiB buffer: tiny, exactly full, larger.
  const std::vector<size_t> sizes = {0, 1, 100, 65536, 3, 200000, 65535, 7};
  std::string expected;
  const std::string fname = dir_.File("seq");
  {
    std::unique_ptr<WritableFile> f;
    ASSERT_TRUE(env_->NewWritableFile(fname, &f).ok());
    for (size_t n : sizes) {
      const std::string piece = test::RandomBytes(&rnd, n);
      ASSERT_TRUE(f->Append(piece).ok());
      expected += piece;
    }
    ASSERT_TRUE(f->Sync().ok());
    ASSERT_TRUE(f->Close().ok());
  }
  uint64_t size = 0;
  ASSERT_TRUE(env_->GetFileSize(fname, &size).ok());
  EXPECT_EQ(expected.size(), size);

  std::unique_ptr<SequentialFile> f;
  ASSERT_TRUE(env_->NewSequentialFile(fname, &f).ok());
  std::string got;
  std::string scratch(10007, '\0');
  while (true) {
    Slice chunk;
    ASSERT_TRUE(f->Read(scratch.size(), &chunk, scratch.data()).ok());
    if (chunk.empty()) break;
    got.append(chunk.data(), chunk.size());
  }
  EXPECT_EQ(expected, got);
}

TEST_F(EnvTest, SequentialSkip) {
  const std::string fname = dir_.File("skip");
  ASSERT_TRUE(WriteStringToFile(env_, "0123456789", fname, false).ok());
  std::unique_ptr<SequentialFile> f;
  ASSERT_TRUE(env_->NewSequentialFile(fname, &f).ok());
  char scratch[16];
  Slice r;
  ASSERT_TRUE(f->Read(3, &r, scratch).ok());
  EXPECT_EQ(Slice("012"), r);
  ASSERT_TRUE(f->Skip(4).ok());
  ASSERT_TRUE(f->Read(16, &r, scratch).ok());
  EXPECT_EQ(Slice("789"), r);      // short read at end of file
  ASSERT_TRUE(f->Skip(100).ok());  // past the end is not an error
  ASSERT_TRUE(f->Read(16, &r, scratch).ok());
  EXPECT_TRUE(r.empty());
}

TEST_F(EnvTest, SkipBeyondOffsetRangeLandsAtEnd) {
  // A skip too large for off_t must not wrap around and seek backwards.
  const std::string fname = dir_.File("skipmax");
  ASSERT_TRUE(WriteStringToFile(env_, "0123456789", fname, false).ok());
  std::unique_ptr<SequentialFile> f;
  ASSERT_TRUE(env_->NewSequentialFile(fname, &f).ok());
  char scratch[16];
  Slice r;
  ASSERT_TRUE(f->Read(5, &r, scratch).ok());
  ASSERT_TRUE(f->Skip(std::numeric_limits<uint64_t>::max()).ok());
  ASSERT_TRUE(f->Read(16, &r, scratch).ok());
  EXPECT_TRUE(r.empty()) << r.ToEscapedString();
}

TEST_F(EnvTest, RandomAccessReads) {
  Random rnd(2);
  const std::string data = test::RandomBytes(&rnd, 100000);
  const std::string fname = dir_.File("random");
  ASSERT_TRUE(WriteStringToFile(env_, data, fname, true).ok());
  std::unique_ptr<RandomAccessFile> f;
  ASSERT_TRUE(env_->NewRandomAccessFile(fname, &f).ok());
  std::string scratch(5000, '\0');
  for (int i = 0; i < 200; i++) {
    const uint64_t off = rnd.Uniform(data.size());
    const size_t n = rnd.Uniform(scratch.size() + 1);
    Slice r;
    ASSERT_TRUE(f->Read(off, n, &r, scratch.data()).ok());
    const size_t want = std::min<size_t>(n, data.size() - off);
    ASSERT_EQ(want, r.size()) << off << " " << n;
    ASSERT_EQ(Slice(data.data() + off, want), r);
  }
  // At and past the end: an empty result, not an error.
  for (uint64_t off :
       {uint64_t{data.size()}, uint64_t{data.size()} + 1, uint64_t{1} << 40}) {
    Slice r("garbage");
    ASSERT_TRUE(f->Read(off, 10, &r, scratch.data()).ok()) << off;
    EXPECT_TRUE(r.empty()) << off;
  }
  // Crossing the end: the bytes that exist.
  Slice r;
  ASSERT_TRUE(f->Read(data.size() - 3, 10, &r, scratch.data()).ok());
  EXPECT_EQ(Slice(data.data() + data.size() - 3, 3), r);
}

TEST_F(EnvTest, ConcurrentRandomReads) {
  Random rnd(3);
  const std::string data = test::RandomBytes(&rnd, 1 << 16);
  const std::string fname = dir_.File("shared");
  ASSERT_TRUE(WriteStringToFile(env_, data, fname, false).ok());
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

TEST_F(EnvTest, AppendableFileAppends) {
  const std::string fname = dir_.File("log");
  {
    std::unique_ptr<WritableFile> f;
    ASSERT_TRUE(env_->NewAppendableFile(fname, &f).ok());  // creates it
    ASSERT_TRUE(f->Append("first,").ok());
    ASSERT_TRUE(f->Close().ok());
  }
  {
    std::unique_ptr<WritableFile> f;
    ASSERT_TRUE(env_->NewAppendableFile(fname, &f).ok());
    ASSERT_TRUE(f->Append("second").ok());
    // No Close: the destructor must flush the buffered bytes.
  }
  EXPECT_EQ("first,second", ReadAll(env_, fname));
  {
    std::unique_ptr<WritableFile> f;
    ASSERT_TRUE(env_->NewWritableFile(fname, &f).ok());  // truncates
    ASSERT_TRUE(f->Close().ok());
  }
  EXPECT_EQ("", ReadAll(env_, fname));
}

TEST_F(EnvTest, FlushMakesDataVisibleBeforeClose) {
  const std::string fname = dir_.File("flush");
  std::unique_ptr<WritableFile> f;
  ASSERT_TRUE(env_->NewWritableFile(fname, &f).ok());
  ASSERT_TRUE(f->Append("abc").ok());
  ASSERT_TRUE(f->Flush().ok());
  EXPECT_EQ("abc", ReadAll(env_, fname));
  ASSERT_TRUE(f->Close().ok());
  ASSERT_TRUE(f->Close().ok());  // a second Close is harmless
}

// A writable file cuts its writes at 2 MiB file offsets: appends of every
// size (one byte to several chunks), flushes anywhere and files opened for
// appending at any size must still leave exactly the bytes appended.
TEST_F(EnvTest, AppendsOfEverySizeKeepTheirBytesInOrder) {
  for (uint64_t seed : test::TestSeeds()) {
    SCOPED_TRACE("seed=" + std::to_string(seed));
    Random rnd(seed);
    const std::string fname = dir_.File("appends" + std::to_string(seed));
    std::string expected;
    std::unique_ptr<WritableFile> f;
    for (int reopen = 0; reopen < 3; reopen++) {
      ASSERT_TRUE((reopen == 0 ? env_->NewWritableFile(fname, &f)
                               : env_->NewAppendableFile(fname, &f))
                      .ok());
      for (int i = 0; i < 40; i++) {
        // Mostly block-sized, some tiny, some longer than a chunk.
        const size_t n = rnd.OneIn(16)  ? rnd.Uniform(5 << 20)
                         : rnd.OneIn(4) ? rnd.Uniform(16)
                                        : 1 + rnd.Uniform(8 << 10);
        const std::string piece = test::RandomBytes(&rnd, n);
        ASSERT_TRUE(f->Append(piece).ok());
        expected += piece;
        if (rnd.OneIn(10)) {
          ASSERT_TRUE(f->Flush().ok());
          uint64_t size = 0;
          ASSERT_TRUE(env_->GetFileSize(fname, &size).ok());
          ASSERT_EQ(expected.size(), size);
        }
      }
      ASSERT_TRUE(f->Close().ok());
      ASSERT_TRUE(ReadAll(env_, fname) == expected);
    }
  }
}

TEST_F(EnvTest, WriteErrorIsSticky) {
  // /dev/full accepts opens and fails every write with ENOSPC.
  if (!env_->FileExists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  std::unique_ptr<WritableFile> f;
  Status s = env_->NewAppendableFile("/dev/full", &f);
  if (!s.ok()) GTEST_SKIP() << s.ToString();
  ASSERT_TRUE(f->Append("buffered").ok());
  EXPECT_TRUE(f->Flush().IsIOError());
  // The buffered bytes are lost: nothing may now report success as if the
  // file were intact.
  EXPECT_TRUE(f->Append("more").IsIOError());
  EXPECT_TRUE(f->Sync().IsIOError());
  EXPECT_TRUE(f->Close().IsIOError());
}

TEST_F(EnvTest, MissingFilesAreNotFound) {
  const std::string missing = dir_.File("missing");
  std::unique_ptr<SequentialFile> sf;
  EXPECT_TRUE(env_->NewSequentialFile(missing, &sf).IsNotFound());
  std::unique_ptr<RandomAccessFile> rf;
  EXPECT_TRUE(env_->NewRandomAccessFile(missing, &rf).IsNotFound());
  uint64_t size = 123;
  EXPECT_TRUE(env_->GetFileSize(missing, &size).IsNotFound());
  EXPECT_TRUE(env_->RemoveFile(missing).IsNotFound());
  EXPECT_TRUE(env_->RenameFile(missing, dir_.File("x")).IsNotFound());
  EXPECT_FALSE(env_->FileExists(missing));
  std::vector<std::string> children;
  EXPECT_TRUE(env_->GetChildren(missing, &children).IsNotFound());
  std::string data;
  EXPECT_TRUE(ReadFileToString(env_, missing, &data).IsNotFound());
  // The message names the file.
  Status s = env_->NewSequentialFile(missing, &sf);
  EXPECT_NE(std::string::npos, s.ToString().find(missing)) << s.ToString();
}

TEST_F(EnvTest, GetChildrenAndRemove) {
  std::vector<std::string> children;
  ASSERT_TRUE(env_->GetChildren(dir_.path(), &children).ok());
  EXPECT_TRUE(children.empty());
  ASSERT_TRUE(WriteStringToFile(env_, "1", dir_.File("a"), false).ok());
  ASSERT_TRUE(WriteStringToFile(env_, "22", dir_.File("b"), false).ok());
  ASSERT_TRUE(env_->CreateDir(dir_.File("sub")).ok());
  children = {"stale"};  // must be replaced, not appended to
  ASSERT_TRUE(env_->GetChildren(dir_.path(), &children).ok());
  std::sort(children.begin(), children.end());
  EXPECT_EQ((std::vector<std::string>{"a", "b", "sub"}), children);

  EXPECT_TRUE(env_->FileExists(dir_.File("a")));
  ASSERT_TRUE(env_->RemoveFile(dir_.File("a")).ok());
  EXPECT_FALSE(env_->FileExists(dir_.File("a")));
  ASSERT_TRUE(env_->RemoveDir(dir_.File("sub")).ok());
  EXPECT_FALSE(env_->IsDirectory(dir_.File("sub")));
  ASSERT_TRUE(env_->GetChildren(dir_.path(), &children).ok());
  EXPECT_EQ((std::vector<std::string>{"b"}), children);
}

TEST_F(EnvTest, CreateDirIsIdempotentAndIsDirectory) {
  const std::string sub = dir_.File("sub");
  EXPECT_FALSE(env_->IsDirectory(sub));
  ASSERT_TRUE(env_->CreateDir(sub).ok());
  ASSERT_TRUE(env_->CreateDir(sub).ok());
  EXPECT_TRUE(env_->IsDirectory(sub));

  const std::string file = dir_.File("file");
  ASSERT_TRUE(WriteStringToFile(env_, "x", file, false).ok());
  EXPECT_FALSE(env_->IsDirectory(file));
  EXPECT_FALSE(env_->CreateDir(file).ok());  // a file is in the way
  EXPECT_FALSE(env_->CreateDir(dir_.File("no/such/parent")).ok());
}

TEST_F(EnvTest, SyncDir) {
  ASSERT_TRUE(WriteStringToFile(env_, "x", dir_.File("f"), true).ok());
  EXPECT_TRUE(env_->SyncDir(dir_.path()).ok());
  EXPECT_FALSE(env_->SyncDir(dir_.File("missing")).ok());
}

TEST_F(EnvTest, RenameReplacesTarget) {
  const std::string src = dir_.File("CURRENT.tmp");
  const std::string dst = dir_.File("CURRENT");
  ASSERT_TRUE(WriteStringToFile(env_, "old", dst, true).ok());
  ASSERT_TRUE(WriteStringToFile(env_, "new", src, true).ok());
  ASSERT_TRUE(env_->RenameFile(src, dst).ok());
  EXPECT_EQ("new", ReadAll(env_, dst));
  EXPECT_FALSE(env_->FileExists(src));
  ASSERT_TRUE(env_->SyncDir(dir_.path()).ok());
}

TEST_F(EnvTest, RenameIsAtomicForReaders) {
  // A reader racing with renames sees one complete version or the other,
  // never a missing or partial file.
  const std::string dst = dir_.File("CURRENT");
  const std::string a(3000, 'a');
  const std::string b(5000, 'b');
  ASSERT_TRUE(WriteStringToFile(env_, a, dst, false).ok());
  std::atomic<bool> done{false};
  std::atomic<int> bad{0};
  std::thread reader([&] {
    while (!done.load()) {
      std::string got;
      if (!ReadFileToString(env_, dst, &got).ok() || (got != a && got != b)) {
        bad++;
      }
    }
  });
  for (int i = 0; i < 200; i++) {
    const std::string tmp = dir_.File("tmp");
    ASSERT_TRUE(WriteStringToFile(env_, i % 2 ? a : b, tmp, false).ok());
    ASSERT_TRUE(env_->RenameFile(tmp, dst).ok());
  }
  done = true;
  reader.join();
  EXPECT_EQ(0, bad.load());
}

TEST_F(EnvTest, ReadWriteStringHelpers) {
  Random rnd(4);
  const std::string data = test::RandomBytes(&rnd, 300000);
  const std::string fname = dir_.File("blob");
  ASSERT_TRUE(WriteStringToFile(env_, data, fname, true).ok());
  EXPECT_EQ(data, ReadAll(env_, fname));
  // Writing into a missing directory fails.
  EXPECT_FALSE(
      WriteStringToFile(env_, data, dir_.File("nodir/blob"), false).ok());
}

TEST_F(EnvTest, NowMicrosDoesNotGoBackwards) {
  uint64_t last = env_->NowMicros();
  for (int i = 0; i < 1000; i++) {
    const uint64_t now = env_->NowMicros();
    ASSERT_GE(now, last);
    last = now;
  }
}

TEST(TempDirTest, RemovesEverythingInside) {
  std::string path;
  {
    test::TempDir dir("envtest");
    path = dir.path();
    Env* env = Env::Default();
    EXPECT_TRUE(env->IsDirectory(path));
    ASSERT_TRUE(env->CreateDir(dir.File("a")).ok());
    ASSERT_TRUE(env->CreateDir(dir.File("a/b")).ok());
    ASSERT_TRUE(WriteStringToFile(env, "x", dir.File("a/b/f"), false).ok());
    ASSERT_TRUE(WriteStringToFile(env, "y", dir.File("g"), false).ok());
    test::TempDir other("envtest");
    EXPECT_NE(path, other.path());
  }
  EXPECT_FALSE(Env::Default()->FileExists(path));
}

// ---- locks ----

// Child exit codes of TryLockInChild.
constexpr int kChildLocked = 0;
constexpr int kChildBlocked = 1;
constexpr int kChildError = 2;

// Forks a process that tries to take a write lock on fname with plain fcntl
// and reports the outcome as its exit code. The child cannot use the Env:
// it would inherit the parent's record of its own locks.
int TryLockInChild(const std::string& fname) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int fd = ::open(fname.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) ::_exit(kChildError);
    struct ::flock f;
    std::memset(&f, 0, sizeof(f));
    f.l_type = F_WRLCK;
    f.l_whence = SEEK_SET;
    if (::fcntl(fd, F_SETLK, &f) == 0) ::_exit(kChildLocked);
    ::_exit(errno == EAGAIN || errno == EACCES ? kChildBlocked : kChildError);
  }
  if (pid < 0) return -1;
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

TEST_F(EnvTest, LockFileExcludesThisProcess) {
  const std::string fname = dir_.File("LOCK");
  std::unique_ptr<FileLock> lock;
  ASSERT_TRUE(env_->LockFile(fname, &lock).ok());
  ASSERT_NE(nullptr, lock);
  EXPECT_TRUE(env_->FileExists(fname));
  std::unique_ptr<FileLock> second;
  EXPECT_TRUE(env_->LockFile(fname, &second).IsIOError());
  EXPECT_EQ(nullptr, second);
  ASSERT_TRUE(env_->UnlockFile(std::move(lock)).ok());
  ASSERT_TRUE(env_->LockFile(fname, &second).ok());
  ASSERT_TRUE(env_->UnlockFile(std::move(second)).ok());
}

TEST_F(EnvTest, LockFileExcludesOtherProcesses) {
  const std::string fname = dir_.File("LOCK");
  EXPECT_EQ(kChildLocked, TryLockInChild(fname));  // free: child gets it
  std::unique_ptr<FileLock> lock;
  ASSERT_TRUE(env_->LockFile(fname, &lock).ok());
  EXPECT_EQ(kChildBlocked, TryLockInChild(fname));
  ASSERT_TRUE(env_->UnlockFile(std::move(lock)).ok());
  EXPECT_EQ(kChildLocked, TryLockInChild(fname));
}

TEST_F(EnvTest, LockSurvivesOtherDescriptorsOfTheFileClosing) {
  // Reading the lock file opens and closes another descriptor for it; with
  // per-process fcntl locks that close would silently release the lock.
  const std::string fname = dir_.File("LOCK");
  std::unique_ptr<FileLock> lock;
  ASSERT_TRUE(env_->LockFile(fname, &lock).ok());
  std::string contents;
  ASSERT_TRUE(ReadFileToString(env_, fname, &contents).ok());
  EXPECT_EQ(kChildBlocked, TryLockInChild(fname));
  ASSERT_TRUE(env_->UnlockFile(std::move(lock)).ok());
}

TEST_F(EnvTest, LockHeldByAnotherProcessFails) {
  const std::string fname = dir_.File("LOCK");
  int to_child[2];
  int from_child[2];
  ASSERT_EQ(0, ::pipe(to_child));
  ASSERT_EQ(0, ::pipe(from_child));
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    // Child: lock, tell the parent, hold until told to exit.
    const int fd = ::open(fname.c_str(), O_RDWR | O_CREAT, 0644);
    struct ::flock f;
    std::memset(&f, 0, sizeof(f));
    f.l_type = F_WRLCK;
    f.l_whence = SEEK_SET;
    const char ok = (fd >= 0 && ::fcntl(fd, F_SETLK, &f) == 0) ? 'y' : 'n';
    if (::write(from_child[1], &ok, 1) != 1) ::_exit(2);
    char c;
    if (::read(to_child[0], &c, 1) != 1) ::_exit(2);
    ::_exit(0);
  }
  char ok = 0;
  ASSERT_EQ(1, ::read(from_child[0], &ok, 1));
  ASSERT_EQ('y', ok);
  std::unique_ptr<FileLock> lock;
  Status s = env_->LockFile(fname, &lock);
  EXPECT_TRUE(s.IsIOError()) << s.ToString();
  EXPECT_NE(std::string::npos, s.ToString().find(fname)) << s.ToString();
  ASSERT_EQ(1, ::write(to_child[1], "x", 1));
  int status = 0;
  ASSERT_EQ(pid, ::waitpid(pid, &status, 0));
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  for (int fd : {to_child[0], to_child[1], from_child[0], from_child[1]}) {
    ::close(fd);
  }
  // The child's exit released its lock; the failed attempt left no record.
  ASSERT_TRUE(env_->LockFile(fname, &lock).ok());
  ASSERT_TRUE(env_->UnlockFile(std::move(lock)).ok());
}

TEST_F(EnvTest, UnlockNullIsInvalidArgument) {
  EXPECT_TRUE(env_->UnlockFile(nullptr).IsInvalidArgument());
}

TEST_F(EnvTest, LockInMissingDirectoryFails) {
  std::unique_ptr<FileLock> lock;
  EXPECT_FALSE(env_->LockFile(dir_.File("nodir/LOCK"), &lock).ok());
}

}  // namespace
}  // namespace bloomkv
