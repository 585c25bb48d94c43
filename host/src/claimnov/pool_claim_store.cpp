#include "novelty_host/claimnov/pool_claim_store.hpp"

#include "novelty/util/checksum.hpp"
#include "novelty/util/error.hpp"

#include <sqlite3.h>

#include <array>
#include <cstdio>
#include <cstring>
#include <mutex>

namespace novelty::host {

namespace {

/// A prepared statement, finalized on scope exit.
struct Statement {
    sqlite3_stmt* stmt = nullptr;
    Statement(sqlite3* db, const char* sql, const std::string& path) {
        if (sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr) != SQLITE_OK)
            throw Error(path + ": " + sqlite3_errmsg(db));
    }
    ~Statement() { sqlite3_finalize(stmt); }
    void text(int i, const std::string& s) { sqlite3_bind_text(stmt, i, s.data(), static_cast<int>(s.size()), SQLITE_TRANSIENT); }
    std::string column(int i) {
        const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt, i));
        return p != nullptr ? std::string(p, static_cast<std::size_t>(sqlite3_column_bytes(stmt, i))) : std::string();
    }
};

}  // namespace

// What a paper's claims checksum covers: every field of every claim, in order.
std::string claims_checksum(const std::vector<std::array<std::string, 4>>& rows) {
    std::string all;
    for (const auto& r : rows) all += r[0] + '\x1f' + r[1] + '\x1f' + r[2] + '\x1f' + r[3] + '\x1e';
    return sha256_hex(all);
}

struct PoolClaimStore::Impl {
    sqlite3* db = nullptr;
    std::string path;
    std::mutex mutex;
    bool warned_damage = false;

    // A cached entry whose checksum does not match is never used: it is computed again (and
    // replaced), with one warning per store.
    void damaged(const std::string& what) {
        if (warned_damage) return;
        warned_damage = true;
        std::fprintf(stderr, "novelty: warning: %s: a cached entry (%s) does not match its checksum (the cache is "
                     "damaged); it is computed again\n", path.c_str(), what.c_str());
    }

    void exec(const std::string& sql) {
        char* err = nullptr;
        if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
            const std::string message = err != nullptr ? err : "unknown error";
            sqlite3_free(err);
            throw Error(path + ": " + message);
        }
    }
    void check_done(int rc) {
        if (rc != SQLITE_DONE) throw Error(path + ": " + sqlite3_errmsg(db));
    }
};

PoolClaimStore::PoolClaimStore(const std::string& path) : impl_(std::make_unique<Impl>()) {
    impl_->path = path;
    if (sqlite3_open_v2(path.c_str(), &impl_->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
                        nullptr) != SQLITE_OK) {
        const std::string message = impl_->db != nullptr ? sqlite3_errmsg(impl_->db) : "out of memory";
        sqlite3_close(impl_->db);
        impl_->db = nullptr;
        throw Error(path + ": cannot open the pool claim store: " + message);
    }
    sqlite3_busy_timeout(impl_->db, 10000);
    try {
        impl_->exec(
            "CREATE TABLE IF NOT EXISTS extracted (extractor TEXT, paper_id TEXT, PRIMARY KEY (extractor, paper_id));"
            "CREATE TABLE IF NOT EXISTS claims (extractor TEXT, paper_id TEXT, idx INTEGER, text TEXT, dimension TEXT,"
            " attribute TEXT, value TEXT, PRIMARY KEY (extractor, paper_id, idx));"
            "CREATE TABLE IF NOT EXISTS vectors (embedder TEXT, text_sha256 TEXT, dim INTEGER, data BLOB,"
            " PRIMARY KEY (embedder, text_sha256));");
        // Checksums of the cached contents (absent, NULL, in stores written before they existed).
        for (const char* column : {"ALTER TABLE extracted ADD COLUMN claims_sha256 TEXT",
                                   "ALTER TABLE vectors ADD COLUMN data_sha256 TEXT"})
            sqlite3_exec(impl_->db, column, nullptr, nullptr, nullptr);  // fails only when it exists already
    } catch (...) {
        sqlite3_close(impl_->db);
        impl_->db = nullptr;
        throw;
    }
}

PoolClaimStore::~PoolClaimStore() {
    if (impl_ && impl_->db != nullptr) sqlite3_close(impl_->db);
}

const std::string& PoolClaimStore::path() const { return impl_->path; }

std::optional<std::vector<Claim>> PoolClaimStore::claims(const std::string& extractor, const std::string& paper_id) {
    std::lock_guard lock(impl_->mutex);
    std::optional<std::string> stored_sum;
    {
        Statement s(impl_->db, "SELECT claims_sha256 FROM extracted WHERE extractor = ? AND paper_id = ?", impl_->path);
        s.text(1, extractor);
        s.text(2, paper_id);
        if (sqlite3_step(s.stmt) != SQLITE_ROW) return std::nullopt;
        if (sqlite3_column_type(s.stmt, 0) != SQLITE_NULL) stored_sum = s.column(0);
    }
    Statement s(impl_->db,
                "SELECT text, dimension, attribute, value FROM claims WHERE extractor = ? AND paper_id = ? ORDER BY idx",
                impl_->path);
    s.text(1, extractor);
    s.text(2, paper_id);
    std::vector<Claim> out;
    std::vector<std::array<std::string, 4>> rows;
    while (sqlite3_step(s.stmt) == SQLITE_ROW) {
        rows.push_back({s.column(0), s.column(1), s.column(2), s.column(3)});
        Claim c;
        c.text = rows.back()[0];
        c.dimension = parse_dimension(rows.back()[1]).value_or(ClaimDimension::methodology);
        c.attribute = rows.back()[2];
        c.value = rows.back()[3];
        out.push_back(std::move(c));
    }
    if (stored_sum && *stored_sum != claims_checksum(rows)) {
        impl_->damaged("the claims of paper '" + paper_id + "'");
        return std::nullopt;
    }
    return out;
}

