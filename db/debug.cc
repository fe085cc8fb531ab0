// ForEachKeyVersion and GetAllKeyVersions (include/bloomkv/debug.h), over
// DBImpl::ForEachKeyVersion.
#include "bloomkv/debug.h"

#include "db/db_impl.h"

namespace bloomkv {

Status ForEachKeyVersion(DB* db, const Slice* begin, const Slice* end,
                         const std::function<bool(const KeyVersion&)>& fn) {
  auto* impl = dynamic_cast<DBImpl*>(db);
  if (impl == nullptr) {
    return Status::InvalidArgument(
        "key versions: not a database from DB::Open or DB::OpenForReadOnly");
  }
  if (begin != nullptr && end != nullptr && begin->compare(*end) > 0) {
    return Status::InvalidArgument("key versions: begin is after end");
  }
  if (!fn) return Status::InvalidArgument("key versions: no function");
  return impl->ForEachKeyVersion(begin, end, fn);
}

Status GetAllKeyVersions(DB* db, const Slice* begin, const Slice* end,
                         size_t max_versions,
                         std::vector<KeyVersion>* versions) {
  if (versions == nullptr) {
    return Status::InvalidArgument("key versions: null result vector");
  }
  return ForEachKeyVersion(db, begin, end, [&](const KeyVersion& v) {
    versions->push_back(v);
    return max_versions == 0 || versions->size() < max_versions;
  });
}

}  // namespace bloomkv
