// Tests for FaultInjectionEnv: the crash it simulates (unsynced data,
// unsynced directory entries and renames are lost; synced state survives),
// injected errors, and the inactive filesystem.
#include "tests/testutil/fault_env.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "tests/testutil/test_util.h"

namespace bloomkv {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

using test::FaultInjectionEnv;

class FaultEnvTest : public testing::Test {
 protected:
  std::string Contents(const std::string& fname) {
    std::string data;
    Status s = ReadFileToString(Env::Default(), fname, &data);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return data;
  }
  // Writes a file through the fault env: appends each piece, syncing after
  // the pieces listed in sync_after (indexes).
  void Write(const std::string& fname, std::initializer_list<const char*> parts,
             std::initializer_list<size_t> sync_after) {
    std::unique_ptr<WritableFile> f;
    ASSERT_TRUE(env_.NewWritableFile(fname, &f).ok());
    size_t i = 0;
    for (const char* p : parts) {
      ASSERT_TRUE(f->Append(p).ok());
      for (size_t j : sync_after) {
        if (j == i) {
          ASSERT_TRUE(f->Sync().ok());
        }
      }
      i++;
    }
    ASSERT_TRUE(f->Close().ok());
  }

  test::TempDir dir_;
  FaultInjectionEnv env_{Env::Default()};
};

TEST_F(FaultEnvTest, TracksSizeAndSyncedSize) {
  const std::string f = dir_.File("f");
  std::unique_ptr<WritableFile> w;
  ASSERT_TRUE(env_.NewWritableFile(f, &w).ok());
  FaultInjectionEnv::FileState st;
  ASSERT_TRUE(env_.GetFileState(f, &st));
  EXPECT_EQ(0u, st.size);
  EXPECT_FALSE(st.entry_synced);
  ASSERT_TRUE(w->Append("abc").ok());
  ASSERT_TRUE(w->Sync().ok());
  ASSERT_TRUE(w->Append("defg").ok());
  ASSERT_TRUE(env_.GetFileState(f, &st));
  EXPECT_EQ(7u, st.size);
  EXPECT_EQ(3u, st.synced_size);
  ASSERT_TRUE(env_.SyncDir(dir_.path()).ok());
  ASSERT_TRUE(env_.GetFileState(f, &st));
  EXPECT_TRUE(st.entry_synced);
  EXPECT_FALSE(env_.GetFileState(dir_.File("never"), &st));
}

TEST_F(FaultEnvTest, DropTruncatesToSyncedSize) {
  const std::string f = dir_.File("wal");
  Write(f, {"abc", "def", "ghi"}, {1});
  ASSERT_TRUE(env_.SyncDir(dir_.path()).ok());
  EXPECT_EQ("abcdefghi", Contents(f));
  ASSERT_TRUE(env_.DropUnsyncedData().ok());
  EXPECT_EQ("abcdef", Contents(f));
}

TEST_F(FaultEnvTest, NeverSyncedFileBecomesEmpty) {
  const std::string f = dir_.File("f");
  Write(f, {"data"}, {});
  ASSERT_TRUE(env_.SyncDir(dir_.path()).ok());
  ASSERT_TRUE(env_.DropUnsyncedData().ok());
  EXPECT_TRUE(env_.FileExists(f));
  EXPECT_EQ("", Contents(f));
}

TEST_F(FaultEnvTest, NewFileWithoutDirSyncVanishes) {
  const std::string kept = dir_.File("kept");
  Write(kept, {"k"}, {0});
  ASSERT_TRUE(env_.SyncDir(dir_.path()).ok());
  const std::string lost = dir_.File("lost");
  Write(lost, {"synced data"}, {0});  // data synced, entry not
  ASSERT_TRUE(env_.DropUnsyncedData().ok());
  EXPECT_FALSE(env_.FileExists(lost));
  EXPECT_EQ("k", Contents(kept));
}

TEST_F(FaultEnvTest, DirSyncOfAnotherDirectoryDoesNotHelp) {
  const std::string sub = dir_.File("sub");
  ASSERT_TRUE(env_.CreateDir(sub).ok());
  const std::string f = sub + "/f";
  Write(f, {"x"}, {0});
  ASSERT_TRUE(env_.SyncDir(dir_.path()).ok());  // the parent, not sub
  ASSERT_TRUE(env_.DropUnsyncedData().ok());
  EXPECT_FALSE(env_.FileExists(f));
  // A trailing slash names the same directory.
  Write(f, {"y"}, {0});
  ASSERT_TRUE(env_.SyncDir(sub + "/").ok());
  ASSERT_TRUE(env_.DropUnsyncedData().ok());
  EXPECT_EQ("y", Contents(f));
}

TEST_F(FaultEnvTest, RenameWithoutDirSyncIsUndone) {
  const std::string current = dir_.File("CURRENT");
  const std::string tmp = dir_.File("CURRENT.tmp");
  Write(current, {"old"}, {0});
  ASSERT_TRUE(env_.SyncDir(dir_.path()).ok());
  Write(tmp, {"new"}, {0});
  ASSERT_TRUE(env_.RenameFile(tmp, current).ok());
  EXPECT_EQ("new", Contents(current));
  ASSERT_TRUE(env_.DropUnsyncedData().ok());
  EXPECT_EQ("old", Contents(current));
  EXPECT_FALSE(env_.FileExists(tmp));  // its own creation was never synced
}

TEST_F(FaultEnvTest, RenameRestoresOnlyDurablePartOfReplacedFile) {
  const std::string current = dir_.File("CURRENT");
  const std::string tmp = dir_.File("tmp");
  Write(current, {"dur", "able?"}, {0});
  ASSERT_TRUE(env_.SyncDir(dir_.path()).ok());
  Write(tmp, {"new"}, {0});
  ASSERT_TRUE(env_.SyncDir(dir_.path()).ok());  // tmp's entry is durable
  ASSERT_TRUE(env_.RenameFile(tmp, current).ok());
  ASSERT_TRUE(env_.DropUnsyncedData().ok());
  EXPECT_EQ("dur", Contents(current));
  EXPECT_EQ("new", Contents(tmp));  // back under its durable name
}

TEST_F(FaultEnvTest, RenameFollowedByDirSyncSurvives) {
  const std::string current = dir_.File("CURRENT");
  const std::string tmp = dir_.File("CURRENT.tmp");
  Write(current, {"old"}, {0});
  ASSERT_TRUE(env_.SyncDir(dir_.path()).ok());
  Write(tmp, {"new"}, {0});
  ASSERT_TRUE(env_.RenameFile(tmp, current).ok());
  ASSERT_TRUE(env_.SyncDir(dir_.path()).ok());
  ASSERT_TRUE(env_.DropUnsyncedData().ok());
  EXPECT_EQ("new", Contents(current));
  EXPECT_FALSE(env_.FileExists(tmp));
}

TEST_F(FaultEnvTest, RenameToNewNameIsUndone) {
  const std::string a = dir_.File("a");
  const std::string b = dir_.File("b");
  Write(a, {"payload"}, {0});
  ASSERT_TRUE(env_.SyncDir(dir_.path()).ok());
  ASSERT_TRUE(env_.RenameFile(a, b).ok());
  ASSERT_TRUE(env_.DropUnsyncedData().ok());
  EXPECT_FALSE(env_.FileExists(b));
  EXPECT_EQ("payload", Contents(a));
}

TEST_F(FaultEnvTest, PreexistingContentIsDurable) {
  const std::string f = dir_.File("log");
  ASSERT_TRUE(WriteStringToFile(Env::Default(), "base", f, true).ok());
  std::unique_ptr<WritableFile> w;
  ASSERT_TRUE(env_.NewAppendableFile(f, &w).ok());
  ASSERT_TRUE(w->Append("+1").ok());
  ASSERT_TRUE(w->Sync().ok());
  ASSERT_TRUE(w->Append("+2").ok());
  ASSERT_TRUE(w->Close().ok());
  EXPECT_EQ("base+1+2", Contents(f));
  ASSERT_TRUE(env_.DropUnsyncedData().ok());
  EXPECT_EQ("base+1", Contents(f));  // existed before: no entry to lose
}

TEST_F(FaultEnvTest, WritersFromBeforeTheCrashAreDead) {
  const std::string f = dir_.File("f");
  std::unique_ptr<WritableFile> w;
  ASSERT_TRUE(env_.NewWritableFile(f, &w).ok());
  ASSERT_TRUE(env_.SyncDir(dir_.path()).ok());
  ASSERT_TRUE(w->Append("synced").ok());
  ASSERT_TRUE(w->Sync().ok());
  ASSERT_TRUE(w->Append("lost").ok());
  ASSERT_TRUE(env_.DropUnsyncedData().ok());  // writer still open
  EXPECT_TRUE(w->Append("zombie").IsIOError());
  EXPECT_TRUE(w->Sync().IsIOError());
  w.reset();  // closing must not write anything either
  EXPECT_EQ("synced", Contents(f));
}

TEST_F(FaultEnvTest, ResetStateMakesEverythingDurable) {
  const std::string f = dir_.File("f");
  std::unique_ptr<WritableFile> w;
  ASSERT_TRUE(env_.NewWritableFile(f, &w).ok());
  ASSERT_TRUE(w->Append("one").ok());
  env_.ResetState();
  ASSERT_TRUE(w->Append("two").ok());  // writers keep working
  ASSERT_TRUE(w->Close().ok());
  ASSERT_TRUE(env_.DropUnsyncedData().ok());
  EXPECT_EQ("one", Contents(f));
}

TEST_F(FaultEnvTest, RemovedFilesStayRemoved) {
  const std::string f = dir_.File("f");
  Write(f, {"x"}, {0});
  ASSERT_TRUE(env_.SyncDir(dir_.path()).ok());
  ASSERT_TRUE(env_.RemoveFile(f).ok());
  ASSERT_TRUE(env_.DropUnsyncedData().ok());
  EXPECT_FALSE(env_.FileExists(f));
}

// ---- injected errors ----

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

TEST_F(FaultEnvTest, InjectedWriteErrorsAfterN) {
  env_.InjectErrors(
      FaultInjectionEnv::kWrite,
      [](const std::string& f) { return EndsWith(f, ".log"); },
      /*succeed_first=*/2);
  std::unique_ptr<WritableFile> log;
  std::unique_ptr<WritableFile> other;
  ASSERT_TRUE(env_.NewWritableFile(dir_.File("1.log"), &log).ok());
  ASSERT_TRUE(env_.NewWritableFile(dir_.File("1.seg"), &other).ok());
  EXPECT_TRUE(log->Append("a").ok());
  EXPECT_TRUE(log->Append("b").ok());
  Status s = log->Append("c");
  EXPECT_TRUE(s.IsIOError());
  EXPECT_NE(std::string::npos, s.ToString().find("1.log")) << s.ToString();
  EXPECT_TRUE(log->Append("d").IsIOError());  // keeps failing
  EXPECT_TRUE(other->Append("unaffected").ok());
  EXPECT_EQ(2u, env_.injected_error_count());
  env_.ClearInjectedErrors();
  EXPECT_TRUE(log->Append("e").ok());
  ASSERT_TRUE(log->Close().ok());
  EXPECT_EQ("abe",
            Contents(dir_.File("1.log")));  // failed appends wrote nothing
  ASSERT_TRUE(other->Close().ok());
}

TEST_F(FaultEnvTest, InjectedErrorCountLimit) {
  env_.InjectErrors(FaultInjectionEnv::kWrite, nullptr, 1, /*fail_count=*/1);
  std::unique_ptr<WritableFile> w;
  ASSERT_TRUE(env_.NewWritableFile(dir_.File("f"), &w).ok());
  EXPECT_TRUE(w->Append("1").ok());
  EXPECT_TRUE(w->Append("2").IsIOError());
  EXPECT_TRUE(w->Append("3").ok());
  EXPECT_EQ(1u, env_.injected_error_count());
}

TEST_F(FaultEnvTest, InjectedSyncErrorKeepsDataUnsynced) {
  const std::string f = dir_.File("f");
  std::unique_ptr<WritableFile> w;
  ASSERT_TRUE(env_.NewWritableFile(f, &w).ok());
  ASSERT_TRUE(env_.SyncDir(dir_.path()).ok());
  ASSERT_TRUE(w->Append("abc").ok());
  env_.InjectErrors(FaultInjectionEnv::kSync, nullptr, 0);
  EXPECT_TRUE(w->Sync().IsIOError());
  EXPECT_TRUE(env_.SyncDir(dir_.path()).IsIOError());
  env_.ClearInjectedErrors();
  ASSERT_TRUE(w->Close().ok());
  ASSERT_TRUE(env_.DropUnsyncedData().ok());
  EXPECT_EQ("", Contents(f));
}

TEST_F(FaultEnvTest, InjectedReadErrors) {
  const std::string f = dir_.File("seg");
  Write(f, {"0123456789"}, {0});
  std::unique_ptr<RandomAccessFile> r;
  ASSERT_TRUE(env_.NewRandomAccessFile(f, &r).ok());
  std::unique_ptr<SequentialFile> seq;
  ASSERT_TRUE(env_.NewSequentialFile(f, &seq).ok());
  env_.InjectErrors(FaultInjectionEnv::kRead, nullptr, 1);
  char scratch[10];
  Slice got;
  ASSERT_TRUE(r->Read(2, 3, &got, scratch).ok());
  EXPECT_EQ(Slice("234"), got);
  EXPECT_TRUE(r->Read(0, 3, &got, scratch).IsIOError());
  EXPECT_TRUE(got.empty());
  EXPECT_TRUE(seq->Read(3, &got, scratch).IsIOError());
  EXPECT_TRUE(seq->Skip(1).IsIOError());
  std::string data;
  EXPECT_TRUE(ReadFileToString(&env_, f, &data).IsIOError());
}

TEST_F(FaultEnvTest, InjectedOpenRenameRemoveErrors) {
  const std::string a = dir_.File("a");
  Write(a, {"x"}, {0});
  env_.InjectErrors(FaultInjectionEnv::kOpen, nullptr, 0);
  std::unique_ptr<RandomAccessFile> r;
  EXPECT_TRUE(env_.NewRandomAccessFile(a, &r).IsIOError());
  std::unique_ptr<WritableFile> w;
  EXPECT_TRUE(env_.NewWritableFile(dir_.File("b"), &w).IsIOError());
  EXPECT_FALSE(env_.FileExists(dir_.File("b")));

  // A rename matches on either name.
  env_.InjectErrors(
      FaultInjectionEnv::kRename,
      [](const std::string& f) { return EndsWith(f, "/CURRENT"); }, 0);
  EXPECT_TRUE(env_.RenameFile(a, dir_.File("CURRENT")).IsIOError());
  EXPECT_TRUE(env_.FileExists(a));  // a failed rename changed nothing
  EXPECT_TRUE(env_.RenameFile(a, dir_.File("c")).ok());

  env_.InjectErrors(FaultInjectionEnv::kRemove, nullptr, 0);
  EXPECT_TRUE(env_.RemoveFile(dir_.File("c")).IsIOError());
  EXPECT_TRUE(env_.FileExists(dir_.File("c")));
  env_.ClearInjectedErrors();
  EXPECT_TRUE(env_.RemoveFile(dir_.File("c")).ok());
}

TEST_F(FaultEnvTest, InactiveFilesystemRejectsEveryMutation) {
  const std::string f = dir_.File("f");
  Write(f, {"before"}, {0});
  std::unique_ptr<WritableFile> w;
  ASSERT_TRUE(env_.NewAppendableFile(f, &w).ok());

  env_.SetFilesystemActive(false);
  EXPECT_FALSE(env_.IsFilesystemActive());
  EXPECT_TRUE(w->Append("x").IsIOError());
  EXPECT_TRUE(w->Flush().IsIOError());
  EXPECT_TRUE(w->Sync().IsIOError());
  EXPECT_TRUE(w->Close().IsIOError());
  std::unique_ptr<WritableFile> w2;
  EXPECT_TRUE(env_.NewWritableFile(dir_.File("g"), &w2).IsIOError());
  EXPECT_TRUE(env_.NewAppendableFile(f, &w2).IsIOError());
  EXPECT_TRUE(env_.RenameFile(f, dir_.File("h")).IsIOError());
  EXPECT_TRUE(env_.RemoveFile(f).IsIOError());
  EXPECT_TRUE(env_.CreateDir(dir_.File("d")).IsIOError());
  EXPECT_TRUE(env_.SyncDir(dir_.path()).IsIOError());
  // Reads still work, and nothing changed on disk.
  std::string data;
  ASSERT_TRUE(ReadFileToString(&env_, f, &data).ok());
  EXPECT_EQ("before", data);
  EXPECT_FALSE(env_.FileExists(dir_.File("g")));
  EXPECT_FALSE(env_.IsDirectory(dir_.File("d")));
  EXPECT_EQ(0u, env_.injected_error_count());  // not an injected fault

  env_.SetFilesystemActive(true);
  EXPECT_TRUE(env_.NewWritableFile(dir_.File("g"), &w2).ok());
}

TEST_F(FaultEnvTest, CrashAfterFreezingKeepsOnlySyncedState) {
  // The typical crash test: write, freeze, drop, reactivate.
  const std::string wal = dir_.File("000001.log");
  std::unique_ptr<WritableFile> w;
  ASSERT_TRUE(env_.NewWritableFile(wal, &w).ok());
  ASSERT_TRUE(env_.SyncDir(dir_.path()).ok());
  ASSERT_TRUE(w->Append("rec1;").ok());
  ASSERT_TRUE(w->Sync().ok());
  ASSERT_TRUE(w->Append("rec2;").ok());
  env_.SetFilesystemActive(false);
  EXPECT_TRUE(w->Append("rec3;").IsIOError());
  w.reset();
  ASSERT_TRUE(env_.DropUnsyncedData().ok());
  env_.SetFilesystemActive(true);
  EXPECT_EQ("rec1;", Contents(wal));
}

}  // namespace
}  // namespace bloomkv
