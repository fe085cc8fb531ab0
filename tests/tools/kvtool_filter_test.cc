// kvtool filter build / query / info / merge, run as the real binary on
// filter files made here: every kind built from a key file and queried,
// the exit codes of query, info in text and JSON, merging, and every kind
// of bad input (unknown kinds and options, missing, foreign, damaged and
// truncated files, filters too small for their keys) ending in one error
// line and the documented exit code.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/testutil/test_util.h"
#include "tests/tools/kvtool_run.h"

namespace bloomkv {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

using nlohmann::json;

constexpr const char* kKinds[] = {"bloom", "scalable", "cuckoo", "fuse"};

std::string Key(const char* prefix, int i) {
  return std::string(prefix) + std::to_string(i);
}

size_t CountOf(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t pos = text.find(needle); pos != std::string::npos;
       pos = text.find(needle, pos + 1)) {
    n++;
  }
  return n;
}

class KvtoolFilterTest : public testing::Test {
 protected:
  test::KvtoolResult Run(const std::vector<std::string>& args,
                         const std::string& input = "") {
    return test::RunKvtool(args, io_.path(), input);
  }

  json RunJson(const std::vector<std::string>& args, int expected_code = 0) {
    const test::KvtoolResult r = Run(args);
    EXPECT_EQ(expected_code, r.code) << r.err;
    json j;
    try {
      j = json::parse(r.out);
    } catch (const json::exception& e) {
      ADD_FAILURE() << "invalid JSON: " << e.what() << "\n" << r.out;
    }
    return j;
  }

  // A failure is one "kvtool: error: ..." line and the exit code.
  void ExpectError(const test::KvtoolResult& r, int code,
                   const std::string& needle) {
    EXPECT_EQ(code, r.code) << r.out << r.err;
    EXPECT_EQ(0u, r.err.rfind("kvtool: error: ", 0)) << r.err;
    EXPECT_EQ(1u, CountOf(r.err, "\n")) << r.err;
    EXPECT_NE(std::string::npos, r.err.find(needle)) << r.err;
    EXPECT_LE(test::CountStatusPrefixes(r.err), 1) << r.err;
  }

  // A key file of keys prefix0 .. prefix(n-1).
  std::string KeyFile(const std::string& name, const char* prefix, int n) {
    std::string text;
    for (int i = 0; i < n; i++) text += Key(prefix, i) + "\n";
    const std::string path = dir_.File(name);
    test::WriteWholeFile(path, text);
    return path;
  }

  std::string Build(const std::string& kind, const std::string& keys,
                    std::vector<std::string> extra = {}) {
    const std::string out = dir_.File(kind + ".filter");
    std::vector<std::string> args = {"filter", "build", kind, keys, out};
    args.insert(args.end(), extra.begin(), extra.end());
    const test::KvtoolResult r = Run(args);
    EXPECT_EQ(0, r.code) << r.err;
    EXPECT_TRUE(r.err.empty()) << r.err;
    return out;
  }

  test::TempDir dir_{"kvtool-filter"};
  test::TempDir io_{"kvtool-filter-io"};
};

TEST_F(KvtoolFilterTest, HelpListsTheFilterSubcommands) {
  const test::KvtoolResult r = Run({"filter", "--help"});
  EXPECT_EQ(0, r.code) << r.err;
  for (const char* sub : {"build", "query", "info", "merge"}) {
    EXPECT_NE(std::string::npos, r.out.find(std::string("  ") + sub + " "))
        << sub << "\n"
        << r.out;
    const test::KvtoolResult h = Run({"filter", sub, "--help"});
    EXPECT_EQ(0, h.code) << h.err;
    EXPECT_NE(std::string::npos,
              h.out.find(std::string("kvtool filter ") + sub))
        << h.out;
  }
  EXPECT_NE(std::string::npos, Run({"--help"}).out.find("  filter "));
}

