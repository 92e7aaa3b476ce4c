// Output: aligned text tables, a progress bar for terminals, JSON records.
#pragma once

#include <cstdio>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace flashattn::cli {

// A text table printed with columns padded to their widest cell. Rows can be
// printed as they arrive (print_header once, then print_row) when the widths
// are fixed up front, or all at once with print().
class Table {
 public:
  struct Column {
    std::string title;
    bool right_align = false;
    std::size_t min_width = 0;
  };
  explicit Table(std::vector<Column> columns) : columns_(std::move(columns)) {}

  void add_row(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }
  void print(std::ostream& os) const;
  void print_header(std::ostream& os) const;
  void print_row(std::ostream& os, const std::vector<std::string>& cells) const;

 private:
  std::vector<std::size_t> widths() const;
  void print_cells(std::ostream& os, const std::vector<std::string>& cells,
                   const std::vector<std::size_t>& widths) const;

  std::vector<Column> columns_;
  std::vector<std::vector<std::string>> rows_;
};

// "[#####.....] 12/36 label" redrawn in place on a terminal; silent otherwise.
class ProgressBar {
 public:
  ProgressBar(std::FILE* stream, int total);
  void update(int done, const std::string& label);
  void clear();
  bool active() const { return active_; }

 private:
  std::FILE* stream_;
  int total_;
  bool active_;
};

bool is_terminal(std::FILE* stream);

// One JSON object written field by field.
class JsonObject {
 public:
  JsonObject& add(const std::string& key, const std::string& value);
  JsonObject& add(const std::string& key, const char* value) { return add(key, std::string(value)); }
  JsonObject& add(const std::string& key, double value);
  JsonObject& add(const std::string& key, long long value);
  JsonObject& add(const std::string& key, bool value);
  JsonObject& add_raw(const std::string& key, const std::string& json);
  std::string str() const { return "{" + body_ + "}"; }

 private:
  void key(const std::string& k);
  std::string body_;
};

std::string json_escape(const std::string& text);

// Number formatting for tables: "%.*f", or "%.2e" for tiny errors.
std::string fixed(double value, int decimals);
std::string scientific(double value);

}  // namespace flashattn::cli
