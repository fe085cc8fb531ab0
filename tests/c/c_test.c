/* The C API (include/bloomkv/c.h), from C: every group of functions, error
 * reporting through errptr, and memory ownership. Compiled as C11 so that
 * the header is checked to be plain C. Exits 0 when every check passes;
 * otherwise prints each failed check with its line and exits 1. */
#define _POSIX_C_SOURCE 200809L

#include "bloomkv/c.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int failures = 0;

#define CHECK(cond)                                                  \
  do {                                                               \
    if (!(cond)) {                                                   \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, \
              #cond);                                                \
      failures++;                                                    \
    }                                                                \
  } while (0)

/* No error: reports and frees the message if there was one. */
#define CHECK_NO_ERROR(err)                                             \
  do {                                                                  \
    if ((err) != NULL) {                                                \
      fprintf(stderr, "%s:%d: unexpected error: %s\n", __FILE__, __LINE__, \
              (err));                                                   \
      failures++;                                                       \
      bloomkv_free(err);                                                \
      (err) = NULL;                                                     \
    }                                                                   \
  } while (0)

static int Equal(const char* p, size_t n, const char* text) {
  return p != NULL && n == strlen(text) && memcmp(p, text, n) == 0;
}

/* Runs rm -r on a scratch path (fixed prefix, so nothing else is touched). */
static void RemoveTree(const char* path) {
  char command[4200];
  snprintf(command, sizeof(command), "rm -rf '%s'", path);
  if (system(command) != 0) fprintf(stderr, "could not remove %s\n", path);
}

struct BatchCount {
  int puts;
  int deletes;
  int range_deletes;
};
static void CountPut(void* state, const char* k, size_t klen, const char* v,
                     size_t vlen) {
  (void)k;
  (void)klen;
  (void)v;
  (void)vlen;
  ((struct BatchCount*)state)->puts++;
}
static void CountDelete(void* state, const char* k, size_t klen) {
  (void)k;
  (void)klen;
  ((struct BatchCount*)state)->deletes++;
}
static void CountDeleteRange(void* state, const char* b, size_t blen,
                             const char* e, size_t elen) {
  (void)b;
  (void)blen;
  (void)e;
  (void)elen;
  ((struct BatchCount*)state)->range_deletes++;
}

