#include "novelty_host/jobs/resumable_output.hpp"

#include "novelty/util/atomic_file.hpp"
#include "novelty/util/error.hpp"

#include "io/json/json_parse.hpp"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
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

std::string read_whole(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error(path + ": cannot read");
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

ResumableOutput::ResumableOutput(std::string out_path, bool resume, Format format, std::string csv_header,
                                 std::string id_key)
    : out_(std::move(out_path)), partial_(out_ + ".partial"), format_(format),
      header_(format == Format::csv ? csv_header + "\n" : ""), id_key_(std::move(id_key)) {
    if (fs::exists(partial_) && !resume)
        throw UsageError(partial_ + " holds an interrupted run: pass --resume to continue it, or delete it to start over");
    const std::string kept = resume_partial();
    {
        AtomicFile rewrite(partial_);
        rewrite.write(kept.data(), kept.size());
        rewrite.commit();
    }
    size_ = kept.size();
    file_ = std::fopen(partial_.c_str(), "ab");
    if (!file_) throw Error(partial_ + ": cannot write: " + std::strerror(errno));
}

ResumableOutput::~ResumableOutput() {
    if (file_) std::fclose(file_);
}

std::string ResumableOutput::resume_partial() {
    std::string kept = header_;
    if (!fs::exists(partial_)) return kept;
    std::ifstream in(partial_, std::ios::binary);
    std::string line;
    bool header = !header_.empty();
    while (std::getline(in, line)) {
        if (in.eof()) break;  // no newline: cut by the interruption
        if (std::exchange(header, false)) continue;
        const std::optional<std::string> id = record_id(line);
        if (!id) continue;
        done_.insert(*id);
        record(*id, kept.size(), line.size());
        kept += line + "\n";
    }
    return kept;
}

std::optional<std::string> ResumableOutput::record_id(const std::string& line) const {
    if (format_ == Format::csv) return first_csv_field(line);
    nlohmann::json record;
    try {
        record = parse_json(line);
    } catch (const JsonError&) {
        return std::nullopt;
    }
    if (!record.is_object() || !record.contains(id_key_) || !record[id_key_].is_string() || record.contains("error"))
        return std::nullopt;
    return record[id_key_].get<std::string>();
}

void ResumableOutput::record(const std::string& id, std::uint64_t offset, std::uint64_t size) {
    records_[id] = Span{offset, size};
    order_.push_back(id);
}

void ResumableOutput::append(std::string_view bytes) {
    if (!file_) throw Error(partial_ + ": write after finish");
    if ((!bytes.empty() && std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size()) ||
        std::fflush(file_) != 0)
        throw Error(partial_ + ": write failed: " + std::strerror(errno));
    size_ += bytes.size();
}

void ResumableOutput::write(const std::string& id, const std::string& line) {
    const std::uint64_t offset = size_;
    std::string bytes = line;
    bytes += '\n';
    append(bytes);
    record(id, offset, line.size());
}

void ResumableOutput::write_lines(const std::vector<std::string>& ids, std::string_view lines) {
    std::vector<Span> spans;
    spans.reserve(ids.size());
    std::size_t start = 0;
    while (start < lines.size()) {
        const std::size_t end = lines.find('\n', start);
        if (end == std::string_view::npos) throw Error(partial_ + ": a record's line has no newline");
        spans.push_back({size_ + start, end - start});
        start = end + 1;
    }
    if (spans.size() != ids.size())
        throw Error(partial_ + ": " + std::to_string(spans.size()) + " lines for " + std::to_string(ids.size()) + " ids");
    append(lines);
    for (std::size_t i = 0; i < ids.size(); ++i) record(ids[i], spans[i].offset, spans[i].size);
}

bool ResumableOutput::partial_is_in_order(const std::vector<std::string>& ids) const {
    return order_ == ids;  // each id once, in the input order: OUT.partial is OUT already
}

std::size_t ResumableOutput::finish(const std::vector<std::string>& ids) {
    if (!file_) throw Error(partial_ + ": finished twice");
    const bool closed = std::fclose(file_) == 0;
    file_ = nullptr;
    if (!closed) throw Error(partial_ + ": write failed: " + std::strerror(errno));
    if (partial_is_in_order(ids)) {
        rename_into_place(partial_, out_);
        return ids.size();
    }
    const std::string partial = read_whole(partial_);
    std::string all = header_;
    std::size_t n = 0;
    std::set<std::string> written;
    const auto emit = [&](const std::string& id) {
        const auto it = records_.find(id);
        if (it == records_.end() || !written.insert(id).second) return;
        all.append(partial, it->second.offset, it->second.size);
        all += '\n';
        ++n;
    };
    for (const std::string& id : ids) emit(id);
    for (const std::string& id : order_) emit(id);
    AtomicFile file(out_);
    file.write(all.data(), all.size());
    file.commit();
    fs::remove(partial_);
    return n;
}

}  // namespace novelty::host
