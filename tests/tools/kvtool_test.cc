// kvtool, tested as operators use it: the real binary run against databases
// built (and damaged) here with the library. Checks output content, JSON
// validity, exit codes for every kind of bad input, that read-only
// subcommands leave every file byte-identical, and what verify and explain
// report.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "bloomkv/db.h"
#include "bloomkv/version.h"
#include "bloomkv/write_batch.h"
#include "tests/testutil/fault_env.h"
#include "tests/testutil/test_util.h"
#include "util/random.h"

#ifndef KVTOOL_PATH
#error "KVTOOL_PATH must name the kvtool binary (set in tools/CMakeLists.txt)"
#endif

namespace bloomkv {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

using nlohmann::json;

struct RunResult {
  int code = -1;
  std::string out;
  std::string err;
};

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteAll(const std::string& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << data;
}

// Every regular file of a directory, by name, with its contents.
std::map<std::string, std::string> Snapshot(const std::string& dir) {
  std::map<std::string, std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.is_regular_file()) {
      files[e.path().filename().string()] = ReadAll(e.path().string());
    }
  }
  return files;
}

std::vector<std::string> FilesWithSuffix(const std::string& dir,
                                         const std::string& suffix) {
  std::vector<std::string> r;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.size() > suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      r.push_back(e.path().string());
    }
  }
  std::sort(r.begin(), r.end());
  return r;
}

void FlipByte(const std::string& path, size_t offset) {
  std::string data = ReadAll(path);
  ASSERT_LT(offset, data.size());
  data[offset] ^= 0x5a;
  WriteAll(path, data);
}

size_t CountLines(const std::string& text) {
  return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
}

std::string Key(int i) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "key%05d", i);
  return buf;
}

class KvtoolTest : public testing::Test {
 protected:
  // Runs kvtool with args (stdin from `input`), capturing stdout, stderr and
  // the exit code.
  RunResult Run(const std::vector<std::string>& args,
                const std::string& input = "") {
    const std::string in_path = io_.File("stdin");
    const std::string out_path = io_.File("stdout");
    const std::string err_path = io_.File("stderr");
    WriteAll(in_path, input);
    std::vector<std::string> storage = {KVTOOL_PATH};
    storage.insert(storage.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& s : storage) argv.push_back(s.data());
    argv.push_back(nullptr);
    const pid_t pid = fork();
    if (pid == 0) {
      // Only async-signal-safe calls between fork and exec.
      const int in = open(in_path.c_str(), O_RDONLY);
      const int out =
          open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const int err =
          open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (in < 0 || out < 0 || err < 0) _exit(126);
      dup2(in, 0);
      dup2(out, 1);
      dup2(err, 2);
      execv(argv[0], argv.data());
      _exit(127);
    }
    RunResult r;
    int status = 0;
    EXPECT_EQ(pid, waitpid(pid, &status, 0));
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.out = ReadAll(out_path);
    r.err = ReadAll(err_path);
    return r;
  }

  // Runs kvtool expecting JSON on stdout; fails the test if it does not
  // parse.
  json RunJson(const std::vector<std::string>& args, int expected_code = 0) {
    RunResult r = Run(args);
    EXPECT_EQ(expected_code, r.code) << r.err;
    json j;
    try {
      j = json::parse(r.out);
    } catch (const json::exception& e) {
      ADD_FAILURE() << "invalid JSON from kvtool: " << e.what() << "\n"
                    << r.out;
    }
    return j;
  }

  // A failure is one "kvtool: error: ..." line on stderr.
  void ExpectError(const RunResult& r, int code, const std::string& needle) {
    EXPECT_EQ(code, r.code) << r.out << r.err;
    EXPECT_EQ(0u, r.err.rfind("kvtool: error: ", 0)) << r.err;
    EXPECT_EQ(1u, CountLines(r.err)) << r.err;
    EXPECT_NE(std::string::npos, r.err.find(needle)) << r.err;
    // One error, said once: no status text wrapped inside another.
    EXPECT_LE(test::CountStatusPrefixes(r.err), 1) << r.err;
  }

  // `segments` flushed segments of `per_segment` keys each; segment s holds
  // key(s * per_segment) ... with disjoint ranges. When `overlap` is set,
  // every segment holds random 8-character codes instead, so that every key
  // range covers almost every key and only the filters can skip segments.
  // Leaves `unflushed` more keys in the log.
  void BuildDb(int segments, int per_segment, bool overlap = false,
               int unflushed = 0, bool filters = true) {
    Options options;
    options.create_if_missing = true;
    if (!filters) options.filter_policy = nullptr;
    // Every flush stays a level-0 segment, so tests know what they built.
    test::KeepEverythingInLevelZero(&options);
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(options, db_, &db).ok());
    Random rnd(301);
    int n = 0;
    for (int s = 0; s < segments; s++) {
      for (int i = 0; i < per_segment; i++) {
        std::string key = overlap ? test::RandomString(&rnd, 8) : Key(n);
        // Keep codes alphanumeric-free of the made-up absent keys below.
        if (overlap) key = "c" + key;
        present_[key] = "value-" + std::to_string(n);
        ASSERT_TRUE(db->Put(WriteOptions(), key, present_[key]).ok());
        n++;
      }
      ASSERT_TRUE(db->Flush().ok());
    }
    for (int i = 0; i < unflushed; i++) {
      std::string key = "log" + Key(i);
      present_[key] = std::string(1000, static_cast<char>('a' + i % 26));
      ASSERT_TRUE(db->Put(WriteOptions(), key, present_[key]).ok());
    }
    for (const SegmentInfo& i : db->GetSegmentInfo()) {
      segment_files_.push_back(i.file_name);
    }
  }

  test::TempDir dir_{"kvtool"};
  test::TempDir io_{"kvtool-io"};
  const std::string db_ = dir_.File("db");
  std::map<std::string, std::string> present_;
  std::vector<std::string> segment_files_;
};

// ---- command line ----------------------------------------------------------

TEST_F(KvtoolTest, HelpListsEverySubcommandAndTheExitCodes) {
  RunResult r = Run({"--help"});
  EXPECT_EQ(0, r.code);
  EXPECT_NE(std::string::npos, r.out.find("Exit codes:"));
  for (const char* sub :
       {"info", "segments", "segment", "get", "put", "delete", "scan", "dump",
        "explain", "verify", "filter-check", "compact", "load", "repair",
        "checkpoint", "capacity"}) {
    SCOPED_TRACE(sub);
    EXPECT_NE(std::string::npos, r.out.find(std::string("  ") + sub + " "));
    RunResult h = Run({sub, "--help"});
    EXPECT_EQ(0, h.code) << h.err;
    EXPECT_NE(std::string::npos, h.out.find(std::string("kvtool ") + sub))
        << h.out;
    EXPECT_TRUE(h.err.empty()) << h.err;
  }
}

TEST_F(KvtoolTest, VersionPrintsTheLibraryVersionAndExitsWithCode0) {
  RunResult r = Run({"--version"});
  EXPECT_EQ(0, r.code) << r.err;
  EXPECT_EQ(std::string("kvtool ") + VersionString() + "\n", r.out);
  EXPECT_TRUE(r.err.empty()) << r.err;
}

// The model itself is tested in db/capacity_model_test.cc; here, that the
// command reports it and rejects what it cannot plan.
TEST_F(KvtoolTest, CapacityPlansAStoreAndRejectsBadArguments) {
  json j = RunJson({"capacity", "--entries", "100000000", "--json"});
  ASSERT_TRUE(j.contains("levels"));
  uint64_t entries = 0, segments = 0, filters = 0;
  for (const json& lv : j["levels"]) {
    entries += lv["entries"].get<uint64_t>();
    segments += lv["segments"].get<uint64_t>();
    filters += lv["filter_bytes"].get<uint64_t>();
  }
  EXPECT_NEAR(1e8, static_cast<double>(entries), 1e5);
  EXPECT_EQ(j["segments"].get<uint64_t>(), segments);
  EXPECT_EQ(j["filter_bytes"].get<uint64_t>(), filters);
  // The default: 8-bit fuse filters below level 0, about 9.5 bits per key;
  // one probe per level for an absent key.
  EXPECT_NEAR(1.18e8, static_cast<double>(filters), 0.05e8);
  for (const json& lv : j["levels"]) {
    EXPECT_EQ("bloomkv.BinaryFuse8", lv["filter"].get<std::string>());
  }
  EXPECT_EQ(static_cast<double>(j["levels"].size()),
            j["probes_per_miss"].get<double>());
  // The bloom filter at every level: 10 bits per key.
  json bloom = RunJson({"capacity", "--entries", "100000000",
                        "--deep-filter", "bloom", "--json"});
  EXPECT_NEAR(1.25e8, static_cast<double>(bloom["filter_bytes"].get<uint64_t>()),
              0.02e8);
  EXPECT_EQ("bloomkv.BlockedBloom.v1",
            bloom["levels"][0]["filter"].get<std::string>());
  EXPECT_GT(bloom["block_reads_per_miss"].get<double>(),
            2 * j["block_reads_per_miss"].get<double>());

  // The descriptor budget that keeps every segment open: the segments
  // plus the ten files outside the table cache.
  EXPECT_EQ(j["segments"].get<uint64_t>() + 10,
            j["max_open_files_to_keep_all_open"].get<uint64_t>());

  RunResult text = Run({"capacity", "--entries", "1000000"});
  EXPECT_EQ(0, text.code) << text.err;
  EXPECT_NE(std::string::npos, text.out.find("total: ")) << text.out;
  EXPECT_NE(std::string::npos,
            text.out.find("open files: every segment stays open with the "
                          "default max_open_files (1000)"))
      << text.out;
  // 10^9 entries settle into about 4,200 segments, past the default.
  RunResult large = Run({"capacity", "--entries", "1000000000"});
  EXPECT_EQ(0, large.code) << large.err;
  EXPECT_NE(std::string::npos,
            large.out.find("(or -1) keeps every segment open; with the "
                           "default (1000)"))
      << large.out;
  ExpectError(Run({"capacity", "--entries", "0"}), 2, "--entries");
  ExpectError(Run({"capacity"}), 2, "--entries");
  ExpectError(Run({"capacity", "--entries", "10", "--bits-per-key", "-1"}), 2,
              "--bits-per-key");
  ExpectError(Run({"capacity", "--entries", "10", "--deep-filter", "ribbon"}),
              2, "--deep-filter");
}

