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
// Every link also has a list entry ("t:", newest first) written and removed
// in the same WriteBatch as its record, and click counts ("s:"). Clicks are
// gathered in memory (ClickAggregator) and merged into the database by a
// flusher thread every stats_flush_ms, by Flush(), and at close: a redirect
// never writes, and a crash loses at most the clicks of the last interval.
//
// Thread-safety: thread-safe. Lookups run concurrently; Create, Patch,
// Remove and the merging of clicks are serialized by an internal mutex, so
// two creates can never take the same code, the URL index never loses an
// update, and clicks are never written for a link that was just removed.
// One process owns the database (bloomkv locks it).
#ifndef BLOOMKV_TOOLS_SHORTLINK_LINK_STORE_H_
#define BLOOMKV_TOOLS_SHORTLINK_LINK_STORE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "bloomkv/db.h"
#include "bloomkv/status.h"
#include "tools/shortlink/click_stats.h"
#include "tools/shortlink/code.h"
#include "tools/shortlink/link_record.h"
#include "util/mutex.h"

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
  // Milliseconds between two merges of the gathered clicks into the
  // database; 0 starts no flusher thread (clicks are then written by
  // FlushClicks, Flush and at close only).
  int stats_flush_ms = 1000;
  // TEST_ hook: replaces UrlHash, e.g. to force hash collisions.
  std::function<std::string(std::string_view)> TEST_url_hash;
};

// What PATCH changes; an absent field is left as it is.
struct LinkPatch {
  std::optional<std::string> url;
  // New lifetime counted from now: 1..kMaxTtlSeconds, or 0 for no expiry.
  std::optional<int64_t> ttl_seconds;
};

enum class PatchOutcome {
  kPatched,
  kExpired,  // the link has expired; nothing was changed
};

// One link of a listing page.
struct ListedLink {
  std::string code;
  LinkRecord record;
  ClickRecord clicks;
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

  // Changes the URL and/or the expiry of a live link, moving its URL-index
  // entry from the old URL to the new one (the new URL then dedups to this
  // code, the old one no longer does) and updating its list entry and click
  // record, all in one WriteBatch. On kPatched *record is the new record.
  // NotFound if there is no such link; InvalidArgument for a bad URL or
  // TTL (nothing is changed).
  bloomkv::Status Patch(std::string_view code, const LinkPatch& patch,
                        PatchOutcome* outcome, LinkRecord* record);

  // Removes `code`, its URL-index entry, list entry and click counts.
  // NotFound if there is none.
  bloomkv::Status Remove(std::string_view code);

  // Up to `limit` live links, newest first, starting after the list key
  // `after` ("" for the newest). *next is the list key to continue after,
  // or "" when there are no more links.
  bloomkv::Status List(std::string_view after, size_t limit,
                       std::vector<ListedLink>* links, std::string* next);

  // Counts a click, now, on `link` (as Lookup read it) under `code`. Never
  // touches the database. If the code names another link by the time the
  // clicks are merged, this click is dropped.
  void RecordClick(std::string_view code, const LinkRecord& link) {
    clicks_.Record(code, link.created, link.incarnation, now_());
  }
  // The stored click counts of `record`'s link (zero if it has none), the
  // days limited to the kClickDays ending today. Clicks gathered since the
  // last merge are not included.
  bloomkv::Status Clicks(std::string_view code, const LinkRecord& record,
                         ClickRecord* clicks);
  // Merges the clicks gathered so far into the database, in one WriteBatch.
  // Clicks of links removed in the meantime are dropped.
  bloomkv::Status FlushClicks();

  // Merges the gathered clicks, then writes the memtable to a segment.
  bloomkv::Status Flush();
  // Compacts the whole database, dropping expired links.
  bloomkv::Status CompactAll();

  int64_t Now() const { return now_(); }
  bloomkv::DbStats Stats() { return db_->GetStats(); }
  bloomkv::DB* db() { return db_.get(); }

 private:
  LinkStore(const LinkStoreOptions& options, std::unique_ptr<bloomkv::DB> db,
            uint64_t first_incarnation);

  // Writes the "t:" key of every link, unless the marker says they exist
  // (a database created before listing existed has none).
  bloomkv::Status BuildListIndex();
  void RunFlusher(int interval_ms);

  // The URL-index entries under `key`; none if it is absent.
  bloomkv::Status ReadIndex(const std::string& key,
                            std::vector<IndexEntry>* entries);
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
  bloomkv::Mutex mutex_;  // serializes Create, Patch, Remove and FlushClicks
  // The list-index marker is stored. Guarded by mutex_ (set once at open
  // before any other thread can call in).
  bool list_index_marked_ = false;
  // The incarnation of the next link created: counted up, so unique within
  // the process, from a random start, so that a link is also told from one
  // of its code created in the same second by the process before a quick
  // restart. 0 is skipped (it stands for version 1).
  uint64_t next_incarnation_ GUARDED_BY(mutex_);
  ClickAggregator clicks_;

  bloomkv::Mutex flusher_mutex_;
  bloomkv::CondVar flusher_cv_;
  bool stopping_ GUARDED_BY(flusher_mutex_) = false;
  std::thread flusher_;
};

}  // namespace shortlink

#endif  // BLOOMKV_TOOLS_SHORTLINK_LINK_STORE_H_
