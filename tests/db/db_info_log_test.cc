// The info log, seen from the database: what it tells about open, recovery,
// flushes, compactions, stalls, errors and deleted files; the LOG file and
// its rotation; that a read-only open or a failed open leaves LOG alone; and
// that the info log can never make the database fail.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <mutex>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "bloomkv/db.h"
#include "bloomkv/env.h"
#include "db/filename.h"
#include "db/info_log.h"
#include "tests/testutil/capturing_logger.h"
#include "tests/testutil/fault_env.h"
#include "tests/testutil/test_util.h"
#include "util/random.h"

namespace bloomkv {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

// Keeps every line logged, as the application's own logger would.
using test::CapturingLogger;

// A LOG file line: UTC time with microseconds, thread id, message.
const std::regex kLogLineRe(
    R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z \d+ (.*))");

std::vector<std::string> ReadLines(const std::string& fname) {
  std::string data;
  EXPECT_TRUE(ReadFileToString(Env::Default(), fname, &data).ok()) << fname;
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < data.size()) {
    size_t end = data.find('\n', start);
    EXPECT_NE(std::string::npos, end) << fname << ": unterminated last line";
    if (end == std::string::npos) end = data.size();
    lines.push_back(data.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

std::set<std::string> Children(const std::string& dir) {
  std::vector<std::string> children;
  EXPECT_TRUE(Env::Default()->GetChildren(dir, &children).ok());
  return {children.begin(), children.end()};
}

std::string NewestWal(const std::string& dir) {
  std::string newest;
  uint64_t newest_number = 0;
  for (const auto& c : Children(dir)) {
    uint64_t n;
    FileType t;
    if (ParseFileName(c, &n, &t) && t == FileType::kLogFile &&
        n >= newest_number) {
      newest_number = n;
      newest = dir + "/" + c;
    }
  }
  return newest;
}

class InfoLogTest : public testing::Test {
 protected:
  InfoLogTest() {
    options_.create_if_missing = true;
    options_.info_log = logger_;
  }
  ~InfoLogTest() override { db_.reset(); }

  Status TryOpen() {
    db_.reset();
    return DB::Open(options_, dir_.path(), &db_);
  }
  void Open() {
    Status s = TryOpen();
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  void Put(const std::string& k, const std::string& v) {
    Status s = db_->Put(WriteOptions(), k, v);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }

  test::TempDir dir_;
  std::shared_ptr<CapturingLogger> logger_ =
      std::make_shared<CapturingLogger>();
  Options options_;
  std::unique_ptr<DB> db_;
};

TEST_F(InfoLogTest, OpenTellsOptionsRecoveryAndManifest) {
  options_.write_buffer_size = 1 << 20;
  Open();
  Put("k", "v");
  db_.reset();
  EXPECT_EQ(1u, logger_->Count("Opening database " + dir_.path() + "$"));
  EXPECT_EQ(1u, logger_->Count("Options: .*write_buffer_size=1048576 .*"
                               "filter_policy=[^ ]+.* max_log_file_size="));
  EXPECT_EQ(1u, logger_->Count("Options: .* compression=lz4-values "
                               "compression_per_level=none,\\.\\.\\. "));
  EXPECT_EQ(1u, logger_->Count("Created a new database$"));
  EXPECT_EQ(1u, logger_->Count("Recovered MANIFEST-000001: .*last sequence 0, "
                               "segments per level \\[0 0 0 0 0 0 0\\]"));
  EXPECT_EQ(1u, logger_->Count("Switched to manifest MANIFEST-\\d{6}$"));
  EXPECT_EQ(1u, logger_->Count("Opened: "));
  EXPECT_EQ(1u, logger_->Count("Closing database "));
  // The application's logger replaces LOG.
  EXPECT_EQ(0u, Children(dir_.path()).count("LOG"));

  Open();
  EXPECT_EQ(1u, logger_->Count("Created a new database$"));  // not again
  // The manifest holds no segment with the write (the close recorded the
  // log's length and the last sequence); the log replay finds it.
  EXPECT_EQ(1u, logger_->Count("Recovered MANIFEST-\\d+: .*last sequence 1,"))
      << logger_->Dump();
  EXPECT_EQ(1u, logger_->Count("Replayed .*\\.log: 1 records, last sequence 1"))
      << logger_->Dump();
  EXPECT_EQ(1u, logger_->Count("Opened: .*last sequence 1,"));
}

// Every flush, compaction and trivial move of a randomized workload is
// logged once, with the numbers the statistics count (as the closing line
// reports them, once background work has stopped); every segment alive at
// the end was logged as written, and every segment deleted was logged as a
// compaction input first.
TEST_F(InfoLogTest, FlushAndCompactionLinesAgreeWithStatistics) {
  Options base = test::TinyCompactionOptions();
  base.info_log = logger_;
  for (uint64_t seed : test::TestSeeds()) {
    SCOPED_TRACE("seed=" + std::to_string(seed));
    test::TempDir dir;
    logger_ = std::make_shared<CapturingLogger>();
    options_ = base;
    options_.info_log = logger_;
    Random rnd(seed);
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(options_, dir.path(), &db).ok());
    for (int i = 0; i < 2500; i++) {
      const std::string key = "key" + std::to_string(rnd.Uniform(1000));
      if (rnd.OneIn(8)) {
        ASSERT_TRUE(db->Delete(WriteOptions(), key).ok());
      } else {
        ASSERT_TRUE(db->Put(WriteOptions(), key,
                            test::RandomString(&rnd, 50 + rnd.Uniform(200)))
                        .ok());
      }
    }
    ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());
    const std::vector<SegmentInfo> live = db->GetSegmentInfo();
    db.reset();
    const auto closing = logger_->Matching(
        R"(Closing database .*: (\d+) flushes \((\d+) bytes\), (\d+) compactions \((\d+) bytes read, (\d+) written\), (\d+) trivial moves, \d+ us of write stalls$)");
    ASSERT_EQ(1u, closing.size()) << logger_->Dump();
    DbStats stats;
    stats.flushes = std::stoull(closing[0][1]);
    stats.bytes_flushed = std::stoull(closing[0][2]);
    stats.compactions = std::stoull(closing[0][3]);
    stats.compaction_bytes_read = std::stoull(closing[0][4]);
    stats.compaction_bytes_written = std::stoull(closing[0][5]);
    stats.trivial_moves = std::stoull(closing[0][6]);

    std::set<uint64_t> written, compacted_inputs;
    uint64_t flushed_bytes = 0;
    for (
        const auto& m : logger_->Matching(
            R"(Flushed segment (\d+): (\d+) entries, (\d+) bytes in \d+ us$)")) {
      written.insert(std::stoull(m[1]));
      flushed_bytes += std::stoull(m[3]);
    }
    EXPECT_EQ(stats.flushes, written.size());
    EXPECT_EQ(stats.bytes_flushed, flushed_bytes);

    auto numbers = [](const std::string& list) {
      std::vector<uint64_t> r;
      std::istringstream in(list);
      for (uint64_t n; in >> n;) r.push_back(n);
      return r;
    };
    uint64_t compactions = 0, read_bytes = 0, written_bytes = 0;
    for (
        const auto& m : logger_->Matching(
            R"(Compacted L(\d) \[([\d ]*)\] \+ L(\d) \[([\d ]*)\]: (\d+)\+(\d+) segments, (\d+)\+(\d+) bytes, (\d+) entries -> L(\d) \[([\d ]*)\]: (\d+) segments, (\d+) bytes, (\d+) entries in \d+ us; write amplification [\d.]+, (\d+) entries dropped$)")) {
      compactions++;
      for (uint64_t n : numbers(m[2])) compacted_inputs.insert(n);
      for (uint64_t n : numbers(m[4])) compacted_inputs.insert(n);
      EXPECT_EQ(std::stoull(m[5]), numbers(m[2]).size());
      EXPECT_EQ(std::stoull(m[6]), numbers(m[4]).size());
      for (uint64_t n : numbers(m[11])) written.insert(n);
      EXPECT_EQ(std::stoull(m[12]), numbers(m[11]).size());
      read_bytes += std::stoull(m[7]) + std::stoull(m[8]);
      written_bytes += std::stoull(m[13]);
      EXPECT_EQ(std::stoull(m[9]) - std::stoull(m[14]), std::stoull(m[15]));
      EXPECT_EQ(m[3].str(), m[10].str());
    }
    EXPECT_GT(compactions, 0u);
    EXPECT_EQ(stats.compactions, compactions);
    EXPECT_EQ(stats.compaction_bytes_read, read_bytes);
    EXPECT_EQ(stats.compaction_bytes_written, written_bytes);
    EXPECT_EQ(
        stats.trivial_moves,
        logger_->Count(R"(Moved segment \d+ \(\d+ bytes\) from L\d to L\d$)"));

    for (const SegmentInfo& s : live) {
      EXPECT_EQ(1u, written.count(s.file_number)) << s.file_number;
    }
    const auto on_disk = Children(dir.path());
    size_t deleted_segments = 0;
    for (const auto& m : logger_->Matching(
             R"(Deleting (\d+)\.seg: segment in no live version)")) {
      deleted_segments++;
      EXPECT_EQ(1u, compacted_inputs.count(std::stoull(m[1]))) << m[0];
      EXPECT_EQ(0u, on_disk.count(m[1].str() + ".seg")) << m[0];
    }
    EXPECT_GT(deleted_segments, 0u);
    EXPECT_GT(logger_->Count(R"(Deleting \d+\.log: write-ahead log )"), 0u);
    EXPECT_EQ(logger_->Count("Write stall: "),
              logger_->Count(R"(Write stall ended after \d+ us$)"));
    EXPECT_EQ(0u, logger_->Count("ERROR")) << logger_->Dump();
  }
}

// Replay of the write-ahead log: records counted, a torn tail dropped, a
// corrupt record skipped or refused as paranoid_checks says.
TEST_F(InfoLogTest, ReplayTellsRecordsTornTailsAndSkippedRecords) {
  enum Damage { kNone, kTornTail, kCorruptFirstRecord };
  struct Case {
    Damage damage;
    bool paranoid;
    const char* expect;  // a line that must be logged
    bool open_ok;
  };
  const Case cases[] = {
      {kNone, true, R"(Replayed .*\.log: 3 records, last sequence 3$)", true},
      {kTornTail, true,
       R"(Dropped the torn tail of .*\.log: \d+ bytes at offset \d+$)", true},
      {kTornTail, true, R"(Replayed .*\.log: 2 records, last sequence 2$)",
       true},
      {kCorruptFirstRecord, false,
       R"(Skipping \d+ bytes of the log: Corruption: .*\.log)", true},
      {kCorruptFirstRecord, false,
       R"(Replayed .*\.log: 2 records, last sequence 3$)", true},
      {kCorruptFirstRecord, true,
       R"(ERROR: cannot skip \d+ bytes of the log: Corruption: )", false},
      {kCorruptFirstRecord, true, R"(ERROR: open failed: Corruption: )", false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.expect);
    test::TempDir dir;
    logger_ = std::make_shared<CapturingLogger>();
    options_.info_log = logger_;
    options_.paranoid_checks = c.paranoid;
    // A crash, not a clean close, leaves a log whose end may be torn.
    test::FaultInjectionEnv env(Env::Default());
    options_.env = &env;
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(options_, dir.path(), &db).ok());
    for (int i = 0; i < 3; i++) {
      ASSERT_TRUE(db->Put(WriteOptions(), "k" + std::to_string(i),
                          std::string(100, 'a' + i))
                      .ok());
    }
    test::CloseAsInACrash(&db, &env);
    const std::string wal = NewestWal(dir.path());
    std::string data;
    ASSERT_TRUE(ReadFileToString(Env::Default(), wal, &data).ok());
    if (c.damage == kTornTail) data.resize(data.size() - 10);
    if (c.damage == kCorruptFirstRecord) data[20] ^= 0x55;  // a payload byte
    ASSERT_TRUE(WriteStringToFile(Env::Default(), data, wal, false).ok());

    Status s = DB::Open(options_, dir.path(), &db);
    EXPECT_EQ(c.open_ok, s.ok()) << s.ToString();
    db.reset();
    options_.env = nullptr;  // env goes with this iteration
    EXPECT_EQ(1u, logger_->Count(c.expect)) << logger_->Dump();
  }
}

// Background errors are logged with the failing Status, "ERROR" first.
TEST_F(InfoLogTest, BackgroundErrorsAreLoggedLoudly) {
  using FEnv = test::FaultInjectionEnv;
  struct Case {
    uint32_t ops;
    const char* suffix;  // of the files that fail
    bool sync_writes;
    const char* expect;
  };
  const Case cases[] = {
      {FEnv::kWrite, ".seg", false,
       "ERROR: background error, writes are refused until reopened: "
       "IO error: .*injected"},
      {FEnv::kSync, ".log", true,
       "ERROR: background error, writes are refused until reopened: IO "
       "error: .*injected"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.expect);
    test::TempDir dir;
    FEnv env(Env::Default());
    logger_ = std::make_shared<CapturingLogger>();
    options_.info_log = logger_;
    options_.env = &env;
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(options_, dir.path(), &db).ok());
    const std::string suffix = c.suffix;
    env.InjectErrors(
        c.ops,
        [suffix](const std::string& f) {
          return f.size() > suffix.size() &&
                 f.compare(f.size() - suffix.size(), suffix.size(), suffix) ==
                     0;
        },
        0);
    WriteOptions wo;
    wo.sync = c.sync_writes;
    Status s = db->Put(wo, "k", "v");
    if (s.ok()) s = db->Flush();
    EXPECT_FALSE(s.ok());
    db.reset();
    EXPECT_EQ(1u, logger_->Count(c.expect)) << logger_->Dump();
  }
}