TEST_F(KvtoolTest, UsageErrorsExitWithCode2AndOneLine) {
  BuildDb(1, 10);
  ExpectError(Run({}), 2, "subcommand");
  // A negative count is refused, not taken for a huge one.
  ExpectError(Run({"scan", db_, "--limit", "-1"}), 2, "--limit");
  ExpectError(Run({"frobnicate", db_}), 2, "unknown subcommand 'frobnicate'");
  ExpectError(Run({"info", db_, "--frobnicate"}), 2, "--frobnicate");
  ExpectError(Run({"scan", db_, "--limit", "many"}), 2, "--limit");
  ExpectError(Run({"get", db_}), 2, "KEY");
  ExpectError(Run({"get", db_, ""}), 2, "empty key");
  ExpectError(Run({"filter-check", db_, "--samples", "-5"}), 2, "--samples");
}

TEST_F(KvtoolTest, MissingPathsAndNonDatabasesExitWithCode3) {
  const std::string missing = dir_.File("nothing-here");
  for (const char* sub : {"info", "segments", "get", "scan", "explain",
                          "filter-check", "put", "delete", "compact"}) {
    SCOPED_TRACE(sub);
    std::vector<std::string> args = {sub, missing};
    if (std::string(sub) == "get" || std::string(sub) == "explain" ||
        std::string(sub) == "delete") {
      args.push_back("k");
    }
    if (std::string(sub) == "put") {
      args.push_back("k");
      args.push_back("v");
    }
    ExpectError(Run(args), 3, missing);
  }
  ExpectError(Run({"verify", missing}), 3, missing);
  ExpectError(Run({"segment", missing}), 3, missing);
  ExpectError(Run({"dump", missing}), 3, missing);
  ExpectError(Run({"load", db_, missing}), 3, missing);

  // A directory that holds no database, and a plain file where a database
  // or a segment is expected.
  const std::string empty = dir_.File("empty");
  std::filesystem::create_directory(empty);
  ExpectError(Run({"info", empty}), 3, "not a bloomkv database");
  ExpectError(Run({"verify", empty}), 3, "not a bloomkv database");
  const std::string text = dir_.File("notes.txt");
  WriteAll(text,
           "just some text, long enough to hold a footer's worth of "
           "bytes, but certainly not a segment file\n");
  ExpectError(Run({"info", text}), 3, "not a directory");
  ExpectError(Run({"segment", text}), 3, "not a segment file");
  ExpectError(Run({"segment", empty}), 3, "directory");
  // Nothing was created along the way.
  EXPECT_FALSE(std::filesystem::exists(missing));
  EXPECT_TRUE(std::filesystem::is_empty(empty));
}

// ---- inspection ------------------------------------------------------------

TEST_F(KvtoolTest, InfoAggregatesLevelsAndMeasuresFilters) {
  BuildDb(3, 400);
  RunResult r = Run({"info", db_, "--seed", "7"});
  ASSERT_EQ(0, r.code) << r.err;
  EXPECT_NE(std::string::npos, r.out.find("3 in 1 level")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("theoretical FP")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("KiB")) << r.out;

  json j = RunJson({"info", db_, "--json", "--seed", "7", "--samples", "2000"});
  ASSERT_EQ(1u, j["levels"].size());
  const json& l0 = j["levels"][0];
  EXPECT_EQ(0, l0["level"]);
  EXPECT_EQ(3, l0["segments"]);
  EXPECT_EQ(1200, l0["entries"]);
  EXPECT_GT(l0["filter_bytes"].get<uint64_t>(), 0u);
  EXPECT_NEAR(10.0, l0["bits_per_key"].get<double>(), 2.0);
  EXPECT_GT(l0["theoretical_fp_rate"].get<double>(), 0.0);
  EXPECT_LT(l0["theoretical_fp_rate"].get<double>(), 0.05);
  // Every made-up key lands inside one segment's range (ranges are
  // disjoint), so each lookup probes exactly one filter.
  EXPECT_EQ(2000, l0["filter_probes"]);
  ASSERT_TRUE(l0["measured_fp_rate"].is_number());
  EXPECT_LT(l0["measured_fp_rate"].get<double>(), 0.05);
  EXPECT_EQ(1200, j["total"]["entries"]);

  // Without samples nothing is measured, and JSON says so with null.
  j = RunJson({"info", db_, "--json", "--samples", "0"});
  EXPECT_TRUE(j["levels"][0]["measured_fp_rate"].is_null());
}

// A store with bloom filters at level 0 and binary fuse filters below:
// info names each level's filter kind, segments each segment's.
TEST_F(KvtoolTest, InfoAndSegmentsNameEachLevelsFilterKind) {
  {
    Options options;
    options.create_if_missing = true;
    options.deep_filter_policy = NewBinaryFuseFilterPolicy(8);
    test::KeepEverythingInLevelZero(&options);
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(options, db_, &db).ok());
    for (int i = 0; i < 2000; i++) {
      ASSERT_TRUE(db->Put(WriteOptions(), Key(i), "deep").ok());
    }
    ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());
    for (int i = 2000; i < 2100; i++) {
      ASSERT_TRUE(db->Put(WriteOptions(), Key(i), "shallow").ok());
    }
    ASSERT_TRUE(db->Flush().ok());
  }
  json j = RunJson({"info", db_, "--json", "--seed", "3"});
  ASSERT_EQ(2u, j["levels"].size()) << j.dump(2);
  EXPECT_EQ(0, j["levels"][0]["level"]);
  EXPECT_EQ(json({"bloomkv.BlockedBloom.v1"}),
            j["levels"][0]["filter_policies"]);
  EXPECT_EQ(6, j["levels"][1]["level"]);
  EXPECT_EQ(json({"bloomkv.BinaryFuse8"}), j["levels"][1]["filter_policies"]);
  EXPECT_EQ(json({"bloomkv.BinaryFuse8", "bloomkv.BlockedBloom.v1"}),
            j["total"]["filter_policies"]);
  // The fuse level's rate is 2^-8 in theory, and was measured.
  EXPECT_NEAR(1.0 / 256, j["levels"][1]["theoretical_fp_rate"].get<double>(),
              1e-9);
  EXPECT_TRUE(j["levels"][1]["measured_fp_rate"].is_number());

  RunResult r = Run({"info", db_, "--samples", "0"});
  ASSERT_EQ(0, r.code) << r.err;
  EXPECT_NE(std::string::npos, r.out.find("kind")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("bloomkv.BinaryFuse8+"
                                          "bloomkv.BlockedBloom.v1"))
      << r.out;

  j = RunJson({"segments", db_, "--json", "--samples", "0"});
  ASSERT_EQ(2u, j["segments"].size()) << j.dump(2);
  for (const json& seg : j["segments"]) {
    EXPECT_EQ(
        seg["level"] == 0 ? "bloomkv.BlockedBloom.v1" : "bloomkv.BinaryFuse8",
        seg["filter_policy"])
        << seg.dump();
  }
}

TEST_F(KvtoolTest, SegmentsListsOneRowPerSegment) {
  BuildDb(3, 100);
  json j = RunJson({"segments", db_, "--json", "--seed", "1"});
  ASSERT_EQ(3u, j["segments"].size());
  std::set<std::string> files;
  for (const json& s : j["segments"]) {
    files.insert(s["file"].get<std::string>());
    EXPECT_EQ(100, s["entries"]);
    EXPECT_TRUE(s["has_filter"].get<bool>());
    EXPECT_TRUE(s["readable"].get<bool>());
  }
  EXPECT_EQ(std::set<std::string>(segment_files_.begin(), segment_files_.end()),
            files);
  // Level 0 lists the newest segment first.
  EXPECT_EQ(Key(200), j["segments"][0]["smallest_key"]);
  EXPECT_EQ(Key(299), j["segments"][0]["largest_key"]);

  RunResult r = Run({"segments", db_});
  ASSERT_EQ(0, r.code) << r.err;
  EXPECT_EQ(2u + 3u, CountLines(r.out)) << r.out;  // header, rule, rows
  EXPECT_NE(std::string::npos, r.out.find(Key(0)));
}

