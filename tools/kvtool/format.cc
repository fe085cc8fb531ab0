// Output formatting; see format.h.
#include "tools/kvtool/format.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>

namespace bloomkv::kvtool {

std::string HumanBytes(uint64_t bytes) {
  static const char* const kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
  if (bytes < 1024) return std::to_string(bytes) + " B";
  double v = static_cast<double>(bytes) / 1024;
  size_t unit = 0;
  while (v >= 1024 && unit + 1 < std::size(kUnits)) {
    v /= 1024;
    unit++;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f %s", v, kUnits[unit]);
  return buf;
}

std::string Percent(double rate) {
  if (!std::isfinite(rate)) return "-";
  const double pct = rate * 100;
  char buf[32];
  if (pct == 0) return "0%";
  if (pct >= 99.995) return "100%";
  if (pct >= 10) {
    std::snprintf(buf, sizeof(buf), "%.1f%%", pct);
  } else if (pct >= 0.1) {
    std::snprintf(buf, sizeof(buf), "%.2f%%", pct);
  } else {
    // Three significant digits, so 0.0012% and 0.0034% stay distinct.
    std::snprintf(buf, sizeof(buf), "%.3g%%", pct);
  }
  return buf;
}

std::string Ratio(double ratio) {
  if (!std::isfinite(ratio)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2fx", ratio);
  return buf;
}

std::string Fixed(double value, int digits) {
  if (!std::isfinite(value)) return "-";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, value);
  return buf;
}

std::string Plural(uint64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string LevelName(int level) { return "L" + std::to_string(level); }

std::string FileNumber(uint64_t number) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%06" PRIu64, number);
  return buf;
}

std::string Printable(const Slice& bytes) {
  static const char kHex[] = "0123456789abcdef";
  std::string r;
  r.reserve(bytes.size());
  for (size_t i = 0; i < bytes.size(); i++) {
    const unsigned char c = static_cast<unsigned char>(bytes[i]);
    switch (c) {
      case '\\':
        r += "\\\\";
        break;
      case '\t':
        r += "\\t";
        break;
      case '\n':
        r += "\\n";
        break;
      case '\r':
        r += "\\r";
        break;
      default:
        if (c >= 0x20 && c < 0x7f) {
          r += static_cast<char>(c);
        } else {
          r += "\\x";
          r += kHex[c >> 4];
          r += kHex[c & 0xf];
        }
    }
  }
  return r;
}

std::string Hex(const Slice& bytes) {
  static const char kHex[] = "0123456789abcdef";
  std::string r;
  r.reserve(2 * bytes.size());
  for (size_t i = 0; i < bytes.size(); i++) {
    const unsigned char c = static_cast<unsigned char>(bytes[i]);
    r += kHex[c >> 4];
    r += kHex[c & 0xf];
  }
  return r;
}

namespace {

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string DecodeHex(const Slice& text, std::string* bytes) {
  if (text.size() % 2 != 0) return "odd number of hex digits";
  bytes->reserve(text.size() / 2);
  for (size_t i = 0; i < text.size(); i += 2) {
    const int hi = HexDigit(text[i]);
    const int lo = HexDigit(text[i + 1]);
    if (hi < 0 || lo < 0) {
      return "not a hex digit at byte " + std::to_string(hi < 0 ? i : i + 1);
    }
    bytes->push_back(static_cast<char>(hi << 4 | lo));
  }
  return "";
}

std::string Unescape(const Slice& text, std::string* bytes) {
  bytes->reserve(text.size());
  for (size_t i = 0; i < text.size(); i++) {
    if (text[i] != '\\') {
      bytes->push_back(text[i]);
      continue;
    }
    if (i + 1 == text.size()) {
      return "'\\' at the end (write '\\\\' for a backslash)";
    }
    const char e = text[++i];
    switch (e) {
      case '\\':
        bytes->push_back('\\');
        break;
      case 't':
        bytes->push_back('\t');
        break;
      case 'n':
        bytes->push_back('\n');
        break;
      case 'r':
        bytes->push_back('\r');
        break;
      case 'x': {
        const int hi = i + 1 < text.size() ? HexDigit(text[i + 1]) : -1;
        const int lo = i + 2 < text.size() ? HexDigit(text[i + 2]) : -1;
        if (hi < 0 || lo < 0) {
          return "'\\x' without two hex digits at byte " +
                 std::to_string(i - 1);
        }
        bytes->push_back(static_cast<char>(hi << 4 | lo));
        i += 2;
        break;
      }
      default:
        return "bad escape '\\" + Printable(Slice(&e, 1)) + "' at byte " +
               std::to_string(i - 1) + " (write '\\\\' for a backslash)";
    }
  }
  return "";
}

}  // namespace

std::string Decode(const Slice& text, ByteEncoding encoding,
                   std::string* bytes) {
  bytes->clear();
  switch (encoding) {
    case ByteEncoding::kEscaped:
      return Unescape(text, bytes);
    case ByteEncoding::kHex:
      return DecodeHex(text, bytes);
    case ByteEncoding::kRaw:
      bytes->assign(text.data(), text.size());
      return "";
  }
  return "unknown encoding";
}

std::string Truncated(std::string text, size_t max_chars) {
  if (text.size() > max_chars) {
    text.resize(max_chars);
    text += "...";
  }
  return text;
}

Table::Table(std::vector<std::string> header, std::vector<bool> right_aligned)
    : header_(std::move(header)), right_aligned_(std::move(right_aligned)) {
  right_aligned_.resize(header_.size(), false);
}

void Table::AddRow(std::vector<std::string> row) {
  row.resize(header_.size());
  rows_.push_back(std::move(row));
}

void Table::Print(std::ostream& out) const {
  std::vector<size_t> width(header_.size());
  for (size_t c = 0; c < header_.size(); c++) {
    width[c] = header_[c].size();
    for (const auto& row : rows_) width[c] = std::max(width[c], row[c].size());
  }
  auto print_row = [&](const std::vector<std::string>& row) {
    std::string line;
    for (size_t c = 0; c < row.size(); c++) {
      if (c > 0) line += "  ";
      const std::string pad(width[c] - row[c].size(), ' ');
      if (right_aligned_[c]) {
        line += pad + row[c];
      } else if (c + 1 < row.size()) {
        line += row[c] + pad;
      } else {
        line += row[c];  // no trailing blanks on the last column
      }
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << "\n";
  };
  print_row(header_);
  std::vector<std::string> rule;
  for (size_t w : width) rule.push_back(std::string(w, '-'));
  print_row(rule);
  for (const auto& row : rows_) print_row(row);
}

}  // namespace bloomkv::kvtool
