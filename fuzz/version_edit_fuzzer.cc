// Fuzz target for the manifest's record decoder, VersionEdit::DecodeFrom
// (db/version_edit.cc): the input is one manifest record.
//
// Invariants: no crash, no sanitizer report; a rejected record gets
// Corruption; an accepted one re-encodes to bytes that decode to the same
// edit (field by field), and encoding is a fixed point from then on.
// Thread-safety: single-threaded.
#include <string>

#include "db/version_edit.h"
#include "fuzz/fuzz_util.h"

namespace bloomkv::fuzz {
namespace {

bool SameEdit(const VersionEdit& a, const VersionEdit& b) {
  if (a.has_log_number() != b.has_log_number() ||
      a.log_number() != b.log_number() ||
      a.has_next_file_number() != b.has_next_file_number() ||
      a.next_file_number() != b.next_file_number() ||
      a.has_last_sequence() != b.has_last_sequence() ||
      a.last_sequence() != b.last_sequence() ||
      a.deleted_files() != b.deleted_files() ||
      a.new_files().size() != b.new_files().size()) {
    return false;
  }
  for (size_t i = 0; i < a.new_files().size(); i++) {
    const auto& [la, fa] = a.new_files()[i];
    const auto& [lb, fb] = b.new_files()[i];
    if (la != lb || fa->number != fb->number ||
        fa->file_size != fb->file_size || fa->num_entries != fb->num_entries ||
        fa->smallest != fb->smallest || fa->largest != fb->largest) {
      return false;
    }
  }
  return true;
}

}  // namespace
}  // namespace bloomkv::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace bloomkv;
  using namespace bloomkv::fuzz;
  VersionEdit edit;
  Status s = edit.DecodeFrom(Slice(reinterpret_cast<const char*>(data), size));
  if (!s.ok()) {
    FUZZ_CHECK(s.IsCorruption(), s.ToString());
    return 0;
  }
  edit.DebugString();
  std::string encoded;
  edit.EncodeTo(&encoded);
  VersionEdit decoded;
  s = decoded.DecodeFrom(encoded);
  FUZZ_CHECK(s.ok(), "re-encoded edit does not decode: " + s.ToString());
  FUZZ_CHECK(SameEdit(edit, decoded), "round trip changes the edit");
  std::string reencoded;
  decoded.EncodeTo(&reencoded);
  FUZZ_CHECK(reencoded == encoded, "encoding is not a fixed point");
  return 0;
}
