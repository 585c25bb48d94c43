#include "encoder/precision_cache.hpp"

#include "util/file_util.hpp"

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace novelty::encoder {

namespace fs = std::filesystem;

namespace {

nlohmann::json key_json(const CalibrationKey& key) {
    return {{"cpu_model", key.cpu_model},
            {"cpu_path", key.cpu_path},
            {"threads", key.threads},
            {"model", key.model},
            {"version", key.version}};
}

// The file's entries; an empty array when it is missing or not what this code writes.
nlohmann::json read_entries(const std::string& path) {
    std::ifstream in(path);
    if (!in) return nlohmann::json::array();
    const auto j = nlohmann::json::parse(std::string(std::istreambuf_iterator<char>(in), {}), nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("entries") || !j["entries"].is_array())
        return nlohmann::json::array();
    return j["entries"];
}

}  // namespace

std::string cpu_model_name() {
    std::ifstream in("/proc/cpuinfo");
    for (std::string line; std::getline(in, line);) {
        if (line.rfind("model name", 0) != 0) continue;
        const auto colon = line.find(':');
        if (colon == std::string::npos) break;
        const auto first = line.find_first_not_of(" \t", colon + 1);
        return first == std::string::npos ? "" : line.substr(first);
    }
    return "";
}

std::string calibration_cache_path() {
    const char* xdg = std::getenv("XDG_CACHE_HOME");
    if (xdg && *xdg == '/') return (fs::path(xdg) / "novelty" / "encoder_precision.json").string();
    const char* home = std::getenv("HOME");
    if (home && *home) return (fs::path(home) / ".cache" / "novelty" / "encoder_precision.json").string();
    return "";
}

std::optional<CalibrationRecord> read_calibration(const std::string& path, const CalibrationKey& key) {
    const nlohmann::json want = key_json(key);
    for (const auto& e : read_entries(path)) {
        if (!e.is_object() || e.value("key", nlohmann::json()) != want) continue;
        CalibrationRecord r;
        try {
            r.seconds = e.at("seconds").get<PrecisionTimes>();
            r.chosen = e.at("chosen").get<std::string>();
            r.measured_at = e.value("measured_at", "");
        } catch (const nlohmann::json::exception&) {
            return std::nullopt;
        }
        if (r.chosen != "f32" && r.chosen != "bf16" && r.chosen != "int8") return std::nullopt;
        return r;
    }
    return std::nullopt;
}

bool write_calibration(const std::string& path, const CalibrationKey& key, const CalibrationRecord& record) {
    if (path.empty()) return false;
    const nlohmann::json want = key_json(key);
    nlohmann::json entries = nlohmann::json::array();
    for (const auto& e : read_entries(path))
        if (e.is_object() && e.value("key", nlohmann::json()) != want) entries.push_back(e);
    entries.push_back({{"key", want},
                       {"seconds", record.seconds},
                       {"chosen", record.chosen},
                       {"measured_at", record.measured_at}});
    try {
        fs::create_directories(fs::path(path).parent_path());
        write_file_atomic(path, nlohmann::json{{"entries", entries}}.dump(2) + "\n");
    } catch (const std::exception&) {
        return false;
    }
    return true;
}

}  // namespace novelty::encoder
