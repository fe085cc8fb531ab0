// AnswerCache; see answer_cache.h.
#include "db/answer_cache.h"

#include <bit>
#include <cassert>
#include <cstring>

namespace bloomkv {

namespace {
// Tells keys of one slot apart before their bytes are copied: the hash's low
// half (the slot is chosen by its high bits through a multiplication).
uint32_t Tag(uint64_t hash) { return static_cast<uint32_t>(hash) | 1; }
}  // namespace

AnswerCache::AnswerCache(size_t capacity)
    : shift_(64 - std::bit_width(capacity / kSlotBytes) + 1),
      num_slots_(size_t{1} << (64 - shift_)),
      slots_(new Slot[num_slots_]) {
  assert(capacity >= 2 * kSlotBytes);
}

AnswerCache::~AnswerCache() { delete[] slots_; }

bool AnswerCache::Lookup(const Slice& key, uint64_t hash, uint64_t epoch,
                         Answer* answer, std::string* value) {
  Slot* s = SlotFor(hash);
  const uint32_t version = s->version.load(std::memory_order_acquire);
  if (version & 1) return false;
  if (s->epoch.load(std::memory_order_relaxed) != epoch) return false;
  const uint64_t sizes = s->sizes.load(std::memory_order_relaxed);
  const size_t key_size = sizes & 0xffff;
  const size_t value_size = (sizes >> 16) & 0xffff;
  if ((sizes >> 32) != Tag(hash) || key_size != key.size() ||
      key_size + value_size > kMaxPayload) {
    return false;
  }
  const uint64_t meta = s->meta.load(std::memory_order_relaxed);
  uint64_t copy[Slot::kDataWords];
  const size_t words = (key_size + value_size + 7) / 8;
  for (size_t i = 0; i < words; i++) {
    copy[i] = s->data[i].load(std::memory_order_relaxed);
  }
  std::atomic_thread_fence(std::memory_order_acquire);
  if (s->version.load(std::memory_order_relaxed) != version) return false;
  const char* bytes = reinterpret_cast<const char*>(copy);
  if (std::memcmp(bytes, key.data(), key_size) != 0) return false;
  answer->result = static_cast<LookupResult>(meta & 0xff);
  answer->sequence = meta >> 8;
  if (answer->result == LookupResult::kFound) {
    value->assign(bytes + key_size, value_size);
  }
  // Written once per knock, not per read: a popular answer's line stays
  // shared among the cores that read it.
  if (s->referenced.load(std::memory_order_relaxed) == 0) {
    s->referenced.store(1, std::memory_order_relaxed);
  }
  return true;
}

void AnswerCache::Offer(const Slice& key, uint64_t hash, uint64_t epoch,
                        const Answer& answer, const Slice& value) {
  const size_t payload = key.size() + value.size();
  if (payload > kMaxPayload) return;
  Slot* s = SlotFor(hash);
  const uint32_t tag = Tag(hash);
  const uint64_t held = s->epoch.load(std::memory_order_relaxed);
  // A reader of an older version does not displace a newer answer.
  if (held > epoch) return;
  if (held == epoch) {
    // A live answer stays unless this key missed here twice in a row and
    // nobody read it in between.
    if (s->knock.load(std::memory_order_relaxed) != tag) {
      s->knock.store(tag, std::memory_order_relaxed);
      return;
    }
    if (s->referenced.load(std::memory_order_relaxed) != 0) {
      s->referenced.store(0, std::memory_order_relaxed);
      return;
    }
  }
  uint32_t version = s->version.load(std::memory_order_relaxed);
  if ((version & 1) != 0 ||
      !s->version.compare_exchange_strong(version, version + 1,
                                          std::memory_order_relaxed)) {
    return;  // another writer has it
  }
  std::atomic_thread_fence(std::memory_order_release);
  const size_t words = (payload + 7) / 8;
  uint64_t copy[Slot::kDataWords];
  if (words != 0) copy[words - 1] = 0;  // the last word's tail
  std::memcpy(copy, key.data(), key.size());
  if (!value.empty()) {
    std::memcpy(reinterpret_cast<char*>(copy) + key.size(), value.data(),
                value.size());
  }
  for (size_t i = 0; i < words; i++) {
    s->data[i].store(copy[i], std::memory_order_relaxed);
  }
  s->epoch.store(epoch, std::memory_order_relaxed);
  s->meta.store(answer.sequence << 8 | static_cast<uint64_t>(answer.result),
                std::memory_order_relaxed);
  s->sizes.store(key.size() | value.size() << 16 | uint64_t{tag} << 32,
                 std::memory_order_relaxed);
  s->knock.store(0, std::memory_order_relaxed);
  s->referenced.store(0, std::memory_order_relaxed);
  s->version.store(version + 2, std::memory_order_release);
}

}  // namespace bloomkv