// Every kind: built keys are all "maybe-present" (exit 0); a file of keys
// never added has definitely absent ones (exit 1, answers on stdout, no
// error line).
TEST_F(KvtoolFilterTest, BuildEveryKindAndQueryIt) {
  const std::string keys = KeyFile("keys", "present-", 2000);
  const std::string absent = KeyFile("absent", "absent-", 200);
  for (const char* kind : kKinds) {
    SCOPED_TRACE(kind);
    const std::string f = Build(kind, keys);
    test::KvtoolResult r =
        Run({"filter", "query", f, "present-0", "present-1999"});
    EXPECT_EQ(0, r.code) << r.err;
    EXPECT_EQ("maybe-present\tpresent-0\nmaybe-present\tpresent-1999\n", r.out);
    r = Run({"filter", "query", f, "--keys-file", keys});
    EXPECT_EQ(0, r.code) << r.err;
    EXPECT_EQ(2000u, CountOf(r.out, "maybe-present\t"));

    r = Run({"filter", "query", f, "--keys-file", absent, "present-7"});
    EXPECT_EQ(1, r.code) << r.err;
    EXPECT_TRUE(r.err.empty()) << r.err;
    EXPECT_EQ(0u, r.out.rfind("maybe-present\tpresent-7\n", 0)) << r.out;
    EXPECT_GT(CountOf(r.out, "absent\tabsent-"), 180u) << r.out;

    const json j =
        RunJson({"filter", "query", f, "absent-1", "present-3", "--json"}, 1);
    EXPECT_EQ(kind, j["kind"]);
    EXPECT_EQ(2, j["keys"]);
    ASSERT_EQ(2u, j["results"].size());
    EXPECT_EQ("present-3", j["results"][1]["key"]);
    EXPECT_EQ(true, j["results"][1]["maybe_present"]);

    // Keys from stdin.
    r = Run({"filter", "query", f, "--keys-file", "-"},
            "present-5\npresent-6\n");
    EXPECT_EQ(0, r.code) << r.err;
    EXPECT_EQ(2u, CountOf(r.out, "maybe-present\t"));
  }
}

TEST_F(KvtoolFilterTest, InfoDescribesEachKind) {
  const std::string keys = KeyFile("keys", "k", 5000);
  for (const char* kind : kKinds) {
    SCOPED_TRACE(kind);
    const std::string f = Build(kind, keys);
    const json j = RunJson({"filter", "info", f, "--json"});
    EXPECT_EQ(kind, j["kind"]);
    EXPECT_EQ(f, j["file"]);
    EXPECT_EQ(std::filesystem::file_size(f), j["file_bytes"].get<uint64_t>());
    EXPECT_EQ(5000, j["capacity"]);
    // A scalable filter does not record keys that collide with earlier
    // ones (BF.ADD semantics): a few at a 1% rate.
    if (std::string(kind) == "scalable") {
      EXPECT_GT(j["items"].get<int>(), 4950);
      EXPECT_LE(j["items"].get<int>(), 5000);
    } else {
      EXPECT_EQ(5000, j["items"]);
    }
    EXPECT_NEAR(5000, j["estimated_items"].get<double>(), 150);
    EXPECT_GT(j["bits_per_key"].get<double>(), 8.0);
    EXPECT_LT(j["bits_per_key"].get<double>(), 16.0);
    EXPECT_GT(j["memory_bytes"].get<uint64_t>(), 5000u);
    const double target = j["target_fp_rate"];
    const double estimated = j["estimated_fp_rate"];
    EXPECT_GT(target, 0.0);
    EXPECT_LE(target, 0.01);
    EXPECT_GT(estimated, 0.0);
    EXPECT_LE(estimated, 0.01);

    const test::KvtoolResult r = Run({"filter", "info", f});
    EXPECT_EQ(0, r.code) << r.err;
    for (const char* label : {"kind:", "capacity:", "memory:", "items:",
                              "target FP:", "estimated FP:"}) {
      EXPECT_NE(std::string::npos, r.out.find(label)) << label << r.out;
    }
  }
}

