/* The C API: what Go (cgo), Python (ctypes, cffi), Rust and Java bindings
 * build on. It follows LevelDB's and RocksDB's C APIs, so a binding written
 * for them maps over with a change of prefix:
 *
 *  - Every object is an opaque handle made by a bloomkv_*_create or
 *    bloomkv_open function and freed by its bloomkv_*_destroy (or
 *    bloomkv_close) function; nothing is freed implicitly, and a destroy
 *    function accepts NULL.
 *  - A function that can fail takes `char** errptr` last. On failure it
 *    stores a message (one line, e.g. "NotFound: /tmp/db: does not exist")
 *    in *errptr, freeing the message already there, if any; on success it
 *    leaves *errptr alone. So callers set it to NULL, check it after each
 *    call, and release it with bloomkv_free. *errptr must be NULL or a
 *    message from this API.
 *  - Keys and values are byte ranges (pointer and length), never
 *    NUL-terminated strings; a returned value is a malloc'ed copy the caller
 *    frees with bloomkv_free. Paths and property names are NUL-terminated.
 *  - Booleans are unsigned char, 0 or 1.
 *
 * ABI: the handles are opaque and every function takes and returns only
 * pointers, integers, doubles and size_t, so this header is the whole
 * contract; the library keeps it across releases with the same major
 * version (the shared library's SONAME carries the major version). New
 * functions may be added in a minor release; none is removed or changed
 * before the next major version. bloomkv_major_version() and
 * bloomkv_minor_version() say what a program was linked against at run
 * time.
 *
 * Thread-safety: as the C++ API (include/bloomkv/db.h): a bloomkv_t may be
 * used from many threads at once; an iterator, a write batch, an options
 * object or a filter handle by one thread at a time, except that the
 * filters' const queries (might_contain, count) may run concurrently with
 * each other.
 */
#ifndef BLOOMKV_INCLUDE_C_H_
#define BLOOMKV_INCLUDE_C_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bloomkv_t bloomkv_t;
typedef struct bloomkv_options_t bloomkv_options_t;
typedef struct bloomkv_readoptions_t bloomkv_readoptions_t;
typedef struct bloomkv_writeoptions_t bloomkv_writeoptions_t;
typedef struct bloomkv_iterator_t bloomkv_iterator_t;
typedef struct bloomkv_snapshot_t bloomkv_snapshot_t;
typedef struct bloomkv_writebatch_t bloomkv_writebatch_t;
typedef struct bloomkv_bloom_t bloomkv_bloom_t;
typedef struct bloomkv_scalable_bloom_t bloomkv_scalable_bloom_t;
typedef struct bloomkv_cuckoo_t bloomkv_cuckoo_t;
typedef struct bloomkv_static_filter_t bloomkv_static_filter_t;

/* ---- version and memory --------------------------------------------- */

int bloomkv_major_version(void);
int bloomkv_minor_version(void);
/* "MAJOR.MINOR.PATCH" of the linked library; static storage. */
const char* bloomkv_version_string(void);
/* Frees what this API returned: values, property values, messages. */
void bloomkv_free(void* ptr);

/* ---- the database ---------------------------------------------------- */

bloomkv_t* bloomkv_open(const bloomkv_options_t* options, const char* path,
                        char** errptr);
/* Reads a database another process may be writing (see
 * DB::OpenForReadOnly); writes fail. */
bloomkv_t* bloomkv_open_for_read_only(const bloomkv_options_t* options,
                                      const char* path, char** errptr);
/* Closes the database: background work stops, files are closed. Every
 * iterator and snapshot of it must be destroyed or released first. */
void bloomkv_close(bloomkv_t* db);

void bloomkv_put(bloomkv_t* db, const bloomkv_writeoptions_t* options,
                 const char* key, size_t keylen, const char* val,
                 size_t vallen, char** errptr);
void bloomkv_delete(bloomkv_t* db, const bloomkv_writeoptions_t* options,
                    const char* key, size_t keylen, char** errptr);
/* DB::DeleteRange: removes every key in [begin, end). */
void bloomkv_delete_range(bloomkv_t* db, const bloomkv_writeoptions_t* options,
                          const char* begin, size_t beginlen, const char* end,
                          size_t endlen, char** errptr);
void bloomkv_write(bloomkv_t* db, const bloomkv_writeoptions_t* options,
                   bloomkv_writebatch_t* batch, char** errptr);

