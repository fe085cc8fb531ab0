// The POSIX Env: files through open/pread/mmap/write/fsync, locks through
// fcntl.
//
// Random-access files are read with pread (PosixRandomAccessFile), or, with
// EnvOptions::use_mmap_reads, mapped into memory (PosixMmapFile) while the
// Env's MmapLimiter allows. A mapped read hands out a pointer into the
// mapping: no system call, no copy. The mapping covers the file's size when
// it was opened, so reads past that size come back short exactly as pread's
// do at the end of the file. A file shrinking under its mapping (another
// process truncating it) or a page the disk cannot give back would raise
// SIGBUS and end the process; every mapping is guarded by MappedRegions, so
// those pages read as zeros instead and the reads that need them fail with
// Corruption (RandomAccessFile::Recheck), as pread's short read or EIO
// fails them.
//
// Thread-safety: PosixEnv is thread-safe. PosixRandomAccessFile uses pread,
// which has no shared file offset, and PosixMmapFile only reads its mapping,
// so one file serves concurrent readers.
// PosixLogger is thread-safe: each line is one write(2) to an O_APPEND file.
#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <limits>
#include <set>

#include "bloomkv/env.h"
#include "util/logging.h"
#include "util/mapped_regions.h"
#include "util/mutex.h"

namespace bloomkv {
namespace {

Status PosixError(const std::string& context, int err) {
  if (err == ENOENT) return Status::NotFound(context, std::strerror(err));
  return Status::IOError(context, std::strerror(err));
}

class PosixSequentialFile final : public SequentialFile {
 public:
  PosixSequentialFile(std::string fname, int fd)
      : fname_(std::move(fname)), fd_(fd) {}
  ~PosixSequentialFile() override { ::close(fd_); }

  Status Read(size_t n, Slice* result, char* scratch) override {
    size_t done = 0;
    while (done < n) {
      ssize_t r = ::read(fd_, scratch + done, n - done);
      if (r < 0) {
        if (errno == EINTR) continue;
        *result = Slice(scratch, done);
        return PosixError(fname_, errno);
      }
      if (r == 0) break;
      done += static_cast<size_t>(r);
    }
    *result = Slice(scratch, done);
    return Status::OK();
  }

  Status Skip(uint64_t n) override {
    // A skip that does not fit in off_t (cast to it, it would turn negative
    // and seek backwards) lands past any real file's end: seek to the end.
    const off_t cur = ::lseek(fd_, 0, SEEK_CUR);
    if (cur == static_cast<off_t>(-1)) return PosixError(fname_, errno);
    constexpr auto kMaxOff =
        static_cast<uint64_t>(std::numeric_limits<off_t>::max());
    off_t r;
    if (n > kMaxOff - static_cast<uint64_t>(cur)) {
      r = ::lseek(fd_, 0, SEEK_END);
    } else {
      r = ::lseek(fd_, static_cast<off_t>(n), SEEK_CUR);
    }
    if (r == static_cast<off_t>(-1)) return PosixError(fname_, errno);
    return Status::OK();
  }

 private:
  const std::string fname_;
  const int fd_;
};

class PosixRandomAccessFile final : public RandomAccessFile {
 public:
  PosixRandomAccessFile(std::string fname, int fd)
      : fname_(std::move(fname)), fd_(fd) {}
  ~PosixRandomAccessFile() override { ::close(fd_); }

  Status Read(uint64_t offset, size_t n, Slice* result,
              char* scratch) const override {
    // An offset off_t cannot hold lies past the end of any file: nothing to
    // read there, as for any other offset past the end (pread would fail).
    constexpr auto kMaxOff =
        static_cast<uint64_t>(std::numeric_limits<off_t>::max());
    if (offset > kMaxOff) {
      *result = Slice(scratch, 0);
      return Status::OK();
    }
    n = static_cast<size_t>(std::min<uint64_t>(n, kMaxOff - offset));
    size_t done = 0;
    while (done < n) {
      ssize_t r = ::pread(fd_, scratch + done, n - done,
                          static_cast<off_t>(offset + done));
      if (r < 0) {
        if (errno == EINTR) continue;
        *result = Slice(scratch, 0);
        return PosixError(fname_ + " at offset " + std::to_string(offset),
                          errno)
            .AtOffset(offset);
      }
      if (r == 0) break;
      done += static_cast<size_t>(r);
    }
    *result = Slice(scratch, done);
    return Status::OK();
  }

