// The real CUDA device in a CPU-only build: there is none (the emulated one is always there).
#include "device/device.hpp"
#include "novelty/util/error.hpp"

namespace novelty::dev {

Device& cuda_device() {
    throw UsageError("CUDA was not compiled in: this is a CPU-only build (use --device cpu, or cuda-emulated to test "
                     "the CUDA backend's logic on the host)");
}

}  // namespace novelty::dev
