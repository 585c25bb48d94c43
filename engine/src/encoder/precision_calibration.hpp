// The short measurement `--precision auto` takes on first use: how long the CPU encoder's forward
// pass takes at each candidate precision on this CPU, at the thread count the encoder will use.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace novelty::encoder {

/// Seconds of one calibration batch per precision (the fastest of the timed rounds).
using PrecisionTimes = std::map<std::string, double>;

/// Loads the model in `model_dir` once per precision of `precisions` ("f32", "bf16", "int8"), then
/// times the forward pass of a fixed synthetic batch (per thread: 4 sequences of 96 to 256 token
/// ids, 736 tokens, the lengths of real abstracts) on `threads` threads (each its own batch, as
/// the encoder runs groups): one untimed round, then `rounds` timed ones, the precisions
/// interleaved round by round so that a change in the machine's load falls on all of them.
/// A few seconds for all-MiniLM-L6-v2 on 2 cores. Deterministic inputs, wall-clock outputs.
PrecisionTimes time_precisions(const std::string& model_dir, const std::vector<std::string>& precisions,
                               std::size_t threads, std::size_t rounds = 3);

/// The choice from measured times: the fastest of `keeping_bar` (which holds "f32"), where a
/// narrow precision must beat f32's time by `margin` (0.05: 5% faster) to be chosen, so that
/// noise never picks one slower than f32. Precisions without a time are passed over. Ties go to
/// the earlier in `keeping_bar`.
std::string fastest_keeping_bar(const PrecisionTimes& times, const std::vector<std::string>& keeping_bar,
                                double margin = 0.05);

}  // namespace novelty::encoder