 private:
  const std::string fname_;
  const int fd_;
};

// Counts down the files an Env may still map. Thread-safe.
class MmapLimiter {
 public:
  explicit MmapLimiter(int max_files) : available_(max_files) {}
  MmapLimiter(const MmapLimiter&) = delete;
  MmapLimiter& operator=(const MmapLimiter&) = delete;

  // True if one more file may be mapped; pair it with Release().
  bool Acquire() {
    if (available_.fetch_sub(1, std::memory_order_relaxed) > 0) return true;
    available_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  void Release() { available_.fetch_add(1, std::memory_order_relaxed); }

 private:
  std::atomic<int> available_;
};

// A whole file mapped read-only and guarded by MappedRegions: a page the
// file no longer backs reads as zeros instead of ending the process, and
// reads from there on fail with Corruption. REQUIRES: limiter outlives the
// file.
class PosixMmapFile final : public RandomAccessFile {
 public:
  PosixMmapFile(std::string fname, const char* base, size_t length, int slot,
                MmapLimiter* limiter)
      : fname_(std::move(fname)),
        base_(base),
        length_(length),
        slot_(slot),
        limiter_(limiter) {}
  ~PosixMmapFile() override {
    MappedRegions::Unregister(slot_);
    ::munmap(const_cast<char*>(base_), length_);
    limiter_->Release();
  }

  Status Read(uint64_t offset, size_t n, Slice* result,
              char* /*scratch*/) const override {
    if (offset >= length_) {
      *result = Slice();
      return Status::OK();
    }
    const size_t at = static_cast<size_t>(offset);
    n = std::min(n, length_ - at);
    Status s = Recheck(offset, n);
    *result = s.ok() ? Slice(base_ + at, n) : Slice();
    return s;
  }

  void WillNeed(uint64_t offset, size_t n) const override {
    if (offset >= length_ || n == 0) return;
    static const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
    const uint64_t start = offset / page * page;
    const uint64_t end = offset + std::min<uint64_t>(n, length_ - offset);
    // A hint: its failure changes nothing but speed.
    ::madvise(const_cast<char*>(base_) + start,
              static_cast<size_t>(end - start), MADV_WILLNEED);
  }

  const char* MappedBytes() const override { return base_; }

  Status Recheck(uint64_t offset, size_t n) const override {
    const uint64_t lost = MappedRegions::LostFrom(slot_);
    if (lost == MappedRegions::kIntact || offset + n <= lost) {
      return Status::OK();
    }
    return Status::Corruption(
               fname_ +
               ": mapped bytes lost (the file was cut short under "
               "its mapping, or could not be read) at offset " +
               std::to_string(std::max<uint64_t>(offset, lost)))
        .AtOffset(offset);
  }

 private:
  const std::string fname_;
  const char* const base_;
  const size_t length_;
  const int slot_;
  MmapLimiter* const limiter_;
};

// Buffers appends, so that a WAL of many tiny records does not make a
// syscall per record, up to the file's next 2 MiB boundary: a file appended
// without flushes (a segment) is written in whole, aligned 2 MiB chunks,
// which a file system with large folios caches as huge pages, read by a
// mapping through one TLB entry each (docs/design.md). A failed write loses
// buffered bytes, so the first error is sticky: every later
// Append/Flush/Sync reports it instead of letting a Sync succeed over a hole
// in the file.
class PosixWritableFile final : public WritableFile {
 public:
  // offset: the file's size when opened (appends go to its end).
  PosixWritableFile(std::string fname, int fd, uint64_t offset)
      : fname_(std::move(fname)), fd_(fd), offset_(offset) {}
  ~PosixWritableFile() override {
    if (fd_ >= 0) Close().PermitUncheckedError();
  }