TEST_F(InfoLogTest, SegmentOpenFailureIsLoggedLoudly) {
  Open();
  Put("k", "v");
  ASSERT_TRUE(db_->Flush().ok());
  const std::string seg = db_->GetSegmentInfo().at(0).file_name;
  db_.reset();
  std::string data;
  ASSERT_TRUE(ReadFileToString(Env::Default(), seg, &data).ok());
  data.pop_back();
  ASSERT_TRUE(WriteStringToFile(Env::Default(), data, seg, false).ok());
  TryOpen().PermitUncheckedError();  // the read, if not the open, fails
  db_.reset();
  EXPECT_EQ(1u, logger_->Count("ERROR: cannot open segment " + seg +
                               ": Corruption: "))
      << logger_->Dump();
}

// ---- the LOG file ----

class LogFileTest : public testing::Test {
 protected:
  LogFileTest() { options_.create_if_missing = true; }

  // The session a LOG file holds, told by the last sequence it opened at.
  int SessionIn(const std::string& fname) {
    const std::regex re(R"(Opened: .*last sequence (\d+),)");
    int session = -1;
    for (const auto& line : ReadLines(fname)) {
      std::smatch m;
      EXPECT_TRUE(std::regex_match(line, m, kLogLineRe)) << line;
      const std::string message = m[1].str();
      std::smatch r;
      if (std::regex_search(message, r, re)) session = std::stoi(r[1]);
    }
    return session;
  }
  std::string Path(const std::string& name) { return dir_.File(name); }

