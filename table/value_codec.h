// Values compressed one by one (CompressionType::kLZ4Values, segment format
// version 3; docs/segment_format.md): each value is its own LZ4 block whose
// history is a dictionary taken from the segment's first values, so a point
// lookup decompresses the one value it returns (tens of nanoseconds)
// instead of a whole 4 KiB block (over a microsecond), and the data block
// holding it is stored raw: searched where it lies in a mapped file, like
// an uncompressed one, while the disk holds about what LZ4 blocks take.
//
// Stored form of one value (the value bytes of its block entry):
//   empty                     for an empty value
//   varint32(n) bytes[n]      the value itself, when LZ4 saved nothing
//   varint32(n) lz4[m], m < n one LZ4 block that decodes to n bytes with
//                             the segment's dictionary as its history
// Thread-safety: a ValueDictionary is immutable and may be shared; a
// ValueCompressor and a value-decoding iterator require external
// synchronization.
#ifndef BLOOMKV_TABLE_VALUE_CODEC_H_
#define BLOOMKV_TABLE_VALUE_CODEC_H_

#include <cstddef>
#include <memory>
#include <string>

#include "bloomkv/iterator.h"
#include "bloomkv/slice.h"
#include "bloomkv/status.h"

namespace bloomkv {

// How many bytes of the segment's first values make its dictionary: 8 KiB
// compressed short-link URLs best in bench/value_dictionary_bench (ratio
// 0.577 against 0.590 with 4 KiB and 0.579 with 16 KiB).
constexpr size_t kValueDictionaryBytes = 8 << 10;

// The value dictionary block, the first block of a version 3 segment of
// compressed values: the 8 bytes "BKVVDICT", then the dictionary. The
// magic lets a segment whose footer is lost be read from its front.
constexpr char kValueDictionaryMagic[] = "BKVVDICT";
constexpr size_t kValueDictionaryMagicSize = sizeof(kValueDictionaryMagic) - 1;
void EncodeValueDictionaryBlock(const Slice& dictionary, std::string* dst);
// The dictionary in a block's payload; false when it lacks the magic or
// holds more than kValueDictionaryBytes.
bool DecodeValueDictionaryBlock(const Slice& payload, Slice* dictionary);

// Encodes values for one segment. Not copyable.
class ValueCompressor {
 public:
  // dictionary: at most kValueDictionaryBytes (longer is cut).
  explicit ValueCompressor(const Slice& dictionary);
  ValueCompressor(const ValueCompressor&) = delete;
  ValueCompressor& operator=(const ValueCompressor&) = delete;
  ~ValueCompressor();

  const std::string& dictionary() const { return dictionary_; }
  // Appends the stored form of value to *dst.
  void Encode(const Slice& value, std::string* dst);

 private:
  struct Lz4;
  std::string dictionary_;
  std::unique_ptr<Lz4> lz4_;
  std::string frame_;  // scratch for one compressed value
};

// Decodes the values of one segment.
class ValueDictionary {
 public:
  explicit ValueDictionary(std::string bytes) : bytes_(std::move(bytes)) {}

  // The value whose stored form is `stored`, into *value; false, with
  // *value unspecified, when `stored` is malformed.
  bool Decode(const Slice& stored, std::string* value) const;
  Slice bytes() const { return Slice(bytes_); }
  // Bytes of memory held.
  size_t memory() const { return bytes_.capacity() + sizeof(*this); }

 private:
  const std::string bytes_;
};

// The length of the value whose stored form is `stored` (its varint32
// prefix) into *size; false when `stored` is malformed there.
bool StoredValueSize(const Slice& stored, uint32_t* size);

// Puts values into their stored form against one dictionary, for a
// compaction whose output segments all use it: the stored values of a
// segment with the same dictionary are copied as they are, with no LZ4
// work at all, and those of any other segment (raw values, LZ4 blocks, or
// another dictionary) are decoded and compressed against it. Not copyable;
// external synchronization required.
class ValueRecoder {
 public:
  // Whether a recoder can compress against `dictionary`: one of at most
  // kValueDictionaryBytes, as every segment writer makes.
  static bool CanUse(const ValueDictionary& dictionary) {
    return dictionary.bytes().size() <= kValueDictionaryBytes;
  }
  // REQUIRES: CanUse(*dictionary).
  explicit ValueRecoder(std::shared_ptr<const ValueDictionary> dictionary);
  ValueRecoder(const ValueRecoder&) = delete;
  ValueRecoder& operator=(const ValueRecoder&) = delete;
  ~ValueRecoder();

  const std::shared_ptr<const ValueDictionary>& dictionary() const {
    return dictionary_;
  }
  // Whether values stored against `other` are already in the stored form
  // this recoder makes (the same dictionary bytes). Remembers its last
  // answer, so that the blocks of one segment compare its dictionary once;
  // it keeps that dictionary alive meanwhile, so that no other can take
  // its address and be given its answer.
  bool SameDictionary(const std::shared_ptr<const ValueDictionary>& other);
  // Appends the stored form of (raw) value to *dst.
  void Encode(const Slice& value, std::string* dst) {
    compressor_.Encode(value, dst);
  }

 private:
  const std::shared_ptr<const ValueDictionary> dictionary_;
  ValueCompressor compressor_;
  std::shared_ptr<const ValueDictionary> last_compared_;
  bool last_same_ = false;
};

// Wraps an iterator over the entries of one data block of compressed
// values so that value() returns each value decoded. A value that does not
// decode ends the iteration with Corruption naming file_name and
// block_offset. REQUIRES: dictionary is not null; file_name outlives the
// iterator.
std::unique_ptr<Iterator> NewValueDecodingIterator(
    std::unique_ptr<Iterator> block_iter,
    std::shared_ptr<const ValueDictionary> dictionary,
    const std::string& file_name, uint64_t block_offset);

// Wraps an iterator over the entries of one data block so that value()
// returns each value in recoder's stored form: decoded with `dictionary`
// first when it is not null (a block of compressed values), taken as raw
// otherwise. A value that does not decode ends the iteration with
// Corruption naming file_name and block_offset. REQUIRES: recoder and
// file_name outlive the iterator.
std::unique_ptr<Iterator> NewValueRecodingIterator(
    std::unique_ptr<Iterator> block_iter,
    std::shared_ptr<const ValueDictionary> dictionary, ValueRecoder* recoder,
    const std::string& file_name, uint64_t block_offset);

}  // namespace bloomkv

#endif  // BLOOMKV_TABLE_VALUE_CODEC_H_
