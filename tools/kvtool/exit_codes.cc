// Exit codes and error lines; see exit_codes.h.
#include "tools/kvtool/exit_codes.h"

namespace bloomkv::kvtool {

const char* ExitCodeTable() {
  return "Exit codes:\n"
         "  0  success\n"
         "  1  get: key not found; verify: corruption found (one line per "
         "problem); filter query: some key definitely absent\n"
         "  2  usage error: unknown subcommand or flag, bad argument, "
         "malformed load input\n"
         "  3  path does not exist or is not a bloomkv database / segment "
         "file / filter file\n"
         "  4  corruption: a file the command needs is damaged\n"
         "  5  database locked by another process (put, delete, load, "
         "compact)\n"
         "  6  other IO or internal error (e.g. a LOCK file that cannot be "
         "created: read-only directory, disk full)\n"
         "  7  filter full: a non-scaling or cuckoo filter cannot hold every "
         "key\n";
}

int ExitCodeForOpen(const Status& s) {
  if (s.ok()) return kExitOk;
  if (s.IsInvalidArgument()) return kExitNotADatabase;
  if (s.IsBusy()) return kExitLocked;
  return ExitCodeFor(s);
}

int ExitCodeFor(const Status& s) {
  switch (s.code()) {
    case Status::Code::kOk:
      return kExitOk;
    case Status::Code::kNotFound:
      return kExitNotFoundOrDamaged;
    case Status::Code::kCorruption:
      return kExitCorruption;
    case Status::Code::kInvalidArgument:
      return kExitUsage;
    case Status::Code::kFull:
      return kExitFull;
    case Status::Code::kNotSupported:
    case Status::Code::kIOError:
      return kExitIOError;
  }
  return kExitIOError;
}

int Fail(std::ostream& err, int code, const std::string& message) {
  err << "kvtool: error: " << message << "\n";
  err.flush();
  return code;
}

int FailWith(std::ostream& err, const Status& s) {
  return Fail(err, ExitCodeFor(s), s.ToString());
}

}  // namespace bloomkv::kvtool