  Status Append(const Slice& data) override {
    if (!error_.ok()) return error_;
    const char* p = data.data();
    size_t n = data.size();
    while (n > 0) {
      if (buffer_.empty() && offset_ % kChunkSize == 0 && n >= kChunkSize) {
        const size_t whole = n - n % kChunkSize;  // no copy
        Status s = WriteRaw(p, whole);
        if (!s.ok()) return s;
        p += whole;
        n -= whole;
        continue;
      }
      // Up to the file's next chunk boundary, then written.
      const size_t room = static_cast<size_t>(
          kChunkSize - (offset_ + buffer_.size()) % kChunkSize);
      const size_t take = std::min(n, room);
      buffer_.append(p, take);
      p += take;
      n -= take;
      if (take == room) {
        Status s = FlushBuffer();
        if (!s.ok()) return s;
      }
    }
    return Status::OK();
  }

  Status Flush() override {
    if (!error_.ok()) return error_;
    return FlushBuffer();
  }

  Status Sync() override {
    if (!error_.ok()) return error_;
    Status s = FlushBuffer();
    if (!s.ok()) return s;
    if (::fdatasync(fd_) != 0) {
      // After a failed fsync the kernel may have dropped the dirty pages;
      // retrying cannot make them durable.
      error_ = PosixError(fname_, errno);
      return error_;
    }
    return Status::OK();
  }

  Status Close() override {
    Status s = error_.ok() ? FlushBuffer() : error_;
    if (fd_ >= 0 && ::close(fd_) != 0 && s.ok()) s = PosixError(fname_, errno);
    fd_ = -1;
    return s;
  }

 private:
  // The size of a huge page on x86-64 and on arm64 with 4 KiB pages.
  static constexpr uint64_t kChunkSize = uint64_t{2} << 20;

  Status FlushBuffer() {
    Status s = WriteRaw(buffer_.data(), buffer_.size());
    buffer_.clear();
    return s;
  }

  Status WriteRaw(const char* p, size_t n) {
    while (n > 0) {
      ssize_t r = ::write(fd_, p, n);
      if (r < 0) {
        if (errno == EINTR) continue;
        error_ = PosixError(fname_, errno);
        return error_;
      }
      p += r;
      n -= static_cast<size_t>(r);
      offset_ += static_cast<uint64_t>(r);
    }
    return Status::OK();
  }

  const std::string fname_;
  int fd_;
  uint64_t offset_;  // bytes in the file, buffer_ excluded
  std::string buffer_;
  Status error_;  // First write or sync failure; sticky.
};

// The info log: each line is formatted into one buffer and written with one
// write(2), so it reaches the file whole and at once (nothing stays buffered
// in the process). The mutex only matters when write(2) is short, which
// regular files do on errors such as a full disk: the rest of the line must
// follow before another thread's line starts. Errors are ignored.
class PosixLogger final : public Logger {
 public:
  explicit PosixLogger(int fd) : fd_(fd) {}
  ~PosixLogger() override { ::close(fd_); }

  void Logv(const char* format, va_list ap) override {
    const std::string line = FormatLogLine(format, ap);
    MutexLock guard(&mu_);
    const char* p = line.data();
    size_t n = line.size();
    while (n > 0) {
      ssize_t r = ::write(fd_, p, n);
      if (r < 0) {
        if (errno == EINTR) continue;
        return;  // the line is lost; the database carries on
      }
      p += r;
      n -= static_cast<size_t>(r);
    }
  }

 private:
  const int fd_;
  Mutex mu_;
};

#ifdef F_OFD_SETLK
constexpr int kSetLockCmd = F_OFD_SETLK;
#else
constexpr int kSetLockCmd = F_SETLK;
#endif

class PosixFileLock final : public FileLock {
 public:
  PosixFileLock(int fd, std::string fname) : fd(fd), fname(std::move(fname)) {}
  const int fd;
  const std::string fname;
};

constexpr int kMaxMmapFilesLimit = 1000000;

class PosixEnv final : public Env {
 public:
  explicit PosixEnv(const EnvOptions& options)
      : use_mmap_reads_(options.use_mmap_reads),
        mmap_limiter_(
            std::clamp(options.max_mmap_files, 0, kMaxMmapFilesLimit)) {}

