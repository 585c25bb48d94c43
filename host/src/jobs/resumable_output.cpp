#include "novelty_host/jobs/resumable_output.hpp"

#include "novelty/util/atomic_file.hpp"
#include "novelty/util/error.hpp"

#include "json_parse.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>

namespace novelty::host {

namespace fs = std::filesystem;

ResumableOutput::ResumableOutput(std::string out_path, bool resume) : out_(std::move(out_path)), partial_(out_ + ".partial") {
    std::string kept;
    if (fs::exists(partial_)) {
        if (!resume)
            throw UsageError(partial_ + " holds an interrupted run: pass --resume to continue it, or delete it to start over");
        std::ifstream in(partial_, std::ios::binary);
        std::string line;
        while (std::getline(in, line)) {
            if (in.eof()) break;  // no newline: cut by the interruption
            nlohmann::json record;
            try {
                record = parse_json(line);
            } catch (const JsonError&) {
                continue;
            }
            if (!record.is_object() || !record.contains("id") || !record["id"].is_string() || record.contains("error")) continue;
            const std::string id = record["id"].get<std::string>();
            done_.insert(id);
            records_[id] = line;
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

void ResumableOutput::write(const std::string& id, const std::string& json_line) {
    stream_ << json_line << '\n';
    stream_.flush();
    if (!stream_) throw Error(partial_ + ": write failed");
    records_[id] = json_line;
}

std::size_t ResumableOutput::finish(const std::vector<std::string>& ids) {
    stream_.close();
    std::string all;
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
