// manifest.json reading and writing.
#include "corpus/corpus_recovery.hpp"
#include "util/file_util.hpp"
#include "novelty/corpus/corpus.hpp"
#include "novelty/util/error.hpp"

#include "io/json/json_parse.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace novelty {

namespace {

using nlohmann::json;

json fingerprint_to_json(const FileFingerprint& f) {
    if (f.sample_sha256.empty()) return nullptr;
    return {{"bytes", f.bytes}, {"sample_sha256", f.sample_sha256}};
}

FileFingerprint fingerprint_from_json(const json& j, const char* name) {
    const auto all = j.find("fingerprints");
    if (all == j.end() || !all->is_object()) return {};
    const auto one = all->find(name);
    if (one == all->end() || one->is_null()) return {};
    return {one->at("bytes").get<std::uint64_t>(), one->at("sample_sha256").get<std::string>()};
}

json counts_to_json(const std::vector<NameCount>& counts) {
    json out = json::array();
    for (const auto& c : counts) out.push_back({{"name", c.name}, {"count", c.count}});
    return out;
}

std::vector<NameCount> counts_from_json(const json& value) {
    std::vector<NameCount> out;
    for (const auto& c : value) out.push_back({c.at("name").get<std::string>(), c.at("count").get<std::size_t>()});
    return out;
}

json to_json(const CorpusManifest& m) {
    json j;
    j["format"] = "novelty-corpus";
    j["format_version"] = m.format_version;
    j["count"] = m.count;
    j["dim"] = m.dim == 0 ? json(nullptr) : json(m.dim);
    j["dtype"] = m.dtype.empty() ? json(nullptr) : json(m.dtype);
    if (m.embedder)
        j["embedder"] = {{"name", m.embedder->name},
                         {"dim", m.embedder->dim},
                         {"pooling", m.embedder->pooling.empty() ? json(nullptr) : json(m.embedder->pooling)}};
    if (m.embedder && !m.embedder->device.empty()) j["embedder"]["device"] = m.embedder->device;
    if (m.embedder && !m.embedder->precision.empty()) j["embedder"]["precision"] = m.embedder->precision;
    if (!m.embedder)
        j["embedder"] = nullptr;
    j["row_order"] = m.row_order;
    j["sources"] = json::array();
    for (const auto& s : m.sources)
        j["sources"].push_back({{"path", s.path},
                                {"format", s.format},
                                {"field", s.field.empty() ? json(nullptr) : json(s.field)},
                                {"sha256", s.sha256},
                                {"records", s.records},
                                {"skipped", s.skipped},
                                {"duplicates_dropped", s.duplicates}});
    j["checksums"] = {{"papers.sqlite", m.papers_sha256},
                      {"vectors.npy", m.vectors_sha256.empty() ? json(nullptr) : json(m.vectors_sha256)}};
    j["fingerprints"] = {{"papers.sqlite", fingerprint_to_json(m.papers_fingerprint)},
                         {"vectors.npy", fingerprint_to_json(m.vectors_fingerprint)}};
    if (!m.papers_generation.empty()) j["generation"] = m.papers_generation;
    j["input_order"] = m.input_order_recorded ? json("papers.input_row") : json(nullptr);
    j["created"] = m.created;
    j["dates"] = {{"min", m.date_min.empty() ? json(nullptr) : json(m.date_min)},
                  {"max", m.date_max.empty() ? json(nullptr) : json(m.date_max)},
                  {"dated", m.n_dated},
                  {"undated", m.count - m.n_dated}};
    j["with_citations"] = m.n_with_citations;
    j["fields"] = counts_to_json(m.fields);
    j["venues"] = {{"distinct", m.n_venues}, {"top", counts_to_json(m.venues)}};
    j["duplicates_dropped"] = m.n_duplicates;
    j["skipped"] = {{"count", m.n_skipped}, {"first", json::array()}};
    for (const auto& s : m.skipped)
        j["skipped"]["first"].push_back({{"file", s.file}, {"line", s.line}, {"problem", s.problem}});
    if (m.n_unembedded > 0) j["unembedded"] = {{"count", m.n_unembedded}, {"first", m.unembedded}};
    if (m.n_revised > 0) j["revised"] = m.n_revised;
    if (m.n_deleted > 0) j["deleted"] = m.n_deleted;
    if (!m.updates.empty()) {
        j["updates"] = json::array();
        for (const auto& u : m.updates)
            j["updates"].push_back({{"at", u.at}, {"added", u.added}, {"removed", u.removed},
                                    {"first_renumbered_row", u.first_renumbered_row < 0 ? json(nullptr) : json(u.first_renumbered_row)},
                                    {"caches_updated", u.caches_updated}});
    }
    return j;
}

CorpusManifest from_json(const json& j) {
    CorpusManifest m;
    m.format_version = j.at("format_version").get<int>();
    m.count = j.at("count").get<std::size_t>();
    m.dim = j.at("dim").is_null() ? 0 : j.at("dim").get<std::size_t>();
    m.dtype = j.at("dtype").is_null() ? "" : j.at("dtype").get<std::string>();
    if (!j.at("embedder").is_null()) {
        const auto& e = j.at("embedder");
        m.embedder = EmbedderInfo{e.at("name").get<std::string>(), e.at("dim").get<std::size_t>(),
                                  e.at("pooling").is_null() ? "" : e.at("pooling").get<std::string>(),
                                  e.contains("device") && e["device"].is_string() ? e["device"].get<std::string>() : "",
                                  e.contains("precision") && e["precision"].is_string() ? e["precision"].get<std::string>() : ""};
    }
    m.row_order = j.at("row_order").get<std::string>();
    for (const auto& s : j.at("sources"))
        m.sources.push_back({s.at("path").get<std::string>(), s.at("format").get<std::string>(),
                             s.at("field").is_null() ? "" : s.at("field").get<std::string>(),
                             s.at("sha256").get<std::string>(), s.at("records").get<std::size_t>(),
                             s.at("skipped").get<std::size_t>(), s.value("duplicates_dropped", std::size_t{0})});
    const auto& sums = j.at("checksums");
    m.papers_sha256 = sums.at("papers.sqlite").get<std::string>();
    m.vectors_sha256 = sums.at("vectors.npy").is_null() ? "" : sums.at("vectors.npy").get<std::string>();
    m.papers_fingerprint = fingerprint_from_json(j, "papers.sqlite");
    m.vectors_fingerprint = fingerprint_from_json(j, "vectors.npy");
    m.papers_generation = j.value("generation", "");
    m.input_order_recorded = j.contains("input_order") && j.at("input_order").is_string();
    m.created = j.at("created").get<std::string>();
    const auto& dates = j.at("dates");
    m.date_min = dates.at("min").is_null() ? "" : dates.at("min").get<std::string>();
    m.date_max = dates.at("max").is_null() ? "" : dates.at("max").get<std::string>();
    m.n_dated = dates.at("dated").get<std::size_t>();
    m.n_with_citations = j.at("with_citations").get<std::size_t>();
    m.fields = counts_from_json(j.at("fields"));
    m.n_venues = j.at("venues").at("distinct").get<std::size_t>();
    m.venues = counts_from_json(j.at("venues").at("top"));
    m.n_skipped = j.at("skipped").at("count").get<std::size_t>();
    m.n_duplicates = j.value("duplicates_dropped", std::size_t{0});
    for (const auto& s : j.at("skipped").at("first"))
        m.skipped.push_back({s.at("file").get<std::string>(), s.at("line").get<std::size_t>(),
                             s.at("problem").get<std::string>()});
    if (j.contains("unembedded")) {
        m.n_unembedded = j.at("unembedded").at("count").get<std::size_t>();
        m.unembedded = j.at("unembedded").at("first").get<std::vector<std::string>>();
    }
    m.n_revised = j.value("revised", std::size_t{0});
    m.n_deleted = j.value("deleted", std::size_t{0});
    if (j.contains("updates"))
        for (const auto& u : j.at("updates"))
            m.updates.push_back({u.at("at").get<std::string>(), u.at("added").get<std::size_t>(),
                                 u.at("removed").get<std::size_t>(),
                                 u.at("first_renumbered_row").is_null() ? -1 : u.at("first_renumbered_row").get<std::int64_t>(),
                                 u.at("caches_updated").get<std::size_t>()});
    return m;
}

}  // namespace

