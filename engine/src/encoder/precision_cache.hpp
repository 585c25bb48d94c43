// Where `--precision auto` keeps its calibrations (precision_calibration.hpp): one JSON file in
// the user's cache directory, one entry per CPU model, CPU path, thread count, model and engine
// version, so that each combination is measured once.
#pragma once

#include "encoder/precision_calibration.hpp"

#include <cstddef>
#include <optional>
#include <string>

namespace novelty::encoder {

/// What a calibration depends on; two keys are the same calibration when every field is equal.
struct CalibrationKey {
    std::string cpu_model;  ///< /proc/cpuinfo's "model name" ("" where unknown)
    std::string cpu_path;   ///< cpu_path_name(cpu_path()): a forced lower path is another entry
    std::size_t threads = 0;
    std::string model;      ///< the model directory's name (model_name)
    std::string version;    ///< the engine's version: new kernels measure anew
};

/// One calibration: its times, what it chose, when (UTC, ISO 8601).
struct CalibrationRecord {
    PrecisionTimes seconds;
    std::string chosen;
    std::string measured_at;
};

/// This CPU's model name from /proc/cpuinfo ("" where there is none).
std::string cpu_model_name();

/// $XDG_CACHE_HOME/novelty/encoder_precision.json, else $HOME/.cache/novelty/encoder_precision.json;
/// "" when neither variable is set (then nothing is cached).
std::string calibration_cache_path();

/// The record for `key` in the file at `path`; nullopt when the file, the entry or a readable
/// record is missing (a damaged file is treated as empty, never an error).
std::optional<CalibrationRecord> read_calibration(const std::string& path, const CalibrationKey& key);

/// Writes `record` for `key` into the file at `path` (atomically; other keys' entries kept, this
/// key's replaced), creating its directory. False, with nothing thrown, when it cannot be written.
bool write_calibration(const std::string& path, const CalibrationKey& key, const CalibrationRecord& record);

}  // namespace novelty::encoder
