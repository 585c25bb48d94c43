#include "encoder/precision_auto.hpp"

#include "encoder/encoder_parts.hpp"
#include "encoder/precision_bar.hpp"
#include "encoder/precision_cache.hpp"
#include "novelty/util/cpu_path.hpp"
#include "novelty/util/error.hpp"
#include "util/file_util.hpp"
#include "util/notices.hpp"
#include "util/parallel_for.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace novelty::encoder {

namespace {

// Why each narrow precision is not a candidate, as "; int8 ...: ..." pieces.
std::string passed_over(const std::string& model_name) {
    std::string out;
    for (const char* p : {"int8", "bf16"}) {
        const bool kernel = std::string(p) == "int8" ? int8_kernel_available() : bf16_kernel_available();
        BarMeasures m;
        if (!kernel)
            out += std::string("; ") + p + " has no kernel on the CPU path " + cpu_path_name(cpu_path()) +
                   " (it would be slower than f32)";
        else if (!measured_bar(model_name, p, m))
            out += std::string("; ") + p + "'s accuracy bar was never measured for " + model_name;
        else if (!meets_bar(m))
            out += std::string("; ") + p + " misses the accuracy bar: " + bar_shortfall(m);
    }
    return out;
}

// "bf16 0.61 s, f32 0.88 s (1.44x)" for a calibration's times against f32's.
std::string times_text(const PrecisionTimes& seconds) {
    std::string out;
    const auto f32 = seconds.find("f32");
    for (const auto& [p, s] : seconds) {
        char buf[96];
        if (p != "f32" && f32 != seconds.end() && s > 0)
            std::snprintf(buf, sizeof buf, "%s %.3f s (%.2fx f32)", p.c_str(), s, f32->second / s);
        else
            std::snprintf(buf, sizeof buf, "%s %.3f s", p.c_str(), s);
        out += (out.empty() ? "" : ", ") + std::string(buf);
    }
    return out;
}

AutoPrecision pinned(const char* value) {
    const std::string v = value;
    if (v != "f32" && v != "bf16" && v != "int8")
        throw UsageError(std::string(auto_precision_env) + " must be f32, bf16 or int8, not '" + v + "'",
                         auto_precision_env);
    return {v, "pinned by " + std::string(auto_precision_env) + "=" + v};
}

}  // namespace

std::vector<std::string> auto_candidates(const std::string& model_name) {
    std::vector<std::string> out{"f32"};
    if (int8_kernel_available() && precision_meets_bar(model_name, "int8")) out.push_back("int8");
    if (bf16_kernel_available() && precision_meets_bar(model_name, "bf16")) out.push_back("bf16");
    return out;
}

AutoPrecision resolve_auto_precision(const std::string& model_dir, std::size_t threads, bool refresh) {
    if (const char* pin = std::getenv(auto_precision_env); pin && *pin) return pinned(pin);
    const std::string model = model_name(model_dir);
    const std::vector<std::string> candidates = auto_candidates(model);
    if (candidates.size() == 1) return {"f32", "the only precision that keeps the bar here" + passed_over(model)};
    const CalibrationKey key{cpu_model_name(), cpu_path_name(cpu_path()), resolve_threads(threads), model,
                             NOVELTY_VERSION};
    const std::string path = calibration_cache_path();
    std::optional<CalibrationRecord> record = refresh ? std::nullopt : read_calibration(path, key);
    if (record && std::find(candidates.begin(), candidates.end(), record->chosen) == candidates.end())
        record.reset();  // the bar's table changed since: measure again
    const bool cached = record.has_value();
    if (!cached) {
        CalibrationRecord fresh;
        fresh.seconds = time_precisions(model_dir, candidates, key.threads);
        fresh.chosen = fastest_keeping_bar(fresh.seconds, candidates);
        fresh.measured_at = utc_now_iso8601();
        const bool written = write_calibration(path, key, fresh);
        notice("--precision auto chose " + fresh.chosen + " for " + model + " at " + std::to_string(key.threads) +
               " threads by a calibration (" + times_text(fresh.seconds) + "); " +
               (written ? "cached in " + path + " (novelty info --recalibrate measures again)"
                        : std::string("not cached (no writable cache directory)")));
        record = std::move(fresh);
    }
    const std::string where = key.cpu_model.empty() ? std::string("this CPU") : key.cpu_model;
    return {record->chosen, "fastest that keeps the bar on " + where + " (path " + key.cpu_path + ") at " +
                                std::to_string(key.threads) + " threads: " + times_text(record->seconds) +
                                ", calibrated " + record->measured_at + (cached ? ", cached in " + path : "") +
                                passed_over(model)};
}

}  // namespace novelty::encoder
