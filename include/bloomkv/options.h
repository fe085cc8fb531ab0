// Options that control a database, a read and a write.
//
// Every field has an in-class default; the defaults suit a short-code -> URL
// store on an SSD. Thread-safety: plain values; the objects they point to
// (filter policy, env) must be thread-safe, and must outlive the DB.
#ifndef BLOOMKV_INCLUDE_OPTIONS_H_
#define BLOOMKV_INCLUDE_OPTIONS_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "bloomkv/filter_policy.h"

namespace bloomkv {

class CompactionFilter;
class Env;
class Logger;
class Snapshot;
struct GetTrace;

// Never change the values: stored on disk in every block trailer.
enum class CompressionType : uint8_t {
  kNone = 0,
  kLZ4 = 1,
  // Zstandard at level 3: smaller blocks than LZ4 (short-link URLs compress
  // by about a fifth more; docs/benchmarks.md) for more CPU per block
  // written and read. Meant for the deep levels through
  // compression_per_level, where most bytes sit and blocks are written once.
  kZSTD = 2,
  // LZ4 value by value, each against a dictionary of the segment's first
  // 8 KiB of values (segment format version 3, docs/segment_format.md): the
  // data blocks themselves are stored raw, so a hit searches its block
  // where it lies (in the block cache, or in place in a mapped file) and
  // decompresses only the value it returns, about 60 ns, where an LZ4
  // block costs over a microsecond to decompress per block read. Short-link
  // URLs take about as much disk as with kLZ4 (docs/benchmarks.md); writing
  // costs more CPU per value (about 300 ns against 150), and scans decode
  // every value they pass. Values that LZ4 does not shrink are stored as
  // they are. Readers older than format version 3 refuse these segments.
  kLZ4Values = 3,
};

// How filter memory is spread over the segments. Never change the values:
// they may be stored in configuration files.
enum class FilterAllocation : uint8_t {
  // Every segment's filter is the configured policy's for its level
  // (filter_policy, or deep_filter_policy at deep_filter_level and below)
  // as it is.
  kUniform = 0,
  // The filter memory kUniform would spend on the segments of the tree
  // (their configured policies' real sizes) is kept, and redistributed over
  // levels and filter kinds so that the expected number of false positives
  // per lookup of an absent key, summed over every segment the lookup
  // probes, is smallest (the Monkey result, with each kind's real size and
  // rate): level-0 segments and small levels, which every lookup probes but
  // which hold few keys, get more bits per key (about 5.5 more for each
  // level 10x smaller, with the bloom filter) or 16-bit fuse fingerprints;
  // the deepest level, which holds most keys, slightly fewer. See
  // docs/filters.md.
  kMinimizeFalsePositives = 1,
};

struct Options {
  // Create the database if `path` holds none. Default: false.
  bool create_if_missing = false;

  // Fail Open if the database already exists. Default: false.
  bool error_if_exists = false;

  // Bytes of writes collected in the memtable before it is flushed to a new
  // level-0 segment. Larger values mean fewer, larger segments and a longer
  // log replay after a crash. Default: 4 MiB. Range: [64 KiB, 1 GiB].
  size_t write_buffer_size = 4 << 20;

  // Approximate uncompressed size of a data block, the unit of disk reads
  // and of the block cache. Default: 4 KiB. Range: [1 KiB, 4 MiB].
  size_t block_size = 4096;

  // Compression of data blocks in levels that compression_per_level does
  // not name. A block is stored raw when compression saves less than 1/8
  // of it (with kLZ4Values, a value when LZ4 saves nothing). Default:
  // kLZ4Values, values compressed one by one: about the disk of kLZ4 blocks
  // with hits that decompress one value, not a block (docs/benchmarks.md).
  // kLZ4 writes segments that readers of format version 2 can still read.
  CompressionType compression = CompressionType::kLZ4Values;

  // Compression of the data blocks a flush or compaction writes into each
  // level: entry i applies to level i; levels past the end of the list use
  // `compression` (RocksDB's compression_per_level). The default leaves
  // level 0 uncompressed: its segments are flushed memtables that the next
  // level-0 compaction reads once and deletes, so compressing them costs
  // LZ4 CPU in every flush and a decompression in that compaction (and in
  // every lookup that reads one of their blocks) for disk that is freed
  // moments later. Uncompressing level 1 as well saves more compression
  // CPU but, since level sizes are counted in file bytes, fills level 1
  // with fewer entries and adds compactions into level 2: measure before
  // doing so (docs/benchmarks.md). Entries name levels, not depths: with
  // level_compaction_dynamic_level_bytes level 0 compacts into the base
  // level (level 6 for a small tree), so an entry for level 1 applies only
  // once the tree is large enough for level 1 to be the base level.
  // A segment moved down a level without
  // being rewritten is rewritten instead when the two levels' compression
  // differs. An empty list compresses every level with `compression`.
  // Existing segments keep their blocks as written; new ones follow the
  // setting. Default: {kNone}. At most 7 entries (one per level).
  std::vector<CompressionType> compression_per_level = {CompressionType::kNone};

