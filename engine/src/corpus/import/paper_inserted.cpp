#include "corpus/import/paper_inserted.hpp"

namespace novelty::import_detail {

namespace {

void create_table(SqliteDb& db) {
    db.exec("CREATE TABLE paper_inserted (key INTEGER PRIMARY KEY, inserted TEXT NOT NULL)");
}

}  // namespace

void build_paper_inserted(SqliteDb& db, const std::string& now, const std::string& base_schema,
                          const std::string& base_created) {
    create_table(db);
    auto all = db.prepare("INSERT INTO paper_inserted (key, inserted) SELECT key, ? FROM paper_data");
    all.bind(1, now);
    all.step();
    if (base_schema.empty()) return;
    const bool keyed = has_table(db, "paper_data", base_schema);
    const std::string base_ids = keyed ? "SELECT key, id FROM " + base_schema + ".paper_data"
                                       : "SELECT row AS key, id FROM " + base_schema + ".papers";
    // The base's papers: their recorded time, else the base's last write.
    const std::string recorded = has_table(db, "paper_inserted", base_schema)
                                     ? "(SELECT i.inserted FROM " + base_schema + ".paper_inserted i WHERE i.key = b.key)"
                                     : "NULL";
    auto keep = db.prepare("UPDATE paper_inserted SET inserted = coalesce(o.inserted, ?1) FROM (SELECT d.key AS key, " +
                           recorded + " AS inserted FROM (" + base_ids + ") b JOIN main.paper_data d ON d.id = b.id) o "
                           "WHERE o.key = paper_inserted.key");
    keep.bind(1, base_created.empty() ? now : base_created);
    keep.step();
}

void note_removed_inserted(SqliteDb& db) {
    db.exec(std::string("DROP TABLE IF EXISTS temp.inserted_removed;"
                        "CREATE TEMP TABLE inserted_removed AS SELECT r.key AS old_key, d.id AS id, ") +
            (has_table(db, "paper_inserted") ? "i.inserted AS inserted FROM staging.removed r JOIN main.paper_data d "
                                               "ON d.key = r.key LEFT JOIN main.paper_inserted i ON i.key = r.key"
                                             : "NULL AS inserted FROM staging.removed r JOIN main.paper_data d ON d.key = r.key"));
}

void update_paper_inserted(SqliteDb& db, std::int64_t first_key, const std::string& now, const std::string& base_created) {
    if (!has_table(db, "paper_inserted")) {
        create_table(db);
        auto old = db.prepare("INSERT INTO paper_inserted (key, inserted) SELECT key, ? FROM paper_data WHERE key < ?");
        old.bind(1, base_created.empty() ? now : base_created);
        old.bind(2, first_key);
        old.step();
    }
    db.exec("CREATE TEMP TABLE IF NOT EXISTS inserted_removed (old_key INTEGER, id TEXT, inserted TEXT);"
            "DELETE FROM paper_inserted WHERE key IN (SELECT old_key FROM temp.inserted_removed);");
    auto fresh = db.prepare("INSERT INTO paper_inserted (key, inserted) SELECT d.key, coalesce((SELECT r.inserted FROM "
                            "temp.inserted_removed r WHERE r.id = d.id), ?1) FROM paper_data d WHERE d.key >= ?2");
    fresh.bind(1, now);
    fresh.bind(2, first_key);
    fresh.step();
    db.exec("DROP TABLE temp.inserted_removed");
}

}  // namespace novelty::import_detail
