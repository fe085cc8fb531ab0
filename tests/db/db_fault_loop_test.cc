// The I/O-error loop: one fixed workload (writes synced and not, flushes,
// automatic and manual compactions, a close and a reopen, more writes) is
// run once to count the Env calls of each kind, then again and again with
// call i of one kind failing, for every i. After each run the database is
// reopened with a healthy Env and checked against a model of the workload:
//   * the reopen succeeds and every key reads back (no file that a version
//     names was deleted; never NotFound for a stored key, never an error);
//   * the contents are the model after some prefix of the operations that
//     holds every acknowledged durable one (every acknowledged one when the
//     process did not crash): nothing acknowledged was lost, no failed
//     operation half-applied, nothing reordered;
//   * once a write, Flush or CompactRange has failed, later writes fail too
//     and never reach the disk (the error is sticky).
// Two failure modes: the failing call fails once and the run goes on; or
// the machine crashes right after the failure (the filesystem goes
// inactive, unsynced data is dropped before the reopen).
//
// Segments, logs and manifests are real files, but fsync is skipped below
// the FaultInjectionEnv (which models durability itself), so the loop is
// fast enough to try every call.
#include <gtest/gtest.h>

#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "bloomkv/db.h"
#include "bloomkv/env.h"
#include "bloomkv/write_batch.h"
#include "tests/testutil/fault_env.h"
#include "tests/testutil/test_util.h"
#include "util/random.h"

namespace bloomkv {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

using Model = std::map<std::string, std::string>;
using test::FaultInjectionEnv;

// One step of the workload. Flush, CompactRange and Reopen leave the model
// unchanged; a successful Reopen, Flush or CompactRange makes everything
// before it durable, as does a successful synced write.
struct Op {
  // kDeleteRange: [key, value).
  enum Kind { kPut, kDelete, kDeleteRange, kFlush, kCompact, kReopen, kGet };
  explicit Op(Kind k, std::string key_arg = "") : kind(k), key(key_arg) {}
  Kind kind;
  std::string key;
  std::string value;
  bool sync = false;
};

constexpr int kKeys = 120;
constexpr size_t kValueSize = 300;
const char kProbeKey[] = "probe-after-error";

std::string Key(uint64_t i) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "key%05d", static_cast<int>(i));
  return buf;
}

// Fixed and deterministic: about 200 KiB of values through 64 KiB
// memtables, so several level-0 segments, automatic compactions (the trigger
// is two segments) and a manual one, with a reopen in the middle.
std::vector<Op> MakeWorkload() {
  Random rnd(0x10a9);
  std::vector<Op> ops;
  auto writes = [&](int n) {
    for (int i = 0; i < n; i++) {
      Op op(Op::kPut, Key(rnd.Uniform(kKeys)));
      op.sync = rnd.Uniform(8) == 0;
      if (rnd.Uniform(40) == 0) {
        const uint64_t first = rnd.Uniform(kKeys);
        op.kind = Op::kDeleteRange;
        op.key = Key(first);
        op.value = Key(first + 1 + rnd.Uniform(15));
      } else if (rnd.Uniform(10) == 0) {
        op.kind = Op::kDelete;
      } else {
        op.value = std::to_string(ops.size()) + "-" +
                   test::RandomString(&rnd, kValueSize);
      }
      ops.push_back(std::move(op));
      if (i % 25 == 24) ops.emplace_back(Op::kGet, Key(rnd.Uniform(kKeys)));
    }
  };
  writes(250);
  ops.emplace_back(Op::kFlush);
  writes(250);
  ops.emplace_back(Op::kCompact);
  writes(60);
  ops.emplace_back(Op::kReopen);
  writes(200);
  ops.emplace_back(Op::kFlush);
  writes(40);
  return ops;
}

void Apply(const Op& op, Model* m) {
  if (op.kind == Op::kPut) (*m)[op.key] = op.value;
  if (op.kind == Op::kDelete) m->erase(op.key);
  if (op.kind == Op::kDeleteRange) {
    m->erase(m->lower_bound(op.key), m->lower_bound(op.value));
  }
}