static void TestDatabase(const char* dir) {
  char path[4096], copy[4096];
  snprintf(path, sizeof(path), "%s/db", dir);
  snprintf(copy, sizeof(copy), "%s/checkpoint", dir);
  char* err = NULL;

  bloomkv_options_t* options = bloomkv_options_create();
  /* Opening a missing database without create_if_missing fails with a
   * message and no handle. */
  bloomkv_t* db = bloomkv_open(options, path, &err);
  CHECK(db == NULL);
  CHECK(err != NULL && strstr(err, "does not exist") != NULL);
  /* A second failure replaces the first message (no leak under ASan). */
  db = bloomkv_open(options, path, &err);
  CHECK(db == NULL && err != NULL);
  bloomkv_free(err);
  err = NULL;

  bloomkv_options_set_create_if_missing(options, 1);
  bloomkv_options_set_bloom_filter(options, 10);
  bloomkv_options_set_deep_fuse_filter(options, 8, 1);
  bloomkv_options_set_compression(options, bloomkv_lz4_compression);
  bloomkv_options_set_write_buffer_size(options, 64 << 10);
  db = bloomkv_open(options, path, &err);
  CHECK_NO_ERROR(err);
  CHECK(db != NULL);
  if (db == NULL) {
    bloomkv_options_destroy(options);
    return;
  }

  bloomkv_writeoptions_t* wo = bloomkv_writeoptions_create();
  bloomkv_readoptions_t* ro = bloomkv_readoptions_create();
  /* Keys and values are bytes: an embedded NUL survives. */
  const char binary_key[] = {'b', '\0', 'k'};
  const char binary_value[] = {'\0', 'v', '\0'};
  bloomkv_put(db, wo, "aZ3kQ9x", 7, "https://example.com/a", 21, &err);
  CHECK_NO_ERROR(err);
  bloomkv_put(db, wo, binary_key, sizeof(binary_key), binary_value,
              sizeof(binary_value), &err);
  CHECK_NO_ERROR(err);
  bloomkv_put(db, wo, "empty", 5, "", 0, &err);
  CHECK_NO_ERROR(err);

  size_t len = 99;
  char* value = bloomkv_get(db, ro, "aZ3kQ9x", 7, &len, &err);
  CHECK_NO_ERROR(err);
  CHECK(Equal(value, len, "https://example.com/a"));
  bloomkv_free(value);
  value = bloomkv_get(db, ro, binary_key, sizeof(binary_key), &len, &err);
  CHECK(value != NULL && len == sizeof(binary_value) &&
        memcmp(value, binary_value, len) == 0);
  bloomkv_free(value);
  value = bloomkv_get(db, ro, "empty", 5, &len, &err);
  CHECK(value != NULL && len == 0); /* present but empty */
  bloomkv_free(value);
  value = bloomkv_get(db, ro, "never-issued", 12, &len, &err);
  CHECK_NO_ERROR(err);
  CHECK(value == NULL && len == 0); /* absent: no error */

  /* An empty key is rejected with a reason. */
  bloomkv_put(db, wo, "", 0, "x", 1, &err);
  CHECK(err != NULL && strstr(err, "empty key") != NULL);
  bloomkv_free(err);
  err = NULL;

  /* A batch applies atomically; iterate reports its updates in order. */
  bloomkv_writebatch_t* batch = bloomkv_writebatch_create();
  bloomkv_writebatch_put(batch, "k1", 2, "v1", 2);
  bloomkv_writebatch_put(batch, "k2", 2, "v2", 2);
  bloomkv_writebatch_delete(batch, "aZ3kQ9x", 7);
  CHECK(bloomkv_writebatch_count(batch) == 3);
  struct BatchCount counted = {0, 0, 0};
  bloomkv_writebatch_iterate(batch, &counted, CountPut, CountDelete);
  CHECK(counted.puts == 2 && counted.deletes == 1);
  bloomkv_write(db, wo, batch, &err);
  CHECK_NO_ERROR(err);
  bloomkv_writebatch_clear(batch);
  CHECK(bloomkv_writebatch_count(batch) == 0);
  bloomkv_writebatch_destroy(batch);
  value = bloomkv_get(db, ro, "aZ3kQ9x", 7, &len, &err);
  CHECK(value == NULL);

  /* A snapshot keeps seeing what it saw. */
  const bloomkv_snapshot_t* snapshot = bloomkv_create_snapshot(db);
  bloomkv_delete(db, wo, "k1", 2, &err);
  CHECK_NO_ERROR(err);
  bloomkv_readoptions_set_snapshot(ro, snapshot);
  value = bloomkv_get(db, ro, "k1", 2, &len, &err);
  CHECK(Equal(value, len, "v1"));
  bloomkv_free(value);
  bloomkv_readoptions_set_snapshot(ro, NULL);
  value = bloomkv_get(db, ro, "k1", 2, &len, &err);
  CHECK(value == NULL);
  bloomkv_release_snapshot(db, snapshot);

  /* A range deletion, alone and in a batch; bad bounds are refused. */
  bloomkv_put(db, wo, "r1", 2, "x", 1, &err);
  bloomkv_put(db, wo, "r5", 2, "x", 1, &err);
  bloomkv_put(db, wo, "r9", 2, "x", 1, &err);
  CHECK_NO_ERROR(err);
  bloomkv_delete_range(db, wo, "r1", 2, "r5", 2, &err);
  CHECK_NO_ERROR(err);
  value = bloomkv_get(db, ro, "r1", 2, &len, &err);
  CHECK(value == NULL);
  value = bloomkv_get(db, ro, "r5", 2, &len, &err);
  CHECK(Equal(value, len, "x")); /* the end is not deleted */
  bloomkv_free(value);
  bloomkv_delete_range(db, wo, "r9", 2, "r1", 2, &err);
  CHECK(err != NULL && strstr(err, "after its end") != NULL);
  bloomkv_free(err);
  err = NULL;
  batch = bloomkv_writebatch_create();
  bloomkv_writebatch_delete_range(batch, "r5", 2, "s", 1);
  bloomkv_writebatch_put(batch, "r9", 2, "y", 1);
  struct BatchCount ranged = {0, 0, 0};
  bloomkv_writebatch_iterate_ranges(batch, &ranged, CountPut, CountDelete,
                                    CountDeleteRange);
  CHECK(ranged.puts == 1 && ranged.range_deletes == 1);
  bloomkv_write(db, wo, batch, &err);
  CHECK_NO_ERROR(err);
  bloomkv_writebatch_destroy(batch);
  value = bloomkv_get(db, ro, "r5", 2, &len, &err);
  CHECK(value == NULL);
  value = bloomkv_get(db, ro, "r9", 2, &len, &err);
  CHECK(Equal(value, len, "y")); /* written after the range in the batch */
  bloomkv_free(value);
  bloomkv_delete_range(db, wo, "r", 1, "s", 1, &err);
  CHECK_NO_ERROR(err);

  /* Many keys, flushed and compacted, then read by iterator and batch. */
  bloomkv_writeoptions_set_sync(wo, 1);
  char key[32], val[32];
  for (int i = 0; i < 2000; i++) {
    snprintf(key, sizeof(key), "key%05d", i);
    snprintf(val, sizeof(val), "value%d", i);
    bloomkv_put(db, wo, key, strlen(key), val, strlen(val), &err);
    if (err != NULL) break;
    if (i == 0) bloomkv_writeoptions_set_sync(wo, 0);
  }
  CHECK_NO_ERROR(err);
  bloomkv_flush(db, &err);
  CHECK_NO_ERROR(err);
  bloomkv_compact_range(db, NULL, 0, NULL, 0, &err);
  CHECK_NO_ERROR(err);
  bloomkv_sync_wal(db, &err);
  CHECK_NO_ERROR(err);

  bloomkv_iterator_t* it = bloomkv_create_iterator(db, ro);
  bloomkv_iter_seek(it, "key01000", 8);
  CHECK(bloomkv_iter_valid(it));
  size_t klen = 0, vlen = 0;
  const char* k = bloomkv_iter_key(it, &klen);
  const char* v = bloomkv_iter_value(it, &vlen);
  CHECK(Equal(k, klen, "key01000") && Equal(v, vlen, "value1000"));
  bloomkv_iter_next(it);
  k = bloomkv_iter_key(it, &klen);
  CHECK(bloomkv_iter_valid(it) && Equal(k, klen, "key01001"));
  bloomkv_iter_prev(it);
  bloomkv_iter_prev(it);
  k = bloomkv_iter_key(it, &klen);
  CHECK(bloomkv_iter_valid(it) && Equal(k, klen, "key00999"));
  int entries = 0;
  for (bloomkv_iter_seek_to_first(it); bloomkv_iter_valid(it);
       bloomkv_iter_next(it)) {
    entries++;
  }
  CHECK(entries == 3 + 2000); /* b\0k, empty, k2 and the 2000 keys */
  bloomkv_iter_seek_to_last(it);
  k = bloomkv_iter_key(it, &klen);
  CHECK(bloomkv_iter_valid(it) && Equal(k, klen, "key01999"));
  bloomkv_iter_seek_for_prev(it, "key01500x", 9);
  k = bloomkv_iter_key(it, &klen);
  CHECK(bloomkv_iter_valid(it) && Equal(k, klen, "key01500"));
  bloomkv_iter_get_error(it, &err);
  CHECK_NO_ERROR(err);
  bloomkv_iter_destroy(it);

  const char* keys[3] = {"key00007", "no-such-key", "k2"};
  size_t key_sizes[3] = {8, 11, 2};
  char* values[3];
  size_t value_sizes[3];
  char* errs[3];
  bloomkv_multi_get(db, ro, 3, keys, key_sizes, values, value_sizes, errs);
  CHECK(Equal(values[0], value_sizes[0], "value7"));
  CHECK(values[1] == NULL && errs[1] == NULL);
  CHECK(Equal(values[2], value_sizes[2], "v2"));
  for (int i = 0; i < 3; i++) {
    CHECK(errs[i] == NULL);
    bloomkv_free(values[i]);
    bloomkv_free(errs[i]);
  }

  /* The 2,000 keys are in segments now: their range has bytes, a range
   * past them none. */
  const char* starts[2] = {"key", "zz"};
  const size_t start_sizes[2] = {3, 2};
  const char* limits[2] = {"key99999", "zzz"};
  const size_t limit_sizes[2] = {8, 3};
  uint64_t sizes[2] = {0, 99};
  bloomkv_approximate_sizes(db, 2, starts, start_sizes, limits, limit_sizes,
                            sizes);
  CHECK(sizes[0] > 4000 && sizes[1] == 0);

  char* levels = bloomkv_property_value(db, "bloomkv.levels");
  CHECK(levels != NULL && strstr(levels, "level") != NULL);
  bloomkv_free(levels);
  CHECK(bloomkv_property_value(db, "bloomkv.no-such-property") == NULL);

  bloomkv_create_checkpoint(db, copy, &err);
  CHECK_NO_ERROR(err);
  /* The checkpoint directory exists now: a second one fails. */
  bloomkv_create_checkpoint(db, copy, &err);
  CHECK(err != NULL);
  bloomkv_free(err);
  err = NULL;

  /* The database is locked while open. */
  bloomkv_t* second = bloomkv_open(options, path, &err);
  CHECK(second == NULL && err != NULL && strstr(err, "in use") != NULL);
  bloomkv_free(err);
  err = NULL;
  bloomkv_close(db);

  /* The checkpoint opens read-only with the same data. */
  bloomkv_t* ckpt = bloomkv_open_for_read_only(options, copy, &err);
  CHECK_NO_ERROR(err);
  if (ckpt != NULL) {
    value = bloomkv_get(ckpt, ro, "key01234", 8, &len, &err);
    CHECK(Equal(value, len, "value1234"));
    bloomkv_free(value);
    bloomkv_put(ckpt, wo, "x", 1, "y", 1, &err);
    CHECK(err != NULL); /* read-only */
    bloomkv_free(err);
    err = NULL;
    bloomkv_close(ckpt);
  }

  bloomkv_repair_db(options, path, &err);
  CHECK_NO_ERROR(err);
  db = bloomkv_open(options, path, &err);
  CHECK_NO_ERROR(err);
  if (db != NULL) {
    value = bloomkv_get(db, ro, "key00042", 8, &len, &err);
    CHECK(Equal(value, len, "value42"));
    bloomkv_free(value);
    bloomkv_close(db);
  }
  bloomkv_destroy_db(options, path, &err);
  CHECK_NO_ERROR(err);
  bloomkv_options_set_create_if_missing(options, 0);
  db = bloomkv_open(options, path, &err);
  CHECK(db == NULL && err != NULL); /* nothing left to open */
  bloomkv_free(err);
  err = NULL;

  bloomkv_readoptions_destroy(ro);
  bloomkv_writeoptions_destroy(wo);
  bloomkv_options_destroy(options);
  /* Destroying NULL is allowed. */
  bloomkv_options_destroy(NULL);
  bloomkv_iter_destroy(NULL);
  bloomkv_writebatch_destroy(NULL);
}

