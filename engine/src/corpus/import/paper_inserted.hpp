// When each paper entered the corpus, kept in papers.sqlite (docs/formats.md, "Insertion
// times"): `CREATE TABLE paper_inserted (key INTEGER PRIMARY KEY, inserted TEXT NOT NULL)`, the
// UTC time (ISO 8601) of the import or `corpus add` that brought the paper in. A revised paper
// keeps the time it first came in; papers of a corpus written before the table was kept count
// as inserted when that corpus was last written (its manifest's `created`: they were in it by
// then). The Semantic Scholar-compatible API's insertedBefore reads it.
#pragma once

#include "corpus/sqlite_db.hpp"

#include <cstdint>
#include <string>

namespace novelty::import_detail {

/// Import (or an add that rebuilds): the table for every paper, inserted `now`; with `base_schema`
/// (the base corpus's papers.sqlite attached under that name), papers of the base keep its time
/// (or `base_created` when it kept none). Inside the caller's transaction.
void build_paper_inserted(SqliteDb& db, const std::string& now, const std::string& base_schema = "",
                          const std::string& base_created = "");

/// Incremental add, before staging.removed's papers leave paper_data: remembers their ids and times.
void note_removed_inserted(SqliteDb& db);

/// Incremental add, after the staged papers got keys from `first_key` on: the new papers are
/// inserted `now` (a revision keeps its paper's time), the removed ones leave the table. A corpus
/// without the table gets it, its old papers at `base_created`.
void update_paper_inserted(SqliteDb& db, std::int64_t first_key, const std::string& now, const std::string& base_created);

}  // namespace novelty::import_detail
