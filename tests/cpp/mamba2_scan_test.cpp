// The scan of Mamba2 layers: against transformers' own torch path (tests/data/kernels/mamba2_scan.safetensors, made
// by tests/make_references.py), and run in pieces, each from the state the piece before left, against the whole:
// what a shared prefix's cached state relies on.

#include "test_basics.h"

#include "model/checkpoint/safetensors.h"
#include "model/ops/mamba2_scan.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace prefix_scorer::test {
namespace {

constexpr int64_t kChunk = 32;

std::map<std::string, at::Tensor> references() {
  const SafetensorsFile file(data_dir() + "/kernels/mamba2_scan.safetensors");
  std::map<std::string, at::Tensor> tensors;
  for (const auto& [name, info] : file.tensors()) tensors[name] = file.load(name);
  return tensors;
}

ScanInputs inputs_of(const std::map<std::string, at::Tensor>& r, int64_t from = 0, int64_t tokens = -1) {
  auto part = [&](const char* name) {
    const at::Tensor& t = r.at(name);
    return t.narrow(1, from, tokens < 0 ? t.size(1) - from : tokens);
  };
  return {part("x"), part("dt"), r.at("a"), part("b_in"), part("c_in"), r.at("d")};
}

double max_diff(const at::Tensor& a, const at::Tensor& b) { return (a - b).abs().max().item<double>(); }

TEST(Mamba2Scan, ChunkedScanAndStepMatchTransformers) {
  const auto r = references();
  const auto [from_zeros, zeros_final] = chunked_scan(inputs_of(r), at::Tensor(), kChunk);
  EXPECT_LT(max_diff(from_zeros, r.at("chunked_from_zeros")), 1e-4);
  EXPECT_LT(max_diff(zeros_final, r.at("chunked_from_zeros_final")), 1e-4);
  const auto [from_state, state_final] = chunked_scan(inputs_of(r), r.at("state"), kChunk);
  EXPECT_LT(max_diff(from_state, r.at("chunked_from_state")), 1e-4);
  EXPECT_LT(max_diff(state_final, r.at("chunked_from_state_final")), 1e-4);
  at::Tensor state = r.at("state");
  std::vector<at::Tensor> steps;
  for (int64_t i = 0; i < 5; ++i) {
    at::Tensor out;
    std::tie(out, state) = scan_step(inputs_of(r, i, 1), state);
    steps.push_back(out);
  }
  EXPECT_LT(max_diff(at::cat(steps, 1), r.at("step_5")), 1e-4);
  EXPECT_LT(max_diff(state, r.at("step_5_final")), 1e-4);
  // The state matters: from zeros and from a state the outputs differ well past the tolerance.
  EXPECT_GT(max_diff(from_zeros, from_state), 1e-2);
}

// A prefix's state, then its suffix from it: the whole sequence's outputs and state, wherever the split falls
// (inside a chunk, on its edge, past it), and one step from the prefix's state gives the next token's output.
TEST(Mamba2Scan, PiecesFromTheStateEqualTheWhole) {
  const auto r = references();
  const auto [whole, whole_final] = chunked_scan(inputs_of(r), r.at("state"), kChunk);
  for (const int64_t split : {1, 31, 32, 100, 149}) {
    const auto [head, head_final] = chunked_scan(inputs_of(r, 0, split), r.at("state"), kChunk);
    const auto [tail, tail_final] = chunked_scan(inputs_of(r, split), head_final, kChunk);
    EXPECT_LT(max_diff(at::cat({head, tail}, 1), whole), 1e-4) << split;
    EXPECT_LT(max_diff(tail_final, whole_final), 1e-4) << split;
    const auto [step, step_final] = scan_step(inputs_of(r, split, 1), head_final);
    EXPECT_LT(max_diff(step, whole.narrow(1, split, 1)), 1e-4) << split;
  }
  // A token whose step is 0 leaves the state as it is (padding).
  ScanInputs padded = inputs_of(r, 0, 40);
  padded.dt = padded.dt.clone();
  padded.dt.narrow(1, 37, 3).zero_();
  EXPECT_LT(max_diff(chunked_scan(padded, r.at("state"), kChunk).second,
                     chunked_scan(inputs_of(r, 0, 37), r.at("state"), kChunk).second), 1e-4);
  // A state taken one token late is not the prefix's: the suffix's outputs move.
  const auto [late_head, late_final] = chunked_scan(inputs_of(r, 0, 38), r.at("state"), kChunk);
  EXPECT_GT(max_diff(chunked_scan(inputs_of(r, 37), late_final, kChunk).first, whole.narrow(1, 37, 113)), 1e-3);
}

}  // namespace
}  // namespace prefix_scorer::test
