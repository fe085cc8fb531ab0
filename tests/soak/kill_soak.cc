// kill_soak: crash-recovery soak for the whole database.
//
//   kill_soak [--cycles=N] [--seed=S] [--drop-unsynced] [--dir=PATH]
//
// Every cycle opens the database, applies a stream of writes and crashes:
//  * default mode: a forked child opens the DB and writes (mostly sync
//    writes, some plain ones, some deletes, now and then a Flush) with a
//    tiny memtable and a level-0 trigger of 2, so flushes and compactions
//    run all the time; it reports each completed write's number to the
//    parent through a pipe; the parent SIGKILLs it at a random moment;
//  * --drop-unsynced: the same writes in-process through the test
//    FaultInjectionEnv, stopped after a random number of them; the file
//    system is then frozen and everything not synced dropped, as a machine
//    crash would.
// The parent then reopens the database and checks it. The writes of a cycle
// are a deterministic stream (from the seed and the cycle number), and
// every value names its key and write number, so the parent knows exactly
// what each prefix of the stream leaves behind. The check:
//  * loss: a key whose newest acknowledged sync write (in this cycle or an
//    earlier one) is missing or replaced by an older state;
//  * wrong state: a value that is not one the stream wrote for that key,
//    or a database that matches no prefix of the stream at least as long as
//    the acknowledged sync writes (recovery must keep the writes in order).
// Prints the seed first, a summary at the end, and exits 1 on any loss or
// wrong state (2 on usage or setup errors).
// Thread-safety: single-threaded program (the DB runs its own threads).
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bloomkv/db.h"
#include "bloomkv/env.h"
#include "tests/testutil/fault_env.h"
#include "util/hash.h"
#include "util/random.h"

namespace bloomkv::soak {
namespace {

constexpr int kNumKeys = 400;
// A cycle's writes are numbered from (cycle << kCycleShift), so a value
// tells which cycle wrote it.
constexpr int kCycleShift = 32;
constexpr uint64_t kMinKillMicros = 2'000;
constexpr uint64_t kMaxKillMicros = 150'000;
constexpr uint64_t kMaxOpsInProcess = 400;

struct Op {
  enum Kind { kPut, kDelete, kFlush } kind;
  int key;
  bool sync;
};

// The deterministic write stream of one cycle.
class OpStream {
 public:
  OpStream(uint64_t seed, uint64_t cycle)
      : rnd_(seed * 0x9E3779B97F4A7C15ull + cycle + 1) {}
  const Op& at(uint64_t i) {
    while (ops_.size() <= i) {
      const uint64_t r = rnd_.Uniform(1000);
      Op op;
      op.kind = r < 5 ? Op::kFlush : r < 100 ? Op::kDelete : Op::kPut;
      op.key = static_cast<int>(rnd_.Uniform(kNumKeys));
      op.sync = rnd_.Uniform(4) != 0;
      ops_.push_back(op);
    }
    return ops_[i];
  }

 private:
  Random rnd_;
  std::vector<Op> ops_;
};

std::string KeyName(int key) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "key%05d", key);
  return buf;
}

// "<write number>|" then filler derived from the key and the number, 200 to
// 2000 bytes in all, so that the memtable fills after a few dozen writes.
std::string ValueFor(int key, uint64_t write) {
  std::string v = std::to_string(write) + "|";
  const uint64_t h = KeyHash(KeyName(key) + v);
  const size_t len = 200 + h % 1800;
  while (v.size() < len)
    v.push_back(static_cast<char>('a' + (h + v.size()) % 26));
  return v;
}

// What a key holds: nullopt when absent, else the number of the write that
// stored its value.
using KeyState = std::optional<uint64_t>;
using DbState = std::vector<KeyState>;

Options SoakOptions(Env* env) {
  Options options;
  options.create_if_missing = true;
  options.env = env;
  options.write_buffer_size = 64 << 10;
  options.block_size = 1024;
  options.level0_compaction_trigger = 2;
  options.max_bytes_for_level_base = 64 << 10;
  options.target_file_size = 32 << 10;
  return options;
}

// Applies writes [first, first + count) of the stream; calls done(i) after
// each one that returned OK. Returns the first error.
template <typename Done>
Status ApplyOps(DB* db, OpStream* stream, uint64_t cycle_base, uint64_t count,
                Done done) {
  for (uint64_t i = 0; i < count; i++) {
    const Op& op = stream->at(i);
    WriteOptions wo;
    wo.sync = op.sync;
    Status s;
    switch (op.kind) {
      case Op::kPut:
        s = db->Put(wo, KeyName(op.key), ValueFor(op.key, cycle_base + i));
        break;
      case Op::kDelete:
        s = db->Delete(wo, KeyName(op.key));
        break;
      case Op::kFlush:
        s = db->Flush();
        break;
    }
    if (!s.ok()) return s;
    done(i);
  }
  return Status::OK();
}

