// Test helpers; see test_util.h.
#include "tests/testutil/test_util.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <system_error>
#include <thread>

#include "bloomkv/env.h"

namespace bloomkv::test {

namespace {

// Several seeds so that a randomized test sees more than one sequence, few
// enough to keep the suites fast. Never reorder: failures are reported by
// seed, and a seed must keep meaning the same data.
constexpr uint64_t kDefaultSeeds[] = {1, 2, 301, 0x5eed, 0xdeadbeefcafef00d};

bool ParseSeedList(const char* text, std::vector<uint64_t>* seeds) {
  seeds->clear();
  const char* p = text;
  while (true) {
    while (*p == ' ') p++;
    if (*p == '\0' || *p == ',') return false;  // empty item
    if (*p == '-' || *p == '+') return false;   // strtoull would accept them
    errno = 0;
    char* end = nullptr;
    const unsigned long long v = std::strtoull(p, &end, 0);
    if (end == p || errno == ERANGE) return false;
    seeds->push_back(static_cast<uint64_t>(v));
    p = end;
    while (*p == ' ') p++;
    if (*p == '\0') return true;
    if (*p != ',') return false;
    p++;
  }
}

// The value of the environment variable `name`, or `fallback` where it is
// unset or empty.
std::string EnvOr(const char* name, std::string fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && v[0] != '\0' ? std::string(v) : fallback;
}

}  // namespace

TempDir::TempDir(std::string_view prefix)
    : TempDir(prefix, EnvOr("TMPDIR", "/tmp")) {}

TempDir TempDir::OnDisk(std::string_view prefix) {
  return TempDir(prefix, EnvOr("BLOOMKV_TEST_DISK_TMPDIR",
                               EnvOr("TMPDIR", "/tmp")));
}

TempDir::TempDir(std::string_view prefix, std::string base) {
  while (base.size() > 1 && base.back() == '/') base.pop_back();
  std::string templ = base + "/" + std::string(prefix) + "-XXXXXX";
  if (::mkdtemp(templ.data()) == nullptr) {
    std::fprintf(stderr, "TempDir: mkdtemp(%s) failed: %s\n", templ.c_str(),
                 std::strerror(errno));
    std::abort();
  }
  path_ = std::move(templ);
}

TempDir::~TempDir() {
  const char* keep = std::getenv("BLOOMKV_KEEP_TEMP");
  if (keep != nullptr && keep[0] != '\0' && keep[0] != '0') {
    std::fprintf(stderr, "TempDir: keeping %s\n", path_.c_str());
    return;
  }
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);  // Does not follow symlinks.
  if (ec) {
    std::fprintf(stderr, "TempDir: cannot remove %s: %s\n", path_.c_str(),
                 ec.message().c_str());
  }
}

std::string TempDir::File(std::string_view name) const {
  std::string f = path_;
  f.push_back('/');
  f.append(name);
  return f;
}

int CountStatusPrefixes(const std::string& text) {
  static const char* const kPrefixes[] = {
      "NotFound: ",         "Corruption: ", "Not supported: ",
      "Invalid argument: ", "IO error: ",   "Full: "};
  int n = 0;
  for (const char* prefix : kPrefixes) {
    for (size_t at = text.find(prefix); at != std::string::npos;
         at = text.find(prefix, at + 1)) {
      n++;
    }
  }
  return n;
}

Env* PreadEnv() {
  static Env* const env = [] {
    EnvOptions options;
    options.use_mmap_reads = false;
    return NewPosixEnv(options).release();
  }();
  return env;
}

std::vector<uint64_t> TestSeeds() {
  const char* env = std::getenv("BLOOMKV_TEST_SEED");
  if (env != nullptr && env[0] != '\0') {
    std::vector<uint64_t> seeds;
    if (ParseSeedList(env, &seeds)) return seeds;
    ADD_FAILURE() << "BLOOMKV_TEST_SEED='" << env
                  << "' is not a comma-separated list of unsigned integers";
  }
  return std::vector<uint64_t>(std::begin(kDefaultSeeds),
                               std::end(kDefaultSeeds));
}