/* The value of key, malloc'ed (free with bloomkv_free), its length in
 * *vallen; NULL with *vallen = 0 when the key is absent, and NULL with
 * *errptr set on an error. An empty value is a non-NULL pointer with
 * *vallen = 0. */
char* bloomkv_get(bloomkv_t* db, const bloomkv_readoptions_t* options,
                  const char* key, size_t keylen, size_t* vallen,
                  char** errptr);

/* Looks up num_keys keys at once (DB::MultiGet: every key hashed once,
 * the filters of the whole batch probed before any block is read). For
 * each i, values_list[i] is a malloc'ed value (length values_list_sizes[i])
 * or NULL when the key is absent or its lookup failed; errs[i] is NULL or
 * a malloc'ed message for that key. The caller frees each non-NULL entry
 * with bloomkv_free. */
void bloomkv_multi_get(bloomkv_t* db, const bloomkv_readoptions_t* options,
                       size_t num_keys, const char* const* keys_list,
                       const size_t* keys_list_sizes, char** values_list,
                       size_t* values_list_sizes, char** errs);

bloomkv_iterator_t* bloomkv_create_iterator(
    bloomkv_t* db, const bloomkv_readoptions_t* options);

const bloomkv_snapshot_t* bloomkv_create_snapshot(bloomkv_t* db);
void bloomkv_release_snapshot(bloomkv_t* db,
                              const bloomkv_snapshot_t* snapshot);

/* The value of a property (DB::GetProperty: "bloomkv.stats",
 * "bloomkv.levels", "bloomkv.resource-usage", ...), malloc'ed and
 * NUL-terminated; NULL for an unknown property. */
char* bloomkv_property_value(bloomkv_t* db, const char* propname);

/* For each range [start, limit), about how many bytes of segment files hold
 * its keys (DB::GetApproximateSizes; the memtables are not counted). */
void bloomkv_approximate_sizes(bloomkv_t* db, int num_ranges,
                               const char* const* range_start_key,
                               const size_t* range_start_key_len,
                               const char* const* range_limit_key,
                               const size_t* range_limit_key_len,
                               uint64_t* sizes);

/* Compacts the keys in [start, limit]; NULL start (or limit) means from
 * the first (or to the last) key. */
void bloomkv_compact_range(bloomkv_t* db, const char* start_key,
                           size_t start_key_len, const char* limit_key,
                           size_t limit_key_len, char** errptr);
/* Writes the memtable out to a segment and waits for it. */
void bloomkv_flush(bloomkv_t* db, char** errptr);
/* Makes every write acknowledged so far durable. */
void bloomkv_sync_wal(bloomkv_t* db, char** errptr);

/* ---- whole-database operations ---------------------------------------- */

void bloomkv_destroy_db(const bloomkv_options_t* options, const char* path,
                        char** errptr);
/* Rebuilds the manifest of a damaged database (RepairDB); the database must
 * not be open. */
void bloomkv_repair_db(const bloomkv_options_t* options, const char* path,
                       char** errptr);
/* An openable copy of the open database db in dir, which must not exist
 * (its parent must); segments are hard-linked where the file system
 * allows. */
void bloomkv_create_checkpoint(bloomkv_t* db, const char* dir, char** errptr);

/* ---- iterators -------------------------------------------------------- */

void bloomkv_iter_destroy(bloomkv_iterator_t* iter);
unsigned char bloomkv_iter_valid(const bloomkv_iterator_t* iter);
void bloomkv_iter_seek_to_first(bloomkv_iterator_t* iter);
void bloomkv_iter_seek_to_last(bloomkv_iterator_t* iter);
void bloomkv_iter_seek(bloomkv_iterator_t* iter, const char* k, size_t klen);
void bloomkv_iter_seek_for_prev(bloomkv_iterator_t* iter, const char* k,
                                size_t klen);
void bloomkv_iter_next(bloomkv_iterator_t* iter);
void bloomkv_iter_prev(bloomkv_iterator_t* iter);
/* Key and value of the current entry, valid until the iterator moves or is
 * destroyed (not malloc'ed). REQUIRES: bloomkv_iter_valid. */
const char* bloomkv_iter_key(const bloomkv_iterator_t* iter, size_t* klen);
const char* bloomkv_iter_value(const bloomkv_iterator_t* iter, size_t* vlen);
/* Sets *errptr when the iteration stopped on an error (a read or
 * checksum failure) rather than at the end. */