static void TestFilters(void) {
  char* err = NULL;
  char key[32];

  bloomkv_bloom_t* bloom = bloomkv_bloom_create(10000, 0.01);
  bloomkv_bloom_t* other = bloomkv_bloom_create(10000, 0.01);
  for (int i = 0; i < 5000; i++) {
    snprintf(key, sizeof(key), "in%d", i);
    bloomkv_bloom_add(i % 2 == 0 ? bloom : other, key, strlen(key));
  }
  bloomkv_bloom_add_concurrently(bloom, "extra", 5);
  bloomkv_bloom_merge(bloom, other, &err);
  CHECK_NO_ERROR(err);
  int missing = 0, false_positives = 0;
  for (int i = 0; i < 5000; i++) {
    snprintf(key, sizeof(key), "in%d", i);
    missing += !bloomkv_bloom_might_contain(bloom, key, strlen(key));
    snprintf(key, sizeof(key), "out%d", i);
    false_positives += bloomkv_bloom_might_contain(bloom, key, strlen(key));
  }
  CHECK(missing == 0);
  CHECK(false_positives < 5000 / 20); /* about 1%; 5% is far off */
  const double estimate = bloomkv_bloom_approximate_element_count(bloom);
  CHECK(estimate > 4500 && estimate < 5500);
  size_t len = 0;
  char* encoded = bloomkv_bloom_serialize(bloom, &len);
  CHECK(encoded != NULL && len > 0);
  bloomkv_bloom_t* decoded = bloomkv_bloom_deserialize(encoded, len, &err);
  CHECK_NO_ERROR(err);
  CHECK(decoded != NULL && bloomkv_bloom_might_contain(decoded, "in7", 3));
  encoded[len / 2] ^= 0x5a; /* damage: rejected by its checksum */
  CHECK(bloomkv_bloom_deserialize(encoded, len, &err) == NULL);
  CHECK(err != NULL);
  bloomkv_free(err);
  err = NULL;
  bloomkv_free(encoded);
  /* Filters of different shapes do not merge. */
  bloomkv_bloom_t* small = bloomkv_bloom_create(10, 0.01);
  bloomkv_bloom_merge(bloom, small, &err);
  CHECK(err != NULL);
  bloomkv_free(err);
  err = NULL;
  bloomkv_bloom_destroy(small);
  bloomkv_bloom_destroy(decoded);
  bloomkv_bloom_destroy(other);
  bloomkv_bloom_destroy(bloom);

  /* Scalable: grows past its capacity; non-scaling: full. */
  bloomkv_scalable_bloom_t* sbf =
      bloomkv_scalable_bloom_create(100, 0.01, 2, 0, &err);
  CHECK_NO_ERROR(err);
  unsigned char added = 0;
  for (int i = 0; i < 1000 && sbf != NULL; i++) {
    snprintf(key, sizeof(key), "s%d", i);
    bloomkv_scalable_bloom_add(sbf, key, strlen(key), &added, &err);
  }
  CHECK_NO_ERROR(err);
  if (sbf != NULL) {
    CHECK(bloomkv_scalable_bloom_might_contain(sbf, "s999", 4));
    bloomkv_scalable_bloom_add(sbf, "s5", 2, &added, &err);
    CHECK_NO_ERROR(err);
    CHECK(added == 0); /* already in */
    char* sbf_encoded = bloomkv_scalable_bloom_serialize(sbf, &len);
    bloomkv_scalable_bloom_t* sbf_decoded =
        bloomkv_scalable_bloom_deserialize(sbf_encoded, len, &err);
    CHECK_NO_ERROR(err);
    CHECK(sbf_decoded != NULL &&
          bloomkv_scalable_bloom_might_contain(sbf_decoded, "s123", 4));
    bloomkv_scalable_bloom_destroy(sbf_decoded);
    bloomkv_free(sbf_encoded);
  }
  bloomkv_scalable_bloom_destroy(sbf);
  bloomkv_scalable_bloom_t* fixed =
      bloomkv_scalable_bloom_create(10, 0.01, 2, 1, &err);
  CHECK_NO_ERROR(err);
  /* The first 10 keys go in; then, at the latest by the 10th new key
   * after them (a new key taken for present adds nothing), it is full. */
  int full_errors = 0;
  for (int i = 0; i < 20 && fixed != NULL; i++) {
    snprintf(key, sizeof(key), "f%d", i);
    bloomkv_scalable_bloom_add(fixed, key, strlen(key), NULL, &err);
    if (err != NULL) {
      CHECK(i >= 10);
      full_errors += strstr(err, "Full") != NULL;
      bloomkv_free(err);
      err = NULL;
    }
  }
  CHECK(full_errors > 0);
  bloomkv_scalable_bloom_destroy(fixed);
  CHECK(bloomkv_scalable_bloom_create(0, 0.01, 2, 0, &err) == NULL);
  CHECK(err != NULL); /* capacity 0 is rejected */
  bloomkv_free(err);
  err = NULL;

  /* Cuckoo: add, count, delete. */
  bloomkv_cuckoo_t* cuckoo = bloomkv_cuckoo_create(1000, 0.01, &err);
  CHECK_NO_ERROR(err);
  if (cuckoo != NULL) {
    bloomkv_cuckoo_add(cuckoo, "c1", 2, &err);
    bloomkv_cuckoo_add(cuckoo, "c1", 2, &err);
    CHECK_NO_ERROR(err);
    CHECK(bloomkv_cuckoo_count(cuckoo, "c1", 2) == 2);
    bloomkv_cuckoo_add_if_absent(cuckoo, "c1", 2, &added, &err);
    CHECK_NO_ERROR(err);
    CHECK(added == 0);
    CHECK(bloomkv_cuckoo_delete(cuckoo, "c1", 2));
    CHECK(bloomkv_cuckoo_count(cuckoo, "c1", 2) == 1);
    CHECK(bloomkv_cuckoo_might_contain(cuckoo, "c1", 2));
    char* cuckoo_encoded = bloomkv_cuckoo_serialize(cuckoo, &len);
    bloomkv_cuckoo_t* cuckoo_decoded =
        bloomkv_cuckoo_deserialize(cuckoo_encoded, len, &err);
    CHECK_NO_ERROR(err);
    CHECK(cuckoo_decoded != NULL &&
          bloomkv_cuckoo_count(cuckoo_decoded, "c1", 2) == 1);
    bloomkv_cuckoo_destroy(cuckoo_decoded);
    bloomkv_free(cuckoo_encoded);
  }
  bloomkv_cuckoo_destroy(cuckoo);

  /* Static (binary fuse): every key built in is found. */
  const char* keys[4] = {"alpha", "beta", "gamma", "delta"};
  size_t sizes[4] = {5, 4, 5, 5};
  bloomkv_static_filter_t* fuse = bloomkv_static_filter_build(4, keys, sizes, 8);
  for (int i = 0; i < 4; i++) {
    CHECK(bloomkv_static_filter_might_contain(fuse, keys[i], sizes[i]));
  }
  char* fuse_encoded = bloomkv_static_filter_serialize(fuse, &len);
  bloomkv_static_filter_t* fuse_decoded =
      bloomkv_static_filter_deserialize(fuse_encoded, len, &err);
  CHECK_NO_ERROR(err);
  CHECK(fuse_decoded != NULL &&
        bloomkv_static_filter_might_contain(fuse_decoded, "beta", 4));
  CHECK(bloomkv_static_filter_deserialize(fuse_encoded, len / 2, &err) ==
        NULL);
  CHECK(err != NULL); /* truncated */
  bloomkv_free(err);
  bloomkv_free(fuse_encoded);
  bloomkv_static_filter_destroy(fuse_decoded);
  bloomkv_static_filter_destroy(fuse);
}

