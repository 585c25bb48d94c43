#include "novelty_host/jobs/resumable_output.hpp"

#include "novelty/util/atomic_file.hpp"
#include "novelty/util/error.hpp"

#include "json_parse.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <utility>

namespace novelty::host {

namespace fs = std::filesystem;

namespace {

/// The first field of a CSV line, unquoted ("a,b" -> a; "\"x,\"\"y\"\"\",b" -> x,"y").
std::optional<std::string> first_csv_field(const std::string& line) {
    if (line.empty() || line[0] != '"') return line.substr(0, line.find(','));
    std::string field;
    for (std::size_t i = 1; i < line.size(); ++i) {
        if (line[i] != '"') {
            field += line[i];
        } else if (i + 1 < line.size() && line[i + 1] == '"') {
            field += '"';
            ++i;
        } else {
            return field;
        }
    }
    return std::nullopt;  // an unterminated quote
}

}  // namespace

ResumableOutput::ResumableOutput(std::string out_path, bool resume, Format format, std::string csv_header)
    : out_(std::move(out_path)), partial_(out_ + ".partial"), format_(format),
      header_(format == Format::csv ? csv_header + "\n" : "") {
    std::string kept = header_;
    if (fs::exists(partial_)) {
        if (!resume)
            throw UsageError(partial_ + " holds an interrupted run: pass --resume to continue it, or delete it to start over");
        std::ifstream in(partial_, std::ios::binary);
        std::string line;
        bool header = !header_.empty();
        while (std::getline(in, line)) {
            if (in.eof()) break;  // no newline: cut by the interruption
            if (std::exchange(header, false)) continue;
            const std::optional<std::string> id = record_id(line);
            if (!id) continue;
            done_.insert(*id);
            records_[*id] = line;
            kept += line + "\n";
        }
    }
    {
        AtomicFile rewrite(partial_);
        rewrite.write(kept.data(), kept.size());
        rewrite.commit();
    }
    stream_.open(partial_, std::ios::app | std::ios::binary);
    if (!stream_) throw Error(partial_ + ": cannot write");
}

std::optional<std::string> ResumableOutput::record_id(const std::string& line) const {
    if (format_ == Format::csv) return first_csv_field(line);
    nlohmann::json record;
    try {
        record = parse_json(line);
    } catch (const JsonError&) {
        return std::nullopt;
    }
    if (!record.is_object() || !record.contains("id") || !record["id"].is_string() || record.contains("error"))
        return std::nullopt;
    return record["id"].get<std::string>();
}

void ResumableOutput::write(const std::string& id, const std::string& json_line) {
    stream_ << json_line << '\n';
    stream_.flush();
    if (!stream_) throw Error(partial_ + ": write failed");
    records_[id] = json_line;
}

std::size_t ResumableOutput::finish(const std::vector<std::string>& ids) {
    stream_.close();
    std::string all = header_;
    std::size_t n = 0;
    std::set<std::string> written;
    for (const std::string& id : ids) {
        auto it = records_.find(id);
        if (it == records_.end() || !written.insert(id).second) continue;
        all += it->second + "\n";
        ++n;
    }
    for (const auto& [id, line] : records_)
        if (!written.count(id)) {
            all += line + "\n";
            ++n;
        }
    AtomicFile file(out_);
    file.write(all.data(), all.size());
    file.commit();
    fs::remove(partial_);
    return n;
}

}  // namespace novelty::host
