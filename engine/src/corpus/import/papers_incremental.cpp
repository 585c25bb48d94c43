#include "corpus/import/papers_incremental.hpp"

#include "corpus/import/papers_layout.hpp"

#include <optional>
#include <string>

namespace novelty::import_detail {

namespace {

std::int64_t count_of(SqliteDb& db, const std::string& sql) {
    auto q = db.prepare(sql);
    q.step();
    return q.column_int(0);
}

// The sort key of the import's row order: undated last, then by date, then by id.
struct OrderKey {
    bool undated = false;
    std::string sort_date, id;
    bool operator<(const OrderKey& o) const {
        if (undated != o.undated) return !undated;
        if (sort_date != o.sort_date) return sort_date < o.sort_date;
        return id < o.id;
    }
};

std::optional<OrderKey> order_key(SqliteDb& db, const std::string& sql) {
    auto q = db.prepare(sql);
    if (!q.step()) return std::nullopt;
    return OrderKey{q.column_is_null(0), q.column_text(0), q.column_text(1)};
}

// True when nothing is removed and every staged paper sorts after the last old row.
bool is_pure_append(SqliteDb& db, std::int64_t n_old) {
    if (count_of(db, "SELECT count(*) FROM staging.removed") > 0) return false;
    const auto first_new = order_key(db, "SELECT sort_date, id FROM staging.staging "
                                         "ORDER BY sort_date IS NULL, sort_date, id LIMIT 1");
    if (!first_new || n_old == 0) return true;
    const auto last_old = order_key(db, "SELECT sort_date, id FROM papers WHERE row = " + std::to_string(n_old - 1));
    return last_old && *last_old < *first_new;
}

// Removed papers leave the full-text index (which needs their indexed text), aliases and records.
void remove_papers(SqliteDb& db) {
    db.exec(R"sql(
        INSERT INTO papers_fts (papers_fts, rowid, title, abstract)
            SELECT 'delete', d.key, d.title, d.abstract FROM paper_data d JOIN staging.removed r ON r.key = d.key;
        DELETE FROM paper_aliases WHERE key IN (SELECT key FROM staging.removed);
        DELETE FROM paper_data WHERE key IN (SELECT key FROM staging.removed);
    )sql");
}

// The staged papers as records with keys first_key, ... in row order, indexed for full text.
void insert_papers(SqliteDb& db, std::int64_t first_key) {
    auto insert = db.prepare(R"sql(
        INSERT INTO paper_data (key, id, title, abstract, date, sort_date, year, field, venue, citations, extra)
        SELECT ?1 + row_number() OVER (ORDER BY sort_date IS NULL, sort_date, id) - 1,
               id, title, abstract, date, sort_date, year, field, venue, citations, extra
        FROM staging.staging ORDER BY sort_date IS NULL, sort_date, id)sql");
    insert.bind(1, first_key);
    insert.step();
    auto index = db.prepare(
        "INSERT INTO papers_fts (rowid, title, abstract) SELECT key, title, abstract FROM paper_data WHERE key >= ?");
    index.bind(1, first_key);
    index.step();
}

// Pure append: the new keys take rows n_old, ... in key order.
std::vector<std::int64_t> append_rows(SqliteDb& db, std::int64_t n_old, std::int64_t first_key) {
    auto rows = db.prepare(R"sql(
        INSERT INTO paper_rows (row, key, input_row)
        SELECT ?1 + d.key - ?2, d.key, ?1 + row_number() OVER (ORDER BY s.input_row) - 1
        FROM paper_data d JOIN staging.staging s ON s.id = d.id WHERE d.key >= ?2 ORDER BY d.key)sql");
    rows.bind(1, n_old);
    rows.bind(2, first_key);
    rows.step();
    const std::int64_t n_new = count_of(db, "SELECT count(*) FROM staging.staging");
    std::vector<std::int64_t> out(static_cast<std::size_t>(n_old + n_new), -1);
    for (std::int64_t r = 0; r < n_old; ++r) out[static_cast<std::size_t>(r)] = r;
    return out;
}

// General case: paper_rows rewritten in date order (only this narrow table is rewritten).
std::vector<std::int64_t> renumber_rows(SqliteDb& db, std::int64_t first_key) {
    auto inputs = db.prepare(R"sql(
        CREATE TEMP TABLE new_input AS
        SELECT key, row_number() OVER (ORDER BY part, input_row) - 1 AS input_row FROM (
            SELECT r.key AS key, 0 AS part, r.input_row AS input_row FROM paper_rows r
                WHERE NOT EXISTS (SELECT 1 FROM staging.removed x WHERE x.key = r.key)
            UNION ALL
            SELECT d.key, 1, s.input_row FROM paper_data d JOIN staging.staging s ON s.id = d.id WHERE d.key >= ?1))sql");
    inputs.bind(1, first_key);
    inputs.step();
    db.exec(R"sql(
        CREATE UNIQUE INDEX temp.new_input_key ON new_input (key);
        CREATE TEMP TABLE old_rows AS SELECT key, row FROM paper_rows;
        CREATE UNIQUE INDEX temp.old_rows_key ON old_rows (key);
        DELETE FROM paper_rows;
        INSERT INTO paper_rows (row, key, input_row)
        SELECT row_number() OVER (ORDER BY d.sort_date IS NULL, d.sort_date, d.id) - 1, d.key, n.input_row
        FROM paper_data d INDEXED BY paper_data_order JOIN new_input n ON n.key = d.key
        ORDER BY d.sort_date IS NULL, d.sort_date, d.id;
    )sql");
    std::vector<std::int64_t> out;
    auto q = db.prepare("SELECT o.row FROM paper_rows r LEFT JOIN old_rows o ON o.key = r.key ORDER BY r.row");
    while (q.step()) out.push_back(q.column_is_null(0) ? -1 : q.column_int(0));
    db.exec("DROP TABLE temp.new_input; DROP TABLE temp.old_rows;");
    return out;
}

}  // namespace

void check_s2_side_records(SqliteDb& db) {
    for (const char* table : {"s2_abstracts", "s2_vectors"}) {
        const std::string exists = count_of(db, std::string("SELECT count(*) FROM staging.sqlite_master WHERE name = '") + table + "'") > 0
                                       ? std::string("SELECT count(*) FROM staging.") + table + " t WHERE "
                                             "NOT EXISTS (SELECT 1 FROM staging.staging s WHERE s.id = t.corpusid) AND "
                                             "EXISTS (SELECT 1 FROM main.paper_data d WHERE d.id = t.corpusid AND "
                                             "NOT EXISTS (SELECT 1 FROM staging.removed r WHERE r.key = d.key))"
                                       : std::string();
        if (!exists.empty() && count_of(db, exists) > 0)
            throw NeedsRebuild(std::string("s2 ") + table + " name papers of the corpus that no new papers record lists");
    }
}

std::vector<std::int64_t> apply_staged_papers(SqliteDb& db) {
    const std::int64_t n_old = count_of(db, "SELECT count(*) FROM paper_rows");
    const std::int64_t first_key = count_of(db, "SELECT coalesce(max(key), -1) + 1 FROM paper_data");
    const bool append = is_pure_append(db, n_old);
    remove_papers(db);
    insert_papers(db, first_key);
    std::vector<std::int64_t> old_row_of_new = append ? append_rows(db, n_old, first_key) : renumber_rows(db, first_key);
    insert_staged_aliases(db, first_key);
    return old_row_of_new;
}

}  // namespace novelty::import_detail
