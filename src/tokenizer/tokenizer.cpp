#include "prefix_scorer/tokenizer.h"

#include "prefix_scorer/errors.h"

#include "tokenizer/added_tokens.h"
#include "tokenizer/bpe.h"
#include "tokenizer/pipeline.h"
#include "tokenizer/unicode.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace prefix_scorer {

using nlohmann::json;

struct Tokenizer::Impl {
  explicit Impl(const json& spec) : model(spec.at("model")) {}

  tok::Bpe model;
  std::vector<tok::AddedToken> added;
  std::vector<const tok::AddedToken*> raw_added, normalized_added;  // matched before / after normalization
  tok::Normalizer normalizer;
  tok::PreTokenizer pre_tokenizer;
  tok::Decoder decoder;
  std::vector<std::vector<int64_t>> template_before, template_after;  // ids around the sequence, per template item
  std::optional<int64_t> bos, eos;

  const tok::AddedToken* added_by_id(int64_t id) const {
    for (const auto& t : added) {
      if (t.id == id) return &t;
    }
    return nullptr;
  }
};

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw FileNotFound(fmt::format("cannot read '{}'", path));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

json parse(const std::string& text, const char* what) {
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    throw std::invalid_argument(fmt::format("{} is not valid JSON: {}", what, e.what()));
  }
}

// The ids a TemplateProcessing "single" template puts before and after the sequence; other post-processors
// (ByteLevel: offsets only) add nothing.
void read_post_processor(const json& spec, Tokenizer::Impl& impl) {
  if (spec.is_null()) return;
  const std::string type = spec.at("type").get<std::string>();
  if (type == "ByteLevel") return;
  if (type == "Sequence") {
    for (const auto& step : spec.at("processors")) read_post_processor(step, impl);
    return;
  }
  if (type != "TemplateProcessing")
    throw std::invalid_argument(fmt::format("unsupported post_processor type '{}'", type));
  bool after = false;
  for (const auto& item : spec.at("single")) {
    if (item.contains("Sequence")) {
      after = true;
      continue;
    }
    const std::string name = item.at("SpecialToken").at("id").get<std::string>();
    const auto& special = spec.at("special_tokens");
    if (!special.contains(name)) throw std::invalid_argument(fmt::format("template token '{}' is not defined", name));
    (after ? impl.template_after : impl.template_before).push_back(special.at(name).at("ids").get<std::vector<int64_t>>());
  }
}

// tokenizer_config.json spells a token as a string or as {"content": ...}.
std::optional<std::string> config_token(const json& config, const char* key) {
  if (!config.is_object() || !config.contains(key)) return std::nullopt;
  const json& value = config[key];
  if (value.is_string()) return value.get<std::string>();
  if (value.is_object() && value.contains("content")) return value["content"].get<std::string>();
  return std::nullopt;
}

}  // namespace

Tokenizer Tokenizer::from_json(const std::string& tokenizer_json, const std::string& config_json) {
  const json spec = parse(tokenizer_json, "tokenizer.json");
  const json config = config_json.empty() ? json() : parse(config_json, "tokenizer_config.json");
  if (!spec.is_object() || !spec.contains("model")) throw std::invalid_argument("tokenizer.json has no model");
  try {
    auto impl = std::make_shared<Impl>(spec);
    impl->normalizer = tok::make_normalizer(spec.value("normalizer", json()));
    impl->added = tok::parse_added_tokens(spec.value("added_tokens", json::array()));
    for (auto& t : impl->added) {
      if (t.normalized) t.match = impl->normalizer(t.content);
      (t.normalized ? impl->normalized_added : impl->raw_added).push_back(&t);
    }
    impl->pre_tokenizer = tok::make_pre_tokenizer(spec.value("pre_tokenizer", json()));
    impl->decoder = tok::make_decoder(spec.value("decoder", json()));
    read_post_processor(spec.value("post_processor", json()), *impl);

    Tokenizer tokenizer(impl);
    auto id_of = [&](const std::optional<std::string>& token) -> std::optional<int64_t> {
      return token ? tokenizer.token_to_id(*token) : std::nullopt;
    };
    impl->bos = id_of(config_token(config, "bos_token"));
    if (!impl->bos && !impl->template_before.empty()) impl->bos = impl->template_before.front().front();
    impl->eos = id_of(config_token(config, "eos_token"));
    return tokenizer;
  } catch (const json::exception& e) {
    throw std::invalid_argument(fmt::format("malformed tokenizer.json: {}", e.what()));
  }
}

Tokenizer Tokenizer::from_file(const std::string& path) {
  if (!std::filesystem::is_directory(path)) return from_json(read_file(path));
  const std::string config = path + "/tokenizer_config.json";
  return from_json(read_file(path + "/tokenizer.json"), std::filesystem::exists(config) ? read_file(config) : "");
}

TokenIds Tokenizer::encode(const std::string& text, bool add_special_tokens) const {
  tok::check_utf8(text);
  const Impl& impl = *impl_;
  TokenIds ids;
  if (add_special_tokens) {
    for (const auto& part : impl.template_before) ids.insert(ids.end(), part.begin(), part.end());
  }
  for (const auto& raw : tok::split_added(text, impl.raw_added)) {
    if (raw.id >= 0) {
      ids.push_back(raw.id);
      continue;
    }
    const auto parts = tok::split_added(impl.normalizer(raw.text), impl.normalized_added);
    for (size_t i = 0; i < parts.size(); ++i) {
      if (parts[i].id >= 0) {
        ids.push_back(parts[i].id);
        continue;
      }
      const bool at_start = raw.begin == 0 && parts[i].begin == 0;
      for (const auto& piece : impl.pre_tokenizer({tok::Piece{parts[i].text, at_start}})) impl.model.encode(piece.text, ids);
    }
  }
  if (add_special_tokens) {
    for (const auto& part : impl.template_after) ids.insert(ids.end(), part.begin(), part.end());
  }
  return ids;
}

std::string Tokenizer::decode(const TokenIds& ids, bool skip_special_tokens) const {
  std::vector<std::string> tokens;
  for (int64_t id : ids) {
    const tok::AddedToken* added = impl_->added_by_id(id);
    if (added != nullptr && added->special && skip_special_tokens) continue;
    const auto token = id_to_token(id);
    if (!token) throw std::invalid_argument(fmt::format("decode: id {} is not in the vocabulary", id));
    tokens.push_back(*token);
  }
  std::string text;
  for (const auto& t : impl_->decoder(std::move(tokens))) text += t;
  return text;
}

std::optional<int64_t> Tokenizer::token_to_id(const std::string& token) const {
  for (const auto& t : impl_->added) {
    if (t.content == token) return t.id;
  }
  return impl_->model.token_to_id(token);
}

std::optional<std::string> Tokenizer::id_to_token(int64_t id) const {
  // As HF tokenizers does, a normalized added token is its content normalized (also for decode).
  if (const tok::AddedToken* added = impl_->added_by_id(id)) return added->match;
  const std::string* token = impl_->model.id_to_token(id);
  return token == nullptr ? std::nullopt : std::optional<std::string>(*token);
}

int64_t Tokenizer::vocab_size() const {
  int64_t size = impl_->model.vocab_size();
  for (const auto& t : impl_->added) size = std::max(size, t.id + 1);
  return size;
}

std::optional<int64_t> Tokenizer::bos_token_id() const { return impl_->bos; }
std::optional<int64_t> Tokenizer::eos_token_id() const { return impl_->eos; }
bool Tokenizer::adds_special_tokens() const { return !impl_->template_before.empty() || !impl_->template_after.empty(); }

}  // namespace prefix_scorer
