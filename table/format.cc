// Block handles, footer, block trailer and block IO; see format.h.
#include "table/format.h"

#include <lz4.h>
#include <zstd.h>

#include <cstring>
#include <limits>
#include <type_traits>

#include "bloomkv/env.h"
#include "util/coding.h"
#include "util/hash.h"

namespace bloomkv {

namespace {

// Footer field offsets (never change: on disk).
constexpr size_t kFooterChecksumTypeOffset = 48;
constexpr size_t kFooterVersionOffset = 49;
constexpr size_t kFooterChecksumOffset = 53;
constexpr size_t kFooterMagicOffset = 57;
static_assert(kFooterMagicOffset + 8 == kFooterSize);

// LZ4_compress_default sets up a fresh 16 KiB hash table for every call
// (a memset of it), which for 4 KiB blocks cost about a third as many
// instructions as the compression itself. Each compressing thread (flush,
// compaction) keeps one state instead, reset without the memset before
// each block: the reset starts a new chain with no dictionary, so every
// block is still an independent LZ4 block.
LZ4_stream_t* ThreadLz4State() {
  struct State {
    State() { LZ4_initStream(&stream, sizeof(stream)); }
    LZ4_stream_t stream;
  };
  thread_local State state;
  return &state.stream;
}

// One Zstandard context per compressing or decompressing thread: creating
// one costs an allocation of several hundred KiB, far more than a 4 KiB
// block's work.
ZSTD_CCtx* ThreadZstdCompressor() {
  struct State {
    ~State() { ZSTD_freeCCtx(ctx); }
    ZSTD_CCtx* ctx = ZSTD_createCCtx();
  };
  thread_local State state;
  return state.ctx;
}
ZSTD_DCtx* ThreadZstdDecompressor() {
  struct State {
    ~State() { ZSTD_freeDCtx(ctx); }
    ZSTD_DCtx* ctx = ZSTD_createDCtx();
  };
  thread_local State state;
  return state.ctx;
}
// Zstandard's default level. Measured on short-link blocks (1M links,
// docs/benchmarks.md "Zstandard or LZ4 below level 0"): 21% less disk than
// LZ4, and about 4 us more CPU per hit that reads a block.
constexpr int kZstdLevel = 3;
// A stored uncompressed size above this multiple of the payload is corrupt
// (as kMaxLZ4Ratio); Zstandard can expand more, but no block a flush or
// compaction writes does.
constexpr uint64_t kMaxZstdRatio = 1024;

void PutHandleFixed(std::string* dst, const BlockHandle& h) {
  PutFixed64(dst, h.offset);
  PutFixed64(dst, h.size);
}

BlockHandle DecodeHandleFixed(const char* p) {
  BlockHandle h;
  h.offset = DecodeFixed64(p);
  h.size = DecodeFixed64(p + 8);
  return h;
}

}  // namespace

Status CorruptionAt(const std::string& file_name, const std::string& what,
                    uint64_t offset) {
  return Status::Corruption(file_name + ": " + what + " at offset " +
                            std::to_string(offset))
      .AtOffset(offset);
}

void BlockHandle::EncodeTo(std::string* dst) const {
  PutVarint64(dst, offset);
  PutVarint64(dst, size);
}

namespace {
// GetVarint64 (same rules: false if the varint is malformed, overflows or
// runs past the end), inlined: point lookups decode a handle on every Get.
inline bool ConsumeVarint64(Slice* input, uint64_t* v) {
  const char* p = input->data();
  const char* const limit = p + input->size();
  uint64_t result = 0;
  for (uint32_t shift = 0; shift <= 63 && p < limit; shift += 7) {
    const uint64_t byte = static_cast<uint8_t>(*p++);
    result |= (byte & 0x7f) << shift;
    if (byte < 0x80) {
      // The tenth byte may only carry the top bit of a 64-bit value.
      if (shift == 63 && byte > 0x01) return false;
      *v = result;
      *input = Slice(p, static_cast<size_t>(limit - p));
      return true;
    }
  }
  return false;
}
}  // namespace

bool BlockHandle::DecodeFrom(Slice* input) {
  return ConsumeVarint64(input, &offset) && ConsumeVarint64(input, &size);
}

void Footer::EncodeTo(std::string* dst) const {
  const size_t start = dst->size();
  PutHandleFixed(dst, filter_handle);
  PutHandleFixed(dst, properties_handle);
  PutHandleFixed(dst, index_handle);
  dst->push_back(static_cast<char>(checksum_type));
  PutFixed32(dst, format_version);
  PutFixed32(dst, BlockChecksum(dst->data() + start, kFooterChecksumOffset));
  PutFixed64(dst, kSegmentMagicNumber);
}

Status Footer::DecodeFrom(const Slice& input, const std::string& file_name,
                          uint64_t footer_offset) {
  if (input.size() != kFooterSize) {
    return CorruptionAt(file_name, "truncated footer", footer_offset);
  }
  const char* p = input.data();
  if (DecodeFixed64(p + kFooterMagicOffset) != kSegmentMagicNumber) {
    return CorruptionAt(file_name, "bad magic number (not a segment file)",
                        footer_offset + kFooterMagicOffset);
  }
  const uint32_t version = DecodeFixed32(p + kFooterVersionOffset);
  if (version < kSegmentFormatVersion1 ||
      version > kLatestSegmentFormatVersion) {
    return Status::NotSupported(
               file_name + ": unsupported segment format version " +
               std::to_string(version) + " at offset " +
               std::to_string(footer_offset + kFooterVersionOffset) +
               " (this build reads versions 1 to " +
               std::to_string(kLatestSegmentFormatVersion) + ")")
        .AtOffset(footer_offset + kFooterVersionOffset);
  }
  const uint8_t ctype = static_cast<uint8_t>(p[kFooterChecksumTypeOffset]);
  if (ctype != static_cast<uint8_t>(ChecksumType::kXXH3Low32)) {
    return Status::NotSupported(
               file_name + ": unknown checksum type " + std::to_string(ctype) +
               " at offset " +
               std::to_string(footer_offset + kFooterChecksumTypeOffset))
        .AtOffset(footer_offset + kFooterChecksumTypeOffset);
  }
  const uint32_t stored = DecodeFixed32(p + kFooterChecksumOffset);
  if (stored != BlockChecksum(p, kFooterChecksumOffset)) {
    return CorruptionAt(file_name, "footer checksum mismatch", footer_offset);
  }
  filter_handle = DecodeHandleFixed(p);
  properties_handle = DecodeHandleFixed(p + 16);
  index_handle = DecodeHandleFixed(p + 32);
  format_version = version;
  checksum_type = static_cast<ChecksumType>(ctype);
  return Status::OK();
}

const char* CompressionTypeName(CompressionType type) {
  switch (type) {
    case CompressionType::kNone:
      return "none";
    case CompressionType::kLZ4:
      return "lz4";
    case CompressionType::kZSTD:
      return "zstd";
    case CompressionType::kLZ4Values:
      return "lz4-values";
  }
  return "unknown";
}

CompressionType CompressBlock(const Slice& raw, CompressionType type,
                              std::string* dst) {
  if (type == CompressionType::kZSTD &&
      raw.size() <= std::numeric_limits<uint32_t>::max()) {
    const size_t start = dst->size();
    PutVarint32(dst, static_cast<uint32_t>(raw.size()));
    const size_t header = dst->size() - start;
    const size_t bound = ZSTD_compressBound(raw.size());
    dst->resize(start + header + bound);
    const size_t n =
        ZSTD_compressCCtx(ThreadZstdCompressor(), dst->data() + start + header,
                          bound, raw.data(), raw.size(), kZstdLevel);
    const size_t total = header + (ZSTD_isError(n) ? raw.size() : n);
    if (!ZSTD_isError(n) && total <= raw.size() - raw.size() / 8) {
      dst->resize(start + total);
      return CompressionType::kZSTD;
    }
    dst->resize(start);
  }
  if (type == CompressionType::kLZ4 &&
      raw.size() <= static_cast<size_t>(LZ4_MAX_INPUT_SIZE)) {
    const size_t start = dst->size();
    PutVarint32(dst, static_cast<uint32_t>(raw.size()));
    const size_t header = dst->size() - start;
    const int bound = LZ4_compressBound(static_cast<int>(raw.size()));
    dst->resize(start + header + static_cast<size_t>(bound));
    LZ4_stream_t* const lz4 = ThreadLz4State();
    LZ4_resetStream_fast(lz4);
    const int n = LZ4_compress_fast_continue(
        lz4, raw.data(), dst->data() + start + header,
        static_cast<int>(raw.size()), bound, /*acceleration=*/1);
    const size_t total = header + static_cast<size_t>(n > 0 ? n : 0);
    // Keep compression only when it saves at least 1/8 of the block.
    if (n > 0 && total <= raw.size() - raw.size() / 8) {
      dst->resize(start + total);
      return CompressionType::kLZ4;
    }
    dst->resize(start);
  }
  dst->append(raw.data(), raw.size());
  return CompressionType::kNone;
}

void AppendBlockTrailer(const Slice& payload, CompressionType type,
                        std::string* dst) {
  const char t = static_cast<char>(type);
  const uint32_t crc = BlockChecksum2(payload.data(), payload.size(), &t, 1);
  dst->push_back(t);
  PutFixed32(dst, crc);
}

namespace {
// Blocks up to this size, trailer included, are read into a buffer on the
// stack when the file copies what it reads (pread): every data block of the
// default 4 KiB block size. Larger ones (index, filter) go to the heap.
constexpr size_t kStackScratchSize = 8 << 10;

// Makes *out a buffer of n bytes to be overwritten and returns it.
char* AllocateContents(std::string* out, size_t n) {
  out->resize(n);
  return out->data();
}
char* AllocateContents(BlockContents* out, size_t n) {
  *out = BlockContents(n);
  return out->mutable_data();
}

// ReadTransientBlock's destination: the caller's scratch when the block fits,
// else a heap buffer, either way ending up in *out.
struct TransientContents {
  char* scratch;
  size_t scratch_size;
  BlockContents* out;
  TransientSource* source;
};
char* AllocateContents(TransientContents* t, size_t n) {
  if (n > t->scratch_size) return AllocateContents(t->out, n);
  *t->out = BlockContents::Borrowed(t->scratch, n);
  return t->scratch;
}

void MarkValuesCompressed(std::string*, bool) {}
void MarkValuesCompressed(BlockContents* out, bool v) {
  out->set_values_compressed(v);
}
void MarkValuesCompressed(TransientContents* t, bool v) {
  t->out->set_values_compressed(v);
}

void ClearContents(std::string* out) { out->clear(); }
void ClearContents(BlockContents* out) { *out = BlockContents(); }
void ClearContents(TransientContents* t) { *t->out = BlockContents(); }

[[gnu::cold]] Status ChecksumMismatch(const std::string& file_name,
                                     const BlockHandle& handle) {
  return Status::Corruption(file_name + ": block checksum mismatch at offset " +
                            std::to_string(handle.offset) + " (size " +
                            std::to_string(handle.size) + ")")
      .AtOffset(handle.offset);
}

// ReadBlock into either kind of buffer.
template <typename Contents>
Status ReadBlockInto(const RandomAccessFile* file, const std::string& file_name,
                     const BlockHandle& handle, bool verify_checksum,
                     Contents* contents, uint64_t* bytes_read) {
  if (handle.size > std::numeric_limits<size_t>::max() - kBlockTrailerSize) {
    return CorruptionAt(file_name, "block handle too large", handle.offset);
  }
  const size_t n = static_cast<size_t>(handle.size);
  // A mapped file returns its own bytes and ignores the scratch; whichever
  // way they come, they are checksummed where they lie and copied once, into
  // *contents (decompressed on the way when compressed).
  char stack_scratch[kStackScratchSize];
  std::string heap_scratch;
  char* scratch = stack_scratch;
  if (n + kBlockTrailerSize > sizeof(stack_scratch)) {
    heap_scratch.resize(n + kBlockTrailerSize);
    scratch = heap_scratch.data();
  }
  Slice got;
  Status s = file->Read(handle.offset, n + kBlockTrailerSize, &got, scratch);
  if (!s.ok()) return s;
  if (bytes_read != nullptr) *bytes_read += got.size();
  if (got.size() != n + kBlockTrailerSize) {
    return CorruptionAt(
        file_name,
        "truncated block read (size " + std::to_string(handle.size) + ")",
        handle.offset);
  }
  const char* p = got.data();
  // Bytes the file owns (a mapping) may have been lost under the copy or
  // the decompression below: asked again once they are used.
  const auto used = [&]() {
    return p == scratch ? Status::OK()
                        : file->Recheck(handle.offset, n + kBlockTrailerSize);
  };
  if constexpr (std::is_same_v<Contents, TransientContents>) {
    *contents->source = p != scratch ? TransientSource::kFileDecoded
                                     : TransientSource::kRead;
  }
  if (verify_checksum) {
    const uint32_t stored = DecodeFixed32(p + n + 1);
    if (stored != BlockChecksum(p, n + 1)) {
      return ChecksumMismatch(file_name, handle);
    }
  }
  const auto type = static_cast<CompressionType>(static_cast<uint8_t>(p[n]));
  switch (type) {
    case CompressionType::kLZ4Values:
      // Stored raw like kNone; its values are decoded one by one later.
      if constexpr (std::is_same_v<Contents, std::string>) {
        return CorruptionAt(file_name,
                            "block of compressed values where none belongs",
                            handle.offset);
      }
      [[fallthrough]];
    case CompressionType::kNone:
      if constexpr (std::is_same_v<Contents, TransientContents>) {
        if (p != scratch) {
          // The file's own bytes (a mapping), alive while the file is open.
          *contents->out = BlockContents::Borrowed(p, n);
          MarkValuesCompressed(contents, type == CompressionType::kLZ4Values);
          *contents->source = TransientSource::kFileInPlace;
          return Status::OK();
        }
      }
      if constexpr (std::is_same_v<Contents, std::string>) {
        if (!heap_scratch.empty() && p == heap_scratch.data()) {
          heap_scratch.resize(n);
          *contents = std::move(heap_scratch);
          return Status::OK();
        }
      }
      std::memcpy(AllocateContents(contents, n), p, n);
      MarkValuesCompressed(contents, type == CompressionType::kLZ4Values);
      return used();
    case CompressionType::kLZ4: {
      uint32_t raw_size;
      const char* q = GetVarint32Ptr(p, p + n, &raw_size);
      if (q == nullptr ||
          raw_size > static_cast<uint64_t>(n) * kMaxLZ4Ratio + 64 ||
          raw_size > static_cast<uint32_t>(LZ4_MAX_INPUT_SIZE)) {
        return CorruptionAt(file_name, "bad LZ4 block size header",
                            handle.offset);
      }
      const size_t compressed = static_cast<size_t>(p + n - q);
      if (compressed > static_cast<size_t>(LZ4_MAX_INPUT_SIZE)) {
        return CorruptionAt(file_name, "LZ4 block too large", handle.offset);
      }
      char* raw = AllocateContents(contents, raw_size);
      const int got_raw = LZ4_decompress_safe(
          q, raw, static_cast<int>(compressed), static_cast<int>(raw_size));
      if (got_raw < 0 || static_cast<uint32_t>(got_raw) != raw_size) {
        ClearContents(contents);
        return CorruptionAt(file_name, "corrupt LZ4 block", handle.offset);
      }
      return used();
    }
    case CompressionType::kZSTD: {
      uint32_t raw_size;
      const char* q = GetVarint32Ptr(p, p + n, &raw_size);
      if (q == nullptr ||
          raw_size > static_cast<uint64_t>(n) * kMaxZstdRatio + 64) {
        return CorruptionAt(file_name, "bad ZSTD block size header",
                            handle.offset);
      }
      const size_t compressed = static_cast<size_t>(p + n - q);
      char* raw = AllocateContents(contents, raw_size);
      const size_t got_raw = ZSTD_decompressDCtx(
          ThreadZstdDecompressor(), raw, raw_size, q, compressed);
      if (ZSTD_isError(got_raw) || got_raw != raw_size) {
        ClearContents(contents);
        return CorruptionAt(file_name, "corrupt ZSTD block", handle.offset);
      }
      return used();
    }
  }
  return CorruptionAt(file_name,
                      "unknown block compression type " +
                          std::to_string(static_cast<uint8_t>(p[n])),
                      handle.offset);
}

}  // namespace

Status ReadBlock(const RandomAccessFile* file, const std::string& file_name,
                 const BlockHandle& handle, bool verify_checksum,
                 std::string* contents, uint64_t* bytes_read) {
  return ReadBlockInto(file, file_name, handle, verify_checksum, contents,
                       bytes_read);
}

Status ReadBlock(const RandomAccessFile* file, const std::string& file_name,
                 const BlockHandle& handle, bool verify_checksum,
                 BlockContents* contents, uint64_t* bytes_read) {
  return ReadBlockInto(file, file_name, handle, verify_checksum, contents,
                       bytes_read);
}

Status ReadTransientBlock(const RandomAccessFile* file,
                          const std::string& file_name,
                          const BlockHandle& handle, bool verify_checksum,
                          char* scratch, size_t scratch_size,
                          BlockContents* contents, uint64_t* bytes_read,
                          TransientSource* source) {
  TransientContents t{scratch, scratch_size, contents, source};
  *source = TransientSource::kRead;
  return ReadBlockInto(file, file_name, handle, verify_checksum, &t,
                       bytes_read);
}

}  // namespace bloomkv
