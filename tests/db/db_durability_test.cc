// Durability: what survives a crash. An Env that drops every byte not
// fsynced simulates a machine crash; a forked child killed with SIGKILL
// simulates a process crash; a WAL cut at every byte of its last record
// simulates a crash mid-append.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <thread>

#include "bloomkv/db.h"
#include "bloomkv/write_batch.h"
#include "db/filename.h"
#include "db/log_reader.h"
#include "tests/testutil/fault_env.h"
#include "tests/testutil/test_util.h"
#include "util/random.h"

namespace bloomkv {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

using Model = std::map<std::string, std::string>;

Model ReadAll(DB* db) {
  Model m;
  auto it = db->NewIterator(ReadOptions());
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    m[it->key().ToString()] = it->value().ToString();
  }
  EXPECT_TRUE(it->status().ok()) << it->status().ToString();
  return m;
}

std::string FindLog(const std::string& dir) {
  std::vector<std::string> children;
  EXPECT_TRUE(Env::Default()->GetChildren(dir, &children).ok());
  std::string newest;
  uint64_t newest_number = 0;
  for (const auto& c : children) {
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

// Machine crash: everything not fsynced is lost. Synced writes must all be
// there, and the recovered state must be the state after some prefix of the
// operations that includes every synced one: no lost synced write, no
// resurrected deleted key, no reordering.
TEST(DurabilityTest, MachineCrashKeepsEverySyncedWrite) {
  for (uint64_t seed : test::TestSeeds()) {
    SCOPED_TRACE("seed=" + std::to_string(seed));
    test::TempDir dir;
    test::FaultInjectionEnv env(Env::Default());
    Options options;
    options.create_if_missing = true;
    options.env = &env;
    options.write_buffer_size = 64 << 10;
    Random rnd(seed);
    Model model;

    for (int crash = 0; crash < 4; crash++) {
      SCOPED_TRACE("crash=" + std::to_string(crash));
      std::unique_ptr<DB> db;
      ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
      ASSERT_EQ(model, ReadAll(db.get()));
      // States the database may legitimately recover to: the state after
      // the last synced write, and after every later unsynced one.
      std::vector<Model> allowed{model};
      const int ops = 200 + static_cast<int>(rnd.Uniform(600));
      for (int i = 0; i < ops; i++) {
        WriteOptions wo;
        wo.sync = rnd.Uniform(8) == 0;
        const std::string key = "key" + std::to_string(rnd.Uniform(200));
        if (rnd.Uniform(4) == 0) {
          ASSERT_TRUE(db->Delete(wo, key).ok());
          model.erase(key);
        } else {
          const std::string value = test::RandomString(&rnd, rnd.Uniform(500));
          ASSERT_TRUE(db->Put(wo, key, value).ok());
          model[key] = value;
        }
        if (wo.sync) allowed.clear();
        allowed.push_back(model);
      }
      env.SetFilesystemActive(false);
      db.reset();
      ASSERT_TRUE(env.DropUnsyncedData().ok());
      env.SetFilesystemActive(true);

      Status s = DB::Open(options, dir.path(), &db);
      ASSERT_TRUE(s.ok()) << s.ToString();
      const Model recovered = ReadAll(db.get());
      bool matched = false;
      for (const auto& m : allowed) matched = matched || m == recovered;
      ASSERT_TRUE(matched) << "recovered state is no prefix of the writes "
                              "that includes every synced one";
      model = recovered;
    }
  }
}

// The write-ahead logs in dir, oldest first.
std::vector<std::string> Logs(const std::string& dir) {
  std::vector<std::string> children;
  EXPECT_TRUE(Env::Default()->GetChildren(dir, &children).ok());
  std::map<uint64_t, std::string> logs;
  for (const auto& c : children) {
    uint64_t n;
    FileType t;
    if (ParseFileName(c, &n, &t) && t == FileType::kLogFile) {
      logs[n] = dir + "/" + c;
    }
  }
  std::vector<std::string> result;
  for (const auto& [n, name] : logs) result.push_back(name);
  return result;
}

// Options for a database on env whose memtable fills after about 64 KiB.
Options SmallMemtableOptions(Env* env) {
  Options options;
  options.create_if_missing = true;
  options.env = env;
  options.write_buffer_size = 64 << 10;
  return options;
}

// A memtable switch closes its log without a sync. Writes, then a switch
// whose flush fails (so the closed log stays the only copy of the writes
// before it), then one more write into the new log; `last_sync` says
// whether that write is synced. Keys "first" (its own record), then "big*"
// (one batch, the closed log's last record), then "last". With
// fail_closed_sync, syncing the closed log fails.
void WriteAcrossASwitch(test::FaultInjectionEnv* env, const Options& options,
                        const std::string& dir, bool last_sync,
                        bool fail_closed_sync = false) {
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(options, dir, &db).ok());
  ASSERT_TRUE(db->Put(WriteOptions(), "first", "1").ok());
  WriteBatch big;
  for (int i = 0; i < 100; i++) {
    big.Put("big" + std::to_string(1000 + i), std::string(1000, 'b'));
  }
  ASSERT_TRUE(db->Write(WriteOptions(), &big).ok());  // fills the memtable
  const std::string closed = Logs(dir).front();
  env->InjectErrors(
      test::FaultInjectionEnv::kOpen | test::FaultInjectionEnv::kSync,
      [&](const std::string& f) {
        return f.ends_with(".seg") || (fail_closed_sync && f == closed);
      },
      0);
  WriteOptions wo;
  wo.sync = last_sync;
  Status s = db->Put(wo, "last", "3");  // switches logs first
  ASSERT_EQ(2u, Logs(dir).size());
  if (fail_closed_sync) {
    ASSERT_TRUE(s.IsIOError()) << s.ToString();
    // The error is sticky: no write is acknowledged after it.
    EXPECT_FALSE(db->Put(WriteOptions(), "after", "4").ok());
    EXPECT_FALSE(db->Put(wo, "after", "4").ok());
  } else {
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  env->SetFilesystemActive(false);
  db.reset();
  env->ClearInjectedErrors();
}

// A synced write syncs the logs closed before it, so a machine crash keeps
// everything written before it too.
TEST(DurabilityTest, SyncedWriteSyncsTheLogsClosedBeforeIt) {
  test::TempDir dir;
  test::FaultInjectionEnv env(Env::Default());
  const Options options = SmallMemtableOptions(&env);
  ASSERT_NO_FATAL_FAILURE(WriteAcrossASwitch(&env, options, dir.path(), true));
  ASSERT_TRUE(env.DropUnsyncedData().ok());
  env.SetFilesystemActive(true);
  std::unique_ptr<DB> db;
  Status s = DB::Open(options, dir.path(), &db);
  ASSERT_TRUE(s.ok()) << s.ToString();
  const Model m = ReadAll(db.get());
  EXPECT_EQ(102u, m.size());
  EXPECT_EQ(1u, m.count("first"));
  EXPECT_EQ(1u, m.count("big1099"));
  EXPECT_EQ(1u, m.count("last"));
}

// A failed sync of a closed log fails the synced write that needed it, and
// every write after it.
TEST(DurabilityTest, FailedSyncOfAClosedLogStopsWrites) {
  test::TempDir dir;
  test::FaultInjectionEnv env(Env::Default());
  const Options options = SmallMemtableOptions(&env);
  ASSERT_NO_FATAL_FAILURE(WriteAcrossASwitch(&env, options, dir.path(),
                                             /*last_sync=*/true,
                                             /*fail_closed_sync=*/true));
}

// The end of a closed log torn by a crash: if no later write was synced,
// the writes after it are dropped too (the database recovers a prefix of
// its writes); if one was, the torn end is damage.
TEST(DurabilityTest, TornEndOfAClosedLog) {
  for (const bool last_sync : {false, true}) {
    for (const bool paranoid : {true, false}) {
      SCOPED_TRACE(std::string("last write ") +
                   (last_sync ? "synced" : "unsynced") +
                   (paranoid ? ", paranoid" : ", not paranoid"));
      test::TempDir dir;
      test::FaultInjectionEnv env(Env::Default());
      Options options = SmallMemtableOptions(&env);
      options.paranoid_checks = paranoid;
      ASSERT_NO_FATAL_FAILURE(
          WriteAcrossASwitch(&env, options, dir.path(), last_sync));
      env.ResetState();
      env.SetFilesystemActive(true);
      // Cut the closed log inside its last record ("big*").
      const std::string closed = Logs(dir.path()).front();
      uint64_t size = 0;
      ASSERT_TRUE(Env::Default()->GetFileSize(closed, &size).ok());
      std::filesystem::resize_file(closed, size - 100);

      std::unique_ptr<DB> db;
      Status s = DB::Open(options, dir.path(), &db);
      if (last_sync && paranoid) {
        ASSERT_TRUE(s.IsCorruption()) << s.ToString();
        const std::string name = closed.substr(closed.rfind('/') + 1);
        EXPECT_NE(std::string::npos, s.ToString().find(name + " at offset "))
            << s.ToString();
        continue;
      }
      ASSERT_TRUE(s.ok()) << s.ToString();
      const Model m = ReadAll(db.get());
      EXPECT_EQ(1u, m.count("first"));
      EXPECT_EQ(0u, m.count("big1000"));
      // Unsynced: dropped with the torn end; synced: kept, past the damage.
      EXPECT_EQ(last_sync ? 1u : 0u, m.count("last"));
    }
  }
}

// A log the manifest knows to hold acknowledged synced writes, deleted or
// cut short at a record boundary afterwards (a bad restore, an operator's
// rm), is Corruption naming it at a paranoid Open, never a silent loss:
// replay alone cannot tell such a log from one that ended there. Without
// paranoid checks Open goes on with what is left, as the operator chose.
TEST(DurabilityTest, LostOrShortenedLogIsCorruption) {
  enum class Damage { kDeleteNewest, kEmptyClosed, kCutClosedAtARecord };
  for (const Damage damage : {Damage::kDeleteNewest, Damage::kEmptyClosed,
                              Damage::kCutClosedAtARecord}) {
    for (const bool paranoid : {true, false}) {
      SCOPED_TRACE("damage=" + std::to_string(static_cast<int>(damage)) +
                   (paranoid ? ", paranoid" : ", not paranoid"));
      test::TempDir dir;
      test::FaultInjectionEnv env(Env::Default());
      Options options = SmallMemtableOptions(&env);
      options.paranoid_checks = paranoid;
      // Two logs: the closed one ("first", "big*"), whose flush failed, and
      // the newest, holding the synced "last".
      ASSERT_NO_FATAL_FAILURE(WriteAcrossASwitch(&env, options, dir.path(),
                                                 /*last_sync=*/true));
      env.ResetState();
      env.SetFilesystemActive(true);
      const std::vector<std::string> logs = Logs(dir.path());
      ASSERT_EQ(2u, logs.size());
      std::string damaged;
      switch (damage) {
        case Damage::kDeleteNewest:
          damaged = logs.back();
          ASSERT_TRUE(Env::Default()->RemoveFile(damaged).ok());
          break;
        case Damage::kEmptyClosed:
          damaged = logs.front();
          std::filesystem::resize_file(damaged, 0);
          break;
        case Damage::kCutClosedAtARecord: {
          // Drop the closed log's last record whole: what is left reads
          // as a log that ended cleanly.
          damaged = logs.front();
          std::unique_ptr<SequentialFile> file;
          ASSERT_TRUE(Env::Default()->NewSequentialFile(damaged, &file).ok());
          log::Reader reader(file.get(), damaged, nullptr, true);
          Slice record;
          std::string scratch;
          uint64_t last = 0;
          while (reader.ReadRecord(&record, &scratch)) {
            last = reader.LastRecordOffset();
          }
          ASSERT_GT(last, 0u);
          std::filesystem::resize_file(damaged, last);
          break;
        }
      }
      std::unique_ptr<DB> db;
      Status s = DB::Open(options, dir.path(), &db);
      if (paranoid) {
        ASSERT_TRUE(s.IsCorruption()) << s.ToString();
        const std::string name = damaged.substr(damaged.rfind('/') + 1);
        EXPECT_NE(std::string::npos, s.ToString().find(name)) << s.ToString();
        // Nothing was changed: the same Open fails the same way again.
        EXPECT_EQ(s.ToString(), DB::Open(options, dir.path(), &db).ToString());
        continue;
      }
      ASSERT_TRUE(s.ok()) << s.ToString();
      const Model m = ReadAll(db.get());
      EXPECT_EQ(damage != Damage::kDeleteNewest, m.count("last") == 1);
    }
  }
}

// Process crash: a child writes with sync=true and reports each
// acknowledged operation through a pipe; the parent kills it with SIGKILL at
// a random moment and checks every acknowledged operation after reopening.
TEST(DurabilityTest, KilledProcessLosesNoAcknowledgedWrite) {
  for (uint64_t seed : test::TestSeeds()) {
    SCOPED_TRACE("seed=" + std::to_string(seed));
    Random rnd(seed);
    test::TempDir dir;
    for (int round = 0; round < 3; round++) {
      SCOPED_TRACE("round=" + std::to_string(round));
      int fds[2];
      ASSERT_EQ(0, pipe(fds));
      const int first = round * 100000;
      pid_t pid = fork();
      ASSERT_GE(pid, 0);
      if (pid == 0) {
        close(fds[0]);
        Options options;
        options.create_if_missing = true;
        options.write_buffer_size = 64 << 10;
        std::unique_ptr<DB> db;
        if (!DB::Open(options, dir.path(), &db).ok()) _exit(2);
        WriteOptions wo;
        wo.sync = true;
        for (int i = first;; i++) {
          // Operation i puts key i; every third one also deletes key i-1.
          WriteBatch batch;
          batch.Put("key" + std::to_string(i), std::string(200, 'a' + i % 26));
          if (i % 3 == 0 && i > first)
            batch.Delete("key" + std::to_string(i - 1));
          if (!db->Write(wo, &batch).ok()) _exit(3);
          if (write(fds[1], &i, sizeof(i)) != sizeof(i)) _exit(4);
        }
      }
      close(fds[1]);
      // The kill comes at a random moment after the child is up and writing
      // (opening may be slow, e.g. under a sanitizer).
      int acked = first - 1, i;
      if (read(fds[0], &i, sizeof(i)) == sizeof(i)) acked = i;
      std::this_thread::sleep_for(
          std::chrono::milliseconds(20 + rnd.Uniform(200)));
      kill(pid, SIGKILL);
      int status;
      waitpid(pid, &status, 0);
      while (read(fds[0], &i, sizeof(i)) == sizeof(i)) acked = i;
      close(fds[0]);
      ASSERT_GT(acked, first) << "the child acknowledged nothing";

      Options options;
      std::unique_ptr<DB> db;
      Status s = DB::Open(options, dir.path(), &db);
      ASSERT_TRUE(s.ok()) << s.ToString();
      for (int j = first; j <= acked; j++) {
        // Operation acked+1 may have reached the log unacknowledged; the
        // delete it carries may or may not be there.
        if (j == acked && (j + 1) % 3 == 0) continue;
        const bool deleted = (j + 1) % 3 == 0 && j + 1 <= acked;
        std::string v;
        s = db->Get(ReadOptions(), "key" + std::to_string(j), &v);
        if (deleted) {
          ASSERT_TRUE(s.IsNotFound()) << "resurrected key" << j;
        } else {
          ASSERT_TRUE(s.ok()) << "lost key" << j << ": " << s.ToString();
          ASSERT_EQ(std::string(200, 'a' + j % 26), v);
        }
      }
    }
  }
}

// A crash mid-append leaves the last WAL record cut short at any byte: the
// database recovers exactly the records before it, silently.
TEST(DurabilityTest, TornWalTailAtEveryOffsetOfTheLastRecord) {
  test::TempDir live;
  // What a crash leaves: the files as they are while the database is open
  // (a clean close records the log's length, after which a cut is damage).
  test::TempDir base;
  Options options;
  options.create_if_missing = true;
  std::string log;
  uint64_t before_last = 0, after_last = 0;
  {
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(options, live.path(), &db).ok());
    for (int i = 0; i < 20; i++) {
      ASSERT_TRUE(db->Put(WriteOptions(), "key" + std::to_string(i),
                          "value" + std::to_string(i))
                      .ok());
    }
    log = FindLog(live.path());
    ASSERT_TRUE(Env::Default()->GetFileSize(log, &before_last).ok());
    WriteBatch last;
    last.Put("last-a", std::string(300, 'x'));
    last.Delete("key3");
    ASSERT_TRUE(db->Write(WriteOptions(), &last).ok());
    ASSERT_TRUE(Env::Default()->GetFileSize(log, &after_last).ok());
    std::filesystem::copy(
        live.path(), base.path(),
        std::filesystem::copy_options::recursive |
            std::filesystem::copy_options::overwrite_existing);
    log = base.File(log.substr(log.rfind('/') + 1));
  }
  ASSERT_GT(after_last, before_last);
  std::string full;
  ASSERT_TRUE(ReadFileToString(Env::Default(), log, &full).ok());
  const std::string log_name = log.substr(log.rfind('/') + 1);

  for (uint64_t cut = before_last; cut <= after_last; cut++) {
    SCOPED_TRACE("cut=" + std::to_string(cut));
    test::TempDir trial;
    std::filesystem::copy(
        base.path(), trial.path(),
        std::filesystem::copy_options::recursive |
            std::filesystem::copy_options::overwrite_existing);
    ASSERT_TRUE(WriteStringToFile(Env::Default(), Slice(full.data(), cut),
                                  trial.File(log_name), false)
                    .ok());
    std::unique_ptr<DB> db;
    Status s = DB::Open(options, trial.path(), &db);
    ASSERT_TRUE(s.ok()) << s.ToString();
    std::string v;
    const bool whole = cut == after_last;
    for (int i = 0; i < 20; i++) {
      s = db->Get(ReadOptions(), "key" + std::to_string(i), &v);
      if (i == 3 && whole) {
        ASSERT_TRUE(s.IsNotFound());
      } else {
        ASSERT_TRUE(s.ok()) << i << ": " << s.ToString();
      }
    }
    ASSERT_EQ(whole, db->Get(ReadOptions(), "last-a", &v).ok());
  }
}

// A clean close records the newest log's length in the manifest, so the
// end of that log can no longer pass for a torn write: damage to its last
// record, or a cut at a record boundary (a bad restore, a copy that stopped
// short), is Corruption naming the log, not a quiet loss of the synced
// writes there. (After a crash nothing records the length, and a damaged
// last record still reads as the torn tail it most likely is.)
TEST(DurabilityTest,
     DamagedOrCutEndOfTheNewestLogAfterACleanCloseIsCorruption) {
  enum class Damage { kFlipInLastRecord, kCutAtARecord, kCutMidRecord };
  for (const Damage damage : {Damage::kFlipInLastRecord, Damage::kCutAtARecord,
                              Damage::kCutMidRecord}) {
    for (const bool paranoid : {true, false}) {
      SCOPED_TRACE("damage=" + std::to_string(static_cast<int>(damage)) +
                   (paranoid ? ", paranoid" : ", not paranoid"));
      test::TempDir dir;
      Options options;
      options.create_if_missing = true;
      options.paranoid_checks = paranoid;
      uint64_t before_last = 0;
      std::string log;
      {
        std::unique_ptr<DB> db;
        ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
        WriteOptions synced;
        synced.sync = true;
        ASSERT_TRUE(db->Put(synced, "k0", "v0").ok());
        ASSERT_TRUE(db->Put(synced, "k1", "v1").ok());
        log = FindLog(dir.path());
        ASSERT_TRUE(Env::Default()->GetFileSize(log, &before_last).ok());
        ASSERT_TRUE(db->Put(synced, "k2", "v2").ok());  // acknowledged
      }
      std::string data;
      ASSERT_TRUE(ReadFileToString(Env::Default(), log, &data).ok());
      ASSERT_GT(data.size(), before_last);
      switch (damage) {
        case Damage::kFlipInLastRecord:
          data[data.size() - 2] ^= 0x5a;
          break;
        case Damage::kCutAtARecord:
          data.resize(before_last);
          break;
        case Damage::kCutMidRecord:
          data.resize(data.size() - 3);
          break;
      }
      ASSERT_TRUE(WriteStringToFile(Env::Default(), data, log, false).ok());
      std::unique_ptr<DB> db;
      Status s = DB::Open(options, dir.path(), &db);
      if (paranoid) {
        ASSERT_TRUE(s.IsCorruption()) << s.ToString();
        EXPECT_NE(std::string::npos,
                  s.ToString().find(log.substr(log.rfind('/') + 1)))
            << s.ToString();
        EXPECT_EQ(s.ToString(), DB::Open(options, dir.path(), &db).ToString());
        continue;
      }
      // The operator's choice: open with what can be read.
      ASSERT_TRUE(s.ok()) << s.ToString();
      const Model m = ReadAll(db.get());
      EXPECT_EQ(1u, m.count("k1"));
      EXPECT_EQ(0u, m.count("k2"));
    }
  }
}

// Damage in the middle of a WAL is not a torn tail: with paranoid_checks it
// fails Open with Corruption naming the log, instead of losing data quietly.
TEST(DurabilityTest, CorruptionInsideTheWalIsReported) {
  test::TempDir dir;
  Options options;
  options.create_if_missing = true;
  {
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
    for (int i = 0; i < 50; i++) {
      ASSERT_TRUE(db->Put(WriteOptions(), "key" + std::to_string(i),
                          std::string(100, 'v'))
                      .ok());
    }
  }
  const std::string log = FindLog(dir.path());
  std::string data;
  ASSERT_TRUE(ReadFileToString(Env::Default(), log, &data).ok());
  data[data.size() / 2] ^= 0x40;
  ASSERT_TRUE(WriteStringToFile(Env::Default(), data, log, false).ok());

  std::unique_ptr<DB> db;
  Status s = DB::Open(options, dir.path(), &db);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(std::string::npos,
            s.ToString().find(log.substr(log.rfind('/') + 1)));

  options.paranoid_checks = false;  // the operator's choice: skip the damage
  s = DB::Open(options, dir.path(), &db);
  ASSERT_TRUE(s.ok()) << s.ToString();
  std::string v;
  EXPECT_TRUE(db->Get(ReadOptions(), "key0", &v).ok());
  EXPECT_TRUE(db->Get(ReadOptions(), "key49", &v).ok());
}

}  // namespace
}  // namespace bloomkv
