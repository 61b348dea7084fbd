// Pre-tokenizers: Split, ByteLevel, Metaspace, Digits, Sequence.

#include "tokenizer/pipeline.h"
#include "tokenizer/regex.h"
#include "tokenizer/unicode.h"

#include <fmt/format.h>

#include <stdexcept>

namespace prefix_scorer::tok {
namespace {

enum class Behavior { Isolated, Removed, MergedWithPrevious, MergedWithNext, Contiguous };

Behavior behavior_of(const std::string& name) {
  if (name == "Isolated") return Behavior::Isolated;
  if (name == "Removed") return Behavior::Removed;
  if (name == "MergedWithPrevious") return Behavior::MergedWithPrevious;
  if (name == "MergedWithNext") return Behavior::MergedWithNext;
  if (name == "Contiguous") return Behavior::Contiguous;
  throw std::invalid_argument(fmt::format("unsupported split behavior '{}'", name));
}

struct Span {
  size_t begin, end;
  bool match;
};

// Splits a piece around the matches of `pattern` the way tokenizers' NormalizedString::split does.
std::vector<Piece> split(const Piece& piece, const Regex& pattern, Behavior behavior, bool invert) {
  std::vector<Span> spans;
  size_t at = 0;
  for (const auto& [b, e] : pattern.find_all(piece.text)) {
    if (b > at) spans.push_back({at, b, invert});
    spans.push_back({b, e, !invert});
    at = e;
  }
  if (at < piece.text.size()) spans.push_back({at, piece.text.size(), invert});

  std::vector<Span> kept;
  bool previous_match = false;
  switch (behavior) {
    case Behavior::Isolated:
      kept = spans;
      break;
    case Behavior::Removed:
      for (const auto& s : spans) {
        if (!s.match) kept.push_back(s);
      }
      break;
    case Behavior::Contiguous:
      for (const auto& s : spans) {
        if (!kept.empty() && s.match == previous_match) kept.back().end = s.end;
        else kept.push_back(s);
        previous_match = s.match;
      }
      break;
    case Behavior::MergedWithPrevious:
      for (const auto& s : spans) {
        if (s.match && !previous_match && !kept.empty()) kept.back().end = s.end;
        else kept.push_back(s);
        previous_match = s.match;
      }
      break;
    case Behavior::MergedWithNext:
      for (auto it = spans.rbegin(); it != spans.rend(); ++it) {
        if (it->match && !previous_match && !kept.empty()) kept.back().begin = it->begin;
        else kept.push_back(*it);
        previous_match = it->match;
      }
      std::reverse(kept.begin(), kept.end());
      break;
  }
  std::vector<Piece> out;
  for (const auto& s : kept) {
    if (s.end > s.begin) out.push_back({piece.text.substr(s.begin, s.end - s.begin), piece.at_start && s.begin == 0});
  }
  return out;
}

PreTokenizer splitting(Regex pattern, Behavior behavior, bool invert) {
  return [pattern, behavior, invert](std::vector<Piece> pieces) {
    std::vector<Piece> out;
    for (const auto& p : pieces) {
      for (auto& q : split(p, pattern, behavior, invert)) out.push_back(std::move(q));
    }
    return out;
  };
}

const char* kGpt2Pattern = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

std::string to_byte_level(const std::string& text) {
  std::string out;
  for (unsigned char b : text) out += to_utf8(byte_to_code_point()[b]);
  return out;
}

PreTokenizer byte_level(const nlohmann::json& spec) {
  const bool prefix_space = spec.value("add_prefix_space", false);
  const bool use_regex = spec.value("use_regex", true);
  const Regex pattern(kGpt2Pattern);
  return [prefix_space, use_regex, pattern](std::vector<Piece> pieces) {
    std::vector<Piece> out;
    for (auto& p : pieces) {
      if (prefix_space && p.text.rfind(' ', 0) != 0) p.text = " " + p.text;
      std::vector<Piece> parts = use_regex ? split(p, pattern, Behavior::Isolated, false) : std::vector<Piece>{p};
      for (auto& q : parts) out.push_back({to_byte_level(q.text), q.at_start});
    }
    return out;
  };
}

PreTokenizer metaspace(const nlohmann::json& spec) {
  const std::string replacement = spec.value("replacement", std::string("\xE2\x96\x81"));
  std::string scheme = spec.value("prepend_scheme", std::string());
  if (scheme.empty()) scheme = spec.value("add_prefix_space", true) ? "always" : "never";
  if (scheme != "always" && scheme != "first" && scheme != "never")
    throw std::invalid_argument(fmt::format("unsupported Metaspace prepend_scheme '{}'", scheme));
  const bool split_pieces = spec.value("split", true);
  const Regex space = Regex::literal(" "), marker = Regex::literal(replacement);
  return [=](std::vector<Piece> pieces) {
    std::vector<Piece> out;
    for (auto& p : pieces) {
      std::string text;
      size_t at = 0;
      for (const auto& [b, e] : space.find_all(p.text)) text += p.text.substr(at, b - at) + replacement, at = e;
      text += p.text.substr(at);
      const bool prepend = scheme == "always" || (scheme == "first" && p.at_start);
      if (prepend && text.rfind(replacement, 0) != 0) text = replacement + text;
      Piece q{text, p.at_start};
      if (!split_pieces) {
        out.push_back(q);
        continue;
      }
      for (auto& r : split(q, marker, Behavior::MergedWithNext, false)) out.push_back(std::move(r));
    }
    return out;
  };
}

}  // namespace

PreTokenizer make_pre_tokenizer(const nlohmann::json& spec) {
  if (spec.is_null()) return [](std::vector<Piece> pieces) { return pieces; };
  const std::string type = spec.at("type").get<std::string>();
  if (type == "Split") {
    const auto& pattern = spec.at("pattern");
    const Regex regex = pattern.contains("Regex") ? Regex(pattern.at("Regex").get<std::string>())
                                                  : Regex::literal(pattern.at("String").get<std::string>());
    return splitting(regex, behavior_of(spec.at("behavior").get<std::string>()), spec.value("invert", false));
  }
  if (type == "ByteLevel") return byte_level(spec);
  if (type == "Metaspace") return metaspace(spec);
  if (type == "Digits") {
    const bool individual = spec.value("individual_digits", false);
    return splitting(Regex("\\p{N}"), individual ? Behavior::Isolated : Behavior::Contiguous, false);
  }
  if (type == "Sequence") {
    std::vector<PreTokenizer> steps;
    for (const auto& step : spec.at("pretokenizers")) steps.push_back(make_pre_tokenizer(step));
    return [steps](std::vector<Piece> pieces) {
      for (const auto& step : steps) pieces = step(std::move(pieces));
      return pieces;
    };
  }
  throw std::invalid_argument(fmt::format("unsupported pre_tokenizer type '{}'", type));
}

}  // namespace prefix_scorer::tok
