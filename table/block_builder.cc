// Block serialization with prefix compression; see block_builder.h.
#include "table/block_builder.h"

#include <algorithm>
#include <cassert>

#include "table/format.h"
#include "table/internal_key.h"
#include "util/coding.h"

namespace bloomkv {

BlockBuilder::BlockBuilder(int restart_interval, bool key_prefixes)
    : restart_interval_(restart_interval < 1 ? 1 : restart_interval),
      key_prefixes_(key_prefixes) {
  restarts_.push_back(0);
}

void BlockBuilder::Reset() {
  buffer_.clear();
  restarts_.clear();
  restarts_.push_back(0);
  prefixes_.clear();
  counter_ = 0;
  num_entries_ = 0;
  finished_ = false;
  last_key_.clear();
}

size_t BlockBuilder::CurrentSizeEstimate() const {
  const size_t per_restart =
      sizeof(uint32_t) + (key_prefixes_ ? sizeof(uint64_t) : 0);
  return buffer_.size() + restarts_.size() * per_restart + sizeof(uint32_t);
}

void BlockBuilder::Add(const Slice& key, const Slice& value) {
  assert(!finished_);
  size_t shared = 0;
  if (counter_ < restart_interval_) {
    const size_t min_len = std::min(last_key_.size(), key.size());
    while (shared < min_len && last_key_[shared] == key[shared]) shared++;
  } else {
    restarts_.push_back(static_cast<uint32_t>(buffer_.size()));
    counter_ = 0;
  }
  if (key_prefixes_ && counter_ == 0) {
    prefixes_.push_back(UserKeyPrefix(ExtractUserKey(key)));
  }
  const size_t non_shared = key.size() - shared;
  PutVarint32(&buffer_, static_cast<uint32_t>(shared));
  PutVarint32(&buffer_, static_cast<uint32_t>(non_shared));
  PutVarint32(&buffer_, static_cast<uint32_t>(value.size()));
  buffer_.append(key.data() + shared, non_shared);
  buffer_.append(value.data(), value.size());
  last_key_.resize(shared);
  last_key_.append(key.data() + shared, non_shared);
  counter_++;
  num_entries_++;
}

Slice BlockBuilder::Finish() {
  if (finished_) return Slice(buffer_);
  for (uint32_t r : restarts_) PutFixed32(&buffer_, r);
  uint32_t count = static_cast<uint32_t>(restarts_.size());
  if (key_prefixes_) {
    // An empty block's one restart point has no key: prefix 0.
    prefixes_.resize(restarts_.size(), 0);
    for (uint64_t p : prefixes_) PutFixed64(&buffer_, p);
    count |= kBlockKeyPrefixesFlag;
  }
  PutFixed32(&buffer_, count);
  finished_ = true;
  return Slice(buffer_);
}

}  // namespace bloomkv
