#include "server/s2/s2_catalogue.hpp"

#include "server/paper_ids.hpp"

#include <algorithm>
#include <cctype>

namespace novelty::host::s2 {

namespace {

using nlohmann::json;

constexpr std::size_t scan_chunk = 1024;  ///< rows read per engine call

bool digits_only(const std::string& s) {
    return !s.empty() && s.size() < 19 && std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

std::string after_prefix(const std::string& s, const std::string& prefix) {
    if (s.size() <= prefix.size()) return "";
    for (std::size_t i = 0; i < prefix.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(s[i])) != std::tolower(static_cast<unsigned char>(prefix[i]))) return "";
    return s.substr(prefix.size());
}

/// A cited work as given, with its lookup key ("doi:x", "openalex:w1", "corpusid:7", ...).
struct RawReference {
    std::string key;
    std::string id_key;
    std::string id;
};

RawReference reference_of_text(const std::string& given) {
    std::string v = given;
    v.erase(0, v.find_first_not_of(" \t"));
    v.erase(v.find_last_not_of(" \t") + 1);
    if (const std::string w = after_prefix(v, "https://openalex.org/"); !w.empty()) return {"openalex:" + normalize_alias(w), "OpenAlex", w};
    if (v.size() > 1 && (v[0] == 'W' || v[0] == 'w') && digits_only(v.substr(1))) return {"openalex:" + normalize_alias(v), "OpenAlex", v};
    if (digits_only(v)) return {"corpusid:" + v, "CorpusId", v};
    if (const std::string n = after_prefix(v, "CorpusId:"); digits_only(n)) return {"corpusid:" + n, "CorpusId", n};
    const std::string alias = normalize_alias(v);
    if (alias.rfind("doi:", 0) == 0) return {alias, "DOI", v.substr(v.size() - (alias.size() - 4))};
    if (alias.rfind("10.", 0) == 0) return {"doi:" + alias, "DOI", v};
    if (alias.rfind("arxiv:", 0) == 0) return {alias, "ArXiv", v.substr(v.size() - (alias.size() - 6))};
    if (const std::string n = after_prefix(v, "PMID:"); !n.empty()) return {"pmid:" + n, "PubMed", n};
    if (const IdLookup l = paper_id_lookup(v); !l.s2_sha.empty()) return {"sha:" + l.s2_sha, "", ""};
    return {alias, "", v};
}

RawReference reference_of(const json& r) {
    if (r.is_string()) return reference_of_text(r.get<std::string>());
    if (r.is_number_integer()) return reference_of_text(r.dump());
    if (!r.is_object()) return {};
    for (const char* key : {"corpusId", "corpusid", "citedcorpusid"})
        if (auto it = r.find(key); it != r.end() && (it->is_number_integer() || it->is_string()))
            return reference_of_text(it->is_string() ? it->get<std::string>() : it->dump());
    for (const char* key : {"doi", "DOI", "paperId", "id"})
        if (auto it = r.find(key); it != r.end() && it->is_string()) return reference_of_text(it->get<std::string>());
    return {};
}

std::vector<RawReference> references_of(const json& extra) {
    std::vector<RawReference> out;
    for (const char* key : {"referenced_works", "references"}) {
        auto it = extra.find(key);
        if (it == extra.end() || !it->is_array()) continue;
        for (const auto& r : *it)
            if (RawReference ref = reference_of(r); !ref.key.empty()) out.push_back(std::move(ref));
        break;
    }
    return out;
}

/// Every key a reference may use for this paper.
std::vector<std::string> keys_of(const Paper& paper, const json& extra, const nlohmann::ordered_json& ids) {
    std::vector<std::string> keys{normalize_alias(paper.id)};
    const auto text = [](const nlohmann::ordered_json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); };
    if (ids.contains("DOI")) keys.push_back("doi:" + normalize_alias(text(ids["DOI"])));
    if (ids.contains("ArXiv")) keys.push_back("arxiv:" + normalize_alias(text(ids["ArXiv"])));
    if (ids.contains("PubMed")) keys.push_back("pmid:" + text(ids["PubMed"]));
    if (ids.contains("CorpusId")) keys.push_back("corpusid:" + text(ids["CorpusId"]));
    for (const std::string& given : {paper.id, extra.is_object() && extra.contains("openalex") && extra["openalex"].is_string()
                                                    ? extra["openalex"].get<std::string>() : std::string()})
        if (const RawReference r = reference_of_text(given); r.id_key == "OpenAlex") keys.push_back(r.key);
    return keys;
}

std::int64_t h_index_of(std::vector<std::int64_t> counts) {
    std::sort(counts.rbegin(), counts.rend());
    std::int64_t h = 0;
    while (h < static_cast<std::int64_t>(counts.size()) && counts[static_cast<std::size_t>(h)] >= h + 1) ++h;
    return h;
}

}  // namespace

std::vector<std::string> words_of(const std::string& text) {
    std::vector<std::string> out;
    std::string word;
    for (const char c : text + " ") {
        if (std::isalnum(static_cast<unsigned char>(c)) || static_cast<unsigned char>(c) >= 0x80) {
            word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        } else if (!word.empty()) {
            out.push_back(word);
            word.clear();
        }
    }
    return out;
}

