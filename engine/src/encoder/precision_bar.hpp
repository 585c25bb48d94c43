// The encoder's accuracy bar (docs/encoder.md): which narrow precision keeps what a user relies
// on, measured against float32 with all-MiniLM-L6-v2. The rule (counted_swaps, meets_bar) and the
// table of what tests/engine/encoder/encoder_precision_test.cpp and bench/run_devset_precision.sh
// measured (precision_meets_bar). Which of the precisions that keep it is fastest on this CPU is
// precision_auto.hpp's job.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace novelty::encoder {

/// One of an idea's k nearest papers: its corpus row and the similarity float32's vector of the
/// idea gives it (whichever precision ranked it among the k nearest).
struct RankedPaper {
    std::size_t row = 0;
    double f32_similarity = 0.0;
};

/// Two papers closer than this in float32 similarity may trade places in a top 10 at a narrow
/// precision without the trade counting against it (the issue-49 decision: the 10th and 11th
/// papers of the demo ideas are as little as 0.00006 apart, closer than bf16 moves a similarity).
inline constexpr double top10_swap_tolerance = 0.001;

/// How many papers of `got` (a narrow precision's top k) replace a paper of `want` (float32's top
/// k) with a float32 similarity more than `tolerance` below the one it replaces. The papers that
/// left (in `want`, not in `got`) and those that entered (in `got`, not in `want`) are each sorted
/// by float32 similarity, highest first (ties by row), and paired in that order, which makes the
/// largest gap of the pairs as small as any pairing can. 0 when both hold the same rows (in any
/// order); the sizes may differ (a shorter list's missing papers count as left or entered without
/// a partner, each one counted).
std::size_t counted_swaps(const std::vector<RankedPaper>& want, const std::vector<RankedPaper>& got,
                          double tolerance = top10_swap_tolerance);

/// What the bar measures of one precision against float32.
struct BarMeasures {
    double min_cosine = 0.0;   ///< over the real abstracts, each text's vector against float32's
    double mean_cosine = 0.0;
    std::size_t ideas = 0;            ///< demo ideas compared
    std::size_t ideas_kept_top10 = 0; ///< of them, those with no counted swap in their top 10
    double rnd_auroc_difference = 0.0;  ///< |RND AUROC - float32's| on the development set, worst field
};

/// The bar: min cosine >= 0.999, mean >= 0.9995, >= 99% of the ideas keep their top 10 (no counted
/// swap), and the development set's RND AUROC within 0.003 of float32's.
bool meets_bar(const BarMeasures& m);

/// What of the bar `m` misses, in words ("top 10 kept for 19 of 20 demo ideas"; several joined by
/// "; "); "" when it meets it.
std::string bar_shortfall(const BarMeasures& m);

/// The measured BarMeasures of `precision` ("f32", "bf16", "int8") for the model `model_name`,
/// when measured: all-MiniLM-L6-v2 only (float32 itself for every model: all ones, zero
/// difference). False for a model or precision never measured.
bool measured_bar(const std::string& model_name, const std::string& precision, BarMeasures& out);

/// Whether `precision` keeps the bar for `model_name` as measured (false when never measured).
bool precision_meets_bar(const std::string& model_name, const std::string& precision);

}  // namespace novelty::encoder
