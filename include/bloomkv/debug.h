// Every stored version of keys, for debugging and for operators' dumps
// (kvtool idump): what a Get or an iterator resolves away — values an
// overwrite has hidden, deletion markers — as long as compaction has not
// dropped them yet. RocksDB offers the same as GetAllKeyVersions.
//
//   bloomkv::ForEachKeyVersion(db.get(), nullptr, nullptr,
//                              [](const bloomkv::KeyVersion& v) {
//                                print(v.user_key, v.sequence, v.deleted);
//                                return true;  // false stops
//                              });
//
// Versions come in internal-key order: user keys ascending, and for one key
// the newest version (highest sequence number) first. The view is the
// database's state when the call starts; writes made meanwhile are not
// seen. Blocks are read with their checksums verified and not added to the
// block cache.
//
// Thread-safety: safe to call while other threads use db.
#ifndef BLOOMKV_INCLUDE_DEBUG_H_
#define BLOOMKV_INCLUDE_DEBUG_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "bloomkv/slice.h"
#include "bloomkv/status.h"

namespace bloomkv {

class DB;

struct KeyVersion {
  std::string user_key;
  std::string value;  // empty for a deletion
  uint64_t sequence = 0;
  bool deleted = false;  // a deletion marker (tombstone)
};

// Calls fn with each version of the keys in [*begin, *end) (null: from the
// first key / to the last) until fn returns false. Returns the first read
// error (Corruption naming the file and offset, IOError), OK otherwise;
// InvalidArgument if db is not from DB::Open / DB::OpenForReadOnly, or if
// begin > end.
Status ForEachKeyVersion(DB* db, const Slice* begin, const Slice* end,
                         const std::function<bool(const KeyVersion&)>& fn);

// The first max_versions versions of ForEachKeyVersion (0: all of them),
// appended to *versions.
Status GetAllKeyVersions(DB* db, const Slice* begin, const Slice* end,
                         size_t max_versions,
                         std::vector<KeyVersion>* versions);

}  // namespace bloomkv

#endif  // BLOOMKV_INCLUDE_DEBUG_H_