CorpusManifest read_manifest(const std::string& dir) {
    const std::string path = (std::filesystem::path(dir) / "manifest.json").string();
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec)) {
        recover_interrupted_import(corpus_dir_path(dir));
        if (!std::filesystem::is_directory(dir, ec)) throw CorpusError(dir + ": no such corpus directory");
    }
    std::ifstream in(path);
    if (!in)
        throw CorpusError(dir + ": not a complete corpus (no manifest.json; an import may not have finished)");
    std::stringstream text;
    text << in.rdbuf();
    json j;
    try {
        j = parse_json(text.str());
    } catch (const std::exception& e) {  // JsonError, or a read error
        throw CorpusError(path + ": invalid JSON: " + e.what());
    }
    if (!j.is_object() || j.value("format", "") != "novelty-corpus")
        throw CorpusError(path + ": not a novelty corpus manifest");
    const int version = j.value("format_version", 0);
    if (version > corpus_format_version)
        throw CorpusError(path + ": corpus format version " + std::to_string(version) +
                          " is newer than this engine reads (" + std::to_string(corpus_format_version) + ")");
    try {
        return from_json(j);
    } catch (const json::exception& e) {
        throw CorpusError(path + ": missing or invalid key: " + e.what());
    }
}

void write_manifest(const std::string& dir, const CorpusManifest& manifest) {
    write_file_atomic((std::filesystem::path(dir) / "manifest.json").string(), to_json(manifest).dump(2, ' ', false, json::error_handler_t::replace) + "\n");
}

}  // namespace novelty
