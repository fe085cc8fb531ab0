"""bloomkv from Python: the database and the standalone filters.

A thin layer over the C API (include/bloomkv/c.h), loaded with cffi in ABI
mode: no compiler is needed to install or import it, only the shared
library libbloomkv_py.so that CMake builds beside the package (found next
to this file once installed, or through the BLOOMKV_LIBRARY environment
variable).

Keys and values are bytes (str is encoded as UTF-8); every failure raises
bloomkv.Error (or a subclass named after the C++ Status: NotFoundError,
CorruptionError, InvalidArgumentError, IOError_, BusyError, FullError).

    import bloomkv
    with bloomkv.DB("/tmp/links", create_if_missing=True) as db:
        db.put(b"aZ3kQ9x", b"https://example.com/")
        db.get(b"aZ3kQ9x")           # b"https://example.com/"
        db.get(b"never-issued")      # None
        with db.write_batch() as batch:
            batch.put(b"k1", b"v1")
            batch.delete(b"aZ3kQ9x")
        for key, value in db.items(start=b"k"):
            ...

    f = bloomkv.BloomFilter(1_000_000, 0.01)
    f.add("link:1")
    "link:1" in f                    # True
"""

import os

from cffi import FFI

__all__ = [
    "DB", "WriteBatch", "Snapshot", "BloomFilter", "ScalableBloomFilter",
    "CuckooFilter", "StaticFilter", "Error", "NotFoundError",
    "CorruptionError", "InvalidArgumentError", "IOError_", "BusyError",
    "FullError", "NotSupportedError", "destroy_db", "repair_db",
    "version",
]