  // The filter built into every segment written above deep_filter_level
  // (level 0 with the default 1; every segment when the deep levels use it
  // too, see deep_filter_policy), consulted before any read of it. nullptr builds no filters there, so every lookup reads from
  // every such segment whose key range covers the key. Default: bloom filter
  // at 10 bits per key (about 1% false positives).
  std::shared_ptr<const FilterPolicy> filter_policy =
      NewBloomFilterPolicy(10.0);

  // The filter of the segments written at deep_filter_level and below:
  // compaction output there, and the segments of SegmentWriter, which
  // IngestSegments adds to the last level. filter_policy keeps level 0
  // (every flush) and the levels above. Meant for a static filter that is
  // dearer to build but smaller for its rate, where segments hold most
  // keys and live longest: NewBinaryFuseFilterPolicy(8) gives 0.39% false
  // positives at about 9-10 bits per key, where the bloom filter gives
  // about 1% at 10. Its build costs more CPU (12-78 ns per key against
  // 5-44 for the bloom filter, docs/filters.md) and about 22 bytes of
  // temporary memory per key of the segment, in compactions only, so
  // flushes (the write path) are as fast as before. Segments already
  // written keep their filters, and a segment moved down a level without
  // being rewritten is rewritten instead when it crosses deep_filter_level.
  // Every built-in kind is read whatever is configured (filter_policy.h);
  // an application's own policy can be filter_policy or
  // deep_filter_policy, not both with different names.
  // nullptr chooses from filter_policy: when it is the built-in bloom
  // filter at 10 to 12 bits per key (the default included), the deep
  // levels get NewBinaryFuseFilterPolicy(8), which is as selective or more
  // in no more memory; for any other filter_policy (none, another bits per
  // key, an application's own) filter_policy is used everywhere. To keep a
  // bloom filter everywhere, set deep_filter_policy to filter_policy.
  // Default: nullptr.
  std::shared_ptr<const FilterPolicy> deep_filter_policy;

  // The first level whose segments get deep_filter_policy. Level numbers,
  // not depths: the default 1 gives every compaction output the deep
  // filter and every flush filter_policy. With
  // level_compaction_dynamic_level_bytes the levels above the base level
  // are kept empty, so any value up to the base level means the same; a
  // larger one keeps filter_policy in the smaller levels just below level 0
  // as well, which are rewritten more often. Unused when the deep levels
  // use filter_policy too. Default: 1. Range: [1, 6].
  int deep_filter_level = 1;

  // How the filter memory is spread over levels. kMinimizeFalsePositives
  // spends the memory kUniform would, redistributed across levels and
  // filter kinds so that a lookup of an absent key meets the fewest false
  // positives: a policy that can be resized (FilterPolicy::Resized; the
  // built-in bloom filter can) gets any bits per key in [1, 40]; a built-in
  // binary fuse policy 8- or 16-bit fingerprints, or filter_policy resized
  // where even 8 bits cost more than they save (if filter_policy can be
  // resized); any other policy keeps its size. Existing segments keep their
  // filters; new ones follow the setting. Default: kUniform.
  FilterAllocation filter_allocation = FilterAllocation::kUniform;

  // Bytes of uncompressed data blocks kept in the sharded block cache (CLOCK
  // eviction: blocks not read since the last sweep go first);
  // 0 disables the cache. Default: 8 MiB.
  size_t block_cache_capacity = 8 << 20;

  // Bytes of a cache of point-lookup answers (RocksDB's row_cache): for a
  // key read again, a segment's answer (the value, a deletion, or that the
  // key is not there) without its index or data block. Entries are per
  // segment, so they never go stale; a Get at an explicit snapshot neither
  // reads nor fills it. Worth it when a working set of keys is read much
  // more than the rest (Zipf-like popularity). Reads spread evenly over far
  // more keys than it holds pay a cache lookup each (about a fifth fewer
  // such hits, docs/benchmarks.md) but do not flush it: once full it admits
  // a key only on a second recent miss (the block cache's admission). Each
  // answer is charged its key and value plus 224 bytes. 0 disables it.
  // Default: 0.
  size_t row_cache_capacity = 0;