void bloomkv_iter_get_error(const bloomkv_iterator_t* iter, char** errptr);

/* ---- write batches ---------------------------------------------------- */

bloomkv_writebatch_t* bloomkv_writebatch_create(void);
void bloomkv_writebatch_destroy(bloomkv_writebatch_t* batch);
void bloomkv_writebatch_clear(bloomkv_writebatch_t* batch);
int bloomkv_writebatch_count(const bloomkv_writebatch_t* batch);
void bloomkv_writebatch_put(bloomkv_writebatch_t* batch, const char* key,
                            size_t klen, const char* val, size_t vlen);
void bloomkv_writebatch_delete(bloomkv_writebatch_t* batch, const char* key,
                               size_t klen);
void bloomkv_writebatch_delete_range(bloomkv_writebatch_t* batch,
                                     const char* begin, size_t beginlen,
                                     const char* end, size_t endlen);
/* Calls put or deleted for every update in order, with state first. A
 * range deletion, which these two cannot report, is passed over: use
 * bloomkv_writebatch_iterate_ranges for a batch that may hold one. */
void bloomkv_writebatch_iterate(
    const bloomkv_writebatch_t* batch, void* state,
    void (*put)(void* state, const char* k, size_t klen, const char* v,
                size_t vlen),
    void (*deleted)(void* state, const char* k, size_t klen));
/* bloomkv_writebatch_iterate that calls deleted_range for every range
 * deletion too. */
void bloomkv_writebatch_iterate_ranges(
    const bloomkv_writebatch_t* batch, void* state,
    void (*put)(void* state, const char* k, size_t klen, const char* v,
                size_t vlen),
    void (*deleted)(void* state, const char* k, size_t klen),
    void (*deleted_range)(void* state, const char* begin, size_t beginlen,
                          const char* end, size_t endlen));

/* ---- options ----------------------------------------------------------
 * The defaults are those of the C++ structs (include/bloomkv/options.h).
 * Setters take the values the C++ fields take; bloomkv_open rejects an
 * out-of-range one with its reason. */

bloomkv_options_t* bloomkv_options_create(void);
void bloomkv_options_destroy(bloomkv_options_t* options);
void bloomkv_options_set_create_if_missing(bloomkv_options_t* options,
                                           unsigned char v);
void bloomkv_options_set_error_if_exists(bloomkv_options_t* options,
                                         unsigned char v);
void bloomkv_options_set_paranoid_checks(bloomkv_options_t* options,
                                         unsigned char v);
void bloomkv_options_set_write_buffer_size(bloomkv_options_t* options,
                                           size_t bytes);
void bloomkv_options_set_block_size(bloomkv_options_t* options, size_t bytes);
/* 0: no block cache. */
void bloomkv_options_set_block_cache_capacity(bloomkv_options_t* options,
                                              size_t bytes);
/* Options::row_cache_capacity; 0 (the default): no row cache. */
void bloomkv_options_set_row_cache_capacity(bloomkv_options_t* options,
                                            size_t bytes);
/* Options::answer_cache_capacity (default 8 MiB); 0: no answer cache,
   otherwise at least 512. */
void bloomkv_options_set_answer_cache_capacity(bloomkv_options_t* options,
                                               size_t bytes);
/* Options::filter_and_index_memory_limit; 0: no limit. */
void bloomkv_options_set_filter_and_index_memory_limit(
    bloomkv_options_t* options, uint64_t bytes);
/* Options::max_open_files; at least 20, or -1 to keep every segment open. */
void bloomkv_options_set_max_open_files(bloomkv_options_t* options, int n);
void bloomkv_options_set_target_file_size(bloomkv_options_t* options,
                                          uint64_t bytes);
void bloomkv_options_set_max_background_compactions(
    bloomkv_options_t* options, int n);
/* Options::level0_compaction_trigger: level-0 segments that start a
 * compaction of level 0. */
void bloomkv_options_set_level0_compaction_trigger(bloomkv_options_t* options,
                                                   int n);
/* Options::level0_slowdown_writes_trigger: level-0 segments from which
 * writes are slowed down. */
void bloomkv_options_set_level0_slowdown_writes_trigger(
    bloomkv_options_t* options, int n);
/* Options::level0_stop_writes_trigger: level-0 segments at which writes
 * wait for compaction. */
