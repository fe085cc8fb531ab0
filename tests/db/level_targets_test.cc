// Level targets: static ones from level 1 down, dynamic ones from the last
// level up (Options::level_compaction_dynamic_level_bytes), and everything
// that follows them: the level level 0 compacts into, scores and picking,
// output segment sizes, filter allocation, and whole databases whose tree
// keeps the levels above the base level empty as it grows, or drains them
// when written with static targets and reopened.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bloomkv/db.h"
#include "db/compaction.h"
#include "db/filter_allocation.h"
#include "db/version_set.h"
#include "table/internal_key.h"
#include "tests/testutil/test_util.h"
#include "util/random.h"

namespace bloomkv {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

constexpr uint64_t kMiB = 1 << 20;

Options TargetOptions(bool dynamic) {
  Options o;
  o.max_bytes_for_level_base = kMiB;
  o.max_bytes_for_level_multiplier = 10;
  o.level_compaction_dynamic_level_bytes = dynamic;
  return o;
}

std::shared_ptr<FileMetaData> Segment(uint64_t number, const std::string& lo,
                                      const std::string& hi, uint64_t bytes,
                                      uint64_t entries = 1000) {
  auto f = std::make_shared<FileMetaData>();
  f->number = number;
  f->file_size = bytes;
  f->num_entries = entries;
  f->smallest = MakeInternalKey(lo, 100, ValueType::kValue);
  f->largest = MakeInternalKey(hi, 100, ValueType::kValue);
  return f;
}

// files[level] for the levels given, the others empty.
std::shared_ptr<const Version> MakeVersion(
    const std::map<int, Version::FileList>& levels) {
  std::vector<Version::FileList> files(kNumLevels);
  for (const auto& [level, list] : levels) files[level] = list;
  return Version::TEST_New(files);
}

// ---------------------------------------------------------------------------
// LevelTargets on versions built by hand

TEST(LevelTargetsTest, StaticTargetsGrowFromLevelOne) {
  const Options o = TargetOptions(false);
  const auto v = MakeVersion({{6, {Segment(1, "a", "z", 50 * kMiB)}}});
  const LevelTargets t(o, *v);
  EXPECT_EQ(1, t.base_level());
  EXPECT_EQ(0u, t.MaxBytes(0));
  uint64_t want = kMiB;
  for (int level = 1; level < kNumLevels; level++, want *= 10) {
    EXPECT_EQ(want, t.MaxBytes(level)) << "L" << level;
  }
  EXPECT_EQ(1, t.Level0OutputLevel(*v));
  // An eighth of the base size in level 1, doubled per level below.
  EXPECT_EQ(kMiB / 8, t.OutputFileSize(1));
  EXPECT_EQ(kMiB / 4, t.OutputFileSize(2));
  EXPECT_DOUBLE_EQ(2.0, t.Score(1, 3, 2 * kMiB));
  EXPECT_DOUBLE_EQ(0.5, t.Score(0, 2, 0));
}

TEST(LevelTargetsTest, DynamicTargetsComeFromTheLastLevelUp) {
  const Options o = TargetOptions(true);
  const auto v = MakeVersion({{5, {Segment(1, "a", "m", 2 * kMiB)}},
                              {6, {Segment(2, "a", "z", 50 * kMiB)}}});
  const LevelTargets t(o, *v);
  // 50 MiB, 5 MiB, then 0.5 MiB would be below the 1 MiB base size.
  EXPECT_EQ(5, t.base_level());
  EXPECT_EQ(50 * kMiB, t.MaxBytes(6));
  EXPECT_EQ(5 * kMiB, t.MaxBytes(5));
  for (int level = 0; level < 5; level++) {
    EXPECT_EQ(0u, t.MaxBytes(level)) << "L" << level;
  }
  EXPECT_EQ(5, t.Level0OutputLevel(*v));
  EXPECT_EQ(kMiB / 8, t.OutputFileSize(5));
  EXPECT_EQ(kMiB / 4, t.OutputFileSize(6));
  EXPECT_DOUBLE_EQ(0.4, t.Score(5, 1, 2 * kMiB));
  // The last level has nowhere to go.
  EXPECT_DOUBLE_EQ(0.0, t.Score(6, 1, 50 * kMiB));
  // Data above the base level must drain, more urgently the more there is.
  EXPECT_DOUBLE_EQ(3.0, t.Score(3, 1, 2 * kMiB));
  EXPECT_GT(t.Score(3, 1, 2 * kMiB), t.Score(2, 1, kMiB / 2));
  EXPECT_DOUBLE_EQ(0.0, t.Score(3, 0, 0));
}

TEST(LevelTargetsTest, BaseLevelMovesUpAsTheTreeGrows) {
  const Options o = TargetOptions(true);
  int previous_base = kNumLevels;
  int bases_seen = 0;
  for (uint64_t bottom = 0; bottom < (uint64_t{1} << 50);
       bottom = bottom * 3 + kMiB / 2) {
    const auto v = MakeVersion({{6, {Segment(1, "a", "z", bottom)}}});
    const LevelTargets t(o, *v);
    const int base = t.base_level();
    ASSERT_LE(base, previous_base) << bottom;
    if (base < previous_base) bases_seen++;
    previous_base = base;
    EXPECT_EQ(bottom, t.MaxBytes(6));
    for (int level = 1; level < base; level++) {
      EXPECT_EQ(0u, t.MaxBytes(level)) << bottom << " L" << level;
    }
    for (int level = base; level < kNumLevels - 1; level++) {
      EXPECT_EQ(t.MaxBytes(level + 1) / 10, t.MaxBytes(level));
    }
    if (base < kNumLevels - 1) {
      EXPECT_GE(t.MaxBytes(base), kMiB) << bottom;
    }
    // The highest level whose target reaches the base size.
    if (base > 1) {
      EXPECT_LT(t.MaxBytes(base) / 10, kMiB) << bottom;
    }
  }
  EXPECT_EQ(1, previous_base);
  EXPECT_EQ(kNumLevels - 1, bases_seen);

  // Exact steps: a factor of 10 above the base size per level.
  auto base_for = [&o](uint64_t bottom) {
    const auto v = MakeVersion({{6, {Segment(1, "a", "z", bottom)}}});
    return LevelTargets(o, *v).base_level();
  };
  EXPECT_EQ(6, base_for(0));
  EXPECT_EQ(6, base_for(10 * kMiB - 1));
  EXPECT_EQ(5, base_for(10 * kMiB));
  EXPECT_EQ(4, base_for(100 * kMiB));
  EXPECT_EQ(3, base_for(1024 * kMiB));
}

TEST(LevelTargetsTest, LargestLevelStandsForTheLastWhileDataSitsHigher) {
  // A tree written with static targets: the last level still empty.
  const Options o = TargetOptions(true);
  const auto v = MakeVersion({{1, {Segment(1, "a", "z", kMiB)}},
                              {2, {Segment(2, "a", "z", 10 * kMiB)}},
                              {3, {Segment(3, "a", "z", 100 * kMiB)}}});
  const LevelTargets t(o, *v);
  EXPECT_EQ(4, t.base_level());
  EXPECT_EQ(100 * kMiB, t.MaxBytes(6));
  // Level 0 may go no deeper than the first level that holds data.
  EXPECT_EQ(1, t.Level0OutputLevel(*v));
  // The deepest misplaced level drains first.
  EXPECT_GT(t.Score(*v, 3), t.Score(*v, 2));
  EXPECT_GT(t.Score(*v, 2), t.Score(*v, 1));
  EXPECT_GE(t.Score(*v, 1), 1.0);
}

TEST(LevelTargetsTest, MultiplierOverflowSaturates) {
  Options o = TargetOptions(false);
  o.max_bytes_for_level_base = uint64_t{1} << 40;
  o.max_bytes_for_level_multiplier = 100;
  const auto v = MakeVersion({});
  const LevelTargets t(o, *v);
  for (int level = 2; level < kNumLevels; level++) {
    EXPECT_GE(t.MaxBytes(level), t.MaxBytes(level - 1));
  }
}

// ---------------------------------------------------------------------------
// Picking

// Lookups that consulted level 0 in vain (filter negatives and false
// positives) score it by the bytes they are worth against the bytes its
// compaction rewrites; into an empty output level, a lone segment saves no
// consult, and two save half of them.
TEST(LevelTargetsTest, LevelZeroScoredByTheLookupsItWasted) {
  const Options o = TargetOptions(true);
  const uint64_t k = kBytesPerWastedLevel0Consult;
  auto wasting = [](uint64_t number, uint64_t negatives,
                    uint64_t false_positives) {
    auto f = Segment(number, "a", "z", kMiB);
    f->counters.Add(kSegmentFilterNegatives, negatives);
    f->counters.Add(kSegmentFalsePositives, false_positives);
    f->counters.Add(kSegmentLookups, negatives + false_positives + 5);
    return f;
  };
  // Into a non-empty last level of 3 MiB: 4 MiB rewritten.
  const uint64_t even = 4 * kMiB / k;
  {
    const auto v = MakeVersion({{0, {wasting(10, even - 100, 99)}},
                                {6, {Segment(1, "a", "z", 3 * kMiB)}}});
    EXPECT_EQ(even - 1, WastedConsults(*v->files(0)[0]));
    const LevelTargets t(o, *v);
    EXPECT_LT(t.Level0Score(*v), 1.0);
    EXPECT_DOUBLE_EQ(t.Score(*v, 0), 0.25);  // by segments alone
    std::string pointers[kNumLevels];
    EXPECT_EQ(nullptr, PickCompaction(o, v, pointers, {}, true));
  }
  {
    const auto v = MakeVersion(
        {{0, {wasting(10, even, 1)}}, {6, {Segment(1, "a", "z", 3 * kMiB)}}});
    const LevelTargets t(o, *v);
    EXPECT_GE(t.Level0Score(*v), 1.0);
    std::string pointers[kNumLevels];
    // Only when lookups asked for it.
    EXPECT_EQ(nullptr, PickCompaction(o, v, pointers, {}));
    const auto c = PickCompaction(o, v, pointers, {}, true);
    ASSERT_NE(nullptr, c);
    EXPECT_EQ(0, c->level());
    EXPECT_EQ(6, c->output_level());
    EXPECT_TRUE(c->read_triggered());
    // Off: level 0 waits for its trigger.
    Options off = o;
    off.read_triggered_compaction = false;
    EXPECT_LT(LevelTargets(off, *v).Level0Score(*v), 1.0);
    EXPECT_EQ(nullptr, PickCompaction(off, v, pointers, {}, true));
  }
  {
    // Base level 5 (above the 30 MiB last level), empty: a lone level-0
    // segment saves nothing there, however many lookups it wasted.
    const auto v = MakeVersion({{0, {wasting(10, 1000 * even, 0)}},
                                {6, {Segment(1, "a", "z", 30 * kMiB)}}});
    const LevelTargets t(o, *v);
    ASSERT_EQ(5, t.Level0OutputLevel(*v));
    EXPECT_LT(t.Level0Score(*v), 1.0);
    // Two save one consult of two: 2 MiB rewritten.
    const auto w = MakeVersion(
        {{0, {wasting(10, 2 * kMiB / k, 0), wasting(11, 2 * kMiB / k - 2, 0)}},
         {6, {Segment(1, "a", "z", 30 * kMiB)}}});
    EXPECT_LT(t.Level0Score(*w), 1.0);
    const auto x = MakeVersion(
        {{0, {wasting(10, 2 * kMiB / k, 0), wasting(11, 2 * kMiB / k + 1, 0)}},
         {6, {Segment(1, "a", "z", 30 * kMiB)}}});
    EXPECT_GE(t.Level0Score(*x), 1.0);
  }
}

TEST(LevelTargetsTest, LevelZeroCompactsIntoTheBaseLevel) {
  const Options o = TargetOptions(true);
  Version::FileList level0;
  for (int i = 0; i < o.level0_compaction_trigger; i++) {
    level0.push_back(Segment(10 + i, "c", "f", kMiB / 4));
  }
  const auto v = MakeVersion(
      {{0, level0},
       {5, {Segment(1, "a", "d", kMiB), Segment(2, "x", "y", kMiB)}},
       {6, {Segment(3, "a", "z", 50 * kMiB)}}});
  std::string pointers[kNumLevels];
  const auto c = PickCompaction(o, v, pointers, {});
  ASSERT_NE(nullptr, c);
  EXPECT_EQ(0, c->level());
  EXPECT_EQ(5, c->output_level());
  EXPECT_EQ(level0.size(), c->inputs(0).size());
  ASSERT_EQ(1u, c->inputs(1).size());
  EXPECT_EQ(1u, c->inputs(1)[0]->number);
  // It writes at most an eighth of the base size per segment there.
  EXPECT_EQ(kMiB / 8, LevelTargets(o, *v).OutputFileSize(c->output_level()));

  // Static targets: level 1, whatever the tree's size.
  const auto s = PickCompaction(TargetOptions(false), v, pointers, {});
  ASSERT_NE(nullptr, s);
  EXPECT_EQ(0, s->level());
  EXPECT_EQ(1, s->output_level());
}

TEST(LevelTargetsTest, DataAboveTheBaseLevelDrainsFirstByMoves) {
  const Options o = TargetOptions(true);
  const auto v = MakeVersion({{0, {Segment(10, "a", "b", kMiB / 4)}},
                              {2, {Segment(1, "c", "d", kMiB / 2)}},
                              {3, {Segment(2, "e", "f", 2 * kMiB)}},
                              {6, {Segment(3, "a", "z", 50 * kMiB)}}});
  std::string pointers[kNumLevels];
  const auto c = PickCompaction(o, v, pointers, {});
  ASSERT_NE(nullptr, c);
  EXPECT_EQ(3, c->level());
  EXPECT_EQ(4, c->output_level());
  EXPECT_TRUE(c->IsTrivialMove());
  // With the level-0 trigger reached, level 0 goes into level 2, the first
  // level holding data, never past it.
  Version::FileList level0;
  for (int i = 0; i < 8; i++) level0.push_back(Segment(20 + i, "a", "b", 1));
  const auto w = MakeVersion({{0, level0},
                              {2, {Segment(1, "c", "d", kMiB / 2)}},
                              {6, {Segment(3, "a", "z", 50 * kMiB)}}});
  const auto c0 = PickCompaction(o, w, pointers, {});
  ASSERT_NE(nullptr, c0);
  EXPECT_EQ(0, c0->level());
  EXPECT_EQ(2, c0->output_level());
}

TEST(LevelTargetsTest, ManualCompactionPassesOverEmptyLevels) {
  const auto only_level0 = MakeVersion({{0, {Segment(1, "a", "b", 100)}}});
  auto c = CompactionForRange(TargetOptions(true), only_level0, 0, nullptr,
                              nullptr, false);
  ASSERT_NE(nullptr, c);
  EXPECT_EQ(kNumLevels - 1, c->output_level());
  c = CompactionForRange(TargetOptions(false), only_level0, 0, nullptr, nullptr,
                         false);
  ASSERT_NE(nullptr, c);
  EXPECT_EQ(1, c->output_level());

  const auto v = MakeVersion({{0, {Segment(1, "a", "b", 100)}},
                              {4, {Segment(2, "a", "c", 100)}},
                              {6, {Segment(3, "a", "z", 1000)}}});
  for (bool dynamic : {false, true}) {
    c = CompactionForRange(TargetOptions(dynamic), v, 0, nullptr, nullptr,
                           false);
    ASSERT_NE(nullptr, c);
    EXPECT_EQ(4, c->output_level());
    EXPECT_EQ(1u, c->inputs(1).size());
    c = CompactionForRange(TargetOptions(dynamic), v, 4, nullptr, nullptr,
                           false);
    ASSERT_NE(nullptr, c);
    EXPECT_EQ(6, c->output_level());
    c = CompactionForRange(TargetOptions(dynamic), v, 6, nullptr, nullptr,
                           true);
    ASSERT_NE(nullptr, c);
    EXPECT_EQ(6, c->output_level());
  }
}

// ---------------------------------------------------------------------------
// Filter allocation follows the same targets

TEST(LevelTargetsTest, FilterAllocationCountsTheLevelsTheTargetsKeep) {
  Options o = TargetOptions(true);
  o.filter_allocation = FilterAllocation::kMinimizeFalsePositives;
  o.filter_policy = NewBloomFilterPolicy(10.0);
  o.deep_filter_policy = o.filter_policy;  // bloom at every level
  const uint64_t l5_entries = 20000, l6_entries = 500000;
  const auto v =
      MakeVersion({{5, {Segment(1, "a", "m", 2 * kMiB, l5_entries)}},
                   {6, {Segment(2, "a", "z", 50 * kMiB, l6_entries)}}});
  // Level 5 counts with its target (5 MiB at the version's bytes per
  // entry), level 6 with what it holds, and levels 1-4, kept empty, not at
  // all (under static targets they would count with 1, 10, 100 and
  // 1000 MiB worth of entries that they will never hold).
  const double entries_per_byte = static_cast<double>(l5_entries + l6_entries) /
                                  static_cast<double>(52 * kMiB);
  const auto l5_target_entries =
      static_cast<uint64_t>(entries_per_byte * static_cast<double>(5 * kMiB));
  // The plan of these runs (level 0 first, then levels 1 up to the deepest;
  // a level's segments hold an output file's worth of entries or fewer).
  auto expect_bits = [&](const Version& version, int first_level,
                         const std::vector<uint64_t>& runs, size_t run,
                         double entries_per_byte, const FilterPolicy& got) {
    const LevelTargets targets(o, version);
    std::vector<FilterRun> plan_runs;
    for (size_t r = 0; r < runs.size(); r++) {
      const int level = first_level + static_cast<int>(r);
      uint64_t segment = runs[r];
      if (level > 0) {
        segment = std::max<uint64_t>(
            1, std::min(runs[r], static_cast<uint64_t>(
                                     entries_per_byte *
                                     static_cast<double>(
                                         targets.OutputFileSize(level)))));
      }
      plan_runs.push_back(FilterRun{runs[r], segment, o.filter_policy});
    }
    const auto plan = PlanFilters(plan_runs, o.filter_policy);
    EXPECT_DOUBLE_EQ(plan[run].policy->BitsPerKey(), got.BitsPerKey());
  };
  // A flush of 1000 entries to level 0.
  const auto flush = FilterPolicyForOutput(o, *v, nullptr, 1000);
  expect_bits(*v, 0, {1000, 0, 0, 0, 0, l5_target_entries, l6_entries}, 0,
              entries_per_byte, *flush);

  // A compaction from level 0 into the base level.
  const auto w =
      MakeVersion({{0, {Segment(9, "b", "c", kMiB / 4, 3000)}},
                   {5, {Segment(1, "a", "m", 2 * kMiB, l5_entries)}},
                   {6, {Segment(2, "a", "z", 50 * kMiB, l6_entries)}}});
  const LevelTargets t(o, *w);
  Compaction c(w, 0, t.Level0OutputLevel(*w));
  c.mutable_inputs(0)->push_back(w->files(0)[0]);
  c.mutable_inputs(1)->push_back(w->files(5)[0]);
  const double w_entries_per_byte =
      static_cast<double>(3000 + l5_entries + l6_entries) /
      static_cast<double>(52 * kMiB + kMiB / 4);
  const auto w_l5_target = static_cast<uint64_t>(
      w_entries_per_byte * static_cast<double>(t.MaxBytes(5)));
  const auto compaction = FilterPolicyForOutput(o, *w, &c, 0);
  expect_bits(*w, 1, {0, 0, 0, 0, w_l5_target, l6_entries}, 4,
              w_entries_per_byte, *compaction);
  // The base level's filters get more bits per key than the last level's.
  EXPECT_GT(compaction->BitsPerKey(), 10.0);
}

// ---------------------------------------------------------------------------
// Whole databases

struct LevelRow {
  int segments = 0;
  uint64_t bytes = 0;
  uint64_t target = 0;
};

std::vector<LevelRow> ReadLevels(DB* db) {
  std::string table;
  EXPECT_TRUE(db->GetProperty("bloomkv.levels", &table));
  std::istringstream in(table);
  std::string line;
  std::getline(in, line);  // header
  std::vector<LevelRow> rows;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string level;
    LevelRow row;
    uint64_t entries;
    fields >> level >> row.segments >> entries >> row.bytes >> row.target;
    rows.push_back(row);
  }
  EXPECT_EQ(static_cast<size_t>(kNumLevels), rows.size()) << table;
  return rows;
}

