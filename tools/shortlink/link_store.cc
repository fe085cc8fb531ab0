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

std::string ListIndexMarker() {
  return std::string(1, static_cast<char>(kListIndexVersion1));
}

// List keys written per WriteBatch while building the list index, so that
// a large old database is not indexed in one huge batch.
constexpr size_t kListIndexBatchKeys = 4096;

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
  // From the system's generator even when the codes come from a test's
  // source, so that the codes a test expects do not shift.
  uint64_t first_incarnation = 0;
  SystemRandomSource system_random;
  s = system_random.Fill(reinterpret_cast<uint8_t*>(&first_incarnation),
                         sizeof(first_incarnation));
  if (!s.ok()) return s;
  std::unique_ptr<LinkStore> opened(
      new LinkStore(resolved, std::move(db), first_incarnation));
  s = opened->BuildListIndex();
  if (!s.ok()) return s;
  if (options.stats_flush_ms > 0) {
    LinkStore* raw = opened.get();
    opened->flusher_ = std::thread(
        [raw, ms = options.stats_flush_ms] { raw->RunFlusher(ms); });
  }
  *store = std::move(opened);
  return Status::OK();
}

Status LinkStore::BuildListIndex() {
  std::string marker;
  Status s = db_->Get(ReadOptions(), kListIndexMarkerKey, &marker);
  if (s.ok() && marker.size() == 1 &&
      static_cast<uint8_t>(marker[0]) == kListIndexVersion1) {
    list_index_marked_ = true;
    return Status::OK();
  }
  if (!s.ok() && !s.IsNotFound()) return s;

  // Puts are idempotent: an interrupted build is simply run again.
  std::unique_ptr<bloomkv::Iterator> it = db_->NewIterator(ReadOptions());
  bloomkv::WriteBatch batch;
  bool any = false;
  for (it->Seek(kCodeKeyPrefix); it->Valid(); it->Next()) {
    const std::string_view key(it->key().data(), it->key().size());
    if (!key.starts_with(kCodeKeyPrefix)) break;
    const std::string_view code = key.substr(kCodeKeyPrefix.size());
    LinkRecord record;
    // An undecodable record cannot be listed; Lookup reports it.
    if (!DecodeLinkRecord(code, it->value(), &record).ok()) continue;
    any = true;
    batch.Put(ListKey(record.created, code),
              EncodeListEntry(record.expires_at));
    if (batch.Count() >= kListIndexBatchKeys) {
      s = db_->Write(WriteOptions(), &batch);
      if (!s.ok()) return s;
      batch.Clear();
    }
  }
  if (!it->status().ok()) return it->status();
  // Without any link there is nothing to index: the first Create writes
  // the marker, so opening an empty store writes nothing.
  if (!any) return Status::OK();
  batch.Put(kListIndexMarkerKey, ListIndexMarker());
  s = db_->Write(WriteOptions(), &batch);
  list_index_marked_ = s.ok();
  return s;
}

void LinkStore::RunFlusher(int interval_ms) {
  for (;;) {
    {
      bloomkv::MutexLock lock(&flusher_mutex_);
      const auto deadline = std::chrono::steady_clock::now() +
                            std::chrono::milliseconds(interval_ms);
      while (!stopping_ && flusher_cv_.WaitUntil(&flusher_mutex_, deadline)) {
      }
      if (stopping_) return;
    }
    // A failed merge loses that interval's clicks; the next one is tried
    // anew.
    (void)FlushClicks();
  }
}

LinkStore::LinkStore(const LinkStoreOptions& options,
                     std::unique_ptr<bloomkv::DB> db,
                     uint64_t first_incarnation)
    : now_(options.now),
      owned_random_(options.random == nullptr
                        ? std::make_unique<SystemRandomSource>()
                        : nullptr),
      random_(options.random != nullptr ? options.random : owned_random_.get()),
      url_hash_(options.TEST_url_hash),
      db_(std::move(db)),
      next_incarnation_(first_incarnation) {}

LinkStore::~LinkStore() {
  if (flusher_.joinable()) {
    {
      bloomkv::MutexLock lock(&flusher_mutex_);
      stopping_ = true;
    }
    flusher_cv_.SignalAll();
    flusher_.join();
  }
  (void)FlushClicks();
}