  test::TempDir dir_;
  Options options_;
};

TEST_F(LogFileTest, EveryOpenRotatesAndOldLogsAreBounded) {
  for (int session = 0; session < 6; session++) {
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(options_, dir_.path(), &db).ok());
    // Session i opens at last sequence i: one write per session.
    ASSERT_TRUE(
        db->Put(WriteOptions(), "session", std::to_string(session)).ok());
    db.reset();
    EXPECT_EQ(session, SessionIn(Path("LOG")));
    const std::vector<std::string> lines = ReadLines(Path("LOG"));
    ASSERT_FALSE(lines.empty());
    EXPECT_NE(std::string::npos, lines.back().find("Closing database"));
  }
  EXPECT_EQ(4, SessionIn(Path("LOG.old")));
  EXPECT_EQ(3, SessionIn(Path("LOG.old.1")));
  EXPECT_EQ(2, SessionIn(Path("LOG.old.2")));
  int info_logs = 0;
  for (const auto& c : Children(dir_.path())) {
    info_logs += c.compare(0, 3, "LOG") == 0;
  }
  EXPECT_EQ(1 + kOldInfoLogs, info_logs);
}

// Writers on several threads, LOG rotated by size many times meanwhile: the
// old logs stay bounded in number and size, and hold whole lines only.
TEST_F(LogFileTest, SizeRotationUnderConcurrentWriters) {
  options_ = test::TinyCompactionOptions();
  options_.max_log_file_size = 4096;
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(options_, dir_.path(), &db).ok());
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; t++) {
    threads.emplace_back([&, t] {
      Random rnd(t + 1);
      for (int i = 0; i < 1500; i++) {
        EXPECT_TRUE(db->Put(WriteOptions(),
                            "key" + std::to_string(rnd.Uniform(3000)),
                            test::RandomString(&rnd, 200))
                        .ok());
      }
    });
  }
  for (auto& th : threads) th.join();
  db.reset();
  std::set<std::string> logs;
  for (const auto& c : Children(dir_.path())) {
    if (c.compare(0, 3, "LOG") == 0) logs.insert(c);
  }
  EXPECT_EQ((std::set<std::string>{"LOG", "LOG.old", "LOG.old.1", "LOG.old.2"}),
            logs);
  for (const std::string& name : logs) {
    uint64_t size = 0;
    ASSERT_TRUE(Env::Default()->GetFileSize(Path(name), &size).ok());
    // Rotation follows the line that crosses the limit.
    EXPECT_LT(size, options_.max_log_file_size + 1024) << name;
    for (const auto& line : ReadLines(Path(name))) {
      EXPECT_TRUE(std::regex_match(line, kLogLineRe)) << name << ": " << line;
    }
  }
}

