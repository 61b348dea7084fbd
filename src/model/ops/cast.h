#pragma once
// A tensor in a dtype, without a dispatch (an op on the GPU's launch path) when it is in that dtype already.

#include <ATen/ATen.h>

namespace prefix_scorer {

inline at::Tensor cast(const at::Tensor& t, at::ScalarType dtype) { return t.scalar_type() == dtype ? t : t.to(dtype); }

// A tensor on the host, without a dispatch when it is there already.
inline at::Tensor on_host(const at::Tensor& t) { return t.device().is_cpu() ? t : t.to(at::kCPU); }

}  // namespace prefix_scorer