/* A database over its filter_and_index_memory_limit (one byte: every
 * segment's index and filter stay in the file) answers as any other, and
 * says so in bloomkv.resource-usage; deep_fuse_filter(0) keeps the bloom
 * filter at every level. */
static void TestMemoryLimit(const char* parent) {
  char path[4200];
  snprintf(path, sizeof(path), "%s/limited", parent);
  char* err = NULL;
  bloomkv_options_t* options = bloomkv_options_create();
  bloomkv_options_set_create_if_missing(options, 1);
  bloomkv_options_set_filter_and_index_memory_limit(options, 1);
  bloomkv_options_set_deep_fuse_filter(options, 0, 1);
  bloomkv_t* db = bloomkv_open(options, path, &err);
  CHECK_NO_ERROR(err);
  CHECK(db != NULL);
  if (db == NULL) {
    bloomkv_options_destroy(options);
    return;
  }
  bloomkv_writeoptions_t* wo = bloomkv_writeoptions_create();
  char key[32], value[64];
  for (int i = 0; i < 500; i++) {
    snprintf(key, sizeof(key), "code%05d", i);
    snprintf(value, sizeof(value), "https://example.com/%d", i);
    bloomkv_put(db, wo, key, strlen(key), value, strlen(value), &err);
    CHECK_NO_ERROR(err);
  }
  bloomkv_flush(db, &err);
  CHECK_NO_ERROR(err);
  bloomkv_compact_range(db, NULL, 0, NULL, 0, &err);
  CHECK_NO_ERROR(err);
  char* usage = bloomkv_property_value(db, "bloomkv.resource-usage");
  CHECK(usage != NULL);
  if (usage != NULL) {
    CHECK(strstr(usage, "filter_and_index_memory_limit: 1\n") != NULL);
    CHECK(strstr(usage, "filter_bytes: 0\n") != NULL);
    CHECK(strstr(usage, "paged_filters: 0\n") == NULL);
    bloomkv_free(usage);
  }
  char* levels = bloomkv_property_value(db, "bloomkv.levels");
  CHECK(levels != NULL && strstr(levels, "BinaryFuse") == NULL &&
        strstr(levels, "Bloom") != NULL);
  bloomkv_free(levels);
  bloomkv_readoptions_t* ro = bloomkv_readoptions_create();
  for (int i = 0; i < 500; i += 7) {
    snprintf(key, sizeof(key), "code%05d", i);
    snprintf(value, sizeof(value), "https://example.com/%d", i);
    size_t n = 0;
    char* got = bloomkv_get(db, ro, key, strlen(key), &n, &err);
    CHECK_NO_ERROR(err);
    CHECK(Equal(got, n, value));
    bloomkv_free(got);
    snprintf(key, sizeof(key), "code%05dx", i);
    got = bloomkv_get(db, ro, key, strlen(key), &n, &err);
    CHECK_NO_ERROR(err);
    CHECK(got == NULL);
  }
  bloomkv_readoptions_destroy(ro);
  bloomkv_writeoptions_destroy(wo);
  bloomkv_close(db);
  bloomkv_options_destroy(options);
}

