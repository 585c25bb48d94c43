#include "corpus/import/papers_incremental.hpp"

#include "corpus/citations/citation_table.hpp"
#include "corpus/import/paper_inserted.hpp"
#include "corpus/import/papers_layout.hpp"
#include "novelty/corpus/corpus.hpp"
#include "util/file_util.hpp"

#include <algorithm>
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

// The input rows of the new corpus by key (-1 for a removed paper): the kept base papers in their
// old input order, numbered without gaps, then the staged ones in theirs. `old_key` and
// `old_input` are per old row.
std::vector<std::int64_t> new_input_rows(SqliteDb& db, const std::vector<std::int64_t>& old_key,
                                         const std::vector<std::int64_t>& old_input, std::int64_t n_keys,
                                         std::int64_t first_key) {
    std::vector<char> removed(static_cast<std::size_t>(n_keys), 0);
    auto gone = db.prepare("SELECT key FROM staging.removed");
    while (gone.step()) {
        const std::int64_t key = gone.column_int(0);
        if (key >= 0 && key < n_keys) removed[static_cast<std::size_t>(key)] = 1;
    }
    std::vector<std::size_t> kept;  // old rows, to be ordered by input row
    for (std::size_t r = 0; r < old_key.size(); ++r)
        if (!removed[static_cast<std::size_t>(old_key[r])]) kept.push_back(r);
    std::sort(kept.begin(), kept.end(), [&](std::size_t a, std::size_t b) { return old_input[a] < old_input[b]; });
    std::vector<std::int64_t> input_of_key(static_cast<std::size_t>(n_keys), -1);
    std::int64_t next = 0;
    for (const std::size_t r : kept) input_of_key[static_cast<std::size_t>(old_key[r])] = next++;
    auto fresh = db.prepare("SELECT d.key FROM paper_data d JOIN staging.staging s ON s.id = d.id WHERE d.key >= ? "
                            "ORDER BY s.input_row");
    fresh.bind(1, first_key);
    while (fresh.step()) input_of_key[static_cast<std::size_t>(fresh.column_int(0))] = next++;
    return input_of_key;
}

// General case: paper_rows rewritten in date order (only this narrow table is rewritten). The
// order comes from one scan of the order index (it covers the key: no paper record is read); the
// numbering is done here rather than in SQL, which sorted and joined a million rows through
// temporary tables.
std::vector<std::int64_t> renumber_rows(SqliteDb& db, std::int64_t first_key) {
    std::vector<std::int64_t> old_key, old_input;  // per old row
    {
        auto q = db.prepare("SELECT key, input_row FROM paper_rows ORDER BY row");
        while (q.step()) {
            old_key.push_back(q.column_int(0));
            old_input.push_back(q.column_int(1));
        }
    }
    const std::int64_t n_keys = count_of(db, "SELECT coalesce(max(key), -1) + 1 FROM paper_data");
    std::vector<std::int64_t> old_row_of_key(static_cast<std::size_t>(std::max(n_keys, first_key)), -1);
    for (std::size_t r = 0; r < old_key.size(); ++r) old_row_of_key[static_cast<std::size_t>(old_key[r])] = static_cast<std::int64_t>(r);
    const std::vector<std::int64_t> input_of_key = new_input_rows(db, old_key, old_input, std::max(n_keys, first_key), first_key);
    db.exec("DELETE FROM paper_rows");
    auto order = db.prepare("SELECT key FROM paper_data INDEXED BY paper_data_order ORDER BY sort_date IS NULL, sort_date, id");
    auto insert = db.prepare("INSERT INTO paper_rows (row, key, input_row) VALUES (?, ?, ?)");
    std::vector<std::int64_t> out;
    while (order.step()) {
        const std::int64_t key = order.column_int(0);
        insert.bind(1, static_cast<std::int64_t>(out.size()));
        insert.bind(2, key);
        insert.bind(3, input_of_key[static_cast<std::size_t>(key)]);
        insert.step();
        insert.reset();
        out.push_back(key < first_key ? old_row_of_key[static_cast<std::size_t>(key)] : -1);
    }
    return out;
}

}  // namespace

void check_s2_side_records(SqliteDb& db) {
    // (a vector alone for a paper of the corpus is a revision of its vector: S2Join::join)
    for (const char* table : {"s2_abstracts"}) {
        const std::string exists = has_table(db, table, "staging")
                                       ? std::string("SELECT count(*) FROM staging.") + table + " t WHERE "
                                             "NOT EXISTS (SELECT 1 FROM staging.staging s WHERE s.id = t.corpusid) AND "
                                             "EXISTS (SELECT 1 FROM main.paper_data d WHERE d.id = t.corpusid AND "
                                             "NOT EXISTS (SELECT 1 FROM staging.removed r WHERE r.key = d.key))"
                                       : std::string();
        if (!exists.empty() && count_of(db, exists) > 0)
            throw NeedsRebuild(std::string("s2 ") + table + " name papers of the corpus that no new papers record lists");
    }
}

AddedTables added_tables(const ImportOptions& options, const std::string& base_dir) {
    return {citations_detail::citation_format(options, base_dir), utc_now_iso8601(),
            base_dir.empty() ? std::string() : read_manifest(base_dir).created};
}

std::vector<std::int64_t> apply_staged_papers(SqliteDb& db, const AddedTables& tables) {
    const std::int64_t n_old = count_of(db, "SELECT count(*) FROM paper_rows");
    const std::int64_t first_key = count_of(db, "SELECT coalesce(max(key), -1) + 1 FROM paper_data");
    const bool append = is_pure_append(db, n_old);
    citations_detail::note_removed_citing(db);
    note_removed_inserted(db);
    if (count_of(db, "SELECT count(*) FROM staging.removed") > 0) remove_papers(db);
    insert_papers(db, first_key);
    std::vector<std::int64_t> old_row_of_new = append ? append_rows(db, n_old, first_key) : renumber_rows(db, first_key);
    insert_staged_aliases(db, first_key);
    citations_detail::update_citation_tables(db, first_key, tables.citation_format);
    update_paper_inserted(db, first_key, tables.now, tables.base_created);
    return old_row_of_new;
}

}  // namespace novelty::import_detail
