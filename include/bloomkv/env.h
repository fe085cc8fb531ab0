// Env: the file-system interface every byte of bloomkv IO goes through.
//
// Tests and benchmarks wrap an Env (see EnvWrapper) to inject faults, drop
// unsynced data or count every read that reaches a file. Env::Default() is a
// POSIX implementation that maps random-access files into memory
// (EnvOptions::use_mmap_reads); NewPosixEnv makes one with other
// EnvOptions, e.g. one that reads them with pread(2).
//
// Thread-safety: Env methods are thread-safe. A RandomAccessFile may be read
// by many threads at once, and so may a Logger. SequentialFile and
// WritableFile objects require external synchronization.
#ifndef BLOOMKV_INCLUDE_ENV_H_
#define BLOOMKV_INCLUDE_ENV_H_

#include <cstdarg>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bloomkv/slice.h"
#include "bloomkv/status.h"

namespace bloomkv {

// A file read from start to end, e.g. a write-ahead log during recovery.
class SequentialFile {
 public:
  SequentialFile() = default;
  SequentialFile(const SequentialFile&) = delete;
  SequentialFile& operator=(const SequentialFile&) = delete;
  virtual ~SequentialFile();

  // Reads up to n bytes. *result points either into scratch[0..n-1] or at
  // data the file owns; fewer than n bytes means end of file.
  // REQUIRES: scratch has room for n bytes.
  virtual Status Read(size_t n, Slice* result, char* scratch) = 0;
  // Skips n bytes; skipping past the end is not an error (the next Read
  // returns nothing).
  virtual Status Skip(uint64_t n) = 0;
};

// A file read at arbitrary offsets, e.g. a segment file. Thread-safe.
class RandomAccessFile {
 public:
  RandomAccessFile() = default;
  RandomAccessFile(const RandomAccessFile&) = delete;
  RandomAccessFile& operator=(const RandomAccessFile&) = delete;
  virtual ~RandomAccessFile();

  // Reads up to n bytes at offset. *result points either into scratch or at
  // data the file owns, which must stay valid and unchanged while the file
  // is open (a memory-mapped file); fewer than n bytes means the read
  // crossed the end of the file. REQUIRES: scratch has room for n bytes.
  virtual Status Read(uint64_t offset, size_t n, Slice* result,
                      char* scratch) const = 0;

  // For a file whose Read returns memory it owns (a mapping): Corruption,
  // naming the file and offset, if any of the n bytes at offset that Read
  // returned are no longer the file's, OK otherwise. A page of a mapping
  // that the file no longer backs (cut short by another process) or that
  // could not be read (a disk error) reads as zeros instead of ending the
  // process; a caller that used such bytes without checking them against a
  // checksum calls this once it is done with them, before it answers. A
  // file that wraps another and passes its Read results through must pass
  // this through too. Default: OK (the file copies into scratch, and Read
  // reports its errors).
  virtual Status Recheck(uint64_t offset, size_t n) const;

  // A hint that the n bytes at offset are about to be read whole (a
  // metadata block, a scan's next stretch, a data block across a page
  // boundary while the store is not in memory): a mapped file, whose pages
  // fault in one at a time (its mapping is marked for random access, so a
  // fault reads no more than its page), asks the kernel for all of them at
  // once. A file that wraps another passes it on. Default: nothing.
  virtual void WillNeed(uint64_t offset, size_t n) const;

  // For a file whose Read returns memory it owns and that holds the whole
  // file (a mapping): the address of its first byte, where Read(offset)
  // would return offset bytes further on while the file is open. A reader
  // may use bytes it has read and verified through Read again from there
  // without calling Read, and calls Recheck once done with them, as for
  // bytes Read returned. Default: null (reads go through Read). A file that
  // wraps another returns null unless every read of its own would return
  // the other's bytes unchanged.
  virtual const char* MappedBytes() const;
};

// A file written sequentially. Buffering is allowed: data is only guaranteed
// to reach the OS after Flush() and stable storage after Sync().
class WritableFile {
 public:
  WritableFile() = default;
  WritableFile(const WritableFile&) = delete;
  WritableFile& operator=(const WritableFile&) = delete;
  virtual ~WritableFile();

  virtual Status Append(const Slice& data) = 0;
  virtual Status Flush() = 0;
  // Flushes, then fsyncs the file's data (fdatasync or better).
  virtual Status Sync() = 0;
  virtual Status Close() = 0;
};

// An advisory lock on a file, held by this process until UnlockFile.
class FileLock {
 public:
  FileLock() = default;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  virtual ~FileLock();
};

// Receives the info log: one human-readable line per event (open, flush,
// compaction, error...), see docs/operations.md. Set Options::info_log to
// send it to the application's own logger.
// Thread-safety: Logv is called from several threads at once, sometimes with
// the database's mutex held, so it must be quick (no more IO than one
// buffered write), must not call back into the database, and must swallow
// its own failures: the database never fails because a log line was lost.
class Logger {
 public:
  Logger() = default;
  Logger(const Logger&) = delete;
  Logger& operator=(const Logger&) = delete;
  virtual ~Logger();

