// The import pipeline's hook for `corpus add` (corpus_add.cpp): the papers of an existing
// corpus are staged first (as the records of "the corpus", before every file), later records
// with their ids replace them and PubMed deletions remove them, and the caller writes vectors
// and caches into the new corpus before it replaces the old one.
#pragma once

#include "corpus/import/read_sources.hpp"
#include "corpus/import/s2_join.hpp"
#include "corpus/sqlite_db.hpp"
#include "novelty/corpus/corpus.hpp"
#include "novelty/corpus/import.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <functional>
#include <string>
#include <vector>

namespace novelty::import_detail {

/// What the new corpus looks like just before it is committed.
struct BuiltCorpus {
    SqliteDb& db;                              ///< the new papers.sqlite, staging attached
    std::string dir;                           ///< the work directory (renamed into place next)
    CorpusManifest& manifest;                  ///< papers and stats filled; vectors to be filled
    std::vector<std::int64_t> old_row_of_new;  ///< per new row: its row in the base corpus, or -1
    S2Join* s2;                                ///< the s2 vectors given, or null
};

/// Adds what one import read (sources, skips, duplicates, revisions, deletions) to `manifest`.
void record_reading(CorpusManifest& manifest, const Reading& reading);
/// The import's checks of its inputs and of the corpus at `out` that it replaces.
void check_import_options(const ImportOptions& options, const std::filesystem::path& out);
/// Attaches an empty staging database at `staging_path` to `db` (and starts the s2 join when a
/// source is in the s2 format; `base_dir`: the corpus an add adds to, "" for an import).
void attach_staging(SqliteDb& db, const std::string& staging_path, const ImportOptions& options,
                    std::optional<S2Join>& s2, const std::string& base_dir);
/// The manifest's counts, dates, fields and venues from papers.sqlite.
void fill_corpus_stats(SqliteDb& db, CorpusManifest& manifest);

/// import_corpus with a base: `base_dir` is an existing corpus whose papers are staged first
/// and whose directory is replaced (atomically, as import --overwrite does) by the result;
/// `finish` runs after the papers table is built and before the manifest is written. With
/// `incremental` (the base in the keyed layout), the base's papers.sqlite is copied and only the
/// new records are applied to it (papers_incremental.hpp), with the result a rebuild gives;
/// NeedsRebuild is thrown (nothing committed) when it cannot be.
ImportSummary import_onto(const ImportOptions& options, const std::string& base_dir,
                          const std::function<void(BuiltCorpus&)>& finish, bool incremental);

}  // namespace novelty::import_detail
