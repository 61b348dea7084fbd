#pragma once
// The benchmark's report: one line per mode on stderr, and the same as JSON.

#include "floor.h"
#include "modes.h"

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

namespace prefix_scorer::bench {

struct RunInfo {
  std::string model;
  std::string workload;
  std::string device;
  std::string dtype;
  int64_t threads = 0;
  FloorWork floor;
  double matmul_rate = 0.0;  // FLOP/s
  std::string attention;     // the kernels, as Model::attention_kernels says
  int64_t kv_bytes_per_token = 0;   // every layer's keys and values of a token (latent attention's latents)
  int64_t expanded_kv_bytes_per_token = 0;  // the same with latent attention's keys and values expanded
  int64_t state_bytes_per_row = 0;  // every recurrent layer's state, kept per prefix entry and per row
  int64_t weight_bytes = 0;         // what the loaded weights hold ...
  int64_t quantized_weight_bytes = 0;  // ... and of it, the projections kept in the checkpoint's quantized form
  // Top-level aten ops of the prefix mode's call by name, and its forwards (none: not measured).
  std::map<std::string, int64_t> prefix_ops;
  int64_t prefix_forwards = 0;
  int64_t layers = 0;
};

// Per mode: wall time, requests/s, tokens computed, MFU (the floor's FLOPs over wall time, against the measured
// matmul rate), speedup over grouped, largest |logprob difference| to naive and is_greedy agreement with it
// (when those modes ran), and the cache statistics.
nlohmann::json build_report(const RunInfo& info, const std::vector<ModeRun>& runs);

void print_report(const nlohmann::json& report);

}  // namespace prefix_scorer::bench
