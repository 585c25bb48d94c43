#include "corpus/citations/citation_table.hpp"

#include "corpus/citations/citation_keys.hpp"
#include "novelty/corpus/corpus.hpp"
#include "novelty/corpus/paper.hpp"

#include <nlohmann/json.hpp>

namespace novelty::citations_detail {

namespace {

/// Dataset edges sort after every reference of a record's list.
constexpr std::int64_t dataset_pos = std::int64_t{1} << 32;

std::string papers_query(SqliteDb& db, const std::string& schema) {
    return has_table(db, "paper_data", schema) ? "SELECT key, id, extra FROM " + schema + ".paper_data WHERE key >= ? ORDER BY key"
                                               : "SELECT row, id, extra FROM " + schema + ".papers WHERE row >= ? ORDER BY row";
}

void create_tables(SqliteDb& db, const std::string& s) {
    db.exec("CREATE TABLE " + s + ".citations (citing INTEGER NOT NULL, pos INTEGER NOT NULL, cited INTEGER, "
            "cited_key TEXT NOT NULL, id_kind TEXT NOT NULL, id TEXT NOT NULL, origin INTEGER NOT NULL, "
            "influential INTEGER, contexts TEXT, intents TEXT, PRIMARY KEY (citing, cited_key)) WITHOUT ROWID;"
            "CREATE TABLE " + s + ".citation_keys (key TEXT NOT NULL, paper INTEGER NOT NULL, PRIMARY KEY (key, paper)) WITHOUT ROWID;");
}

/// The indexes of the lookups by cited paper, by unresolved key and by paper's keys; made once
/// the tables are filled (an import fills them faster without).
void create_indexes(SqliteDb& db, const std::string& s) {
    db.exec("CREATE INDEX " + s + ".citations_cited ON citations (cited) WHERE cited IS NOT NULL;"
            "CREATE INDEX " + s + ".citations_unresolved ON citations (cited_key) WHERE cited IS NULL;"
            "CREATE INDEX " + s + ".citation_keys_paper ON citation_keys (paper);");
}

/// The keys and the record references of every paper of `papers_schema` from `first_key` on;
/// with `touched`, each key added is listed in temp.cite_touched too.
void add_record_edges(SqliteDb& db, const std::string& format, const std::string& papers_schema, const std::string& s,
                      std::int64_t first_key, bool touched) {
    auto papers = db.prepare(papers_query(db, papers_schema));
    papers.bind(1, first_key);
    auto key = db.prepare("INSERT OR IGNORE INTO " + s + ".citation_keys (key, paper) VALUES (?, ?)");
    auto edge = db.prepare("INSERT OR IGNORE INTO " + s + ".citations (citing, pos, cited, cited_key, id_kind, id, origin) "
                           "VALUES (?, ?, NULL, ?, ?, ?, 1)");
    std::optional<SqliteStatement> touch;
    if (touched) touch.emplace(db.prepare("INSERT OR IGNORE INTO temp.cite_touched (key) VALUES (?)"));
    const auto run = [](SqliteStatement& q) { q.step(); q.reset(); };
    while (papers.step()) {
        Paper paper;
        const std::int64_t paper_key = papers.column_int(0);
        paper.id = papers.column_text(1);
        const nlohmann::json extra = nlohmann::json::parse(papers.column_text(2), nullptr, false);
        for (const std::string& k : keys_of_paper(paper, extra, format)) {
            key.bind(1, k);
            key.bind(2, paper_key);
            run(key);
            if (touch) touch->bind(1, k), run(*touch);
        }
        std::int64_t pos = 0;
        for (const CitedKey& r : references_of(extra)) {
            edge.bind(1, paper_key);
            edge.bind(2, pos++);
            edge.bind(3, r.key);
            edge.bind(4, r.id_kind);
            edge.bind(5, r.id);
            run(edge);
            if (touch) touch->bind(1, r.key), run(*touch);
        }
    }
}

/// Inserts `select` (citing, pos, cited_key, id_kind, id, influential, contexts, intents) as
/// dataset edges: an edge the citing record lists too keeps its place and takes the dataset's
/// influence, contexts and intents.
void upsert_dataset_edges(SqliteDb& db, const std::string& s, const std::string& select) {
    db.exec("INSERT INTO " + s + ".citations (citing, pos, cited, cited_key, id_kind, id, origin, influential, contexts, intents) "
            "SELECT citing, pos, NULL, cited_key, id_kind, id, 2, influential, contexts, intents FROM (" + select + ") WHERE true "
            "ON CONFLICT (citing, cited_key) DO UPDATE SET origin = origin | 2, influential = excluded.influential, "
            "contexts = excluded.contexts, intents = excluded.intents");
}

bool has_schema(SqliteDb& db, const std::string& schema) {
    auto q = db.prepare("SELECT count(*) FROM pragma_database_list WHERE name = ?");
    q.bind(1, schema);
    q.step();
    return q.column_int(0) > 0;
}

/// The staged S2 citations dataset's edges whose citing paper is in the corpus (by its corpus id).
void add_staged_dataset_edges(SqliteDb& db, const std::string& s, bool touched) {
    if (!has_schema(db, "staging") || !has_table(db, "s2_citations", "staging")) return;
    upsert_dataset_edges(db, s, "SELECT * FROM (SELECT (SELECT min(k.paper) FROM " + s + ".citation_keys k "
                                "WHERE k.key = 'corpusid:' || c.citing) AS citing, " + std::to_string(dataset_pos) +
                                " + c.seq AS pos, 'corpusid:' || c.cited AS cited_key, 'CorpusId' AS id_kind, c.cited AS id, "
                                "c.influential, c.contexts, c.intents FROM staging.s2_citations c) WHERE citing IS NOT NULL");
    if (touched) db.exec("INSERT OR IGNORE INTO temp.cite_touched (key) SELECT 'corpusid:' || cited FROM staging.s2_citations");
}

/// A rebuilding add: the dataset's edges of the base corpus (attached as `base`), moved to the
/// papers with their ids.
void carry_base_dataset_edges(SqliteDb& db, const std::string& s, const std::string& base) {
    if (!has_citation_tables(db, base)) return;
    const std::string base_papers = has_table(db, "paper_data", base) ? "SELECT key, id FROM " + base + ".paper_data"
                                                                       : "SELECT row AS key, id FROM " + base + ".papers";
    upsert_dataset_edges(db, s, "SELECT d.key AS citing, c.pos, c.cited_key, c.id_kind, c.id, c.influential, c.contexts, "
                                "c.intents FROM " + base + ".citations c JOIN (" + base_papers + ") b ON b.key = c.citing "
                                "JOIN main.paper_data d ON d.id = b.id WHERE c.origin & 2");
}

/// Resolves the unresolved edges whose key is in temp.cite_touched to the paper holding their key
/// (the first by key when several do).
void resolve_touched(SqliteDb& db, const std::string& s) {
    db.exec("UPDATE " + s + ".citations SET cited = (SELECT min(k.paper) FROM " + s + ".citation_keys k "
            "WHERE k.key = citations.cited_key) WHERE cited IS NULL AND cited_key IN (SELECT key FROM temp.cite_touched)");
}

/// Resolves every edge (a build, before the indexes are made) by one join of the two tables.
void resolve_all(SqliteDb& db, const std::string& s) {
    db.exec("UPDATE " + s + ".citations SET cited = k.paper FROM (SELECT key, min(paper) AS paper FROM " + s +
            ".citation_keys GROUP BY key) AS k WHERE citations.cited IS NULL AND citations.cited_key = k.key");
}

}  // namespace

std::string citation_format(const ImportOptions& options, const std::string& base_dir) {
    std::vector<std::string> formats;
    if (!base_dir.empty())
        for (const SourceInfo& s : read_manifest(base_dir).sources) formats.push_back(s.format);
    for (const ImportSource& s : options.sources) formats.push_back(import_format_name(s.format));
    return shared_format(formats);
}

bool has_citation_tables(SqliteDb& db, const std::string& schema) {
    return has_table(db, "citations", schema) && has_table(db, "citation_keys", schema);
}

void build_citation_tables(SqliteDb& db, const std::string& format, const std::string& papers_schema,
                           const std::string& out_schema, const std::string& base_schema) {
    create_tables(db, out_schema);
    add_record_edges(db, format, papers_schema, out_schema, 0, false);
    if (!base_schema.empty()) carry_base_dataset_edges(db, out_schema, base_schema);
    add_staged_dataset_edges(db, out_schema, false);
    resolve_all(db, out_schema);
    create_indexes(db, out_schema);
}

std::size_t n_citing_outside(SqliteDb& db) {
    if (!has_schema(db, "staging") || !has_table(db, "s2_citations", "staging")) return 0;
    auto q = db.prepare("SELECT count(*) FROM staging.s2_citations c WHERE NOT EXISTS "
                        "(SELECT 1 FROM main.citation_keys k WHERE k.key = 'corpusid:' || c.citing)");
    q.step();
    return static_cast<std::size_t>(q.column_int(0));
}

void note_removed_citing(SqliteDb& db) {
    if (!has_citation_tables(db)) return;
    db.exec("DROP TABLE IF EXISTS temp.cite_removed;"
            "CREATE TEMP TABLE cite_removed AS SELECT r.key AS old_key, d.id AS id FROM staging.removed r "
            "JOIN main.paper_data d ON d.key = r.key;");
}

void update_citation_tables(SqliteDb& db, std::int64_t first_key, const std::string& format) {
    if (!has_citation_tables(db)) {
        build_citation_tables(db, format);
        return;
    }
    db.exec(R"sql(
        DROP TABLE IF EXISTS temp.cite_touched;
        DROP TABLE IF EXISTS temp.cite_moved;
        CREATE TEMP TABLE cite_touched (key TEXT PRIMARY KEY) WITHOUT ROWID;
        CREATE TEMP TABLE IF NOT EXISTS cite_removed (old_key INTEGER, id TEXT);
        INSERT OR IGNORE INTO temp.cite_touched (key)
            SELECT key FROM main.citation_keys WHERE paper IN (SELECT old_key FROM temp.cite_removed);
        DELETE FROM main.citation_keys WHERE paper IN (SELECT old_key FROM temp.cite_removed);
        CREATE TEMP TABLE cite_moved AS
            SELECT d.key AS citing, c.pos, c.cited_key, c.id_kind, c.id, c.influential, c.contexts, c.intents
            FROM main.citations c JOIN temp.cite_removed r ON r.old_key = c.citing JOIN main.paper_data d ON d.id = r.id
            WHERE c.origin & 2;
        DELETE FROM main.citations WHERE citing IN (SELECT old_key FROM temp.cite_removed);
        UPDATE main.citations SET cited = NULL WHERE cited IN (SELECT old_key FROM temp.cite_removed);
    )sql");
    add_record_edges(db, format, "main", "main", first_key, true);
    upsert_dataset_edges(db, "main", "SELECT * FROM temp.cite_moved");
    db.exec("INSERT OR IGNORE INTO temp.cite_touched (key) SELECT cited_key FROM temp.cite_moved");
    add_staged_dataset_edges(db, "main", true);
    resolve_touched(db, "main");
    db.exec("DROP TABLE temp.cite_touched; DROP TABLE temp.cite_moved; DROP TABLE temp.cite_removed;");
}

}  // namespace novelty::citations_detail
