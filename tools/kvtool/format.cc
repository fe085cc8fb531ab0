// Output formatting; see format.h.
#include "tools/kvtool/format.h"

#include <algorithm>
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

std::string PrintableTruncated(const Slice& bytes, size_t max_chars) {
  std::string r = Printable(bytes);
  if (r.size() > max_chars) {
    r.resize(max_chars);
    r += "...";
  }
  return r;
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
