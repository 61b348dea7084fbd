// Normalizers: NFC, NFKC, Lowercase, Prepend, Replace, Sequence.

#include "tokenizer/pipeline.h"
#include "tokenizer/regex.h"
#include "tokenizer/unicode.h"

#include <fmt/format.h>

#include <stdexcept>

namespace prefix_scorer::tok {
namespace {

// A "pattern" object: {"String": s} or {"Regex": r}.
Regex pattern_of(const nlohmann::json& pattern) {
  if (pattern.contains("String")) return Regex::literal(pattern.at("String").get<std::string>());
  if (pattern.contains("Regex")) return Regex(pattern.at("Regex").get<std::string>());
  throw std::invalid_argument(fmt::format("unsupported pattern {}", pattern.dump()));
}

std::string replace_all(const Regex& pattern, const std::string& content, const std::string& text) {
  std::string out;
  size_t at = 0;
  for (const auto& [b, e] : pattern.find_all(text)) {
    out.append(text, at, b - at);
    out += content;
    at = e;
  }
  return out + text.substr(at);
}

}  // namespace

Normalizer make_normalizer(const nlohmann::json& spec) {
  if (spec.is_null()) return [](const std::string& s) { return s; };
  const std::string type = spec.at("type").get<std::string>();
  if (type == "NFC") return nfc;
  if (type == "NFKC") return nfkc;
  if (type == "Lowercase") return lowercase;
  if (type == "Prepend") {
    const std::string prefix = spec.at("prepend").get<std::string>();
    return [prefix](const std::string& s) { return s.empty() ? s : prefix + s; };
  }
  if (type == "Replace") {
    const Regex pattern = pattern_of(spec.at("pattern"));
    const std::string content = spec.at("content").get<std::string>();
    return [pattern, content](const std::string& s) { return replace_all(pattern, content, s); };
  }
  if (type == "Sequence") {
    std::vector<Normalizer> steps;
    for (const auto& step : spec.at("normalizers")) steps.push_back(make_normalizer(step));
    return [steps](const std::string& s) {
      std::string out = s;
      for (const auto& step : steps) out = step(out);
      return out;
    };
  }
  throw std::invalid_argument(fmt::format("unsupported normalizer type '{}'", type));
}

}  // namespace prefix_scorer::tok
