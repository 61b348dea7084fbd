#pragma once
// A tensor in a dtype, without a dispatch (an op on the GPU's launch path) when it is in that dtype already.

#include <ATen/ATen.h>

namespace prefix_scorer {

inline at::Tensor cast(const at::Tensor& t, at::ScalarType dtype) { return t.scalar_type() == dtype ? t : t.to(dtype); }

}  // namespace prefix_scorer
