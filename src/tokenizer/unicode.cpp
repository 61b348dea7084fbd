#include "tokenizer/unicode.h"

#include <fmt/format.h>
#include <utf8proc.h>

#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <unordered_map>

namespace prefix_scorer::tok {
namespace {

std::string normalize(const std::string& text, utf8proc_option_t options) {
  utf8proc_uint8_t* out = nullptr;
  const auto len = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(text.data()),
                                static_cast<utf8proc_ssize_t>(text.size()), &out, options);
  if (len < 0) throw std::invalid_argument(fmt::format("cannot normalize text: {}", utf8proc_errmsg(len)));
  std::unique_ptr<utf8proc_uint8_t, decltype(&std::free)> owned(out, &std::free);
  return std::string(reinterpret_cast<const char*>(out), static_cast<size_t>(len));
}

}  // namespace

// Calls f(code point) for each character of `text`; throws on the first invalid UTF-8 sequence.
template <typename F>
void for_each_code_point(const std::string& text, F&& f) {
  const auto* p = reinterpret_cast<const utf8proc_uint8_t*>(text.data());
  utf8proc_ssize_t at = 0;
  const auto n = static_cast<utf8proc_ssize_t>(text.size());
  while (at < n) {
    utf8proc_int32_t cp = 0;
    const auto used = utf8proc_iterate(p + at, n - at, &cp);
    if (used < 0) throw std::invalid_argument(fmt::format("invalid UTF-8 at byte {} of the text", at));
    f(cp);
    at += used;
  }
}

void check_utf8(const std::string& text) {
  for_each_code_point(text, [](int32_t) {});
}

std::vector<int32_t> code_points(const std::string& text) {
  std::vector<int32_t> out;
  for_each_code_point(text, [&](int32_t cp) { out.push_back(cp); });
  return out;
}

std::string to_utf8(int32_t code_point) {
  utf8proc_uint8_t buf[4];
  const auto n = utf8proc_encode_char(code_point, buf);
  return std::string(reinterpret_cast<const char*>(buf), static_cast<size_t>(n));
}

std::vector<std::string> characters(const std::string& text) {
  std::vector<std::string> out;
  for (int32_t cp : code_points(text)) out.push_back(to_utf8(cp));
  return out;
}

std::string nfc(const std::string& text) {
  return normalize(text, static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE));
}

std::string nfkc(const std::string& text) {
  return normalize(text, static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE | UTF8PROC_COMPAT));
}

std::string lowercase(const std::string& text) {
  std::string out;
  for (int32_t cp : code_points(text)) {
    // Rust's char::to_lowercase (HF's Lowercase) applies the one unconditional many-character lowercase mapping
    // of SpecialCasing.txt; utf8proc maps single characters only.
    out += cp == 0x130 ? std::string("i\xCC\x87") : to_utf8(utf8proc_tolower(cp));
  }
  return out;
}

bool is_space(int32_t c) {
  return (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x20) || c == 0x85 || c == 0xa0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 || c == 0x202f || c == 0x205f || c == 0x3000;
}

bool is_word_character(int32_t c) {
  if (c == 0x200C || c == 0x200D) return true;
  if ((c >= 0x24B6 && c <= 0x24E9) || (c >= 0x1F130 && c <= 0x1F149) || (c >= 0x1F150 && c <= 0x1F169) ||
      (c >= 0x1F170 && c <= 0x1F189))
    return true;  // symbols that Unicode counts as Alphabetic (Other_Alphabetic)
  switch (utf8proc_category(c)) {
    case UTF8PROC_CATEGORY_LU: case UTF8PROC_CATEGORY_LL: case UTF8PROC_CATEGORY_LT: case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO: case UTF8PROC_CATEGORY_NL: case UTF8PROC_CATEGORY_ND: case UTF8PROC_CATEGORY_MN:
    case UTF8PROC_CATEGORY_MC: case UTF8PROC_CATEGORY_ME: case UTF8PROC_CATEGORY_PC:
      return true;
    default:
      return false;
  }
}

const std::vector<int32_t>& byte_to_code_point() {
  static const std::vector<int32_t> table = [] {
    std::vector<int32_t> t(256);
    int32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
      t[b] = printable ? b : next++;
    }
    return t;
  }();
  return table;
}

int byte_of_code_point(int32_t code_point) {
  static const std::unordered_map<int32_t, int> inverse = [] {
    std::unordered_map<int32_t, int> m;
    for (int b = 0; b < 256; ++b) m[byte_to_code_point()[b]] = b;
    return m;
  }();
  auto it = inverse.find(code_point);
  return it == inverse.end() ? -1 : it->second;
}

}  // namespace prefix_scorer::tok
