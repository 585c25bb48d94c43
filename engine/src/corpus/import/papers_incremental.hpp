// corpus add without a rebuild: the staged records applied to a copy of the base corpus's
// papers.sqlite (keyed layout, papers_layout.hpp). Removed papers leave the records, aliases
// and full-text index; new papers get fresh keys and are indexed alone; rows are appended, or
// renumbered in the narrow paper_rows table when a new paper sorts among the old ones.
#pragma once

#include "corpus/sqlite_db.hpp"
#include "novelty/corpus/import.hpp"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace novelty::import_detail {

/// Thrown when an incremental add cannot give what a full rebuild gives (s2 abstracts that name
/// a paper of the base corpus without its papers record): the caller rebuilds instead.
struct NeedsRebuild : std::runtime_error {
    using std::runtime_error::runtime_error;
};

/// What the tables beside the papers need to know of an add: the format the citation graph
/// reads bare ids with (citations_detail::citation_format), the time of this add, and the
/// base corpus's last write (its manifest's `created`).
struct AddedTables {
    std::string citation_format;
    std::string now;
    std::string base_created;
};
/// Those of an add of `options` to the corpus at `base_dir` ("" for a new corpus), now.
AddedTables added_tables(const ImportOptions& options, const std::string& base_dir);

/// Throws NeedsRebuild when staged s2 abstracts name a kept base paper that no staged record
/// lists (a full rebuild fills that paper's abstract).
void check_s2_side_records(SqliteDb& db);

/// Applies staging.staging and staging.removed to the main schema. Returns, per row of the
/// result, the paper's row in the base corpus or -1 (a new paper). Input rows: the kept base
/// papers in their old input order, then the staged ones in theirs, numbered without gaps.
/// The citation graph (citation_table.hpp) and the insertion times (paper_inserted.hpp) are
/// updated too. Runs inside the caller's transaction (nothing is committed here).
std::vector<std::int64_t> apply_staged_papers(SqliteDb& db, const AddedTables& tables);

}  // namespace novelty::import_detail