TEST_F(LogFileTest, ReadOnlyOpenLeavesLogAlone) {
  {
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(options_, dir_.path(), &db).ok());
    ASSERT_TRUE(db->Put(WriteOptions(), "k", "v").ok());
  }
  std::string before;
  ASSERT_TRUE(ReadFileToString(Env::Default(), Path("LOG"), &before).ok());
  const auto children_before = Children(dir_.path());

  auto logger = std::make_shared<CapturingLogger>();
  for (bool with_logger : {false, true}) {
    SCOPED_TRACE(with_logger ? "application logger" : "no logger");
    Options ro = options_;
    if (with_logger) ro.info_log = logger;
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::OpenForReadOnly(ro, dir_.path(), &db).ok());
    std::string v;
    ASSERT_TRUE(db->Get(ReadOptions(), "k", &v).ok());
    db.reset();
    std::string after;
    ASSERT_TRUE(ReadFileToString(Env::Default(), Path("LOG"), &after).ok());
    EXPECT_EQ(before, after);
    EXPECT_EQ(children_before, Children(dir_.path()));
  }
  EXPECT_EQ(1u, logger->Count("Opening database .* read-only$"));
  EXPECT_EQ(1u, logger->Count(R"(Replayed .*\.log: 1 records)"));
  EXPECT_EQ(1u, logger->Count("Opened read-only: last sequence 1,"));
}

