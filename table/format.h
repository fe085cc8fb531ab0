// Segment file format primitives: block handles, the footer, the block
// trailer, and reading/writing one block with its compression and checksum.
//
// Every constant here is part of the on-disk format documented in
// docs/segment_format.md; those marked "never change: on disk" must keep their
// values forever (a new layout gets a new format version).
// Thread-safety: stateless functions and plain values.
#ifndef BLOOMKV_TABLE_FORMAT_H_
#define BLOOMKV_TABLE_FORMAT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "bloomkv/options.h"
#include "bloomkv/slice.h"
#include "bloomkv/status.h"

namespace bloomkv {

class RandomAccessFile;

// Never change: on disk. The last 8 bytes of every segment file.
// Stored little-endian, so the file ends with the ASCII bytes "BLOOMSEG".
constexpr uint64_t kSegmentMagicNumber = 0x4745534d4f4f4c42ull;
// Never change: on disk. Segment format versions (docs/segment_format.md).
// Version 2 adds the restart prefixes to data blocks (table/block_builder.h);
// everything else is version 1's. Version 3 adds data blocks whose values
// are compressed one by one (trailer type kLZ4Values, table/value_codec.h)
// and the value dictionary block they need; only segments written with
// kLZ4Values are version 3, the others stay version 2. All three are read.
constexpr uint32_t kSegmentFormatVersion1 = 1;
constexpr uint32_t kSegmentFormatVersion2 = 2;
constexpr uint32_t kSegmentFormatVersion3 = 3;
constexpr uint32_t kLatestSegmentFormatVersion = kSegmentFormatVersion3;
// LZ4 cannot expand data by more than about 255x: a stored uncompressed size
// above this multiple of the compressed bytes (plus 64) is corrupt, and
// rejecting it keeps a flipped varint from turning into a huge allocation.
constexpr uint64_t kMaxLZ4Ratio = 256;
// Never change: on disk. Bit 31 of a block's restart count: the restart
// prefixes follow the restart offsets (table/block_builder.h).
constexpr uint32_t kBlockKeyPrefixesFlag = 0x80000000u;
// Never change: on disk. Checksum type byte in the footer.
enum class ChecksumType : uint8_t {
  kXXH3Low32 = 1,  // low 32 bits of XXH3-64, seed 0 (util/hash.h)
};
// Never change: on disk. Every block is followed by a 1-byte compression
// type and a fixed32 checksum of the payload and the type byte.
constexpr size_t kBlockTrailerSize = 5;
// Never change: on disk. Three handles of two fixed64 each (48), checksum
// type (1), format version (4), footer checksum (4) over the 53 bytes before
// it, magic (8).
constexpr size_t kFooterSize = 3 * 16 + 1 + 4 + 4 + 8;

// Where a block's payload lives in the file. size excludes the trailer.
struct BlockHandle {
  uint64_t offset = 0;
  uint64_t size = 0;

  // Varint encoding, used in index block values.
  void EncodeTo(std::string* dst) const;
  // False if *input does not start with a well-formed handle.
  bool DecodeFrom(Slice* input);
};

struct Footer {
  BlockHandle filter_handle;  // size 0 and offset 0 when there is no filter
  BlockHandle properties_handle;
  BlockHandle index_handle;
  uint32_t format_version = kLatestSegmentFormatVersion;
  ChecksumType checksum_type = ChecksumType::kXXH3Low32;