S2Catalogue::S2Catalogue(ServerEngine& engine) {
    const std::size_t n = engine.corpus().size();
    const std::string format = corpus_format(engine.corpus().manifest());
    references_.resize(n);
    citations_.resize(n);
    authors_.resize(n);
    std::vector<std::vector<RawReference>> raw(n);
    std::map<std::string, std::vector<std::int64_t>> counts;
    for (std::size_t begin = 0; begin < n; begin += scan_chunk) {
        std::vector<std::int64_t> rows;
        for (std::size_t r = begin; r < std::min(n, begin + scan_chunk); ++r) rows.push_back(static_cast<std::int64_t>(r));
        for (const Paper& p : engine.papers(rows)) {
            const json extra = json::parse(p.extra_json, nullptr, false);
            const auto ids = external_ids(p, extra, format);
            for (const std::string& key : keys_of(p, extra, ids)) row_by_key_.emplace(key, p.row);
            if (const std::string sha = s2_sha_of_url(extra.is_object() && extra.contains("url") && extra["url"].is_string()
                                                          ? extra["url"].get<std::string>() : std::string());
                !sha.empty())
                row_by_sha_.emplace(sha, p.row);
            if (extra.is_object()) raw[p.row] = references_of(extra);
            authors_[p.row] = authors_of(extra);
            for (const Author& a : authors_[p.row]) {
                if (a.author_id.empty()) continue;
                CatalogueAuthor& entry = authors_by_id_[a.author_id];
                if (entry.id.empty()) entry.id = a.author_id, entry.name = a.name;
                if (!entry.rows.empty() && entry.rows.back() == p.row) continue;
                entry.rows.push_back(p.row);
                entry.citations += p.citations.value_or(0);
                counts[a.author_id].push_back(p.citations.value_or(0));
            }
        }
    }
    for (auto& [id, author] : authors_by_id_) author.h_index = h_index_of(counts[id]);
    for (std::size_t row = 0; row < n; ++row) {
        references_[row].reserve(raw[row].size());
        for (const RawReference& r : raw[row]) {
            std::optional<std::size_t> cited;
            if (r.key.rfind("sha:", 0) == 0) cited = row_of_sha(r.key.substr(4));
            else if (auto it = row_by_key_.find(r.key); it != row_by_key_.end()) cited = it->second;
            // A reference in the corpus is its row alone: its ids are the cited paper's own.
            references_[row].push_back(cited ? CitedWork{cited, "", ""} : CitedWork{cited, r.id_key, r.id});
            if (cited && *cited != row) citations_[*cited].push_back(row);
        }
        std::vector<RawReference>().swap(raw[row]);
    }
    for (auto& c : citations_) c.erase(std::unique(c.begin(), c.end()), c.end());  // rows ascend already
}

std::optional<std::size_t> S2Catalogue::row_of_sha(const std::string& sha) const {
    auto it = row_by_sha_.find(sha);
    return it == row_by_sha_.end() ? std::nullopt : std::optional(it->second);
}

std::optional<std::size_t> S2Catalogue::row_of_external_id(const std::string& id) const {
    const RawReference r = reference_of_text(id);
    if (r.key.rfind("sha:", 0) == 0) return row_of_sha(r.key.substr(4));
    auto it = row_by_key_.find(r.key);
    return it == row_by_key_.end() ? std::nullopt : std::optional(it->second);
}

const std::vector<CitedWork>& S2Catalogue::references(std::size_t row) const { return references_.at(row); }
const std::vector<std::size_t>& S2Catalogue::citations(std::size_t row) const { return citations_.at(row); }
const std::vector<Author>& S2Catalogue::authors(std::size_t row) const { return authors_.at(row); }

const CatalogueAuthor* S2Catalogue::author(const std::string& id) const {
    auto it = authors_by_id_.find(id);
    return it == authors_by_id_.end() ? nullptr : &it->second;
}

std::vector<const CatalogueAuthor*> S2Catalogue::search_authors(const std::string& query) const {
    const std::vector<std::string> wanted = words_of(query);
    std::vector<const CatalogueAuthor*> out;
    if (wanted.empty()) return out;
    for (const auto& [id, author] : authors_by_id_) {
        const std::vector<std::string> have = words_of(author.name);
        if (std::all_of(wanted.begin(), wanted.end(), [&](const std::string& w) {
                return std::find(have.begin(), have.end(), w) != have.end();
            }))
            out.push_back(&author);
    }
    std::sort(out.begin(), out.end(), [](const CatalogueAuthor* a, const CatalogueAuthor* b) {
        if (a->rows.size() != b->rows.size()) return a->rows.size() > b->rows.size();
        return a->name != b->name ? a->name < b->name : a->id < b->id;
    });
    return out;
}

const S2Catalogue& S2Corpus::catalogue() {
    std::call_once(once_, [this] { catalogue_ = std::make_unique<S2Catalogue>(engine_); });
    return *catalogue_;
}

S2TextIndex& S2Corpus::text_index() {
    std::call_once(text_once_, [this] {
        text_index_ = std::make_unique<S2TextIndex>(engine_.corpus().dir(), engine_.corpus().size());
    });
    return *text_index_;
}

}  // namespace novelty::host::s2