TEST_F(KvtoolFilterTest, BuildOptionsReachTheFilter) {
  const std::string keys = KeyFile("keys", "o", 1000);
  json j = RunJson({"filter", "info",
                    Build("bloom", keys, {"--bits-per-key", "20"}), "--json"});
  EXPECT_NEAR(20.0, j["bits_per_key"].get<double>(), 0.6);
  j = RunJson({"filter", "info",
               Build("cuckoo", keys,
                     {"--bucket-size", "2", "--fingerprint-bits", "16",
                      "--max-kicks", "100", "--capacity", "1500"}),
               "--json"});
  EXPECT_EQ(2, j["details"]["bucket_size"]);
  EXPECT_EQ(16, j["details"]["fingerprint_bits"]);
  EXPECT_EQ(100, j["details"]["max_kicks"]);
  EXPECT_EQ(1500, j["capacity"]);
  j = RunJson(
      {"filter", "info",
       Build("scalable", keys,
             {"--capacity", "100", "--expansion", "3", "--fp-rate", "0.001"}),
       "--json"});
  // 100 + 300 + 900 >= 1000 keys: three sub-filters.
  EXPECT_EQ(3u, j["details"]["sub_filters"].size());
  EXPECT_EQ(100, j["details"]["initial_capacity"]);
  EXPECT_EQ(0.001, j["target_fp_rate"]);
  EXPECT_LT(j["estimated_fp_rate"].get<double>(), 0.001);
  j = RunJson({"filter", "info",
               Build("fuse", keys, {"--fingerprint-bits", "16"}), "--json"});
  EXPECT_EQ(16, j["details"]["fingerprint_bits"]);
  // From stdin, with JSON output of the build itself.
  const std::string out = dir_.File("stdin.filter");
  const test::KvtoolResult r =
      Run({"filter", "build", "bloom", "-", out, "--json"}, "a\nb\nc\n");
  EXPECT_EQ(0, r.code) << r.err;
  EXPECT_EQ(3, json::parse(r.out)["items"]);
}

TEST_F(KvtoolFilterTest, MergeTwoBloomFilters) {
  const std::string a = KeyFile("a", "a", 500);
  const std::string b = KeyFile("b", "b", 500);
  const std::string fa = dir_.File("a.filter"), fb = dir_.File("b.filter");
  for (const auto& [keys, out] : {std::pair{a, fa}, std::pair{b, fb}}) {
    const test::KvtoolResult r =
        Run({"filter", "build", "bloom", keys, out, "--capacity", "1000"});
    ASSERT_EQ(0, r.code) << r.err;
  }
  const std::string merged = dir_.File("merged.filter");
  test::KvtoolResult r = Run({"filter", "merge", fa, fb, merged});
  EXPECT_EQ(0, r.code) << r.err;
  for (const std::string& keys : {a, b}) {
    r = Run({"filter", "query", merged, "--keys-file", keys});
    EXPECT_EQ(0, r.code) << r.err;
    EXPECT_EQ(500u, CountOf(r.out, "maybe-present\t"));
  }
  const json j = RunJson({"filter", "info", merged, "--json"});
  EXPECT_EQ(1000, j["items"]);
  EXPECT_NEAR(1000, j["estimated_items"].get<double>(), 50);

  // Another shape, another kind.
  const std::string small = dir_.File("small.filter");
  ASSERT_EQ(0, Run({"filter", "build", "bloom", a, small}).code);
  ExpectError(Run({"filter", "merge", fa, small, dir_.File("x")}), 2,
              "different shapes");
  const std::string cuckoo = Build("cuckoo", a);
  ExpectError(Run({"filter", "merge", fa, cuckoo, dir_.File("x")}), 2,
              "is a cuckoo filter; only bloom filters can be merged");
  EXPECT_FALSE(std::filesystem::exists(dir_.File("x")));
}

