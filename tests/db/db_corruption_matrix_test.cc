// The corruption matrix: every kind of file in a database directory, damaged
// in every way a disk or an operator can damage it, and what Open, Get,
// iteration and a read-only open must then do.
//
// The database built once for the whole suite has segments at two levels, an
// older WAL and a newest WAL that both hold data (a flush that fails keeps
// the older one alive), a manifest of several edits, and CURRENT. Each test
// line copies it, damages one file one way, and checks the failure rules
// (docs/durability.md, "Damaged files: what each corruption yields"):
//  * an operation either fails with Corruption or IOError naming the damaged
//    file (or, for CURRENT, the directory's CURRENT), or answers exactly what
//    was stored; never a wrong value, never NotFound for a stored key;
//  * only damage to the newest WAL may be forgiven as a torn tail, and then
//    only its records are lost, as a whole batch;
//  * a failed Open, and any read-only Open, changes no file; a writable Open
//    never deletes a segment file that was there before.
// docs/durability.md ("Damaged files: what each corruption yields") lists
// the outcome of every cell.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "bloomkv/db.h"
#include "bloomkv/write_batch.h"
#include "db/filename.h"
#include "db/log_reader.h"
#include "table/format.h"
#include "tests/testutil/fault_env.h"
#include "tests/testutil/test_util.h"

namespace bloomkv {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

using Model = std::map<std::string, std::string>;

enum class Target {
  kSegmentDataBlock,
  kSegmentIndexBlock,
  kSegmentFilterBlock,
  kSegmentPropertiesBlock,
  kSegmentFooter,
  kLastWal,
  kOlderWal,
  kManifestLastRecord,
  kManifestMiddleRecord,
  kCurrent,
};

enum class Damage { kFlipByte, kTruncate, kDelete, kZeroPage };

constexpr size_t kPageSize = 4096;

const char* TargetName(Target t) {
  switch (t) {
    case Target::kSegmentDataBlock:
      return "SegmentDataBlock";
    case Target::kSegmentIndexBlock:
      return "SegmentIndexBlock";
    case Target::kSegmentFilterBlock:
      return "SegmentFilterBlock";
    case Target::kSegmentPropertiesBlock:
      return "SegmentPropertiesBlock";
    case Target::kSegmentFooter:
      return "SegmentFooter";
    case Target::kLastWal:
      return "LastWal";
    case Target::kOlderWal:
      return "OlderWal";
    case Target::kManifestLastRecord:
      return "ManifestLastRecord";
    case Target::kManifestMiddleRecord:
      return "ManifestMiddleRecord";
    case Target::kCurrent:
      return "Current";
  }
  return "?";
}

const char* DamageName(Damage d) {
  switch (d) {
    case Damage::kFlipByte:
      return "FlipByte";
    case Damage::kTruncate:
      return "Truncate";
    case Damage::kDelete:
      return "Delete";
    case Damage::kZeroPage:
      return "ZeroPage";
  }
  return "?";
}

std::vector<uint64_t> FilesOfType(const std::string& dir, FileType want) {
  std::vector<uint64_t> numbers;
  for (const auto& c : test::DatabaseFiles(dir)) {
    uint64_t n;
    FileType t;
    if (ParseFileName(c, &n, &t) && t == want) numbers.push_back(n);
  }
  std::sort(numbers.begin(), numbers.end());
  return numbers;
}

// The database every test line starts from, built once.
struct Template {
  test::TempDir dir{"matrix-template"};
  Model before_last_wal;       // the state without the newest WAL's batch
  Model full;                  // everything written
  std::set<std::string> keys;  // every key ever written (some deleted)
  uint64_t segment = 0;        // a segment below level 0, to damage
  uint64_t older_wal = 0, last_wal = 0;
  std::string manifest;  // file name
  uint64_t manifest_last_record = 0, manifest_first_record_end = 0;
};

Options MatrixOptions() {
  Options options;
  options.create_if_missing = true;
  options.write_buffer_size = 64 << 10;
  options.block_size = 1024;
  return options;
}

// Writes puts then deletes as one synced batch, into db and the model.
void WriteSynced(DB* db, const std::map<std::string, std::string>& puts,
                 const std::vector<std::string>& deletes, Template* t) {
  WriteBatch batch;
  for (const auto& [k, v] : puts) {
    batch.Put(k, v);
    t->keys.insert(k);
  }
  for (const auto& k : deletes) {
    batch.Delete(k);
    t->keys.insert(k);
  }
  WriteOptions wo;
  wo.sync = true;
  ASSERT_TRUE(db->Write(wo, &batch).ok());
  for (const auto& [k, v] : puts) t->full[k] = v;
  for (const auto& k : deletes) t->full.erase(k);
}

std::string Value(const std::string& tag, int i, size_t len) {
  std::string v = tag + std::to_string(i) + ":";
  v.resize(len, static_cast<char>('a' + i % 26));
  return v;
}

std::string Key(char prefix, int i) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "%c%04d", prefix, i);
  return buf;
}