TEST_F(KvtoolTest, SegmentShowsPropertiesAndFilterParameters) {
  BuildDb(1, 500);
  ASSERT_EQ(1u, segment_files_.size());
  json j = RunJson({"segment", segment_files_[0], "--json"});
  EXPECT_EQ(500, j["entries"]);
  EXPECT_EQ(0, j["deletions"]);
  EXPECT_GE(j["data_blocks"].get<int>(), 1);
  // Raw key and value bytes over stored data bytes (this uncompressed
  // level-0 segment stores about as much as it was given).
  ASSERT_GT(j["data_bytes"].get<double>(), 0.0);
  EXPECT_NEAR((j["raw_key_bytes"].get<double>() +
               j["raw_value_bytes"].get<double>()) /
                  j["data_bytes"].get<double>(),
              j["compression_ratio"].get<double>(), 1e-9);
  EXPECT_GT(j["compression_ratio"].get<double>(), 0.5);
  EXPECT_FALSE(j["filter"]["policy"].get<std::string>().empty());
  EXPECT_TRUE(j["filter"]["usable"].get<bool>());
  EXPECT_EQ(500, j["filter"]["keys"]);
  EXPECT_NEAR(10.0, j["filter"]["configured_bits_per_key"].get<double>(), 1e-9);
  EXPECT_LT(j["filter"]["theoretical_fp_rate"].get<double>(), 0.05);
  EXPECT_EQ(Key(0), j["smallest"]["key"]);
  EXPECT_EQ(Key(499), j["largest"]["key"]);

  RunResult r = Run({"segment", segment_files_[0]});
  ASSERT_EQ(0, r.code) << r.err;
  EXPECT_NE(std::string::npos, r.out.find("compression ratio:")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("theoretical FP:")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find(Key(0) + " @ seq 1")) << r.out;
}

TEST_F(KvtoolTest, DumpShowsSequenceNumbersAndTombstones) {
  {
    Options options;
    options.create_if_missing = true;
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(options, db_, &db).ok());
    ASSERT_TRUE(db->Put(WriteOptions(), "a", "1").ok());
    ASSERT_TRUE(db->Put(WriteOptions(), "b", std::string("x\ty\0z", 5)).ok());
    ASSERT_TRUE(db->Delete(WriteOptions(), "a").ok());
    ASSERT_TRUE(db->Flush().ok());
    segment_files_.push_back(db->GetSegmentInfo().at(0).file_name);
  }
  json j = RunJson({"dump", segment_files_[0], "--json"});
  ASSERT_EQ(3, j["count"]);
  EXPECT_EQ(1, j["tombstones"]);
  const json& e = j["entries"];
  // Newest version of a key first.
  EXPECT_EQ("a", e[0]["key"]);
  EXPECT_EQ(3, e[0]["sequence"]);
  EXPECT_EQ("delete", e[0]["type"]);
  EXPECT_FALSE(e[0].contains("value"));
  EXPECT_EQ("a", e[1]["key"]);
  EXPECT_EQ(1, e[1]["sequence"]);
  EXPECT_EQ("put", e[1]["type"]);
  EXPECT_EQ("b", e[2]["key"]);
  EXPECT_EQ("x\\ty\\x00z", e[2]["value"]);

  RunResult r = Run({"dump", segment_files_[0]});
  ASSERT_EQ(0, r.code) << r.err;
  EXPECT_NE(std::string::npos, r.out.find("a\t@3\tDEL\t(tombstone)")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("b\t@2\tPUT\tx\\ty\\x00z")) << r.out;
  r = Run({"dump", segment_files_[0], "--limit", "1"});
  EXPECT_EQ(2u, CountLines(r.out)) << r.out;  // one entry and the summary
}

TEST_F(KvtoolTest, GetAndScan) {
  BuildDb(2, 50, /*overlap=*/false, /*unflushed=*/3);
  RunResult r = Run({"get", db_, Key(42)});
  EXPECT_EQ(0, r.code) << r.err;
  EXPECT_EQ("value-42\n", r.out);
  // Keys still only in the log are found too (replayed in memory).
  r = Run({"get", db_, "log" + Key(1)});
  EXPECT_EQ(0, r.code) << r.err;
  ExpectError(Run({"get", db_, "absent"}), 1, "key not found: absent");
  json j = RunJson({"get", db_, "absent", "--json"}, 1);
  EXPECT_FALSE(j["found"].get<bool>());
  j = RunJson({"get", db_, Key(7), "--json"});
  EXPECT_EQ("value-7", j["value"]);

  r = Run({"scan", db_, "--from", Key(10), "--to", Key(13)});
  ASSERT_EQ(0, r.code) << r.err;
  EXPECT_EQ(Key(10) + "\tvalue-10\n" + Key(11) + "\tvalue-11\n" + Key(12) +
                "\tvalue-12\n",
            r.out);
  j = RunJson({"scan", db_, "--json", "--from", Key(95), "--limit", "3"});
  ASSERT_EQ(3, j["count"]);
  EXPECT_TRUE(j["complete"].get<bool>());
  EXPECT_EQ(Key(95), j["entries"][0]["key"]);
  EXPECT_EQ(Key(97), j["entries"][2]["key"]);
  j = RunJson({"scan", db_, "--json"});
  EXPECT_EQ(103, j["count"]);
  j = RunJson({"scan", db_, "--json", "--from", "zzz"});
  EXPECT_EQ(0, j["count"]);
}

TEST_F(KvtoolTest, ExplainShowsSegmentsSkippedByFilter) {
  BuildDb(4, 300, /*overlap=*/true);
  // Inside every segment's key range ("c" followed by printable codes), but
  // never written: only the filters can rule the segments out.
  const std::string absent = "cQ-absent";
  ASSERT_EQ(0u, present_.count(absent));
  json j = RunJson({"explain", db_, absent, "--json"});
  EXPECT_EQ("not found", j["result"]);
  ASSERT_EQ(4u, j["segments"].size());
  int by_filter = 0;
  for (const json& s : j["segments"]) {
    EXPECT_NE("skipped by key range", s["outcome"]);
    if (s["outcome"] == "skipped by filter") {
      by_filter++;
      EXPECT_EQ(0, s["data_blocks_read"]);
    }
  }
  EXPECT_GE(by_filter, 3);  // at 10 bits/key a false positive is ~1%

  RunResult r = Run({"explain", db_, absent});
  ASSERT_EQ(0, r.code) << r.err;
  EXPECT_NE(std::string::npos, r.out.find("skipped by filter")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("result:              not found"))
      << r.out;

  const std::string present = present_.begin()->first;
  j = RunJson({"explain", db_, present, "--json"});
  EXPECT_EQ("found", j["result"]);
  EXPECT_EQ(present_.begin()->second, j["value"]);
  EXPECT_EQ("found", j["segments"].back()["outcome"]);
  EXPECT_GE(j["data_blocks_read"].get<int>(), 1);
}

TEST_F(KvtoolTest, FilterCheckMeasuresEverySegment) {
  BuildDb(3, 2000, /*overlap=*/true);
  json j = RunJson(
      {"filter-check", db_, "--json", "--samples", "20000", "--seed", "11"});
  ASSERT_EQ(3u, j["segments"].size());
  for (const json& s : j["segments"]) {
    const double theory = s["theoretical_fp_rate"].get<double>();
    const double measured = s["measured_fp_rate"].get<double>();
    EXPECT_EQ(20000, s["probes"]);
    EXPECT_GT(theory, 0.002);
    EXPECT_LT(theory, 0.03);
    // 20000 probes: the standard deviation is under 0.1 percentage points.
    EXPECT_NEAR(theory, measured, 0.006);
  }
  EXPECT_EQ(60000, j["total"]["probes"]);

  RunResult r = Run({"filter-check", db_, "--samples", "500", "--seed", "1"});
  ASSERT_EQ(0, r.code) << r.err;
  EXPECT_NE(std::string::npos, r.out.find("measured FP")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("total")) << r.out;
}

TEST_F(KvtoolTest, FilterCheckWithoutFilters) {
  BuildDb(2, 50, /*overlap=*/false, /*unflushed=*/0, /*filters=*/false);
  json j = RunJson(
      {"filter-check", db_, "--json", "--samples", "100", "--seed", "1"});
  ASSERT_EQ(2u, j["segments"].size());
  EXPECT_FALSE(j["segments"][0]["has_filter"].get<bool>());
  EXPECT_TRUE(j["segments"][0]["measured_fp_rate"].is_null());
  EXPECT_EQ(0, j["total"]["probes"]);
}

TEST_F(KvtoolTest, ReadOnlySubcommandsChangeNoByte) {
  BuildDb(3, 200, /*overlap=*/false, /*unflushed=*/50);
  const auto before = Snapshot(db_);
  ASSERT_FALSE(FilesWithSuffix(db_, ".log").empty());
  const std::vector<std::vector<std::string>> commands = {
      {"info", db_},
      {"info", db_, "--json"},
      {"segments", db_},
      {"segments", db_, "--json"},
      {"segment", segment_files_[0]},
      {"segment", segment_files_[0], "--json"},
      {"get", db_, Key(3)},
      {"get", db_, "absent", "--json"},
      {"scan", db_},
      {"scan", db_, "--json"},
      {"dump", segment_files_[1]},
      {"dump", segment_files_[1], "--json"},
      {"explain", db_, Key(5)},
      {"explain", db_, "absent", "--json"},
      {"verify", db_},
      {"verify", db_, "--json"},
      {"verify", segment_files_[2]},
      {"filter-check", db_, "--samples", "200"},
      {"filter-check", db_, "--json", "--samples", "200"},
  };
  for (const auto& args : commands) {
    SCOPED_TRACE(args[0]);
    RunResult r = Run(args);
    EXPECT_TRUE(r.code == 0 || (args[0] == "get" && r.code == 1)) << r.err;
  }
  EXPECT_EQ(before, Snapshot(db_));
}