  // Appends exactly kFooterSize bytes.
  void EncodeTo(std::string* dst) const;
  // input: the last kFooterSize bytes of the file. Validates magic, version,
  // checksum type and the footer checksum, in that order; file_name and
  // footer_offset go into error messages. An unknown version or checksum
  // type is NotSupported, anything else malformed is Corruption.
  Status DecodeFrom(const Slice& input, const std::string& file_name,
                    uint64_t footer_offset);
};

// Appends to *dst the payload to store for `raw` under `type`, and returns
// the type actually used: kNone when compression is unavailable or saves
// less than 1/8 of the block. An LZ4 payload is varint32(raw size) followed
// by the LZ4 block-format bytes; a ZSTD one varint32(raw size) followed by
// one Zstandard frame.
CompressionType CompressBlock(const Slice& raw, CompressionType type,
                              std::string* dst);

// CompressBlock never applies kLZ4Values (a whole block's worth of values
// is not compressed as one): it returns kNone for it, and SegmentBuilder
// compresses such a segment's values itself.
//
// "none", "lz4", "zstd", "lz4-values"; "unknown" for a value no build
// writes.
const char* CompressionTypeName(CompressionType type);

// Appends the 5-byte trailer for payload stored under type.
void AppendBlockTrailer(const Slice& payload, CompressionType type,
                        std::string* dst);

// The uncompressed bytes of one block: either a heap buffer of exactly their
// size, which the object owns, or bytes owned elsewhere (Borrowed). An owned
// buffer is not zero-filled when allocated: whoever allocates it writes
// every byte (a block read copies or decompresses into all of it).
// Move-only. Thread-safety: a plain value.
class BlockContents {
 public:
  BlockContents() = default;
  // n bytes of uninitialized storage, owned.
  explicit BlockContents(size_t n)
      : owned_(std::make_unique_for_overwrite<char[]>(n)),
        data_(owned_.get()),
        size_(n) {}
  // n bytes at data, which must outlive this object and every Block made
  // from it.
  static BlockContents Borrowed(const char* data, size_t n) {
    BlockContents c;
    c.data_ = data;
    c.size_ = n;
    return c;
  }

  BlockContents(BlockContents&& other) noexcept { *this = std::move(other); }
  BlockContents& operator=(BlockContents&& other) noexcept {
    owned_ = std::move(other.owned_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    values_compressed_ = std::exchange(other.values_compressed_, false);
    return *this;
  }

  // Whether the block's values are each compressed (stored under
  // kLZ4Values, table/value_codec.h): set by the block read.
  bool values_compressed() const { return values_compressed_; }
  void set_values_compressed(bool v) { values_compressed_ = v; }

  // The owned buffer, for filling it. REQUIRES: not Borrowed.
  char* mutable_data() { return owned_.get(); }
  const char* data() const { return data_; }
  size_t size() const { return size_; }
  Slice slice() const { return Slice(data_, size_); }

 private:
  std::unique_ptr<char[]> owned_;
  const char* data_ = nullptr;
  size_t size_ = 0;
  bool values_compressed_ = false;
};

// Reads the block at handle, checks its checksum when verify_checksum is
// set, and stores its uncompressed contents in *contents. Adds the bytes read
// to *bytes_read (if not null). Any malformation is Corruption naming
// file_name and handle.offset, and so is a block of compressed values
// (kLZ4Values), which only the BlockContents form below can mark: this form
// reads the metadata blocks.
Status ReadBlock(const RandomAccessFile* file, const std::string& file_name,
                 const BlockHandle& handle, bool verify_checksum,
                 std::string* contents, uint64_t* bytes_read);
// The same into a buffer that is never zero-filled first (a data block),
// marked values_compressed when stored under kLZ4Values.
Status ReadBlock(const RandomAccessFile* file, const std::string& file_name,
                 const BlockHandle& handle, bool verify_checksum,
                 BlockContents* contents, uint64_t* bytes_read);

// Where ReadTransientBlock found a block and left it.
enum class TransientSource {
  kRead,           // read into the caller's memory (pread)
  kFileDecoded,    // the file's own bytes (a mapping), decompressed from there
  kFileInPlace,    // the file's own bytes, stored raw and borrowed where they lie
};

// The same for a block that is searched once and dropped while scratch is
// still alive and the file still open (a point lookup whose block does not
// go to the cache): a block stored uncompressed in memory the file owns (a
// mapped file) is borrowed where it lies, one that fits in
// scratch[0..scratch_size-1] is read or decompressed into it, and only a
// larger one gets a heap buffer; *source tells which. The checksum is
// verified unless verify_checksum is false, which only a block verified
// before where it lies in the same mapping may ask for.
Status ReadTransientBlock(const RandomAccessFile* file,
                          const std::string& file_name,
                          const BlockHandle& handle, bool verify_checksum,
                          char* scratch, size_t scratch_size,
                          BlockContents* contents, uint64_t* bytes_read,
                          TransientSource* source);

// "<file_name>: <what> at offset <offset>" as a Corruption status. Cold:
// the paths that call it (with the messages they build) are laid out away
// from the lookups' hot code.
[[gnu::cold]] Status CorruptionAt(const std::string& file_name,
                                  const std::string& what, uint64_t offset);

}  // namespace bloomkv

#endif  // BLOOMKV_TABLE_FORMAT_H_
