#include "prefix_scorer/model_config.h"

#include "json_integer.h"
#include "prefix_scorer/errors.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <type_traits>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace prefix_scorer {
namespace {

using nlohmann::json;

// A field's value, or `fallback` when it is absent or null.
template <typename T>
T get_or(const json& j, const char* key, T fallback) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  if constexpr (std::is_same_v<T, int64_t>) return json_integer(*it, fmt::format("config.json: field '{}'", key));
  try {
    return it->template get<T>();
  } catch (const json::exception&) {
    throw std::invalid_argument(fmt::format("config.json: field '{}' has the wrong type ({})", key, it->dump()));
  }
}

template <typename T>
T require(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null())
    throw std::invalid_argument(fmt::format("config.json: required field '{}' is missing", key));
  return get_or<T>(j, key, T{});
}

// Rope settings live in `rope_parameters` (newer transformers) or in `rope_theta` + `rope_scaling` (older).
RopeConfig parse_rope(const json& j) {
  RopeConfig rope;
  const json* scaling = nullptr;
  if (j.contains("rope_parameters") && j["rope_parameters"].is_object()) {
    scaling = &j["rope_parameters"];
    rope.theta = get_or<double>(*scaling, "rope_theta", get_or<double>(j, "rope_theta", rope.theta));
  } else {
    rope.theta = get_or<double>(j, "rope_theta", rope.theta);
    if (j.contains("rope_scaling") && j["rope_scaling"].is_object()) scaling = &j["rope_scaling"];
  }
  if (scaling == nullptr) return rope;
  rope.type = get_or<std::string>(*scaling, "rope_type", get_or<std::string>(*scaling, "type", "default"));
  if (rope.type != "default" && rope.type != "linear" && rope.type != "llama3")
    throw std::invalid_argument(
        fmt::format("config.json: unsupported rope type '{}' (supported: default, linear, llama3)", rope.type));
  rope.factor = get_or<double>(*scaling, "factor", 1.0);
  rope.low_freq_factor = get_or<double>(*scaling, "low_freq_factor", rope.low_freq_factor);
  rope.high_freq_factor = get_or<double>(*scaling, "high_freq_factor", rope.high_freq_factor);
  rope.original_max_position_embeddings =
      get_or<int64_t>(*scaling, "original_max_position_embeddings", rope.original_max_position_embeddings);
  return rope;
}

}  // namespace

ModelConfig ModelConfig::from_json(const std::string& text) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    throw std::invalid_argument(fmt::format("config.json is not valid JSON: {}", e.what()));
  }
  if (!j.is_object()) throw std::invalid_argument("config.json is not a JSON object");
  ModelConfig c;
  c.model_type = require<std::string>(j, "model_type");
  if (c.model_type != "llama" && c.model_type != "mistral" && c.model_type != "qwen2" && c.model_type != "qwen3")
    throw std::invalid_argument(fmt::format(
        "config.json: unsupported model_type '{}' (supported: llama, mistral, qwen2, qwen3)", c.model_type));
  const auto act = get_or<std::string>(j, "hidden_act", "silu");
  if (act != "silu")
    throw std::invalid_argument(fmt::format("config.json: unsupported hidden_act '{}' (supported: silu)", act));

  c.vocab_size = require<int64_t>(j, "vocab_size");
  c.hidden_size = require<int64_t>(j, "hidden_size");
  c.intermediate_size = require<int64_t>(j, "intermediate_size");
  c.num_layers = require<int64_t>(j, "num_hidden_layers");
  c.num_heads = require<int64_t>(j, "num_attention_heads");
  c.num_kv_heads = get_or<int64_t>(j, "num_key_value_heads", c.num_heads);
  c.head_dim = get_or<int64_t>(j, "head_dim", c.num_heads > 0 ? c.hidden_size / c.num_heads : 0);
  c.max_position_embeddings = get_or<int64_t>(j, "max_position_embeddings", c.max_position_embeddings);
  c.rms_norm_eps = get_or<double>(j, "rms_norm_eps", c.rms_norm_eps);
  c.tie_word_embeddings = get_or<bool>(j, "tie_word_embeddings", false);
  c.rope = parse_rope(j);

  const bool attention_bias = get_or<bool>(j, "attention_bias", false);
  c.qkv_bias = c.model_type == "qwen2" || attention_bias;
  c.o_bias = c.model_type == "llama" && attention_bias;
  c.mlp_bias = c.model_type == "llama" && get_or<bool>(j, "mlp_bias", false);
  c.qk_norm = c.model_type == "qwen3";
  const bool windowed = c.model_type == "mistral" || get_or<bool>(j, "use_sliding_window", false);
  if (windowed) c.sliding_window = get_or<int64_t>(j, "sliding_window", 0);
  c.validate();
  return c;
}