/* Whether this process maps a file whose name ends with suffix
 * (/proc/self/maps). */
static int MapsFileEndingWith(const char* suffix) {
  FILE* f = fopen("/proc/self/maps", "r");
  if (f == NULL) return -1;
  char line[4608];
  int found = 0;
  const size_t n = strlen(suffix);
  while (fgets(line, sizeof(line), f) != NULL) {
    size_t len = strlen(line);
    while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == ' ')) len--;
    if (len >= n && memcmp(line + len - n, suffix, n) == 0) found = 1;
  }
  fclose(f);
  return found;
}

/* Segment files are mapped by default; mmap_reads(0) reads them with
 * pread, and both answer alike. */
static void TestMmapReads(const char* parent) {
  for (int mapped = 0; mapped <= 1; mapped++) {
    char path[4200];
    snprintf(path, sizeof(path), "%s/mmap%d", parent, mapped);
    char* err = NULL;
    bloomkv_options_t* options = bloomkv_options_create();
    bloomkv_options_set_create_if_missing(options, 1);
    bloomkv_options_set_block_cache_capacity(options, 0);
    if (!mapped) bloomkv_options_set_mmap_reads(options, 0);
    bloomkv_t* db = bloomkv_open(options, path, &err);
    CHECK_NO_ERROR(err);
    CHECK(db != NULL);
    if (db == NULL) {
      bloomkv_options_destroy(options);
      continue;
    }
    bloomkv_writeoptions_t* wo = bloomkv_writeoptions_create();
    bloomkv_put(db, wo, "code1", 5, "https://example.com/1", 21, &err);
    CHECK_NO_ERROR(err);
    bloomkv_flush(db, &err);
    CHECK_NO_ERROR(err);
    bloomkv_readoptions_t* ro = bloomkv_readoptions_create();
    size_t n = 0;
    char* got = bloomkv_get(db, ro, "code1", 5, &n, &err);
    CHECK_NO_ERROR(err);
    CHECK(Equal(got, n, "https://example.com/1"));
    bloomkv_free(got);
    CHECK(MapsFileEndingWith(".seg") == mapped);
    bloomkv_readoptions_destroy(ro);
    bloomkv_writeoptions_destroy(wo);
    bloomkv_close(db);
    bloomkv_options_destroy(options);
  }
}

