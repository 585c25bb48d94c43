#include "novelty_host/claimnov/claim_stages.hpp"

#include "novelty_host/llm/prompts.hpp"

#include "llm/json_answer.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <memory>

namespace novelty::host {

namespace {

using json = nlohmann::json;

constexpr std::size_t max_claims = 4;

/// Parses the content as one JSON object; tolerates a ```json fence around it.
std::optional<std::string> parse_object(const std::string& content, json& out) {
    return detail::parse_answer_object(content, out);
}

std::string string_field(const json& object, const char* key) {
    const auto it = object.find(key);
    return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

/// The first n bytes of s at a UTF-8 boundary, "..." added when cut; n = 0 keeps it whole.
std::string clip(const std::string& s, std::size_t n) {
    if (n == 0 || s.size() <= n) return s;
    std::size_t cut = n;
    while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
    return s.substr(0, cut) + "...";
}

ChatRequest request_for(const std::string& system_prompt, const std::string& user, const std::string& stage) {
    ChatRequest r;
    r.messages = {{"system", system_prompt}, {"user", user}};
    r.stage = stage;
    r.temperature = 0.0;
    return r;
}

class LlmExtractor : public ClaimExtractor {
public:
    explicit LlmExtractor(ChatClient& client) : client_(client) {}
    std::string name() const override { return "llm:" + client_.options().model; }
    bool approximate() const override { return false; }
    void extract(const TitledText& text, const std::string& stage, std::function<void(Extraction)> done) override {
        auto claims = std::make_shared<std::vector<Claim>>();
        ask_json(
            client_, request_for(std::string(prompt_text("extract_claims")), extraction_prompt(text), stage),
            [claims](const std::string& content) {
                claims->clear();
                return parse_extraction_answer(content, *claims);
            },
            [claims, done](std::optional<std::string> content, std::string error) {
                Extraction e;
                if (content) e.claims = *claims;
                e.error = std::move(error);
                done(std::move(e));
            });
    }

private:
    ChatClient& client_;
};

class LlmGrader : public EntailmentGrader {
public:
    explicit LlmGrader(ChatClient& client) : client_(client) {}
    std::string name() const override { return "llm:" + client_.options().model; }
    bool approximate() const override { return false; }
    void grade(const TitledText& proposal, const Claim& claim, const TitledText& prior, const std::string& prior_claim,
               float, std::function<void(Grade)> done) override {
        auto grade = std::make_shared<Grade>();
        ask_json(
            client_,
            request_for(std::string(prompt_text("entailment")), entailment_prompt(proposal, claim, prior, prior_claim), "entail"),
            [grade](const std::string& content) { return parse_entailment_answer(content, *grade); },
            [grade, done](std::optional<std::string> content, std::string error) {
                Grade g;
                if (content) g = *grade;
                g.error = std::move(error);
                if (!content) g.level = 0;
                done(std::move(g));
            });
    }

private:
    ChatClient& client_;
};

class LlmJudge : public VerdictJudge {
public:
    LlmJudge(ChatClient& client, VerdictPromptOptions view) : client_(client), view_(view) {}
    std::string name() const override { return "llm:" + client_.options().model; }
    void judge(const Profile& profile, const Verdict& rule, std::function<void(Verdict)> done) override {
        auto verdict = std::make_shared<Verdict>();
        const std::size_t n_claims = profile.claims.size();
        const std::string label = name();
        ask_json(
            client_, request_for(std::string(prompt_text("verdict")), verdict_prompt(profile, view_), "verdict"),
            [verdict, n_claims, profile](const std::string& content) {
                if (auto problem = parse_verdict_answer(content, n_claims, *verdict)) return problem;
                return verdict_source_problem(*verdict, profile);
            },
            [verdict, rule, done, label](std::optional<std::string> content, std::string error) {
                if (content) {
                    Verdict v = *verdict;
                    v.judge = label;
                    done(std::move(v));
                    return;
                }
                Verdict v = rule;
                v.judge = "rule";
                v.error = "the LLM judge failed, the no-judge rule decided: " + error;
                done(std::move(v));
            });
    }

private:
    ChatClient& client_;
    VerdictPromptOptions view_;
};

class RuleJudge : public VerdictJudge {
public:
    explicit RuleJudge(std::string label) : label_(std::move(label)) {}
    std::string name() const override { return label_; }
    void judge(const Profile&, const Verdict& rule, std::function<void(Verdict)> done) override {
        Verdict v = rule;
        v.judge = label_;
        done(std::move(v));
    }

private:
    std::string label_;
};

}  // namespace

std::optional<std::string> parse_extraction_answer(const std::string& content, std::vector<Claim>& out) {
    json answer;
    if (auto problem = parse_object(content, answer)) return problem;
    const auto claims = answer.find("claims");
    if (claims == answer.end() || !claims->is_array()) return std::string("the answer has no \"claims\" array");
    if (claims->empty()) return std::string("\"claims\" is empty; give 1 to 4 claims");
    if (claims->size() > max_claims)
        return "\"claims\" holds " + std::to_string(claims->size()) + " claims; give at most 4";
    std::vector<Claim> parsed;
    for (std::size_t i = 0; i < claims->size(); ++i) {
        const json& c = (*claims)[i];
        const std::string at = "claims[" + std::to_string(i) + "]";
        if (!c.is_object()) return at + " is not an object";
        Claim claim;
        claim.text = string_field(c, "text");
        if (claim.text.find_first_not_of(" \t\r\n") == std::string::npos) return at + " has no \"text\"";
        if (!detail::has_word(claim.text))
            return at + " has the \"text\" '" + claim.text + "', a placeholder, not a claim";
        const auto dimension = parse_dimension(string_field(c, "dimension"));
        if (!dimension)
            return at + " has dimension '" + string_field(c, "dimension") +
                   "'; it must be one of problem, methodology, resource, result";
        claim.dimension = *dimension;
        claim.attribute = string_field(c, "attribute");
        claim.value = string_field(c, "value");
        parsed.push_back(std::move(claim));
    }
    out = std::move(parsed);
    return std::nullopt;
}

std::optional<std::string> parse_entailment_answer(const std::string& content, Grade& out) {
    json answer;
    if (auto problem = parse_object(content, answer)) return problem;
    const auto level = answer.find("level");
    if (level == answer.end()) return std::string("the answer has no \"level\"");
    int value = 0;
    if (level->is_number_integer()) {
        value = level->get<int>();
    } else if (level->is_number_float() && level->get<double>() == static_cast<int>(level->get<double>())) {
        value = static_cast<int>(level->get<double>());
    } else if (level->is_string() && level->get<std::string>().size() == 1 && std::isdigit(static_cast<unsigned char>(level->get<std::string>()[0]))) {
        value = level->get<std::string>()[0] - '0';
    } else {
        return "\"level\" is " + level->dump() + ", not an integer 1..5";
    }
    if (value < 1 || value > 5) return "\"level\" is " + std::to_string(value) + ", outside 1..5";
    out.level = value;
    out.reason = string_field(answer, "reason");
    return std::nullopt;
}

std::optional<std::string> parse_verdict_answer(const std::string& content, std::size_t n_claims, Verdict& out) {
    json answer;
    if (auto problem = parse_object(content, answer)) return problem;
    const std::string decision = string_field(answer, "decision");
    if (decision != "pass" && decision != "fail") return "\"decision\" is '" + decision + "', not \"pass\" or \"fail\"";
    Verdict v;
    v.fail = decision == "fail";
    const auto source = answer.find("source");
    if (source != answer.end() && source->is_string() && !source->get<std::string>().empty() &&
        source->get<std::string>() != "null")
        v.source = source->get<std::string>();
    else if (source != answer.end() && !source->is_null() && !source->is_string())
        return "\"source\" must be a paper id or null";
    const auto established = answer.find("established");
    if (established != answer.end() && !established->is_null()) {
        if (!established->is_array()) return std::string("\"established\" must be an array of claim indices");
        for (const json& i : *established) {
            if (!i.is_number_integer() || i.get<long long>() < 0 || static_cast<std::size_t>(i.get<long long>()) >= n_claims)
                return "\"established\" holds " + i.dump() + ", not a claim index 0.." + std::to_string(n_claims == 0 ? 0 : n_claims - 1);
            v.established.push_back(static_cast<std::size_t>(i.get<long long>()));
        }
        std::sort(v.established.begin(), v.established.end());
        v.established.erase(std::unique(v.established.begin(), v.established.end()), v.established.end());
    }
    v.rationale = string_field(answer, "rationale");
    if (!v.fail) v.source.reset();
    out = std::move(v);
    return std::nullopt;
}

std::optional<std::string> verdict_source_problem(const Verdict& verdict, const Profile& profile) {
    if (!verdict.source) return std::nullopt;
    std::string listed;
    std::size_t n_listed = 0;
    for (const ProfileClaim& c : profile.claims)
        for (const ProfileCandidate& cand : c.candidates) {
            if (cand.paper.id == *verdict.source) return std::nullopt;
            if (n_listed < 12 && listed.find("'" + cand.paper.id + "'") == std::string::npos) {
                listed += (n_listed++ ? ", '" : "'") + cand.paper.id + "'";
            }
        }
    return "\"source\" is '" + clip(*verdict.source, 80) + "', which is not one of the candidate papers" +
           (listed.empty() ? std::string(" (there are none: the source must be null)") : " (" + listed + ")");
}

void ask_json(ChatClient& client, ChatRequest request, std::function<std::optional<std::string>(const std::string&)> validate,
              std::function<void(std::optional<std::string>, std::string)> done) {
    request.cacheable = [validate](const std::string& content) { return !validate(content); };
    auto first = std::make_shared<ChatRequest>(request);
    client.submit(std::move(request), [&client, first, validate, done](ChatResult result) {
        if (!result.ok) {
            done(std::nullopt, result.error);
            return;
        }
        const auto problem = validate(result.content);
        if (!problem) {
            done(result.content, "");
            return;
        }
        ChatRequest repair = *first;
        repair.messages.push_back({"assistant", result.content});
        std::string instruction(prompt_text("repair"));
        const auto at = instruction.find("{{problem}}");
        if (at != std::string::npos) instruction.replace(at, 11, *problem);
        repair.messages.push_back({"user", instruction});
        repair.stage = first->stage + "-repair";
        const std::string first_problem = *problem;
        const std::string stage = first->stage;
        client.submit(std::move(repair), [&client, stage, validate, done, first_problem](ChatResult again) {
            if (!again.ok) {
                client.note_invalid_answer(stage, false);
                done(std::nullopt, "invalid answer (" + first_problem + "), and the repair request failed: " + again.error);
                return;
            }
            if (const auto still = validate(again.content)) {
                client.note_invalid_answer(stage, false);
                done(std::nullopt, "invalid answer after one repair: " + *still);
                return;
            }
            client.note_invalid_answer(stage, true);
            done(again.content, "");
        });
    });
}

std::unique_ptr<ClaimExtractor> make_llm_extractor(ChatClient& client) { return std::make_unique<LlmExtractor>(client); }
std::unique_ptr<EntailmentGrader> make_llm_grader(ChatClient& client) { return std::make_unique<LlmGrader>(client); }
std::unique_ptr<VerdictJudge> make_llm_judge(ChatClient& client, VerdictPromptOptions view) {
    return std::make_unique<LlmJudge>(client, view);
}
std::unique_ptr<VerdictJudge> make_rule_judge(std::string label) { return std::make_unique<RuleJudge>(std::move(label)); }

std::string extraction_prompt(const TitledText& text) {
    return "Title: " + text.title + "\n\nDescription:\n" + text.text;
}

std::string entailment_prompt(const TitledText& proposal, const Claim& claim, const TitledText& prior,
                              const std::string& prior_claim) {
    std::string s = "PROPOSAL\nTitle: " + proposal.title + "\nAbstract: " + proposal.text + "\n\nClaim under test (" +
                    dimension_name(claim.dimension) + "): " + claim.text;
    if (!claim.attribute.empty() || !claim.value.empty()) s += "\nAttribute: " + claim.attribute + "\nValue: " + claim.value;
    s += "\n\nPRIOR PAPER " + prior.id + "\nTitle: " + prior.title + "\nAbstract: " + prior.text +
         "\n\nPrior claim: " + prior_claim;
    return s;
}

std::string verdict_prompt(const Profile& profile, const VerdictPromptOptions& view) {
    json claims = json::array();
    for (std::size_t i = 0; i < profile.claims.size(); ++i) {
        const ProfileClaim& c = profile.claims[i];
        const std::size_t shown = view.max_candidates == 0 ? c.candidates.size() : std::min(c.candidates.size(), view.max_candidates);
        json candidates = json::array();
        for (std::size_t k = 0; k < shown; ++k) {
            const ProfileCandidate& cand = c.candidates[k];
            candidates.push_back({{"paper", cand.paper.id},
                                  {"title", cand.paper.title},
                                  {"abstract", clip(cand.paper.text, view.max_abstract_chars)},
                                  {"prior_claim", cand.claim},
                                  {"attribute", cand.attribute},
                                  {"value", cand.value},
                                  {"level", cand.level}});
        }
        json claim = {{"index", i},
                      {"dimension", dimension_name(c.claim.dimension)},
                      {"text", c.claim.text},
                      {"attribute", c.claim.attribute},
                      {"value", c.claim.value},
                      {"anticipation", c.anticipation},
                      {"candidates", candidates}};
        if (shown < c.candidates.size()) claim["candidates_not_shown"] = c.candidates.size() - shown;
        claims.push_back(std::move(claim));
    }
    const json body = {{"proposal", {{"title", profile.proposal.title}, {"description", profile.proposal.text}}},
                       {"novelty", profile.novelty},
                       {"claims", claims}};
    return "Evidence profile:\n" + body.dump(1, ' ', false, json::error_handler_t::replace);
}

}  // namespace novelty::host
