// Fuzzes the JSON Lines importers: the line reader (plain and gzip, line cap, checksum), the JSON
// parse entry point, and each of the five JSON record formats (s2: all four kinds of line). Every input must end in records or in
// InputError; anything else (a crash, a sanitizer report, another exception) is a finding.
#include "corpus/citations/s2_citations.hpp"
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
                                    ImportFormat::paperlists, ImportFormat::s2};
    const ImportFormat format = formats[size > 0 ? data[0] % 5 : 0];
    try {
        novelty::JsonlReader reader(path, 1 << 16);  // a small cap, so the fuzzer reaches it
        nlohmann::json record;
        for (;;) {
            try {
                if (!reader.next(record)) break;
                if (format == ImportFormat::s2 &&
                    novelty::import_detail::s2_record_kind(record) != novelty::import_detail::S2Kind::paper) {
                    novelty::import_detail::S2Vector vector;
                    if (novelty::import_detail::s2_record_kind(record) == novelty::import_detail::S2Kind::citation)
                        (void)novelty::citations_detail::s2_citation(record, path, reader.line_number());
                    else if (record.contains("vector")) novelty::import_detail::s2_vector(record, path, reader.line_number(), vector);
                    else (void)novelty::import_detail::s2_abstract(record, path, reader.line_number());
                    continue;
                }
                const novelty::Paper paper =
                    novelty::import_detail::paper_from_record(format, record, path, reader.line_number(), "");
                // s2 papers may lack text until their abstract is joined.
                if (paper.id.empty() || (format != ImportFormat::s2 && paper.title.empty() && paper.abstract.empty()))
                    __builtin_trap();
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