  Status NewSequentialFile(const std::string& fname,
                           std::unique_ptr<SequentialFile>* result) override {
    int fd = ::open(fname.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return PosixError(fname, errno);
    *result = std::make_unique<PosixSequentialFile>(fname, fd);
    return Status::OK();
  }

  Status NewRandomAccessFile(
      const std::string& fname,
      std::unique_ptr<RandomAccessFile>* result) override {
    return OpenRandomAccess(fname, use_mmap_reads_, result);
  }
  Status NewShortLivedRandomAccessFile(
      const std::string& fname,
      std::unique_ptr<RandomAccessFile>* result) override {
    return OpenRandomAccess(fname, /*may_map=*/false, result);
  }

  Status NewWritableFile(const std::string& fname,
                         std::unique_ptr<WritableFile>* result) override {
    int fd =
        ::open(fname.c_str(), O_TRUNC | O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return PosixError(fname, errno);
    *result = std::make_unique<PosixWritableFile>(fname, fd, 0);
    return Status::OK();
  }

  Status NewAppendableFile(const std::string& fname,
                           std::unique_ptr<WritableFile>* result) override {
    int fd =
        ::open(fname.c_str(), O_APPEND | O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return PosixError(fname, errno);
    struct ::stat st;
    if (::fstat(fd, &st) != 0) {
      Status s = PosixError(fname, errno);
      ::close(fd);
      return s;
    }
    *result = std::make_unique<PosixWritableFile>(
        fname, fd, static_cast<uint64_t>(st.st_size));
    return Status::OK();
  }

  Status NewLogger(const std::string& fname,
                   std::unique_ptr<Logger>* result) override {
    int fd =
        ::open(fname.c_str(), O_APPEND | O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return PosixError(fname, errno);
    *result = std::make_unique<PosixLogger>(fd);
    return Status::OK();
  }

  bool FileExists(const std::string& fname) override {
    return ::access(fname.c_str(), F_OK) == 0;
  }

  Status GetChildren(const std::string& dir,
                     std::vector<std::string>* result) override {
    result->clear();
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) return PosixError(dir, errno);
    while (struct dirent* entry = ::readdir(d)) {
      if (std::strcmp(entry->d_name, ".") == 0 ||
          std::strcmp(entry->d_name, "..") == 0) {
        continue;
      }
      result->emplace_back(entry->d_name);
    }
    ::closedir(d);
    return Status::OK();
  }

  Status RemoveFile(const std::string& fname) override {
    if (::unlink(fname.c_str()) != 0) return PosixError(fname, errno);
    return Status::OK();
  }

  Status CreateDir(const std::string& dirname) override {
    if (::mkdir(dirname.c_str(), 0755) != 0) {
      if (errno == EEXIST && IsDirectory(dirname)) return Status::OK();
      return PosixError(dirname, errno);
    }
    return Status::OK();
  }

  Status RemoveDir(const std::string& dirname) override {
    if (::rmdir(dirname.c_str()) != 0) return PosixError(dirname, errno);
    return Status::OK();
  }

  Status GetFileSize(const std::string& fname, uint64_t* size) override {
    struct ::stat st;
    if (::stat(fname.c_str(), &st) != 0) {
      *size = 0;
      return PosixError(fname, errno);
    }
    *size = static_cast<uint64_t>(st.st_size);
    return Status::OK();
  }

  Status RenameFile(const std::string& src,
                    const std::string& target) override {
    if (::rename(src.c_str(), target.c_str()) != 0) {
      return PosixError(src + " -> " + target, errno);
    }
    return Status::OK();
  }

  Status LinkFile(const std::string& src, const std::string& target) override {
    if (::link(src.c_str(), target.c_str()) != 0) {
      return PosixError(src + " -> " + target, errno);
    }
    return Status::OK();
  }

  Status SyncDir(const std::string& dirname) override {
    int fd = ::open(dirname.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return PosixError(dirname, errno);
    Status s;
    if (::fsync(fd) != 0) s = PosixError(dirname, errno);
    ::close(fd);
    return s;
  }

  bool IsDirectory(const std::string& dirname) override {
    struct ::stat st;
    return ::stat(dirname.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
  }

  Status LockFile(const std::string& fname,
                  std::unique_ptr<FileLock>* lock) override {
    // Classic fcntl locks are per process: a second lock from this process
    // would succeed silently, so this process's own locks are tracked too.
    // Worse, closing any descriptor of the file (say, a tool reading every
    // file of the database directory) would drop the lock; open file
    // description locks, where available, belong to this descriptor only.
    // Only a lock held elsewhere is Busy; a file that cannot be opened or
    // locked at all (permissions, no space, a directory) is an IOError.
    MutexLock guard(&mu_);
    if (locked_.count(fname) != 0) {
      return Status::Busy("lock " + fname, "already held by this process");
    }
    int fd = ::open(fname.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return Status::IOError(fname, std::strerror(errno));
    struct ::flock f;
    std::memset(&f, 0, sizeof(f));
    f.l_type = F_WRLCK;
    f.l_whence = SEEK_SET;
    if (::fcntl(fd, kSetLockCmd, &f) != 0) {
      int err = errno;
      ::close(fd);
      // POSIX lets a lock held by another process fail with either.
      if (err == EAGAIN || err == EACCES) {
        return Status::Busy("lock " + fname, "held by another process");
      }
      return Status::IOError(fname, std::strerror(err));
    }
    locked_.insert(fname);
    *lock = std::make_unique<PosixFileLock>(fd, fname);
    return Status::OK();
  }

  Status UnlockFile(std::unique_ptr<FileLock> lock) override {
    if (lock == nullptr) return Status::InvalidArgument("UnlockFile: no lock");
    auto* l = static_cast<PosixFileLock*>(lock.get());
    MutexLock guard(&mu_);
    struct ::flock f;
    std::memset(&f, 0, sizeof(f));
    f.l_type = F_UNLCK;
    f.l_whence = SEEK_SET;
    Status s;
    if (::fcntl(l->fd, kSetLockCmd, &f) != 0) s = PosixError(l->fname, errno);
    ::close(l->fd);
    locked_.erase(l->fname);
    return s;
  }

  uint64_t NowMicros() override {
    return static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(
            std::chrono::steady_clock::now().time_since_epoch())
            .count());
  }

 private:
  // fname read through a mapping when may_map and fewer than
  // max_mmap_files are mapped, else with pread.
  Status OpenRandomAccess(const std::string& fname, bool may_map,
                          std::unique_ptr<RandomAccessFile>* result) {
    int fd = ::open(fname.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return PosixError(fname, errno);
    if (may_map && mmap_limiter_.Acquire()) {
      // An empty file cannot be mapped, and a failed mapping (no address
      // space, a file system without mmap) is no reason to fail: both are
      // read with pread instead.
      struct ::stat st;
      if (::fstat(fd, &st) == 0 && st.st_size > 0 &&
          static_cast<uint64_t>(st.st_size) <=
              std::numeric_limits<size_t>::max()) {
        const size_t length = static_cast<size_t>(st.st_size);
        void* base = ::mmap(nullptr, length, PROT_READ, MAP_SHARED, fd, 0);
        if (base != MAP_FAILED) {
          // A mapping that cannot be guarded is not used.
          const int slot = MappedRegions::Register(base, length);
          if (slot >= 0) {
            // Lookups read a block here and there: a fault reads its page
            // and no more (the read-around of a sequential reader could
            // pull in a whole segment per fault), and reads that want more
            // pages say so (WillNeed).
            ::madvise(base, length, MADV_RANDOM);
            ::close(fd);  // the mapping stays valid without the descriptor
            *result = std::make_unique<PosixMmapFile>(
                fname, static_cast<const char*>(base), length, slot,
                &mmap_limiter_);
            return Status::OK();
          }
          ::munmap(base, length);
        }
      }
      mmap_limiter_.Release();
    }
    *result = std::make_unique<PosixRandomAccessFile>(fname, fd);
    return Status::OK();
  }

  const bool use_mmap_reads_;
  MmapLimiter mmap_limiter_;
  Mutex mu_;
  std::set<std::string> locked_ GUARDED_BY(mu_);
};

}  // namespace

Env* Env::Default() {
  // Never deleted: outlives all users.
  static PosixEnv* env = new PosixEnv(EnvOptions());
  return env;
}

std::unique_ptr<Env> NewPosixEnv(const EnvOptions& options) {
  return std::make_unique<PosixEnv>(options);
}

}  // namespace bloomkv
