#include "novelty/backend_choice.hpp"

#include "novelty/error.hpp"

namespace novelty {

std::unique_ptr<SearchBackend> make_backend(const std::string& device) {
    if (device == "auto" || device == "cpu") return make_cpu_backend();
    if (device == "cuda")
        throw UsageError("--device cuda: the CUDA search backend is not available in this version; use cpu");
    throw UsageError("--device '" + device + "': expected auto, cpu or cuda");
}

}  // namespace novelty
