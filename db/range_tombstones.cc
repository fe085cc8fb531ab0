// RangeTombstoneSet: fragments built by one sweep; see range_tombstones.h.
#include "db/range_tombstones.h"

#include <algorithm>
#include <cassert>
#include <functional>
#include <set>

namespace bloomkv {

RangeTombstoneSet::RangeTombstoneSet(std::vector<RangeTombstone> tombstones)
    : tombstones_(std::move(tombstones)) {
  std::sort(tombstones_.begin(), tombstones_.end(),
            [](const RangeTombstone& a, const RangeTombstone& b) {
              return a.sequence < b.sequence;
            });
  if (tombstones_.empty()) return;
  for (const RangeTombstone& t : tombstones_) {
    assert(Slice(t.begin).compare(t.end) < 0);
    bounds_.push_back(t.begin);
    bounds_.push_back(t.end);
  }
  std::sort(bounds_.begin(), bounds_.end());
  bounds_.erase(std::unique(bounds_.begin(), bounds_.end()), bounds_.end());

  // Tombstones by begin and by end, to start and stop them as the sweep
  // passes each bound.
  std::vector<const RangeTombstone*> by_begin, by_end;
  for (const RangeTombstone& t : tombstones_) {
    by_begin.push_back(&t);
    by_end.push_back(&t);
  }
  std::sort(by_begin.begin(), by_begin.end(),
            [](const auto* a, const auto* b) { return a->begin < b->begin; });
  std::sort(by_end.begin(), by_end.end(),
            [](const auto* a, const auto* b) { return a->end < b->end; });
  std::set<SequenceNumber, std::greater<>> active;
  size_t next_begin = 0, next_end = 0;
  offsets_.push_back(0);
  for (size_t i = 0; i + 1 < bounds_.size(); i++) {
    const std::string& bound = bounds_[i];
    while (next_end < by_end.size() && by_end[next_end]->end == bound) {
      active.erase(by_end[next_end++]->sequence);
    }
    while (next_begin < by_begin.size() &&
           by_begin[next_begin]->begin == bound) {
      active.insert(by_begin[next_begin++]->sequence);
    }
    seqs_.insert(seqs_.end(), active.begin(), active.end());
    offsets_.push_back(static_cast<uint32_t>(seqs_.size()));
  }
}

SequenceNumber RangeTombstoneSet::CoveringSequence(
    const Slice& user_key, SequenceNumber snapshot) const {
  if (bounds_.empty()) return 0;
  // The fragment whose start is the last bound <= user_key.
  auto it = std::upper_bound(
      bounds_.begin(), bounds_.end(), user_key,
      [](const Slice& k, const std::string& b) { return k.compare(b) < 0; });
  if (it == bounds_.begin() || it == bounds_.end()) return 0;
  const size_t fragment = static_cast<size_t>(it - bounds_.begin()) - 1;
  const auto first = seqs_.begin() + offsets_[fragment];
  const auto last = seqs_.begin() + offsets_[fragment + 1];
  // Descending: the first at or below the snapshot is the largest one.
  auto seq = std::lower_bound(first, last, snapshot, std::greater<>());
  return seq == last ? 0 : *seq;
}

std::shared_ptr<const RangeTombstoneSet> RangeTombstoneSet::Merge(
    const std::vector<std::shared_ptr<const RangeTombstoneSet>>& sets,
    SequenceNumber snapshot) {
  const std::shared_ptr<const RangeTombstoneSet>* only = nullptr;
  size_t nonempty = 0;
  for (const auto& set : sets) {
    if (set != nullptr && !set->empty()) {
      only = &set;
      nonempty++;
    }
  }
  if (nonempty == 0) return nullptr;
  // Ordered by sequence: the last is the newest.
  if (nonempty == 1 && (*only)->tombstones().back().sequence <= snapshot) {
    return *only;
  }
  std::vector<RangeTombstone> all;
  for (const auto& set : sets) {
    if (set == nullptr) continue;
    for (const RangeTombstone& t : set->tombstones()) {
      if (t.sequence <= snapshot) all.push_back(t);
    }
  }
  if (all.empty()) return nullptr;
  return std::make_shared<const RangeTombstoneSet>(std::move(all));
}

}  // namespace bloomkv
