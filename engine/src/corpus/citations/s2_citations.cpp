#include "corpus/citations/s2_citations.hpp"

#include "io/json/json_parse.hpp"
#include "novelty/util/error.hpp"
#include "util/message_text.hpp"

#include <algorithm>
#include <cctype>

namespace novelty::citations_detail {

namespace {

using nlohmann::json;

const json* find_any(const json& record, std::initializer_list<const char*> keys) {
    for (const char* key : keys)
        if (auto it = record.find(key); it != record.end()) return &*it;
    return nullptr;
}

[[noreturn]] void fail(const std::string& file, std::size_t line, const std::string& problem) {
    throw InputError(file, line, problem);
}

/// A corpus id: a whole number >= 0, or a string of digits; nullopt for null (when allowed).
std::optional<std::string> corpus_id(const json& record, std::initializer_list<const char*> keys, const std::string& file,
                                     std::size_t line) {
    const json* v = find_any(record, keys);
    const std::string name = *keys.begin();
    if (!v) fail(file, line, "missing '" + name + "': every citations line names the citing and the cited paper");
    if (v->is_null()) return std::nullopt;
    if (v->is_number_unsigned() || (v->is_number_integer() && v->get<std::int64_t>() >= 0)) return v->dump();
    if (v->is_string()) {
        const std::string& s = v->get_ref<const std::string&>();
        if (!s.empty() && s.size() < 20 && std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
            return s;
        fail(file, line, "'" + name + "' must be a corpus id (a whole number), found " + quote_value(s));
    }
    fail(file, line, "'" + name + "' must be a corpus id (a whole number), found " + json_type_words(*v));
}

bool strings_only(const json& list) {
    return std::all_of(list.begin(), list.end(), [](const json& e) { return e.is_string(); });
}

std::optional<std::string> contexts_of(const json& record, const std::string& file, std::size_t line) {
    const json* v = find_any(record, {"contexts"});
    if (!v || v->is_null()) return std::nullopt;
    if (!v->is_array() || !strings_only(*v))
        fail(file, line, "'contexts' must be a list of strings (the citing sentences), found " +
                             (v->is_array() ? std::string("a list holding other values") : json_type_words(*v)));
    return v->dump();
}

std::optional<std::string> intents_of(const json& record, const std::string& file, std::size_t line) {
    const json* v = find_any(record, {"intents"});
    if (!v || v->is_null()) return std::nullopt;
    const bool ok = v->is_array() && std::all_of(v->begin(), v->end(), [](const json& e) {
                        return e.is_string() || e.is_null() || (e.is_array() && strings_only(e));
                    });
    if (!ok)
        fail(file, line, "'intents' must be a list of intents (strings), or a list of such lists (one per context), found " +
                             (v->is_array() ? std::string("a list holding other values") : json_type_words(*v)));
    return v->dump();
}

}  // namespace

bool is_s2_citation(const json& record) {
    return record.is_object() && (record.contains("citingcorpusid") || record.contains("citingCorpusId"));
}

S2Citation s2_citation(const json& record, const std::string& file, std::size_t line) {
    S2Citation out;
    const std::optional<std::string> citing = corpus_id(record, {"citingcorpusid", "citingCorpusId"}, file, line);
    if (!citing) fail(file, line, "'citingcorpusid' is null: a citation needs its citing paper");
    out.citing = *citing;
    out.cited = corpus_id(record, {"citedcorpusid", "citedCorpusId"}, file, line);
    if (const json* v = find_any(record, {"isinfluential", "isInfluential"}); v && !v->is_null()) {
        if (!v->is_boolean()) fail(file, line, "'isinfluential' must be true, false or null, found " + json_type_words(*v));
        out.influential = v->get<bool>();
    }
    out.contexts = contexts_of(record, file, line);
    out.intents = intents_of(record, file, line);
    return out;
}

S2CitationStager::S2CitationStager(SqliteDb& db, const std::vector<ImportSource>& sources)
    : sources_(sources),
      insert_((db.exec(R"sql(
          CREATE TABLE staging.s2_citations (
              seq INTEGER PRIMARY KEY, citing TEXT NOT NULL, cited TEXT NOT NULL, influential INTEGER,
              contexts TEXT, intents TEXT, src_file INTEGER NOT NULL, src_line INTEGER NOT NULL,
              UNIQUE (citing, cited));)sql"),
               db.prepare("INSERT INTO staging.s2_citations (citing, cited, influential, contexts, intents, src_file, "
                          "src_line) VALUES (?,?,?,?,?,?,?)"))),
      earlier_(db.prepare("SELECT influential IS ?3 AND contexts IS ?4 AND intents IS ?5, src_file, src_line "
                          "FROM staging.s2_citations WHERE citing = ?1 AND cited = ?2")) {}

bool S2CitationStager::stage(const json& record, std::size_t file_index, std::size_t line) {
    const std::string& file = sources_[file_index].path;
    const S2Citation c = s2_citation(record, file, line);
    if (!c.cited) {  // (a record read, naming no paper: nothing to keep)
        ++n_without_cited_;
        return true;
    }
    const auto bind_edge = [&](SqliteStatement& q) {
        q.bind(1, c.citing);
        q.bind(2, *c.cited);
        if (c.influential) q.bind(3, static_cast<std::int64_t>(*c.influential)); else q.bind_null(3);
        if (c.contexts) q.bind(4, *c.contexts); else q.bind_null(4);
        if (c.intents) q.bind(5, *c.intents); else q.bind_null(5);
    };
    bind_edge(insert_);
    insert_.bind(6, static_cast<std::int64_t>(file_index));
    insert_.bind(7, static_cast<std::int64_t>(line));
    try {
        insert_.step();
        insert_.reset();
        return true;
    } catch (const SqliteConstraint&) {
        insert_.reset();
    }
    bind_edge(earlier_);
    earlier_.step();
    const bool identical = earlier_.column_int(0) != 0;
    const std::string first = sources_[static_cast<std::size_t>(earlier_.column_int(1))].path + ":" +
                              std::to_string(earlier_.column_int(2));
    earlier_.reset();
    if (identical) return false;
    throw InputError(file, line, "the citation of corpusid " + *c.cited + " by corpusid " + c.citing +
                                     " given twice, differently (first at " + first + ")");
}

}  // namespace novelty::citations_detail
