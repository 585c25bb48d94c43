// Which precision `auto` gives the CPU encoder: the fastest one on this CPU that keeps the
// accuracy bar (docs/encoder.md).
#pragma once

#include <string>
#include <vector>

namespace novelty::encoder {

/// The CPU encoder's precisions in the order of their speed on this CPU, fastest first: "int8"
/// where the CPU has AVX512-VNNI, "bf16" where it has AVX512-BF16 (elsewhere both run through
/// float32 sgemm and are no faster), then "f32".
std::vector<std::string> precisions_fastest_first();

/// Whether `precision` ("f32", "bf16", "int8") keeps the accuracy bar with all-MiniLM-L6-v2: cosine
/// to float32's vectors >= 0.999 (min) and >= 0.9995 (mean) over 1,000 real abstracts, and the
/// same 10 nearest demo papers as float32 for >= 99% of the demo ideas. A table of what
/// tests/engine/encoder/encoder_precision_test.cpp measures (the test fails when it is wrong).
bool precision_meets_bar(const std::string& precision);

/// "auto" resolved: the first of precisions_fastest_first() that meets the bar.
std::string auto_precision();

}  // namespace novelty::encoder
