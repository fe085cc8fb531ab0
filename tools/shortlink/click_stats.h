// ClickAggregator: click counts gathered in memory between two writes.
//
// A redirect must never wait for the disk, so it only adds its click here;
// LinkStore's flusher thread takes everything gathered every
// --stats-flush-ms and merges it into the "s:" records in one WriteBatch
// (link_store.h). Recording is cheap: the codes are spread over shards by
// hash, and a click locks one shard for a hash-map update (an allocation
// only for a code's first click of the interval).
//
// Clicks are gathered per link, not per code: each names its link's
// creation time and incarnation (link_record.h). A redirect that read a
// link may count its click after that link was removed and its code given
// to a new one; that click stays apart from the new link's and is dropped
// at the merge, whatever order the two links' clicks arrive in.
//
// Thread-safety: thread-safe.
#ifndef BLOOMKV_TOOLS_SHORTLINK_CLICK_STATS_H_
#define BLOOMKV_TOOLS_SHORTLINK_CLICK_STATS_H_

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tools/shortlink/link_record.h"
#include "util/mutex.h"

namespace shortlink {

// The clicks of one link since the last Take().
struct ClickDelta {
  std::string code;
  int64_t link_created = 0;  // with link_incarnation, names the link
  uint64_t link_incarnation = 0;
  uint64_t total = 0;
  int64_t last_access = 0;
  std::vector<DayCount> days;  // ascending
};

class ClickAggregator {
 public:
  ClickAggregator() = default;
  ClickAggregator(const ClickAggregator&) = delete;
  ClickAggregator& operator=(const ClickAggregator&) = delete;

  // Counts one click at Unix time `now` on the link `code` created at
  // `link_created` with `link_incarnation`.
  void Record(std::string_view code, int64_t link_created,
              uint64_t link_incarnation, int64_t now);

  // Drops the clicks gathered for `code`, of every link (its link was
  // removed).
  void Forget(std::string_view code);

  // Everything recorded since the last call, in no particular order; the
  // aggregator is empty afterwards.
  std::vector<ClickDelta> Take();

 private:
  // Enough shards that the HTTP workers rarely meet on one lock.
  static constexpr size_t kShards = 32;

  // Lets find() take a string_view: no allocation for a repeated click.
  struct CodeHash {
    using is_transparent = void;
    size_t operator()(std::string_view code) const {
      return std::hash<std::string_view>()(code);
    }
  };
  struct Shard {
    bloomkv::Mutex mutex;
    // By code: the first link of the code clicked.
    std::unordered_map<std::string, ClickDelta, CodeHash, std::equal_to<>>
        pending GUARDED_BY(mutex);
    // Clicks of other links of a code already in `pending`: rare (a click
    // counted after its link was removed and the code taken again), so a
    // list searched linearly.
    std::vector<ClickDelta> others GUARDED_BY(mutex);
  };

  std::array<Shard, kShards> shards_;
};

// Adds `delta` to `record` (a link's stored counts, possibly fresh), then
// drops the days before the kClickDays ending with `today`.
void MergeClicks(const ClickDelta& delta, int32_t today, ClickRecord* record);

}  // namespace shortlink

#endif  // BLOOMKV_TOOLS_SHORTLINK_CLICK_STATS_H_
