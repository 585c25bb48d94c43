#include "device_choice.hpp"

#include "novelty/search/backends.hpp"
#include "novelty/search/devices.hpp"
#include "novelty/shard/shard.hpp"

#include <cstdio>

namespace novelty::cli {

void add_device_flags(CLI::App* command, DeviceFlags& flags) {
    command->add_option("--device", flags.device,
                        "auto (default: CUDA when compiled in and a GPU is present), cpu, cuda, or cuda-emulated "
                        "(the CUDA backend on an emulated device in host memory, for testing; docs/cuda.md)")
        ->check(CLI::IsMember({"auto", "cpu", "cuda", "cuda-emulated"}));
    command->add_option("--device-storage", flags.device_storage,
                        "How the CUDA backend holds the corpus: f16 (default), bf16 or f32 (neighbours identical "
                        "to the CPU backend's)")
        ->check(CLI::IsMember({"f16", "bf16", "f32"}));
    command->add_option("--storage", flags.storage,
                        "How the CPU index holds the corpus: f32 (default), bf16 (a half-size copy) or int8 (a "
                        "quarter-size copy); bf16 and int8 screen every product on the copy and re-score the "
                        "candidates in float32, so results are identical to f32's")
        ->check(CLI::IsMember({"f32", "bf16", "int8"}));
    command->add_option("--device-memory", flags.device_memory_mib,
                        "GPU memory the CUDA backend may use, in MiB (default: 90% of free); a corpus that does "
                        "not fit is streamed through in chunks");
}

std::unique_ptr<SearchBackend> make_search_backend(const DeviceFlags& flags, std::size_t threads, bool quiet) {
    auto backend = make_backend(flags);
    backend->tuning.threads = threads;
    if (!quiet && backend->name() == "cuda-emulated")
        std::fprintf(stderr, "novelty: searching on the emulated CUDA device (host memory: a test of the CUDA "
                             "backend's logic, not a GPU run)\n");
    if (!quiet && backend->name() == "cuda") {
        const auto devices = list_devices();
        std::fprintf(stderr, "novelty: searching on the GPU (%s, %s storage)\n",
                     devices.empty() ? "CUDA" : devices.front().name.c_str(), flags.device_storage.c_str());
    }
    return backend;
}

std::unique_ptr<SearchIndex> make_index(const Corpus& corpus, const SearchBackend& backend, const DeviceFlags& flags) {
    if (shard_world().size < 2) return backend.build(VectorView::of(corpus.vectors()));
    ShardBackendSpec spec;
    spec.device = flags.device;
    spec.cuda = cuda_options(flags.device_storage, flags.device_memory_mib);
    spec.cpu = cpu_options(flags.storage);
    spec.tuning = backend.tuning;
    return make_sharded_index(corpus, spec);
}

}  // namespace novelty::cli
