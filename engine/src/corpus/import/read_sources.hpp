// Reading the import's sources into the staging table: papers, s2 abstracts and vectors,
// PubMed revisions and deletions, and (corpus add) the base corpus's own papers first.
#pragma once

#include "corpus/import/s2_join.hpp"
#include "corpus/sqlite_db.hpp"
#include "novelty/corpus/corpus.hpp"
#include "novelty/corpus/import.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace novelty::import_detail {

/// Records between progress reports; skipped records listed in the manifest.
inline constexpr std::size_t progress_every = 2000;
inline constexpr std::size_t max_listed_skips = 100;

/// What reading the sources found.
struct Reading {
    std::vector<SourceInfo> sources;
    std::size_t accepted = 0;
    std::size_t next_input_row = 0;  ///< records staged so far (input_row of the next one)
    std::size_t revised = 0;
    std::size_t deleted = 0;
    std::size_t skipped = 0;
    std::size_t duplicates = 0;
    std::vector<SkippedRecord> skipped_first;
    bool base_in_main = false;  ///< incremental add: the base corpus is the main schema
};

/// Reads every source into staging.staging (and the s2 side tables), after the papers of the
/// corpus in `base_dir` when it is not empty. With `base_in_main` (incremental add) the main
/// schema is a copy of the base corpus (keyed layout): records with a base paper's id replace
/// it (or are dropped as identical copies) and deletions may name base papers; what they
/// remove is listed in staging.removed, and the base papers are never staged. Bad records
/// throw InputError or are skipped.
Reading read_sources(const ImportOptions& options, SqliteDb& db, S2Join* s2, const std::string& base_dir,
                     bool base_in_main = false);

/// After every file: the s2 join, input rows renumbered without gaps, an empty result refused.
void finish_reading(const ImportOptions& options, SqliteDb& db, S2Join* s2, Reading& reading);

}  // namespace novelty::import_detail