// Reads the whole database; false (with a message) if it holds anything
// the stream never wrote.
bool ReadState(DB* db, DbState* state, std::string* error) {
  state->assign(kNumKeys, std::nullopt);
  std::unique_ptr<Iterator> it = db->NewIterator(ReadOptions());
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    const std::string key = it->key().ToString();
    const std::string value = it->value().ToString();
    int k = -1;
    if (std::sscanf(key.c_str(), "key%05d", &k) != 1 || k < 0 ||
        k >= kNumKeys || KeyName(k) != key) {
      *error = "unexpected key " + key;
      return false;
    }
    const uint64_t write = std::strtoull(value.c_str(), nullptr, 10);
    if (ValueFor(k, write) != value) {
      *error = "value of " + key + " was never written (" +
               value.substr(0, 24) + "...)";
      return false;
    }
    (*state)[k] = write;
  }
  if (!it->status().ok()) {
    *error = "iteration: " + it->status().ToString();
    return false;
  }
  // Point reads must agree with the scan.
  for (int k = 0; k < kNumKeys; k++) {
    std::string value;
    Status s = db->Get(ReadOptions(), KeyName(k), &value);
    const bool found = s.ok();
    if (!found && !s.IsNotFound()) {
      *error = "Get(" + KeyName(k) + "): " + s.ToString();
      return false;
    }
    if (found != (*state)[k].has_value() ||
        (found && value != ValueFor(k, *(*state)[k]))) {
      *error = "Get(" + KeyName(k) + ") disagrees with the scan";
      return false;
    }
  }
  return true;
}

struct Totals {
  uint64_t cycles = 0;
  uint64_t acked_checked = 0;  // acknowledged sync writes checked
  uint64_t losses = 0;
  uint64_t wrong_states = 0;
};

// Checks the reopened database against the stream of one cycle, whose
// writes [0, acked_sync] include the last acknowledged sync write (acked_sync
// == -1: none) and which may have applied up to max_applied writes. base is
// the state before the cycle. On success *base becomes the state found.
void CheckCycle(uint64_t cycle, OpStream* stream, int64_t acked_sync,
                uint64_t max_applied, const DbState& found, DbState* base,
                Totals* totals) {
  const uint64_t cycle_base = cycle << kCycleShift;
  // The state after the acknowledged prefix, and the losses against it.
  DbState expected = *base;
  auto apply = [&](uint64_t i) {
    const Op& op = stream->at(i);
    if (op.kind == Op::kPut) expected[op.key] = cycle_base + i;
    if (op.kind == Op::kDelete) expected[op.key] = std::nullopt;
  };
  uint64_t acked_here = 0;
  for (int64_t i = 0; i <= acked_sync; i++) {
    apply(static_cast<uint64_t>(i));
    const Op& op = stream->at(static_cast<uint64_t>(i));
    if (op.sync && op.kind != Op::kFlush) acked_here++;
  }
  totals->acked_checked += acked_here;
  // The database must be exactly some prefix [0, m] of the stream with
  // acked_sync <= m < max_applied: count mismatching keys as m grows, and
  // collect every state each key may be in.
  std::vector<std::vector<KeyState>> allowed(kNumKeys);
  uint64_t mismatches = 0;
  for (int k = 0; k < kNumKeys; k++) {
    allowed[k].push_back(expected[k]);
    mismatches += expected[k] != found[k];
  }
  bool matched = mismatches == 0;
  for (uint64_t i = static_cast<uint64_t>(acked_sync + 1); i < max_applied;
       i++) {
    const int k = stream->at(i).key;
    if (stream->at(i).kind == Op::kFlush) continue;
    mismatches -= expected[k] != found[k];
    apply(i);
    mismatches += expected[k] != found[k];
    allowed[k].push_back(expected[k]);
    matched = matched || mismatches == 0;
  }
  // A key in none of its allowed states lost an acknowledged write if it is
  // absent or older than that write; else it holds a write out of order.
  uint64_t losses = 0;
  for (int k = 0; k < kNumKeys; k++) {
    const KeyState& want = allowed[k].front();
    const KeyState& got = found[k];
    bool ok = false;
    for (const KeyState& a : allowed[k]) ok = ok || a == got;
    if (!ok && want.has_value() && (!got.has_value() || *got < *want)) {
      losses++;
    }
  }
  if (losses > 0 || !matched) {
    std::fprintf(stderr,
                 "cycle %llu: %llu lost keys, %s (acknowledged through write "
                 "%lld, at most %llu applied)\n",
                 static_cast<unsigned long long>(cycle),
                 static_cast<unsigned long long>(losses),
                 matched ? "state is a prefix of the writes"
                         : "state is no prefix of the writes",
                 static_cast<long long>(acked_sync),
                 static_cast<unsigned long long>(max_applied));
  }
  totals->losses += losses;
  if (!matched) totals->wrong_states++;
  *base = found;
}