_ffi = FFI()
# The declarations of include/bloomkv/c.h (tests/test_bloomkv.py checks
# that every function of the header is here, with the same name).
_ffi.cdef("""
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

int bloomkv_major_version(void);
int bloomkv_minor_version(void);
const char* bloomkv_version_string(void);
void bloomkv_free(void* ptr);

bloomkv_t* bloomkv_open(const bloomkv_options_t* options, const char* path,
                        char** errptr);
bloomkv_t* bloomkv_open_for_read_only(const bloomkv_options_t* options,
                                      const char* path, char** errptr);
void bloomkv_close(bloomkv_t* db);
void bloomkv_put(bloomkv_t* db, const bloomkv_writeoptions_t* options,
                 const char* key, size_t keylen, const char* val,
                 size_t vallen, char** errptr);
void bloomkv_delete(bloomkv_t* db, const bloomkv_writeoptions_t* options,
                    const char* key, size_t keylen, char** errptr);
void bloomkv_delete_range(bloomkv_t* db, const bloomkv_writeoptions_t* options,
                          const char* begin, size_t beginlen, const char* end,
                          size_t endlen, char** errptr);
void bloomkv_write(bloomkv_t* db, const bloomkv_writeoptions_t* options,
                   bloomkv_writebatch_t* batch, char** errptr);
char* bloomkv_get(bloomkv_t* db, const bloomkv_readoptions_t* options,
                  const char* key, size_t keylen, size_t* vallen,
                  char** errptr);
void bloomkv_multi_get(bloomkv_t* db, const bloomkv_readoptions_t* options,
                       size_t num_keys, const char* const* keys_list,
                       const size_t* keys_list_sizes, char** values_list,
                       size_t* values_list_sizes, char** errs);
bloomkv_iterator_t* bloomkv_create_iterator(
    bloomkv_t* db, const bloomkv_readoptions_t* options);
const bloomkv_snapshot_t* bloomkv_create_snapshot(bloomkv_t* db);
void bloomkv_release_snapshot(bloomkv_t* db,
                              const bloomkv_snapshot_t* snapshot);
char* bloomkv_property_value(bloomkv_t* db, const char* propname);
void bloomkv_compact_range(bloomkv_t* db, const char* start_key,
                           size_t start_key_len, const char* limit_key,
                           size_t limit_key_len, char** errptr);
void bloomkv_approximate_sizes(bloomkv_t* db, int num_ranges,
                               const char* const* range_start_key,
                               const size_t* range_start_key_len,
                               const char* const* range_limit_key,
                               const size_t* range_limit_key_len,
                               uint64_t* sizes);
void bloomkv_flush(bloomkv_t* db, char** errptr);
void bloomkv_sync_wal(bloomkv_t* db, char** errptr);
void bloomkv_destroy_db(const bloomkv_options_t* options, const char* path,
                        char** errptr);
void bloomkv_repair_db(const bloomkv_options_t* options, const char* path,
                       char** errptr);
void bloomkv_create_checkpoint(bloomkv_t* db, const char* dir, char** errptr);

void bloomkv_iter_destroy(bloomkv_iterator_t* iter);
unsigned char bloomkv_iter_valid(const bloomkv_iterator_t* iter);
void bloomkv_iter_seek_to_first(bloomkv_iterator_t* iter);
void bloomkv_iter_seek_to_last(bloomkv_iterator_t* iter);
void bloomkv_iter_seek(bloomkv_iterator_t* iter, const char* k, size_t klen);
void bloomkv_iter_seek_for_prev(bloomkv_iterator_t* iter, const char* k,
                                size_t klen);
void bloomkv_iter_next(bloomkv_iterator_t* iter);
void bloomkv_iter_prev(bloomkv_iterator_t* iter);
const char* bloomkv_iter_key(const bloomkv_iterator_t* iter, size_t* klen);
const char* bloomkv_iter_value(const bloomkv_iterator_t* iter, size_t* vlen);
void bloomkv_iter_get_error(const bloomkv_iterator_t* iter, char** errptr);

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
void bloomkv_writebatch_iterate(
    const bloomkv_writebatch_t* batch, void* state,
    void (*put)(void* state, const char* k, size_t klen, const char* v,
                size_t vlen),
    void (*deleted)(void* state, const char* k, size_t klen));
void bloomkv_writebatch_iterate_ranges(
    const bloomkv_writebatch_t* batch, void* state,
    void (*put)(void* state, const char* k, size_t klen, const char* v,
                size_t vlen),
    void (*deleted)(void* state, const char* k, size_t klen),
    void (*deleted_range)(void* state, const char* begin, size_t beginlen,
                          const char* end, size_t endlen));

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
void bloomkv_options_set_block_cache_capacity(bloomkv_options_t* options,
                                              size_t bytes);
void bloomkv_options_set_row_cache_capacity(bloomkv_options_t* options,
                                            size_t bytes);
void bloomkv_options_set_answer_cache_capacity(bloomkv_options_t* options,
                                               size_t bytes);
void bloomkv_options_set_filter_and_index_memory_limit(
    bloomkv_options_t* options, uint64_t bytes);
void bloomkv_options_set_max_open_files(bloomkv_options_t* options, int n);
void bloomkv_options_set_target_file_size(bloomkv_options_t* options,
                                          uint64_t bytes);
void bloomkv_options_set_mmap_reads(bloomkv_options_t* options,
                                    unsigned char v);
void bloomkv_options_set_max_background_compactions(
    bloomkv_options_t* options, int n);
void bloomkv_options_set_level0_compaction_trigger(bloomkv_options_t* options,
                                                   int n);
void bloomkv_options_set_level0_slowdown_writes_trigger(
    bloomkv_options_t* options, int n);
void bloomkv_options_set_level0_stop_writes_trigger(bloomkv_options_t* options,
                                                    int n);
void bloomkv_options_set_read_triggered_compaction(bloomkv_options_t* options,
                                                   unsigned char v);
void bloomkv_options_set_level_compaction_dynamic_level_bytes(
    bloomkv_options_t* options, unsigned char v);
void bloomkv_options_set_max_bytes_for_level_base(bloomkv_options_t* options,
                                                  uint64_t bytes);
void bloomkv_options_set_max_bytes_for_level_multiplier(
    bloomkv_options_t* options, int n);
void bloomkv_options_set_compression(bloomkv_options_t* options, int type);
void bloomkv_options_set_bloom_filter(bloomkv_options_t* options,
                                      double bits_per_key);
void bloomkv_options_set_deep_fuse_filter(bloomkv_options_t* options,
                                          int fingerprint_bits, int level);
bloomkv_readoptions_t* bloomkv_readoptions_create(void);
void bloomkv_readoptions_destroy(bloomkv_readoptions_t* options);
void bloomkv_readoptions_set_verify_checksums(bloomkv_readoptions_t* options,
                                              unsigned char v);
void bloomkv_readoptions_set_fill_cache(bloomkv_readoptions_t* options,
                                        unsigned char v);
void bloomkv_readoptions_set_snapshot(bloomkv_readoptions_t* options,
                                      const bloomkv_snapshot_t* snapshot);
bloomkv_writeoptions_t* bloomkv_writeoptions_create(void);
void bloomkv_writeoptions_destroy(bloomkv_writeoptions_t* options);
void bloomkv_writeoptions_set_sync(bloomkv_writeoptions_t* options,
                                   unsigned char v);

bloomkv_bloom_t* bloomkv_bloom_create(uint64_t expected_items,
                                      double fp_rate);
void bloomkv_bloom_destroy(bloomkv_bloom_t* filter);
void bloomkv_bloom_add(bloomkv_bloom_t* filter, const char* key,
                       size_t keylen);
void bloomkv_bloom_add_concurrently(bloomkv_bloom_t* filter, const char* key,
                                    size_t keylen);
unsigned char bloomkv_bloom_might_contain(const bloomkv_bloom_t* filter,
                                          const char* key, size_t keylen);
void bloomkv_bloom_merge(bloomkv_bloom_t* dst, const bloomkv_bloom_t* src,
                         char** errptr);
double bloomkv_bloom_approximate_element_count(const bloomkv_bloom_t* filter);
char* bloomkv_bloom_serialize(const bloomkv_bloom_t* filter, size_t* len);
bloomkv_bloom_t* bloomkv_bloom_deserialize(const char* data, size_t len,
                                           char** errptr);
bloomkv_scalable_bloom_t* bloomkv_scalable_bloom_create(
    uint64_t capacity, double fp_rate, uint32_t expansion,
    unsigned char non_scaling, char** errptr);
void bloomkv_scalable_bloom_destroy(bloomkv_scalable_bloom_t* filter);
void bloomkv_scalable_bloom_add(bloomkv_scalable_bloom_t* filter,
                                const char* key, size_t keylen,
                                unsigned char* added, char** errptr);
unsigned char bloomkv_scalable_bloom_might_contain(
    const bloomkv_scalable_bloom_t* filter, const char* key, size_t keylen);
char* bloomkv_scalable_bloom_serialize(const bloomkv_scalable_bloom_t* filter,
                                       size_t* len);
bloomkv_scalable_bloom_t* bloomkv_scalable_bloom_deserialize(
    const char* data, size_t len, char** errptr);
bloomkv_cuckoo_t* bloomkv_cuckoo_create(uint64_t capacity, double fp_rate,
                                        char** errptr);
void bloomkv_cuckoo_destroy(bloomkv_cuckoo_t* filter);
void bloomkv_cuckoo_add(bloomkv_cuckoo_t* filter, const char* key,
                        size_t keylen, char** errptr);
void bloomkv_cuckoo_add_if_absent(bloomkv_cuckoo_t* filter, const char* key,
                                  size_t keylen, unsigned char* added,
                                  char** errptr);
unsigned char bloomkv_cuckoo_delete(bloomkv_cuckoo_t* filter, const char* key,
                                    size_t keylen);
uint64_t bloomkv_cuckoo_count(const bloomkv_cuckoo_t* filter, const char* key,
                              size_t keylen);
unsigned char bloomkv_cuckoo_might_contain(const bloomkv_cuckoo_t* filter,
                                           const char* key, size_t keylen);
char* bloomkv_cuckoo_serialize(const bloomkv_cuckoo_t* filter, size_t* len);
bloomkv_cuckoo_t* bloomkv_cuckoo_deserialize(const char* data, size_t len,
                                             char** errptr);
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
""")