Status LinkStore::ReadIndex(const std::string& key,
                            std::vector<IndexEntry>* entries) {
  entries->clear();
  std::string value;
  Status s = db_->Get(ReadOptions(), key, &value);
  if (s.IsNotFound()) return Status::OK();
  if (!s.ok()) return s;
  return DecodeIndexEntries(value, entries);
}

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

  bloomkv::MutexLock lock(&mutex_);
  const int64_t now = now_();
  const int64_t expires_at = ttl_seconds > 0 ? now + ttl_seconds : 0;
  const std::string index_key = IndexKey(HashOf(normalized));

  std::vector<IndexEntry> entries;
  s = ReadIndex(index_key, &entries);
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
  std::string chosen, value;
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
  if (next_incarnation_ == 0) next_incarnation_++;  // 0 marks version 1
  fresh.incarnation = next_incarnation_++;
  entries.push_back(IndexEntry{chosen, expires_at});

  std::string record_value, index_value;
  EncodeLinkRecord(fresh, &record_value);
  EncodeIndexEntries(entries, &index_value);
  bloomkv::WriteBatch batch;
  batch.Put(CodeKey(chosen), record_value);
  batch.Put(index_key, index_value);
  batch.Put(ListKey(now, chosen), EncodeListEntry(expires_at));
  if (!list_index_marked_) batch.Put(kListIndexMarkerKey, ListIndexMarker());
  s = db_->Write(WriteOptions(), &batch);
  if (!s.ok()) return s;
  list_index_marked_ = true;
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
  bloomkv::MutexLock lock(&mutex_);
  std::string value;
  Status s = db_->Get(ReadOptions(), CodeKey(code), &value);
  if (!s.ok()) return s;
  bloomkv::WriteBatch batch;
  batch.Delete(CodeKey(code));
  batch.Delete(ClickKey(code));
  // A click still to come from a redirect that read this link is told from
  // a later link's by the incarnation; those gathered so far can go now.
  clicks_.Forget(code);

  LinkRecord record;
  std::string normalized;
  // A record that cannot be decoded has no findable index or list entry;
  // removing the code itself is still right.
  const bool decoded = DecodeLinkRecord(code, value, &record).ok();
  if (decoded) batch.Delete(ListKey(record.created, code));
  if (decoded && NormalizeUrl(record.url, &normalized).ok()) {
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

Status LinkStore::Patch(std::string_view code, const LinkPatch& patch,
                        PatchOutcome* outcome, LinkRecord* record) {
  std::string new_normalized;
  if (patch.url) {
    Status s = NormalizeUrl(*patch.url, &new_normalized);
    if (!s.ok()) return s;
  }
  if (patch.ttl_seconds &&
      (*patch.ttl_seconds < 0 || *patch.ttl_seconds > kMaxTtlSeconds)) {
    return Status::InvalidArgument("ttl_seconds out of range");
  }

  bloomkv::MutexLock lock(&mutex_);
  const int64_t now = now_();
  std::string value;
  Status s = db_->Get(ReadOptions(), CodeKey(code), &value);
  if (!s.ok()) return s;
  LinkRecord old;
  s = DecodeLinkRecord(code, value, &old);
  if (!s.ok()) return s;
  if (IsExpired(old.expires_at, now)) {
    *outcome = PatchOutcome::kExpired;
    return Status::OK();
  }
  LinkRecord patched = old;
  if (patch.url) patched.url = *patch.url;
  if (patch.ttl_seconds) {
    patched.expires_at = *patch.ttl_seconds > 0 ? now + *patch.ttl_seconds : 0;
  }

  // The code leaves the old URL's index entry and joins the new one's
  // (which may be the same key), with its new expiry either way. A stored
  // URL that no longer normalizes has no findable entry to leave.
  bloomkv::WriteBatch batch;
  std::string old_normalized, index_value;
  std::vector<IndexEntry> entries;
  const bool old_indexed = NormalizeUrl(old.url, &old_normalized).ok();
  if (!patch.url) new_normalized = old_normalized;
  const std::string new_key = IndexKey(HashOf(new_normalized));
  auto drop_code = [code](std::vector<IndexEntry>* list) {
    std::erase_if(*list,
                  [code](const IndexEntry& e) { return e.code == code; });
  };
  if (old_indexed && patch.url) {
    const std::string old_key = IndexKey(HashOf(old_normalized));
    if (old_key != new_key) {
      s = ReadIndex(old_key, &entries);
      if (!s.ok()) return s;
      drop_code(&entries);
      if (entries.empty()) {
        batch.Delete(old_key);
      } else {
        EncodeIndexEntries(entries, &index_value);
        batch.Put(old_key, index_value);
      }
    }
  }
  if (old_indexed || patch.url) {
    s = ReadIndex(new_key, &entries);
    if (!s.ok()) return s;
    drop_code(&entries);
    entries.push_back(IndexEntry{std::string(code), patched.expires_at});
    EncodeIndexEntries(entries, &index_value);
    batch.Put(new_key, index_value);
  }

  EncodeLinkRecord(patched, &value);
  batch.Put(CodeKey(code), value);
  batch.Put(ListKey(patched.created, code),
            EncodeListEntry(patched.expires_at));
  // The click record repeats the expiry for the compaction filter.
  s = db_->Get(ReadOptions(), ClickKey(code), &value);
  if (s.ok()) {
    ClickRecord clicks;
    if (DecodeClickRecord(code, value, &clicks).ok() &&
        IsSameLink(patched, clicks.link_created, clicks.link_incarnation)) {
      clicks.expires_at = patched.expires_at;
      EncodeClickRecord(clicks, &value);
      batch.Put(ClickKey(code), value);
    }
  } else if (!s.IsNotFound()) {
    return s;
  }
  s = db_->Write(WriteOptions(), &batch);
  if (!s.ok()) return s;
  *outcome = PatchOutcome::kPatched;
  *record = std::move(patched);
  return Status::OK();
}

Status LinkStore::List(std::string_view after, size_t limit,
                       std::vector<ListedLink>* links, std::string* next) {
  links->clear();
  next->clear();
  const int64_t now = now_();
  // Pages are read as of one snapshot, so a link removed while the page is
  // read is either listed whole or not at all.
  const bloomkv::Snapshot* snapshot = db_->GetSnapshot();
  ReadOptions read;
  read.snapshot = snapshot;
  std::unique_ptr<bloomkv::Iterator> it = db_->NewIterator(read);
  std::string start(kListKeyPrefix);
  start.append(after);
  Status s;
  std::string last;  // the last key looked at
  for (it->Seek(start); it->Valid(); it->Next()) {
    const std::string_view key(it->key().data(), it->key().size());
    std::string_view code;
    if (!CodeOfListKey(key, &code)) break;
    if (!after.empty() && key == start) continue;
    if (links->size() == limit) {
      *next = last.substr(kListKeyPrefix.size());
      break;
    }
    last.assign(key);
    int64_t expires_at = 0;
    if (DecodeListEntry(it->value(), &expires_at).ok() &&
        IsExpired(expires_at, now)) {
      continue;
    }
    std::string value;
    s = db_->Get(read, CodeKey(code), &value);
    if (s.IsNotFound()) {
      s = Status::OK();  // a list key that outlived its link: not listed
      continue;
    }
    if (!s.ok()) break;
    ListedLink link;
    link.code.assign(code);
    s = DecodeLinkRecord(code, value, &link.record);
    if (!s.ok()) break;
    if (IsExpired(link.record.expires_at, now)) continue;
    s = Clicks(code, link.record, &link.clicks);
    if (!s.ok()) break;
    links->push_back(std::move(link));
  }
  if (s.ok()) s = it->status();
  it.reset();
  db_->ReleaseSnapshot(snapshot);
  return s;
}

Status LinkStore::Clicks(std::string_view code, const LinkRecord& record,
                         ClickRecord* clicks) {
  *clicks = ClickRecord();
  std::string value;
  Status s = db_->Get(ReadOptions(), ClickKey(code), &value);
  if (s.IsNotFound()) return Status::OK();
  if (!s.ok()) return s;
  ClickRecord stored;
  s = DecodeClickRecord(code, value, &stored);
  if (!s.ok()) return s;
  // Left behind by an earlier link of this code: not this link's clicks.
  if (!IsSameLink(record, stored.link_created, stored.link_incarnation)) {
    return Status::OK();
  }
  const int32_t first_shown = DayOf(now_()) - (kClickDays - 1);
  std::erase_if(stored.days, [first_shown](const DayCount& d) {
    return d.day < first_shown;
  });
  *clicks = std::move(stored);
  return Status::OK();
}

Status LinkStore::FlushClicks() {
  std::vector<ClickDelta> deltas = clicks_.Take();
  if (deltas.empty()) return Status::OK();
  bloomkv::MutexLock lock(&mutex_);
  const int32_t today = DayOf(now_());
  // Click records are read once per interval, by this loop only: keeping
  // their blocks out of the cache leaves it to the redirects' link records.
  ReadOptions read;
  read.fill_cache = false;
  bloomkv::WriteBatch batch;
  std::string value;
  for (const ClickDelta& delta : deltas) {
    Status s = db_->Get(read, CodeKey(delta.code), &value);
    if (s.IsNotFound()) continue;  // removed since it was clicked
    if (!s.ok()) return s;
    LinkRecord link;
    if (!DecodeLinkRecord(delta.code, value, &link).ok() ||
        !IsSameLink(link, delta.link_created, delta.link_incarnation)) {
      continue;  // unreadable, or another link of that code now
    }

    ClickRecord clicks;
    s = db_->Get(read, ClickKey(delta.code), &value);
    if (s.ok()) {
      // A record that cannot be decoded is kept as it is (Clicks reports
      // it); these clicks are dropped rather than written over it.
      if (!DecodeClickRecord(delta.code, value, &clicks).ok()) continue;
      // A record of an earlier link of this code starts over.
      if (!IsSameLink(link, clicks.link_created, clicks.link_incarnation)) {
        clicks = ClickRecord();
      }
    } else if (!s.IsNotFound()) {
      return s;
    }
    clicks.link_created = link.created;
    clicks.link_incarnation = link.incarnation;
    clicks.expires_at = link.expires_at;
    MergeClicks(delta, today, &clicks);
    EncodeClickRecord(clicks, &value);
    batch.Put(ClickKey(delta.code), value);
  }
  if (batch.Count() == 0) return Status::OK();
  return db_->Write(WriteOptions(), &batch);
}

Status LinkStore::Flush() {
  Status s = FlushClicks();
  if (!s.ok()) return s;
  return db_->Flush();
}

Status LinkStore::CompactAll() { return db_->CompactRange(nullptr, nullptr); }

}  // namespace shortlink
