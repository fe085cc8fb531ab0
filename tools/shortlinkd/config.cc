// Flags from the environment and a config file; see config.h.
#include "tools/shortlinkd/config.h"

#include <fcntl.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <exception>
#include <sstream>
#include <vector>

namespace shortlink {

using bloomkv::Status;

std::string EnvironmentName(const std::string& long_name) {
  std::string env = kEnvPrefix;
  for (const char c : long_name) {
    env += c == '-' ? '_' : static_cast<char>(std::toupper(c));
  }
  return env;
}

void AddEnvironmentNames(CLI::App* app) {
  for (CLI::Option* opt : app->get_options()) {
    if (opt == app->get_help_ptr() || opt->get_lnames().empty()) continue;
    opt->envname(EnvironmentName(opt->get_lnames().front()));
  }
}

namespace {

// The whole file at `path`, or false with *error saying why not. The file
// is read here rather than by CLI11's from_file, which opens a directory
// without complaint and then reads it as an empty config.
bool ReadWholeFile(const std::string& path, std::string* contents,
                   std::string* error) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *error = std::strerror(errno);
    return false;
  }
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof(buf))) != 0) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      *error = std::strerror(errno);  // a directory: "Is a directory"
      close(fd);
      return false;
    }
    contents->append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return true;
}

}  // namespace

Status ApplyConfigFile(CLI::App* app, const std::string& path) {
  auto fail = [&path](const std::string& what) {
    return Status::InvalidArgument("config file " + path + ": " + what);
  };
  std::string contents, error;
  if (!ReadWholeFile(path, &contents, &error)) return fail(error);
  std::vector<CLI::ConfigItem> items;
  CLI::ConfigTOML format;
  try {
    std::istringstream input(contents);
    items = format.from_config(input);
  } catch (const std::exception& e) {
    return fail(e.what());
  }
  for (const CLI::ConfigItem& item : items) {
    if (!item.parents.empty()) {
      // CLI11 marks a section's start and end with the names "++", "--".
      if (item.name == "++" || item.name == "--") {
        return fail("unknown section [" + CLI::detail::join(item.parents, ".") +
                    "]");
      }
      return fail("unknown key '" + item.fullname() + "'");
    }
    std::string name = item.name;
    CLI::Option* opt = app->get_option_no_throw("--" + name);
    if (opt == nullptr) {
      for (char& c : name) c = c == '_' ? '-' : c;
      opt = app->get_option_no_throw("--" + name);
    }
    if (opt == nullptr || opt == app->get_help_ptr() || name == "config") {
      return fail("unknown key '" + item.name + "'");
    }
    if (opt->count() > 0) continue;  // the command line or environment won
    try {
      if (opt->get_expected_min() == 0) {  // a flag
        opt->add_result(opt->get_flag_value(name, format.to_flag(item)));
      } else {
        opt->add_result(item.inputs);
      }
      opt->run_callback();
    } catch (const std::exception& e) {
      std::string why = e.what();
      for (char& c : why) c = c == '\n' ? ' ' : c;
      return fail(item.name + ": " + why);
    }
  }
  return Status::OK();
}

}  // namespace shortlink