ModelConfig ModelConfig::from_file(const std::string& path) {
  const std::string file = std::filesystem::is_directory(path) ? path + "/config.json" : path;
  std::ifstream in(file);
  if (!in) throw FileNotFound(fmt::format("cannot read model config '{}'", file));
  std::stringstream text;
  text << in.rdbuf();
  try {
    return from_json(text.str());
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(fmt::format("{}: {}", file, e.what()));
  }
}

void ModelConfig::validate() const {
  auto positive = [](int64_t value, const char* name) {
    if (value <= 0) throw std::invalid_argument(fmt::format("config: {} must be positive, got {}", name, value));
  };
  positive(vocab_size, "vocab_size");
  positive(hidden_size, "hidden_size");
  positive(intermediate_size, "intermediate_size");
  positive(num_layers, "num_hidden_layers");
  positive(num_heads, "num_attention_heads");
  positive(num_kv_heads, "num_key_value_heads");
  positive(head_dim, "head_dim");
  positive(max_position_embeddings, "max_position_embeddings");
  if (num_heads % num_kv_heads != 0)
    throw std::invalid_argument(fmt::format("config: num_attention_heads ({}) is not a multiple of "
                                            "num_key_value_heads ({})", num_heads, num_kv_heads));
  if (head_dim % 2 != 0) throw std::invalid_argument(fmt::format("config: head_dim ({}) must be even", head_dim));
  if (rope.theta <= 0 || rope.factor <= 0)
    throw std::invalid_argument("config: rope_theta and the rope factor must be positive");
}

std::string ModelConfig::to_json() const {
  json rope_parameters = {{"rope_type", rope.type}, {"rope_theta", rope.theta}};
  if (rope.type != "default") rope_parameters["factor"] = rope.factor;
  if (rope.type == "llama3") {
    rope_parameters["low_freq_factor"] = rope.low_freq_factor;
    rope_parameters["high_freq_factor"] = rope.high_freq_factor;
    rope_parameters["original_max_position_embeddings"] = rope.original_max_position_embeddings;
  }
  json j = {{"model_type", model_type},
            {"vocab_size", vocab_size},
            {"hidden_size", hidden_size},
            {"intermediate_size", intermediate_size},
            {"num_hidden_layers", num_layers},
            {"num_attention_heads", num_heads},
            {"num_key_value_heads", num_kv_heads},
            {"head_dim", head_dim},
            {"max_position_embeddings", max_position_embeddings},
            {"rms_norm_eps", rms_norm_eps},
            {"tie_word_embeddings", tie_word_embeddings},
            {"hidden_act", "silu"},
            {"rope_theta", rope.theta},
            {"rope_parameters", rope_parameters},
            {"rope_scaling", rope.type == "default" ? json() : rope_parameters}};
  if (model_type == "llama") {
    j["attention_bias"] = qkv_bias;
    j["mlp_bias"] = mlp_bias;
  }
  if (sliding_window > 0) j["sliding_window"] = sliding_window;
  return j.dump(2);
}

ModelConfig ModelConfig::synthetic(const std::string& name) {
  ModelConfig c;
  c.model_type = "llama";
  c.rms_norm_eps = 1e-5;
  if (name == "tiny") {
    c.vocab_size = 2048, c.hidden_size = 128, c.intermediate_size = 384, c.num_layers = 4;
    c.num_heads = 4, c.num_kv_heads = 2, c.max_position_embeddings = 4096;
    c.tie_word_embeddings = true;
  } else if (name == "small") {
    c.vocab_size = 8192, c.hidden_size = 512, c.intermediate_size = 1536, c.num_layers = 6;
    c.num_heads = 8, c.num_kv_heads = 2, c.max_position_embeddings = 4096;
    c.tie_word_embeddings = true;
  } else if (name == "llama-1b" || name == "llama-8b") {
    const bool big = name == "llama-8b";
    c.vocab_size = 128256;
    c.hidden_size = big ? 4096 : 2048;
    c.intermediate_size = big ? 14336 : 8192;
    c.num_layers = big ? 32 : 16;
    c.num_heads = 32, c.num_kv_heads = 8, c.max_position_embeddings = 131072;
    c.tie_word_embeddings = !big;
    c.rope = RopeConfig{"llama3", 500000.0, big ? 8.0 : 32.0, 1.0, 4.0, 8192};
  } else {
    throw std::invalid_argument(
        fmt::format("unknown synthetic model '{}' (known: tiny, small, llama-1b, llama-8b)", name));
  }
  c.head_dim = c.hidden_size / c.num_heads;
  return c;
}

}  // namespace prefix_scorer