// ---- verify ----------------------------------------------------------------

TEST_F(KvtoolTest, VerifyCleanDatabase) {
  BuildDb(2, 100, /*overlap=*/false, /*unflushed=*/10);
  RunResult r = Run({"verify", db_});
  EXPECT_EQ(0, r.code) << r.out << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;
  EXPECT_EQ(std::string::npos, r.out.find("CORRUPT")) << r.out;
  json j = RunJson({"verify", db_, "--json"});
  EXPECT_TRUE(j["ok"].get<bool>());
  // CURRENT, a manifest, a log and two segments.
  EXPECT_EQ(5, j["files_checked"]);
}

TEST_F(KvtoolTest, VerifyFindsAFlippedByteInASegment) {
  BuildDb(2, 500);
  const std::string bad = segment_files_[1];
  FlipByte(bad, 100);  // inside the first data block
  RunResult r = Run({"verify", db_});
  EXPECT_EQ(1, r.code) << r.out;
  // One line naming the file and the offset of the damaged block.
  std::istringstream lines(r.out);
  std::string line;
  int corrupt_lines = 0;
  while (std::getline(lines, line)) {
    if (line.rfind("CORRUPT", 0) != 0) continue;
    corrupt_lines++;
    EXPECT_NE(std::string::npos, line.find(bad)) << line;
    EXPECT_NE(std::string::npos, line.find("at offset 0")) << line;
  }
  EXPECT_EQ(1, corrupt_lines) << r.out;
  ExpectError(r, 1, "1 corrupt file");
  EXPECT_NE(std::string::npos, r.out.find("ok       " + segment_files_[0]));

  json j = RunJson({"verify", bad, "--json"}, 1);
  ASSERT_EQ(1u, j["files"].size());
  EXPECT_EQ("corrupt", j["files"][0]["status"]);
  EXPECT_EQ(0, j["files"][0]["problems"][0]["offset"]);

  // The damaged data block is not needed to open the database, so inspection
  // still works; scanning through it fails with exit code 4.
  EXPECT_EQ(0, Run({"info", db_, "--samples", "0"}).code);
  ExpectError(Run({"scan", db_}), 4, bad);
  ExpectError(Run({"dump", bad}), 4, "offset 0");
}

// A segment the manifest lists but that is gone is damage (exit 4 naming
// it), never "key not found" (exit 1), for get and scan alike.
TEST_F(KvtoolTest, MissingSegmentIsCorruptionForGetAndScan) {
  BuildDb(2, 100);
  const std::string gone = segment_files_[0];
  std::filesystem::remove(gone);
  const std::string name = gone.substr(gone.rfind('/') + 1);
  ExpectError(Run({"scan", db_}), 4, name);
  ExpectError(Run({"get", db_, Key(50)}), 4, name);
  ExpectError(Run({"get", db_, Key(150)}), 4, name);
}

TEST_F(KvtoolTest, DamagedFooterOrManifestIsCorruption) {
  BuildDb(2, 100);
  const std::string seg = segment_files_[0];
  const size_t size = std::filesystem::file_size(seg);
  FlipByte(seg, size - 20);  // the footer
  RunResult r = Run({"info", db_, "--samples", "0"});
  ExpectError(r, 4, seg);
  ExpectError(Run({"segment", seg}), 4, seg);
  r = Run({"verify", seg});
  EXPECT_EQ(1, r.code);
  EXPECT_NE(std::string::npos, r.out.find("CORRUPT")) << r.out;

  const std::vector<std::string> manifests = FilesWithSuffix(db_, "");
  std::string manifest;
  for (const auto& f : manifests) {
    if (f.find("MANIFEST-") != std::string::npos) manifest = f;
  }
  ASSERT_FALSE(manifest.empty());
  FlipByte(manifest, 10);
  ExpectError(Run({"info", db_}), 4, "MANIFEST");
  ExpectError(Run({"get", db_, Key(1)}), 4, "MANIFEST");
  r = Run({"verify", db_});
  EXPECT_EQ(1, r.code);
  EXPECT_NE(std::string::npos, r.out.find("CORRUPT  " + manifest)) << r.out;
}

TEST_F(KvtoolTest, VerifyFindsDamageInTheMiddleOfALog) {
  BuildDb(0, 0, /*overlap=*/false, /*unflushed=*/200);  // ~200 KiB of log
  const std::vector<std::string> logs = FilesWithSuffix(db_, ".log");
  ASSERT_EQ(1u, logs.size());
  const size_t size = std::filesystem::file_size(logs[0]);
  ASSERT_GT(size, 150000u);
  RunResult r = Run({"verify", logs[0]});
  EXPECT_EQ(0, r.code) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("200 write batches")) << r.out;

  FlipByte(logs[0], size / 2);
  r = Run({"verify", db_});
  EXPECT_EQ(1, r.code) << r.out;
  bool named = false;
  std::istringstream lines(r.out);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("CORRUPT", 0) == 0) {
      EXPECT_NE(std::string::npos, line.find(logs[0])) << line;
      EXPECT_NE(std::string::npos, line.find("offset")) << line;
      named = true;
    }
  }
  EXPECT_TRUE(named) << r.out;
  json j = RunJson({"verify", logs[0], "--json"}, 1);
  const json& problem = j["files"][0]["problems"][0];
  ASSERT_TRUE(problem["offset"].is_number()) << j.dump();
  EXPECT_LE(problem["offset"].get<size_t>(), size / 2);
  EXPECT_GT(problem["offset"].get<size_t>(), size / 2 - 33000);
}

// 20 records of 1000 bytes left in the log by a crash (crashed) or a clean
// close, which records the log's length in the manifest.
std::string WriteUnflushedLog(const std::string& path, bool crashed) {
  test::FaultInjectionEnv env(Env::Default());
  Options options;
  options.create_if_missing = true;
  options.env = &env;
  std::unique_ptr<DB> db;
  EXPECT_TRUE(DB::Open(options, path, &db).ok());
  for (int i = 0; i < 20; i++) {
    EXPECT_TRUE(db->Put(WriteOptions(), Key(i), std::string(1000, 'v')).ok());
  }
  if (crashed) {
    test::CloseAsInACrash(&db, &env);
  } else {
    db.reset();
  }
  return FilesWithSuffix(path, ".log").at(0);
}

TEST_F(KvtoolTest, VerifyCallsATornLogTailANote) {
  const std::string log = WriteUnflushedLog(db_, /*crashed=*/true);
  std::filesystem::resize_file(log, std::filesystem::file_size(log) - 300);
  RunResult r = Run({"verify", db_});
  EXPECT_EQ(0, r.code) << r.out << r.err;
  EXPECT_NE(std::string::npos, r.out.find("note     " + log + ": torn tail"))
      << r.out;
  json j = RunJson({"verify", db_, "--json"});
  EXPECT_TRUE(j["ok"].get<bool>());
}

TEST_F(KvtoolTest, VerifyCallsACutOfACleanlyClosedLogCorruption) {
  const std::string log = WriteUnflushedLog(db_, /*crashed=*/false);
  std::filesystem::resize_file(log, std::filesystem::file_size(log) - 300);
  RunResult r = Run({"verify", db_});
  EXPECT_EQ(1, r.code) << r.out << r.err;
  // The log's own line says so, not only the Open check.
  EXPECT_NE(std::string::npos,
            r.out.find("CORRUPT  " + log + " at offset " +
                       std::to_string(std::filesystem::file_size(log)) +
                       ": ends before the "))
      << r.out;
  EXPECT_EQ(std::string::npos, r.out.find("torn tail")) << r.out;
}

TEST_F(KvtoolTest, VerifyCallsDamageToACleanlyClosedLogsEndCorruption) {
  const std::string log = WriteUnflushedLog(db_, /*crashed=*/false);
  FlipByte(log, std::filesystem::file_size(log) - 10);  // the last record
  RunResult r = Run({"verify", db_});
  EXPECT_EQ(1, r.code) << r.out << r.err;
  EXPECT_NE(std::string::npos,
            r.out.find(": damaged record within the " +
                       std::to_string(std::filesystem::file_size(log)) +
                       " bytes the manifest records as synced"))
      << r.out;
  EXPECT_EQ(std::string::npos, r.out.find("torn tail")) << r.out;
}

