// Corpus replay: runs a fuzz target's LLVMFuzzerTestOneInput over files,
// without libFuzzer, so the normal (GCC) build re-checks every committed
// input, crash reproducers included, on every test run.
//
//   fuzz_<target>_replay <file or directory>...
//
// A directory stands for every regular file in it, in name order. Exits 1 if
// no input was found (a missing corpus must not pass silently); an input
// that breaks an invariant aborts the process.
// Thread-safety: single-threaded program.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>

#include "fuzz/fuzz_util.h"

namespace {

bool ReadWholeFile(const std::filesystem::path& path, std::string* contents) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  contents->assign(std::istreambuf_iterator<char>(in),
                   std::istreambuf_iterator<char>());
  return !in.bad();
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::filesystem::path> inputs;
  for (int i = 1; i < argc; i++) {
    const std::filesystem::path arg(argv[i]);
    std::error_code ec;
    if (std::filesystem::is_directory(arg, ec)) {
      std::vector<std::filesystem::path> files;
      for (const auto& entry : std::filesystem::directory_iterator(arg, ec)) {
        if (entry.is_regular_file()) files.push_back(entry.path());
      }
      std::sort(files.begin(), files.end());
      inputs.insert(inputs.end(), files.begin(), files.end());
    } else {
      inputs.push_back(arg);
    }
  }
  size_t total_bytes = 0;
  for (const auto& path : inputs) {
    std::string contents;
    if (!ReadWholeFile(path, &contents)) {
      std::fprintf(stderr, "cannot read %s\n", path.c_str());
      return 1;
    }
    std::fprintf(stderr, "replaying %s (%zu bytes)\n", path.c_str(),
                 contents.size());
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(contents.data()),
                           contents.size());
    total_bytes += contents.size();
  }
  if (inputs.empty()) {
    std::fprintf(stderr, "no input files given or found\n");
    return 1;
  }
  std::printf("replayed %zu inputs (%zu bytes): no invariant violated\n",
              inputs.size(), total_bytes);
  return 0;
}