void BuildTemplate(Template* t) {
  test::FaultInjectionEnv env(Env::Default());
  Options options = MatrixOptions();
  options.env = &env;
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(options, t->dir.path(), &db).ok());

  // Deep segments: compacted out of level 0.
  std::map<std::string, std::string> puts;
  for (int i = 0; i < 300; i++) puts[Key('k', i)] = Value("one", i, 200);
  WriteSynced(db.get(), puts, {}, t);
  ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());

  // A level-0 segment that overwrites and deletes some of them.
  puts.clear();
  std::vector<std::string> deletes;
  for (int i = 0; i < 100; i++) puts[Key('k', i)] = Value("two", i, 150);
  for (int i = 100; i < 120; i++) deletes.push_back(Key('k', i));
  WriteSynced(db.get(), puts, deletes, t);
  ASSERT_TRUE(db->Flush().ok());

  // The older WAL: one batch larger than the memtable, so the next write
  // switches to a new log.
  puts.clear();
  for (int i = 0; i < 70; i++) puts[Key('a', i)] = Value("three", i, 1000);
  for (int i = 200; i < 210; i++) puts[Key('k', i)] = Value("three", i, 100);
  WriteSynced(db.get(), puts, {}, t);
  t->before_last_wal = t->full;

  std::vector<SegmentInfo> segments = db->GetSegmentInfo();
  std::set<int> levels;
  for (const auto& s : segments) {
    levels.insert(s.level);
    if (s.level > 0 && t->segment == 0) t->segment = s.file_number;
  }
  ASSERT_GE(levels.size(), 2u);
  ASSERT_NE(0u, t->segment);

  // The newest WAL. Its flush of the older one fails, so both stay.
  env.InjectErrors(
      test::FaultInjectionEnv::kOpen,
      [](const std::string& f) { return f.size() > 4 && f.ends_with(".seg"); },
      0);
  puts.clear();
  deletes.clear();
  for (int i = 0; i < 20; i++) puts[Key('b', i)] = Value("four", i, 200);
  for (int i = 0; i < 5; i++) puts[Key('a', i)] = Value("four", i, 50);
  for (int i = 210; i < 215; i++) deletes.push_back(Key('k', i));
  WriteSynced(db.get(), puts, deletes, t);
  db.reset();
  env.ClearInjectedErrors();

  const std::vector<uint64_t> logs =
      FilesOfType(t->dir.path(), FileType::kLogFile);
  ASSERT_EQ(2u, logs.size());
  t->older_wal = logs[0];
  t->last_wal = logs[1];
  const std::vector<uint64_t> manifests =
      FilesOfType(t->dir.path(), FileType::kManifestFile);
  ASSERT_EQ(1u, manifests.size());
  t->manifest =
      ManifestFileName("", manifests[0]).substr(1);  // without the dir

  // Where the manifest's records start.
  std::unique_ptr<SequentialFile> file;
  ASSERT_TRUE(
      Env::Default()->NewSequentialFile(t->dir.File(t->manifest), &file).ok());
  log::Reader reader(file.get(), t->manifest, nullptr, true);
  Slice record;
  std::string scratch;
  int records = 0;
  while (reader.ReadRecord(&record, &scratch)) {
    if (records == 0) {
      t->manifest_first_record_end =
          reader.LastRecordOffset() + 7 + record.size();
    }
    t->manifest_last_record = reader.LastRecordOffset();
    records++;
  }
  ASSERT_GE(records, 3);
}

// Built by the first test that needs it; its directory is removed at exit.
Template* SharedTemplate() {
  static Template t;
  static const bool built = (BuildTemplate(&t), true);
  (void)built;
  return &t;
}

struct Region {
  std::string file;  // name inside the directory
  uint64_t offset = 0;
  uint64_t size = 0;
};

