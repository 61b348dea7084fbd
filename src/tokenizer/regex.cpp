#define PCRE2_CODE_UNIT_WIDTH 8
#include "tokenizer/regex.h"

#include <fmt/format.h>
#include <pcre2.h>

#include <stdexcept>

namespace prefix_scorer::tok {

struct Regex::Compiled {
  pcre2_code* code = nullptr;
  ~Compiled() { pcre2_code_free(code); }
};

Regex::Regex(const std::string& pattern) {
  int error = 0;
  PCRE2_SIZE offset = 0;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                   PCRE2_UTF | PCRE2_UCP | PCRE2_NO_UTF_CHECK, &error, &offset, nullptr);
  if (code == nullptr) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(error, message, sizeof(message));
    throw std::invalid_argument(fmt::format("bad regex '{}' at offset {}: {}", pattern, offset,
                                            reinterpret_cast<const char*>(message)));
  }
  pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);  // an interpreter fallback remains where JIT is unavailable
  auto compiled = std::make_shared<Compiled>();
  compiled->code = code;
  compiled_ = std::move(compiled);
}

Regex Regex::literal(const std::string& literal) { return Regex("\\Q" + literal + "\\E"); }

std::vector<std::pair<size_t, size_t>> Regex::find_all(const std::string& text) const {
  std::vector<std::pair<size_t, size_t>> found;
  std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> data(
      pcre2_match_data_create_from_pattern(compiled_->code, nullptr), &pcre2_match_data_free);
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  size_t at = 0;
  while (at <= text.size()) {
    const int rc = pcre2_match(compiled_->code, subject, text.size(), at, PCRE2_NO_UTF_CHECK, data.get(), nullptr);
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0) throw std::runtime_error(fmt::format("regex match failed with PCRE2 error {}", rc));
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(data.get());
    if (ov[1] > ov[0]) {
      found.emplace_back(ov[0], ov[1]);
      at = ov[1];
    } else {  // an empty match: step over one character
      at = ov[0] + 1;
      while (at < text.size() && (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80) ++at;
    }
  }
  return found;
}

}  // namespace prefix_scorer::tok