void bloomkv_options_set_level0_stop_writes_trigger(bloomkv_options_t* options,
                                                    int n);
/* Options::read_triggered_compaction; 0: level 0 waits for its trigger
 * however many lookups consult it in vain. */
void bloomkv_options_set_read_triggered_compaction(bloomkv_options_t* options,
                                                   unsigned char v);
/* Options::level_compaction_dynamic_level_bytes; 0: level targets from the
 * top down, level 1's being max_bytes_for_level_base. */
void bloomkv_options_set_level_compaction_dynamic_level_bytes(
    bloomkv_options_t* options, unsigned char v);
/* Options::max_bytes_for_level_base; 0 (the default) sizes it like a full
 * level 0: level0_compaction_trigger x write_buffer_size. */
void bloomkv_options_set_max_bytes_for_level_base(bloomkv_options_t* options,
                                                  uint64_t bytes);
/* Options::max_bytes_for_level_multiplier. */
void bloomkv_options_set_max_bytes_for_level_multiplier(
    bloomkv_options_t* options, int n);
/* 1 (the default): segment files are mapped into memory
 * (EnvOptions::use_mmap_reads of the default Env), and bloomkv installs a
 * process-wide SIGBUS handler with the first mapping (docs/durability.md);
 * 0: they are read with pread(2) through a process-wide Env of its own. */
void bloomkv_options_set_mmap_reads(bloomkv_options_t* options,
                                    unsigned char v);

/* Stored values, never to change: they name Options::compression. */
enum {
  bloomkv_no_compression = 0,
  bloomkv_lz4_compression = 1,
  bloomkv_zstd_compression = 2,
  /* LZ4 value by value against a dictionary per segment (Options.h's
     kLZ4Values). */
  bloomkv_lz4_values_compression = 3
};
/* The compression of every level below level 0. */
void bloomkv_options_set_compression(bloomkv_options_t* options, int type);

/* The bloom filter of every segment at bits_per_key (default 10, about 1%
 * false positives); 0 builds no filters. */
void bloomkv_options_set_bloom_filter(bloomkv_options_t* options,
                                      double bits_per_key);
/* Binary fuse filters with fingerprint_bits (8 or 16) from level on down
 * (Options::deep_filter_policy, deep_filter_level); fingerprint_bits 0
 * puts the bloom filter of bloomkv_options_set_bloom_filter at every level.
 * Without this call the library's default applies: binary fuse 8-bit
 * fingerprints below level 0 for a bloom filter of 10 to 12 bits per key
 * (the default 10 included), the bloom filter everywhere otherwise. */
void bloomkv_options_set_deep_fuse_filter(bloomkv_options_t* options,
                                          int fingerprint_bits, int level);

bloomkv_readoptions_t* bloomkv_readoptions_create(void);
void bloomkv_readoptions_destroy(bloomkv_readoptions_t* options);
void bloomkv_readoptions_set_verify_checksums(bloomkv_readoptions_t* options,
                                              unsigned char v);
void bloomkv_readoptions_set_fill_cache(bloomkv_readoptions_t* options,
                                        unsigned char v);
/* NULL reads the latest state again. */
void bloomkv_readoptions_set_snapshot(bloomkv_readoptions_t* options,
                                      const bloomkv_snapshot_t* snapshot);

bloomkv_writeoptions_t* bloomkv_writeoptions_create(void);
void bloomkv_writeoptions_destroy(bloomkv_writeoptions_t* options);
void bloomkv_writeoptions_set_sync(bloomkv_writeoptions_t* options,
                                   unsigned char v);

/* ---- standalone filters (include/bloomkv/bloom_filter.h and others) ---- */

/* Bloom filter for expected_items keys at fp_rate (BloomFilter::
 * ForCapacity; arguments clamped as there). */
bloomkv_bloom_t* bloomkv_bloom_create(uint64_t expected_items,
                                      double fp_rate);
void bloomkv_bloom_destroy(bloomkv_bloom_t* filter);
void bloomkv_bloom_add(bloomkv_bloom_t* filter, const char* key,
                       size_t keylen);
/* May run concurrently with other concurrent adds and with queries. */
void bloomkv_bloom_add_concurrently(bloomkv_bloom_t* filter, const char* key,
                                    size_t keylen);
