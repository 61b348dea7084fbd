// A decode step's attention in one pass on the CPU (decode_attention.h): an online softmax over blocks of keys, each
// kv head's keys and values read once for every query head it serves, blocks no query sees skipped.

#include "model/ops/decode_attention.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace prefix_scorer::cpu {
namespace {

// The loops below are plain C++ that the compiler vectorizes. On x86-64 the kernel is compiled twice, for the
// baseline and for AVX2 with FMA (x86-64-v3), and the loader picks the one the CPU runs.
#if defined(__x86_64__) && defined(__GNUC__)
#define PREFIX_SCORER_VECTOR_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define PREFIX_SCORER_VECTOR_CLONES
#endif
// Helpers inlined into each clone, so that they are vectorized for its instruction set.
#define PREFIX_SCORER_INLINE inline __attribute__((always_inline))

constexpr int64_t kKeyBlock = 128;  // keys scored per step of the online softmax
constexpr int64_t kLanes = 8;       // partial sums of a reduction: one AVX2 register of floats
constexpr float kNone = -std::numeric_limits<float>::infinity();

// Pointers and strides (in elements) of one call's tensors.
struct Problem {
  const float* q;
  const float* k;
  const float* v;
  const bool* visible;
  float* out;
  float* lse;
  int64_t heads, group, queries, keys, dim, v_dim;
  int64_t q_b, q_h, q_t, k_b, k_h, k_s, v_b, v_h, v_s, m_b, m_t, m_s, o_b, o_h, o_t;
  float scale;
};

PREFIX_SCORER_INLINE float dot(const float* a, const float* b, int64_t dim) {
  float lanes[kLanes] = {};
  int64_t d = 0;
  for (; d + kLanes <= dim; d += kLanes) {
    for (int64_t l = 0; l < kLanes; ++l) lanes[l] += a[d + l] * b[d + l];
  }
  float sum = 0;
  for (; d < dim; ++d) sum += a[d] * b[d];
  for (const float lane : lanes) sum += lane;
  return sum;
}

PREFIX_SCORER_INLINE void add_scaled(float* acc, const float* v, float weight, int64_t dim) {
  for (int64_t d = 0; d < dim; ++d) acc[d] += weight * v[d];
}

// e^x to about one float ulp, branch-free so that loops of it vectorize: x = n ln2 + r with |r| <= ln2 / 2 (ln2 in
// two parts, so that r is exact), e^r by the classic Cephes expf polynomial, 2^n by the exponent bits.
PREFIX_SCORER_INLINE float exp_of(float x) {
  x = std::min(std::max(x, -87.0f), 88.0f);
  const float n = std::floor(x * 1.44269504f + 0.5f);
  const float r = (x - n * 0.693359375f) + n * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  const int32_t bits = (static_cast<int32_t>(n) + 127) << 23;
  float two_to_n;
  std::memcpy(&two_to_n, &bits, sizeof two_to_n);
  return p * two_to_n;
}

// scores[j] becomes e^(scores[j] - best), 0 where the key is unseen (-inf); returns their sum.
PREFIX_SCORER_INLINE float exp_and_sum(float* scores, int64_t n, float best) {
  for (int64_t j = 0; j < n; ++j) scores[j] = scores[j] == kNone ? 0.0f : exp_of(scores[j] - best);
  float lanes[kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    for (int64_t l = 0; l < kLanes; ++l) lanes[l] += scores[j + l];
  }
  float sum = 0;
  for (; j < n; ++j) sum += scores[j];
  for (const float lane : lanes) sum += lane;
  return sum;
}

// Sequence b's queries of the `group` query heads kv head g serves: rows m = head-in-group * queries + query of
// `scores` [rows, kKeyBlock], `acc` [rows, v_dim], `best` and `total` [rows] (the running max and softmax sum).
PREFIX_SCORER_VECTOR_CLONES
void attend_kv_head(const Problem& p, int64_t b, int64_t g, float* scores, float* acc, float* best, float* total) {
  const int64_t rows = p.group * p.queries;
  std::fill(acc, acc + rows * p.v_dim, 0.0f);
  std::fill(best, best + rows, kNone);
  std::fill(total, total + rows, 0.0f);
  const float* keys = p.k + b * p.k_b + g * p.k_h;
  const float* values = p.v + b * p.v_b + g * p.v_h;
  const bool* visible = p.visible + b * p.m_b;
  for (int64_t first = 0; first < p.keys; first += kKeyBlock) {
    const int64_t n = std::min(kKeyBlock, p.keys - first);
    bool any = false;
    for (int64_t j = 0; j < n; ++j) {  // each key read once for every query it serves
      const float* key = keys + (first + j) * p.k_s;
      for (int64_t t = 0; t < p.queries; ++t) {
        const bool seen = visible[t * p.m_t + (first + j) * p.m_s];
        any = any || seen;
        for (int64_t i = 0; i < p.group; ++i) {
          const float* query = p.q + b * p.q_b + (g * p.group + i) * p.q_h + t * p.q_t;
          scores[(i * p.queries + t) * kKeyBlock + j] = seen ? dot(query, key, p.dim) * p.scale : kNone;
        }
      }
    }
    if (!any) continue;  // a block of room no query reaches yet
    for (int64_t m = 0; m < rows; ++m) {
      float* row = scores + m * kKeyBlock;
      const float block_best = *std::max_element(row, row + n);
      if (block_best == kNone) {
        std::fill(row, row + n, 0.0f);
        continue;
      }
      const float new_best = std::max(best[m], block_best);
      if (best[m] != kNone && new_best != best[m]) {
        const float shrink = std::exp(best[m] - new_best);
        total[m] *= shrink;
        for (int64_t d = 0; d < p.v_dim; ++d) acc[m * p.v_dim + d] *= shrink;
      }
      total[m] += exp_and_sum(row, n, new_best);
      best[m] = new_best;
    }
    for (int64_t j = 0; j < n; ++j) {
      const float* value = values + (first + j) * p.v_s;
      for (int64_t m = 0; m < rows; ++m) {
        const float weight = scores[m * kKeyBlock + j];
        if (weight != 0.0f) add_scaled(acc + m * p.v_dim, value, weight, p.v_dim);
      }
    }
  }
  for (int64_t m = 0; m < rows; ++m) {
    const int64_t h = g * p.group + m / p.queries, t = m % p.queries;
    float* out = p.out + b * p.o_b + h * p.o_h + t * p.o_t;
    float* lse = p.lse + (b * p.heads + h) * p.queries + t;
    if (total[m] == 0.0f) {
      std::fill(out, out + p.v_dim, 0.0f);
      *lse = kNoKeyLse;
      continue;
    }
    for (int64_t d = 0; d < p.v_dim; ++d) out[d] = acc[m * p.v_dim + d] / total[m];
    *lse = best[m] + std::log(total[m]);
  }
}

bool fp32_cpu_dense(const at::Tensor& t) {
  return t.is_cpu() && t.dim() == 4 && t.scalar_type() == at::kFloat && t.stride(3) == 1;
}

}  // namespace

