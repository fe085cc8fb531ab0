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

// "1 edit", "2 edits".
std::string Plural(uint64_t n, const char* one, const char* many);

// "L3".
std::string LevelName(int level);

// A file number as in file names: "000042".
std::string FileNumber(uint64_t number);

// Printable ASCII stays as is, except '\' which becomes "\\"; tab, newline
// and carriage return become "\t", "\n", "\r"; every other byte becomes
// "\xNN" (lowercase hex).
std::string Printable(const Slice& bytes);

// Two lowercase hex digits per byte ("" for no bytes).
std::string Hex(const Slice& bytes);

// How keys and values are written on kvtool's command line, in its output
// and in `load` input. kEscaped is Printable()'s escaping, kHex is Hex(),
// kRaw takes the bytes as they are (input only: `load --raw`).
enum class ByteEncoding { kEscaped, kHex, kRaw };

// The bytes `text` stands for in `encoding`, into *bytes. Returns "" on
// success, or why `text` is not valid ("bad escape '\q' at byte 3", "odd
// number of hex digits", ...). Decoding kEscaped undoes Printable() exactly
// and accepts every byte but '\' as itself; kHex accepts either case.
std::string Decode(const Slice& text, ByteEncoding encoding,
                   std::string* bytes);

// At most max_chars of text, with "..." when cut.
std::string Truncated(std::string text, size_t max_chars);

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
