#include "record_sink.hpp"

#include "novelty/util/error.hpp"

#include <cstdio>

namespace novelty::cli {

RecordSink::RecordSink(const std::string& out, Kind kind, bool resume, const std::string& table_header,
                       const std::string& csv_header, const std::string& id_key)
    : kind_(out.empty() ? Kind::table : kind) {
    if (kind_ == Kind::table) {
        if (!table_header.empty()) std::printf("%s\n", table_header.c_str());
        return;
    }
    if (kind_ == Kind::csv)
        file_ = std::make_unique<host::ResumableOutput>(out, resume, host::ResumableOutput::Format::csv, csv_header);
    else
        file_ = std::make_unique<host::ResumableOutput>(out, resume, host::ResumableOutput::Format::jsonl, "", id_key);
}

const std::set<std::string>& no_finished_ids() {
    static const std::set<std::string> none;
    return none;
}

const std::set<std::string>& RecordSink::done() const { return file_ ? file_->done() : no_finished_ids(); }

void RecordSink::write(const std::string& id, const std::string& line) {
    if (file_) {
        file_->write(id, line);
        return;
    }
    std::printf("%s\n", line.c_str());
}

void RecordSink::write_lines(const std::vector<std::string>& ids, std::string_view lines) {
    if (file_) {
        file_->write_lines(ids, lines);
        return;
    }
    std::fwrite(lines.data(), 1, lines.size(), stdout);
}

std::size_t RecordSink::finish(const std::vector<std::string>& ids) {
    if (!file_) {
        std::fflush(stdout);
        return 0;
    }
    return file_->finish(ids);
}

}  // namespace novelty::cli
