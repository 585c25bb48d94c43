// Building a corpus directory from paper metadata files (docs/formats.md describes each format).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace novelty {

/// Input formats: generic JSON Lines, the arXiv metadata snapshot, OpenAlex works, the
/// paperlists-style conference records, the Semantic Scholar datasets (papers, abstracts and
/// embeddings files, joined on corpusid) and PubMed baseline/update XML.
enum class ImportFormat { jsonl, arxiv, openalex, paperlists, s2, pubmed };

/// "jsonl" | "arxiv" | "openalex" | "paperlists" | "s2" | "pubmed" -> format; throws UsageError
/// otherwise.
ImportFormat parse_import_format(const std::string& name);
const char* import_format_name(ImportFormat format);

/// One input file with its format and, optionally, the research field of all its records
/// (replacing whatever field the records name themselves).
struct ImportSource {
    std::string path;
    ImportFormat format = ImportFormat::jsonl;
    std::string field;
};

/// A record that was skipped (only with skip_invalid).
struct SkippedRecord {
    std::string file;
    std::size_t line = 0;
    std::string problem;
};

struct ImportProgress {
    std::size_t file_index = 0;    ///< which source is being read
    std::size_t n_files = 0;
    std::uint64_t bytes_read = 0;  ///< of the current file, on disk (compressed)
    std::uint64_t file_bytes = 0;
    std::size_t records = 0;       ///< records accepted so far, all files
    std::string stage;             ///< "reading", "ordering", "indexing", "finishing"
};

struct ImportOptions {
    std::vector<ImportSource> sources;
    std::string out_dir;
    /// Replace out_dir when it already holds a corpus (never a directory that is not one, nor one
    /// that holds anything besides a corpus's own files: those are named in a UsageError).
    bool overwrite = false;
    /// Skip records with problems (reported through on_skip and in the manifest) instead of
    /// failing on the first one.
    bool skip_invalid = false;
    /// Called every few thousand records and at each stage. May throw to cancel the import.
    std::function<void(const ImportProgress&)> on_progress;
    std::function<void(const SkippedRecord&)> on_skip;
    /// Called for each record dropped as an identical copy (same id, same content) of an earlier
    /// one. A repeated id with different content is an error, or a skip with skip_invalid.
    std::function<void(const SkippedRecord&)> on_duplicate;
};

struct ImportSummary {
    std::size_t n_papers = 0;
    std::size_t n_unembedded = 0;  ///< s2: papers left out because no vector was given for them
    std::size_t n_unmatched_abstracts = 0;  ///< s2: abstracts of papers not in the input, passed over
    /// s2: citations lines passed over: their citing paper is not in the corpus, or they name no
    /// cited paper
    std::size_t n_unmatched_citations = 0;
    std::size_t n_revised = 0;     ///< pubmed: records replaced by a later file's version
    std::size_t n_deleted = 0;     ///< pubmed: records removed by a DeleteCitation
    std::size_t n_skipped = 0;
    std::size_t n_duplicates = 0;  ///< identical copies dropped
    std::string out_dir;
};

/// Reads every source and writes a complete corpus directory: papers.sqlite (rows in the order
/// of docs/formats.md: effective date ascending, undated papers last, ties by id) and
/// manifest.json, and records each paper's place among the accepted records (papers.input_row).
/// Work happens in a temporary sibling directory that is renamed into place only when complete,
/// so an interrupted import never leaves out_dir looking whole; what an interrupted import left
/// beside out_dir is repaired first (recover_interrupted_import). "DIR/" and "DIR" are the same.
/// Throws InputError (file, line, problem) for bad records unless skip_invalid, UsageError for
/// bad options (no sources, out_dir exists), Error for I/O failures. An import that yields no
/// papers is an InputError: a corpus is never empty.
ImportSummary import_corpus(const ImportOptions& options);

}  // namespace novelty
