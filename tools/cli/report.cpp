#include "report.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>

namespace flashattn::cli {

std::vector<std::size_t> Table::widths() const {
  std::vector<std::size_t> w;
  for (const Column& c : columns_) w.push_back(std::max(c.title.size(), c.min_width));
  for (const auto& row : rows_) {
    for (std::size_t i = 0; i < row.size() && i < w.size(); ++i) w[i] = std::max(w[i], row[i].size());
  }
  return w;
}

void Table::print_cells(std::ostream& os, const std::vector<std::string>& cells,
                        const std::vector<std::size_t>& widths) const {
  std::string line;
  for (std::size_t i = 0; i < columns_.size(); ++i) {
    const std::string cell = i < cells.size() ? cells[i] : "";
    const std::string pad(widths[i] > cell.size() ? widths[i] - cell.size() : 0, ' ');
    if (i > 0) line += "  ";
    line += columns_[i].right_align ? pad + cell : cell + pad;
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  os << line << '\n';
}

void Table::print_header(std::ostream& os) const {
  const std::vector<std::size_t> w = widths();
  std::vector<std::string> titles;
  std::vector<std::string> rules;
  for (std::size_t i = 0; i < columns_.size(); ++i) {
    titles.push_back(columns_[i].title);
    rules.emplace_back(w[i], '-');
  }
  print_cells(os, titles, w);
  print_cells(os, rules, w);
}

void Table::print_row(std::ostream& os, const std::vector<std::string>& cells) const {
  print_cells(os, cells, widths());
  os.flush();
}

void Table::print(std::ostream& os) const {
  print_header(os);
  const std::vector<std::size_t> w = widths();
  for (const auto& row : rows_) print_cells(os, row, w);
}

bool is_terminal(std::FILE* stream) { return isatty(fileno(stream)) != 0; }

ProgressBar::ProgressBar(std::FILE* stream, int total)
    : stream_(stream), total_(std::max(total, 1)), active_(is_terminal(stream)) {}

void ProgressBar::update(int done, const std::string& label) {
  if (!active_) return;
  constexpr int kWidth = 30;
  const int filled = done * kWidth / total_;
  std::string bar(static_cast<std::size_t>(filled), '#');
  bar.append(static_cast<std::size_t>(kWidth - filled), '.');
  // \r plus clear-to-end-of-line: redraw in place, whatever the previous label's length.
  std::fprintf(stream_, "\r\033[K[%s] %d/%d %s", bar.c_str(), done, total_, label.c_str());
  std::fflush(stream_);
}

void ProgressBar::clear() {
  if (!active_) return;
  std::fprintf(stream_, "\r\033[K");
  std::fflush(stream_);
}

std::string json_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out;
}

void JsonObject::key(const std::string& k) {
  if (!body_.empty()) body_ += ", ";
  // Appended piecewise: "literal" + std::string&& trips GCC 12's -Wrestrict false positive.
  body_ += '"';
  body_ += json_escape(k);
  body_ += "\": ";
}

JsonObject& JsonObject::add(const std::string& k, const std::string& value) {
  key(k);
  body_ += '"';
  body_ += json_escape(value);
  body_ += '"';
  return *this;
}

JsonObject& JsonObject::add(const std::string& k, double value) {
  key(k);
  if (!std::isfinite(value)) {
    body_ += "null";  // JSON has no inf/NaN
  } else {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", value);
    body_ += buf;
  }
  return *this;
}

JsonObject& JsonObject::add(const std::string& k, long long value) {
  key(k);
  body_ += std::to_string(value);
  return *this;
}

JsonObject& JsonObject::add(const std::string& k, bool value) {
  key(k);
  body_ += value ? "true" : "false";
  return *this;
}

JsonObject& JsonObject::add_raw(const std::string& k, const std::string& json) {
  key(k);
  body_ += json;
  return *this;
}

std::string fixed(double value, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
  return buf;
}

std::string scientific(double value) {
  if (std::isinf(value)) return "inf";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2e", value);
  return buf;
}

}  // namespace flashattn::cli
