// Slice: a pointer and a length into bytes owned by someone else.
//
// The caller must keep the referenced storage alive while the Slice is used.
// Keys and values are arbitrary bytes: a Slice may contain NUL.
// Thread-safety: const methods may be called concurrently; a Slice is a value.
#ifndef BLOOMKV_INCLUDE_SLICE_H_
#define BLOOMKV_INCLUDE_SLICE_H_

#include <cassert>
#include <cstddef>
#include <cstring>
#include <string>
#include <string_view>

namespace bloomkv {

class Slice {
 public:
  constexpr Slice() noexcept : data_(""), size_(0) {}
  constexpr Slice(const char* d, size_t n) noexcept : data_(d), size_(n) {}
  Slice(const std::string& s) noexcept : data_(s.data()), size_(s.size()) {}
  constexpr Slice(std::string_view s) noexcept
      : data_(s.data()), size_(s.size()) {}
  Slice(const char* s) noexcept : data_(s), size_(std::strlen(s)) {}

  constexpr const char* data() const { return data_; }
  constexpr size_t size() const { return size_; }
  constexpr bool empty() const { return size_ == 0; }
  const char* begin() const { return data_; }
  const char* end() const { return data_ + size_; }

  char operator[](size_t n) const {
    assert(n < size_);
    return data_[n];
  }

  void clear() {
    data_ = "";
    size_ = 0;
  }
  // REQUIRES: n <= size()
  void remove_prefix(size_t n) {
    assert(n <= size_);
    data_ += n;
    size_ -= n;
  }
  // REQUIRES: n <= size()
  void remove_suffix(size_t n) {
    assert(n <= size_);
    size_ -= n;
  }

  std::string ToString() const { return std::string(data_, size_); }
  std::string_view view() const { return std::string_view(data_, size_); }
  // Printable form for messages: non-printable bytes as \xNN.
  std::string ToEscapedString() const;

  // Three-way bytewise comparison: <0, 0, >0.
  int compare(const Slice& b) const {
    const size_t min_len = size_ < b.size_ ? size_ : b.size_;
    int r = min_len == 0 ? 0 : std::memcmp(data_, b.data_, min_len);
    if (r == 0) {
      if (size_ < b.size_) return -1;
      if (size_ > b.size_) return +1;
    }
    return r;
  }
  bool starts_with(const Slice& x) const {
    return size_ >= x.size_ &&
           (x.size_ == 0 || std::memcmp(data_, x.data_, x.size_) == 0);
  }

 private:
  const char* data_;
  size_t size_;
};

inline bool operator==(const Slice& x, const Slice& y) {
  return x.size() == y.size() &&
         (x.size() == 0 || std::memcmp(x.data(), y.data(), x.size()) == 0);
}
inline bool operator!=(const Slice& x, const Slice& y) { return !(x == y); }
inline bool operator<(const Slice& x, const Slice& y) {
  return x.compare(y) < 0;
}

}  // namespace bloomkv

#endif  // BLOOMKV_INCLUDE_SLICE_H_
