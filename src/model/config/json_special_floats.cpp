#include "model/config/json_special_floats.h"

#include <fmt/format.h>

#include <cctype>
#include <limits>
#include <stdexcept>

namespace prefix_scorer {

std::string quote_special_floats(const std::string& text) {
  static const char* const kTokens[] = {"-Infinity", "Infinity", "NaN"};
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (in_string) {
      out += ch;
      if (ch == '\\' && i + 1 < text.size()) {
        out += text[++i];
      } else if (ch == '"') {
        in_string = false;
      }
      continue;
    }
    if (ch == '"') in_string = true;
    const bool token_start = i == 0 || !(std::isalnum(static_cast<unsigned char>(text[i - 1])) || text[i - 1] == '_');
    bool replaced = false;
    for (const char* token : kTokens) {
      const std::string t = token;
      const size_t end = i + t.size();
      const bool token_end = end >= text.size() || !(std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '_');
      if (token_start && text.compare(i, t.size(), t) == 0 && token_end) {
        out += fmt::format("{{\"__float__\": \"{}\"}}", t);
        i = end - 1;
        replaced = true;
        break;
      }
    }
    if (!replaced) out += ch;
  }
  return out;
}

double json_float(const nlohmann::json& value, const std::string& what) {
  if (value.is_number()) return value.get<double>();
  if (value.is_object() && value.size() == 1 && value.contains("__float__") && value["__float__"].is_string()) {
    const std::string tag = value["__float__"].get<std::string>();
    if (tag == "Infinity") return std::numeric_limits<double>::infinity();
    if (tag == "-Infinity") return -std::numeric_limits<double>::infinity();
    if (tag == "NaN") return std::numeric_limits<double>::quiet_NaN();
  }
  throw std::invalid_argument(fmt::format("{}: expected a number, got {}", what, value.dump()));
}

}  // namespace prefix_scorer