Region RegionOf(const Template& t, Target target) {
  Region r;
  auto whole = [&](const std::string& name) {
    uint64_t size = 0;
    EXPECT_TRUE(Env::Default()->GetFileSize(t.dir.File(name), &size).ok());
    r.file = name;
    r.offset = 0;
    r.size = size;
  };
  switch (target) {
    case Target::kSegmentDataBlock:
    case Target::kSegmentIndexBlock:
    case Target::kSegmentFilterBlock:
    case Target::kSegmentPropertiesBlock:
    case Target::kSegmentFooter: {
      whole(SegmentFileName("", t.segment).substr(1));
      std::string data;
      EXPECT_TRUE(
          ReadFileToString(Env::Default(), t.dir.File(r.file), &data).ok());
      const uint64_t footer_offset = data.size() - kFooterSize;
      Footer footer;
      EXPECT_TRUE(
          footer
              .DecodeFrom(Slice(data.data() + footer_offset, kFooterSize),
                          r.file, footer_offset)
              .ok());
      BlockHandle h;
      if (target == Target::kSegmentDataBlock) {
        h.offset = 0;
        h.size = std::min(footer.filter_handle.offset,
                          footer.properties_handle.offset) /
                 2;
      } else if (target == Target::kSegmentIndexBlock) {
        h = footer.index_handle;
      } else if (target == Target::kSegmentFilterBlock) {
        h = footer.filter_handle;
      } else if (target == Target::kSegmentPropertiesBlock) {
        h = footer.properties_handle;
      } else {
        h.offset = footer_offset;
        h.size = kFooterSize;
      }
      EXPECT_GT(h.size, 0u) << TargetName(target);
      r.offset = h.offset;
      r.size = h.size;
      break;
    }
    case Target::kLastWal:
      whole(LogFileName("", t.last_wal).substr(1));
      break;
    case Target::kOlderWal:
      whole(LogFileName("", t.older_wal).substr(1));
      break;
    case Target::kManifestLastRecord:
      whole(t.manifest);
      r.offset = t.manifest_last_record;
      r.size -= r.offset;
      break;
    case Target::kManifestMiddleRecord:
      whole(t.manifest);
      r.size = t.manifest_first_record_end;
      break;
    case Target::kCurrent:
      whole("CURRENT");
      break;
  }
  return r;
}

void DamageFile(const std::string& path, const Region& r, Damage damage) {
  Env* env = Env::Default();
  if (damage == Damage::kDelete) {
    ASSERT_TRUE(env->RemoveFile(path).ok());
    return;
  }
  std::string data;
  ASSERT_TRUE(ReadFileToString(env, path, &data).ok());
  const uint64_t middle = r.offset + r.size / 2;
  ASSERT_LT(middle, data.size());
  switch (damage) {
    case Damage::kFlipByte:
      data[middle] ^= 0x20;
      break;
    case Damage::kTruncate:
      data.resize(middle);
      break;
    case Damage::kZeroPage: {
      const uint64_t page = middle / kPageSize * kPageSize;
      const uint64_t end = std::min<uint64_t>(page + kPageSize, data.size());
      std::fill(data.begin() + page, data.begin() + end, '\0');
      break;
    }
    case Damage::kDelete:
      break;
  }
  ASSERT_TRUE(WriteStringToFile(env, data, path, false).ok());
}

// The damaged file, the damage, and whether segments are read mapped (the
// default Env) or with pread.
using Cell = std::tuple<Target, Damage, bool>;

class CorruptionMatrixTest : public testing::TestWithParam<Cell> {
 protected:
  void SetUp() override {
    tmpl_ = SharedTemplate();
    ASSERT_FALSE(HasFatalFailure());
    std::filesystem::copy(
        tmpl_->dir.path(), dir_.path(),
        std::filesystem::copy_options::recursive |
            std::filesystem::copy_options::overwrite_existing);
    region_ = RegionOf(*tmpl_, target());
    DamageFile(dir_.File(region_.file), region_, damage());
  }

  Target target() const { return std::get<0>(GetParam()); }
  Damage damage() const { return std::get<1>(GetParam()); }
  Env* read_env() const {
    return std::get<2>(GetParam()) ? Env::Default() : test::PreadEnv();
  }
  bool MayLoseLastWal() const { return target() == Target::kLastWal; }

  // An error is acceptable when it is Corruption or IOError naming the file.
  void ExpectClearError(const Status& s, const std::string& what) {
    EXPECT_TRUE(s.IsCorruption() || s.IsIOError())
        << what << ": " << s.ToString();
    EXPECT_NE(std::string::npos, s.ToString().find(region_.file))
        << what << " does not name " << region_.file << ": " << s.ToString();
    EXPECT_EQ(0, test::CountStatusPrefixes(s.message()))
        << what << " wraps another status' text: " << s.ToString();
  }