[[noreturn]] void ChildMain(const std::string& dir, uint64_t cycle,
                            OpStream* stream, int fd) {
  std::unique_ptr<DB> db;
  Status s = DB::Open(SoakOptions(Env::Default()), dir, &db);
  if (!s.ok()) {
    std::fprintf(stderr, "child: open: %s\n", s.ToString().c_str());
    _exit(3);
  }
  s = ApplyOps(db.get(), stream, cycle << kCycleShift, UINT64_MAX,
               [fd](uint64_t i) {
                 // One small write is atomic on a pipe.
                 if (write(fd, &i, sizeof(i)) != sizeof(i)) _exit(4);
               });
  std::fprintf(stderr, "child: write: %s\n", s.ToString().c_str());
  _exit(5);
}

// Runs one forked cycle; returns false on a setup error. *acked_sync and
// *max_applied as for CheckCycle.
bool ForkCycle(const std::string& dir, uint64_t cycle, OpStream* stream,
               Random* rnd, int64_t* acked_sync, uint64_t* max_applied) {
  int fds[2];
  if (pipe(fds) != 0) return false;
  const pid_t pid = fork();
  if (pid < 0) return false;
  if (pid == 0) {
    close(fds[0]);
    ChildMain(dir, cycle, stream, fds[1]);
  }
  close(fds[1]);
  const auto deadline =
      std::chrono::steady_clock::now() +
      std::chrono::microseconds(kMinKillMicros +
                                rnd->Uniform(kMaxKillMicros - kMinKillMicros));
  *acked_sync = -1;
  int64_t last_reported = -1;
  bool killed = false;
  while (true) {
    if (!killed && std::chrono::steady_clock::now() >= deadline) {
      kill(pid, SIGKILL);
      killed = true;
    }
    struct pollfd p = {fds[0], POLLIN, 0};
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    const int timeout = killed ? -1 : static_cast<int>(left.count()) + 1;
    if (poll(&p, 1, timeout) < 0 && errno != EINTR) return false;
    if (p.revents == 0) continue;
    uint64_t i;
    const ssize_t n = read(fds[0], &i, sizeof(i));
    if (n == 0) break;  // the child is gone
    if (n != sizeof(i)) {
      if (n < 0 && errno == EINTR) continue;
      return false;
    }
    last_reported = static_cast<int64_t>(i);
    if (stream->at(i).sync) *acked_sync = static_cast<int64_t>(i);
  }
  close(fds[0]);
  int wstatus = 0;
  waitpid(pid, &wstatus, 0);
  if (!(WIFSIGNALED(wstatus) && WTERMSIG(wstatus) == SIGKILL)) {
    std::fprintf(stderr, "cycle %llu: child exited with status %d\n",
                 static_cast<unsigned long long>(cycle), wstatus);
    return false;
  }
  // Writes up to the one in flight when the child died may have landed.
  *max_applied = static_cast<uint64_t>(last_reported + 2);
  return true;
}

// Runs one in-process cycle that ends in a simulated machine crash.
bool DropUnsyncedCycle(const std::string& dir, uint64_t cycle, OpStream* stream,
                       Random* rnd, test::FaultInjectionEnv* env,
                       int64_t* acked_sync, uint64_t* max_applied) {
  *acked_sync = -1;
  *max_applied = 0;
  {
    std::unique_ptr<DB> db;
    Status s = DB::Open(SoakOptions(env), dir, &db);
    if (!s.ok()) {
      std::fprintf(stderr, "cycle %llu: open: %s\n",
                   static_cast<unsigned long long>(cycle),
                   s.ToString().c_str());
      return false;
    }
    const uint64_t count = 1 + rnd->Uniform(kMaxOpsInProcess);
    s = ApplyOps(db.get(), stream, cycle << kCycleShift, count,
                 [&](uint64_t i) {
                   if (stream->at(i).sync)
                     *acked_sync = static_cast<int64_t>(i);
                   *max_applied = i + 1;
                 });
    if (!s.ok()) {
      std::fprintf(stderr, "cycle %llu: write: %s\n",
                   static_cast<unsigned long long>(cycle),
                   s.ToString().c_str());
      return false;
    }
    // The crash: from now on nothing reaches the disk, background work
    // included; then the DB is shut down as the process would die.
    env->SetFilesystemActive(false);
  }
  Status s = env->DropUnsyncedData();
  env->SetFilesystemActive(true);
  if (!s.ok()) {
    std::fprintf(stderr, "drop unsynced data: %s\n", s.ToString().c_str());
    return false;
  }
  return true;
}