/* A numeric property, or -1 when it is unknown. */
static long long PropertyNumber(bloomkv_t* db, const char* name) {
  char* text = bloomkv_property_value(db, name);
  if (text == NULL) return -1;
  const long long n = strtoll(text, NULL, 10);
  bloomkv_free(text);
  return n;
}

/* Waits (at most about 30 s) until no flush or compaction is queued or
 * running. */
static void WaitForBackgroundWork(bloomkv_t* db) {
  const struct timespec tick = {0, 10 * 1000 * 1000};
  for (int i = 0; i < 3000; i++) {
    if (PropertyNumber(db, "bloomkv.compaction-pending") == 0) return;
    nanosleep(&tick, NULL);
  }
  fprintf(stderr, "%s:%d: background work still pending after 30 s\n", __FILE__,
          __LINE__);
  failures++;
}

/* The target column of level `level` in bloomkv.levels, or 0 if missing. */
static unsigned long long LevelTarget(bloomkv_t* db, int level) {
  char* levels = bloomkv_property_value(db, "bloomkv.levels");
  if (levels == NULL) return 0;
  char prefix[16];
  snprintf(prefix, sizeof(prefix), "\nL%d ", level);
  const char* line = strstr(levels, prefix);
  unsigned long long target = 0;
  if (line == NULL || sscanf(line + 1, "%*s %*s %*s %*s %llu", &target) != 1) {
    target = 0;
  }
  bloomkv_free(levels);
  return target;
}