  // Bytes of a cache of the database's latest answers for popular keys:
  // asked once per lookup, at the first segment whose filter lets the key
  // through, it answers for every segment (the key's value, or that it is
  // deleted or absent), so a key read again costs one 256-byte slot instead
  // of its index, block and value searches; a key every filter rules out
  // (a code never issued) never touches it. A slot is chosen by the key's
  // hash and holds one answer whose key and value together take at most
  // 216 bytes (longer ones are not kept). A key gets a slot on its second
  // miss there in a row, and only when the answer in it was not read since,
  // so reads spread evenly over far more keys than it holds pass it by.
  // Reads take no lock. Every flush and ingest makes all its answers stale
  // at once (a compaction does not, unless a compaction_filter is set), so
  // it suits a store read far more than written; a Get at an explicit
  // snapshot neither reads nor fills it (docs/operations.md). Its memory is
  // allocated at open. 0 disables it; otherwise at least 512 bytes.
  // Default: 8 MiB.
  size_t answer_cache_capacity = 8 << 20;

  // Bytes of index blocks and filters kept in memory for the live segments'
  // whole life (GetProperty("bloomkv.resource-usage"): filter_bytes +
  // index_bytes). Without a limit they grow with the data: about 1.9 bytes
  // per short-link entry with the default filters (docs/operations.md).
  // Past the limit, a segment entering the database (a flush, a compaction,
  // an ingest or the open) keeps its index block and filter in its file
  // instead: a lookup that reaches it reads them through the block cache,
  // where they are charged and evicted like data blocks, checksummed on
  // every read from the file. Lookups stay correct (no false negatives, no
  // errors for want of memory) and cost up to two more block reads on those
  // segments when the cache does not hold their blocks
  // (DbStats::meta_blocks_read); segments keep what they were given until
  // they are rewritten, and ones deleted free room for the next. 0 means no
  // limit. Default: 0.
  uint64_t filter_and_index_memory_limit = 0;

  // Segment files the database keeps open at once, for point lookups,
  // iterators and compaction inputs; least recently used ones are closed
  // beyond that. Ten of them are set aside for the files outside that
  // budget (WAL, manifest, LOG, LOCK, the segment a flush or compaction is
  // writing, directory syncs), so a database holds about this many file
  // descriptors. It may go above that while every open segment is in use:
  // an iterator or a level-0 compaction keeps each level-0 segment and one
  // segment per deeper level open for its life. Every live segment's filter
  // stays in memory whether its file is open or not, so lookups of absent
  // keys never open a file. Raise it toward the number of segments that
  // lookups of present keys touch when they reopen files often (see
  // GetProperty("bloomkv.resource-usage")). DB::Open raises the process's
  // soft descriptor limit (RLIMIT_NOFILE, ulimit -n) to max_open_files + 256
  // where the hard limit allows, and says so in the info log; lower this
  // under a hard limit below that. -1 keeps every segment open, as
  // RocksDB's -1 does: a mapped segment holds no descriptor, one read with
  // pread (beyond EnvOptions::max_mmap_files) holds one, and DB::Open
  // raises the soft limit as far as the hard limit allows (at most 2^20).
  // Default: 1000. Minimum: 20, or -1.
  int max_open_files = 1000;

  // Verify more aggressively: every block read is checksummed, and on Open a
  // corrupt write-ahead log record that is not the torn tail of the last log
  // fails with Corruption instead of being skipped (a damaged end of an
  // older log included), as do a missing log that the manifest needs and a
  // segment the manifest lists that is missing or cannot be opened. Set it
  // to false only to salvage a damaged database: Open then skips damaged log
  // records and goes on with unreadable segments (reported on stderr);
  // reads that need such a segment fail with Corruption, never NotFound.
  // Default: true.
  bool paranoid_checks = true;

  // File-system interface for all IO. Default: Env::Default().
  Env* env = nullptr;

  // Where the database writes its info log: one human-readable line per
  // open, flush, compaction, write stall, background error and deleted file
  // (see docs/operations.md, "The info log"). nullptr writes the file LOG in
  // the database directory; each Open renames the previous LOG to LOG.old
  // (and LOG.old to LOG.old.1, LOG.old.1 to LOG.old.2, deleting the old
  // LOG.old.2). Set it to route the lines into the application's own
  // logging; no LOG file is written then. A read-only open never creates or
  // rotates LOG: it logs to this logger, or nowhere. Default: nullptr.
  std::shared_ptr<Logger> info_log;

