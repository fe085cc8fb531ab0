// How kvtool opens what it inspects: databases (read-only or for writing)
// and single segment files, with the path checks and exit codes the tool
// documents.
//
// Each function returns kExitOk on success, or reports one error line on err
// and returns the exit code for it (3 for a missing path or a directory that
// is not a database, 4 for corruption, 5 for a locked database).
// Thread-safety: stateless functions.
#ifndef BLOOMKV_TOOLS_KVTOOL_DB_ACCESS_H_
#define BLOOMKV_TOOLS_KVTOOL_DB_ACCESS_H_

#include <memory>
#include <ostream>
#include <string>

#include "bloomkv/db.h"
#include "bloomkv/filter_policy.h"
#include "table/segment_reader.h"

namespace bloomkv::kvtool {

// The policy kvtool reads filters with. Bloom filters record one policy name
// whatever their bits per key (the filter block carries its own geometry), so
// this reader interprets every segment the built-in policy wrote.
std::shared_ptr<const FilterPolicy> ReaderFilterPolicy();

// Opens path with DB::OpenForReadOnly: no lock, no byte written.
int OpenDbReadOnly(std::ostream& err, const std::string& path,
                   std::unique_ptr<DB>* db);

// Opens path with DB::Open for writing; create makes a missing database.
int OpenDbForWrite(std::ostream& err, const std::string& path, bool create,
                   std::unique_ptr<DB>* db);

// Opens one segment file directly (no database needed).
int OpenSegmentFile(std::ostream& err, const std::string& path,
                    std::unique_ptr<SegmentReader>* reader);

// Status form of OpenSegmentFile, for callers that collect errors.
Status OpenSegment(const std::string& path,
                   std::unique_ptr<SegmentReader>* reader);

}  // namespace bloomkv::kvtool

#endif  // BLOOMKV_TOOLS_KVTOOL_DB_ACCESS_H_
