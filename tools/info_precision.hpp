// What `novelty info` says about `--precision auto`: the CPU encoder's precision it resolves to for
// the default model on this CPU, and why.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>

namespace novelty::cli {

/// The flags of `novelty info` that concern the encoder's precision.
struct PrecisionInfoFlags {
    std::size_t threads = 0;   ///< the thread count auto is resolved for (0 = all cores)
    bool recalibrate = false;  ///< measure again, replacing the cached calibration
};

/// {"precision": "f32" | "bf16" | "int8", "reason": STR, "model": DIR} for the default model, or
/// {"precision": null, "reason": why not} when it is not installed.
nlohmann::json auto_precision_info(const PrecisionInfoFlags& flags);

/// One line for the text form: "encoder     --precision auto is bf16 (...)".
std::string auto_precision_line(const nlohmann::json& info);

}  // namespace novelty::cli
