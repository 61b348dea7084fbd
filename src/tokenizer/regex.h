#pragma once
// A compiled PCRE2 pattern (UTF mode, Unicode properties, JIT where available).

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace prefix_scorer::tok {

class Regex {
 public:
  // Throws std::invalid_argument with PCRE2's message when the pattern does not compile.
  explicit Regex(const std::string& pattern);
  // A pattern that matches `literal` exactly.
  static Regex literal(const std::string& literal);

  // Byte ranges [begin, end) of the successive non-overlapping matches in `text` (empty matches skipped).
  std::vector<std::pair<size_t, size_t>> find_all(const std::string& text) const;

 private:
  struct Compiled;
  std::shared_ptr<const Compiled> compiled_;
};

}  // namespace prefix_scorer::tok
