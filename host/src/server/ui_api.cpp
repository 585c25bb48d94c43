#include "server/ui_api.hpp"

#include "server/paper_ids.hpp"
#include "server/server_requests.hpp"

#include "novelty/util/error.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <regex>

namespace novelty::host::detail {

namespace {

constexpr std::size_t score_job_slice = 64;  ///< ideas per /v1/score call of a score job

bool is_web_url(const std::string& s) { return s.starts_with("https://") || s.starts_with("http://"); }

template <class Json>
std::string string_at(const Json& j, const char* key) {
    auto it = j.find(key);
    if (it == j.end()) return "";
    if (it->is_string()) return it->template get<std::string>();
    if (it->is_number_integer()) return std::to_string(it->template get<long long>());
    return "";
}

bool plain(const std::string& s) {  // no blanks or quotes: safe to append to a link's path
    return !s.empty() && std::none_of(s.begin(), s.end(), [](unsigned char c) {
        return c <= ' ' || c == '"' || c == '<' || c == '>' || c == '\\' || c == 0x7f;
    });
}

nlohmann::json parse_extra(const std::string& extra_json) {
    nlohmann::json extra = nlohmann::json::parse(extra_json, nullptr, false);
    return extra.is_object() ? extra : nlohmann::json::object();
}

/// The "ideas[N]" at the start of a slice's error, renumbered to the whole request.
std::string renumbered(const std::string& message, std::size_t offset) {
    static const std::regex leading(R"(^ideas\[(\d+)\])");
    std::smatch m;
    if (!std::regex_search(message, m, leading)) return message;
    return "ideas[" + std::to_string(std::stoull(m[1]) + offset) + "]" + m.suffix().str();
}

/// The inner list of a {"results":[...]} body, without its brackets ("" for an empty list).
std::string results_list(const std::string& body) {
    const std::string head = "{\"results\":[";
    if (!body.starts_with(head) || !body.ends_with("]}")) throw Error("unexpected /v1/score reply shape");
    return body.substr(head.size(), body.size() - head.size() - 2);
}

}  // namespace

std::string paper_link(const std::string& id, const std::string& extra_json, const std::string& format) {
    const nlohmann::json extra = parse_extra(extra_json);
    Paper paper;
    paper.id = id;
    const nlohmann::ordered_json ids = external_ids(paper, extra, format);  // the S2 API's rule too
    const auto known = [&](const char* key) { return ids.contains(key) ? string_at(ids, key) : std::string(); };
    if (const std::string doi = known("DOI"); plain(doi)) return "https://doi.org/" + doi;
    if (const std::string arxiv = known("ArXiv"); plain(arxiv)) return "https://arxiv.org/abs/" + arxiv;
    for (const char* key : {"url", "pdf", "site", "openalex"}) {
        const std::string url = string_at(extra, key);
        if (is_web_url(url) && plain(url)) return url;
    }
    if (is_web_url(id) && plain(id)) return id;
    const std::string pmid = known("PubMed");
    if (plain(pmid) && std::all_of(pmid.begin(), pmid.end(), [](unsigned char c) { return std::isdigit(c); }))
        return "https://pubmed.ncbi.nlm.nih.gov/" + pmid + "/";
    return "";
}

UiApi::UiApi(ServerEngine& engine, const ServerOptions& options)
    : engine_(engine), options_(options), corpus_(Corpus::open(options.corpus_dir)) {}

std::string UiApi::papers(const nlohmann::json& body) {
    refuse_unknown_keys(body, {"ids", "abstract"});
    const auto ids = body.find("ids");
    const std::string limit = std::to_string(options_.max_records);
    if (ids == body.end() || !ids->is_array() || ids->empty() || ids->size() > options_.max_records)
        throw UsageError("ids: send a list of 1 to " + limit + " paper ids", "ids");
    bool with_abstract = false;
    if (const auto a = body.find("abstract"); a != body.end() && !a->is_null()) {
        if (!a->is_boolean()) throw UsageError("abstract: must be true or false", "abstract");
        with_abstract = a->get<bool>();
    }
    nlohmann::ordered_json results = nlohmann::ordered_json::array();
    std::lock_guard lock(corpus_mutex_);
    for (std::size_t i = 0; i < ids->size(); ++i) {
        const nlohmann::json& given = (*ids)[i];
        if (!given.is_string() && !given.is_number_integer())
            throw UsageError("ids[" + std::to_string(i) + "]: must be a string or an integer", "ids[" + std::to_string(i) + "]");
        const std::string id = given.is_string() ? given.get<std::string>() : std::to_string(given.get<long long>());
        const auto row = corpus_.find_row(id);
        if (!row) {
            results.push_back({{"id", id}, {"error", "not in the corpus"}});
            continue;
        }
        const Paper p = corpus_.paper(*row);
        nlohmann::ordered_json j{{"id", p.id}, {"row", p.row}, {"title", p.title}};
        j["date"] = p.date.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(p.date);
        j["year"] = p.year ? nlohmann::ordered_json(*p.year) : nlohmann::ordered_json(nullptr);
        j["venue"] = p.venue;
        j["field"] = p.field;
        j["citations"] = p.citations ? nlohmann::ordered_json(*p.citations) : nlohmann::ordered_json(nullptr);
        const std::string link = paper_link(p.id, p.extra_json, corpus_format(corpus_.manifest()));
        j["link"] = link.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(link);
        if (with_abstract) j["abstract"] = p.abstract;
        results.push_back(std::move(j));
    }
    return nlohmann::ordered_json{{"results", std::move(results)}}.dump(-1, ' ', false,
                                                                       nlohmann::json::error_handler_t::replace);
}

std::string UiApi::rnd_distribution(const nlohmann::json& params) {
    refuse_unknown_keys(params, {"p", "q"});
    const std::size_t max_k = std::min<std::size_t>(options_.max_k, 2048);
    const std::size_t p = parse_count(params, "p", options_.default_p, max_k);
    const std::size_t q = parse_count(params, "q", options_.default_q, max_k);
    std::lock_guard lock(distribution_mutex_);
    auto it = distributions_.find({p, q});
    if (it == distributions_.end()) it = distributions_.emplace(std::make_pair(p, q), compute_distribution(p, q)).first;
    return it->second;
}

std::string UiApi::compute_distribution(std::size_t p, std::size_t q) {
    const std::size_t n_papers = corpus_.size();
    if (n_papers <= std::max(p, q))
        throw UsageError("the corpus has " + std::to_string(n_papers) + " papers: too few to score its own papers at p=" +
                         std::to_string(p) + ", q=" + std::to_string(q) + " (each paper leaves itself out)");
    const std::size_t n = std::min(rnd_sample_size, n_papers);
    std::vector<std::string> ids(n);
    {
        std::lock_guard lock(corpus_mutex_);
        // Evenly spaced rows: rows are in publication-date order, so the sample spans the dates.
        for (std::size_t i = 0; i < n; ++i) ids[i] = corpus_.id_and_title((2 * i + 1) * n_papers / (2 * n)).first;
    }
    const std::size_t slice = std::max<std::size_t>(1, std::min<std::size_t>(options_.max_records, 256));
    nlohmann::ordered_json scores = nlohmann::ordered_json::array();
    std::vector<double> values;
    for (std::size_t begin = 0; begin < n; begin += slice) {
        nlohmann::json body{{"p", p}, {"q", q}, {"ideas", nlohmann::json::array()}};
        for (std::size_t i = begin; i < std::min(n, begin + slice); ++i) body["ideas"].push_back({{"id", ids[i]}});
        const nlohmann::json reply = nlohmann::json::parse(engine_.score(body));
        for (const auto& r : reply["results"]) {
            const double rnd = r["scores"]["rnd"].get<double>();
            scores.push_back({{"id", r["id"]}, {"rnd", rnd}});
            values.push_back(rnd);
        }
    }
    std::sort(values.begin(), values.end());
    auto quantile = [&](double f) {  // the nearest-rank quantile of the sample
        const auto rank = static_cast<std::size_t>(std::ceil(f * static_cast<double>(values.size())));
        return values[std::clamp<std::size_t>(rank, 1, values.size()) - 1];
    };
    nlohmann::ordered_json reply{{"p", p}, {"q", q}, {"papers", n_papers}, {"sample", n},
                                 {"sampling", "evenly spaced rows of the corpus (publication-date order), each paper "
                                              "scored as an idea with itself left out and no cutoff"}};
    reply["quantiles"] = {{"p10", quantile(0.1)}, {"p25", quantile(0.25)}, {"p50", quantile(0.5)},
                          {"p75", quantile(0.75)}, {"p90", quantile(0.9)}};
    reply["scores"] = std::move(scores);
    return reply.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

JobRegistry::ProgressWork UiApi::score_job(const std::string& text) {
    nlohmann::json body = parse_body(text);
    refuse_unknown_keys(body, {"ideas", "p", "q", "cutoff", "filter"});
    // Everything a slice would refuse is checked now, so a bad body is a 400 and not a failed job.
    parse_records(body, "ideas", RequestLimits{options_.max_records, options_.max_text_bytes}, engine_.corpus().manifest().dim);
    const std::size_t max_k = std::min<std::size_t>(options_.max_k, 2048);
    parse_count(body, "p", options_.default_p, max_k);
    parse_count(body, "q", options_.default_q, max_k);
    parse_date_field(body, "cutoff");
    parse_filter_field(body, "filter");
    return [this, body = std::move(body)](const JobProgressFn& progress) {
        const nlohmann::json& ideas = body["ideas"];
        const std::size_t n = ideas.size();
        std::string out = "{\"results\":[";
        progress("score", 0, n);
        for (std::size_t begin = 0; begin < n; begin += score_job_slice) {
            nlohmann::json slice = body;
            slice["ideas"] = nlohmann::json(ideas.begin() + begin, ideas.begin() + std::min(n, begin + score_job_slice));
            std::string reply;
            try {
                reply = engine_.score(slice);
            } catch (const UsageError& e) {
                throw UsageError(renumbered(e.what(), begin));
            }
            if (begin > 0) out += ',';
            out += results_list(reply);
            progress("score", std::min(n, begin + score_job_slice), n);
        }
        return out + "]}";
    };
}

}  // namespace novelty::host::detail
