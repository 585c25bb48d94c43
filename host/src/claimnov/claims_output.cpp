// One ClaimNov result as a JSON Lines record (docs/formats.md, "claims").
#include "novelty_host/claimnov/claimnov_pipeline.hpp"

#include "novelty/util/error.hpp"

#include "io/json/json_parse.hpp"

#include <nlohmann/json.hpp>

namespace novelty::host {

std::string proposal_result_json(const ProposalResult& r, const std::string& context_json) {
    using json = nlohmann::ordered_json;
    json j;
    j["id"] = r.id;
    if (!r.error.empty()) {
        j["novelty"] = nullptr;
        j["claims"] = json::array();
        j["verdict"] = nullptr;
        j["error"] = r.error;
    } else {
        j["novelty"] = r.novelty.novelty;
        json claims = json::array();
        for (const ClaimResult& c : r.claims) {
            json candidates = json::array();
            for (const CandidateResult& cand : c.candidates) {
                json cj = {{"paper", cand.paper}, {"claim", cand.claim}, {"sim", cand.sim}};
                if (cand.level > 0) {
                    cj["level"] = cand.level;
                    cj["e"] = entailment_score(cand.level);
                } else {
                    cj["level"] = nullptr;
                    cj["e"] = nullptr;
                    cj["error"] = cand.error;
                }
                cj["title"] = cand.title;
                if (!cand.reason.empty()) cj["reason"] = cand.reason;
                candidates.push_back(std::move(cj));
            }
            claims.push_back({{"text", c.claim.text},
                              {"dimension", dimension_name(c.claim.dimension)},
                              {"attribute", c.claim.attribute},
                              {"value", c.claim.value},
                              {"importance", c.importance},
                              {"anticipation", c.signals.anticipation},
                              {"max_e", c.signals.max_e},
                              {"strong", c.signals.n_strong},
                              {"k", c.k},
                              {"n_papers", c.n_papers},
                              {"candidates", std::move(candidates)}});
        }
        j["claims"] = std::move(claims);
        json established = json::array();
        for (std::size_t i : r.verdict.established) established.push_back(i);
        json verdict = {{"decision", r.verdict.fail ? "fail" : "pass"},
                        {"source", r.verdict.source ? json(*r.verdict.source) : json(nullptr)},
                        {"established", std::move(established)},
                        {"rationale", r.verdict.rationale},
                        {"judge", r.verdict.judge}};
        if (!r.verdict.error.empty()) verdict["error"] = r.verdict.error;
        j["verdict"] = std::move(verdict);
        j["signals"] = {{"anticipated", r.novelty.anticipated},
                        {"anticipated_max", r.novelty.anticipated_max},
                        {"max_anticipation", r.novelty.max_anticipation},
                        {"breadth", r.novelty.breadth}};
        j["attribution"] = r.attribution.empty() ? json(nullptr) : json(r.attribution);
        if (r.failed_grades > 0) j["failed_grades"] = r.failed_grades;
    }
    if (!context_json.empty()) {
        const json context = parse_json(context_json);
        if (!context.is_object()) throw UsageError("proposal_result_json: the context must be a JSON object");
        for (const auto& [key, value] : context.items()) j[key] = value;
    }
    return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace novelty::host