  // Rotates LOG, as Open does, once it has grown past about this many bytes,
  // so the LOG files never take much more than 4 times this much disk.
  // 0 rotates only at Open. Unused when info_log is set. Default: 4 MiB.
  uint64_t max_log_file_size = uint64_t{4} << 20;

  // ---- Leveled compaction ------------------------------------------------
  // Level 0 holds flushed memtables, which may overlap; levels 1..6 hold
  // non-overlapping segments, each level `max_bytes_for_level_multiplier`
  // times larger than the one above it.

  // How the levels' target sizes are chosen. true: from the bottom up. The
  // last level (6) is as large as it is; each level above it gets
  // 1/max_bytes_for_level_multiplier of the one below, down to the highest
  // level whose target is still at least max_bytes_for_level_base (the
  // base level). Level 0 compacts straight into the base level, and the
  // levels above it stay empty, so the tree has just as many levels as its
  // size needs: with the defaults, up to 160 MiB in one level below level
  // 0, up to 1.6 GiB in two. Fewer levels mean fewer filters probed and
  // fewer segments read per lookup. As the data grows the base level moves
  // up. false: from the top down, level 1's target being
  // max_bytes_for_level_base and each deeper level's the multiplier times
  // the one above, so a young tree has as many levels as an old one of the
  // same size had. Either setting opens any database: data found above the
  // base level (written with false, or by a tree since shrunk) is moved
  // down by background compaction. Default: true.
  bool level_compaction_dynamic_level_bytes = true;

  // Compact level 0 into level 1 once it has this many segments.
  // Default: 4. Range: [1, 1000].
  int level0_compaction_trigger = 4;

  // Every lookup consults each level-0 segment whose key range holds its
  // key: a filter probe, and a block read on a false positive. With
  // random keys that is every level-0 segment, and a store that stops
  // taking writes keeps up to level0_compaction_trigger - 1 of them for
  // good. true: once the lookups that consulted level 0 in vain would have
  // paid for compacting it (each counted as 16 bytes of rewriting,
  // against the bytes of level 0 and of the level it compacts into),
  // level 0 is compacted down with fewer segments than the trigger, as
  // LevelDB's seek-triggered compaction does. Each thread checks once every
  // 65,536 of its Gets, so the read path pays one counter test;
  // DbStats::read_triggered_compactions counts these compactions. A
  // read-only database compacts nothing. false: level 0 waits for its
  // trigger. Default: true.
  bool read_triggered_compaction = true;

  // While level 0 has this many segments, writes are slowed down to
  // delayed_write_rate, so that compaction catches up instead of reads
  // slowing down without bound. The default leaves level 0 room to grow
  // past the compaction trigger while a compaction runs: the next level-0
  // compaction then takes more segments at once and rewrites the base
  // level fewer times, so fewer bytes are written and writes stall less
  // than with 8 and 12 (docs/benchmarks.md). Each level-0 segment costs a
  // lookup one filter probe, and a block read on a hit in it or a false
  // positive.
  // Default: 20 (RocksDB's).
  // Range: [level0_compaction_trigger, 1000].
  int level0_slowdown_writes_trigger = 20;

  // Bytes per second that writes (keys, values and tags) may go at while
  // level 0 is at the slowdown trigger; each write group sleeps for what
  // its bytes cost, one sleep per millisecond or more of debt (so many
  // small writes are not each held up). If level 0 still grows, the rate
  // is halved for each further eighth of the way to the stop trigger (1/128
  // of it in the last eighth: 128 KiB/s from 34 segments with the
  // defaults), so that writes slow down instead of stopping for a whole
  // level-0 compaction. Lower it if level 0 still reaches the stop trigger;
  // raise it if compaction keeps up and writes are slowed for nothing.
  // Default: 16 MiB/s. Range: [16 KiB/s, 1 GiB/s].
  uint64_t delayed_write_rate = uint64_t{16} << 20;

  // Stop writes until compaction has brought level 0 below this many
  // segments. Default: 36 (RocksDB's).
  // Range: [level0_slowdown_writes_trigger, 1000].
  int level0_stop_writes_trigger = 36;

