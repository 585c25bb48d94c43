#include "corpus/import/s2_join.hpp"

#include "novelty/corpus/vectors.hpp"
#include "novelty/io/npy.hpp"
#include "novelty/util/checksum.hpp"
#include "util/message_text.hpp"

#include <cmath>
#include <cstring>
#include <filesystem>

namespace novelty::import_detail {

S2Join::S2Join(SqliteDb& db, const std::vector<ImportSource>& sources, const std::string& base_dir)
    : db_(db),
      sources_(sources),
      insert_abstract_((db.exec(R"sql(
          CREATE TABLE staging.s2_abstracts (corpusid TEXT NOT NULL PRIMARY KEY, abstract TEXT NOT NULL,
                                             src_file INTEGER NOT NULL, src_line INTEGER NOT NULL) WITHOUT ROWID;
          CREATE TABLE staging.s2_vectors (corpusid TEXT NOT NULL PRIMARY KEY, vector BLOB NOT NULL,
                                           src_file INTEGER NOT NULL, src_line INTEGER NOT NULL) WITHOUT ROWID;)sql"),
                        db.prepare("INSERT INTO staging.s2_abstracts VALUES (?,?,?,?)"))),
      insert_vector_(db.prepare("INSERT INTO staging.s2_vectors VALUES (?,?,?,?)")),
      earlier_abstract_(db.prepare("SELECT abstract, src_file, src_line FROM staging.s2_abstracts WHERE corpusid = ?")),
      earlier_vector_(db.prepare("SELECT vector, src_file, src_line FROM staging.s2_vectors WHERE corpusid = ?")),
      citations_(db, sources),
      base_dir_(base_dir) {}

bool S2Join::stage(S2Kind kind, const nlohmann::json& record, std::size_t file_index, std::size_t line) {
    if (kind == S2Kind::citation) return citations_.stage(record, file_index, line);
    const std::string& file = sources_[file_index].path;
    SqliteStatement& insert = kind == S2Kind::abstract ? insert_abstract_ : insert_vector_;
    SqliteStatement& earlier = kind == S2Kind::abstract ? earlier_abstract_ : earlier_vector_;
    std::string id, abstract;
    if (kind == S2Kind::abstract) {
        S2Abstract a = s2_abstract(record, file, line);
        id = std::move(a.corpusid);
        abstract = std::move(a.abstract);
        insert.bind(1, id);
        insert.bind(2, abstract);
    } else {
        s2_vector(record, file, line, vector_);
        id = vector_.corpusid;
        if (dim_ == 0) {
            dim_ = vector_.values.size();
            model_ = vector_.model;
            first_vector_at_ = file + ":" + std::to_string(line);
        } else if (vector_.values.size() != dim_) {
            throw InputError(file, line, "vector of corpusid " + id + " has " + std::to_string(vector_.values.size()) +
                                             " values, but the first vector (" + first_vector_at_ + ") has " +
                                             std::to_string(dim_));
        } else if (vector_.model != model_) {
            throw InputError(file, line, "vector of corpusid " + id + " was made by model " + quote_value(vector_.model) +
                                             ", but the first vector (" + first_vector_at_ + ") by " + quote_value(model_) +
                                             "; a corpus holds one embedder's vectors");
        }
        insert.bind(1, id);
        insert.bind_blob(2, vector_.values.data(), vector_.values.size() * sizeof(float));
    }
    insert.bind(3, static_cast<std::int64_t>(file_index));
    insert.bind(4, static_cast<std::int64_t>(line));
    try {
        insert.step();
        insert.reset();
        return true;
    } catch (const SqliteConstraint&) {
        insert.reset();
    }
    earlier.bind(1, id);
    earlier.step();
    std::size_t n_bytes = 0;
    const void* blob = earlier.column_blob(0, n_bytes);
    const bool identical = kind == S2Kind::abstract
                               ? earlier.column_text(0) == abstract
                               : n_bytes == vector_.values.size() * sizeof(float) &&
                                     std::memcmp(blob, vector_.values.data(), n_bytes) == 0;
    const std::string first = sources_[static_cast<std::size_t>(earlier.column_int(1))].path + ":" +
                              std::to_string(earlier.column_int(2));
    earlier.reset();
    if (identical) return false;
    throw InputError(file, line, std::string(kind == S2Kind::abstract ? "abstract" : "vector") + " of corpusid " + id +
                                     " given twice, differently (first at " + first + ")");
}

void S2Join::check_unmatched(const char* table, const char* what, const SkipFn& skip) {
    auto unmatched = db_.prepare(std::string("SELECT corpusid, src_file, src_line FROM staging.") + table +
                                 " t WHERE NOT EXISTS (SELECT 1 FROM staging.staging s WHERE s.id = t.corpusid)"
                                 " ORDER BY src_file, src_line");
    std::vector<std::string> dropped;
    while (unmatched.step()) {
        const auto file_index = static_cast<std::size_t>(unmatched.column_int(1));
        skip(file_index, InputError(sources_[file_index].path, static_cast<std::size_t>(unmatched.column_int(2)),
                                    std::string(what) + " for corpusid " + unmatched.column_text(0) +
                                        ", which no papers file lists (give the papers file that holds it, or skip "
                                        "invalid records to leave such vectors out)"));
        dropped.push_back(unmatched.column_text(0));
    }
    auto remove = db_.prepare(std::string("DELETE FROM staging.") + table + " WHERE corpusid = ?");
    for (const auto& id : dropped) {
        remove.bind(1, id);
        remove.step();
        remove.reset();
    }
}

void S2Join::revive_vector_only_papers() {
    if (!has_vectors()) return;
    if (incremental()) {  // (the base corpus is the main schema: its record is staged, its key removed)
        db_.exec(R"sql(
            CREATE TEMP TABLE revived AS
            SELECT v.corpusid AS id, d.key AS key, r.row AS old_row, r.input_row AS old_input, v.src_file, v.src_line
            FROM staging.s2_vectors v JOIN main.paper_data d ON d.id = v.corpusid JOIN main.paper_rows r ON r.key = d.key
            WHERE NOT EXISTS (SELECT 1 FROM staging.staging s WHERE s.id = v.corpusid)
              AND NOT EXISTS (SELECT 1 FROM staging.removed x WHERE x.key = d.key);
            INSERT OR REPLACE INTO staging.base_revised
            SELECT n.id, n.old_row, n.old_input, 1, d.title, d.abstract, d.date, d.field, d.venue, d.citations, d.extra
            FROM revived n JOIN main.paper_data d ON d.key = n.key;)sql");
        auto next = db_.prepare("SELECT max((SELECT coalesce(max(input_row), -1) FROM staging.staging), "
                                "(SELECT coalesce(max(input_row), -1) FROM main.paper_rows)) + 1");
        next.step();
        auto stage = db_.prepare(R"sql(
            INSERT INTO staging.staging (id, title, abstract, date, sort_date, year, field, venue, citations, extra,
                                         src_file, src_line, input_row, aliases)
            SELECT d.id, d.title, d.abstract, d.date, d.sort_date, d.year, d.field, d.venue, d.citations, d.extra,
                   n.src_file, n.src_line, ?1 + row_number() OVER (ORDER BY n.src_file, n.src_line) - 1,
                   coalesce((SELECT group_concat(a.alias, char(10)) || char(10) FROM main.paper_aliases a
                             WHERE a.key = d.key), '')
            FROM revived n JOIN main.paper_data d ON d.key = n.key)sql");
        stage.bind(1, next.column_int(0));
        stage.step();
        db_.exec("INSERT INTO staging.removed (key) SELECT key FROM revived");
    } else {  // (the base corpus's papers are staged as records of file -1: they become the vector's)
        db_.exec(R"sql(
            CREATE TEMP TABLE revived AS
            SELECT s.id, v.src_file, v.src_line FROM staging.staging s JOIN staging.s2_vectors v ON v.corpusid = s.id
            WHERE s.src_file < 0;
            INSERT OR IGNORE INTO staging.base_revised
            SELECT s.id, s.src_line, s.input_row, 1, s.title, s.abstract, s.date, s.field, s.venue, s.citations, s.extra
            FROM staging.staging s JOIN revived n ON n.id = s.id;
            UPDATE staging.staging SET src_file = n.src_file, src_line = n.src_line FROM revived n WHERE n.id = staging.id;)sql");
    }
    {
        auto count = db_.prepare("SELECT count(*) FROM revived");
        count.step();
        n_vectors_replaced_ = static_cast<std::size_t>(count.column_int(0));
    }
    db_.exec("DROP TABLE revived");
}

void S2Join::keep_base_abstracts() {
    std::string s2_files;
    for (std::size_t i = 0; i < sources_.size(); ++i)
        if (sources_[i].format == ImportFormat::s2) s2_files += (s2_files.empty() ? "" : ",") + std::to_string(i);
    db_.exec("UPDATE staging.staging SET abstract = r.abstract FROM staging.base_revised r "
             "WHERE r.id = staging.id AND staging.abstract = '' AND staging.src_file IN (" + s2_files + ") "
             "AND NOT EXISTS (SELECT 1 FROM staging.s2_abstracts a WHERE a.corpusid = staging.id)");
}

bool S2Join::same_as_base_vector(const void* blob, std::size_t n_bytes, std::size_t row) {
    if (base_dir_.empty()) return false;
    if (!base_vectors_) {
        const std::string path = (std::filesystem::path(base_dir_) / "vectors.npy").string();
        std::error_code ec;
        if (!std::filesystem::exists(path, ec)) return false;
        base_vectors_.emplace(NpyMatrix::open(path));
    }
    const NpyMatrix& base = *base_vectors_;
    if (n_bytes != base.cols() * sizeof(float) || row >= base.rows()) return false;
    std::vector<float> given(base.cols()), stored(base.cols());
    std::memcpy(given.data(), blob, n_bytes);
    std::vector<RowProblem> problems;
    if (normalize_rows(given.data(), 1, given.size(), problems) > 0) return false;
    base.row_as_f32(row, stored.data());
    const float tolerance = base.dtype() == DType::f32 ? 1e-6f : 1e-3f;
    for (std::size_t i = 0; i < given.size(); ++i)
        if (std::fabs(given[i] - stored[i]) > tolerance) return false;
    return true;
}

void S2Join::drop_identical_revisions() {
    std::vector<std::string> dropped;
    {
        auto same = db_.prepare(R"sql(
            SELECT s.id, s.src_file, s.src_line, r.old_row, r.revived, v.vector FROM staging.staging s
            JOIN staging.base_revised r ON r.id = s.id LEFT JOIN staging.s2_vectors v ON v.corpusid = s.id
            WHERE s.src_file >= 0 AND s.title = r.title AND s.abstract = r.abstract AND s.date IS r.date
              AND s.field IS r.field AND s.venue IS r.venue AND s.citations IS r.citations AND s.extra = r.extra)sql");
        while (same.step()) {
            std::size_t n_bytes = 0;
            const void* blob = same.column_blob(5, n_bytes);
            const bool with_vector = !same.column_is_null(5);
            if (with_vector && !same_as_base_vector(blob, n_bytes, static_cast<std::size_t>(same.column_int(3)))) continue;
            const bool revived = same.column_int(4) != 0;
            const std::string id = same.column_text(0);
            identical_.push_back({sources_[static_cast<std::size_t>(same.column_int(1))].path,
                                  static_cast<std::size_t>(same.column_int(2)),
                                  std::string(revived ? "the vector of corpusid " + id + " is the one the corpus holds"
                                                      : "corpusid " + id + " is identical to the corpus's paper" +
                                                            (with_vector ? " and vector" : "")) +
                                      ": dropped, nothing changed"});
            if (revived) --n_vectors_replaced_;
            else ++n_identical_revisions_;
            dropped.push_back(id);
        }
    }
    if (dropped.empty()) return;
    // The base paper stays as it was: unstaged and no longer removed (the base in the main
    // schema), or its staged record back to the base's (the base staged as file -1).
    std::vector<SqliteStatement> undo;
    if (incremental()) {
        undo.push_back(db_.prepare("DELETE FROM staging.removed WHERE key = (SELECT key FROM main.paper_data WHERE id = ?1)"));
        undo.push_back(db_.prepare("DELETE FROM staging.staging WHERE id = ?1"));
    } else {
        undo.push_back(db_.prepare("UPDATE staging.staging SET src_file = -1, src_line = r.old_row, input_row = r.old_input "
                                   "FROM staging.base_revised r WHERE r.id = ?1 AND staging.id = ?1"));
    }
    undo.push_back(db_.prepare("DELETE FROM staging.base_revised WHERE id = ?1"));
    for (const auto& id : dropped)
        for (SqliteStatement& q : undo) {
            q.bind(1, id);
            q.step();
            q.reset();
        }
}

std::optional<std::size_t> S2Join::revised_base_row(const std::string& corpusid) {
    if (!revised_row_) revised_row_.emplace(db_.prepare("SELECT old_row FROM staging.base_revised WHERE id = ?"));
    SqliteStatement& q = *revised_row_;
    q.reset();
    q.bind(1, corpusid);
    std::optional<std::size_t> out;
    if (q.step()) out = static_cast<std::size_t>(q.column_int(0));
    q.reset();
    return out;
}

void S2Join::join(const SkipFn& skip) {
    // A savepoint: its own transaction, or part of the caller's (an in-place corpus add's).
    db_.exec("SAVEPOINT s2_finish");
    revive_vector_only_papers();
    // Abstracts shards are not split like papers shards: those of papers not imported are
    // expected when a subset of the papers files is imported, and are only counted.
    {
        auto unmatched = db_.prepare(
            "SELECT count(*) FROM staging.s2_abstracts t "
            "WHERE NOT EXISTS (SELECT 1 FROM staging.staging s WHERE s.id = t.corpusid)");
        unmatched.step();
        n_unmatched_abstracts_ = static_cast<std::size_t>(unmatched.column_int(0));
    }
    check_unmatched("s2_vectors", "a vector", skip);
    db_.exec(R"sql(
        UPDATE staging.staging SET abstract = a.abstract FROM staging.s2_abstracts a
        WHERE a.corpusid = staging.id AND a.abstract != '';)sql");
    keep_base_abstracts();
    {
        auto textless = db_.prepare(
            "SELECT id, src_file, src_line FROM staging.staging WHERE title = '' AND abstract = '' ORDER BY src_file, src_line");
        std::vector<std::string> dropped;
        while (textless.step()) {
            const auto file_index = static_cast<std::size_t>(textless.column_int(1));
            skip(file_index, InputError(sources_[file_index].path, static_cast<std::size_t>(textless.column_int(2)),
                                        "corpusid " + textless.column_text(0) +
                                            " has no title, and no abstracts file gives it an abstract"));
            dropped.push_back(textless.column_text(0));
        }
        auto remove = db_.prepare("DELETE FROM staging.staging WHERE id = ?");
        for (const auto& id : dropped) {
            remove.bind(1, id);
            remove.step();
            remove.reset();
        }
    }
    drop_identical_revisions();
    // (corpus add: a copy of the corpus may hold the papers earlier imports left unembedded;
    // a revised paper of the corpus given without a vector keeps its vector: not unembedded)
    db_.exec("CREATE TABLE IF NOT EXISTS unembedded (id TEXT NOT NULL PRIMARY KEY, title TEXT NOT NULL, date TEXT)");
    if (has_vectors()) {
        db_.exec(R"sql(
            CREATE TEMP TABLE new_unembedded AS
            SELECT id, title, date FROM staging.staging s
            WHERE s.src_file >= 0 AND NOT EXISTS (SELECT 1 FROM staging.s2_vectors v WHERE v.corpusid = s.id)
              AND NOT EXISTS (SELECT 1 FROM staging.base_revised r WHERE r.id = s.id) ORDER BY id;
            INSERT OR REPLACE INTO unembedded (id, title, date) SELECT id, title, date FROM new_unembedded;
            DELETE FROM staging.staging WHERE id IN (SELECT id FROM new_unembedded);)sql");
        {
            auto count = db_.prepare("SELECT count(*) FROM new_unembedded");
            count.step();
            n_unembedded_ = static_cast<std::size_t>(count.column_int(0));
            auto first = db_.prepare("SELECT id FROM new_unembedded ORDER BY id LIMIT ?");
            first.bind(1, static_cast<std::int64_t>(max_listed_unembedded));
            while (first.step()) unembedded_first_.push_back(first.column_text(0));
        }
        db_.exec("DROP TABLE new_unembedded");
    }
    db_.exec("RELEASE s2_finish");
}

void S2Join::write_vectors(const std::string& vectors_path, CorpusManifest& manifest) {
    NpyWriter writer(vectors_path, DType::f32, dim_);
    auto rows = db_.prepare(
        "SELECT v.vector, v.src_file, v.src_line, p.id FROM papers p JOIN staging.s2_vectors v ON v.corpusid = p.id "
        "ORDER BY p.row");
    std::vector<float> row(dim_);
    std::vector<RowProblem> problems;
    std::size_t n_rows = 0;
    while (rows.step()) {
        std::size_t n_bytes = 0;
        const void* blob = rows.column_blob(0, n_bytes);
        if (n_bytes != dim_ * sizeof(float)) throw Error("s2 import: a staged vector has the wrong size");
        std::memcpy(row.data(), blob, n_bytes);
        if (normalize_rows(row.data(), 1, dim_, problems) > 0)
            throw InputError(sources_[static_cast<std::size_t>(rows.column_int(1))].path,
                             static_cast<std::size_t>(rows.column_int(2)),
                             "the vector of corpusid " + rows.column_text(3) + " " + row_problem_text(problems[0]) +
                                 " and cannot be normalised");
        writer.append_f32(row.data(), 1);
        ++n_rows;
    }
    writer.finish();
    if (n_rows != manifest.count) throw Error("s2 import: vectors written for " + std::to_string(n_rows) + " of " +
                                              std::to_string(manifest.count) + " papers");
    manifest.dim = dim_;
    manifest.dtype = element_name(DType::f32);
    manifest.embedder = EmbedderInfo{model_, dim_, "", "", ""};
    manifest.vectors_sha256 = sha256_file(vectors_path);
    manifest.vectors_fingerprint = file_fingerprint(vectors_path);
}

bool S2Join::vector_of(const std::string& corpusid, std::vector<float>& out) {
    if (!vector_by_id_) vector_by_id_.emplace(db_.prepare("SELECT vector FROM staging.s2_vectors WHERE corpusid = ?"));
    SqliteStatement& q = *vector_by_id_;
    q.reset();
    q.bind(1, corpusid);
    if (!q.step()) return false;
    std::size_t n_bytes = 0;
    const void* blob = q.column_blob(0, n_bytes);
    out.resize(n_bytes / sizeof(float));
    std::memcpy(out.data(), blob, n_bytes);
    q.reset();
    return true;
}

}  // namespace novelty::import_detail
