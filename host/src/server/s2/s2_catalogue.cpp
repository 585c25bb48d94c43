#include "server/s2/s2_catalogue.hpp"

#include "server/paper_ids.hpp"

#include "corpus/citations/citation_keys.hpp"

#include <algorithm>
#include <cctype>

namespace novelty::host::s2 {

namespace {

using nlohmann::json;

constexpr std::size_t scan_chunk = 1024;  ///< rows read per engine call

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
    authors_.resize(n);
    std::map<std::string, std::vector<std::int64_t>> counts;
    for (std::size_t begin = 0; begin < n; begin += scan_chunk) {
        std::vector<std::int64_t> rows;
        for (std::size_t r = begin; r < std::min(n, begin + scan_chunk); ++r) rows.push_back(static_cast<std::int64_t>(r));
        for (const Paper& p : engine.papers(rows)) {
            authors_[p.row] = authors_of(json::parse(p.extra_json, nullptr, false));
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
}

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

CitationGraph& S2Corpus::graph() {
    std::call_once(graph_once_, [this] {
        graph_ = std::make_unique<CitationGraph>(engine_.corpus().dir(), corpus_format(engine_.corpus().manifest()));
    });
    return *graph_;
}

std::optional<std::size_t> S2Corpus::row_of_external_id(const std::string& id) {
    const citations_detail::CitedKey key = citations_detail::cited_key_of_text(id);
    return key.key.empty() ? std::nullopt : graph().row_of_key(key.key);
}

std::optional<std::size_t> S2Corpus::row_of_sha(const std::string& sha) { return graph().row_of_key("sha:" + sha); }

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