std::string LevelsText(DB* db) {
  std::string table;
  db->GetProperty("bloomkv.levels", &table);
  return table;
}

Options SmallOptions(bool dynamic) {
  Options o = test::TinyCompactionOptions();
  o.max_bytes_for_level_multiplier = 4;
  o.level_compaction_dynamic_level_bytes = dynamic;
  return o;
}

// The base level of a settled dynamic tree, checked against its shape.
int CheckSettledShape(DB* db, const Options& o) {
  const std::vector<LevelRow> rows = ReadLevels(db);
  if (rows.size() != static_cast<size_t>(kNumLevels)) return -1;
  const std::string table = LevelsText(db);
  const auto multiplier =
      static_cast<uint64_t>(o.max_bytes_for_level_multiplier);
  int base = kNumLevels - 1;
  while (base > 1 && rows[base - 1].target > 0) base--;
  EXPECT_LT(rows[0].segments, o.level0_compaction_trigger) << table;
  for (int level = 1; level < base; level++) {
    EXPECT_EQ(0, rows[level].segments) << "L" << level << "\n" << table;
    EXPECT_EQ(0u, rows[level].target) << "L" << level << "\n" << table;
  }
  EXPECT_EQ(rows[kNumLevels - 1].bytes, rows[kNumLevels - 1].target) << table;
  for (int level = base; level < kNumLevels - 1; level++) {
    EXPECT_EQ(rows[level + 1].target / multiplier, rows[level].target) << table;
    EXPECT_LT(rows[level].bytes, rows[level].target) << table;
  }
  if (base < kNumLevels - 1) {
    EXPECT_GE(rows[base].target, o.max_bytes_for_level_base) << table;
  }
  if (base > 1) {
    EXPECT_LT(rows[base].target / multiplier, o.max_bytes_for_level_base)
        << table;
  }
  return base;
}

