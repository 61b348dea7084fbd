// An IntegerWeight's dequantization as one pass on the CPU: (code - zero point) * scale in fp32 as the ATen ops
// compute them. 4-bit codes: each (row, group) makes the table of its 16 values, then each byte writes its two.

#include "model/ops/integer_weight.h"

#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>

#include <array>
#include <cstdint>

namespace prefix_scorer::cpu {

at::Tensor dequantize_integer(const IntegerWeight& w, at::ScalarType dtype) {
  at::Tensor out = at::empty({w.rows, w.cols}, at::TensorOptions().dtype(dtype));
  const at::Tensor packed = w.codes.contiguous(), scales = w.scales.contiguous(), zeros = w.zeros.contiguous();
  const uint8_t* codes = packed.data_ptr<uint8_t>();
  const float* scale = scales.data_ptr<float>();
  const float* zero = zeros.data_ptr<float>();
  const int64_t groups = w.cols / w.group, row_bytes = packed.size(1), group = w.group, cols = w.cols;
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kBFloat16, at::kHalf, dtype, "dequantize_integer", [&] {
    scalar_t* values = out.data_ptr<scalar_t>();
    at::parallel_for(0, w.rows, 8, [&](int64_t begin, int64_t end) {
      std::array<scalar_t, 16> table;
      for (int64_t r = begin; r < end; ++r) {
        const uint8_t* row = codes + r * row_bytes;
        scalar_t* row_out = values + r * cols;
        for (int64_t g = 0; g < groups; ++g) {
          const float s = scale[r * groups + g], z = zero[r * groups + g];
          if (w.bits == 8) {
            for (int64_t c = g * group; c < (g + 1) * group; ++c)
              row_out[c] = static_cast<scalar_t>((static_cast<float>(row[c]) - z) * s);
            continue;
          }
          for (int q = 0; q < 16; ++q) table[q] = static_cast<scalar_t>((static_cast<float>(q) - z) * s);
          int64_t c = g * group;
          const int64_t last = c + group;
          if (c % 2 == 1) {  // an odd start: the high half of a byte
            row_out[c] = table[row[c / 2] >> 4];
            ++c;
          }
          for (; c + 1 < last; c += 2) {
            const uint8_t byte = row[c / 2];
            row_out[c] = table[byte & 15];
            row_out[c + 1] = table[byte >> 4];
          }
          if (c < last) row_out[c] = table[row[c / 2] & 15];
        }
      }
    });
  });
  return out;
}

}  // namespace prefix_scorer::cpu