/* bloomkv_open fails with a message containing `reason`, and opens
 * nothing. */
static void CheckOpenRejects(const bloomkv_options_t* options, const char* path,
                             const char* reason) {
  char* err = NULL;
  bloomkv_t* db = bloomkv_open(options, path, &err);
  CHECK(db == NULL);
  CHECK(err != NULL && strstr(err, reason) != NULL);
  if (db != NULL) bloomkv_close(db);
  bloomkv_free(err);
}

/* The compaction-shape setters reach the database: level 0 keeps as many
 * segments as level0_compaction_trigger allows, lookups that consult it in
 * vain included once read_triggered_compaction is off; the level targets
 * follow the other three; and bloomkv_open rejects out-of-order triggers
 * and out-of-range level sizes with their reason. */
static void TestCompactionShape(const char* parent) {
  char path[4200];
  snprintf(path, sizeof(path), "%s/shape", parent);
  char* err = NULL;
  bloomkv_options_t* options = bloomkv_options_create();
  bloomkv_options_set_create_if_missing(options, 1);
  bloomkv_options_set_level0_compaction_trigger(options, 8);
  bloomkv_options_set_read_triggered_compaction(options, 0);
  bloomkv_options_set_level_compaction_dynamic_level_bytes(options, 0);
  bloomkv_options_set_max_bytes_for_level_base(options, 1 << 20);
  bloomkv_options_set_max_bytes_for_level_multiplier(options, 4);
  bloomkv_t* db = bloomkv_open(options, path, &err);
  CHECK_NO_ERROR(err);
  CHECK(db != NULL);
  if (db != NULL) {
    bloomkv_writeoptions_t* wo = bloomkv_writeoptions_create();
    bloomkv_readoptions_t* ro = bloomkv_readoptions_create();
    char key[32];
    /* Six flushes of interleaved keys: six level-0 segments over one key
     * range, more than the default trigger (4) lets stay. */
    for (int flush = 0; flush < 6; flush++) {
      for (int i = flush; i < 600; i += 6) {
        snprintf(key, sizeof(key), "code%05d", i);
        bloomkv_put(db, wo, key, strlen(key), "https://example.com/", 20, &err);
        CHECK_NO_ERROR(err);
      }
      bloomkv_flush(db, &err);
      CHECK_NO_ERROR(err);
    }
    /* 2^17 lookups of absent keys inside that range, each consulting every
     * level-0 segment in vain: with read_triggered_compaction on, the
     * check every 65,536 lookups would compact level 0. */
    int found = 0;
    for (int i = 0; i < (1 << 17) && err == NULL; i++) {
      snprintf(key, sizeof(key), "code%05dx", i % 600);
      size_t n = 0;
      char* got = bloomkv_get(db, ro, key, strlen(key), &n, &err);
      found += got != NULL;
      bloomkv_free(got);
    }
    CHECK_NO_ERROR(err);
    CHECK(found == 0);
    WaitForBackgroundWork(db);
    CHECK(PropertyNumber(db, "bloomkv.num-files-at-level0") == 6);
    /* Top-down targets: level 1 at the base, each level 4 times the one
     * above. */
    CHECK(LevelTarget(db, 1) == 1u << 20);
    CHECK(LevelTarget(db, 2) == 4u << 20);
    bloomkv_readoptions_destroy(ro);
    bloomkv_writeoptions_destroy(wo);
    bloomkv_close(db);
  }
  bloomkv_options_destroy(options);

  /* Each invalid value alone, on fresh options. */
  snprintf(path, sizeof(path), "%s/shape-invalid", parent);
  const char* const kTriggers = "level-0 triggers must satisfy";
  options = bloomkv_options_create();
  bloomkv_options_set_create_if_missing(options, 1);
  bloomkv_options_set_level0_compaction_trigger(options, 8);
  bloomkv_options_set_level0_slowdown_writes_trigger(options, 6);
  CheckOpenRejects(options, path, kTriggers); /* slowdown below trigger */
  bloomkv_options_destroy(options);
  options = bloomkv_options_create();
  bloomkv_options_set_create_if_missing(options, 1);
  bloomkv_options_set_level0_stop_writes_trigger(options, 10);
  CheckOpenRejects(options, path, kTriggers); /* stop below slowdown (20) */
  bloomkv_options_destroy(options);
  options = bloomkv_options_create();
  bloomkv_options_set_create_if_missing(options, 1);
  bloomkv_options_set_max_bytes_for_level_base(options, 1000);
  CheckOpenRejects(options, path, "max_bytes_for_level_base must be");
  bloomkv_options_destroy(options);
  options = bloomkv_options_create();
  bloomkv_options_set_create_if_missing(options, 1);
  bloomkv_options_set_max_bytes_for_level_multiplier(options, 1);
  CheckOpenRejects(options, path, "max_bytes_for_level_multiplier must be");
  bloomkv_options_destroy(options);
}

