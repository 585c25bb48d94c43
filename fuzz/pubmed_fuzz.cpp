// Fuzzes the PubMed XML reader: the line reader (plain and gzip), the record tokenizer (comments,
// CDATA, instructions, the DOCTYPE, quoted attributes, the declared encoding, character
// references) and each record's parse and conversion. Every input must end in records, in
// problems the sink is told of, or in InputError; anything else (a crash, a sanitizer report,
// another exception) is a finding, and so is an article whose id is empty, that has no text, or
// whose text is not valid UTF-8 (which would poison the corpus).
#include "corpus/import/record_fields.hpp"
#include "memory_file.hpp"
#include "novelty/util/error.hpp"

#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static novelty::fuzz::MemoryFile file;
    const std::string path = file.hold(data, size);
    novelty::import_detail::PubmedSink sink;
    sink.article = [&](novelty::Paper&& paper, std::size_t line) {
        if (paper.id.empty() || (paper.title.empty() && paper.abstract.empty()) || line == 0) __builtin_trap();
        try {
            novelty::import_detail::check_stored_text(paper, path, line);
        } catch (const novelty::InputError&) {
            __builtin_trap();
        }
    };
    sink.deletion = [](const std::string&, std::size_t line) {
        if (line == 0) __builtin_trap();
    };
    sink.skip = [](const novelty::InputError& error) {
        if (error.line() == 0) __builtin_trap();  // a record's problem always has its line
    };
    try {
        (void)novelty::import_detail::read_pubmed(path, sink);
    } catch (const novelty::InputError&) {
    }
    return 0;
}
