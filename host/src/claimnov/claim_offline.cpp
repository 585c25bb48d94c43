// The offline approximations of the ClaimNov stages: keyword claim typing and similarity grades.
#include "novelty_host/claimnov/claim_stages.hpp"

#include <algorithm>
#include <cctype>

namespace novelty::host {

namespace {

constexpr std::size_t max_claims = 4;
constexpr std::size_t max_claim_chars = 400;

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

std::string trim(const std::string& s) {
    const auto b = s.find_first_not_of(" \t\r\n");
    if (b == std::string::npos) return "";
    return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

bool has_any(const std::string& text, std::initializer_list<const char*> words) {
    return std::any_of(words.begin(), words.end(), [&](const char* w) { return text.find(w) != std::string::npos; });
}

/// Sentences: split after '.', '!' or '?' followed by whitespace, and at line breaks.
std::vector<std::string> sentences(const std::string& text) {
    std::vector<std::string> out;
    std::string current;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        const bool line_break = c == '\n';
        if (!line_break) current += c;
        const bool end = line_break || ((c == '.' || c == '!' || c == '?') &&
                                        (i + 1 == text.size() || std::isspace(static_cast<unsigned char>(text[i + 1]))));
        if (end) {
            if (auto t = trim(current); t.size() > 1) out.push_back(t);
            current.clear();
        }
    }
    if (auto t = trim(current); t.size() > 1) out.push_back(t);
    return out;
}

ClaimDimension type_of(const std::string& sentence) {
    const std::string s = lower(sentence);
    if (has_any(s, {"dataset", "benchmark", "corpus", "toolkit", "library", "open-source", "open source", "we release",
                    "publicly available", "code is available"}))
        return ClaimDimension::resource;
    if (has_any(s, {"we propose", "we introduce", "we present", "we develop", "we design", "algorithm", "architecture",
                    "framework", "method", "approach", "training procedure"}))
        return ClaimDimension::methodology;
    if (has_any(s, {"outperform", "accuracy", "improve", "state-of-the-art", "state of the art", "%", "achieve", "we show",
                    "we find", "we prove", "results", "bound", "significantly"}))
        return ClaimDimension::result;
    if (has_any(s, {"task", "problem", "setting", "formulat", "challenge", "question"})) return ClaimDimension::problem;
    return ClaimDimension::methodology;
}

bool states_contribution(const std::string& sentence) {
    const std::string s = lower(sentence);
    return has_any(s, {"we ", "our ", "this paper", "this work", "this study", "in this", "propose", "introduce", "present"});
}

std::string clip(const std::string& s) {
    if (s.size() <= max_claim_chars) return s;
    std::size_t cut = max_claim_chars;
    while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
    return s.substr(0, cut);
}

class OfflineExtractor : public ClaimExtractor {
public:
    std::string name() const override { return offline_label; }
    bool approximate() const override { return true; }
    void extract(const TitledText& text, const std::string&, std::function<void(Extraction)> done) override {
        const std::vector<std::string> all = sentences(text.text);
        std::vector<std::string> chosen;
        for (const auto& s : all)
            if (chosen.size() < max_claims && states_contribution(s)) chosen.push_back(s);
        for (std::size_t i = 0; chosen.empty() && i < std::min<std::size_t>(2, all.size()); ++i) chosen.push_back(all[i]);
        Extraction e;
        for (const auto& s : chosen) {
            Claim c;
            c.text = clip(s);
            c.dimension = type_of(s);
            e.claims.push_back(std::move(c));
        }
        if (e.claims.empty()) {
            const std::string title = trim(text.title);
            if (title.empty()) {
                e.error = "no text to extract claims from";
            } else {
                Claim c;
                c.text = clip(title);
                c.dimension = ClaimDimension::problem;
                e.claims.push_back(std::move(c));
            }
        }
        done(std::move(e));
    }
};

class OfflineGrader : public EntailmentGrader {
public:
    explicit OfflineGrader(OfflineGradeThresholds t) : t_(t) {}
    std::string name() const override { return offline_label; }
    bool approximate() const override { return true; }
    void grade(const TitledText&, const Claim&, const TitledText&, const std::string&, float sim,
               std::function<void(Grade)> done) override {
        Grade g;
        g.level = offline_level(sim, t_);
        g.reason = "offline approximation from cosine similarity";
        done(std::move(g));
    }

private:
    OfflineGradeThresholds t_;
};

}  // namespace

int offline_level(float sim, const OfflineGradeThresholds& t) {
    if (sim >= t.t[3]) return 5;
    if (sim >= t.t[2]) return 4;
    if (sim >= t.t[1]) return 3;
    if (sim >= t.t[0]) return 2;
    return 1;
}

std::unique_ptr<ClaimExtractor> make_offline_extractor() { return std::make_unique<OfflineExtractor>(); }
std::unique_ptr<EntailmentGrader> make_offline_grader(OfflineGradeThresholds thresholds) {
    return std::make_unique<OfflineGrader>(thresholds);
}

}  // namespace novelty::host
