// corpus add without a rebuild: the staged records applied to a copy of the base corpus's
// papers.sqlite (keyed layout, papers_layout.hpp). Removed papers leave the records, aliases
// and full-text index; new papers get fresh keys and are indexed alone; rows are appended, or
// renumbered in the narrow paper_rows table when a new paper sorts among the old ones.
#pragma once

#include "corpus/sqlite_db.hpp"

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

/// Throws NeedsRebuild when staged s2 abstracts name a kept base paper that no staged record
/// lists (a full rebuild fills that paper's abstract).
void check_s2_side_records(SqliteDb& db);

/// Applies staging.staging and staging.removed to the main schema. Returns, per row of the
/// result, the paper's row in the base corpus or -1 (a new paper). Input rows: the kept base
/// papers in their old input order, then the staged ones in theirs, numbered without gaps.
/// The citation graph is updated too (citation_table.hpp; `citation_format`: citation_format()).
/// Runs inside the caller's transaction (nothing is committed here).
std::vector<std::int64_t> apply_staged_papers(SqliteDb& db, const std::string& citation_format);

}  // namespace novelty::import_detail