bool can_attend_decode(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& visible) {
  if (!fp32_cpu_dense(q) || !fp32_cpu_dense(k) || !fp32_cpu_dense(v) || !visible.defined()) return false;
  const int64_t b = q.size(0), queries = q.size(2), keys = k.size(2);
  return queries <= kMostDecodeQueries && k.size(1) > 0 && q.size(1) % k.size(1) == 0 && k.size(0) == b &&
         v.size(0) == b && v.size(1) == k.size(1) && v.size(2) == keys && k.size(3) == q.size(3) &&
         visible.is_cpu() && visible.scalar_type() == at::kBool && visible.dim() == 4 &&
         (visible.size(0) == b || visible.size(0) == 1) && visible.size(1) == 1 &&
         (visible.size(2) == queries || visible.size(2) == 1) && visible.size(3) == keys;
}

std::pair<at::Tensor, at::Tensor> attend_decode(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                                const at::Tensor& visible, double scale) {
  const int64_t b = q.size(0), heads = q.size(1), queries = q.size(2), kv_heads = k.size(1), v_dim = v.size(3);
  // [b, heads, queries, v_dim] over token-major memory, as the flash kernel leaves its output
  at::Tensor out = at::empty_strided({b, heads, queries, v_dim}, {queries * heads * v_dim, v_dim, heads * v_dim, 1},
                                     q.options());
  at::Tensor lse = at::empty({b, heads, queries}, q.options());
  const at::Tensor seen = visible.expand({b, 1, queries, k.size(2)});
  const Problem p{q.const_data_ptr<float>(), k.const_data_ptr<float>(), v.const_data_ptr<float>(),
                  seen.const_data_ptr<bool>(), out.data_ptr<float>(), lse.data_ptr<float>(),
                  heads, heads / kv_heads, queries, k.size(2), q.size(3), v_dim,
                  q.stride(0), q.stride(1), q.stride(2), k.stride(0), k.stride(1), k.stride(2),
                  v.stride(0), v.stride(1), v.stride(2), seen.stride(0), seen.stride(2), seen.stride(3),
                  out.stride(0), out.stride(1), out.stride(2), static_cast<float>(scale)};
  const int64_t rows = p.group * queries;
  at::parallel_for(0, b * kv_heads, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> scores(rows * kKeyBlock), acc(rows * v_dim), best(rows), total(rows);
    for (int64_t item = begin; item < end; ++item) {
      attend_kv_head(p, item / kv_heads, item % kv_heads, scores.data(), acc.data(), best.data(), total.data());
    }
  });
  return {out, lse};
}

}  // namespace prefix_scorer::cpu
