// Fuzz target for the write batch decoder (db/write_batch.cc), which parses
// every record replayed from the write-ahead log: the input is a batch's
// contents.
//
// Invariants: no crash, no sanitizer report; SetContents either rejects the
// bytes with Corruption, leaving the batch as it was, or accepts them, and
// then Iterate yields exactly Count() updates; the same updates rebuilt with
// Put/Delete/DeleteRange iterate the same; Append doubles them; and
// InsertInto a memtable succeeds and stores every update at its own
// sequence number, where Get (or, for a range, the memtable's range
// tombstones) finds it.
// Thread-safety: single-threaded.
#include <string>
#include <vector>

#include "bloomkv/write_batch.h"
#include "db/memtable.h"
#include "db/write_batch_internal.h"
#include "fuzz/fuzz_util.h"

namespace bloomkv::fuzz {
namespace {

enum class Kind { kPut, kDelete, kDeleteRange };

// A DeleteRange keeps its begin in key and its end in value.
struct Update {
  Kind kind;
  std::string key;
  std::string value;
  bool operator==(const Update&) const = default;
};

class Recorder final : public WriteBatch::Handler {
 public:
  void Put(const Slice& key, const Slice& value) override {
    updates.push_back({Kind::kPut, key.ToString(), value.ToString()});
  }
  void Delete(const Slice& key) override {
    updates.push_back({Kind::kDelete, key.ToString(), ""});
  }
  void DeleteRange(const Slice& begin, const Slice& end) override {
    updates.push_back({Kind::kDeleteRange, begin.ToString(), end.ToString()});
  }
  std::vector<Update> updates;
};

std::vector<Update> Updates(const WriteBatch& batch) {
  Recorder r;
  Status s = batch.Iterate(&r);
  FUZZ_CHECK(s.ok(), "accepted batch fails to iterate: " + s.ToString());
  return r.updates;
}

void CheckMemTable(const WriteBatch& batch, const std::vector<Update>& ups) {
  MemTable* mem = new MemTable;
  mem->Ref();
  Status s = WriteBatchInternal::InsertInto(&batch, mem);
  FUZZ_CHECK(s.ok(), "accepted batch fails to insert: " + s.ToString());
  const SequenceNumber first = WriteBatchInternal::Sequence(&batch);
  uint64_t entries = 0;
  for (size_t i = 0; i < ups.size(); i++) {
    if (ups[i].kind == Kind::kDeleteRange) {
      // An empty range deletes nothing and is not kept.
      if (Slice(ups[i].key).compare(ups[i].value) >= 0) continue;
      const auto set = mem->range_tombstones();
      FUZZ_CHECK(set != nullptr && set->CoveringSequence(ups[i].key,
                                                         first + i) ==
                                       first + i,
                 "memtable lost range deletion " + std::to_string(i));
      continue;
    }
    entries++;
    std::string value;
    bool deleted = false;
    FUZZ_CHECK(mem->Get(ups[i].key, first + i, &value, &deleted),
               "memtable lost update " + std::to_string(i));
    FUZZ_CHECK(deleted == (ups[i].kind == Kind::kDelete),
               "memtable changed an update's kind");
    if (ups[i].kind == Kind::kPut) {
      FUZZ_CHECK(value == ups[i].value, "memtable changed a value");
    }
  }
  FUZZ_CHECK(mem->NumEntries() == entries, "memtable entry count");
  mem->Unref();
}

}  // namespace
}  // namespace bloomkv::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace bloomkv;
  using namespace bloomkv::fuzz;
  const Slice contents(reinterpret_cast<const char*>(data), size);
  WriteBatch batch;
  batch.Put("before", "unchanged");
  const std::string before = WriteBatchInternal::Contents(&batch).ToString();
  Status s = WriteBatchInternal::SetContents(&batch, contents);
  if (!s.ok()) {
    FUZZ_CHECK(s.IsCorruption(), s.ToString());
    FUZZ_CHECK(WriteBatchInternal::Contents(&batch) == Slice(before),
               "a rejected SetContents changed the batch");
    return 0;
  }
  FUZZ_CHECK(WriteBatchInternal::Contents(&batch) == contents,
             "SetContents stored other bytes");
  const std::vector<Update> ups = Updates(batch);
  FUZZ_CHECK(ups.size() == batch.Count(), "Iterate disagrees with Count");

  WriteBatch rebuilt;
  for (const Update& u : ups) {
    switch (u.kind) {
      case Kind::kPut:
        rebuilt.Put(u.key, u.value);
        break;
      case Kind::kDelete:
        rebuilt.Delete(u.key);
        break;
      case Kind::kDeleteRange:
        rebuilt.DeleteRange(u.key, u.value);
        break;
    }
  }
  WriteBatchInternal::SetSequence(&rebuilt,
                                  WriteBatchInternal::Sequence(&batch));
  FUZZ_CHECK(Updates(rebuilt) == ups, "rebuilt batch differs");
  // A canonical encoding round-trips byte for byte.
  WriteBatch copy;
  s = WriteBatchInternal::SetContents(&copy,
                                      WriteBatchInternal::Contents(&rebuilt));
  FUZZ_CHECK(s.ok(), "rebuilt batch is rejected: " + s.ToString());
  FUZZ_CHECK(WriteBatchInternal::Contents(&copy) ==
                 WriteBatchInternal::Contents(&rebuilt),
             "canonical encoding changed");

  CheckMemTable(batch, ups);

  WriteBatch doubled = batch;
  doubled.Append(batch);
  std::vector<Update> twice = ups;
  twice.insert(twice.end(), ups.begin(), ups.end());
  FUZZ_CHECK(doubled.Count() == 2 * ups.size() && Updates(doubled) == twice,
             "Append does not concatenate");
  return 0;
}
