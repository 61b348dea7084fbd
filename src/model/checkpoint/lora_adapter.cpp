#include "model/checkpoint/lora_adapter.h"

#include "prefix_scorer/errors.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <regex>
#include <stdexcept>
#include <sys/stat.h>
#include <utility>

namespace prefix_scorer {
namespace {

// adapter_config.json keys that need nothing here: merging is the same whatever they hold (how the adapter was
// initialised or trained, which layers it covers, bookkeeping), or they are read below.
const std::set<std::string> kMergeableKeys = {
    "peft_type", "r", "lora_alpha", "use_rslora", "target_modules", "modules_to_save", "rank_pattern",
    "alpha_pattern", "fan_in_fan_out", "bias", "base_model_name_or_path", "revision", "task_type", "inference_mode",
    "lora_dropout", "init_lora_weights", "auto_mapping", "peft_version", "layers_to_transform", "layers_pattern",
    "exclude_modules", "megatron_core", "qalora_group_size", "loftq_config", "eva_config", "corda_config",
    "lora_ga_config", "ensure_weight_tying", "target_parameters"};

// peft's LoRA on a mixture's stacked experts (target_parameters mlp.experts.gate_up_proj and .down_proj, as
// transformers 5 stacks them: [experts, 2 x ff, hidden], gate's rows first, and [experts, hidden, ff]): nested
// wrappers of the experts module, their factors A [rank x experts, in] and B [out, rank x experts].
struct ExpertFactors {
  std::string a, b;
  int64_t in = 0, out = 0, rank_experts = 0;
};


// The names of a layer's A and B factors, and whether B A is the tensor's transpose: linear layers, embeddings.
struct FactorNames {
  std::string a, b;
  bool transpose;
};
const FactorNames kFactorNames[] = {{".lora_A.weight", ".lora_B.weight", false},
                                    {".lora_embedding_A", ".lora_embedding_B", true}};

// Whether a config value is set at all (peft writes null, false or empty containers for what is unused).
bool is_set(const nlohmann::json& value) {
  if (value.is_null()) return false;
  if (value.is_boolean()) return value.get<bool>();
  if (value.is_number()) return value.get<double>() != 0.0;
  if (value.is_string() || value.is_array() || value.is_object()) return !value.empty();
  return true;
}

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The experts module a factor `name` (ending in `suffix`) belongs to, without the ".base_layer"s that nested
// parameter wrappers add; empty when it is not a stacked experts module's.
std::string experts_module(const std::string& name, const std::string& suffix) {
  if (!ends_with(name, suffix)) return "";
  std::string module = name.substr(0, name.size() - suffix.size());
  while (ends_with(module, ".base_layer")) module.resize(module.size() - std::string(".base_layer").size());
  return ends_with(module, ".experts") ? module : "";
}

bool starts_with_any(const std::string& text, const std::vector<std::string>& prefixes) {
  for (const std::string& p : prefixes)
    if (text.rfind(p, 0) == 0) return true;
  return false;
}

std::string renamed(const std::string& name, const std::vector<std::pair<std::string, std::string>>& prefixes) {
  for (const auto& [from, to] : prefixes)
    if (name.rfind(from, 0) == 0) return to + name.substr(from.size());
  return name;
}

std::string adapter_file(const std::string& dir, const std::string& name) {
  const std::string path = dir + "/" + name;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
    throw FileNotFound(fmt::format("adapter '{}' has no {}", dir, name));
  return path;
}

nlohmann::json read_config(const std::string& path) {
  try {
    std::ifstream in(path);
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(fmt::format("malformed '{}': {}", path, e.what()));
  }
}

// peft's rule for rank_pattern and alpha_pattern keys: the key matches the module's name or a dotted tail of it.
const nlohmann::json* pattern_value(const nlohmann::json& patterns, const std::string& module) {
  if (!patterns.is_object()) return nullptr;
  for (const auto& [key, value] : patterns.items())
    if (std::regex_match(module, std::regex("(.*\\.)?(" + key + ")"))) return &value;
  return nullptr;
}

// What the merge reads of an adapter_config.json.
struct AdapterSettings {
  double alpha = 0;
  bool rslora = false;
  nlohmann::json alpha_pattern, rank_pattern;
  int64_t default_rank = 8;
  std::vector<std::string> modules_to_save;
  bool expert_parameters = false;    // target_parameters set
  std::vector<std::string> targets;  // its stacked experts' gate_up_proj and down_proj
};

[[noreturn]] void refuse(const std::string& dir, const std::string& what) {
  throw std::invalid_argument(fmt::format("adapter '{}': {}; prefix-scorer merges plain LoRA adapters only (use "
                                          "--model hf, or merge it into the checkpoint with peft's merge_and_unload)",
                                          dir, what));
}

// dir's adapter_config.json, refused unless it is a plain LoRA adapter's.
AdapterSettings read_settings(const std::string& dir) {
  const nlohmann::json config = read_config(adapter_file(dir, "adapter_config.json"));
  auto refuse = [&](const std::string& what) { prefix_scorer::refuse(dir, what); };
  if (!config.is_object()) refuse("adapter_config.json is not a JSON object");
  const std::string type = config.value("peft_type", "");
  if (type != "LORA") refuse(fmt::format("peft_type is '{}'", type));
  for (const auto& [key, value] : config.items())
    if (!kMergeableKeys.count(key) && is_set(value)) refuse(fmt::format("adapter_config.json sets {}={}", key, value.dump()));
  if (config.value("bias", std::string("none")) != "none")
    refuse(fmt::format("bias='{}' (trained biases)", config.value("bias", std::string())));
  AdapterSettings settings;
  try {
    settings.alpha = config.at("lora_alpha").get<double>();
  } catch (const nlohmann::json::exception&) {
    refuse("adapter_config.json lacks a numeric lora_alpha");
  }
  settings.rslora = config.value("use_rslora", false);
  settings.alpha_pattern = config.value("alpha_pattern", nlohmann::json::object());
  settings.rank_pattern = config.value("rank_pattern", nlohmann::json::object());
  settings.default_rank = config.value("r", int64_t{8});
  if (config.contains("modules_to_save") && config["modules_to_save"].is_array())
    settings.modules_to_save = config["modules_to_save"].get<std::vector<std::string>>();
  settings.expert_parameters = is_set(config.value("target_parameters", nlohmann::json()));
  if (settings.expert_parameters) {
    if (!config["target_parameters"].is_array()) refuse("target_parameters is not a list");
    // Stacked experts' gate_up_proj and down_proj; another parameter only as a matrix (a router's weight), whose
    // factors are a linear layer's and merge as such.
    for (const auto& t : config["target_parameters"]) {
      const std::string target = t.is_string() ? t.get<std::string>() : "";
      if (ends_with(target, "gate_up_proj") || ends_with(target, "down_proj"))
        settings.targets.push_back(target);
      else if (!ends_with(target, ".weight"))
        refuse(fmt::format("target_parameters {} (stacked experts' gate_up_proj and down_proj, and matrices, merge)",
                           config["target_parameters"].dump()));
    }
    if (settings.targets.size() > 2)
      refuse(fmt::format("target_parameters {} name more than one gate_up_proj and down_proj",
                         config["target_parameters"].dump()));
  }
  return settings;
}

}  // namespace

LoraAdapter::LoraAdapter(const std::string& dir, const AdapterNaming& naming)
    : dir_(dir), file_(adapter_file(dir, "adapter_model.safetensors")) {
  const AdapterSettings settings = read_settings(dir);
  auto refuse = [&](const std::string& what) { prefix_scorer::refuse(dir, what); };
  const double alpha = settings.alpha;
  const bool rslora = settings.rslora;
  const nlohmann::json& alpha_pattern = settings.alpha_pattern;
  const std::vector<std::string>& modules_to_save = settings.modules_to_save;

  // peft saves the default adapter's tensors under the wrapped model's names, its adapter name dropped.
  const std::string prefix = "base_model.model.";
  const bool expert_parameters = settings.expert_parameters;
  std::map<std::string, std::vector<ExpertFactors>> expert_factors;  // by the experts module
  for (const auto& [key, info] : file_.tensors()) {
    if (key.rfind(prefix, 0) != 0) refuse(fmt::format("tensor '{}' is not under '{}'", key, prefix));
    const std::string wrapped_name = key.substr(prefix.size());
    if (starts_with_any(wrapped_name, naming.unused_prefixes)) continue;
    const std::string name = renamed(wrapped_name, naming.renamed_prefixes);
    if (expert_parameters) {
      if (const std::string experts = experts_module(name, ".lora_A.weight"); !experts.empty()) {
        const std::string b = key.substr(0, key.size() - std::string(".lora_A.weight").size()) + ".lora_B.weight";
        if (!file_.contains(b)) refuse(fmt::format("'{}' has no '{}'", key, b));
        const std::vector<int64_t>& b_shape = file_.tensors().at(b).shape;
        if (info.shape.size() != 2 || b_shape.size() != 2 || b_shape[1] != info.shape[0])
          refuse(fmt::format("'{}' and '{}' are not LoRA factors of stacked experts", key, b));
        expert_factors[experts].push_back({key, b, info.shape[1], b_shape[0], info.shape[0]});
        continue;
      }
      if (!experts_module(name, ".lora_B.weight").empty()) continue;  // taken with its A
    }
    for (const auto& [a_suffix, b_suffix, transpose] : kFactorNames) {
      if (!ends_with(name, a_suffix)) continue;
      const std::string module = name.substr(0, name.size() - a_suffix.size());
      const std::string b = key.substr(0, key.size() - a_suffix.size()) + b_suffix;
      if (!file_.contains(b)) refuse(fmt::format("'{}' has no '{}'", key, b));
      const int64_t rank = info.shape.empty() ? 0 : info.shape[0];
      if (rank <= 0) refuse(fmt::format("'{}' has shape of rank 0", key));
      // peft matches patterns against the wrapped model's module names.
      const nlohmann::json* module_alpha =
          pattern_value(alpha_pattern, wrapped_name.substr(0, wrapped_name.size() - a_suffix.size()));
      const double a = module_alpha != nullptr ? module_alpha->get<double>() : alpha;
      deltas_[module + ".weight"] = {key, b, a / (rslora ? std::sqrt(double(rank)) : double(rank)), transpose};
    }
    if (name.find(".lora_") != std::string::npos) {
      const bool is_b = ends_with(name, ".lora_B.weight") || ends_with(name, ".lora_embedding_B");
      if (!is_b && !deltas_.count(name.substr(0, name.rfind(".lora_")) + ".weight"))
        refuse(fmt::format("tensor '{}' is of a kind this merge does not know", key));
      continue;
    }
    // A whole tensor: an adapted embedding's base weights (which peft saves with the factors), or a module's trained
    // in full (modules_to_save).
    const std::string base_suffix = ".base_layer.weight";
    if (ends_with(name, base_suffix)) {
      replacements_[name.substr(0, name.size() - base_suffix.size()) + ".weight"] = key;
      continue;
    }
    const std::string module = name.substr(0, name.rfind('.'));
    bool saved = false;
    for (const auto& m : modules_to_save) saved = saved || module == m || ends_with(module, "." + m);
    if (!saved) refuse(fmt::format("tensor '{}' is neither a LoRA factor nor in modules_to_save", key));
    replacements_[name] = key;
  }
  // Stacked experts' factors: gate_up_proj's (in hidden, out 2 x ff) and down_proj's (in ff, out hidden), told
  // apart by their shapes; each expert's update is B[:, :, e] A[e] of the factors seen per expert.
  const std::vector<std::string>& targets = settings.targets;
  const int64_t default_rank = settings.default_rank;
  const nlohmann::json& rank_pattern = settings.rank_pattern;
  for (const auto& [module, pairs] : expert_factors) {
    auto is_gate_up = [&](const ExpertFactors& f) {  // out 2 x ff beside a down_proj of in ff, or the one target
      if (pairs.size() == 1) return ends_with(targets.front(), "gate_up_proj");
      const ExpertFactors& other = &f == &pairs[0] ? pairs[1] : pairs[0];
      return f.out == 2 * other.in && f.in == other.out;
    };
    if (pairs.size() != targets.size() || (pairs.size() == 2 && is_gate_up(pairs[0]) == is_gate_up(pairs[1])))
      refuse(fmt::format("the LoRA factors of '{}' are not one per target parameter ({}), told apart by shape", module,
                         fmt::join(targets, ", ")));
    for (const ExpertFactors& f : pairs) {
      // Patterns name the parameter (peft gives gate_up_proj a rank of its own).
      const std::string parameter = module + (is_gate_up(f) ? ".gate_up_proj" : ".down_proj");
      const nlohmann::json* rank_value = pattern_value(rank_pattern, parameter);
      const nlohmann::json* alpha_value = pattern_value(alpha_pattern, parameter);
      const int64_t rank = rank_value != nullptr ? rank_value->get<int64_t>() : default_rank;
      const double a = alpha_value != nullptr ? alpha_value->get<double>() : alpha;
      if (rank <= 0 || f.rank_experts % rank != 0)
        refuse(fmt::format("'{}' has {} rows, not a multiple of its rank {}", f.a, f.rank_experts, rank));
      const int64_t experts = f.rank_experts / rank;
      const double scale = a / (rslora ? std::sqrt(double(rank)) : double(rank));
      for (int64_t e = 0; e < experts; ++e) {
        const std::string expert = fmt::format("{}.{}.", module, e);
        if (is_gate_up(f)) {
          deltas_[expert + "gate_proj.weight"] = {f.a, f.b, scale, false, experts, e, 0, f.out / 2};
          deltas_[expert + "up_proj.weight"] = {f.a, f.b, scale, false, experts, e, f.out / 2, f.out / 2};
        } else {
          deltas_[expert + "down_proj.weight"] = {f.a, f.b, scale, false, experts, e, 0, f.out};
        }
      }
    }
  }
}

bool LoraAdapter::changes(const std::string& name) const { return deltas_.count(name) || replacements_.count(name); }

at::Tensor LoraAdapter::base(const std::string& name, const at::Tensor& checkpoint_tensor) {
  auto it = replacements_.find(name);
  if (it == replacements_.end()) return checkpoint_tensor;
  const at::Tensor whole = file_.view(it->second);
  if (whole.sizes() != checkpoint_tensor.sizes())
    throw std::invalid_argument(fmt::format("adapter '{}': '{}' has shape [{}], the checkpoint's '{}' [{}]", dir_,
                                            it->second, fmt::join(whole.sizes(), ", "), name,
                                            fmt::join(checkpoint_tensor.sizes(), ", ")));
  applied_.insert(name);
  return whole;
}

at::Tensor LoraAdapter::apply(const std::string& name, const at::Tensor& checkpoint_tensor, bool stored_in_out) {
  const at::Tensor weight = base(name, checkpoint_tensor);
  auto it = deltas_.find(name);
  if (it == deltas_.end()) return weight;
  const Delta& d = it->second;
  at::Tensor delta;
  if (d.experts > 0) {  // A [experts, rank, in] and B [out, rank, experts]: this expert's rows of B[:, :, e] A[e]
    const at::Tensor a = file_.view(d.a).to(at::kFloat), b = file_.view(d.b).to(at::kFloat);
    const at::Tensor b_e = b.view({b.size(0), -1, d.experts}).select(2, d.expert).narrow(0, d.row_begin, d.rows);
    delta = at::matmul(b_e, a.view({d.experts, -1, a.size(1)}).select(0, d.expert));
  } else {
    delta = at::matmul(file_.view(d.b).to(at::kFloat), file_.view(d.a).to(at::kFloat));
  }
  if (d.transpose != stored_in_out) delta = delta.t();
  if (delta.sizes() != weight.sizes())
    throw std::invalid_argument(fmt::format("adapter '{}': the update of '{}' has shape [{}], the tensor [{}]", dir_,
                                            name, fmt::join(delta.sizes(), ", "), fmt::join(weight.sizes(), ", ")));
  applied_.insert(name);
  return weight.to(at::kFloat).add(delta, d.scale);
}

void LoraAdapter::check_all_applied() const {
  for (const auto& [name, delta] : deltas_)
    if (!applied_.count(name))
      throw std::invalid_argument(fmt::format("adapter '{}': '{}' adapts '{}', which the model does not have", dir_,
                                              delta.a, name));
  for (const auto& [name, key] : replacements_)
    if (!applied_.count(name))
      throw std::invalid_argument(
          fmt::format("adapter '{}': '{}' replaces '{}', which the model does not have", dir_, key, name));
}

}  // namespace prefix_scorer
