// Decoders: ByteLevel, Metaspace, ByteFallback, Fuse, Strip, Replace, Sequence.

#include "tokenizer/pipeline.h"
#include "tokenizer/regex.h"
#include "tokenizer/unicode.h"

#include <fmt/format.h>

#include <stdexcept>

namespace prefix_scorer::tok {
namespace {

// "<0x41>" -> 0x41, or -1 when the token is not a byte token.
int byte_token(const std::string& token) {
  if (token.size() != 6 || token.compare(0, 3, "<0x") != 0 || token[5] != '>') return -1;
  const std::string hex = token.substr(3, 2);
  if (!std::isxdigit(static_cast<unsigned char>(hex[0])) || !std::isxdigit(static_cast<unsigned char>(hex[1]))) return -1;
  return std::stoi(hex, nullptr, 16);
}

bool valid_utf8(const std::string& bytes) {
  try {
    check_utf8(bytes);
    return true;
  } catch (const std::invalid_argument&) {
    return false;
  }
}

std::vector<std::string> byte_level(std::vector<std::string> tokens) {
  // Map each token's characters back to bytes; a token with a character outside the map stays as it is.
  for (auto& token : tokens) {
    std::string bytes;
    bool mapped = true;
    for (int32_t cp : code_points(token)) {
      const int b = byte_of_code_point(cp);
      if (b < 0) {
        mapped = false;
        break;
      }
      bytes.push_back(static_cast<char>(b));
    }
    if (mapped) token = std::move(bytes);
  }
  // The bytes of one character may span tokens: join, then repair invalid sequences as U+FFFD.
  std::string joined;
  for (const auto& t : tokens) joined += t;
  if (valid_utf8(joined)) return {joined};
  std::string repaired;
  for (size_t i = 0; i < joined.size();) {
    size_t len = 1;
    while (len <= 4 && i + len <= joined.size() && !valid_utf8(joined.substr(i, len))) ++len;
    if (len <= 4 && i + len <= joined.size()) {
      repaired += joined.substr(i, len);
      i += len;
    } else {
      repaired += "\xEF\xBF\xBD";
      ++i;
    }
  }
  return {repaired};
}

std::vector<std::string> byte_fallback(std::vector<std::string> tokens) {
  std::vector<std::string> out;
  std::string pending;  // consecutive byte tokens
  size_t pending_count = 0;
  auto flush = [&] {
    if (pending_count == 0) return;
    if (valid_utf8(pending)) {
      out.push_back(pending);
    } else {
      for (size_t i = 0; i < pending_count; ++i) out.push_back("\xEF\xBF\xBD");
    }
    pending.clear();
    pending_count = 0;
  };
  for (auto& token : tokens) {
    const int b = byte_token(token);
    if (b >= 0) {
      pending.push_back(static_cast<char>(b));
      ++pending_count;
    } else {
      flush();
      out.push_back(std::move(token));
    }
  }
  flush();
  return out;
}

std::string strip(const std::string& token, const std::string& content, int64_t start, int64_t stop) {
  auto chars = characters(token);
  int64_t left = 0, right = static_cast<int64_t>(chars.size());
  while (left < start && left < right && chars[left] == content) ++left;
  int64_t removed = 0;
  while (removed < stop && right > left && chars[right - 1] == content) --right, ++removed;
  std::string out;
  for (int64_t i = left; i < right; ++i) out += chars[i];
  return out;
}

}  // namespace

Decoder make_decoder(const nlohmann::json& spec) {
  if (spec.is_null()) return [](std::vector<std::string> t) { return t; };
  const std::string type = spec.at("type").get<std::string>();
  if (type == "ByteLevel") return byte_level;
  if (type == "ByteFallback") return byte_fallback;
  if (type == "Fuse") {
    return [](std::vector<std::string> tokens) {
      std::string joined;
      for (const auto& t : tokens) joined += t;
      return std::vector<std::string>{joined};
    };
  }
  if (type == "Strip") {
    const std::string content = spec.at("content").get<std::string>();
    const int64_t start = spec.value("start", 0), stop = spec.value("stop", 0);
    return [=](std::vector<std::string> tokens) {
      for (auto& t : tokens) t = strip(t, content, start, stop);
      return tokens;
    };
  }
  if (type == "Replace") {
    const auto& pattern = spec.at("pattern");
    if (!pattern.contains("String")) throw std::invalid_argument("unsupported Replace decoder pattern (only String)");
    const Regex from = Regex::literal(pattern.at("String").get<std::string>());
    const std::string to = spec.at("content").get<std::string>();
    return [from, to](std::vector<std::string> tokens) {
      for (auto& t : tokens) {
        std::string out;
        size_t at = 0;
        for (const auto& [b, e] : from.find_all(t)) out += t.substr(at, b - at) + to, at = e;
        t = out + t.substr(at);
      }
      return tokens;
    };
  }
  if (type == "Metaspace") {
    const std::string replacement = spec.value("replacement", std::string("\xE2\x96\x81"));
    std::string scheme = spec.value("prepend_scheme", std::string());
    if (scheme.empty()) scheme = spec.value("add_prefix_space", true) ? "always" : "never";
    const Regex marker = Regex::literal(replacement);
    // Each marker becomes a space, except in the first token under a prepend scheme, where HF tokenizers (0.23)
    // drops every marker: "▁▁" decodes to "", "a▁b" to "ab" when first.
    return [=](std::vector<std::string> tokens) {
      for (size_t i = 0; i < tokens.size(); ++i) {
        const std::string space = i == 0 && scheme != "never" ? "" : " ";
        std::string out;
        size_t at = 0;
        for (const auto& [b, e] : marker.find_all(tokens[i])) out += tokens[i].substr(at, b - at) + space, at = e;
        tokens[i] = out + tokens[i].substr(at);
      }
      return tokens;
    };
  }
  if (type == "Sequence") {
    std::vector<Decoder> steps;
    for (const auto& step : spec.at("decoders")) steps.push_back(make_decoder(step));
    return [steps](std::vector<std::string> tokens) {
      for (const auto& step : steps) tokens = step(std::move(tokens));
      return tokens;
    };
  }
  throw std::invalid_argument(fmt::format("unsupported decoder type '{}'", type));
}

}  // namespace prefix_scorer::tok