  // Reads every key ever written and the whole database; everything must
  // be one of the acceptable states, or a clear error.
  void CheckReads(DB* db, const std::string& how) {
    const Model& full = tmpl_->full;
    const Model& prev = tmpl_->before_last_wal;
    // Which state the database is in; decided by the first answer that
    // tells them apart.
    std::optional<bool> is_prev;
    auto expect = [&](const std::string& key) -> std::optional<std::string> {
      auto in = [&](const Model& m) -> std::optional<std::string> {
        auto it = m.find(key);
        if (it == m.end()) return std::nullopt;
        return it->second;
      };
      if (is_prev.value_or(false)) return in(prev);
      return in(full);
    };
    for (const std::string& key : tmpl_->keys) {
      std::string value;
      Status s = db->Get(ReadOptions(), key, &value);
      if (!s.ok() && !s.IsNotFound()) {
        ExpectClearError(s, how + " Get(" + key + ")");
        continue;
      }
      std::optional<std::string> got;
      if (s.ok()) got = value;
      if (!is_prev.has_value() && MayLoseLastWal()) {
        auto f = full.find(key);
        auto p = prev.find(key);
        std::optional<std::string> in_full, in_prev;
        if (f != full.end()) in_full = f->second;
        if (p != prev.end()) in_prev = p->second;
        if (in_full != in_prev) {
          ASSERT_TRUE(got == in_full || got == in_prev)
              << how << " Get(" << key
              << ") gave a wrong answer: " << s.ToString();
          is_prev = got == in_prev;
          continue;
        }
      }
      ASSERT_EQ(expect(key), got)
          << how << " Get(" << key << "): " << s.ToString();
    }

    std::unique_ptr<Iterator> it = db->NewIterator(ReadOptions());
    Model seen;
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      seen[it->key().ToString()] = it->value().ToString();
    }
    if (!it->status().ok()) {
      ExpectClearError(it->status(), how + " iteration");
      const Model& m = is_prev.value_or(false) ? prev : full;
      for (const auto& [k, v] : seen) {
        auto want = m.find(k);
        ASSERT_TRUE(want != m.end() && want->second == v)
            << how << " iteration gave a wrong entry for " << k;
      }
    } else if (MayLoseLastWal() && !is_prev.has_value()) {
      EXPECT_TRUE(seen == full || seen == prev) << how << " iteration";
    } else {
      EXPECT_TRUE(seen == (is_prev.value_or(false) ? prev : full))
          << how << " iteration";
    }
  }

  const Template* tmpl_ = nullptr;
  test::TempDir dir_{"matrix"};
  Region region_;
};

TEST_P(CorruptionMatrixTest, ErrorOrExactDataAndNoFileLost) {
  const std::vector<std::string> before = test::DatabaseFiles(dir_.path());
  const std::vector<uint64_t> segments_before =
      FilesOfType(dir_.path(), FileType::kSegmentFile);
  Options options = MatrixOptions();
  options.create_if_missing = false;
  options.env = read_env();

  {
    std::unique_ptr<DB> db;
    Status s = DB::OpenForReadOnly(options, dir_.path(), &db);
    if (!s.ok()) {
      ExpectClearError(s, "read-only Open");
    } else {
      CheckReads(db.get(), "read-only");
    }
  }
  EXPECT_EQ(before, test::DatabaseFiles(dir_.path()))
      << "a read-only Open changed files";

  {
    std::unique_ptr<DB> db;
    Status s = DB::Open(options, dir_.path(), &db);
    if (!s.ok()) {
      ExpectClearError(s, "Open");
      EXPECT_EQ(before, test::DatabaseFiles(dir_.path()))
          << "a failed Open changed files";
    } else {
      CheckReads(db.get(), "writable");
      db.reset();
      const std::vector<uint64_t> after =
          FilesOfType(dir_.path(), FileType::kSegmentFile);
      for (uint64_t n : segments_before) {
        EXPECT_TRUE(std::binary_search(after.begin(), after.end(), n))
            << "Open deleted segment " << n;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    EveryFileEveryDamage, CorruptionMatrixTest,
    testing::Combine(
        testing::Values(Target::kSegmentDataBlock, Target::kSegmentIndexBlock,
                        Target::kSegmentFilterBlock,
                        Target::kSegmentPropertiesBlock, Target::kSegmentFooter,
                        Target::kLastWal, Target::kOlderWal,
                        Target::kManifestLastRecord,
                        Target::kManifestMiddleRecord, Target::kCurrent),
        testing::Values(Damage::kFlipByte, Damage::kTruncate, Damage::kDelete,
                        Damage::kZeroPage),
        testing::Bool()),
    [](const testing::TestParamInfo<Cell>& info) {
      return std::string(TargetName(std::get<0>(info.param))) + "_" +
             DamageName(std::get<1>(info.param)) +
             (std::get<2>(info.param) ? "_Mapped" : "_Pread");
    });

}  // namespace
}  // namespace bloomkv
