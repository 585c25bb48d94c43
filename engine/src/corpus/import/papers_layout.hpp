// The layout of papers.sqlite: paper records under a stable key, the row of each key in a
// narrow table, views that give the row-keyed "papers" and "aliases" every reader queries,
// and the FTS5 index keyed by the stable key, so that `corpus add` renumbers rows without
// re-indexing any text (docs/formats.md, "papers.sqlite").
#pragma once

#include "corpus/sqlite_db.hpp"

#include <cstdint>
#include <string>

namespace novelty::import_detail {

/// Creates the empty tables and views in the main schema of `db`.
void create_papers_layout(SqliteDb& db);

/// Import: fills the layout from staging.staging. Rows (and keys) in date order (undated last,
/// ties by id), input_row from the staging, and the aliases.
void fill_papers_layout(SqliteDb& db);

/// Import: the full-text index (papers_fts) of every paper.
void index_papers_layout(SqliteDb& db);

/// The aliases of the staged papers whose key is at least `first_key` into paper_aliases
/// (every (alias, key) pair; the "aliases" view leaves out ambiguous ones and paper ids), inside
/// the caller's transaction.
void insert_staged_aliases(SqliteDb& db, std::int64_t first_key);

/// True when `schema` ("main", "base") of `db` has this layout (corpora imported before it
/// have a row-keyed papers table, which every reader still accepts).
bool has_keyed_layout(SqliteDb& db, const std::string& schema = "main");

}  // namespace novelty::import_detail