  // Target size of level 1 (with level_compaction_dynamic_level_bytes: the
  // least target of the base level); a level above its target is compacted
  // into the next. 0 sizes it like a full level 0, level0_compaction_trigger
  // x write_buffer_size (16 MiB with the defaults): random keys make every
  // level-0 segment overlap all of level 1, so a level-0 compaction
  // rewrites level 1 whole, and a level 1 much larger than level 0 would
  // multiply the bytes written. Default: 0. Range: 0 or [64 KiB, 1 TiB].
  uint64_t max_bytes_for_level_base = 0;

  // Each level's target is this many times the previous one's.
  // Default: 10. Range: [2, 100].
  int max_bytes_for_level_multiplier = 10;

  // Compaction cuts its output into segments of about this size (never in
  // the middle of one key's versions), and smaller in small levels: at most
  // an eighth of max_bytes_for_level_base (or of a full level 0) in the
  // base level (level 1 without level_compaction_dynamic_level_bytes),
  // doubled for each level below it, so that compacting one segment down
  // rewrites only a little of the level below. Default: 64 MiB.
  // Range: [16 KiB, 4 GiB].
  uint64_t target_file_size = uint64_t{64} << 20;

  // Threads that run compactions at once, on segments and key ranges that
  // do not overlap; memtable flushes have a thread of their own and never
  // wait for a compaction. More threads help when compaction cannot keep up
  // with writes (level 0 reaching the slowdown trigger) and the disk has
  // bandwidth to spare; each running compaction holds its inputs' readahead
  // buffer and an output being built. Default: 1. Range: [1, 64].
  int max_background_compactions = 1;

  // Compactions read their inputs sequentially, this many bytes per read,
  // instead of one read per data block; what they read never enters the
  // block cache. Each input segment of a running compaction holds a buffer
  // of up to this size (at most its data's size) until its last block has
  // been read. 0 reads block by block. Default: 2 MiB.
  // Range: 0 or [4 KiB, 64 MiB].
  size_t compaction_readahead_size = 2 << 20;

  // Drops entries while they are compacted (e.g. expired ones); see
  // compaction_filter.h. Default: nullptr (keep everything).
  std::shared_ptr<const CompactionFilter> compaction_filter;
};

struct ReadOptions {
  // Read as of this snapshot (from DB::GetSnapshot); nullptr reads the
  // latest state. Default: nullptr.
  const Snapshot* snapshot = nullptr;

  // Checksum every block read from a file (blocks served by the cache were
  // verified when they were read). Point lookups (Get) verify every block
  // they read whatever this says: the cache only keeps verified blocks, and a
  // block a lookup reads without caching it is checked on the spot (from a
  // mapped file, the first time only: docs/durability.md). So this governs
  // iterators. Default: true.
  bool verify_checksums = true;

  // Let blocks read by this operation into the block cache. Once the cache
  // is full, a lookup's block gets in only if it also missed a short while
  // ago (a block read once is not worth an eviction); iterators insert every
  // block. Turn off for bulk scans that would evict the working set.
  // Default: true.
  bool fill_cache = true;

  // Iterators only (RocksDB's names): when non-null, an iterator yields no
  // key below *iterate_lower_bound (inclusive bound) and none at or above
  // *iterate_upper_bound (exclusive). A Seek below the lower bound lands on
  // it, SeekToLast and a SeekForPrev at or past the upper bound land on the
  // last key below it, and a scan stops at the bound without reading the
  // entries beyond it. The bounds are copied when the iterator is made.
  // Default: nullptr (unbounded).
  const Slice* iterate_lower_bound = nullptr;
  const Slice* iterate_upper_bound = nullptr;

  // When non-null, Get() clears *trace and records in it every segment it
  // considered and what happened there. Default: nullptr.
  GetTrace* trace = nullptr;
};

struct WriteOptions {
  // fsync the write-ahead log before the write returns (with the logs that
  // memtable switches closed since the last synced write, which are not
  // synced when closed). Without sync, a process crash loses nothing, but a
  // machine crash may lose the most recent writes. Default: false.
  bool sync = false;
};

struct IngestOptions {
  // Remove each source file once the ingest has committed: it is then
  // only in the database (hard-linked there, or copied when the two are on
  // different filesystems). false leaves the sources in place; a linked
  // source then shares its disk blocks with the database's file, so it must
  // not be written in place afterwards (removing or replacing it is
  // harmless, and SegmentWriter only ever replaces). Default: false.
  bool move_files = false;
};

}  // namespace bloomkv

#endif  // BLOOMKV_INCLUDE_OPTIONS_H_