std::string RandomKey(Random* rnd) { return "k" + test::RandomString(rnd, 15); }

TEST(LevelTargetsDbTest, GrowingTreeFillsFromTheBottomAndTheBaseMovesUp) {
  const uint32_t seed = 301;
  SCOPED_TRACE("seed " + std::to_string(seed));
  test::TempDir dir;
  const Options options = SmallOptions(true);
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
  Random rnd(seed);
  std::map<std::string, std::string> model;
  std::vector<int> bases;
  for (int round = 0; round < 12; round++) {
    // A small first round: level 6 alone below level 0.
    for (int i = 0; i < (round == 0 ? 1000 : 4000); i++) {
      const std::string k = RandomKey(&rnd);
      const std::string v = test::RandomString(&rnd, 100);
      ASSERT_TRUE(db->Put(WriteOptions(), k, v).ok());
      model[k] = v;
    }
    ASSERT_TRUE(db->Flush().ok());
    test::WaitForBackgroundWork(db.get());
    const int base = CheckSettledShape(db.get(), options);
    if (HasFailure()) return;
    if (!bases.empty()) {
      ASSERT_LE(base, bases.back()) << LevelsText(db.get());
    }
    bases.push_back(base);
  }
  // Starts with level 6 alone below level 0 and grows upward.
  EXPECT_EQ(kNumLevels - 1, bases.front());
  EXPECT_LE(bases.back(), kNumLevels - 3) << LevelsText(db.get());
  test::ExpectDbHolds(db.get(), model);
  db.reset();
  ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
  test::ExpectDbHolds(db.get(), model);
}

