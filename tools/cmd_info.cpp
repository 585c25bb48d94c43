// novelty info: the build (version, CUDA compiled in or not), the CPU kernels' path and the devices
// present.
#include "cli_common.hpp"
#include "info_precision.hpp"

#include "novelty/search/backends.hpp"
#include "novelty/search/devices.hpp"
#include "novelty/util/cpu_path.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <memory>

namespace novelty::cli {

namespace {

int run_info(bool json, const PrecisionInfoFlags& precision_flags) {
    const auto devices = list_devices();
    const nlohmann::json precision = auto_precision_info(precision_flags);
    if (json) {
        nlohmann::json j;
        j["version"] = NOVELTY_VERSION;
        j["cpu_path"] = cpu_path_name(cpu_path());
        j["cpu_path_reason"] = cpu_path_reason();
        j["encoder_precision"] = precision;
        j["cuda_compiled"] = cuda_compiled();
        j["cuda_architectures"] = cuda_architectures();
        j["cuda_versions"] = cuda_versions();
        j["auto_device"] = auto_device();
        j["devices"] = nlohmann::json::array();
        for (const auto& d : devices)
            j["devices"].push_back({{"index", d.index},
                                    {"name", d.name},
                                    {"compute_capability", std::to_string(d.compute_major) + "." + std::to_string(d.compute_minor)},
                                    {"multiprocessors", d.multiprocessors},
                                    {"total_memory_bytes", d.total_memory_bytes},
                                    {"free_memory_bytes", d.free_memory_bytes}});
        std::printf("%s\n", j.dump(2).c_str());
        return exit_ok;
    }
    std::printf("novelty %s\n", NOVELTY_VERSION);
    std::printf("cpu path    %s (%s)\n", cpu_path_name(cpu_path()), cpu_path_reason().c_str());
    std::printf("%s\n", auto_precision_line(precision).c_str());
    if (!cuda_compiled()) {
        std::printf("cuda        not compiled in (CPU-only build; rebuild with -DNOVELTY_CUDA=ON for the CUDA backend)\n");
        return exit_ok;
    }
    std::printf("cuda        compiled in, architectures %s\n", cuda_architectures().c_str());
    std::printf("versions    %s\n", cuda_versions().c_str());
    if (devices.empty()) std::printf("devices     none found (--device auto uses the CPU backend)\n");
    else std::printf("backend     --device auto uses the CUDA backend on device 0\n");
    for (const auto& d : devices)
        std::printf("device %d    %s, compute %d.%d, %d SMs, %.1f GiB (%.1f GiB free)\n", d.index, d.name.c_str(),
                    d.compute_major, d.compute_minor, d.multiprocessors, d.total_memory_bytes / 1073741824.0,
                    d.free_memory_bytes / 1073741824.0);
    return exit_ok;
}

}  // namespace

void add_info_command(CLI::App& app, int& exit_code) {
    auto json = std::make_shared<bool>(false);
    auto precision = std::make_shared<PrecisionInfoFlags>();
    CLI::App* info = app.add_subcommand("info", "Show the build (version, CUDA compiled in or not, architectures), the CPU kernels' path, what --precision auto chooses for the encoder and why, and the CUDA devices present");
    info->add_flag("--json", *json, "Print as JSON");
    info->add_option("--threads", precision->threads,
                     "Thread count that --precision auto is resolved for (default 0: all cores)");
    info->add_flag("--recalibrate", precision->recalibrate,
                   "Measure the encoder's precisions on this CPU again for --precision auto, replacing the "
                   "cached calibration (in $XDG_CACHE_HOME/novelty, else ~/.cache/novelty)");
    info->callback([json, precision, &exit_code] {
        exit_code = run_guarded([&] { return run_info(*json, *precision); });
    });
}

}  // namespace novelty::cli