def _find_library():
    explicit = os.environ.get("BLOOMKV_LIBRARY")
    if explicit:
        return explicit
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "libbloomkv_py.so")
    if os.path.exists(here):
        return here
    raise ImportError(
        "bloomkv: libbloomkv_py.so not found next to the package; install "
        "it with `cmake --install <build dir>` or set BLOOMKV_LIBRARY")


_lib = _ffi.dlopen(_find_library())


# ---- errors ----------------------------------------------------------------

class Error(Exception):
    """A bloomkv Status that is not OK; str() is its message."""


class NotFoundError(Error):
    pass


class CorruptionError(Error):
    pass


class InvalidArgumentError(Error, ValueError):
    pass


class NotSupportedError(Error):
    pass


class IOError_(Error, OSError):
    pass


class BusyError(IOError_):
    """The database is in use by another process (its LOCK is held)."""


class FullError(Error):
    """A filter with a fixed capacity cannot take another key."""


# Status::ToString()'s prefixes (util/status.cc).
_PREFIXES = [
    ("NotFound: ", NotFoundError),
    ("Corruption: ", CorruptionError),
    ("Invalid argument: ", InvalidArgumentError),
    ("Not supported: ", NotSupportedError),
    ("Full: ", FullError),
    ("IO error: ", IOError_),
]


def _error_from(message):
    for prefix, cls in _PREFIXES:
        if message.startswith(prefix):
            if cls is IOError_ and "in use" in message:
                return BusyError(message)
            return cls(message)
    return Error(message)


class _ErrPtr:
    """A char* for errptr; raise_if_set() turns a message into an Error."""

    __slots__ = ("ptr",)

    def __init__(self):
        self.ptr = _ffi.new("char**")

    def raise_if_set(self):
        if self.ptr[0] != _ffi.NULL:
            message = _ffi.string(self.ptr[0]).decode("utf-8", "replace")
            _lib.bloomkv_free(self.ptr[0])
            self.ptr[0] = _ffi.NULL
            raise _error_from(message)


def _bytes(b, what="key"):
    if isinstance(b, bytes):
        return b
    if isinstance(b, str):
        return b.encode("utf-8")
    if isinstance(b, (bytearray, memoryview)):
        return bytes(b)
    raise TypeError(f"{what} must be bytes or str, not {type(b).__name__}")


