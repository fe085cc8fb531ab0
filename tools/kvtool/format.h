// Human-readable output for kvtool: sizes, rates, escaped keys and aligned
// tables.
//
// Keys and values are arbitrary bytes; Printable() makes them safe for a
// terminal and for JSON (which must be valid UTF-8) with one reversible
// escaping used everywhere kvtool prints user data.
// Thread-safety: stateless functions; a Table needs external synchronization.
#ifndef BLOOMKV_TOOLS_KVTOOL_FORMAT_H_
#define BLOOMKV_TOOLS_KVTOOL_FORMAT_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "bloomkv/slice.h"

namespace bloomkv::kvtool {

// "512 B", "1.5 KiB", "12.0 MiB", "3.2 GiB".
std::string HumanBytes(uint64_t bytes);

// A rate in [0, 1] as a percentage with enough digits to tell small rates
// apart: "0%", "0.0123%", "0.82%", "12.5%", "100%".
std::string Percent(double rate);

// A ratio such as a compression ratio: "2.41x".
std::string Ratio(double ratio);

// Fixed-point number with `digits` decimals.
std::string Fixed(double value, int digits);

// Printable ASCII stays as is, except '\' which becomes "\\"; tab, newline
// and carriage return become "\t", "\n", "\r"; every other byte becomes
// "\xNN" (lowercase hex).
std::string Printable(const Slice& bytes);

// At most max_chars of Printable(bytes), with "..." when cut.
std::string PrintableTruncated(const Slice& bytes, size_t max_chars);

// Columns separated by two spaces, each as wide as its widest cell; cells of
// right-aligned columns (numbers) are padded on the left.
class Table {
 public:
  // right_aligned[i] says how column i aligns; missing entries are left.
  explicit Table(std::vector<std::string> header,
                 std::vector<bool> right_aligned = {});
  Table(const Table&) = delete;
  Table& operator=(const Table&) = delete;

  void AddRow(std::vector<std::string> row);
  // Prints the header, a rule and every row.
  void Print(std::ostream& out) const;

 private:
  std::vector<std::string> header_;
  std::vector<bool> right_aligned_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace bloomkv::kvtool

#endif  // BLOOMKV_TOOLS_KVTOOL_FORMAT_H_