  // Writes one line, formatted like vprintf(format, ap); a trailing newline
  // is optional.
  virtual void Logv(const char* format, va_list ap) = 0;
};

// How a POSIX Env (NewPosixEnv) reads files.
struct EnvOptions {
  // Map files opened with NewRandomAccessFile (segment files) into memory
  // while fewer than max_mmap_files are mapped, so that a block read is a
  // memory access instead of a pread(2) system call and a copy. Their reads
  // then return data the file owns (RandomAccessFile::Read). A file's size
  // is taken when it is opened: bytes appended later are not read. A page
  // the file no longer backs (another process, a backup or restore tool,
  // cut it short) or that the disk cannot give back raises SIGBUS, which a
  // process-wide handler, installed with the first mapping and passing on
  // every SIGBUS that is not a mapped file's, survives: those pages read
  // as zeros and the reads that need them fail with Corruption naming the
  // file, as with pread. An application that installs a SIGBUS handler of
  // its own after the first file was mapped takes that over: lost pages
  // then end the process; one that wants no handler at all turns mapped
  // reads off. A mapping is marked for random access, so that a page fault
  // reads its page only; a metadata block and a scan's next stretch ask for
  // all their pages at once (RandomAccessFile::WillNeed), and so does a
  // data block that straddles two pages when the first reads of blocks
  // have been waiting for the device. The pages a
  // mapping touches count in the process's resident set (as page cache the
  // kernel can take back), not in the heap.
  //
  // Default: true. Mapped hits ran 2.3 times as fast as pread at 10^6 links
  // held by the page cache, and level with or faster than pread in a 10^7
  // store held to half its size in memory, reading a third of the bytes
  // from the device per hit (docs/benchmarks.md, "Mapped reads by
  // default"). With pread each open segment holds a file descriptor (see
  // Options::max_open_files).
  bool use_mmap_reads = true;

  // Files mapped at once by this Env; beyond it files are read with
  // pread(2) (each mapped file also keeps no file descriptor open).
  // Default: 1000. Range: [0, 1000000].
  int max_mmap_files = 1000;
};

class Env {
 public:
  Env() = default;
  Env(const Env&) = delete;
  Env& operator=(const Env&) = delete;
  virtual ~Env();

  // The process-wide POSIX Env. Never deleted.
  static Env* Default();

  virtual Status NewSequentialFile(const std::string& fname,
                                   std::unique_ptr<SequentialFile>* result) = 0;
  virtual Status NewRandomAccessFile(
      const std::string& fname, std::unique_ptr<RandomAccessFile>* result) = 0;
  // As NewRandomAccessFile, for a file expected to serve a few reads and be
  // closed again: a segment the table cache reopens while it cycles through
  // more segments than it may keep open. An Env that maps files
  // (EnvOptions::use_mmap_reads) reads this one with pread(2) instead:
  // mapping a file for a few reads costs more than it saves, and each
  // unmapping interrupts the other cores running the process (a TLB
  // shootdown). Default: NewRandomAccessFile. EnvWrapper keeps that
  // default, so that a wrapper which overrides NewRandomAccessFile sees
  // these opens too; one that should pass the hint on overrides this as
  // well.
  virtual Status NewShortLivedRandomAccessFile(
      const std::string& fname, std::unique_ptr<RandomAccessFile>* result);
  // Creates a new file, truncating any existing one.
  virtual Status NewWritableFile(const std::string& fname,
                                 std::unique_ptr<WritableFile>* result) = 0;
  // Opens a file for appending, creating it if missing.
  virtual Status NewAppendableFile(const std::string& fname,
                                   std::unique_ptr<WritableFile>* result) = 0;
  // Opens fname for appending (creating it if missing) as a Logger that
  // writes each line, prefixed with the UTC time in microseconds and the
  // thread id, as one flushed write: lines from different threads never
  // interleave. The default writes through NewAppendableFile.
  virtual Status NewLogger(const std::string& fname,
                           std::unique_ptr<Logger>* result);