unsigned char bloomkv_bloom_might_contain(const bloomkv_bloom_t* filter,
                                          const char* key, size_t keylen);
/* Adds every key of src to dst; both must have the same shape. */
void bloomkv_bloom_merge(bloomkv_bloom_t* dst, const bloomkv_bloom_t* src,
                         char** errptr);
double bloomkv_bloom_approximate_element_count(const bloomkv_bloom_t* filter);
/* The documented encoding (docs/filters.md), malloc'ed. */
char* bloomkv_bloom_serialize(const bloomkv_bloom_t* filter, size_t* len);
bloomkv_bloom_t* bloomkv_bloom_deserialize(const char* data, size_t len,
                                           char** errptr);

/* A bloom filter that grows past capacity by adding sub-filters
 * (ScalableBloomFilter; RedisBloom's BF.RESERVE with EXPANSION, or
 * NONSCALING when non_scaling is 1). NULL with *errptr on bad arguments. */
bloomkv_scalable_bloom_t* bloomkv_scalable_bloom_create(
    uint64_t capacity, double fp_rate, uint32_t expansion,
    unsigned char non_scaling, char** errptr);
void bloomkv_scalable_bloom_destroy(bloomkv_scalable_bloom_t* filter);
/* *added (may be NULL) is 0 when the key was probably present already.
 * A non-scaling filter that is full sets *errptr ("Full: ..."). */
void bloomkv_scalable_bloom_add(bloomkv_scalable_bloom_t* filter,
                                const char* key, size_t keylen,
                                unsigned char* added, char** errptr);
unsigned char bloomkv_scalable_bloom_might_contain(
    const bloomkv_scalable_bloom_t* filter, const char* key, size_t keylen);
char* bloomkv_scalable_bloom_serialize(const bloomkv_scalable_bloom_t* filter,
                                       size_t* len);
bloomkv_scalable_bloom_t* bloomkv_scalable_bloom_deserialize(
    const char* data, size_t len, char** errptr);

/* A cuckoo filter (CuckooFilter) for capacity keys at fp_rate, with
 * deletion. NULL with *errptr on bad arguments. */
bloomkv_cuckoo_t* bloomkv_cuckoo_create(uint64_t capacity, double fp_rate,
                                        char** errptr);
void bloomkv_cuckoo_destroy(bloomkv_cuckoo_t* filter);
/* Fails with "Full: ..." in *errptr when the filter cannot take the key;
 * nothing is lost then. */
void bloomkv_cuckoo_add(bloomkv_cuckoo_t* filter, const char* key,
                        size_t keylen, char** errptr);
void bloomkv_cuckoo_add_if_absent(bloomkv_cuckoo_t* filter, const char* key,
                                  size_t keylen, unsigned char* added,
                                  char** errptr);
/* 1 when one copy of the key's fingerprint was removed. Delete only keys
 * that were added. */
unsigned char bloomkv_cuckoo_delete(bloomkv_cuckoo_t* filter, const char* key,
                                    size_t keylen);
uint64_t bloomkv_cuckoo_count(const bloomkv_cuckoo_t* filter, const char* key,
                              size_t keylen);
unsigned char bloomkv_cuckoo_might_contain(const bloomkv_cuckoo_t* filter,
                                           const char* key, size_t keylen);
char* bloomkv_cuckoo_serialize(const bloomkv_cuckoo_t* filter, size_t* len);
bloomkv_cuckoo_t* bloomkv_cuckoo_deserialize(const char* data, size_t len,
                                             char** errptr);

/* A static filter (binary fuse, StaticFilter) of num_keys keys, built once;
 * fingerprint_bits 8 (0.39% false positives) or 16 (0.0015%). */
bloomkv_static_filter_t* bloomkv_static_filter_build(
    size_t num_keys, const char* const* keys_list,
    const size_t* keys_list_sizes, int fingerprint_bits);
void bloomkv_static_filter_destroy(bloomkv_static_filter_t* filter);
unsigned char bloomkv_static_filter_might_contain(
    const bloomkv_static_filter_t* filter, const char* key, size_t keylen);
char* bloomkv_static_filter_serialize(const bloomkv_static_filter_t* filter,
                                      size_t* len);
bloomkv_static_filter_t* bloomkv_static_filter_deserialize(const char* data,
                                                           size_t len,
                                                           char** errptr);

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif  /* BLOOMKV_INCLUDE_C_H_ */