// A second Open fails on the LOCK: it must not rotate the LOG of the
// database that is open, which goes on logging to it.
TEST_F(LogFileTest, FailedOpenOfADatabaseInUseLeavesItsLogAlone) {
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(options_, dir_.path(), &db).ok());
  auto logger = std::make_shared<CapturingLogger>();
  for (bool with_logger : {false, true}) {
    Options second = options_;
    if (with_logger) second.info_log = logger;
    std::unique_ptr<DB> db2;
    EXPECT_FALSE(DB::Open(second, dir_.path(), &db2).ok());
  }
  EXPECT_EQ(1u, logger->Count("ERROR: open failed: IO error: .*in use"))
      << logger->Dump();
  ASSERT_TRUE(db->Put(WriteOptions(), "k", "v").ok());
  ASSERT_TRUE(db->Flush().ok());
  db.reset();
  EXPECT_FALSE(Env::Default()->FileExists(Path("LOG.old")));
  int opening = 0, flushed = 0;
  for (const auto& line : ReadLines(Path("LOG"))) {
    opening += line.find("Opening database") != std::string::npos;
    flushed += line.find("Flushed segment") != std::string::npos;
  }
  EXPECT_EQ(1, opening);
  EXPECT_EQ(1, flushed);
}

TEST_F(LogFileTest, DestroyDBRemovesEveryLog) {
  for (int i = 0; i < 3; i++) {
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(options_, dir_.path(), &db).ok());
  }
  ASSERT_TRUE(Env::Default()->FileExists(Path("LOG.old.1")));
  ASSERT_TRUE(DestroyDB(dir_.path(), options_).ok());
  EXPECT_FALSE(Env::Default()->FileExists(dir_.path()));
}