struct RunResult {
  size_t first_failure;  // index of the first failed op; ops.size() if none
  size_t durable;        // every op before this one survives a crash
  std::vector<std::string> problems;  // broken promises seen during the run
};

// Runs ops until one fails; then checks that a write is refused too.
RunResult RunWorkload(const std::vector<Op>& ops, const Options& options,
                      const std::string& path) {
  RunResult r{ops.size(), 0, {}};
  std::unique_ptr<DB> db;
  Status s = DB::Open(options, path, &db);
  if (!s.ok()) {
    r.first_failure = 0;
    return r;
  }
  Model model;
  for (size_t i = 0; i < ops.size() && s.ok(); i++) {
    const Op& op = ops[i];
    WriteOptions wo;
    wo.sync = op.sync;
    switch (op.kind) {
      case Op::kPut:
        s = db->Put(wo, op.key, op.value);
        break;
      case Op::kDelete:
        s = db->Delete(wo, op.key);
        break;
      case Op::kDeleteRange:
        s = db->DeleteRange(wo, op.key, op.value);
        break;
      case Op::kFlush:
        s = db->Flush();
        break;
      case Op::kCompact:
        s = db->CompactRange(nullptr, nullptr);
        break;
      case Op::kReopen:
        db.reset();
        s = DB::Open(options, path, &db);
        break;
      case Op::kGet: {
        // A failed read is allowed (and not sticky); a wrong answer is not.
        std::string value;
        Status g = db->Get(ReadOptions(), op.key, &value);
        auto it = model.find(op.key);
        bool wrong;
        if (g.ok()) {
          wrong = it == model.end() || it->second != value;
        } else if (g.IsNotFound()) {
          wrong = it != model.end();
        } else {
          wrong = !g.IsIOError();
        }
        if (wrong) {
          r.problems.push_back("Get(" + op.key + ") at op " +
                               std::to_string(i) + ": " + g.ToString());
        }
        continue;
      }
    }
    if (!s.ok()) {
      r.first_failure = i;
      break;
    }
    Apply(op, &model);
    if (op.sync || op.kind == Op::kFlush || op.kind == Op::kCompact ||
        op.kind == Op::kReopen) {
      r.durable = i + 1;
    }
  }
  if (!s.ok() && db != nullptr) {
    Status again = db->Put(WriteOptions(), kProbeKey, "x");
    if (again.ok()) {
      r.problems.push_back("a write succeeded after op " +
                           std::to_string(r.first_failure) + " failed with " +
                           s.ToString());
    }
  }
  return r;
}

// Reopens with a healthy Env and checks the contents against the model;
// returns a description of what is wrong, or "".
std::string Verify(const std::vector<Op>& ops, const RunResult& run,
                   bool crashed, const Options& options,
                   const std::string& path) {
  std::unique_ptr<DB> db;
  Status s = DB::Open(options, path, &db);
  if (!s.ok()) return "reopen failed: " + s.ToString();
  Model found;
  auto it = db->NewIterator(ReadOptions());
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    found[it->key().ToString()] = it->value().ToString();
  }
  if (!it->status().ok()) return "iterator: " + it->status().ToString();
  it.reset();
  for (int k = 0; k < kKeys; k++) {
    std::string value;
    s = db->Get(ReadOptions(), Key(k), &value);
    auto f = found.find(Key(k));
    if (s.ok() ? (f == found.end() || f->second != value)
               : (!s.IsNotFound() || f != found.end())) {
      return "Get(" + Key(k) + ") disagrees with the iterator: " + s.ToString();
    }
  }
  if (found.count(kProbeKey) != 0) return "a refused write is in the DB";

  // Allowed: the model after j ops, for every j from the last durable
  // point (the first failure if nothing crashed) to just after the failed
  // op (which may or may not have happened).
  const size_t lo = crashed ? run.durable : run.first_failure;
  const size_t hi = std::min(run.first_failure + 1, ops.size());
  Model model;
  for (size_t j = 0; j <= hi; j++) {
    if (j >= lo && model == found) return "";
    if (j < ops.size()) Apply(ops[j], &model);
  }
  return "the DB holds " + std::to_string(found.size()) +
         " keys, matching no model state after " + std::to_string(lo) + " to " +
         std::to_string(hi) + " ops";
}

