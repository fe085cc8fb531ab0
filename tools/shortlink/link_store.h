// LinkStore: short codes and their URLs in a bloomkv database.
//
// bloomkv is the authoritative store (layout in link_record.h). A redirect
// is one Get of "c:" + code; for a code that was never issued that Get is
// almost always answered by the segment filters without any disk read,
// which is what keeps floods of made-up codes cheap. Creating a link
// deduplicates through a URL index keyed by a 128-bit hash of the
// normalized URL; the stored URL is always compared too, so a hash collision
// can only cost a missed dedup, never a wrong link.
//
// Expired links read as expired (the caller answers 410) until a compaction
// drops them through ExpiryFilter; they are never handed out by dedup.
//
// Thread-safety: thread-safe. Lookups run concurrently; Create and Remove
// are serialized by an internal mutex, so two creates can never take the
// same code and the URL index never loses an update. One process owns the
// database (bloomkv locks it).
#ifndef BLOOMKV_TOOLS_SHORTLINK_LINK_STORE_H_
#define BLOOMKV_TOOLS_SHORTLINK_LINK_STORE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "bloomkv/db.h"
#include "bloomkv/status.h"
#include "tools/shortlink/code.h"
#include "tools/shortlink/link_record.h"

namespace shortlink {

// Longest accepted ttl_seconds: ten years.
constexpr int64_t kMaxTtlSeconds = int64_t{10} * 365 * 24 * 3600;

struct LinkStoreOptions {
  // Bloom filter bits per key for new segments; 0 builds no filters (every
  // lookup then reads a data block of each candidate segment).
  double bits_per_key = 10.0;
  // Block cache capacity in bytes; 0 disables the cache.
  size_t block_cache_bytes = 8 << 20;
  // Current time in Unix seconds. Default: the system clock.
  std::function<int64_t()> now;
  // Where generated codes come from. Default: a SystemRandomSource. Not
  // owned; must outlive the store.
  RandomSource* random = nullptr;
  // TEST_ hook: replaces UrlHash, e.g. to force hash collisions.
  std::function<std::string(std::string_view)> TEST_url_hash;
};

enum class CreateOutcome {
  kCreated,     // a new link
  kExisting,    // a live link to the same URL already existed (dedup)
  kAliasTaken,  // the requested alias names an existing link (live or not)
};

class LinkStore {
 public:
  static bloomkv::Status Open(const LinkStoreOptions& options,
                              const std::string& path,
                              std::unique_ptr<LinkStore>* store);

  LinkStore(const LinkStore&) = delete;
  LinkStore& operator=(const LinkStore&) = delete;
  // Closes the database (after its background work ends).
  ~LinkStore();

  // Creates a link to `url`, or finds a live one to reuse.
  //   alias: empty for a generated code; otherwise the code to use (never
  //     deduplicated, never overwrites: kAliasTaken if the code exists).
  //   ttl_seconds: 0 for no expiry, else 1..kMaxTtlSeconds.
  // Dedup reuses a live link to the same normalized URL that lives at least
  // as long as the one asked for (no expiry, or expiring no earlier).
  // On kCreated and kExisting, *code and *record describe the link.
  // InvalidArgument for a bad URL, alias or TTL (nothing is stored).
  bloomkv::Status Create(std::string_view url, std::string_view alias,
                         int64_t ttl_seconds, CreateOutcome* outcome,
                         std::string* code, LinkRecord* record);

  // The record of `code` (expired or not). NotFound if there is none.
  bloomkv::Status Lookup(std::string_view code, LinkRecord* record);

  // Removes `code` and its URL-index entry. NotFound if there is none.
  bloomkv::Status Remove(std::string_view code);

  // Writes the memtable to a segment.
  bloomkv::Status Flush();
  // Compacts the whole database, dropping expired links.
  bloomkv::Status CompactAll();

  int64_t Now() const { return now_(); }
  bloomkv::DbStats Stats() { return db_->GetStats(); }
  bloomkv::DB* db() { return db_.get(); }

 private:
  LinkStore(const LinkStoreOptions& options, std::unique_ptr<bloomkv::DB> db);

  std::string HashOf(std::string_view normalized_url) const;
  // Looks for a live link to `normalized` in `entries`, dropping dead ones
  // from it. REQUIRES: mutex_ held.
  bloomkv::Status FindReusable(const std::string& normalized,
                               int64_t expires_at, int64_t now,
                               std::vector<IndexEntry>* entries,
                               std::string* code, LinkRecord* record,
                               bool* found);

  const std::function<int64_t()> now_;
  std::unique_ptr<SystemRandomSource> owned_random_;  // when none was given
  RandomSource* const random_;
  const std::function<std::string(std::string_view)> url_hash_;
  std::unique_ptr<bloomkv::DB> db_;
  std::mutex mutex_;  // serializes Create and Remove
};

}  // namespace shortlink

#endif  // BLOOMKV_TOOLS_SHORTLINK_LINK_STORE_H_
