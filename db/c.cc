// The C API (include/bloomkv/c.h): thin wrappers over the C++ API. Each
// handle is a struct holding the C++ object; errors become malloc'ed
// messages in *errptr.
// Thread-safety: as the wrapped objects.
#include "bloomkv/c.h"

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "bloomkv/bloom_filter.h"
#include "bloomkv/checkpoint.h"
#include "bloomkv/cuckoo_filter.h"
#include "bloomkv/db.h"
#include "bloomkv/env.h"
#include "bloomkv/filter_policy.h"
#include "bloomkv/iterator.h"
#include "bloomkv/options.h"
#include "bloomkv/repair.h"
#include "bloomkv/scalable_bloom_filter.h"
#include "bloomkv/static_filter.h"
#include "bloomkv/version.h"
#include "bloomkv/write_batch.h"

using bloomkv::BloomFilter;
using bloomkv::CuckooFilter;
using bloomkv::DB;
using bloomkv::Env;
using bloomkv::EnvOptions;
using bloomkv::Iterator;
using bloomkv::Options;
using bloomkv::ReadOptions;
using bloomkv::ScalableBloomFilter;
using bloomkv::Slice;
using bloomkv::Snapshot;
using bloomkv::StaticFilter;
using bloomkv::Status;
using bloomkv::WriteBatch;
using bloomkv::WriteOptions;

extern "C" {

struct bloomkv_t {
  std::unique_ptr<DB> rep;
};
struct bloomkv_options_t {
  Options rep;
  // bloomkv_options_set_deep_fuse_filter(0): filter_policy at every level,
  // whatever it is by the time the database opens.
  bool deep_filter_off = false;
};
struct bloomkv_readoptions_t {
  ReadOptions rep;
};
struct bloomkv_writeoptions_t {
  WriteOptions rep;
};
struct bloomkv_iterator_t {
  std::unique_ptr<Iterator> rep;
};
struct bloomkv_snapshot_t {
  const Snapshot* rep;
};
struct bloomkv_writebatch_t {
  WriteBatch rep;
};
struct bloomkv_bloom_t {
  BloomFilter rep;
};
struct bloomkv_scalable_bloom_t {
  ScalableBloomFilter rep;
};
struct bloomkv_cuckoo_t {
  CuckooFilter rep;
};
struct bloomkv_static_filter_t {
  StaticFilter rep;
};

}  // extern "C"

namespace {

// A malloc'ed copy of s (plus a NUL, so that text can be used as a C
// string); *len gets its length.
char* CopyOut(const std::string& s, size_t* len) {
  char* p = static_cast<char*>(std::malloc(s.size() + 1));
  if (p == nullptr) return nullptr;
  std::memcpy(p, s.data(), s.size());
  p[s.size()] = '\0';
  if (len != nullptr) *len = s.size();
  return p;
}

// Records a failed s in *errptr; returns whether s was a failure.
bool SaveError(char** errptr, const Status& s) {
  if (s.ok()) return false;
  std::free(*errptr);
  *errptr = CopyOut(s.ToString(), nullptr);
  return true;
}

const ReadOptions& ReadOptionsOf(const bloomkv_readoptions_t* options) {
  static const ReadOptions kDefault;
  return options != nullptr ? options->rep : kDefault;
}

const WriteOptions& WriteOptionsOf(const bloomkv_writeoptions_t* options) {
  static const WriteOptions kDefault;
  return options != nullptr ? options->rep : kDefault;
}

Options OptionsOf(const bloomkv_options_t* options) {
  if (options == nullptr) return Options();
  Options o = options->rep;
  if (options->deep_filter_off) o.deep_filter_policy = o.filter_policy;
  return o;
}

bloomkv_t* OpenWith(bool read_only, const bloomkv_options_t* options,
                    const char* path, char** errptr) {
  std::unique_ptr<DB> db;
  const Status s = read_only
                       ? DB::OpenForReadOnly(OptionsOf(options), path, &db)
                       : DB::Open(OptionsOf(options), path, &db);
  if (SaveError(errptr, s)) return nullptr;
  return new bloomkv_t{std::move(db)};
}

template <typename Filter>
char* SerializeFilter(const Filter& filter, size_t* len) {
  std::string encoded;
  filter.Serialize(&encoded);
  return CopyOut(encoded, len);
}

template <typename Handle>
Handle* DeserializeFilter(const char* data, size_t len, char** errptr) {
  auto handle = std::make_unique<Handle>();
  const Status s = decltype(handle->rep)::Deserialize(Slice(data, len),
                                                      &handle->rep);
  if (SaveError(errptr, s)) return nullptr;
  return handle.release();
}

}  // namespace