def _take(ptr, length):
    """bytes from a malloc'ed buffer of the C API, which is then freed."""
    if ptr == _ffi.NULL:
        return None
    try:
        return bytes(_ffi.buffer(ptr, length))
    finally:
        _lib.bloomkv_free(ptr)


def version():
    """The linked library's version, "MAJOR.MINOR.PATCH"."""
    return _ffi.string(_lib.bloomkv_version_string()).decode()


# ---- options ---------------------------------------------------------------

_OPTION_SETTERS = {
    "create_if_missing": ("bloomkv_options_set_create_if_missing", bool),
    "error_if_exists": ("bloomkv_options_set_error_if_exists", bool),
    "paranoid_checks": ("bloomkv_options_set_paranoid_checks", bool),
    "write_buffer_size": ("bloomkv_options_set_write_buffer_size", int),
    "block_size": ("bloomkv_options_set_block_size", int),
    "block_cache_capacity": ("bloomkv_options_set_block_cache_capacity", int),
    "row_cache_capacity": ("bloomkv_options_set_row_cache_capacity", int),
    "answer_cache_capacity":
        ("bloomkv_options_set_answer_cache_capacity", int),
    "filter_and_index_memory_limit":
        ("bloomkv_options_set_filter_and_index_memory_limit", int),
    "max_open_files": ("bloomkv_options_set_max_open_files", int),
    "target_file_size": ("bloomkv_options_set_target_file_size", int),
    "max_background_compactions":
        ("bloomkv_options_set_max_background_compactions", int),
    "level0_compaction_trigger":
        ("bloomkv_options_set_level0_compaction_trigger", int),
    "level0_slowdown_writes_trigger":
        ("bloomkv_options_set_level0_slowdown_writes_trigger", int),
    "level0_stop_writes_trigger":
        ("bloomkv_options_set_level0_stop_writes_trigger", int),
    "read_triggered_compaction":
        ("bloomkv_options_set_read_triggered_compaction", bool),
    "level_compaction_dynamic_level_bytes":
        ("bloomkv_options_set_level_compaction_dynamic_level_bytes", bool),
    "max_bytes_for_level_base":
        ("bloomkv_options_set_max_bytes_for_level_base", int),
    "max_bytes_for_level_multiplier":
        ("bloomkv_options_set_max_bytes_for_level_multiplier", int),
    "bloom_bits_per_key": ("bloomkv_options_set_bloom_filter", float),
    "mmap_reads": ("bloomkv_options_set_mmap_reads", bool),
}
_COMPRESSION = {"none": 0, "lz4": 1, "zstd": 2, "lz4-values": 3}


def _make_options(kwargs):
    """A bloomkv_options_t* (freed with its Python object) from keywords:
    the Options fields of the same names, plus compression ("none", "lz4",
    "zstd", "lz4-values")
    and deep_fuse_filter=(fingerprint_bits, level)."""
    opts = _ffi.gc(_lib.bloomkv_options_create(), _lib.bloomkv_options_destroy)
    for name, value in kwargs.items():
        if name in _OPTION_SETTERS:
            fn, kind = _OPTION_SETTERS[name]
            getattr(_lib, fn)(opts, kind(value))
        elif name == "compression":
            if value not in _COMPRESSION:
                raise InvalidArgumentError(
                    f"compression must be one of {sorted(_COMPRESSION)}")
            _lib.bloomkv_options_set_compression(opts, _COMPRESSION[value])
        elif name == "deep_fuse_filter":
            bits, level = value if value else (0, 1)
            _lib.bloomkv_options_set_deep_fuse_filter(opts, int(bits),
                                                      int(level))
        else:
            raise TypeError(f"unknown option {name!r}")
    return opts


def destroy_db(path, **options):
    """Deletes the database at path (bloomkv::DestroyDB)."""
    err = _ErrPtr()
    _lib.bloomkv_destroy_db(_make_options(options), os.fsencode(path), err.ptr)
    err.raise_if_set()


def repair_db(path, **options):
    """Rebuilds a damaged database's manifest (bloomkv::RepairDB)."""
    err = _ErrPtr()
    _lib.bloomkv_repair_db(_make_options(options), os.fsencode(path), err.ptr)
    err.raise_if_set()


# ---- the database ----------------------------------------------------------

class Snapshot:
    """A consistent view of the database; pass as snapshot= to reads.
    Release it with release() or a with block."""

    def __init__(self, db):
        self._db = db
        self._ptr = _lib.bloomkv_create_snapshot(db._handle())
        db._snapshots.add(self)

    def release(self):
        if self._ptr is not None:
            _lib.bloomkv_release_snapshot(self._db._handle(), self._ptr)
            self._ptr = None
            self._db._snapshots.discard(self)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()


