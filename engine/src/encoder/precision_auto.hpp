// `--precision auto` resolved: the fastest precision of the CPU encoder that keeps the accuracy bar
// (precision_bar.hpp) on this CPU, never one slower than f32. The bar is a table (it is a property
// of the model and the arithmetic, the same on every CPU); the speed is measured on first use
// (precision_calibration.hpp) and cached per CPU model, CPU path, thread count, model and engine
// version (precision_cache.hpp). docs/encoder.md says why.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace novelty::encoder {

/// The environment variable that pins auto's choice ("f32", "bf16" or "int8"), for tests and
/// benchmarks: no measurement, no cache.
inline constexpr const char* auto_precision_env = "NOVELTY_AUTO_PRECISION";

struct AutoPrecision {
    std::string precision;  ///< "f32", "bf16" or "int8"
    std::string reason;     ///< one line: how it was chosen (for `novelty info`)
};

/// The precisions auto may choose for the model named `model_name` on this CPU: "f32", then "int8"
/// where the CPU path has an int8 kernel and "bf16" where it has AVX512-BF16 (elsewhere they run
/// through float32 sgemm, never faster), each only when it keeps the bar (precision_meets_bar).
std::vector<std::string> auto_candidates(const std::string& model_name);

/// "auto" for the model in `model_dir` run on `threads` threads (0 = all cores): the pin of
/// NOVELTY_AUTO_PRECISION when set (UsageError naming it for another value); else f32 when it is
/// the only candidate; else the cached calibration for this CPU, or a new one (a few seconds; then
/// cached, with a notice) when there is none or `refresh` is true. The cache being unwritable
/// only means measuring again next time.
AutoPrecision resolve_auto_precision(const std::string& model_dir, std::size_t threads, bool refresh = false);

}  // namespace novelty::encoder