std::string RandomString(Random* rnd, size_t len) {
  std::string s(len, '\0');
  for (char& c : s) c = static_cast<char>(' ' + rnd->Uniform(95));
  return s;
}

std::string RandomBytes(Random* rnd, size_t len) {
  std::string s(len, '\0');
  for (char& c : s) c = static_cast<char>(rnd->Uniform(256));
  return s;
}

std::string CompressibleString(Random* rnd, double compressed_fraction,
                               size_t len) {
  if (!(compressed_fraction > 0)) compressed_fraction = 0.01;
  if (compressed_fraction > 1) compressed_fraction = 1;
  size_t raw =
      static_cast<size_t>(static_cast<double>(len) * compressed_fraction);
  if (raw < 1) raw = 1;
  const std::string unit = RandomBytes(rnd, raw);
  std::string s;
  s.reserve(len + raw);
  while (s.size() < len) s.append(unit);
  s.resize(len);
  return s;
}

std::vector<std::string> DatabaseFiles(const std::string& dir) {
  std::vector<std::string> children;
  EXPECT_TRUE(Env::Default()->GetChildren(dir, &children).ok());
  std::erase_if(children,
                [](const std::string& c) { return c.rfind("LOG", 0) == 0; });
  std::sort(children.begin(), children.end());
  return children;
}

Options TinyCompactionOptions() {
  Options o;
  o.create_if_missing = true;
  o.write_buffer_size = 64 << 10;
  o.block_size = 1024;
  o.target_file_size = 16 << 10;
  o.max_bytes_for_level_base = 64 << 10;
  o.level0_compaction_trigger = 2;
  o.level0_slowdown_writes_trigger = 4;
  o.level0_stop_writes_trigger = 8;
  return o;
}

void KeepEverythingInLevelZero(Options* options) {
  options->read_triggered_compaction = false;
  options->level0_compaction_trigger = 1000;
  options->level0_slowdown_writes_trigger = 1000;
  options->level0_stop_writes_trigger = 1000;
}

std::map<std::string, uint64_t> ResourceUsage(DB* db) {
  std::string text;
  EXPECT_TRUE(db->GetProperty("bloomkv.resource-usage", &text));
  std::map<std::string, uint64_t> r;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t eol = text.find('\n', pos);
    const std::string line = text.substr(pos, eol - pos);
    const size_t colon = line.find(": ");
    if (colon != std::string::npos) {
      r[line.substr(0, colon)] = std::stoull(line.substr(colon + 2));
    }
    pos = eol == std::string::npos ? text.size() : eol + 1;
  }
  return r;
}

void WaitForBackgroundWork(DB* db) {
  for (int i = 0; i < 6000; i++) {
    std::string pending;
    ASSERT_TRUE(db->GetProperty("bloomkv.compaction-pending", &pending));
    if (pending == "0") return;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::string levels;
  db->GetProperty("bloomkv.levels", &levels);
  FAIL() << "compaction did not settle:\n" << levels;
}

void ExpectDbHolds(DB* db, const std::map<std::string, std::string>& model) {
  for (const auto& [k, v] : model) {
    std::string value;
    Status s = db->Get(ReadOptions(), k, &value);
    ASSERT_TRUE(s.ok()) << k << ": " << s.ToString();
    ASSERT_EQ(v, value) << k;
  }
  std::map<std::string, std::string> found;
  std::unique_ptr<Iterator> it(db->NewIterator(ReadOptions()));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    found[it->key().ToString()] = it->value().ToString();
  }
  ASSERT_TRUE(it->status().ok()) << it->status().ToString();
  EXPECT_EQ(model.size(), found.size());
  EXPECT_TRUE(model == found);
}

}  // namespace bloomkv::test