class WriteBatch:
    """Updates applied atomically by DB.write (or at the end of a
    `with db.write_batch()` block, unless it raises)."""

    def __init__(self, db=None, sync=False):
        self._ptr = _ffi.gc(_lib.bloomkv_writebatch_create(),
                            _lib.bloomkv_writebatch_destroy)
        self._db = db
        self._sync = sync

    def put(self, key, value):
        k, v = _bytes(key), _bytes(value, "value")
        _lib.bloomkv_writebatch_put(self._ptr, k, len(k), v, len(v))

    def delete(self, key):
        k = _bytes(key)
        _lib.bloomkv_writebatch_delete(self._ptr, k, len(k))

    def delete_range(self, begin, end):
        """Removes every key in [begin, end) when the batch is written."""
        b, e = _bytes(begin, "begin"), _bytes(end, "end")
        _lib.bloomkv_writebatch_delete_range(self._ptr, b, len(b), e, len(e))

    def clear(self):
        _lib.bloomkv_writebatch_clear(self._ptr)

    def __len__(self):
        return _lib.bloomkv_writebatch_count(self._ptr)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None and self._db is not None:
            self._db.write(self, sync=self._sync)


class DB:
    """A bloomkv database: bloomkv.DB(path, create_if_missing=True, ...).

    Keyword options are the C++ Options fields of the same names
    (include/bloomkv/options.h), plus compression ("none", "lz4", "zstd",
    "lz4-values") and deep_fuse_filter=(fingerprint_bits, level).
    read_only=True opens a
    database another process may be writing. Close it with close() or a
    with block; close() also ends the iterators and releases the snapshots
    still open, and any use of them or of the database after it raises
    Error."""

    def __init__(self, path, read_only=False, **options):
        self._db = None
        self._iterators = set()  # bloomkv_iterator_t* of unfinished items()
        self._snapshots = set()
        self._opts = _make_options(options)
        self._read = _ffi.gc(_lib.bloomkv_readoptions_create(),
                             _lib.bloomkv_readoptions_destroy)
        self._write = _ffi.gc(_lib.bloomkv_writeoptions_create(),
                              _lib.bloomkv_writeoptions_destroy)
        self._write_sync = _ffi.gc(_lib.bloomkv_writeoptions_create(),
                                   _lib.bloomkv_writeoptions_destroy)
        _lib.bloomkv_writeoptions_set_sync(self._write_sync, 1)
        err = _ErrPtr()
        opener = (_lib.bloomkv_open_for_read_only if read_only
                  else _lib.bloomkv_open)
        self._db = opener(self._opts, os.fsencode(path), err.ptr)
        err.raise_if_set()
        self.path = path

    # -- lifetime --
    def close(self):
        if self._db is None:
            return
        # The C API needs every iterator and snapshot gone first.
        for it in self._iterators:
            _lib.bloomkv_iter_destroy(it)
        self._iterators.clear()
        for snap in list(self._snapshots):
            snap.release()
        _lib.bloomkv_close(self._db)
        self._db = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        if getattr(self, "_db", None) is not None:
            self.close()

    def _handle(self):
        if self._db is None:
            raise Error("the database is closed")
        return self._db

    def _read_options(self, snapshot, verify_checksums, fill_cache):
        if snapshot is None and verify_checksums is None and fill_cache is None:
            return self._read
        ro = _ffi.gc(_lib.bloomkv_readoptions_create(),
                     _lib.bloomkv_readoptions_destroy)
        if snapshot is not None:
            if snapshot._ptr is None:
                raise Error("the snapshot was released")
            _lib.bloomkv_readoptions_set_snapshot(ro, snapshot._ptr)
        if verify_checksums is not None:
            _lib.bloomkv_readoptions_set_verify_checksums(ro, verify_checksums)
        if fill_cache is not None:
            _lib.bloomkv_readoptions_set_fill_cache(ro, fill_cache)
        return ro

    # -- writes --
    def put(self, key, value, sync=False):
        k, v = _bytes(key), _bytes(value, "value")
        err = _ErrPtr()
        _lib.bloomkv_put(self._handle(), self._write_sync if sync else self._write,
                         k, len(k), v, len(v), err.ptr)
        err.raise_if_set()

    def delete(self, key, sync=False):
        k = _bytes(key)
        err = _ErrPtr()
        _lib.bloomkv_delete(self._handle(),
                            self._write_sync if sync else self._write,
                            k, len(k), err.ptr)
        err.raise_if_set()

    def delete_range(self, begin, end, sync=False):
        """Removes every key in [begin, end); ValueError if begin > end."""
        b, e = _bytes(begin, "begin"), _bytes(end, "end")
        err = _ErrPtr()
        _lib.bloomkv_delete_range(self._handle(),
                                  self._write_sync if sync else self._write,
                                  b, len(b), e, len(e), err.ptr)
        err.raise_if_set()

    def write(self, batch, sync=False):
        err = _ErrPtr()
        _lib.bloomkv_write(self._handle(),
                           self._write_sync if sync else self._write,
                           batch._ptr, err.ptr)
        err.raise_if_set()

    def write_batch(self, sync=False):
        """A WriteBatch written when its with block ends without error."""
        return WriteBatch(self, sync)

    # -- reads --
    def get(self, key, default=None, snapshot=None, verify_checksums=None,
            fill_cache=None):
        """The value of key as bytes, or default when it is absent."""
        k = _bytes(key)
        length = _ffi.new("size_t*")
        err = _ErrPtr()
        ptr = _lib.bloomkv_get(
            self._handle(),
            self._read_options(snapshot, verify_checksums, fill_cache),
            k, len(k), length, err.ptr)
        err.raise_if_set()
        value = _take(ptr, length[0])
        return default if value is None else value

    def multi_get(self, keys, snapshot=None):
        """A list with the value (bytes) or None of each key, looked up as
        one batch (filters probed for the whole batch first)."""
        encoded = [_bytes(k) for k in keys]
        n = len(encoded)
        if n == 0:
            return []
        bufs = [_ffi.new("char[]", k) for k in encoded]
        keys_list = _ffi.new("const char*[]", bufs)
        sizes = _ffi.new("size_t[]", [len(k) for k in encoded])
        values = _ffi.new("char*[]", n)
        value_sizes = _ffi.new("size_t[]", n)
        errs = _ffi.new("char*[]", n)
        _lib.bloomkv_multi_get(self._handle(),
                               self._read_options(snapshot, None, None), n,
                               keys_list, sizes, values, value_sizes, errs)
        result, first_error = [], None
        for i in range(n):
            result.append(_take(values[i], value_sizes[i]))
            if errs[i] != _ffi.NULL:
                message = _ffi.string(errs[i]).decode("utf-8", "replace")
                _lib.bloomkv_free(errs[i])
                first_error = first_error or message
        if first_error is not None:
            raise _error_from(first_error)
        return result

    def __getitem__(self, key):
        value = self.get(key)
        if value is None:
            raise KeyError(key)
        return value

    def __setitem__(self, key, value):
        self.put(key, value)

    def __delitem__(self, key):
        self.delete(key)

    def __contains__(self, key):
        return self.get(key) is not None

    def snapshot(self):
        return Snapshot(self)

    def items(self, start=None, stop=None, reverse=False, snapshot=None):
        """(key, value) pairs in key order from start (inclusive) to stop
        (exclusive); reverse=True goes from the last key below stop down to
        start."""
        start = None if start is None else _bytes(start)
        stop = None if stop is None else _bytes(stop)
        klen = _ffi.new("size_t*")
        vlen = _ffi.new("size_t*")
        it = _lib.bloomkv_create_iterator(
            self._handle(), self._read_options(snapshot, None, None))
        self._iterators.add(it)
        try:
            yield from self._walk(it, start, stop, reverse, klen, vlen)
        finally:
            # Unless close() ended it already.
            if it in self._iterators:
                self._iterators.discard(it)
                _lib.bloomkv_iter_destroy(it)

    def _walk(self, it, start, stop, reverse, klen, vlen):
        if reverse:
            if stop is None:
                _lib.bloomkv_iter_seek_to_last(it)
            else:
                _lib.bloomkv_iter_seek_for_prev(it, stop, len(stop))
                if _lib.bloomkv_iter_valid(it):
                    k = _lib.bloomkv_iter_key(it, klen)
                    if bytes(_ffi.buffer(k, klen[0])) == stop:
                        _lib.bloomkv_iter_prev(it)
        elif start is None:
            _lib.bloomkv_iter_seek_to_first(it)
        else:
            _lib.bloomkv_iter_seek(it, start, len(start))
        while _lib.bloomkv_iter_valid(it):
            k = bytes(_ffi.buffer(_lib.bloomkv_iter_key(it, klen), klen[0]))
            if not reverse and stop is not None and k >= stop:
                break
            if reverse and start is not None and k < start:
                break
            v = bytes(_ffi.buffer(_lib.bloomkv_iter_value(it, vlen), vlen[0]))
            yield k, v
            if it not in self._iterators:
                raise Error("the database was closed during the iteration")
            if reverse:
                _lib.bloomkv_iter_prev(it)
            else:
                _lib.bloomkv_iter_next(it)
        err = _ErrPtr()
        _lib.bloomkv_iter_get_error(it, err.ptr)
        err.raise_if_set()

    def keys(self, start=None, stop=None):
        return (k for k, _ in self.items(start, stop))

    def __iter__(self):
        return self.keys()

    # -- maintenance --
    def get_property(self, name):
        """A property's value as str ("bloomkv.stats", "bloomkv.levels",
        ...), or None for an unknown one."""
        ptr = _lib.bloomkv_property_value(self._handle(), name.encode())
        if ptr == _ffi.NULL:
            return None
        try:
            return _ffi.string(ptr).decode("utf-8", "replace")
        finally:
            _lib.bloomkv_free(ptr)

    def approximate_size(self, start, stop):
        """About how many bytes of segment files hold the keys in
        [start, stop) (the memtables not counted)."""
        s, e = _bytes(start), _bytes(stop)
        sb, eb = _ffi.new("char[]", s), _ffi.new("char[]", e)
        sizes = _ffi.new("uint64_t[1]")
        _lib.bloomkv_approximate_sizes(
            self._handle(), 1, _ffi.new("const char*[]", [sb]),
            _ffi.new("size_t[]", [len(s)]), _ffi.new("const char*[]", [eb]),
            _ffi.new("size_t[]", [len(e)]), sizes)
        return int(sizes[0])

    def flush(self):
        err = _ErrPtr()
        _lib.bloomkv_flush(self._handle(), err.ptr)
        err.raise_if_set()

    def sync_wal(self):
        err = _ErrPtr()
        _lib.bloomkv_sync_wal(self._handle(), err.ptr)
        err.raise_if_set()

    def compact_range(self, start=None, stop=None):
        """Compacts the keys in [start, stop] (None: from the first / to the
        last key)."""
        s = None if start is None else _bytes(start)
        e = None if stop is None else _bytes(stop)
        err = _ErrPtr()
        _lib.bloomkv_compact_range(
            self._handle(), _ffi.NULL if s is None else s,
            0 if s is None else len(s), _ffi.NULL if e is None else e,
            0 if e is None else len(e), err.ptr)
        err.raise_if_set()

    def checkpoint(self, directory):
        """An openable copy of the database in directory (which must not
        exist)."""
        err = _ErrPtr()
        _lib.bloomkv_create_checkpoint(self._handle(), os.fsencode(directory),
                                       err.ptr)
        err.raise_if_set()


