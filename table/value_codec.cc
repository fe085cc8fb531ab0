// Values compressed one by one; see value_codec.h.
//
// Compression goes through LZ4's frame API: its CDict holds the prepared
// dictionary, and each value starts from it without the dictionary being
// hashed or copied again (the block-level API can do that only with
// LZ4_attach_dictionary, which Debian's shared liblz4 does not export).
// Each value becomes a frame of one independent block with no checksums,
// content size or dictionary ID; the block is taken out of the frame (the
// LZ4 frame format, lz4_Frame_format.md, is stable) and decoded with
// LZ4_decompress_safe_usingDict, the block API. The frame's header is
// checked rather than assumed: anything else is stored raw.
#include "table/value_codec.h"

#define LZ4F_STATIC_LINKING_ONLY  // the CDict functions, exported by liblz4
#include <lz4.h>
#include <lz4frame.h>

#include <algorithm>
#include <cassert>
#include <cstring>

#include "table/format.h"
#include "util/coding.h"

namespace bloomkv {

namespace {

constexpr uint32_t kFrameMagic = 0x184D2204;
// Magic, FLG, BD and the header checksum, with no optional field.
constexpr size_t kFrameHeaderSize = 7;
constexpr size_t kBlockSizeField = 4;
constexpr uint32_t kUncompressedBlockFlag = 0x80000000u;
// Values above this stay raw: one frame block holds at most 4 MiB.
constexpr size_t kMaxCompressedValue = 4 << 20;

LZ4F_preferences_t FramePreferences() {
  LZ4F_preferences_t prefs;
  std::memset(&prefs, 0, sizeof(prefs));
  prefs.frameInfo.blockMode = LZ4F_blockIndependent;
  prefs.frameInfo.blockSizeID = LZ4F_max4MB;
  prefs.frameInfo.contentChecksumFlag = LZ4F_noContentChecksum;
  prefs.frameInfo.blockChecksumFlag = LZ4F_noBlockChecksum;
  return prefs;
}

}  // namespace

void EncodeValueDictionaryBlock(const Slice& dictionary, std::string* dst) {
  dst->append(kValueDictionaryMagic, kValueDictionaryMagicSize);
  dst->append(dictionary.data(), dictionary.size());
}

bool DecodeValueDictionaryBlock(const Slice& payload, Slice* dictionary) {
  if (payload.size() < kValueDictionaryMagicSize ||
      payload.size() > kValueDictionaryMagicSize + kValueDictionaryBytes ||
      std::memcmp(payload.data(), kValueDictionaryMagic,
                  kValueDictionaryMagicSize) != 0) {
    return false;
  }
  *dictionary = Slice(payload.data() + kValueDictionaryMagicSize,
                      payload.size() - kValueDictionaryMagicSize);
  return true;
}

struct ValueCompressor::Lz4 {
  LZ4F_cctx* cctx = nullptr;
  LZ4F_CDict* cdict = nullptr;
  LZ4F_preferences_t prefs = FramePreferences();
  ~Lz4() {
    LZ4F_freeCompressionContext(cctx);
    LZ4F_freeCDict(cdict);
  }
};

ValueCompressor::ValueCompressor(const Slice& dictionary)
    : dictionary_(dictionary.data(),
                  std::min(dictionary.size(), kValueDictionaryBytes)),
      lz4_(std::make_unique<Lz4>()) {
  if (LZ4F_isError(LZ4F_createCompressionContext(&lz4_->cctx, LZ4F_VERSION))) {
    lz4_->cctx = nullptr;
  }
  lz4_->cdict = LZ4F_createCDict(dictionary_.data(), dictionary_.size());
}

ValueCompressor::~ValueCompressor() = default;

void ValueCompressor::Encode(const Slice& value, std::string* dst) {
  if (value.empty()) return;
  PutVarint32(dst, static_cast<uint32_t>(value.size()));
  if (value.size() <= kMaxCompressedValue && lz4_->cctx != nullptr &&
      lz4_->cdict != nullptr) {
    frame_.resize(LZ4F_compressFrameBound(value.size(), &lz4_->prefs));
    const size_t n = LZ4F_compressFrame_usingCDict(
        lz4_->cctx, frame_.data(), frame_.size(), value.data(), value.size(),
        lz4_->cdict, &lz4_->prefs);
    const char* f = frame_.data();
    if (!LZ4F_isError(n) && n >= kFrameHeaderSize + kBlockSizeField &&
        DecodeFixed32(f) == kFrameMagic &&
        (static_cast<uint8_t>(f[4]) & 0x0f) == 0) {  // no optional field
      const uint32_t block = DecodeFixed32(f + kFrameHeaderSize);
      // One compressed block, then the 4-byte end mark, and nothing else.
      if ((block & kUncompressedBlockFlag) == 0 && block < value.size() &&
          n == kFrameHeaderSize + kBlockSizeField + block + 4) {
        dst->append(f + kFrameHeaderSize + kBlockSizeField, block);
        return;
      }
    }
  }
  dst->append(value.data(), value.size());
}

bool ValueDictionary::Decode(const Slice& stored, std::string* value) const {
  if (stored.empty()) {
    value->clear();
    return true;
  }
  uint32_t n;
  const char* p = GetVarint32Ptr(stored.data(), stored.data() + stored.size(),
                                 &n);
  if (p == nullptr) return false;
  const auto body = static_cast<size_t>(stored.data() + stored.size() - p);
  if (body == n) {
    value->assign(p, n);
    return true;
  }
  if (body > n || n > body * kMaxLZ4Ratio + 64 ||
      n > static_cast<uint32_t>(LZ4_MAX_INPUT_SIZE)) {
    return false;
  }
  value->resize(n);
  const int got = LZ4_decompress_safe_usingDict(
      p, value->data(), static_cast<int>(body), static_cast<int>(n),
      bytes_.data(), static_cast<int>(bytes_.size()));
  return got >= 0 && static_cast<uint32_t>(got) == n;
}

bool StoredValueSize(const Slice& stored, uint32_t* size) {
  if (stored.empty()) {
    *size = 0;
    return true;
  }
  return GetVarint32Ptr(stored.data(), stored.data() + stored.size(), size) !=
         nullptr;
}

ValueRecoder::ValueRecoder(std::shared_ptr<const ValueDictionary> dictionary)
    : dictionary_(std::move(dictionary)), compressor_(dictionary_->bytes()) {
  assert(CanUse(*dictionary_));
}

ValueRecoder::~ValueRecoder() = default;

bool ValueRecoder::SameDictionary(
    const std::shared_ptr<const ValueDictionary>& other) {
  if (other != last_compared_) {
    last_compared_ = other;
    last_same_ = other != nullptr && other->bytes() == dictionary_->bytes();
  }
  return last_same_;
}

namespace {

// Decodes each value with `dictionary` (unless null: raw values), then
// encodes it with `recoder` (unless null: decoded values).
class ValueConvertingIterator final : public Iterator {
 public:
  ValueConvertingIterator(std::unique_ptr<Iterator> it,
                          std::shared_ptr<const ValueDictionary> dictionary,
                          ValueRecoder* recoder, const std::string& file_name,
                          uint64_t block_offset)
      : it_(std::move(it)),
        dictionary_(std::move(dictionary)),
        recoder_(recoder),
        file_name_(file_name),
        block_offset_(block_offset) {}