TEST(LevelTargetsDbTest, StaticTreeReopenedDynamicDrainsAndLosesNothing) {
  const uint32_t seed = 302;
  SCOPED_TRACE("seed " + std::to_string(seed));
  test::TempDir dir;
  std::unique_ptr<DB> db;
  Random rnd(seed);
  std::map<std::string, std::string> model;
  std::vector<std::string> keys;
  {
    const Options options = SmallOptions(false);
    ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
    for (int i = 0; i < 30000; i++) {
      const std::string k = RandomKey(&rnd);
      const std::string v = test::RandomString(&rnd, 100);
      ASSERT_TRUE(db->Put(WriteOptions(), k, v).ok());
      if (model.emplace(k, v).second) keys.push_back(k);
      model[k] = v;
    }
    ASSERT_TRUE(db->Flush().ok());
    test::WaitForBackgroundWork(db.get());
    // The static shape: level 1 onward, several levels.
    const std::vector<LevelRow> rows = ReadLevels(db.get());
    ASSERT_EQ(static_cast<size_t>(kNumLevels), rows.size());
    EXPECT_GT(rows[1].segments + rows[2].segments, 0) << LevelsText(db.get());
    EXPECT_EQ(0, rows[kNumLevels - 1].segments) << LevelsText(db.get());
    db.reset();
  }
  // Newer versions of a third of the keys (a third of those deleted) in
  // level 0, on top of the old levels: level 0 must never compact past
  // them while they drain.
  auto overwrite = [&](size_t first, size_t step) {
    for (size_t i = first; i < keys.size(); i += step) {
      if ((i / step) % 3 != 0) {
        const std::string v = "new-" + test::RandomString(&rnd, 50);
        ASSERT_TRUE(db->Put(WriteOptions(), keys[i], v).ok());
        model[keys[i]] = v;
      } else {
        ASSERT_TRUE(db->Delete(WriteOptions(), keys[i]).ok());
        model.erase(keys[i]);
      }
    }
  };
  {
    Options options = SmallOptions(false);
    test::KeepEverythingInLevelZero(&options);
    ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
    overwrite(0, 3);
    ASSERT_TRUE(db->Flush().ok());
    EXPECT_GT(ReadLevels(db.get())[0].segments, 8) << LevelsText(db.get());
    db.reset();
  }
  const Options options = SmallOptions(true);
  ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
  // And more while the old levels drain.
  overwrite(1, 5);
  ASSERT_TRUE(db->Flush().ok());
  test::WaitForBackgroundWork(db.get());
  const int base = CheckSettledShape(db.get(), options);
  EXPECT_GT(base, 1) << LevelsText(db.get());
  EXPECT_GT(ReadLevels(db.get())[kNumLevels - 1].segments, 0);
  test::ExpectDbHolds(db.get(), model);
  db.reset();
  ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
  test::ExpectDbHolds(db.get(), model);
}

TEST(LevelTargetsDbTest, OpenLogsTheSetting) {
  test::TempDir dir;
  for (bool dynamic : {true, false}) {
    Options options = SmallOptions(dynamic);
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
    db.reset();
    std::ifstream log(dir.path() + "/LOG");
    std::stringstream text;
    text << log.rdbuf();
    EXPECT_NE(std::string::npos,
              text.str().find(std::string("level_compaction_dynamic_level_"
                                          "bytes=") +
                              (dynamic ? "1" : "0")))
        << text.str();
  }
}

}  // namespace
}  // namespace bloomkv