# ---- standalone filters ----------------------------------------------------

class BloomFilter:
    """A bloom filter for expected_items keys at false_positive_rate, with
    the Python article's API (add, contains; also `in`) and Guava's
    (put, might_contain, put_all, approximate_element_count)."""

    def __init__(self, expected_items=1000, false_positive_rate=0.01,
                 _ptr=None):
        if _ptr is None:
            if expected_items <= 0:
                raise InvalidArgumentError("expected_items must be positive")
            if not 0 < false_positive_rate < 1:
                raise InvalidArgumentError(
                    "false_positive_rate must be between 0 and 1")
            _ptr = _lib.bloomkv_bloom_create(expected_items,
                                             false_positive_rate)
        self._ptr = _ffi.gc(_ptr, _lib.bloomkv_bloom_destroy)

    def add(self, key):
        k = _bytes(key)
        _lib.bloomkv_bloom_add(self._ptr, k, len(k))

    put = add

    def add_concurrently(self, key):
        """add() that may run in several threads at once."""
        k = _bytes(key)
        _lib.bloomkv_bloom_add_concurrently(self._ptr, k, len(k))

    def contains(self, key):
        k = _bytes(key)
        return bool(_lib.bloomkv_bloom_might_contain(self._ptr, k, len(k)))

    might_contain = contains
    __contains__ = contains

    def merge(self, other):
        """Adds every key of other (a filter of the same shape)."""
        err = _ErrPtr()
        _lib.bloomkv_bloom_merge(self._ptr, other._ptr, err.ptr)
        err.raise_if_set()

    put_all = merge

    def approximate_element_count(self):
        return _lib.bloomkv_bloom_approximate_element_count(self._ptr)

    def to_bytes(self):
        length = _ffi.new("size_t*")
        return _take(_lib.bloomkv_bloom_serialize(self._ptr, length),
                     length[0])

    @classmethod
    def from_bytes(cls, data):
        data = _bytes(data, "data")
        err = _ErrPtr()
        ptr = _lib.bloomkv_bloom_deserialize(data, len(data), err.ptr)
        err.raise_if_set()
        return cls(_ptr=ptr)


