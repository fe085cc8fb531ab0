// Tests for the two-level iterator with hand-built index and data blocks,
// including empty data blocks (which the builder never writes) and a block
// that fails to load.
#include "table/two_level_iterator.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "table/block.h"
#include "table/block_builder.h"
#include "table/internal_key.h"

namespace bloomkv {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

std::string Key(int i) {
  return MakeInternalKey("k" + std::to_string(100 + i), 1, ValueType::kValue);
}

std::shared_ptr<const Block> MakeBlock(const std::vector<int>& keys) {
  BlockBuilder b(2);
  for (int k : keys) b.Add(Key(k), "v" + std::to_string(k));
  std::shared_ptr<const Block> block;
  EXPECT_TRUE(Block::Parse(b.Finish().ToString(), "t.seg", 0, &block).ok());
  return block;
}

// Blocks {}, {0,1}, {}, {}, {2}, {3,4,5}, {}; index separators are the last
// key of each block (or the previous separator for empty ones).
class TwoLevelIteratorTest : public testing::Test {
 protected:
  TwoLevelIteratorTest() {
    const std::vector<std::vector<int>> layout = {{},  {0, 1},    {}, {},
                                                  {2}, {3, 4, 5}, {}};
    BlockBuilder index(1);
    int last = -1;
    for (size_t i = 0; i < layout.size(); i++) {
      blocks_.push_back(MakeBlock(layout[i]));
      if (!layout[i].empty()) last = layout[i].back();
      // Empty blocks get a separator that still keeps index keys increasing.
      const std::string user =
          last < 0 ? "k0" : "k" + std::to_string(100 + last);
      index.Add(
          MakeInternalKey(user + std::string(i, '~'), 1, ValueType::kValue),
          std::to_string(i));
    }
    EXPECT_TRUE(
        Block::Parse(index.Finish().ToString(), "t.seg", 0, &index_).ok());
  }

  std::unique_ptr<Iterator> NewIter(int failing_block = -1) {
    return NewTwoLevelIterator(
        Block::NewIterator(index_),
        [this, failing_block](const Slice& v) -> std::unique_ptr<Iterator> {
          const int i = std::stoi(v.ToString());
          if (i == failing_block) {
            return std::unique_ptr<Iterator>(
                NewErrorIterator(Status::Corruption("t.seg: block failed")));
          }
          return Block::NewIterator(blocks_[static_cast<size_t>(i)]);
        });
  }

  std::vector<std::shared_ptr<const Block>> blocks_;
  std::shared_ptr<const Block> index_;
};

TEST_F(TwoLevelIteratorTest, SkipsEmptyBlocksBothWays) {
  auto it = NewIter();
  int i = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next(), i++) {
    EXPECT_EQ(it->key(), Slice(Key(i)));
  }
  EXPECT_EQ(i, 6);
  for (it->SeekToLast(); it->Valid(); it->Prev()) {
    EXPECT_EQ(it->key(), Slice(Key(--i)));
  }
  EXPECT_EQ(i, 0);
  EXPECT_TRUE(it->status().ok());
}

TEST_F(TwoLevelIteratorTest, SeekAndSeekForPrev) {
  for (int k = 0; k < 6; k++) {
    auto it = NewIter();
    it->Seek(Key(k));
    ASSERT_TRUE(it->Valid());
    EXPECT_EQ(it->key(), Slice(Key(k)));
    it->SeekForPrev(Key(k));
    ASSERT_TRUE(it->Valid());
    EXPECT_EQ(it->key(), Slice(Key(k)));
    // Just after key k (an older version of the same user key).
    const std::string after =
        MakeInternalKey("k" + std::to_string(100 + k), 0, ValueType::kValue);
    it->Seek(after);
    if (k == 5) {
      EXPECT_FALSE(it->Valid());
    } else {
      ASSERT_TRUE(it->Valid());
      EXPECT_EQ(it->key(), Slice(Key(k + 1)));
    }
    it->SeekForPrev(after);
    ASSERT_TRUE(it->Valid());
    EXPECT_EQ(it->key(), Slice(Key(k)));
  }
  auto it = NewIter();
  it->SeekForPrev(MakeInternalKey("a", 1, ValueType::kValue));
  EXPECT_FALSE(it->Valid());
  it->SeekForPrev(MakeInternalKey("z", 1, ValueType::kValue));
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key(), Slice(Key(5)));
  it->Seek("short");
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().IsInvalidArgument());
}

TEST_F(TwoLevelIteratorTest, BlockErrorStopsIteration) {
  auto it = NewIter(/*failing_block=*/4);
  int n = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) n++;
  EXPECT_EQ(n, 2);
  EXPECT_TRUE(it->status().IsCorruption());
  n = 0;
  for (it->SeekToLast(); it->Valid(); it->Prev()) n++;
  EXPECT_EQ(n, 3);
  EXPECT_TRUE(it->status().IsCorruption());
  it->Seek(Key(0));
  EXPECT_TRUE(it->Valid());
  EXPECT_TRUE(it->status().ok());
}

}  // namespace
}  // namespace bloomkv
