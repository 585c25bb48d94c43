#include "info_precision.hpp"

#include "novelty/encoder/text_encoder.hpp"
#include "novelty/util/error.hpp"

namespace novelty::cli {

nlohmann::json auto_precision_info(const PrecisionInfoFlags& flags) {
    std::string model_dir;
    try {
        model_dir = default_model_dir();
    } catch (const Error& e) {
        return {{"precision", nullptr}, {"reason", e.what()}};
    }
    const ResolvedPrecision r = resolve_encoder_precision("auto", model_dir, flags.threads, flags.recalibrate);
    return {{"precision", r.precision}, {"reason", r.reason}, {"model", model_dir}};
}

std::string auto_precision_line(const nlohmann::json& info) {
    if (info["precision"].is_null()) return "encoder     --precision auto: unknown (" + info["reason"].get<std::string>() + ")";
    return "encoder     --precision auto is " + info["precision"].get<std::string>() + " on the CPU (" +
           info["reason"].get<std::string>() + ")";
}

}  // namespace novelty::cli
