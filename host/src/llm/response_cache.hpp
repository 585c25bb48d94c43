// The LLM response cache: a SQLite file mapping a request key (a SHA-256 hex string) to the
// answer's content and token counts. Thread-safe (one connection, one mutex).
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>

struct sqlite3;

namespace novelty::host::detail {

struct CachedResponse {
    std::string content;
    std::uint64_t prompt_tokens = 0;
    std::uint64_t completion_tokens = 0;
};

class ResponseCache {
public:
    /// Opens or creates `path` (table "responses"). Throws Error naming the file on failure.
    explicit ResponseCache(const std::string& path);
    ~ResponseCache();
    ResponseCache(const ResponseCache&) = delete;
    ResponseCache& operator=(const ResponseCache&) = delete;

    /// The stored answer for `key`, if any. An answer whose SHA-256 (stored with it) does not
    /// match is damaged: it is not returned (so it is asked again and replaced), with one warning
    /// on stderr. Answers stored before checksums existed are returned as they are.
    std::optional<CachedResponse> get(const std::string& key);
    /// Stores (or replaces) an answer; a failed write is reported on stderr once and ignored, so
    /// that a full disk does not stop a run.
    void put(const std::string& key, const std::string& model, const std::string& stage, const CachedResponse& response);

private:
    sqlite3* db_ = nullptr;
    std::string path_;
    std::mutex mutex_;
    bool warned_ = false;
    bool warned_damage_ = false;
};

}  // namespace novelty::host::detail
