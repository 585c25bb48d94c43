// Reading the JSON Lines files of `novelty eval`: records with an id, labels and groups. Errors
// name the file and line (InputError).
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <functional>
#include <string>
#include <unordered_map>

namespace novelty::cli {

/// The name of the group holding every idea; a label file's group may not take it.
inline constexpr const char* overall_group = "all";

/// Calls `fn(record, line)` for each JSON object of a JSON Lines file; blank lines are skipped.
void for_each_record(const std::string& path, const std::function<void(const nlohmann::json&, std::size_t)>& fn);

/// The record's id: a non-empty string, or an integer written as text.
std::string record_id(const nlohmann::json& record, const std::string& path, std::size_t line);

/// Remembers the line of each id and throws on a duplicate.
void claim_id(std::unordered_map<std::string, std::size_t>& lines, const std::string& id, const std::string& path,
              std::size_t line);

struct Label {
    int label = 0;      ///< 1 novel, 0 not
    std::string group;  ///< the value of the group-by key; empty without one
};

/// A labels file: "id" -> label and, when `group_by` is not empty, its group.
std::unordered_map<std::string, Label> read_labels(const std::string& path, const std::string& group_by);

}  // namespace novelty::cli