class ScalableBloomFilter:
    """A bloom filter that grows past capacity (RedisBloom's BF.RESERVE
    with EXPANSION; non_scaling=True raises FullError instead)."""

    def __init__(self, capacity=100, false_positive_rate=0.01, expansion=2,
                 non_scaling=False, _ptr=None):
        if _ptr is None:
            err = _ErrPtr()
            _ptr = _lib.bloomkv_scalable_bloom_create(
                capacity, false_positive_rate, expansion, bool(non_scaling),
                err.ptr)
            err.raise_if_set()
        self._ptr = _ffi.gc(_ptr, _lib.bloomkv_scalable_bloom_destroy)

    def add(self, key):
        """True when the key was new (BF.ADD's reply)."""
        k = _bytes(key)
        added = _ffi.new("unsigned char*")
        err = _ErrPtr()
        _lib.bloomkv_scalable_bloom_add(self._ptr, k, len(k), added, err.ptr)
        err.raise_if_set()
        return bool(added[0])

    def contains(self, key):
        k = _bytes(key)
        return bool(_lib.bloomkv_scalable_bloom_might_contain(self._ptr, k,
                                                              len(k)))

    __contains__ = contains

    def to_bytes(self):
        length = _ffi.new("size_t*")
        return _take(_lib.bloomkv_scalable_bloom_serialize(self._ptr, length),
                     length[0])

    @classmethod
    def from_bytes(cls, data):
        data = _bytes(data, "data")
        err = _ErrPtr()
        ptr = _lib.bloomkv_scalable_bloom_deserialize(data, len(data),
                                                      err.ptr)
        err.raise_if_set()
        return cls(_ptr=ptr)


