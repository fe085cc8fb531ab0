// Tests for the info log's Logger: Env::NewLogger (the POSIX one, which
// writes each line with one write(2), and the default one, which writes
// through NewAppendableFile), the line format and Log().
#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "bloomkv/env.h"
#include "tests/testutil/fault_env.h"
#include "tests/testutil/test_util.h"
#include "util/logging.h"
#include "util/random.h"

namespace bloomkv {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

// "2026-12-01T00:08:33.123456Z 4242 ": time and thread id.
const std::regex kHeaderRe(
    R"((\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)\.(\d{6})Z (\d+) )");

// Splits a line into its header, whose fields *m points into, and its
// message; false if the header is malformed. (std::regex recurses per
// character: it only ever sees the short header, never a long message.)
bool ParseLine(const std::string& line, std::string* header, std::smatch* m,
               std::string* message) {
  const size_t time_end = line.find(' ');
  const size_t header_end =
      time_end == std::string::npos ? time_end : line.find(' ', time_end + 1);
  if (header_end == std::string::npos) return false;
  *header = line.substr(0, header_end + 1);
  if (!std::regex_match(*header, *m, kHeaderRe)) return false;
  *message = line.substr(header_end + 1);
  return true;
}

std::vector<std::string> SplitLines(const std::string& data) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < data.size()) {
    size_t end = data.find('\n', start);
    EXPECT_NE(std::string::npos, end) << "unterminated last line";
    if (end == std::string::npos) end = data.size();
    lines.push_back(data.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

// Both loggers every Env can give: the POSIX Env's own, and the default
// implementation of Env::NewLogger over NewAppendableFile.
class LoggerTest : public testing::TestWithParam<bool> {
 protected:
  bool posix() const { return GetParam(); }
  Status NewLogger(Env* env, const std::string& fname,
                   std::unique_ptr<Logger>* logger) {
    return posix() ? env->NewLogger(fname, logger)
                   : env->Env::NewLogger(fname, logger);
  }
  std::string Contents(const std::string& fname) {
    std::string data;
    EXPECT_TRUE(ReadFileToString(Env::Default(), fname, &data).ok());
    return data;
  }

  test::TempDir dir_;
  const std::string fname_ = dir_.File("LOG");
};

TEST_P(LoggerTest, LineHoldsUtcTimeThreadIdAndMessage) {
  // A local-time stamp would be five hours off in this zone.
  const char* old_tz = std::getenv("TZ");
  const std::string saved_tz = old_tz != nullptr ? old_tz : "";
  setenv("TZ", "EST5", 1);
  tzset();
  const auto before = std::chrono::system_clock::now();
  {
    std::unique_ptr<Logger> logger;
    ASSERT_TRUE(NewLogger(Env::Default(), fname_, &logger).ok());
    Log(logger.get(), "flushed %d entries to %s", 42, "000007.seg");
  }
  const auto after = std::chrono::system_clock::now();
  if (old_tz != nullptr) {
    setenv("TZ", saved_tz.c_str(), 1);
  } else {
    unsetenv("TZ");
  }
  tzset();

  const std::vector<std::string> lines = SplitLines(Contents(fname_));
  ASSERT_EQ(1u, lines.size());
  std::smatch m;
  std::string header, message;
  ASSERT_TRUE(ParseLine(lines[0], &header, &m, &message)) << lines[0];
  EXPECT_EQ("flushed 42 entries to 000007.seg", message);
  EXPECT_EQ(std::to_string(::syscall(SYS_gettid)), m[8].str());

  std::tm tm = {};
  tm.tm_year = std::stoi(m[1]) - 1900;
  tm.tm_mon = std::stoi(m[2]) - 1;
  tm.tm_mday = std::stoi(m[3]);
  tm.tm_hour = std::stoi(m[4]);
  tm.tm_min = std::stoi(m[5]);
  tm.tm_sec = std::stoi(m[6]);
  const int64_t logged =
      int64_t{timegm(&tm)} * 1000000 + std::stoll(m[7].str());
  auto micros = [](std::chrono::system_clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::microseconds>(
               t.time_since_epoch())
        .count();
  };
  EXPECT_LE(micros(before), logged);
  EXPECT_GE(micros(after), logged);
}

TEST_P(LoggerTest, AppendsToAnExistingFile) {
  ASSERT_TRUE(WriteStringToFile(Env::Default(), "earlier line\n", fname_,
                                /*sync=*/false)
                  .ok());
  {
    std::unique_ptr<Logger> logger;
    ASSERT_TRUE(NewLogger(Env::Default(), fname_, &logger).ok());
    Log(logger.get(), "later line");
  }
  const std::vector<std::string> lines = SplitLines(Contents(fname_));
  ASSERT_EQ(2u, lines.size());
  EXPECT_EQ("earlier line", lines[0]);
  std::smatch m;
  std::string header, message;
  EXPECT_TRUE(ParseLine(lines[1], &header, &m, &message)) << lines[1];
  EXPECT_EQ("later line", message);
}

TEST_P(LoggerTest, EveryMessageIsExactlyOneLine) {
  const std::string huge(200000, 'x');  // far beyond any stack buffer
  {
    std::unique_ptr<Logger> logger;
    ASSERT_TRUE(NewLogger(Env::Default(), fname_, &logger).ok());
    Log(logger.get(), "two\nlines");
    Log(logger.get(), "ends with a newline\n");
    Log(logger.get(), "%s", "");
    Log(logger.get(), "%s", huge.c_str());
  }
  const std::vector<std::string> lines = SplitLines(Contents(fname_));
  ASSERT_EQ(4u, lines.size());
  const std::vector<std::string> expected = {"two lines", "ends with a newline",
                                             "", huge};
  for (size_t i = 0; i < lines.size(); i++) {
    std::smatch m;
    std::string header, message;
    ASSERT_TRUE(ParseLine(lines[i], &header, &m, &message)) << i;
    EXPECT_EQ(expected[i], message) << i;
  }
}

TEST_P(LoggerTest, ConcurrentThreadsWriteWholeLines) {
  constexpr int kThreads = 8;
  constexpr int kLinesPerThread = 300;
  for (uint64_t seed : test::TestSeeds()) {
    SCOPED_TRACE("seed=" + std::to_string(seed));
    Env::Default()->RemoveFile(fname_).PermitUncheckedError();
    {
      std::unique_ptr<Logger> logger;
      ASSERT_TRUE(NewLogger(Env::Default(), fname_, &logger).ok());
      std::vector<std::thread> threads;
      for (int t = 0; t < kThreads; t++) {
        threads.emplace_back([&, t] {
          Random rnd(seed + t);
          for (int i = 0; i < kLinesPerThread; i++) {
            // Lengths up to 8 KiB: a line longer than a pipe buffer or a
            // page would show any write that gets split.
            const std::string body(rnd.Uniform(8192) + 1, 'a' + t);
            Log(logger.get(), "thread %d line %d size %zu %s", t, i,
                body.size(), body.c_str());
          }
        });
      }
      for (auto& th : threads) th.join();
    }
    const std::vector<std::string> lines = SplitLines(Contents(fname_));
    ASSERT_EQ(static_cast<size_t>(kThreads * kLinesPerThread), lines.size());
    std::vector<int> next_line(kThreads, 0);
    for (const std::string& line : lines) {
      std::smatch m;
      std::string header, message;
      ASSERT_TRUE(ParseLine(line, &header, &m, &message)) << line.substr(0, 80);
      int t = -1, i = -1;
      size_t size = 0;
      int body_start = 0;
      ASSERT_EQ(3, std::sscanf(message.c_str(), "thread %d line %d size %zu %n",
                               &t, &i, &size, &body_start))
          << message.substr(0, 80);
      ASSERT_TRUE(t >= 0 && t < kThreads) << t;
      EXPECT_EQ(next_line[t]++, i);  // in order, none lost
      EXPECT_EQ(std::string(size, 'a' + t), message.substr(body_start));
    }
  }
}

TEST_P(LoggerTest, OpenFailsWhenTheDirectoryIsMissing) {
  std::unique_ptr<Logger> logger;
  EXPECT_FALSE(
      NewLogger(Env::Default(), dir_.File("missing/LOG"), &logger).ok());
}

TEST_P(LoggerTest, FailedWritesLoseLinesAndNothingElse) {
  test::FaultInjectionEnv env(Env::Default());
  std::unique_ptr<Logger> logger;
  ASSERT_TRUE(NewLogger(&env, fname_, &logger).ok());
  Log(logger.get(), "first");
  // Every append and flush fails from now on, through this Env; the POSIX
  // logger writes below it, so /dev/full makes its writes fail instead.
  env.InjectErrors(test::FaultInjectionEnv::kWrite, nullptr, 0);
  std::unique_ptr<Logger> full;
  const bool have_dev_full = Env::Default()->FileExists("/dev/full");
  if (have_dev_full) {
    ASSERT_TRUE(NewLogger(Env::Default(), "/dev/full", &full).ok());
    Log(full.get(), "lost to a full disk");
  }
  if (!posix()) Log(logger.get(), "lost to a failed write");
  env.ClearInjectedErrors();
  Log(logger.get(), "third");
  logger.reset();
  full.reset();
  if (!posix()) {
    EXPECT_GT(env.injected_error_count(), 0u);
  }

  const std::vector<std::string> lines = SplitLines(Contents(fname_));
  ASSERT_EQ(2u, lines.size());
  std::smatch m;
  std::string header, message;
  EXPECT_TRUE(ParseLine(lines[0], &header, &m, &message) && message == "first");
  EXPECT_TRUE(ParseLine(lines[1], &header, &m, &message) && message == "third");
}

INSTANTIATE_TEST_SUITE_P(PosixAndDefault, LoggerTest, testing::Bool(),
                         [](const testing::TestParamInfo<bool>& info) {
                           return info.param ? "Posix" : "Default";
                         });

}  // namespace
}  // namespace bloomkv
