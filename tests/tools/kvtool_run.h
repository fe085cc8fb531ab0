// Runs the real kvtool binary (KVTOOL_PATH, set by tools/CMakeLists.txt) as
// a child process with the given arguments and stdin, capturing stdout,
// stderr and the exit code, for tests that check kvtool as operators use
// it.
// Thread-safety: each call forks; files under io_dir must not be shared by
// concurrent calls.
#ifndef BLOOMKV_TESTS_TOOLS_KVTOOL_RUN_H_
#define BLOOMKV_TESTS_TOOLS_KVTOOL_RUN_H_

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#ifndef KVTOOL_PATH
#error "KVTOOL_PATH must name the kvtool binary (set in tools/CMakeLists.txt)"
#endif

namespace bloomkv::test {

struct KvtoolResult {
  int code = -1;  // exit code, or 128 + signal
  std::string out;
  std::string err;
};

inline std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void WriteWholeFile(const std::string& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << data;
}

// Runs `kvtool args...` with `input` on stdin; io_dir holds the captured
// streams.
inline KvtoolResult RunKvtool(const std::vector<std::string>& args,
                              const std::string& io_dir,
                              const std::string& input = "") {
  const std::string in_path = io_dir + "/stdin";
  const std::string out_path = io_dir + "/stdout";
  const std::string err_path = io_dir + "/stderr";
  WriteWholeFile(in_path, input);
  std::vector<std::string> storage = {KVTOOL_PATH};
  storage.insert(storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& s : storage) argv.push_back(s.data());
  argv.push_back(nullptr);
  KvtoolResult r;
  const pid_t pid = fork();
  if (pid < 0) return r;
  if (pid == 0) {
    // Only async-signal-safe calls between fork and exec.
    const int in = open(in_path.c_str(), O_RDONLY);
    const int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (in < 0 || out < 0 || err < 0) _exit(126);
    dup2(in, 0);
    dup2(out, 1);
    dup2(err, 2);
    execv(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = ReadWholeFile(out_path);
  r.err = ReadWholeFile(err_path);
  return r;
}

}  // namespace bloomkv::test

#endif  // BLOOMKV_TESTS_TOOLS_KVTOOL_RUN_H_
