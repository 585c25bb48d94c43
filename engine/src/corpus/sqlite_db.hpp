// A thin RAII wrapper over the SQLite C API; every failure throws Error naming the database
// file and SQLite's message.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace novelty {

class SqliteStatement;

class SqliteDb {
public:
    /// `snapshot`: read-only, of a file that no process changes while this connection is open
    /// (its corpus's shared lock is held, corpus_lock.hpp). It is opened immutable: SQLite takes no
    /// locks and never looks for a journal beside the file by its path, which, once the corpus
    /// was replaced by a rename, names another corpus's journal (one an add is writing: a
    /// read-only connection then failed with "attempt to write a readonly database").
    enum class Mode { read_only, read_write, read_write_create, snapshot };
    SqliteDb(const std::string& path, Mode mode);
    ~SqliteDb();
    SqliteDb(const SqliteDb&) = delete;
    SqliteDb& operator=(const SqliteDb&) = delete;

    /// Runs one or more statements that return no rows.
    void exec(const std::string& sql);
    SqliteStatement prepare(const std::string& sql);
    sqlite3* handle() const { return db_; }
    const std::string& path() const { return path_; }
    [[noreturn]] void fail(const std::string& what) const;

private:
    sqlite3* db_ = nullptr;
    std::string path_;
};

/// True when `schema` ("main", an attached name such as "base") of `db` has a table `name`.
bool has_table(SqliteDb& db, const std::string& name, const std::string& schema = "main");

class SqliteStatement {
public:
    SqliteStatement(SqliteDb& db, const std::string& sql);
    ~SqliteStatement();
    SqliteStatement(SqliteStatement&& other) noexcept;
    SqliteStatement(const SqliteStatement&) = delete;
    SqliteStatement& operator=(const SqliteStatement&) = delete;

    /// Binds by 1-based index. An empty optional binds NULL.
    void bind(int index, std::string_view text);
    void bind(int index, std::int64_t value);
    void bind(int index, const std::optional<std::int64_t>& value);
    void bind_null(int index);
    /// Binds n_bytes of raw data as a BLOB (copied).
    void bind_blob(int index, const void* data, std::size_t n_bytes);
    /// Steps once: true when a row is available, false when done. Throws on error; a constraint
    /// violation throws SqliteConstraint so callers can report duplicates.
    bool step();
    void reset();

    std::int64_t column_int(int column) const;
    std::string column_text(int column) const;
    bool column_is_null(int column) const;
    double column_double(int column) const;
    /// A BLOB column: its bytes (valid until the next step or reset) and their count.
    const void* column_blob(int column, std::size_t& n_bytes) const;

private:
    SqliteDb* db_;
    sqlite3_stmt* stmt_ = nullptr;
};

struct SqliteConstraint : std::runtime_error {
    using std::runtime_error::runtime_error;
};

}  // namespace novelty