  virtual bool FileExists(const std::string& fname) = 0;
  // Names (not paths) of the entries of dir, without "." and "..".
  virtual Status GetChildren(const std::string& dir,
                             std::vector<std::string>* result) = 0;
  virtual Status RemoveFile(const std::string& fname) = 0;
  // OK if the directory already exists.
  virtual Status CreateDir(const std::string& dirname) = 0;
  virtual Status RemoveDir(const std::string& dirname) = 0;
  virtual Status GetFileSize(const std::string& fname, uint64_t* size) = 0;
  // Atomically replaces target (if any) with src.
  virtual Status RenameFile(const std::string& src,
                            const std::string& target) = 0;
  // Makes target a second name (hard link) of the existing file src.
  // NotSupported when the Env has no links (the default); an IOError when
  // the filesystem refuses, e.g. across devices. Callers fall back to a copy.
  virtual Status LinkFile(const std::string& src, const std::string& target);
  // fsyncs a directory so that entries created, renamed or removed in it
  // survive a crash.
  virtual Status SyncDir(const std::string& dirname) = 0;
  // True when dirname exists and is a directory.
  virtual bool IsDirectory(const std::string& dirname) = 0;

  // Takes an exclusive lock on fname (created if missing). Fails with
  // Status::Busy (an IOError whose IsBusy() is true) if another process —
  // or this one — already holds it, and with a plain IOError if the file
  // cannot be created or locked at all: the database then reports "in use"
  // only for the former.
  virtual Status LockFile(const std::string& fname,
                          std::unique_ptr<FileLock>* lock) = 0;
  virtual Status UnlockFile(std::unique_ptr<FileLock> lock) = 0;

  // Microseconds since some fixed point; for measuring intervals.
  virtual uint64_t NowMicros() = 0;

  // Blocks the calling thread for about micros microseconds: how the DB
  // paces writes, so that a test Env with a simulated clock can make time
  // pass without waiting. The default sleeps.
  virtual void SleepForMicroseconds(uint64_t micros);
};

// Forwards every call to another Env; subclass it to override a few calls.
class EnvWrapper : public Env {
 public:
  // REQUIRES: target outlives this wrapper.
  explicit EnvWrapper(Env* target) : target_(target) {}
  Env* target() const { return target_; }

  Status NewSequentialFile(const std::string& f,
                           std::unique_ptr<SequentialFile>* r) override {
    return target_->NewSequentialFile(f, r);
  }
  Status NewRandomAccessFile(const std::string& f,
                             std::unique_ptr<RandomAccessFile>* r) override {
    return target_->NewRandomAccessFile(f, r);
  }
  Status NewWritableFile(const std::string& f,
                         std::unique_ptr<WritableFile>* r) override {
    return target_->NewWritableFile(f, r);
  }
  Status NewAppendableFile(const std::string& f,
                           std::unique_ptr<WritableFile>* r) override {
    return target_->NewAppendableFile(f, r);
  }
  Status NewLogger(const std::string& f, std::unique_ptr<Logger>* r) override {
    return target_->NewLogger(f, r);
  }
  bool FileExists(const std::string& f) override {
    return target_->FileExists(f);
  }
  Status GetChildren(const std::string& dir,
                     std::vector<std::string>* r) override {
    return target_->GetChildren(dir, r);
  }
  Status RemoveFile(const std::string& f) override {
    return target_->RemoveFile(f);
  }
  Status CreateDir(const std::string& d) override {
    return target_->CreateDir(d);
  }
  Status RemoveDir(const std::string& d) override {
    return target_->RemoveDir(d);
  }
  Status GetFileSize(const std::string& f, uint64_t* s) override {
    return target_->GetFileSize(f, s);
  }
  Status RenameFile(const std::string& s, const std::string& t) override {
    return target_->RenameFile(s, t);
  }
  Status LinkFile(const std::string& s, const std::string& t) override {
    return target_->LinkFile(s, t);
  }
  Status SyncDir(const std::string& d) override { return target_->SyncDir(d); }
  bool IsDirectory(const std::string& d) override {
    return target_->IsDirectory(d);
  }
  Status LockFile(const std::string& f, std::unique_ptr<FileLock>* l) override {
    return target_->LockFile(f, l);
  }
  Status UnlockFile(std::unique_ptr<FileLock> l) override {
    return target_->UnlockFile(std::move(l));
  }
  uint64_t NowMicros() override { return target_->NowMicros(); }
  void SleepForMicroseconds(uint64_t micros) override {
    target_->SleepForMicroseconds(micros);
  }

 private:
  Env* const target_;
};

// A new POSIX Env with these options. Env::Default() is one with the default
// options; an Env made here may be used (as Options::env) wherever it is.
// REQUIRES: the returned Env outlives every database and file using it.
std::unique_ptr<Env> NewPosixEnv(const EnvOptions& options);

// Reads the whole file into *data.
Status ReadFileToString(Env* env, const std::string& fname, std::string* data);
// Writes data to a new file fname; with sync, fsyncs it before closing.
Status WriteStringToFile(Env* env, const Slice& data, const std::string& fname,
                         bool sync);

}  // namespace bloomkv

#endif  // BLOOMKV_INCLUDE_ENV_H_
