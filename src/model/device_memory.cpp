#include "model/device_memory.h"

namespace prefix_scorer {

int64_t default_batch_bytes(c10::Device device) {
#ifdef PREFIX_SCORER_WITH_CUDA
  if (device.is_cuda()) return cuda::free_bytes(device) / 4;
#endif
  (void)device;
  return int64_t{1} << 30;
}

}  // namespace prefix_scorer
