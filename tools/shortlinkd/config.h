// Configuration sources for shortlinkd's flags. Every option of the command
// line may also be set by an environment variable, SHORTLINKD_ and the
// option's long name in upper case with '-' as '_' (--rate-limit-ip:
// SHORTLINKD_RATE_LIMIT_IP), and by a key in the --config file, named like
// the option without its dashes (rate-limit-ip = "10/s"; rate_limit_ip is
// accepted too). Precedence: command line > environment > file > default.
//
// The file is TOML or INI as CLI11 reads them ("key = value" lines, '#' or
// ';' comments, strings quoted or not). Sections are not used: a section or
// a key that names no option is an error, so a typo cannot silently leave a
// setting at its default.
//
// CLI11 2.1 reads a config file before the environment, which would rank
// the file above the environment; so the file is applied here, after
// parsing, to the options that are still unset.
//
// Thread-safety: call from main before any thread starts (reads the
// environment).
#ifndef BLOOMKV_TOOLS_SHORTLINKD_CONFIG_H_
#define BLOOMKV_TOOLS_SHORTLINKD_CONFIG_H_

#include <CLI/CLI.hpp>
#include <string>

#include "bloomkv/status.h"

namespace shortlink {

constexpr char kEnvPrefix[] = "SHORTLINKD_";

// "--rate-limit-ip" -> "SHORTLINKD_RATE_LIMIT_IP".
std::string EnvironmentName(const std::string& long_name);

// Gives every option of `app` with a long name (but --help) its
// environment variable. Call after the last option is added, before
// parsing.
void AddEnvironmentNames(CLI::App* app);

// Sets the options that are still unset after app->parse from the file at
// `path`. A file that cannot be read (missing, a directory, no permission),
// an unknown key or section, or a value its option refuses is
// InvalidArgument with a one-line message.
[[nodiscard]] bloomkv::Status ApplyConfigFile(CLI::App* app,
                                              const std::string& path);

}  // namespace shortlink

#endif  // BLOOMKV_TOOLS_SHORTLINKD_CONFIG_H_
