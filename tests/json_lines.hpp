// JSON helpers shared by the CLI and server tests.
#pragma once

#include "test_util.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

namespace novelty::test {

/// Every line of a JSON Lines file, parsed (throws on a line that is not JSON).
inline std::vector<nlohmann::json> json_lines(const std::string& path) {
    std::vector<nlohmann::json> out;
    std::istringstream in(read_file(path));
    for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
    return out;
}

/// Equal JSON with the same keys and array lengths, numbers within `tolerance`.
inline bool nearly_equal(const nlohmann::json& a, const nlohmann::json& b, double tolerance = 1e-5) {
    if (a.is_number() && b.is_number()) return std::abs(a.get<double>() - b.get<double>()) <= tolerance;
    if (a.type() != b.type() || a.size() != b.size()) return false;
    if (a.is_array()) {
        for (std::size_t i = 0; i < a.size(); ++i)
            if (!nearly_equal(a[i], b[i], tolerance)) return false;
        return true;
    }
    if (a.is_object()) {
        for (auto it = a.begin(); it != a.end(); ++it)
            if (!b.contains(it.key()) || !nearly_equal(it.value(), b[it.key()], tolerance)) return false;
        return true;
    }
    return a == b;
}

}  // namespace novelty::test