TEST(InfoLogFileNameTest, OldLogsAreOursAndNothingElse) {
  EXPECT_EQ("db/LOG", InfoLogFileName("db"));
  EXPECT_EQ("db/LOG.old", OldInfoLogFileName("db"));
  EXPECT_EQ("db/LOG.old.2", OldInfoLogFileName("db", 2));
  for (const char* name : {"LOG", "LOG.old", "LOG.old.1", "LOG.old.17"}) {
    uint64_t number;
    FileType type;
    EXPECT_TRUE(ParseFileName(name, &number, &type)) << name;
    EXPECT_EQ(FileType::kInfoLogFile, type) << name;
  }
  for (const char* name :
       {"LOG.older", "LOG.old.", "LOG.old.x", "LOG.1", "LOGS", "xLOG.old"}) {
    uint64_t number;
    FileType type;
    EXPECT_FALSE(ParseFileName(name, &number, &type)) << name;
  }
}

// ---- the info log never fails the database ----

// NewLogger fails outright, or gives a logger whose every write fails.
class BrokenLoggerEnv final : public EnvWrapper {
 public:
  BrokenLoggerEnv(Env* target, bool fail_open)
      : EnvWrapper(target), fail_open_(fail_open) {}
  Status NewLogger(const std::string& fname,
                   std::unique_ptr<Logger>* result) override {
    opens_++;
    if (fail_open_) return Status::IOError(fname, "no logs today");
    return target()->NewLogger("/dev/full", result);  // ENOSPC on write
  }
  int opens_ = 0;

 private:
  const bool fail_open_;
};

TEST(InfoLogFailureTest, LogFailuresNeverFailTheDatabase) {
  for (bool fail_open : {true, false}) {
    SCOPED_TRACE(fail_open ? "NewLogger fails" : "writes fail");
    if (!fail_open && !Env::Default()->FileExists("/dev/full")) continue;
    test::TempDir dir;
    BrokenLoggerEnv env(Env::Default(), fail_open);
    Options options = test::TinyCompactionOptions();
    options.env = &env;
    options.max_log_file_size = 1024;  // rotations fail too
    for (int session = 0; session < 2; session++) {
      std::unique_ptr<DB> db;
      Status s = DB::Open(options, dir.path(), &db);
      ASSERT_TRUE(s.ok()) << s.ToString();
      Random rnd(session + 1);
      for (int i = 0; i < 2000; i++) {
        ASSERT_TRUE(db->Put(WriteOptions(), "k" + std::to_string(i),
                            test::RandomString(&rnd, 100))
                        .ok());
      }
      ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());
      std::string v;
      EXPECT_TRUE(db->Get(ReadOptions(), "k1999", &v).ok());
    }
    EXPECT_GE(env.opens_, 2);
  }
}

}  // namespace
}  // namespace bloomkv