class CuckooFilter:
    """A cuckoo filter with deletion (RedisBloom's CF.*)."""

    def __init__(self, capacity=1000, false_positive_rate=0.01, _ptr=None):
        if _ptr is None:
            err = _ErrPtr()
            _ptr = _lib.bloomkv_cuckoo_create(capacity, false_positive_rate,
                                              err.ptr)
            err.raise_if_set()
        self._ptr = _ffi.gc(_ptr, _lib.bloomkv_cuckoo_destroy)

    def add(self, key):
        """Raises FullError when the filter cannot take the key."""
        k = _bytes(key)
        err = _ErrPtr()
        _lib.bloomkv_cuckoo_add(self._ptr, k, len(k), err.ptr)
        err.raise_if_set()

    def add_if_absent(self, key):
        """True when the key was added (CF.ADDNX)."""
        k = _bytes(key)
        added = _ffi.new("unsigned char*")
        err = _ErrPtr()
        _lib.bloomkv_cuckoo_add_if_absent(self._ptr, k, len(k), added,
                                          err.ptr)
        err.raise_if_set()
        return bool(added[0])

    def delete(self, key):
        """True when a copy was removed (CF.DEL). Delete only added keys."""
        k = _bytes(key)
        return bool(_lib.bloomkv_cuckoo_delete(self._ptr, k, len(k)))

    def count(self, key):
        k = _bytes(key)
        return int(_lib.bloomkv_cuckoo_count(self._ptr, k, len(k)))

    def contains(self, key):
        k = _bytes(key)
        return bool(_lib.bloomkv_cuckoo_might_contain(self._ptr, k, len(k)))

    __contains__ = contains

    def to_bytes(self):
        length = _ffi.new("size_t*")
        return _take(_lib.bloomkv_cuckoo_serialize(self._ptr, length),
                     length[0])

    @classmethod
    def from_bytes(cls, data):
        data = _bytes(data, "data")
        err = _ErrPtr()
        ptr = _lib.bloomkv_cuckoo_deserialize(data, len(data), err.ptr)
        err.raise_if_set()
        return cls(_ptr=ptr)


class StaticFilter:
    """A binary fuse filter built once from a set of keys:
    StaticFilter(keys, fingerprint_bits=8) (0.39% false positives at about
    9 bits per key; 16 bits: 0.0015%)."""

    def __init__(self, keys=(), fingerprint_bits=8, _ptr=None):
        if _ptr is None:
            encoded = [_bytes(k) for k in keys]
            bufs = [_ffi.new("char[]", k) for k in encoded]
            keys_list = _ffi.new("const char*[]", bufs)
            sizes = _ffi.new("size_t[]", [len(k) for k in encoded])
            _ptr = _lib.bloomkv_static_filter_build(len(encoded), keys_list,
                                                    sizes, fingerprint_bits)
        self._ptr = _ffi.gc(_ptr, _lib.bloomkv_static_filter_destroy)

    def contains(self, key):
        k = _bytes(key)
        return bool(_lib.bloomkv_static_filter_might_contain(self._ptr, k,
                                                             len(k)))

    __contains__ = contains

    def to_bytes(self):
        length = _ffi.new("size_t*")
        return _take(_lib.bloomkv_static_filter_serialize(self._ptr, length),
                     length[0])

    @classmethod
    def from_bytes(cls, data):
        data = _bytes(data, "data")
        err = _ErrPtr()
        ptr = _lib.bloomkv_static_filter_deserialize(data, len(data), err.ptr)
        err.raise_if_set()
        return cls(_ptr=ptr)
