// The in-memory click aggregator; see click_stats.h.
#include "tools/shortlink/click_stats.h"

#include <algorithm>
#include <functional>
#include <iterator>
#include <utility>

namespace shortlink {

namespace {

// Adds `count` clicks on `day` to the ascending list `days`.
void AddDay(int32_t day, uint64_t count, std::vector<DayCount>* days) {
  // Clicks arrive in time order, so the day is nearly always the last one.
  auto it = days->end();
  while (it != days->begin() && std::prev(it)->day >= day) --it;
  if (it != days->end() && it->day == day) {
    it->count += count;
  } else {
    days->insert(it, DayCount{day, count});
  }
}

}  // namespace

void ClickAggregator::Record(std::string_view code, int64_t link_created,
                             uint64_t link_incarnation, int64_t now) {
  Shard& shard = shards_[CodeHash()(code) % kShards];
  bloomkv::MutexLock lock(&shard.mutex);
  auto it = shard.pending.find(code);
  ClickDelta* delta = nullptr;
  if (it == shard.pending.end()) {
    it = shard.pending.emplace(std::string(code), ClickDelta()).first;
    delta = &it->second;
    delta->code.assign(code);
    delta->link_created = link_created;
    delta->link_incarnation = link_incarnation;
  } else if (it->second.link_created == link_created &&
             it->second.link_incarnation == link_incarnation) {
    delta = &it->second;
  } else {
    // Another link of this code; the merge keeps only the clicks of the
    // link the code names then.
    for (ClickDelta& other : shard.others) {
      if (other.code == code && other.link_created == link_created &&
          other.link_incarnation == link_incarnation) {
        delta = &other;
        break;
      }
    }
    if (delta == nullptr) {
      delta = &shard.others.emplace_back();
      delta->code.assign(code);
      delta->link_created = link_created;
      delta->link_incarnation = link_incarnation;
    }
  }
  delta->total++;
  delta->last_access = std::max(delta->last_access, now);
  AddDay(DayOf(now), 1, &delta->days);
}

void ClickAggregator::Forget(std::string_view code) {
  Shard& shard = shards_[CodeHash()(code) % kShards];
  bloomkv::MutexLock lock(&shard.mutex);
  const auto it = shard.pending.find(code);
  if (it == shard.pending.end()) return;  // then none in `others` either
  shard.pending.erase(it);
  std::erase_if(shard.others,
                [code](const ClickDelta& d) { return d.code == code; });
}

std::vector<ClickDelta> ClickAggregator::Take() {
  std::vector<ClickDelta> out;
  for (Shard& shard : shards_) {
    decltype(shard.pending) taken;
    std::vector<ClickDelta> others;
    {
      bloomkv::MutexLock lock(&shard.mutex);
      taken.swap(shard.pending);
      others.swap(shard.others);
    }
    for (auto& [code, delta] : taken) out.push_back(std::move(delta));
    for (ClickDelta& delta : others) out.push_back(std::move(delta));
  }
  return out;
}

void MergeClicks(const ClickDelta& delta, int32_t today, ClickRecord* record) {
  record->total += delta.total;
  record->last_access = std::max(record->last_access, delta.last_access);
  for (const DayCount& d : delta.days) AddDay(d.day, d.count, &record->days);
  const int32_t first_kept = today - (kClickDays - 1);
  std::erase_if(record->days,
                [first_kept](const DayCount& d) { return d.day < first_kept; });
  // Only a clock that went back can leave more (days "after" today).
  if (record->days.size() > static_cast<size_t>(kClickDays)) {
    record->days.erase(record->days.begin(), record->days.end() - kClickDays);
  }
}

}  // namespace shortlink
