#include "corpus/sqlite_db.hpp"

#include "novelty/util/error.hpp"

namespace novelty {

namespace {

// `path` as an SQLite URI that opens it immutable (the characters a URI gives a meaning escaped).
std::string immutable_uri(const std::string& path) {
    std::string uri = "file:";
    static const char* hex = "0123456789ABCDEF";
    for (const char c : path) {
        if (c == '%' || c == '?' || c == '#') {
            uri += '%';
            uri += hex[static_cast<unsigned char>(c) >> 4];
            uri += hex[static_cast<unsigned char>(c) & 15u];
        } else {
            uri += c;
        }
    }
    return uri + "?immutable=1";
}

}  // namespace

SqliteDb::SqliteDb(const std::string& path, Mode mode) : path_(path) {
    const int flags = mode == Mode::read_only || mode == Mode::snapshot ? SQLITE_OPEN_READONLY
                      : mode == Mode::read_write                        ? SQLITE_OPEN_READWRITE
                                                                        : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    const std::string name = mode == Mode::snapshot ? immutable_uri(path) : path;
    const int uri = mode == Mode::snapshot ? SQLITE_OPEN_URI : 0;
    if (sqlite3_open_v2(name.c_str(), &db_, flags | uri | SQLITE_OPEN_NOMUTEX, nullptr) != SQLITE_OK) {
        std::string message = db_ ? sqlite3_errmsg(db_) : "out of memory";
        sqlite3_close(db_);
        db_ = nullptr;
        throw Error(path + ": cannot open SQLite database: " + message);
    }
    sqlite3_busy_timeout(db_, 5000);
}

SqliteDb::~SqliteDb() { sqlite3_close(db_); }

void SqliteDb::fail(const std::string& what) const {
    throw Error(path_ + ": SQLite error in " + what + ": " + sqlite3_errmsg(db_));
}

void SqliteDb::exec(const std::string& sql) {
    char* message = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
        std::string text = message ? message : "unknown error";
        sqlite3_free(message);
        throw Error(path_ + ": SQLite error: " + text + " (in: " + sql.substr(0, 80) + ")");
    }
}

SqliteStatement SqliteDb::prepare(const std::string& sql) { return SqliteStatement(*this, sql); }

SqliteStatement::SqliteStatement(SqliteDb& db, const std::string& sql) : db_(&db) {
    if (sqlite3_prepare_v2(db.handle(), sql.c_str(), -1, &stmt_, nullptr) != SQLITE_OK)
        db.fail("prepare '" + sql.substr(0, 80) + "'");
}

SqliteStatement::~SqliteStatement() { sqlite3_finalize(stmt_); }

SqliteStatement::SqliteStatement(SqliteStatement&& other) noexcept : db_(other.db_), stmt_(other.stmt_) {
    other.stmt_ = nullptr;
}

void SqliteStatement::bind(int index, std::string_view text) {
    if (sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT) != SQLITE_OK)
        db_->fail("bind");
}

void SqliteStatement::bind(int index, std::int64_t value) {
    if (sqlite3_bind_int64(stmt_, index, value) != SQLITE_OK) db_->fail("bind");
}

void SqliteStatement::bind(int index, const std::optional<std::int64_t>& value) {
    if (value) bind(index, *value);
    else bind_null(index);
}

void SqliteStatement::bind_null(int index) {
    if (sqlite3_bind_null(stmt_, index) != SQLITE_OK) db_->fail("bind");
}

bool SqliteStatement::step() {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    if ((rc & 0xff) == SQLITE_CONSTRAINT) {
        std::string message = sqlite3_errmsg(db_->handle());
        sqlite3_reset(stmt_);
        throw SqliteConstraint(message);
    }
    db_->fail("step");
}

void SqliteStatement::reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
}

std::int64_t SqliteStatement::column_int(int column) const { return sqlite3_column_int64(stmt_, column); }

double SqliteStatement::column_double(int column) const { return sqlite3_column_double(stmt_, column); }

bool SqliteStatement::column_is_null(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }

std::string SqliteStatement::column_text(int column) const {
    const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
    const int n = sqlite3_column_bytes(stmt_, column);
    return text ? std::string(text, static_cast<std::size_t>(n)) : std::string();
}

void SqliteStatement::bind_blob(int index, const void* data, std::size_t n_bytes) {
    if (sqlite3_bind_blob64(stmt_, index, data, static_cast<sqlite3_uint64>(n_bytes), SQLITE_TRANSIENT) != SQLITE_OK)
        db_->fail("bind");
}

const void* SqliteStatement::column_blob(int column, std::size_t& n_bytes) const {
    const void* data = sqlite3_column_blob(stmt_, column);
    n_bytes = static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column));
    return data;
}

bool has_table(SqliteDb& db, const std::string& name, const std::string& schema) {
    auto q = db.prepare("SELECT count(*) FROM " + schema + ".sqlite_master WHERE type = 'table' AND name = ?");
    q.bind(1, name);
    q.step();
    return q.column_int(0) > 0;
}

}  // namespace novelty