  bool Valid() const override { return status_.ok() && it_->Valid(); }
  void SeekToFirst() override {
    status_ = Status::OK();
    it_->SeekToFirst();
    DecodeValue();
  }
  void SeekToLast() override {
    status_ = Status::OK();
    it_->SeekToLast();
    DecodeValue();
  }
  void Seek(const Slice& target) override {
    status_ = Status::OK();
    it_->Seek(target);
    DecodeValue();
  }
  void SeekForPrev(const Slice& target) override {
    status_ = Status::OK();
    it_->SeekForPrev(target);
    DecodeValue();
  }
  void Next() override {
    if (!Valid()) return;
    it_->Next();
    DecodeValue();
  }
  void Prev() override {
    if (!Valid()) return;
    it_->Prev();
    DecodeValue();
  }
  Slice key() const override { return it_->key(); }
  Slice value() const override { return value_; }
  Status status() const override {
    return status_.ok() ? it_->status() : status_;
  }

 private:
  // Converts the value the wrapped iterator now stands on.
  void DecodeValue() {
    if (!it_->Valid()) return;
    Slice raw = it_->value();
    if (dictionary_ != nullptr) {
      if (!dictionary_->Decode(raw, &decoded_)) {
        status_ = CorruptionAt(file_name_,
                               "corrupt compressed value in data block",
                               block_offset_);
        return;
      }
      raw = Slice(decoded_);
    }
    if (recoder_ == nullptr) {
      value_ = raw;
    } else {
      encoded_.clear();
      recoder_->Encode(raw, &encoded_);
      value_ = Slice(encoded_);
    }
  }

  const std::unique_ptr<Iterator> it_;
  const std::shared_ptr<const ValueDictionary> dictionary_;
  ValueRecoder* const recoder_;
  const std::string& file_name_;
  const uint64_t block_offset_;
  std::string decoded_;
  std::string encoded_;
  Slice value_;
  Status status_;
};

}  // namespace

std::unique_ptr<Iterator> NewValueDecodingIterator(
    std::unique_ptr<Iterator> block_iter,
    std::shared_ptr<const ValueDictionary> dictionary,
    const std::string& file_name, uint64_t block_offset) {
  return std::make_unique<ValueConvertingIterator>(
      std::move(block_iter), std::move(dictionary), nullptr, file_name,
      block_offset);
}

std::unique_ptr<Iterator> NewValueRecodingIterator(
    std::unique_ptr<Iterator> block_iter,
    std::shared_ptr<const ValueDictionary> dictionary, ValueRecoder* recoder,
    const std::string& file_name, uint64_t block_offset) {
  return std::make_unique<ValueConvertingIterator>(
      std::move(block_iter), std::move(dictionary), recoder, file_name,
      block_offset);
}

}  // namespace bloomkv