// A crash in the middle of a flush or compaction leaves a segment no manifest
// names, in any state from empty to complete. Recovery ignores such files, so
// verify notes them and still exits 0 when every listed file is intact.
TEST_F(KvtoolTest, VerifyCallsUnlistedSegmentsNotesWhateverTheirState) {
  BuildDb(2, 200);
  const std::string whole = ReadAll(segment_files_[0]);
  const std::vector<std::pair<std::string, std::string>> leftovers = {
      {"empty", ""},
      {"a few bytes", whole.substr(0, 7)},
      {"first half", whole.substr(0, whole.size() / 2)},
      {"all but the footer", whole.substr(0, whole.size() - 10)},
      {"complete", whole},
  };
  for (size_t i = 0; i < leftovers.size(); i++) {
    SCOPED_TRACE(leftovers[i].first);
    const std::string leftover =
        db_ + "/" + std::to_string(900000 + i) + ".seg";
    WriteAll(leftover, leftovers[i].second);
    RunResult r = Run({"verify", db_});
    EXPECT_EQ(0, r.code) << r.out << r.err;
    EXPECT_TRUE(r.err.empty()) << r.err;
    EXPECT_EQ(std::string::npos, r.out.find("CORRUPT")) << r.out;
    EXPECT_NE(std::string::npos,
              r.out.find("note     " + leftover + ": not listed"))
        << r.out;
    json j = RunJson({"verify", db_, "--json"});
    EXPECT_TRUE(j["ok"].get<bool>()) << j.dump(2);
    EXPECT_EQ(0, j["corrupt_files"]);
    std::filesystem::remove(leftover);
  }

  // A listed segment with the same damage is still a problem.
  std::filesystem::resize_file(segment_files_[1], whole.size() / 2);
  RunResult r = Run({"verify", db_});
  EXPECT_EQ(1, r.code) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("CORRUPT  " + segment_files_[1]))
      << r.out;
}

// verify gives Open's verdict: whatever damage makes DB::Open refuse the
// database makes verify fail too, naming what Open names; damage Open
// accepts leaves verify to its own checksum walk.
TEST_F(KvtoolTest, VerifyFailsWheneverOpenDoes) {
  struct Case {
    const char* what;
    std::function<std::string(const std::string& db)> damage;  // the file
  };
  auto the_log = [](const std::string& db) {
    return FilesWithSuffix(db, ".log").at(0);
  };
  const std::vector<Case> cases = {
      {"the log the manifest names deleted",
       [&](const std::string& db) {
         const std::string log = the_log(db);
         std::filesystem::remove(log);
         return log;
       }},
      {"the log the manifest names emptied",
       [&](const std::string& db) {
         const std::string log = the_log(db);
         std::filesystem::resize_file(log, 0);
         return log;
       }},
      {"a listed segment deleted",
       [&](const std::string&) {
         std::filesystem::remove(segment_files_[0]);
         return segment_files_[0];
       }},
      {"a listed segment's footer damaged",
       [&](const std::string&) {
         FlipByte(segment_files_[1],
                  std::filesystem::file_size(segment_files_[1]) - 20);
         return segment_files_[1];
       }},
      {"an unlisted segment left over",
       [&](const std::string& db) {
         WriteAll(db + "/900000.seg", "leftover");
         return std::string();
       }},
  };
  const std::string pristine = dir_.File("pristine");
  BuildDb(2, 100, /*overlap=*/false, /*unflushed=*/10);
  std::filesystem::copy(db_, pristine);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    std::filesystem::remove_all(db_);
    std::filesystem::copy(pristine, db_);
    const std::string damaged = c.damage(db_);
    Options options;
    std::unique_ptr<DB> db;
    const Status open = DB::OpenForReadOnly(options, db_, &db);
    db.reset();
    RunResult r = Run({"verify", db_});
    if (open.ok()) {
      EXPECT_EQ(0, r.code) << r.out << r.err;
      continue;
    }
    EXPECT_NE(0, r.code) << "Open says " << open.ToString() << "\n" << r.out;
    const std::string name = damaged.substr(damaged.rfind('/') + 1);
    EXPECT_NE(std::string::npos, open.ToString().find(name));
    EXPECT_NE(std::string::npos, r.out.find("CORRUPT")) << r.out;
    EXPECT_NE(std::string::npos, r.out.find(name)) << r.out;
    json j = RunJson({"verify", db_, "--json"}, r.code);
    EXPECT_FALSE(j["ok"].get<bool>()) << j.dump(2);
    // The whole database is used the same way by Open and by verify: a
    // writable Open refuses it too.
    EXPECT_FALSE(DB::Open(options, db_, &db).ok());
  }
}

// ---- repair and checkpoint -------------------------------------------------

TEST_F(KvtoolTest, RepairRebuildsALostManifestAndReports) {
  BuildDb(2, 100, /*overlap=*/false, /*unflushed=*/10);
  ExpectError(Run({"repair", dir_.File("missing")}), 3, "missing");
  for (const std::string& f : FilesWithSuffix(db_, "")) {
    if (f.find("MANIFEST-") != std::string::npos) std::filesystem::remove(f);
  }
  ExpectError(Run({"get", db_, Key(1)}), 4, "CURRENT");
  RunResult r = Run({"repair", db_});
  ASSERT_EQ(0, r.code) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;
  EXPECT_NE(std::string::npos, r.out.find("segments kept intact      2"))
      << r.out;
  EXPECT_NE(std::string::npos, r.out.find("logs replayed             1"))
      << r.out;
  for (const auto& [key, value] : present_) {
    EXPECT_EQ(value + "\n", Run({"get", db_, key}).out) << key;
  }
  EXPECT_EQ(0, Run({"verify", db_}).code);

  json j = RunJson({"repair", db_, "--json"});
  EXPECT_EQ(3, j["segments_kept"]);  // the two, and the one from the log
  EXPECT_EQ(0, j["logs_replayed"]);
  EXPECT_GT(j["last_sequence"].get<uint64_t>(), 200u);
  EXPECT_EQ(0, j["entries_dropped"]);
  EXPECT_EQ(0, j["segments_with_unknown_loss"]);
  EXPECT_EQ(0, j["segments_removed_by_manifest"]);

  Options options;
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(options, db_, &db).ok());
  ExpectError(Run({"repair", db_}), 5, "locked");
}

TEST_F(KvtoolTest, CheckpointCopiesADatabase) {
  BuildDb(2, 100, /*overlap=*/false, /*unflushed=*/10);
  const std::string copy = dir_.File("copy");
  RunResult r = Run({"checkpoint", db_, copy});
  ASSERT_EQ(0, r.code) << r.err;
  EXPECT_EQ("checkpoint of " + db_ + " created in " + copy + "\n", r.out);
  for (const auto& [key, value] : present_) {
    EXPECT_EQ(value + "\n", Run({"get", copy, key}).out) << key;
  }
  EXPECT_EQ(0, Run({"verify", copy}).code);
  ExpectError(Run({"checkpoint", db_, copy}), 2, "already exists");
  ExpectError(Run({"checkpoint", db_, dir_.File("no/such/parent")}), 2,
              "parent directory does not exist");
  const std::string unflushed = dir_.File("unflushed");
  ASSERT_EQ(0, Run({"checkpoint", db_, unflushed, "--no-flush"}).code);
  EXPECT_EQ(present_["log" + Key(3)] + "\n",
            Run({"get", unflushed, "log" + Key(3)}).out);
}

// ---- writing ---------------------------------------------------------------

TEST_F(KvtoolTest, PutDeleteAndCompact) {
  ExpectError(Run({"put", db_, "k", "v"}), 3, db_);
  RunResult r = Run({"put", db_, "k", "v", "--create"});
  ASSERT_EQ(0, r.code) << r.err;
  EXPECT_EQ("v\n", Run({"get", db_, "k"}).out);
  ASSERT_EQ(0, Run({"put", db_, "k2", "v2"}).code);
  ASSERT_EQ(0, Run({"delete", db_, "k"}).code);
  EXPECT_EQ(1, Run({"get", db_, "k"}).code);
  r = Run({"compact", db_});
  ASSERT_EQ(0, r.code) << r.err;
  // Everything merged below level 0, into the last level (level targets
  // are sized from the bottom up); the deleted key is gone for good.
  EXPECT_NE(std::string::npos, r.out.find("L6=1")) << r.out;
  EXPECT_EQ(std::string::npos, r.out.find("L0=")) << r.out;
  EXPECT_EQ("v2\n", Run({"get", db_, "k2"}).out);
  EXPECT_EQ(1, Run({"get", db_, "k"}).code);
  json j = RunJson({"info", db_, "--json", "--samples", "0"});
  EXPECT_EQ(1, j["total"]["segments"].get<int>());
}

