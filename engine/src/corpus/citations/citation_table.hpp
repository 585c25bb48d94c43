// The citation graph kept in papers.sqlite (docs/formats.md, "The citation graph"):
//
//   citations (citing, pos, cited, cited_key, id_kind, id, origin, influential, contexts, intents)
//     one row per (citing paper, cited work); citing and cited are paper keys (paper_data.key;
//     the row in a corpus of format version 1), cited null while the cited work is not in the
//     corpus; origin 1 = the citing record's reference list, 2 = the S2 citations dataset, 3 = both
//   citation_keys (key, paper): every key under which each paper can be cited (citation_keys.hpp)
//
// `corpus import` builds both (build_citation_tables); `corpus add` keeps them current
// (note_removed_citing before the base's removed papers go, update_citation_tables after the new
// ones are in): the new papers' references resolve against every paper, references that earlier
// papers made to a new paper by one of its keys resolve to it, edges of removed papers go (the
// dataset's edges of a revised paper move to its new record) and references to them become
// unresolved again. Every function runs inside the caller's transaction.
#pragma once

#include "corpus/sqlite_db.hpp"
#include "novelty/corpus/import.hpp"

#include <cstdint>
#include <string>

namespace novelty::citations_detail {

/// The format the graph reads bare ids with: the one the sources of the corpus at `base_dir`
/// ("" for a new corpus) and of `options` share, "" when they differ (host/src/server/paper_ids.hpp's
/// corpus_format of the manifest the import writes).
std::string citation_format(const ImportOptions& options, const std::string& base_dir);

/// True when `schema` of `db` holds the citation tables.
bool has_citation_tables(SqliteDb& db, const std::string& schema = "main");

/// Creates the citation tables in `out_schema` and fills them from every paper of
/// `papers_schema` (keyed layout, or format version 1), the staged S2 citations dataset
/// (staging.s2_citations, when present) and, when `base_schema` is not empty, the dataset's
/// edges of the corpus whose papers.sqlite is attached under that name (a `corpus add` that
/// rebuilds), matched by paper id.
/// `format`: the import format the corpus's sources share ("" when they differ).
void build_citation_tables(SqliteDb& db, const std::string& format, const std::string& papers_schema = "main",
                           const std::string& out_schema = "main", const std::string& base_schema = "");

/// The staged S2 citations dataset lines whose citing paper is not in the corpus (0 when none
/// were staged), after the tables were built or updated.
std::size_t n_citing_outside(SqliteDb& db);

/// Incremental add, before staging.removed's papers leave paper_data: remembers their ids.
void note_removed_citing(SqliteDb& db);

/// Incremental add, after the staged papers got keys from `first_key` on (and the removed ones
/// left): the update described above. Builds the tables whole when the corpus has none yet.
void update_citation_tables(SqliteDb& db, std::int64_t first_key, const std::string& format);

}  // namespace novelty::citations_detail
