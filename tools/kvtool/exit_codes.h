// kvtool's exit codes and its one-line error reports.
//
// Every failure ends with exactly one "kvtool: error: ..." line on stderr and
// one of the documented exit codes below (the table is repeated in
// `kvtool --help` and docs/kvtool.md; keep the three in step).
// Thread-safety: stateless functions.
#ifndef BLOOMKV_TOOLS_KVTOOL_EXIT_CODES_H_
#define BLOOMKV_TOOLS_KVTOOL_EXIT_CODES_H_

#include <ostream>
#include <string>

#include "bloomkv/status.h"

namespace bloomkv::kvtool {

// The values are a contract with scripts: never renumber them.
enum ExitCode : int {
  kExitOk = 0,
  // `get`: the key is absent. `verify`: corruption was found (and listed).
  // `filter query`: at least one key is definitely absent.
  kExitNotFoundOrDamaged = 1,
  // Unknown subcommand or flag, bad argument, malformed `load` input.
  kExitUsage = 2,
  // The path does not exist, or is not a bloomkv database / segment file /
  // filter file.
  kExitNotADatabase = 3,
  // A file the command needs is corrupt.
  kExitCorruption = 4,
  // The database is held open by another process (writing subcommands).
  kExitLocked = 5,
  // Any other IO or internal error, including a LOCK file that cannot be
  // created or locked for any reason but another holder.
  kExitIOError = 6,
  // A filter has no room for more keys (`filter build` of a non-scaling or
  // cuckoo filter given more keys than it holds): Status::Full.
  kExitFull = 7,
};

// The exit-code table as shown in `kvtool --help`.
const char* ExitCodeTable();

// The exit code for a failed DB::Open / DB::OpenForReadOnly / segment open:
// InvalidArgument means the path is not a database, a Busy status (see
// Status::IsBusy) means another process holds it.
int ExitCodeForOpen(const Status& s);

// The exit code for any other failed operation.
int ExitCodeFor(const Status& s);

// Writes "kvtool: error: <message>\n" to err and returns code.
int Fail(std::ostream& err, int code, const std::string& message);

// Fail() with the status' text and ExitCodeFor(s).
// REQUIRES: !s.ok()
int FailWith(std::ostream& err, const Status& s);

}  // namespace bloomkv::kvtool

#endif  // BLOOMKV_TOOLS_KVTOOL_EXIT_CODES_H_