void PoolClaimStore::put_claims(const std::string& extractor, const std::string& paper_id, const std::vector<Claim>& claims) {
    std::lock_guard lock(impl_->mutex);
    impl_->exec("BEGIN");
    try {
        {
            Statement d(impl_->db, "DELETE FROM claims WHERE extractor = ? AND paper_id = ?", impl_->path);
            d.text(1, extractor);
            d.text(2, paper_id);
            impl_->check_done(sqlite3_step(d.stmt));
        }
        for (std::size_t i = 0; i < claims.size(); ++i) {
            Statement s(impl_->db,
                        "INSERT INTO claims (extractor, paper_id, idx, text, dimension, attribute, value) VALUES (?,?,?,?,?,?,?)",
                        impl_->path);
            s.text(1, extractor);
            s.text(2, paper_id);
            sqlite3_bind_int64(s.stmt, 3, static_cast<sqlite3_int64>(i));
            s.text(4, claims[i].text);
            s.text(5, dimension_name(claims[i].dimension));
            s.text(6, claims[i].attribute);
            s.text(7, claims[i].value);
            impl_->check_done(sqlite3_step(s.stmt));
        }
        std::vector<std::array<std::string, 4>> rows;
        for (const Claim& c : claims) rows.push_back({c.text, dimension_name(c.dimension), c.attribute, c.value});
        Statement m(impl_->db, "INSERT OR REPLACE INTO extracted (extractor, paper_id, claims_sha256) VALUES (?, ?, ?)",
                    impl_->path);
        m.text(1, extractor);
        m.text(2, paper_id);
        m.text(3, claims_checksum(rows));
        impl_->check_done(sqlite3_step(m.stmt));
        impl_->exec("COMMIT");
    } catch (...) {
        sqlite3_exec(impl_->db, "ROLLBACK", nullptr, nullptr, nullptr);
        throw;
    }
}

std::optional<std::vector<float>> PoolClaimStore::vector(const std::string& embedder, const std::string& text) {
    std::lock_guard lock(impl_->mutex);
    Statement s(impl_->db, "SELECT dim, data, data_sha256 FROM vectors WHERE embedder = ? AND text_sha256 = ?",
                impl_->path);
    s.text(1, embedder);
    s.text(2, sha256_hex(text));
    if (sqlite3_step(s.stmt) != SQLITE_ROW) return std::nullopt;
    const auto dim = static_cast<std::size_t>(sqlite3_column_int64(s.stmt, 0));
    const auto bytes = static_cast<std::size_t>(sqlite3_column_bytes(s.stmt, 1));
    if (dim == 0 || bytes != dim * sizeof(float)) return std::nullopt;
    std::vector<float> v(dim);
    std::memcpy(v.data(), sqlite3_column_blob(s.stmt, 1), bytes);
    if (sqlite3_column_type(s.stmt, 2) != SQLITE_NULL &&
        s.column(2) != sha256_hex(std::string_view(reinterpret_cast<const char*>(v.data()), bytes))) {
        impl_->damaged("a claim vector");
        return std::nullopt;
    }
    return v;
}

void PoolClaimStore::put_vectors(const std::string& embedder, const std::vector<std::string>& texts,
                                 const std::vector<float>& rows, std::size_t dim) {
    if (rows.size() != texts.size() * dim) throw UsageError("put_vectors: rows do not match the texts");
    std::lock_guard lock(impl_->mutex);
    impl_->exec("BEGIN");
    try {
        for (std::size_t i = 0; i < texts.size(); ++i) {
            Statement s(impl_->db,
                        "INSERT OR REPLACE INTO vectors (embedder, text_sha256, dim, data, data_sha256) VALUES (?,?,?,?,?)",
                        impl_->path);
            s.text(1, embedder);
            s.text(2, sha256_hex(texts[i]));
            sqlite3_bind_int64(s.stmt, 3, static_cast<sqlite3_int64>(dim));
            sqlite3_bind_blob(s.stmt, 4, rows.data() + i * dim, static_cast<int>(dim * sizeof(float)), SQLITE_TRANSIENT);
            s.text(5, sha256_hex(std::string_view(reinterpret_cast<const char*>(rows.data() + i * dim), dim * sizeof(float))));
            impl_->check_done(sqlite3_step(s.stmt));
        }
        impl_->exec("COMMIT");
    } catch (...) {
        sqlite3_exec(impl_->db, "ROLLBACK", nullptr, nullptr, nullptr);
        throw;
    }
}

}  // namespace novelty::host