TEST_F(KvtoolTest, DeleteRangeDeletesFromBeginUpToEnd) {
  ASSERT_EQ(0, Run({"put", db_, "a", "1", "--create"}).code);
  for (const char* k : {"b", "bb", "c", "d"}) {
    ASSERT_EQ(0, Run({"put", db_, k, "v"}).code);
  }
  RunResult r = Run({"delete-range", db_, "b", "d"});
  ASSERT_EQ(0, r.code) << r.err;
  EXPECT_EQ("1\n", Run({"get", db_, "a"}).out);
  for (const char* k : {"b", "bb", "c"}) EXPECT_EQ(1, Run({"get", db_, k}).code);
  EXPECT_EQ("v\n", Run({"get", db_, "d"}).out);
  // Kept across a reopen and a compaction (the tool exits after each).
  ASSERT_EQ(0, Run({"compact", db_}).code);
  EXPECT_EQ(1, Run({"get", db_, "c"}).code);
  EXPECT_EQ("v\n", Run({"get", db_, "d"}).out);
  // Bytes given as hex: [0x61, 0x62) is "a" and its extensions.
  ASSERT_EQ(0, Run({"delete-range", db_, "61", "62", "--hex"}).code);
  EXPECT_EQ(1, Run({"get", db_, "a"}).code);
  // BEGIN not before END, bad hex, a missing database: nothing changes.
  ExpectError(Run({"delete-range", db_, "d", "d"}), 2, "is not before END");
  ExpectError(Run({"delete-range", db_, "e", "d"}), 2, "is not before END");
  ExpectError(Run({"delete-range", db_, "zz", "61", "--hex"}), 2, "BEGIN");
  ExpectError(Run({"delete-range", db_ + "-missing", "a", "b"}), 3,
              db_ + "-missing");
  EXPECT_EQ("v\n", Run({"get", db_, "d"}).out);
}

TEST_F(KvtoolTest, CompactFromToCompactsOnlyThatRange) {
  ASSERT_EQ(0, Run({"put", db_, "a", "1", "--create"}).code);
  ASSERT_EQ(0, Run({"put", db_, "m", "2"}).code);
  ASSERT_EQ(0, Run({"put", db_, "z", "3"}).code);
  ASSERT_EQ(0, Run({"delete", db_, "m"}).code);
  RunResult r = Run({"compact", db_, "--from", "l", "--to", "n"});
  ASSERT_EQ(0, r.code) << r.err;
  EXPECT_NE(std::string::npos, r.out.find("compacted")) << r.out;
  EXPECT_EQ("1\n", Run({"get", db_, "a"}).out);
  EXPECT_EQ(1, Run({"get", db_, "m"}).code);
  EXPECT_EQ("3\n", Run({"get", db_, "z"}).out);
  // Only a lower or an upper bound.
  EXPECT_EQ(0, Run({"compact", db_, "--from", "b"}).code);
  EXPECT_EQ(0, Run({"compact", db_, "--to", "b"}).code);
  ExpectError(Run({"compact", db_, "--from", "z", "--to", "a"}), 2,
              "is after --to");
}

// A LOCK that cannot be created or locked for any reason but another holder
// (a read-only directory, a full disk; here a directory where LOCK should
// be, which fails even for root) is an IO error naming the cause, exit 6.
TEST_F(KvtoolTest, ALockThatCannotBeTakenExitsWithCode6) {
  BuildDb(1, 10);
  const std::string lock = db_ + "/LOCK";
  ASSERT_TRUE(std::filesystem::remove(lock));
  ASSERT_TRUE(std::filesystem::create_directory(lock));
  const std::string cause =
      "cannot create or lock " + lock + ": Is a directory";
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"put", db_, "k", "v"},
                                             {"delete", db_, Key(1)},
                                             {"compact", db_},
                                             {"repair", db_}}) {
    SCOPED_TRACE(args[0]);
    RunResult r = Run(args);
    ExpectError(r, 6, cause);
    EXPECT_EQ(std::string::npos, r.err.find("locked")) << r.err;
  }
  EXPECT_EQ("value-1\n", Run({"get", db_, Key(1)}).out);
}

TEST_F(KvtoolTest, WritingToALockedDatabaseExitsWithCode5) {
  BuildDb(1, 10);
  Options options;
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(options, db_, &db).ok());
  const auto before = Snapshot(db_);
  ExpectError(Run({"put", db_, "k", "v"}), 5, "locked");
  ExpectError(Run({"delete", db_, Key(1)}), 5, "locked");
  ExpectError(Run({"compact", db_}), 5, "locked");
  // Reading needs no lock.
  EXPECT_EQ("value-1\n", Run({"get", db_, Key(1)}).out);
  EXPECT_EQ(before, Snapshot(db_));
}

TEST_F(KvtoolTest, LoadWritesEveryLineInBatches) {
  std::string input;
  for (int i = 0; i < 2500; i++) {
    input += Key(i) + "\tval\tue-" + std::to_string(i) + "\n";
  }
  input += "\r\n";  // a blank (CRLF) line is skipped
  input += "crlf\tdos\r\n";
  const std::string file = dir_.File("in.tsv");
  WriteAll(file, input);
  RunResult r = Run({"load", db_, file, "--create", "--batch", "700"});
  ASSERT_EQ(0, r.code) << r.err;
  EXPECT_EQ("loaded 2501 records from " + file + " into " + db_ + "\n", r.out);
  EXPECT_TRUE(r.err.empty()) << r.err;  // stdout is not a terminal
  EXPECT_EQ("val\tue-2499\n", Run({"get", db_, Key(2499)}).out);
  EXPECT_EQ("dos\n", Run({"get", db_, "crlf"}).out);

  r = Run({"load", db_, "-"}, "from\tstdin\n");
  ASSERT_EQ(0, r.code) << r.err;
  EXPECT_EQ("stdin\n", Run({"get", db_, "from"}).out);
}

TEST_F(KvtoolTest, LoadStopsAtTheFirstMalformedLine) {
  std::string input;
  for (int i = 0; i < 1500; i++) input += Key(i) + "\tv\n";
  input += "no tab on this line\n";
  input += "after\tbad\n";
  const std::string file = dir_.File("bad.tsv");
  WriteAll(file, input);
  RunResult r = Run({"load", db_, file, "--create"});
  ExpectError(r, 2, file + ":1501: malformed line (no tab");
  EXPECT_NE(std::string::npos, r.err.find("1500 records loaded")) << r.err;
  EXPECT_EQ(0, Run({"get", db_, Key(1499)}).code);
  EXPECT_EQ(1, Run({"get", db_, "after"}).code);

  ExpectError(Run({"load", db_, "-"}, "\tvalue\n"), 2,
              "<stdin>:1: malformed line (empty key)");
}

// ---- exact round trips of any bytes -----------------------------------------

// Every key and value of a database, in order, read through the API.
std::vector<std::pair<std::string, std::string>> Contents(
    const std::string& path) {
  std::unique_ptr<DB> db;
  EXPECT_TRUE(DB::OpenForReadOnly(Options(), path, &db).ok()) << path;
  std::vector<std::pair<std::string, std::string>> r;
  if (db == nullptr) return r;
  std::unique_ptr<Iterator> it(db->NewIterator(ReadOptions()));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    r.emplace_back(it->key().ToString(), it->value().ToString());
  }
  EXPECT_TRUE(it->status().ok());
  return r;
}

// Random bytes, half of them drawn from those the text encoding escapes
// (tab, newline, CR, backslash, NUL, "\x", bytes >= 0x80).
std::string AwkwardBytes(Random* rnd, size_t len) {
  static const char kAwkward[] = {'\t', '\n',   '\r',   '\\',   '\0',
                                  'x',  '\x7f', '\x80', '\xff', ' '};
  std::string s(len, '\0');
  for (char& c : s) {
    c = rnd->OneIn(2) ? kAwkward[rnd->Uniform(sizeof(kAwkward))]
                      : static_cast<char>(rnd->Uniform(256));
  }
  return s;
}

TEST_F(KvtoolTest, ScanThenLoadRoundTripsAnyBytes) {
  for (uint64_t seed : test::TestSeeds()) {
    SCOPED_TRACE("seed=" + std::to_string(seed));
    Random rnd(seed);
    const std::string source = dir_.File("source-" + std::to_string(seed));
    {
      Options options;
      options.create_if_missing = true;
      std::unique_ptr<DB> db;
      ASSERT_TRUE(DB::Open(options, source, &db).ok());
      for (int i = 0; i < 2000; i++) {
        ASSERT_TRUE(db->Put(WriteOptions(),
                            AwkwardBytes(&rnd, 1 + rnd.Uniform(24)),
                            AwkwardBytes(&rnd, rnd.Uniform(64)))
                        .ok());
      }
      // A value that is only what the encoding must escape, and an empty
      // one.
      ASSERT_TRUE(db->Put(WriteOptions(), "\\", "\\x41\t\\\n").ok());
      ASSERT_TRUE(db->Put(WriteOptions(), "empty", "").ok());
      ASSERT_TRUE(db->Flush().ok());
    }
    const auto expected = Contents(source);
    ASSERT_GT(expected.size(), 1900u);

    // Text, hex, and each through the batched and the bulk load.
    const std::vector<std::vector<std::string>> modes = {
        {}, {"--hex"}, {"--bulk"}, {"--hex", "--bulk"}};
    for (size_t m = 0; m < modes.size(); m++) {
      const bool hex = !modes[m].empty() && modes[m][0] == "--hex";
      SCOPED_TRACE(hex ? "hex" : "escaped");
      std::vector<std::string> scan = {"scan", source};
      if (hex) scan.push_back("--hex");
      const RunResult dumped = Run(scan);
      ASSERT_EQ(0, dumped.code) << dumped.err;
      const std::string file = dir_.File("dump.tsv");
      WriteAll(file, dumped.out);
      const std::string target =
          dir_.File("target-" + std::to_string(seed) + "-" + std::to_string(m));
      std::vector<std::string> load = {"load", target, file, "--create"};
      load.insert(load.end(), modes[m].begin(), modes[m].end());
      const RunResult loaded = Run(load);
      ASSERT_EQ(0, loaded.code) << loaded.err;
      EXPECT_EQ(expected, Contents(target));
    }
  }
}