bool ParseFlag(std::string_view arg, std::string_view name,
               std::string* value) {
  if (arg.substr(0, name.size()) != name) return false;
  *value = std::string(arg.substr(name.size()));
  return true;
}

int Main(int argc, char** argv) {
  uint64_t cycles = 1000;
  uint64_t seed = static_cast<uint64_t>(
      std::chrono::system_clock::now().time_since_epoch().count());
  bool drop_unsynced = false;
  std::string dir;
  for (int i = 1; i < argc; i++) {
    std::string v;
    if (ParseFlag(argv[i], "--cycles=", &v)) {
      cycles = std::strtoull(v.c_str(), nullptr, 10);
    } else if (ParseFlag(argv[i], "--seed=", &v)) {
      seed = std::strtoull(v.c_str(), nullptr, 0);
    } else if (ParseFlag(argv[i], "--dir=", &v)) {
      dir = v;
    } else if (std::string_view(argv[i]) == "--drop-unsynced") {
      drop_unsynced = true;
    } else {
      std::fprintf(stderr,
                   "usage: %s [--cycles=N] [--seed=S] [--drop-unsynced] "
                   "[--dir=PATH]\n",
                   argv[0]);
      return 2;
    }
  }
  bool own_dir = false;
  if (dir.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    std::string templ = std::string(tmp != nullptr && *tmp ? tmp : "/tmp") +
                        "/kill_soak-XXXXXX";
    if (mkdtemp(templ.data()) == nullptr) {
      std::perror("mkdtemp");
      return 2;
    }
    dir = templ + "/db";
    own_dir = true;
  }
  std::printf("kill_soak: mode %s, seed %llu, %llu cycles, db %s\n",
              drop_unsynced ? "drop-unsynced" : "kill",
              static_cast<unsigned long long>(seed),
              static_cast<unsigned long long>(cycles), dir.c_str());
  std::fflush(stdout);

  test::FaultInjectionEnv fault_env(Env::Default());
  Random rnd(seed);
  DbState base(kNumKeys);
  Totals totals;
  int rc = 0;
  for (uint64_t cycle = 1; cycle <= cycles; cycle++) {
    OpStream stream(seed, cycle);
    int64_t acked_sync = -1;
    uint64_t max_applied = 0;
    const bool ran =
        drop_unsynced
            ? DropUnsyncedCycle(dir, cycle, &stream, &rnd, &fault_env,
                                &acked_sync, &max_applied)
            : ForkCycle(dir, cycle, &stream, &rnd, &acked_sync, &max_applied);
    if (!ran) {
      rc = 2;
      break;
    }
    std::unique_ptr<DB> db;
    Status s =
        DB::Open(SoakOptions(drop_unsynced ? static_cast<Env*>(&fault_env)
                                           : Env::Default()),
                 dir, &db);
    DbState found;
    std::string error;
    if (!s.ok()) error = "reopen: " + s.ToString();
    if (s.ok() && ReadState(db.get(), &found, &error)) {
      CheckCycle(cycle, &stream, acked_sync, max_applied, found, &base,
                 &totals);
    } else {
      std::fprintf(stderr, "cycle %llu: %s\n",
                   static_cast<unsigned long long>(cycle), error.c_str());
      totals.wrong_states++;
      totals.cycles = cycle;
      break;
    }
    totals.cycles = cycle;
  }
  std::printf("cycles: %llu\n", static_cast<unsigned long long>(totals.cycles));
  std::printf("acknowledged sync writes checked: %llu\n",
              static_cast<unsigned long long>(totals.acked_checked));
  std::printf("losses: %llu\n", static_cast<unsigned long long>(totals.losses));
  std::printf("wrong states: %llu\n",
              static_cast<unsigned long long>(totals.wrong_states));
  std::printf("seed: %llu\n", static_cast<unsigned long long>(seed));
  if (own_dir && totals.losses == 0 && totals.wrong_states == 0 && rc == 0) {
    std::error_code ec;
    std::filesystem::remove_all(std::filesystem::path(dir).parent_path(), ec);
  } else if (own_dir) {
    std::printf("database kept in %s\n", dir.c_str());
  }
  if (rc != 0) return rc;
  return totals.losses > 0 || totals.wrong_states > 0 ? 1 : 0;
}

}  // namespace
}  // namespace bloomkv::soak

int main(int argc, char** argv) { return bloomkv::soak::Main(argc, argv); }
