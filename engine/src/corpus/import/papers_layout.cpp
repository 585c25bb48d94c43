#include "corpus/import/papers_layout.hpp"

#include <string_view>

namespace novelty::import_detail {

void create_papers_layout(SqliteDb& db) {
    db.exec(R"sql(
        CREATE TABLE paper_data (
            key INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, title TEXT NOT NULL, abstract TEXT NOT NULL,
            date TEXT, sort_date TEXT, year INTEGER, field TEXT, venue TEXT, citations INTEGER,
            extra TEXT NOT NULL);
        CREATE TABLE paper_rows (row INTEGER PRIMARY KEY, key INTEGER NOT NULL UNIQUE, input_row INTEGER NOT NULL);
        CREATE TABLE paper_aliases (alias TEXT NOT NULL, key INTEGER NOT NULL, PRIMARY KEY (alias, key)) WITHOUT ROWID;
        CREATE VIEW papers AS
            SELECT r.row AS row, d.id AS id, d.title AS title, d.abstract AS abstract, d.date AS date,
                   d.sort_date AS sort_date, d.year AS year, d.field AS field, d.venue AS venue,
                   d.citations AS citations, d.extra AS extra, r.input_row AS input_row
            FROM paper_rows r LEFT JOIN paper_data d ON d.key = r.key;
        CREATE VIEW aliases AS
            SELECT a.alias AS alias, r.row AS row FROM paper_aliases a JOIN paper_rows r ON r.key = a.key
            WHERE NOT EXISTS (SELECT 1 FROM paper_aliases b WHERE b.alias = a.alias AND b.key != a.key)
              AND NOT EXISTS (SELECT 1 FROM paper_data d WHERE d.id = a.alias);
    )sql");
}

void fill_papers_layout(SqliteDb& db) {
    db.exec(R"sql(
        BEGIN;
        INSERT INTO paper_data (key, id, title, abstract, date, sort_date, year, field, venue, citations, extra)
        SELECT row_number() OVER (ORDER BY sort_date IS NULL, sort_date, id) - 1,
               id, title, abstract, date, sort_date, year, field, venue, citations, extra
        FROM staging.staging ORDER BY sort_date IS NULL, sort_date, id;
        INSERT INTO paper_rows (row, key, input_row)
        SELECT d.key, d.key, s.input_row FROM paper_data d JOIN staging.staging s ON s.id = d.id ORDER BY d.key;
        CREATE INDEX paper_data_sort_date ON paper_data (sort_date);
        CREATE INDEX paper_data_order ON paper_data (sort_date IS NULL, sort_date, id);
        CREATE INDEX paper_aliases_key ON paper_aliases (key);
        CREATE INDEX paper_data_field ON paper_data (field);
        CREATE INDEX paper_data_venue ON paper_data (venue);
        CREATE INDEX paper_data_citations ON paper_data (citations);
        COMMIT;
    )sql");
    db.exec("BEGIN");
    insert_staged_aliases(db, 0);
    db.exec("COMMIT");
}

void index_papers_layout(SqliteDb& db) {
    db.exec(R"sql(
        CREATE VIRTUAL TABLE papers_fts USING fts5(title, abstract, content='paper_data', content_rowid='key');
        INSERT INTO papers_fts (papers_fts) VALUES ('rebuild');
    )sql");
}

void insert_staged_aliases(SqliteDb& db, std::int64_t first_key) {
    auto papers = db.prepare(
        "SELECT d.key, s.aliases FROM paper_data d JOIN staging.staging s ON s.id = d.id "
        "WHERE d.key >= ? AND s.aliases != '' ORDER BY d.key");
    papers.bind(1, first_key);
    auto insert = db.prepare("INSERT OR IGNORE INTO paper_aliases (alias, key) VALUES (?, ?)");
    while (papers.step()) {
        const std::int64_t key = papers.column_int(0);
        const std::string list = papers.column_text(1);
        for (std::size_t start = 0, end; (end = list.find('\n', start)) != std::string::npos; start = end + 1) {
            insert.bind(1, std::string_view(list.data() + start, end - start));
            insert.bind(2, key);
            insert.step();
            insert.reset();
        }
    }
}

bool has_keyed_layout(SqliteDb& db, const std::string& schema) {
    return has_table(db, "paper_rows", schema);
}

}  // namespace novelty::import_detail