TEST_F(KvtoolTest, HexKeysAndValuesInArgumentsAndOutput) {
  ASSERT_EQ(0, Run({"put", db_, "01ff0a", "5C7800", "--hex", "--create"}).code);
  ASSERT_EQ(0, Run({"put", db_, "k", "plain"}).code);
  EXPECT_EQ("5c7800\n", Run({"get", db_, "01ff0a", "--hex"}).out);
  EXPECT_EQ(std::string("\\x\0\n", 4), Run({"get", db_, "\x01\xff\n"}).out);
  EXPECT_EQ("01ff0a\t5c7800\n6b\t706c61696e\n",
            Run({"scan", db_, "--hex"}).out);
  EXPECT_EQ("\\x01\\xff\\n\t\\\\x\\x00\nk\tplain\n", Run({"scan", db_}).out);
  EXPECT_EQ("6b\t706c61696e\n",
            Run({"scan", db_, "--hex", "--from", "02", "--to", "6c"}).out);
  const json j = RunJson({"get", db_, "01ff0a", "--hex", "--json"});
  EXPECT_EQ("01ff0a", j["key"]);
  EXPECT_EQ("5c7800", j["value"]);

  ExpectError(Run({"get", db_, "0g", "--hex"}), 2,
              "KEY: not a hex digit at byte 1");
  ExpectError(Run({"put", db_, "00", "abc", "--hex"}), 2,
              "VALUE: odd number of hex digits");
  ExpectError(Run({"scan", db_, "--hex", "--from", "x"}), 2, "--from");
  ASSERT_EQ(0, Run({"delete", db_, "01ff0a", "--hex"}).code);
  EXPECT_EQ(1, Run({"get", db_, "01ff0a", "--hex"}).code);
}

TEST_F(KvtoolTest, LoadReadsScanEscapesStrictlyOrRawBytesWithRaw) {
  ASSERT_EQ(0, Run({"put", db_, "seed", "v", "--create"}).code);
  // Escapes as scan prints them, upper-case hex digits included.
  RunResult r = Run({"load", db_, "-"}, "a\\tb\tc\\x0A\\\\\n");
  ASSERT_EQ(0, r.code) << r.err;
  EXPECT_EQ("c\n\\\n", Run({"get", db_, "a\tb"}).out);
  // Anything else after a backslash is malformed: loud, never guessed.
  ExpectError(Run({"load", db_, "-"}, "ok\t1\nC:\\path\tv\n"), 2,
              "<stdin>:2: malformed line (key: bad escape '\\p' at byte 2");
  ExpectError(Run({"load", db_, "-"}, "k\tv\\x4\n"), 2,
              "value: '\\x' without two hex digits");
  ExpectError(Run({"load", db_, "-"}, "k\\\tv\n"), 2, "at the end");
  ExpectError(Run({"load", db_, "-", "--hex"}, "6b\t7\n"), 2,
              "value: odd number of hex digits");
  // A key that decodes to nothing is empty.
  ExpectError(Run({"load", db_, "-", "--hex"}, "\t00\n"), 2, "empty key");
  // --raw takes the bytes as they are, later tabs in the value included.
  r = Run({"load", db_, "-", "--raw"}, "C:\\path\tv\\x41\tw\n");
  ASSERT_EQ(0, r.code) << r.err;
  EXPECT_EQ("v\\x41\tw\n", Run({"get", db_, "C:\\path"}).out);
  ExpectError(Run({"load", db_, "-", "--raw", "--hex"}), 2, "excludes");
  EXPECT_EQ("v\n", Run({"get", db_, "seed"}).out);
  // The line before the malformed one stays loaded, as for any load.
  EXPECT_EQ("1\n", Run({"get", db_, "ok"}).out);
}

// ---- idump, manifest, wal, approxsize ---------------------------------------

// a@1 and b@2 flushed into one segment; then a@3 overwritten, b@4 deleted
// and c@5 written, all three only in the log.
void BuildVersionedDb(const std::string& path) {
  Options options;
  options.create_if_missing = true;
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(options, path, &db).ok());
  ASSERT_TRUE(db->Put(WriteOptions(), "a", "1").ok());
  ASSERT_TRUE(db->Put(WriteOptions(), "b", "2").ok());
  ASSERT_TRUE(db->Flush().ok());
  ASSERT_TRUE(db->Put(WriteOptions(), "a", "3").ok());
  WriteBatch batch;
  batch.Delete("b");
  batch.Put("c", "5\t\x01");
  ASSERT_TRUE(db->Write(WriteOptions(), &batch).ok());
}

TEST_F(KvtoolTest, IdumpListsEveryVersionNewestFirst) {
  BuildVersionedDb(db_);
  const std::map<std::string, std::string> before = Snapshot(db_);
  RunResult r = Run({"idump", db_});
  ASSERT_EQ(0, r.code) << r.err;
  EXPECT_EQ(
      "a\t@3\tPUT\t3\n"
      "a\t@1\tPUT\t1\n"
      "b\t@4\tDEL\t(tombstone)\n"
      "b\t@2\tPUT\t2\n"
      "c\t@5\tPUT\t5\\t\\x01\n"
      "# 5 versions (1 deletion)\n",
      r.out);
  EXPECT_EQ(
      "b\t@4\tDEL\t(tombstone)\nb\t@2\tPUT\t2\n# 2 versions (1 deletion)\n",
      Run({"idump", db_, "--from", "b", "--to", "c"}).out);
  EXPECT_EQ("61\t@3\tPUT\t33\n# 1 version (0 deletions)\n",
            Run({"idump", db_, "--hex", "--limit", "1"}).out);
  const json j = RunJson({"idump", db_, "--json", "--from", "b"});
  EXPECT_EQ(3, j["count"]);
  EXPECT_EQ(1, j["deletions"]);
  EXPECT_EQ(true, j["complete"]);
  EXPECT_EQ("delete", j["versions"][0]["type"]);
  EXPECT_FALSE(j["versions"][0].contains("value"));
  EXPECT_EQ(5, j["versions"][2]["sequence"]);
  ExpectError(Run({"idump", db_, "--from", "c", "--to", "a"}), 2,
              "--from is after --to");
  EXPECT_EQ(before, Snapshot(db_));  // read-only
}

TEST_F(KvtoolTest, ManifestAndWalShowEveryRecord) {
  BuildVersionedDb(db_);
  const std::map<std::string, std::string> before = Snapshot(db_);
  RunResult r = Run({"manifest", db_});
  ASSERT_EQ(0, r.code) << r.err;
  EXPECT_NE(std::string::npos, r.out.find("  + L0 ")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("2 entries  a @ 1 .. b @ 2"))
      << r.out;
  EXPECT_NE(std::string::npos, r.out.find("; at the end: L0 1 segment;"))
      << r.out;
  json j = RunJson({"manifest", db_, "--json"});
  EXPECT_EQ(1, j["live_segments"]["L0"]);
  EXPECT_TRUE(j["problems"].empty());
  EXPECT_TRUE(j["torn_tail"].is_null());
  bool added = false;
  for (const json& e : j["edits"]) {
    for (const json& f : e["added"]) {
      added = true;
      EXPECT_EQ("a", f["smallest"]["key"]);
      EXPECT_EQ("b", f["largest"]["key"]);
      EXPECT_EQ(2, f["entries"]);
    }
  }
  EXPECT_TRUE(added);
  // The manifest file itself, named directly, reads the same.
  const std::vector<std::string> manifests = FilesWithSuffix(db_, "");
  std::string manifest;
  for (const std::string& f : manifests) {
    if (f.find("MANIFEST-") != std::string::npos) manifest = f;
  }
  ASSERT_FALSE(manifest.empty());
  EXPECT_EQ(r.out, Run({"manifest", manifest}).out);

  r = Run({"wal", db_});
  ASSERT_EQ(0, r.code) << r.err;
  EXPECT_NE(std::string::npos, r.out.find("seq 3  1 op\n  PUT\ta\t3\n"))
      << r.out;
  EXPECT_NE(std::string::npos,
            r.out.find("seq 4  2 ops\n  DEL\tb\n  PUT\tc\t5\\t\\x01\n"))
      << r.out;
  EXPECT_NE(std::string::npos,
            r.out.find("# 2 write batches, 2 puts, 1 delete\n"))
      << r.out;
  j = RunJson({"wal", db_, "--json", "--hex"});
  ASSERT_EQ(1u, j["logs"].size());
  const json& batches = j["logs"][0]["batches"];
  ASSERT_EQ(2u, batches.size());
  EXPECT_EQ(4, batches[1]["sequence"]);
  EXPECT_EQ(2, batches[1]["count"]);
  EXPECT_EQ("63", batches[1]["ops"][1]["key"]);
  EXPECT_EQ("350901", batches[1]["ops"][1]["value"]);
  EXPECT_EQ(before, Snapshot(db_));

  ExpectError(Run({"manifest", dir_.File("none")}), 3, "no such file");
  ExpectError(Run({"wal", dir_.path()}), 3, "no CURRENT");
}

