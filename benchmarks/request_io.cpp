#include "request_io.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <optional>
#include <stdexcept>

namespace prefix_scorer::bench {
namespace {

TokenIds id_list(const nlohmann::json& line, const char* field) {
  auto it = line.find(field);
  if (it == line.end()) throw std::invalid_argument(fmt::format("missing field '{}'", field));
  if (!it->is_array()) throw std::invalid_argument(fmt::format("field '{}' is not a list of token ids", field));
  TokenIds ids;
  for (const auto& id : *it) {
    if (!id.is_number_integer()) throw std::invalid_argument(fmt::format("field '{}' holds a non-integer", field));
    ids.push_back(id.get<int64_t>());
  }
  return ids;
}

}  // namespace

Request parse_request_line(const std::string& text, const std::function<const TextEncoding&()>& text_encoding) {
  const auto line = [&] {
    try {
      return nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
      throw std::invalid_argument(fmt::format("not valid JSON ({})", e.what()));
    }
  }();
  if (!line.is_object()) throw std::invalid_argument("not a JSON object");
  const bool is_text = line.contains("context") && line["context"].is_string();
  if (!is_text) return {id_list(line, "context"), id_list(line, "continuation")};
  const TextEncoding& encoding = text_encoding();
  if (encoding.tokenizer == nullptr)
    throw std::invalid_argument("text requests need a tokenizer (tokenizer.json in the model directory)");
  if (!line.contains("continuation") || !line["continuation"].is_string())
    throw std::invalid_argument("field 'continuation' must be a string like 'context'");
  return encode_pair(*encoding.tokenizer, line["context"].get<std::string>(), line["continuation"].get<std::string>(),
                     encoding.add_special_tokens);
}

std::vector<Request> read_requests(const std::string& path, const std::function<TextEncoding()>& text_encoding) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument(fmt::format("cannot read requests file '{}'", path));
  std::vector<Request> requests;
  std::optional<TextEncoding> encoding;
  const auto encoding_once = [&]() -> const TextEncoding& {
    if (!encoding) encoding = text_encoding();
    return *encoding;
  };
  std::string text;
  for (int line_no = 1; std::getline(in, text); ++line_no) {
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    try {
      requests.push_back(parse_request_line(text, encoding_once));
    } catch (const std::exception& e) {
      throw std::invalid_argument(fmt::format("{}:{}: {}", path, line_no, e.what()));
    }
  }
  return requests;
}

namespace {

void write_lines(const std::string& path, const std::vector<nlohmann::json>& lines) {
  std::ofstream out(path);
  if (!out) throw std::runtime_error(fmt::format("cannot write output file '{}'", path));
  for (const auto& line : lines) out << line.dump() << '\n';
  if (!out) throw std::runtime_error(fmt::format("failed writing output file '{}'", path));
}

}  // namespace

void write_requests(const std::string& path, const std::vector<Request>& requests) {
  std::vector<nlohmann::json> lines;
  for (const Request& r : requests) lines.push_back({{"context", r.context}, {"continuation", r.continuation}});
  write_lines(path, lines);
}

void write_scores(const std::string& path, const std::vector<Score>& scores) {
  std::vector<nlohmann::json> lines;
  for (const Score& s : scores) lines.push_back({{"logprob", s.logprob}, {"is_greedy", s.is_greedy}});
  write_lines(path, lines);
}

}  // namespace prefix_scorer::bench