/* The answer cache's setter reaches the database: its slots show in
 * bloomkv.resource-usage, reads through it return what was written, and a
 * capacity under two slots is rejected with its reason. */
static void TestAnswerCache(const char* parent) {
  char path[4200];
  snprintf(path, sizeof(path), "%s/answers", parent);
  char* err = NULL;
  bloomkv_options_t* options = bloomkv_options_create();
  bloomkv_options_set_create_if_missing(options, 1);
  bloomkv_options_set_answer_cache_capacity(options, 64 << 10);
  bloomkv_t* db = bloomkv_open(options, path, &err);
  CHECK_NO_ERROR(err);
  CHECK(db != NULL);
  if (db != NULL) {
    char* usage = bloomkv_property_value(db, "bloomkv.resource-usage");
    CHECK(usage != NULL && strstr(usage, "answer_cache_bytes: 65536\n"));
    bloomkv_free(usage);
    bloomkv_writeoptions_t* wo = bloomkv_writeoptions_create();
    bloomkv_readoptions_t* ro = bloomkv_readoptions_create();
    bloomkv_put(db, wo, "aZ3kQ9x", 7, "https://example.com/a", 21, &err);
    CHECK_NO_ERROR(err);
    bloomkv_flush(db, &err);
    CHECK_NO_ERROR(err);
    for (int read = 0; read < 3; read++) {
      size_t n = 0;
      char* got = bloomkv_get(db, ro, "aZ3kQ9x", 7, &n, &err);
      CHECK_NO_ERROR(err);
      CHECK(got != NULL && n == 21 &&
            memcmp(got, "https://example.com/a", 21) == 0);
      bloomkv_free(got);
    }
    bloomkv_readoptions_destroy(ro);
    bloomkv_writeoptions_destroy(wo);
    bloomkv_close(db);
  }
  bloomkv_options_destroy(options);
  options = bloomkv_options_create();
  bloomkv_options_set_create_if_missing(options, 1);
  bloomkv_options_set_answer_cache_capacity(options, 100);
  snprintf(path, sizeof(path), "%s/answers-invalid", parent);
  CheckOpenRejects(options, path, "answer_cache_capacity must be");
  bloomkv_options_destroy(options);
}

int main(void) {
  CHECK(bloomkv_major_version() >= 0 && bloomkv_minor_version() >= 0);
  char expected[32];
  snprintf(expected, sizeof(expected), "%d.%d.", bloomkv_major_version(),
           bloomkv_minor_version());
  CHECK(strncmp(bloomkv_version_string(), expected, strlen(expected)) == 0);

  char dir[] = "/tmp/bloomkv-c-test-XXXXXX";
  if (mkdtemp(dir) == NULL) {
    perror("mkdtemp");
    return 1;
  }
  TestDatabase(dir);
  TestMemoryLimit(dir);
  TestMmapReads(dir);
  TestCompactionShape(dir);
  TestAnswerCache(dir);
  TestFilters();
  RemoveTree(dir);
  if (failures > 0) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("C API: all checks passed\n");
  return 0;
}