TEST_F(KvtoolFilterTest, BadArgumentsAreUsageErrors) {
  const std::string keys = KeyFile("keys", "u", 10);
  const std::string out = dir_.File("out.filter");
  ExpectError(Run({"filter"}), 2, "subcommand");
  ExpectError(Run({"filter", "frob"}), 2, "unknown filter subcommand 'frob'");
  ExpectError(Run({"filter", "build", "quotient", keys, out}), 2,
              "unknown filter kind 'quotient'");
  ExpectError(Run({"filter", "build", "bloom", keys, out, "--expansion", "2"}),
              2, "--expansion does not apply to a bloom filter");
  ExpectError(Run({"filter", "build", "fuse", keys, out, "--fp-rate", "0.1"}),
              2, "--fp-rate does not apply to a fuse filter");
  ExpectError(
      Run({"filter", "build", "fuse", keys, out, "--fingerprint-bits", "12"}),
      2, "8 or 16");
  ExpectError(Run({"filter", "build", "bloom", keys, out, "--fp-rate", "0.1",
                   "--bits-per-key", "8"}),
              2, "not both");
  ExpectError(Run({"filter", "build", "bloom", keys, out, "--fp-rate", "2"}), 2,
              "--fp-rate");
  ExpectError(
      Run({"filter", "build", "cuckoo", keys, out, "--bucket-size", "9"}), 2,
      "bucket_size 9");
  ExpectError(
      Run({"filter", "build", "scalable", keys, out, "--expansion", "0"}), 2,
      "expansion 0");
  ExpectError(Run({"filter", "build", "bloom", dir_.File("nope"), out}), 3,
              "no such file");
  const std::string blank = dir_.File("blank");
  test::WriteWholeFile(blank, "a\nb\n\nc\n");
  ExpectError(Run({"filter", "build", "bloom", blank, out}), 2,
              "blank:3: empty line");
  EXPECT_FALSE(std::filesystem::exists(out));

  const std::string f = Build("bloom", keys);
  ExpectError(Run({"filter", "query", f}), 2, "no keys to query");
  ExpectError(Run({"filter", "query", f, "--keys-file", blank}), 2,
              "empty line");
}

// A filter too small for its keys writes nothing and says so (exit 7).
TEST_F(KvtoolFilterTest, FiltersThatRunFullFailWithExitCode7) {
  const std::string keys = KeyFile("keys", "full", 1000);
  const std::string out = dir_.File("full.filter");
  ExpectError(
      Run({"filter", "build", "cuckoo", keys, out, "--capacity", "100"}), 7,
      "cuckoo filter full after");
  EXPECT_FALSE(std::filesystem::exists(out));
  ExpectError(Run({"filter", "build", "scalable", keys, out, "--capacity",
                   "100", "--non-scaling"}),
              7, "non-scaling filter is full");
  EXPECT_FALSE(std::filesystem::exists(out));
  // The same keys fit when the filter may grow.
  EXPECT_EQ(0,
            Run({"filter", "build", "scalable", keys, out, "--capacity", "100"})
                .code);
}

// Damaged, truncated, foreign and missing files: one line, exit 4 for
// damage (naming what and where), 3 for what is not a filter file at all.
TEST_F(KvtoolFilterTest, DamagedFilesAreOneLineErrors) {
  const std::string keys = KeyFile("keys", "d", 300);
  for (const char* kind : kKinds) {
    SCOPED_TRACE(kind);
    const std::string f = Build(kind, keys);
    const std::string good = test::ReadWholeFile(f);
    std::string bad = good;
    bad[good.size() / 2] ^= 0x20;
    const std::string flipped = dir_.File(std::string(kind) + ".flipped");
    test::WriteWholeFile(flipped, bad);
    for (const std::vector<std::string>& cmd :
         {std::vector<std::string>{"filter", "info", flipped},
          std::vector<std::string>{"filter", "query", flipped, "d1"}}) {
      const test::KvtoolResult r = Run(cmd);
      ExpectError(r, 4, "Corruption: ");
      EXPECT_NE(std::string::npos, r.err.find(flipped)) << r.err;
      EXPECT_NE(std::string::npos, r.err.find("at offset ")) << r.err;
    }
    const std::string cut = dir_.File(std::string(kind) + ".cut");
    test::WriteWholeFile(cut, good.substr(0, good.size() - 7));
    ExpectError(Run({"filter", "info", cut}), 4, "Corruption: ");
    test::WriteWholeFile(cut, good.substr(0, 12));
    ExpectError(Run({"filter", "info", cut}), 4, "truncated");
    if (std::string(kind) == "bloom") {
      ExpectError(Run({"filter", "merge", flipped, f, dir_.File("m")}), 4,
                  "checksum mismatch");
    }
  }
  const std::string foreign = dir_.File("foreign");
  test::WriteWholeFile(foreign, "not a filter at all\n");
  ExpectError(Run({"filter", "info", foreign}), 3, "not a bloomkv filter file");
  ExpectError(Run({"filter", "query", dir_.File("missing"), "k"}), 3,
              "no such file");
  ExpectError(Run({"filter", "info", dir_.path()}), 3, "is a directory");
}

}  // namespace
}  // namespace bloomkv