TEST_F(KvtoolTest, ManifestAndWalShowRangeDeletions) {
  {
    Options options;
    options.create_if_missing = true;
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(options, db_, &db).ok());
    ASSERT_TRUE(db->Put(WriteOptions(), "a", "1").ok());
    ASSERT_TRUE(db->DeleteRange(WriteOptions(), "a", "c").ok());
    ASSERT_TRUE(db->Flush().ok());  // into the manifest
    ASSERT_TRUE(db->DeleteRange(WriteOptions(), "x", "z").ok());  // the log
  }
  RunResult r = Run({"manifest", db_});
  ASSERT_EQ(0, r.code) << r.err;
  EXPECT_NE(std::string::npos, r.out.find("  + range [a, c) @ 2\n")) << r.out;
  json j = RunJson({"manifest", db_, "--json"});
  bool found = false;
  for (const json& e : j["edits"]) {
    if (!e.contains("range_tombstones")) continue;
    for (const json& t : e["range_tombstones"]) {
      found = found || (t["begin"] == "a" && t["end"] == "c" &&
                        t["sequence"] == 2);
    }
  }
  EXPECT_TRUE(found) << j.dump();
  r = Run({"wal", db_});
  ASSERT_EQ(0, r.code) << r.err;
  EXPECT_NE(std::string::npos, r.out.find("  DELRANGE\tx\tz\n")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find(", 1 range delete\n")) << r.out;
  j = RunJson({"wal", db_, "--json"});
  ASSERT_FALSE(j["logs"].empty());
  const json& log = j["logs"].back();
  EXPECT_EQ(1, log["range_deletes"]);
  EXPECT_EQ("delete_range", log["batches"][0]["ops"][0]["type"]);
  EXPECT_EQ("x", log["batches"][0]["ops"][0]["begin"]);
}

TEST_F(KvtoolTest, DamagedManifestAndWalRecordsAreShownAndEndInExitCode4) {
  BuildVersionedDb(db_);
  const std::vector<std::string> logs = FilesWithSuffix(db_, ".log");
  ASSERT_EQ(1u, logs.size());
  // A byte inside the first record's payload: its checksum fails; the next
  // record is still read.
  FlipByte(logs[0], 10);
  RunResult r = Run({"wal", db_});
  ExpectError(r, 4, logs[0]);
  EXPECT_NE(std::string::npos, r.err.find("offset 0")) << r.err;
  EXPECT_NE(std::string::npos, r.out.find("\n! ")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("DEL\tb")) << r.out;  // read on
  json j = RunJson({"wal", db_, "--json"}, 4);
  EXPECT_EQ(1u, j["logs"][0]["problems"].size());
  EXPECT_EQ(1u, j["logs"][0]["batches"].size());
  FlipByte(logs[0], 10);  // repaired

  // A torn tail is what a crash leaves: shown, not a failure.
  std::string data = ReadAll(logs[0]);
  WriteAll(logs[0], data.substr(0, data.size() - 3));
  r = Run({"wal", db_});
  ASSERT_EQ(0, r.code) << r.err;
  EXPECT_NE(std::string::npos, r.out.find("# torn tail of ")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("# 1 write batch,")) << r.out;

  std::string manifest;
  for (const std::string& f : FilesWithSuffix(db_, "")) {
    if (f.find("MANIFEST-") != std::string::npos) manifest = f;
  }
  FlipByte(manifest, 12);
  r = Run({"manifest", db_});
  ExpectError(r, 4, manifest);
  EXPECT_NE(std::string::npos, r.out.find("! ")) << r.out;
}

TEST_F(KvtoolTest, ApproxsizeEstimatesTheBytesOfAKeyRange) {
  BuildDb(4, 5000);
  uint64_t total = 0;
  for (const std::string& f : segment_files_) {
    total += std::filesystem::file_size(f);
  }
  json j = RunJson({"approxsize", db_, "--json"});
  const uint64_t all = j["bytes"];
  EXPECT_GT(all, total * 8 / 10);
  EXPECT_LE(all, total);
  EXPECT_TRUE(j["from"].is_null());
  // The first of four equal segments.
  j = RunJson({"approxsize", db_, "--json", "--to", Key(5000)});
  const uint64_t quarter = j["bytes"];
  EXPECT_GT(quarter, all / 5);
  EXPECT_LT(quarter, all / 3);
  EXPECT_EQ(Key(5000), j["to"]);
  RunResult r = Run({"approxsize", db_, "--from", Key(0), "--to", Key(5000)});
  ASSERT_EQ(0, r.code) << r.err;
  EXPECT_NE(std::string::npos,
            r.out.find("(" + std::to_string(quarter) + " bytes) on disk for [" +
                       Key(0) + ", " + Key(5000) + ")"))
      << r.out;
  ExpectError(Run({"approxsize", db_, "--from", "z", "--to", "a"}), 2,
              "--from is after --to");
}

// ---- load --bulk ------------------------------------------------------------

// Short links in random order, with repeated codes (the last line of a code
// must win), for comparing `load --bulk` with `load`.
std::string ShortLinkTsv(int lines, uint64_t seed) {
  static const char kAlphabet[] =
      "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  Random rnd(seed);
  std::vector<std::string> codes;
  std::string tsv;
  for (int i = 0; i < lines; i++) {
    std::string code;
    if (!codes.empty() && rnd.Uniform(8) == 0) {
      code = codes[rnd.Uniform(static_cast<uint32_t>(codes.size()))];
    } else {
      code.assign(7, '0');
      for (char& c : code) c = kAlphabet[rnd.Uniform(62)];
      codes.push_back(code);
    }
    tsv += code + "\thttps://example.com/" +
           test::RandomString(&rnd, 20 + rnd.Uniform(81)) + "/" +
           std::to_string(i) + "\n";
  }
  return tsv;
}

bool HasLoadTempDir(const std::string& dir) {
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().filename().string().find(".load-") != std::string::npos) {
      return true;
    }
  }
  return false;
}

TEST_F(KvtoolTest, BulkLoadGivesTheSameDatabaseAsLoad) {
  // About 3 MiB of records through a 1 MiB sort budget: several runs.
  const std::string file = dir_.File("links.tsv");
  WriteAll(file, ShortLinkTsv(25000, 7));
  const std::string batched = dir_.File("batched");
  // The URLs hold backslashes: loaded as raw bytes.
  RunResult r = Run({"load", batched, file, "--create", "--raw"});
  ASSERT_EQ(0, r.code) << r.err;
  r = Run(
      {"load", db_, file, "--create", "--raw", "--bulk", "--memory-mb", "1"});
  ASSERT_EQ(0, r.code) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;
  EXPECT_EQ(0u, r.out.rfind("bulk-loaded ", 0)) << r.out;
  // "... N sorted runs spilled ..." with N >= 2.
  const size_t runs_at = r.out.find(" sorted runs spilled");
  ASSERT_NE(std::string::npos, runs_at) << r.out;
  const size_t runs_from = r.out.rfind(' ', runs_at - 1) + 1;
  EXPECT_GE(std::stoi(r.out.substr(runs_from, runs_at - runs_from)), 2)
      << r.out;
  EXPECT_FALSE(HasLoadTempDir(dir_.path()));

  const RunResult bulk_scan = Run({"scan", db_});
  const RunResult batched_scan = Run({"scan", batched});
  ASSERT_EQ(0, bulk_scan.code) << bulk_scan.err;
  EXPECT_GT(CountLines(bulk_scan.out), 20000u);
  EXPECT_EQ(batched_scan.out, bulk_scan.out);
  EXPECT_EQ(0, Run({"verify", db_}).code);

  // Its segments are all in the last level.
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(Options(), db_, &db).ok());
  for (const SegmentInfo& i : db->GetSegmentInfo()) EXPECT_EQ(6, i.level);
}

TEST_F(KvtoolTest, BulkLoadIsAllOrNothing) {
  std::string input = ShortLinkTsv(2000, 3);
  input += "no tab on this line\n";
  const std::string file = dir_.File("bad.tsv");
  WriteAll(file, input);
  RunResult r = Run({"load", db_, file, "--create", "--bulk", "--raw"});
  ExpectError(r, 2, file + ":2001: malformed line (no tab");
  EXPECT_NE(std::string::npos, r.err.find("nothing loaded")) << r.err;
  EXPECT_TRUE(Run({"scan", db_}).out.empty());
  EXPECT_FALSE(HasLoadTempDir(dir_.path()));

  // Keys the database already holds in the range: refused, nothing loaded.
  ASSERT_EQ(0, Run({"put", db_, "m", "present"}).code);
  r = Run({"load", db_, "-", "--bulk"}, "a\t1\nz\t2\n");
  ExpectError(r, 2, "overlaps");
  EXPECT_EQ(1, Run({"get", db_, "a"}).code);
  EXPECT_FALSE(HasLoadTempDir(dir_.path()));
  // A range the database does not use yet loads.
  r = Run({"load", db_, "-", "--bulk"}, "n1\tx\nn2\ty\nn1\tz\n");
  ASSERT_EQ(0, r.code) << r.err;
  EXPECT_NE(std::string::npos, r.out.find("bulk-loaded 2 records")) << r.out;
  EXPECT_EQ("z\n", Run({"get", db_, "n1"}).out);
  EXPECT_EQ("present\n", Run({"get", db_, "m"}).out);
}

}  // namespace
}  // namespace bloomkv
