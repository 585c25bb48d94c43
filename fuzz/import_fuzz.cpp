// Fuzzes the JSON Lines importers: the line reader (plain and gzip, line cap, checksum), the JSON
// parse entry point, and each of the four record formats. Every input must end in records or in
// InputError; anything else (a crash, a sanitizer report, another exception) is a finding.
#include "corpus/import/record_fields.hpp"
#include "io/jsonl.hpp"
#include "memory_file.hpp"
#include "novelty/util/error.hpp"

#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static novelty::fuzz::MemoryFile file;
    const std::string path = file.hold(data, size);
    using novelty::ImportFormat;
    // The first byte picks the format, so that each importer sees every kind of line.
    const ImportFormat formats[] = {ImportFormat::jsonl, ImportFormat::arxiv, ImportFormat::openalex,
                                    ImportFormat::paperlists};
    const ImportFormat format = formats[size > 0 ? data[0] % 4 : 0];
    try {
        novelty::JsonlReader reader(path, 1 << 16);  // a small cap, so the fuzzer reaches it
        nlohmann::json record;
        for (;;) {
            try {
                if (!reader.next(record)) break;
                const novelty::Paper paper =
                    novelty::import_detail::paper_from_record(format, record, path, reader.line_number(), "");
                if (paper.id.empty() || (paper.title.empty() && paper.abstract.empty())) __builtin_trap();
            } catch (const novelty::InputError& e) {
                if (e.line() == 0) throw;
                if (e.problem().rfind("corrupt", 0) == 0 || e.problem().rfind("compressed", 0) == 0 ||
                    e.problem().rfind("read error", 0) == 0)
                    throw;  // the importer stops on these too
            }
        }
        (void)reader.sha256();
    } catch (const novelty::InputError&) {
    }
    return 0;
}
