#include "llm/response_cache.hpp"

#include "novelty/util/checksum.hpp"
#include "novelty/util/error.hpp"

#include <sqlite3.h>

#include <cstdio>

namespace novelty::host::detail {

ResponseCache::ResponseCache(const std::string& path) : path_(path) {
    if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, nullptr) !=
        SQLITE_OK) {
        const std::string message = db_ != nullptr ? sqlite3_errmsg(db_) : "out of memory";
        sqlite3_close(db_);
        db_ = nullptr;
        throw Error(path + ": cannot open the LLM response cache: " + message);
    }
    sqlite3_busy_timeout(db_, 10000);
    char* err = nullptr;
    const char* schema =
        "PRAGMA journal_mode=WAL;"
        "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, model TEXT, stage TEXT, content TEXT NOT NULL,"
        " prompt_tokens INTEGER, completion_tokens INTEGER, created TEXT DEFAULT CURRENT_TIMESTAMP);";
    if (sqlite3_exec(db_, schema, nullptr, nullptr, &err) != SQLITE_OK) {
        const std::string message = err != nullptr ? err : "unknown error";
        sqlite3_free(err);
        sqlite3_close(db_);
        db_ = nullptr;
        throw Error(path + ": cannot set up the LLM response cache: " + message);
    }
    // The content's checksum (NULL in caches written before it existed); fails when it exists.
    sqlite3_exec(db_, "ALTER TABLE responses ADD COLUMN content_sha256 TEXT", nullptr, nullptr, nullptr);
}

ResponseCache::~ResponseCache() {
    if (db_ != nullptr) sqlite3_close(db_);
}

std::optional<CachedResponse> ResponseCache::get(const std::string& key) {
    std::lock_guard lock(mutex_);
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db_, "SELECT content, prompt_tokens, completion_tokens, content_sha256 FROM responses WHERE key = ?", -1, &stmt,
                           nullptr) != SQLITE_OK)
        return std::nullopt;
    sqlite3_bind_text(stmt, 1, key.data(), static_cast<int>(key.size()), SQLITE_TRANSIENT);
    std::optional<CachedResponse> out;
    if (sqlite3_step(stmt) == SQLITE_ROW) {
        CachedResponse r;
        const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
        r.content = text != nullptr ? std::string(text, static_cast<std::size_t>(sqlite3_column_bytes(stmt, 0))) : "";
        r.prompt_tokens = static_cast<std::uint64_t>(sqlite3_column_int64(stmt, 1));
        r.completion_tokens = static_cast<std::uint64_t>(sqlite3_column_int64(stmt, 2));
        const auto* sum = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 3));
        if (sum != nullptr && sha256_hex(r.content) != sum) {
            // A damaged answer is never used: it is asked again and replaced.
            if (!warned_damage_)
                std::fprintf(stderr, "novelty: warning: %s: a cached LLM answer does not match its checksum (the cache is "
                             "damaged); it is asked again\n", path_.c_str());
            warned_damage_ = true;
        } else {
            out = std::move(r);
        }
    }
    sqlite3_finalize(stmt);
    return out;
}

void ResponseCache::put(const std::string& key, const std::string& model, const std::string& stage,
                        const CachedResponse& response) {
    std::lock_guard lock(mutex_);
    sqlite3_stmt* stmt = nullptr;
    int rc = sqlite3_prepare_v2(db_,
                                "INSERT OR REPLACE INTO responses (key, model, stage, content, prompt_tokens, completion_tokens,"
                                " content_sha256) VALUES (?, ?, ?, ?, ?, ?, ?)",
                                -1, &stmt, nullptr);
    if (rc == SQLITE_OK) {
        sqlite3_bind_text(stmt, 1, key.data(), static_cast<int>(key.size()), SQLITE_TRANSIENT);
        sqlite3_bind_text(stmt, 2, model.data(), static_cast<int>(model.size()), SQLITE_TRANSIENT);
        sqlite3_bind_text(stmt, 3, stage.data(), static_cast<int>(stage.size()), SQLITE_TRANSIENT);
        sqlite3_bind_text(stmt, 4, response.content.data(), static_cast<int>(response.content.size()), SQLITE_TRANSIENT);
        sqlite3_bind_int64(stmt, 5, static_cast<sqlite3_int64>(response.prompt_tokens));
        sqlite3_bind_int64(stmt, 6, static_cast<sqlite3_int64>(response.completion_tokens));
        const std::string sum = sha256_hex(response.content);
        sqlite3_bind_text(stmt, 7, sum.data(), static_cast<int>(sum.size()), SQLITE_TRANSIENT);
        rc = sqlite3_step(stmt);
    }
    sqlite3_finalize(stmt);
    if (rc != SQLITE_DONE && !warned_) {
        warned_ = true;
        std::fprintf(stderr, "novelty: warning: %s: could not store an LLM answer in the cache (%s); going on without\n",
                     path_.c_str(), sqlite3_errmsg(db_));
    }
}

}  // namespace novelty::host::detail
