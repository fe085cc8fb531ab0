// LinkStore: the short-link records in bloomkv; see link_store.h.
#include "tools/shortlink/link_store.h"

#include <chrono>
#include <utility>
#include <vector>

#include "bloomkv/filter_policy.h"
#include "bloomkv/write_batch.h"
#include "tools/shortlink/expiry_filter.h"
#include "tools/shortlink/url.h"

namespace shortlink {

using bloomkv::ReadOptions;
using bloomkv::Status;
using bloomkv::WriteOptions;

namespace {

int64_t SystemNow() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Generated codes are 62^7 strong, so even a full store rarely needs a
// second draw; this bound only stops a broken random source from spinning.
constexpr int kMaxCodeAttempts = 16;

}  // namespace

Status LinkStore::Open(const LinkStoreOptions& options, const std::string& path,
                       std::unique_ptr<LinkStore>* store) {
  if (options.bits_per_key < 0) {
    return Status::InvalidArgument("bits_per_key must not be negative");
  }
  std::function<int64_t()> now = options.now ? options.now : SystemNow;
  bloomkv::Options db_options;
  db_options.create_if_missing = true;
  db_options.filter_policy =
      options.bits_per_key > 0
          ? bloomkv::NewBloomFilterPolicy(options.bits_per_key)
          : nullptr;
  db_options.block_cache_capacity = options.block_cache_bytes;
  db_options.compaction_filter = std::make_shared<ExpiryFilter>(now);
  std::unique_ptr<bloomkv::DB> db;
  Status s = bloomkv::DB::Open(db_options, path, &db);
  if (!s.ok()) return s;
  LinkStoreOptions resolved = options;
  resolved.now = std::move(now);
  store->reset(new LinkStore(resolved, std::move(db)));
  return Status::OK();
}

LinkStore::LinkStore(const LinkStoreOptions& options,
                     std::unique_ptr<bloomkv::DB> db)
    : now_(options.now),
      owned_random_(options.random == nullptr
                        ? std::make_unique<SystemRandomSource>()
                        : nullptr),
      random_(options.random != nullptr ? options.random : owned_random_.get()),
      url_hash_(options.TEST_url_hash),
      db_(std::move(db)) {}

LinkStore::~LinkStore() = default;

std::string LinkStore::HashOf(std::string_view normalized_url) const {
  return url_hash_ ? url_hash_(normalized_url) : UrlHash(normalized_url);
}

Status LinkStore::FindReusable(const std::string& normalized,
                               int64_t expires_at, int64_t now,
                               std::vector<IndexEntry>* entries,
                               std::string* code, LinkRecord* record,
                               bool* found) {
  *found = false;
  std::vector<IndexEntry> kept;
  for (IndexEntry& e : *entries) {
    if (IsExpired(e.expires_at, now)) continue;
    std::string value;
    Status s = db_->Get(ReadOptions(), CodeKey(e.code), &value);
    if (s.IsNotFound()) continue;  // removed behind the index's back
    if (!s.ok()) return s;
    LinkRecord candidate;
    s = DecodeLinkRecord(e.code, value, &candidate);
    if (!s.ok()) return s;
    if (IsExpired(candidate.expires_at, now)) continue;
    std::string candidate_normalized;
    const bool same_url =
        NormalizeUrl(candidate.url, &candidate_normalized).ok() &&
        candidate_normalized == normalized;
    // A link that would die before the one asked for is no substitute.
    const bool lives_long_enough =
        candidate.expires_at == 0 ||
        (expires_at != 0 && candidate.expires_at >= expires_at);
    if (!*found && same_url && lives_long_enough) {
      *found = true;
      *code = e.code;
      *record = std::move(candidate);
    }
    kept.push_back(std::move(e));
  }
  *entries = std::move(kept);
  return Status::OK();
}

Status LinkStore::Create(std::string_view url, std::string_view alias,
                         int64_t ttl_seconds, CreateOutcome* outcome,
                         std::string* code, LinkRecord* record) {
  std::string normalized;
  Status s = NormalizeUrl(url, &normalized);
  if (!s.ok()) return s;
  if (!alias.empty()) {
    s = ValidateAlias(alias);
    if (!s.ok()) return s;
  }
  if (ttl_seconds < 0 || ttl_seconds > kMaxTtlSeconds) {
    return Status::InvalidArgument("ttl_seconds out of range");
  }

  std::lock_guard<std::mutex> lock(mutex_);
  const int64_t now = now_();
  const int64_t expires_at = ttl_seconds > 0 ? now + ttl_seconds : 0;
  const std::string index_key = IndexKey(HashOf(normalized));

  std::vector<IndexEntry> entries;
  std::string value;
  s = db_->Get(ReadOptions(), index_key, &value);
  if (s.ok()) {
    s = DecodeIndexEntries(value, &entries);
  } else if (s.IsNotFound()) {
    s = Status::OK();
  }
  if (!s.ok()) return s;

  // Also prunes dead links from the index, which a new entry is about to
  // be appended to either way.
  bool found = false;
  std::string reusable_code;
  LinkRecord reusable;
  s = FindReusable(normalized, expires_at, now, &entries, &reusable_code,
                   &reusable, &found);
  if (!s.ok()) return s;
  if (found && alias.empty()) {
    *outcome = CreateOutcome::kExisting;
    *code = std::move(reusable_code);
    *record = std::move(reusable);
    return Status::OK();
  }

  // Pick the code: the alias, or fresh random codes until one is free. The
  // existence check is a Get that the filters usually answer without IO.
  std::string chosen;
  for (int attempt = 0;; attempt++) {
    if (alias.empty()) {
      if (attempt == kMaxCodeAttempts) {
        return Status::IOError("no free code found after 16 attempts");
      }
      s = GenerateCode(random_, kGeneratedCodeLength, &chosen);
      if (!s.ok()) return s;
    } else {
      chosen.assign(alias);
    }
    s = db_->Get(ReadOptions(), CodeKey(chosen), &value);
    if (s.IsNotFound()) break;
    if (!s.ok()) return s;
    if (!alias.empty()) {
      *outcome = CreateOutcome::kAliasTaken;
      return Status::OK();
    }
  }

  LinkRecord fresh;
  fresh.url.assign(url);
  fresh.created = now;
  fresh.expires_at = expires_at;
  entries.push_back(IndexEntry{chosen, expires_at});

  std::string record_value, index_value;
  EncodeLinkRecord(fresh, &record_value);
  EncodeIndexEntries(entries, &index_value);
  bloomkv::WriteBatch batch;
  batch.Put(CodeKey(chosen), record_value);
  batch.Put(index_key, index_value);
  s = db_->Write(WriteOptions(), &batch);
  if (!s.ok()) return s;
  *outcome = CreateOutcome::kCreated;
  *code = std::move(chosen);
  *record = std::move(fresh);
  return Status::OK();
}

Status LinkStore::Lookup(std::string_view code, LinkRecord* record) {
  std::string value;
  Status s = db_->Get(ReadOptions(), CodeKey(code), &value);
  if (!s.ok()) return s;
  return DecodeLinkRecord(code, value, record);
}

Status LinkStore::Remove(std::string_view code) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::string value;
  Status s = db_->Get(ReadOptions(), CodeKey(code), &value);
  if (!s.ok()) return s;
  bloomkv::WriteBatch batch;
  batch.Delete(CodeKey(code));

  LinkRecord record;
  std::string normalized;
  // A record that cannot be decoded has no findable index entry; removing
  // the code itself is still right.
  if (DecodeLinkRecord(code, value, &record).ok() &&
      NormalizeUrl(record.url, &normalized).ok()) {
    const std::string index_key = IndexKey(HashOf(normalized));
    std::string index_value;
    s = db_->Get(ReadOptions(), index_key, &index_value);
    std::vector<IndexEntry> entries;
    if (s.ok() && DecodeIndexEntries(index_value, &entries).ok()) {
      std::vector<IndexEntry> kept;
      for (IndexEntry& e : entries) {
        if (e.code != code) kept.push_back(std::move(e));
      }
      if (kept.empty()) {
        batch.Delete(index_key);
      } else if (kept.size() != entries.size()) {
        EncodeIndexEntries(kept, &index_value);
        batch.Put(index_key, index_value);
      }
    } else if (!s.ok() && !s.IsNotFound()) {
      return s;
    }
  }
  return db_->Write(WriteOptions(), &batch);
}

Status LinkStore::Flush() { return db_->Flush(); }

Status LinkStore::CompactAll() { return db_->CompactRange(nullptr, nullptr); }

}  // namespace shortlink