extern "C" {

int bloomkv_major_version(void) { return BLOOMKV_VERSION_MAJOR; }
int bloomkv_minor_version(void) { return BLOOMKV_VERSION_MINOR; }
const char* bloomkv_version_string(void) { return bloomkv::VersionString(); }
void bloomkv_free(void* ptr) { std::free(ptr); }

// ---- the database ---------------------------------------------------------

bloomkv_t* bloomkv_open(const bloomkv_options_t* options, const char* path,
                        char** errptr) {
  return OpenWith(false, options, path, errptr);
}

bloomkv_t* bloomkv_open_for_read_only(const bloomkv_options_t* options,
                                      const char* path, char** errptr) {
  return OpenWith(true, options, path, errptr);
}

void bloomkv_close(bloomkv_t* db) { delete db; }

void bloomkv_put(bloomkv_t* db, const bloomkv_writeoptions_t* options,
                 const char* key, size_t keylen, const char* val,
                 size_t vallen, char** errptr) {
  SaveError(errptr, db->rep->Put(WriteOptionsOf(options), Slice(key, keylen),
                                 Slice(val, vallen)));
}

void bloomkv_delete(bloomkv_t* db, const bloomkv_writeoptions_t* options,
                    const char* key, size_t keylen, char** errptr) {
  SaveError(errptr,
            db->rep->Delete(WriteOptionsOf(options), Slice(key, keylen)));
}

void bloomkv_delete_range(bloomkv_t* db, const bloomkv_writeoptions_t* options,
                          const char* begin, size_t beginlen, const char* end,
                          size_t endlen, char** errptr) {
  SaveError(errptr, db->rep->DeleteRange(WriteOptionsOf(options),
                                         Slice(begin, beginlen),
                                         Slice(end, endlen)));
}

void bloomkv_write(bloomkv_t* db, const bloomkv_writeoptions_t* options,
                   bloomkv_writebatch_t* batch, char** errptr) {
  SaveError(errptr, db->rep->Write(WriteOptionsOf(options), &batch->rep));
}

char* bloomkv_get(bloomkv_t* db, const bloomkv_readoptions_t* options,
                  const char* key, size_t keylen, size_t* vallen,
                  char** errptr) {
  *vallen = 0;
  std::string value;
  const Status s =
      db->rep->Get(ReadOptionsOf(options), Slice(key, keylen), &value);
  if (s.IsNotFound()) return nullptr;
  if (SaveError(errptr, s)) return nullptr;
  return CopyOut(value, vallen);
}

void bloomkv_multi_get(bloomkv_t* db, const bloomkv_readoptions_t* options,
                       size_t num_keys, const char* const* keys_list,
                       const size_t* keys_list_sizes, char** values_list,
                       size_t* values_list_sizes, char** errs) {
  std::vector<Slice> keys(num_keys);
  for (size_t i = 0; i < num_keys; i++) {
    keys[i] = Slice(keys_list[i], keys_list_sizes[i]);
  }
  std::vector<std::string> values;
  const std::vector<Status> statuses =
      db->rep->MultiGet(ReadOptionsOf(options), keys, &values);
  for (size_t i = 0; i < num_keys; i++) {
    values_list[i] = nullptr;
    values_list_sizes[i] = 0;
    errs[i] = nullptr;
    if (statuses[i].ok()) {
      values_list[i] = CopyOut(values[i], &values_list_sizes[i]);
    } else if (!statuses[i].IsNotFound()) {
      errs[i] = CopyOut(statuses[i].ToString(), nullptr);
    }
  }
}

bloomkv_iterator_t* bloomkv_create_iterator(
    bloomkv_t* db, const bloomkv_readoptions_t* options) {
  return new bloomkv_iterator_t{db->rep->NewIterator(ReadOptionsOf(options))};
}

const bloomkv_snapshot_t* bloomkv_create_snapshot(bloomkv_t* db) {
  return new bloomkv_snapshot_t{db->rep->GetSnapshot()};
}

void bloomkv_release_snapshot(bloomkv_t* db,
                              const bloomkv_snapshot_t* snapshot) {
  if (snapshot == nullptr) return;
  db->rep->ReleaseSnapshot(snapshot->rep);
  delete snapshot;
}

char* bloomkv_property_value(bloomkv_t* db, const char* propname) {
  std::string value;
  if (!db->rep->GetProperty(propname, &value)) return nullptr;
  return CopyOut(value, nullptr);
}

void bloomkv_compact_range(bloomkv_t* db, const char* start_key,
                           size_t start_key_len, const char* limit_key,
                           size_t limit_key_len, char** errptr) {
  const Slice start(start_key != nullptr ? start_key : "", start_key_len);
  const Slice limit(limit_key != nullptr ? limit_key : "", limit_key_len);
  SaveError(errptr,
            db->rep->CompactRange(start_key != nullptr ? &start : nullptr,
                                  limit_key != nullptr ? &limit : nullptr));
}

void bloomkv_approximate_sizes(bloomkv_t* db, int num_ranges,
                               const char* const* range_start_key,
                               const size_t* range_start_key_len,
                               const char* const* range_limit_key,
                               const size_t* range_limit_key_len,
                               uint64_t* sizes) {
  std::vector<bloomkv::Range> ranges(static_cast<size_t>(num_ranges));
  for (int i = 0; i < num_ranges; i++) {
    ranges[i] = bloomkv::Range(Slice(range_start_key[i], range_start_key_len[i]),
                               Slice(range_limit_key[i], range_limit_key_len[i]));
  }
  db->rep->GetApproximateSizes(ranges.data(), num_ranges, sizes);
}

void bloomkv_flush(bloomkv_t* db, char** errptr) {
  SaveError(errptr, db->rep->Flush());
}

void bloomkv_sync_wal(bloomkv_t* db, char** errptr) {
  SaveError(errptr, db->rep->SyncWAL());
}

// ---- whole-database operations ------------------------------------------

void bloomkv_destroy_db(const bloomkv_options_t* options, const char* path,
                        char** errptr) {
  SaveError(errptr, bloomkv::DestroyDB(path, OptionsOf(options)));
}

void bloomkv_repair_db(const bloomkv_options_t* options, const char* path,
                       char** errptr) {
  SaveError(errptr, bloomkv::RepairDB(OptionsOf(options), path));
}

void bloomkv_create_checkpoint(bloomkv_t* db, const char* dir,
                               char** errptr) {
  SaveError(errptr, bloomkv::CreateCheckpoint(db->rep.get(), dir));
}

// ---- iterators -----------------------------------------------------------

void bloomkv_iter_destroy(bloomkv_iterator_t* iter) { delete iter; }
unsigned char bloomkv_iter_valid(const bloomkv_iterator_t* iter) {
  return iter->rep->Valid();
}
void bloomkv_iter_seek_to_first(bloomkv_iterator_t* iter) {
  iter->rep->SeekToFirst();
}
void bloomkv_iter_seek_to_last(bloomkv_iterator_t* iter) {
  iter->rep->SeekToLast();
}
void bloomkv_iter_seek(bloomkv_iterator_t* iter, const char* k, size_t klen) {
  iter->rep->Seek(Slice(k, klen));
}
void bloomkv_iter_seek_for_prev(bloomkv_iterator_t* iter, const char* k,
                                size_t klen) {
  iter->rep->SeekForPrev(Slice(k, klen));
}
void bloomkv_iter_next(bloomkv_iterator_t* iter) { iter->rep->Next(); }
void bloomkv_iter_prev(bloomkv_iterator_t* iter) { iter->rep->Prev(); }
const char* bloomkv_iter_key(const bloomkv_iterator_t* iter, size_t* klen) {
  const Slice k = iter->rep->key();
  *klen = k.size();
  return k.data();
}
const char* bloomkv_iter_value(const bloomkv_iterator_t* iter, size_t* vlen) {
  const Slice v = iter->rep->value();
  *vlen = v.size();
  return v.data();
}
void bloomkv_iter_get_error(const bloomkv_iterator_t* iter, char** errptr) {
  SaveError(errptr, iter->rep->status());
}

// ---- write batches -------------------------------------------------------

bloomkv_writebatch_t* bloomkv_writebatch_create(void) {
  return new bloomkv_writebatch_t;
}
void bloomkv_writebatch_destroy(bloomkv_writebatch_t* batch) { delete batch; }
void bloomkv_writebatch_clear(bloomkv_writebatch_t* batch) {
  batch->rep.Clear();
}
int bloomkv_writebatch_count(const bloomkv_writebatch_t* batch) {
  return static_cast<int>(batch->rep.Count());
}
void bloomkv_writebatch_put(bloomkv_writebatch_t* batch, const char* key,
                            size_t klen, const char* val, size_t vlen) {
  batch->rep.Put(Slice(key, klen), Slice(val, vlen));
}
void bloomkv_writebatch_delete(bloomkv_writebatch_t* batch, const char* key,
                               size_t klen) {
  batch->rep.Delete(Slice(key, klen));
}

void bloomkv_writebatch_delete_range(bloomkv_writebatch_t* batch,
                                     const char* begin, size_t beginlen,
                                     const char* end, size_t endlen) {
  batch->rep.DeleteRange(Slice(begin, beginlen), Slice(end, endlen));
}

void bloomkv_writebatch_iterate_ranges(
    const bloomkv_writebatch_t* batch, void* state,
    void (*put)(void* state, const char* k, size_t klen, const char* v,
                size_t vlen),
    void (*deleted)(void* state, const char* k, size_t klen),
    void (*deleted_range)(void* state, const char* begin, size_t beginlen,
                          const char* end, size_t endlen)) {
  class Forward final : public WriteBatch::Handler {
   public:
    using PutFn = void (*)(void*, const char*, size_t, const char*, size_t);
    using DeleteFn = void (*)(void*, const char*, size_t);
    Forward(void* state, PutFn put, DeleteFn deleted, PutFn deleted_range)
        : state_(state),
          put_(put),
          deleted_(deleted),
          deleted_range_(deleted_range) {}
    void Put(const Slice& key, const Slice& value) override {
      put_(state_, key.data(), key.size(), value.data(), value.size());
    }
    void Delete(const Slice& key) override {
      deleted_(state_, key.data(), key.size());
    }
    void DeleteRange(const Slice& begin, const Slice& end) override {
      if (deleted_range_ != nullptr) {
        deleted_range_(state_, begin.data(), begin.size(), end.data(),
                       end.size());
      }
    }

   private:
    void* const state_;
    const PutFn put_;
    const DeleteFn deleted_;
    const PutFn deleted_range_;  // null: range deletions passed over
  };
  Forward handler(state, put, deleted, deleted_range);
  batch->rep.Iterate(&handler).PermitUncheckedError();
}

void bloomkv_writebatch_iterate(
    const bloomkv_writebatch_t* batch, void* state,
    void (*put)(void* state, const char* k, size_t klen, const char* v,
                size_t vlen),
    void (*deleted)(void* state, const char* k, size_t klen)) {
  bloomkv_writebatch_iterate_ranges(batch, state, put, deleted, nullptr);
}

// ---- options -------------------------------------------------------------

bloomkv_options_t* bloomkv_options_create(void) {
  return new bloomkv_options_t;
}
void bloomkv_options_destroy(bloomkv_options_t* options) { delete options; }
void bloomkv_options_set_create_if_missing(bloomkv_options_t* options,
                                           unsigned char v) {
  options->rep.create_if_missing = v != 0;
}
void bloomkv_options_set_error_if_exists(bloomkv_options_t* options,
                                         unsigned char v) {
  options->rep.error_if_exists = v != 0;
}
void bloomkv_options_set_paranoid_checks(bloomkv_options_t* options,
                                         unsigned char v) {
  options->rep.paranoid_checks = v != 0;
}
void bloomkv_options_set_write_buffer_size(bloomkv_options_t* options,
                                           size_t bytes) {
  options->rep.write_buffer_size = bytes;
}
void bloomkv_options_set_block_size(bloomkv_options_t* options,
                                    size_t bytes) {
  options->rep.block_size = bytes;
}
void bloomkv_options_set_block_cache_capacity(bloomkv_options_t* options,
                                              size_t bytes) {
  options->rep.block_cache_capacity = bytes;
}
void bloomkv_options_set_row_cache_capacity(bloomkv_options_t* options,
                                            size_t bytes) {
  options->rep.row_cache_capacity = bytes;
}
void bloomkv_options_set_answer_cache_capacity(bloomkv_options_t* options,
                                               size_t bytes) {
  options->rep.answer_cache_capacity = bytes;
}
void bloomkv_options_set_filter_and_index_memory_limit(
    bloomkv_options_t* options, uint64_t bytes) {
  options->rep.filter_and_index_memory_limit = bytes;
}
void bloomkv_options_set_max_open_files(bloomkv_options_t* options, int n) {
  options->rep.max_open_files = n;
}
void bloomkv_options_set_target_file_size(bloomkv_options_t* options,
                                          uint64_t bytes) {
  options->rep.target_file_size = bytes;
}
void bloomkv_options_set_max_background_compactions(
    bloomkv_options_t* options, int n) {
  options->rep.max_background_compactions = n;
}
void bloomkv_options_set_level0_compaction_trigger(bloomkv_options_t* options,
                                                   int n) {
  options->rep.level0_compaction_trigger = n;
}
void bloomkv_options_set_level0_slowdown_writes_trigger(
    bloomkv_options_t* options, int n) {
  options->rep.level0_slowdown_writes_trigger = n;
}
void bloomkv_options_set_level0_stop_writes_trigger(bloomkv_options_t* options,
                                                    int n) {
  options->rep.level0_stop_writes_trigger = n;
}
void bloomkv_options_set_read_triggered_compaction(bloomkv_options_t* options,
                                                   unsigned char v) {
  options->rep.read_triggered_compaction = v != 0;
}
void bloomkv_options_set_level_compaction_dynamic_level_bytes(
    bloomkv_options_t* options, unsigned char v) {
  options->rep.level_compaction_dynamic_level_bytes = v != 0;
}
void bloomkv_options_set_max_bytes_for_level_base(bloomkv_options_t* options,
                                                  uint64_t bytes) {
  options->rep.max_bytes_for_level_base = bytes;
}
void bloomkv_options_set_max_bytes_for_level_multiplier(
    bloomkv_options_t* options, int n) {
  options->rep.max_bytes_for_level_multiplier = n;
}
void bloomkv_options_set_mmap_reads(bloomkv_options_t* options,
                                    unsigned char v) {
  // Never deleted, as Env::Default(): a database may outlive its options.
  static Env* const pread_env = [] {
    EnvOptions eo;
    eo.use_mmap_reads = false;
    return bloomkv::NewPosixEnv(eo).release();
  }();
  options->rep.env = v ? Env::Default() : pread_env;
}
void bloomkv_options_set_compression(bloomkv_options_t* options, int type) {
  // An unknown value is passed on as it is, for Open to reject.
  options->rep.compression = static_cast<bloomkv::CompressionType>(type);
}
void bloomkv_options_set_bloom_filter(bloomkv_options_t* options,
                                      double bits_per_key) {
  options->rep.filter_policy = bits_per_key > 0
                                   ? bloomkv::NewBloomFilterPolicy(bits_per_key)
                                   : nullptr;
}
void bloomkv_options_set_deep_fuse_filter(bloomkv_options_t* options,
                                          int fingerprint_bits, int level) {
  options->deep_filter_off = fingerprint_bits <= 0;
  options->rep.deep_filter_policy =
      fingerprint_bits > 0 ? bloomkv::NewBinaryFuseFilterPolicy(fingerprint_bits)
                           : nullptr;
  options->rep.deep_filter_level = level;
}

bloomkv_readoptions_t* bloomkv_readoptions_create(void) {
  return new bloomkv_readoptions_t;
}
void bloomkv_readoptions_destroy(bloomkv_readoptions_t* options) {
  delete options;
}
void bloomkv_readoptions_set_verify_checksums(bloomkv_readoptions_t* options,
                                              unsigned char v) {
  options->rep.verify_checksums = v != 0;
}
void bloomkv_readoptions_set_fill_cache(bloomkv_readoptions_t* options,
                                        unsigned char v) {
  options->rep.fill_cache = v != 0;
}
void bloomkv_readoptions_set_snapshot(bloomkv_readoptions_t* options,
                                      const bloomkv_snapshot_t* snapshot) {
  options->rep.snapshot = snapshot != nullptr ? snapshot->rep : nullptr;
}

bloomkv_writeoptions_t* bloomkv_writeoptions_create(void) {
  return new bloomkv_writeoptions_t;
}
void bloomkv_writeoptions_destroy(bloomkv_writeoptions_t* options) {
  delete options;
}
void bloomkv_writeoptions_set_sync(bloomkv_writeoptions_t* options,
                                   unsigned char v) {
  options->rep.sync = v != 0;
}

// ---- standalone filters --------------------------------------------------

bloomkv_bloom_t* bloomkv_bloom_create(uint64_t expected_items,
                                      double fp_rate) {
  return new bloomkv_bloom_t{BloomFilter::ForCapacity(expected_items, fp_rate)};
}
void bloomkv_bloom_destroy(bloomkv_bloom_t* filter) { delete filter; }
void bloomkv_bloom_add(bloomkv_bloom_t* filter, const char* key,
                       size_t keylen) {
  filter->rep.Add(Slice(key, keylen));
}
void bloomkv_bloom_add_concurrently(bloomkv_bloom_t* filter, const char* key,
                                    size_t keylen) {
  filter->rep.AddConcurrently(Slice(key, keylen));
}
unsigned char bloomkv_bloom_might_contain(const bloomkv_bloom_t* filter,
                                          const char* key, size_t keylen) {
  return filter->rep.MightContain(Slice(key, keylen));
}
void bloomkv_bloom_merge(bloomkv_bloom_t* dst, const bloomkv_bloom_t* src,
                         char** errptr) {
  SaveError(errptr, dst->rep.Merge(src->rep));
}
double bloomkv_bloom_approximate_element_count(const bloomkv_bloom_t* filter) {
  return filter->rep.ApproximateElementCount();
}
char* bloomkv_bloom_serialize(const bloomkv_bloom_t* filter, size_t* len) {
  return SerializeFilter(filter->rep, len);
}
bloomkv_bloom_t* bloomkv_bloom_deserialize(const char* data, size_t len,
                                           char** errptr) {
  return DeserializeFilter<bloomkv_bloom_t>(data, len, errptr);
}

bloomkv_scalable_bloom_t* bloomkv_scalable_bloom_create(
    uint64_t capacity, double fp_rate, uint32_t expansion,
    unsigned char non_scaling, char** errptr) {
  bloomkv::ScalableBloomFilterOptions o;
  o.capacity = capacity;
  o.fp_rate = fp_rate;
  o.expansion = expansion;
  o.non_scaling = non_scaling != 0;
  auto handle = std::make_unique<bloomkv_scalable_bloom_t>();
  if (SaveError(errptr, ScalableBloomFilter::Create(o, &handle->rep))) {
    return nullptr;
  }
  return handle.release();
}
void bloomkv_scalable_bloom_destroy(bloomkv_scalable_bloom_t* filter) {
  delete filter;
}
void bloomkv_scalable_bloom_add(bloomkv_scalable_bloom_t* filter,
                                const char* key, size_t keylen,
                                unsigned char* added, char** errptr) {
  bool was_added = false;
  const Status s = filter->rep.Add(Slice(key, keylen), &was_added);
  if (added != nullptr) *added = s.ok() && was_added;
  SaveError(errptr, s);
}
unsigned char bloomkv_scalable_bloom_might_contain(
    const bloomkv_scalable_bloom_t* filter, const char* key, size_t keylen) {
  return filter->rep.MightContain(Slice(key, keylen));
}
char* bloomkv_scalable_bloom_serialize(const bloomkv_scalable_bloom_t* filter,
                                       size_t* len) {
  return SerializeFilter(filter->rep, len);
}
bloomkv_scalable_bloom_t* bloomkv_scalable_bloom_deserialize(
    const char* data, size_t len, char** errptr) {
  return DeserializeFilter<bloomkv_scalable_bloom_t>(data, len, errptr);
}

bloomkv_cuckoo_t* bloomkv_cuckoo_create(uint64_t capacity, double fp_rate,
                                        char** errptr) {
  bloomkv::CuckooFilterOptions o;
  o.capacity = capacity;
  o.fp_rate = fp_rate;
  auto handle = std::make_unique<bloomkv_cuckoo_t>();
  if (SaveError(errptr, CuckooFilter::Create(o, &handle->rep))) return nullptr;
  return handle.release();
}
void bloomkv_cuckoo_destroy(bloomkv_cuckoo_t* filter) { delete filter; }
void bloomkv_cuckoo_add(bloomkv_cuckoo_t* filter, const char* key,
                        size_t keylen, char** errptr) {
  SaveError(errptr, filter->rep.Add(Slice(key, keylen)));
}
void bloomkv_cuckoo_add_if_absent(bloomkv_cuckoo_t* filter, const char* key,
                                  size_t keylen, unsigned char* added,
                                  char** errptr) {
  bool was_added = false;
  const Status s = filter->rep.AddIfAbsent(Slice(key, keylen), &was_added);
  if (added != nullptr) *added = s.ok() && was_added;
  SaveError(errptr, s);
}
unsigned char bloomkv_cuckoo_delete(bloomkv_cuckoo_t* filter, const char* key,
                                    size_t keylen) {
  return filter->rep.Delete(Slice(key, keylen));
}
uint64_t bloomkv_cuckoo_count(const bloomkv_cuckoo_t* filter, const char* key,
                              size_t keylen) {
  return filter->rep.Count(Slice(key, keylen));
}
unsigned char bloomkv_cuckoo_might_contain(const bloomkv_cuckoo_t* filter,
                                           const char* key, size_t keylen) {
  return filter->rep.MightContain(Slice(key, keylen));
}
char* bloomkv_cuckoo_serialize(const bloomkv_cuckoo_t* filter, size_t* len) {
  return SerializeFilter(filter->rep, len);
}
bloomkv_cuckoo_t* bloomkv_cuckoo_deserialize(const char* data, size_t len,
                                             char** errptr) {
  return DeserializeFilter<bloomkv_cuckoo_t>(data, len, errptr);
}

bloomkv_static_filter_t* bloomkv_static_filter_build(
    size_t num_keys, const char* const* keys_list,
    const size_t* keys_list_sizes, int fingerprint_bits) {
  std::vector<Slice> keys(num_keys);
  for (size_t i = 0; i < num_keys; i++) {
    keys[i] = Slice(keys_list[i], keys_list_sizes[i]);
  }
  return new bloomkv_static_filter_t{
      StaticFilter::Build(keys.data(), keys.size(), fingerprint_bits)};
}
void bloomkv_static_filter_destroy(bloomkv_static_filter_t* filter) {
  delete filter;
}
unsigned char bloomkv_static_filter_might_contain(
    const bloomkv_static_filter_t* filter, const char* key, size_t keylen) {
  return filter->rep.MightContain(Slice(key, keylen));
}
char* bloomkv_static_filter_serialize(const bloomkv_static_filter_t* filter,
                                      size_t* len) {
  return SerializeFilter(filter->rep, len);
}
bloomkv_static_filter_t* bloomkv_static_filter_deserialize(const char* data,
                                                           size_t len,
                                                           char** errptr) {
  return DeserializeFilter<bloomkv_static_filter_t>(data, len, errptr);
}

}  // extern "C"
