// Fuzz target for the log reader (db/log_reader.cc), which reads the
// write-ahead log and the manifest: the input is a log file, read with and
// without checksum verification.
//
// Invariants:
//  * no crash, no sanitizer report; every dropped region is reported as
//    Corruption naming the file; records, dropped bytes and the torn tail
//    together never exceed the file; record offsets increase;
//  * the records read, written again with log::Writer, read back exactly,
//    with nothing dropped and no torn tail;
//  * that clean log cut at any point (a crash in the middle of an append)
//    reads back as a prefix of its records, with no corruption reported and
//    any torn tail ending exactly at the cut.
// Thread-safety: single-threaded.
#include <cstdint>
#include <string>
#include <vector>

#include "db/log_reader.h"
#include "db/log_writer.h"
#include "fuzz/fuzz_util.h"
#include "tests/testutil/mem_files.h"
#include "util/hash.h"

namespace bloomkv::fuzz {
namespace {

class RecordingReporter final : public log::Reader::Reporter {
 public:
  void Corruption(size_t bytes, const Status& reason) override {
    CheckDecoderError(reason);
    FUZZ_CHECK(reason.IsCorruption(), reason.ToString());
    dropped_bytes += bytes;
    reports++;
  }
  uint64_t dropped_bytes = 0;
  int reports = 0;
};

struct ReadResult {
  std::vector<std::string> records;
  RecordingReporter reporter;
  bool torn_tail = false;
  uint64_t torn_tail_offset = 0;
  uint64_t torn_tail_bytes = 0;
};

void ReadLog(const std::string& contents, bool verify, ReadResult* out) {
  test::StringSource file(contents);
  log::Reader reader(&file, kFuzzFileName, &out->reporter, verify);
  Slice record;
  std::string scratch;
  uint64_t payload_bytes = 0;
  uint64_t last_offset = 0;
  while (reader.ReadRecord(&record, &scratch)) {
    FUZZ_CHECK(out->records.empty() || reader.LastRecordOffset() > last_offset,
               "record offsets do not increase");
    last_offset = reader.LastRecordOffset();
    FUZZ_CHECK(last_offset < contents.size() || contents.empty(),
               "record offset past the end of the file");
    payload_bytes += record.size();
    FUZZ_CHECK(payload_bytes <= contents.size(), "more payload than file");
    out->records.push_back(record.ToString());
  }
  FUZZ_CHECK(reader.status().ok(), reader.status().ToString());
  out->torn_tail = reader.torn_tail();
  out->torn_tail_offset = reader.torn_tail_offset();
  out->torn_tail_bytes = reader.torn_tail_bytes();
  FUZZ_CHECK(
      payload_bytes + out->reporter.dropped_bytes + out->torn_tail_bytes <=
          contents.size(),
      "records, drops and torn tail exceed the file");
  if (out->torn_tail) {
    FUZZ_CHECK(out->torn_tail_offset + out->torn_tail_bytes == contents.size(),
               "torn tail does not end at the end of the file");
  }
}

void CheckOneMode(const std::string& input, bool verify) {
  ReadResult damaged;
  ReadLog(input, verify, &damaged);

  test::StringSink sink;
  log::Writer writer(&sink);
  for (const std::string& r : damaged.records) {
    Status s = writer.AddRecord(r);
    FUZZ_CHECK(s.ok(), s.ToString());
  }
  const std::string& clean = sink.contents();
  ReadResult reread;
  ReadLog(clean, verify, &reread);
  FUZZ_CHECK(reread.reporter.reports == 0 && !reread.torn_tail,
             "a clean log reads with damage");
  FUZZ_CHECK(reread.records == damaged.records,
             "a clean log reads back other records");

  const size_t cut = static_cast<size_t>(KeyHash(input) % (clean.size() + 1));
  ReadResult torn;
  ReadLog(clean.substr(0, cut), verify, &torn);
  FUZZ_CHECK(
      torn.reporter.reports == 0,
      "a cut clean log reports corruption at cut " + std::to_string(cut));
  FUZZ_CHECK(torn.records.size() <= reread.records.size(),
             "a cut log has more records");
  for (size_t i = 0; i < torn.records.size(); i++) {
    FUZZ_CHECK(torn.records[i] == reread.records[i],
               "a cut log's records are not a prefix");
  }
}

}  // namespace
}  // namespace bloomkv::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  bloomkv::fuzz::CheckOneMode(input, /*verify=*/true);
  bloomkv::fuzz::CheckOneMode(input, /*verify=*/false);
  return 0;
}