const char* OpName(uint32_t op) {
  switch (op) {
    case FaultInjectionEnv::kOpen:
      return "open";
    case FaultInjectionEnv::kRead:
      return "read";
    case FaultInjectionEnv::kWrite:
      return "write";
    case FaultInjectionEnv::kSync:
      return "sync";
    case FaultInjectionEnv::kRename:
      return "rename";
    case FaultInjectionEnv::kRemove:
      return "remove";
    case FaultInjectionEnv::kClose:
      return "close";
    case FaultInjectionEnv::kMetadata:
      return "metadata";
  }
  return "?";
}

// Every call is tried while a kind has few; past that, calls are taken at
// an even stride, so the whole loop stays within a few seconds per mode.
constexpr uint64_t kMaxPointsPerKind = 200;

void RunLoop(bool crash) {
  const std::vector<Op> ops = MakeWorkload();
  test::NoFsyncEnv base(Env::Default());

  // The healthy run: it must pass, and it gives the number of calls.
  uint64_t counts[std::size(FaultInjectionEnv::kEachOp)];
  {
    test::TempDir dir;
    FaultInjectionEnv env(&base);
    Options options = test::TinyCompactionOptions();
    options.env = &env;
    RunResult run = RunWorkload(ops, options, dir.path());
    ASSERT_EQ(ops.size(), run.first_failure);
    ASSERT_TRUE(run.problems.empty()) << run.problems[0];
    for (size_t k = 0; k < std::size(counts); k++) {
      counts[k] = env.op_count(FaultInjectionEnv::kEachOp[k]);
    }
    env.ClearInjectedErrors();
    ASSERT_EQ("", Verify(ops, run, false, options, dir.path()));
  }

  constexpr uint64_t kMaxReported = 10;
  uint64_t covered = 0, total = 0, failed_ops = 0, failures = 0;
  for (size_t k = 0; k < std::size(counts); k++) {
    const uint32_t kind = FaultInjectionEnv::kEachOp[k];
    // A few calls past the count: background timing moves calls around.
    const uint64_t n = counts[k] + 3;
    const uint64_t stride = (n + kMaxPointsPerKind - 1) / kMaxPointsPerKind;
    total += n;
    for (uint64_t i = 0; i < n; i += stride) {
      SCOPED_TRACE(std::string("failing ") + OpName(kind) + " call " +
                   std::to_string(i) + (crash ? ", then crash" : ""));
      covered++;
      test::TempDir dir;
      FaultInjectionEnv env(&base);
      Options options = test::TinyCompactionOptions();
      options.env = &env;
      env.InjectErrors(kind, nullptr, /*succeed_first=*/i, /*fail_count=*/1);
      env.SetDeactivateOnInjectedError(crash);
      const RunResult run = RunWorkload(ops, options, dir.path());
      env.ClearInjectedErrors();
      if (crash) {
        ASSERT_TRUE(env.DropUnsyncedData().ok());
        env.SetFilesystemActive(true);
      }
      if (run.first_failure < ops.size()) failed_ops++;
      std::vector<std::string> problems = run.problems;
      const std::string verdict = Verify(ops, run, crash, options, dir.path());
      if (!verdict.empty()) problems.push_back(verdict);
      for (const std::string& p : problems) {
        // The first few in full; the rest only counted.
        if (++failures <= kMaxReported) {
          ADD_FAILURE() << p << " (first failed op " << run.first_failure
                        << ", durable up to " << run.durable << ")";
        }
      }
    }
  }
  EXPECT_EQ(0u, failures) << "broken promises in the runs above";
  std::cout << "[ loop     ] " << covered << " of " << total
            << " injection points" << (crash ? " (crash after the error)" : "")
            << ", " << failed_ops << " runs saw an operation fail\n";
  ::testing::Test::RecordProperty("injection_points", std::to_string(covered));
}

TEST(FaultLoopTest, EveryFailingCallKeepsTheDatabaseConsistent) {
  RunLoop(/*crash=*/false);
}

TEST(FaultLoopTest, EveryFailingCallFollowedByACrash) {
  RunLoop(/*crash=*/true);
}

}  // namespace
}  // namespace bloomkv
