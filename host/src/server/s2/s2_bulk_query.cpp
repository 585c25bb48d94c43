#include "server/s2/s2_bulk_query.hpp"

#include "server/s2/s2_catalogue.hpp"
#include "server/s2/s2_error.hpp"

#include <algorithm>
#include <cctype>

namespace novelty::host::s2 {

namespace {

constexpr int default_fuzz = 2;
constexpr int max_fuzz = 9;
/// Brackets and negations nest at most this deep (the parser recurses once per level).
constexpr int max_depth = 64;
/// Words and phrases in one query at most (each is one look-up in the full-text index).
constexpr std::size_t max_terms = 256;

BulkQuery of_kind(BulkQuery::Kind kind) {
    BulkQuery q;
    q.kind = kind;
    return q;
}

class Parser {
public:
    explicit Parser(const std::string& text) : s_(text) {}

    BulkQuery parse() {
        BulkQuery q = any_of();
        skip_space();
        if (i_ < s_.size()) fail("unexpected '" + std::string(1, s_[i_]) + "' at character " + std::to_string(i_ + 1));
        return q;
    }

private:
    [[noreturn]] void fail(const std::string& why) { throw S2Error(400, "Unacceptable query: " + why); }

    void skip_space() {
        while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
    }
    bool at(char c) {
        skip_space();
        return i_ < s_.size() && s_[i_] == c;
    }

    BulkQuery any_of() {
        BulkQuery q = of_kind(BulkQuery::Kind::any_of);
        q.parts.push_back(all_of());
        while (at('|')) {
            ++i_;
            q.parts.push_back(all_of());
            if (q.parts.back().parts.empty() && q.parts.back().kind == BulkQuery::Kind::all_of) fail("'|' with nothing after it");
        }
        return q.parts.size() == 1 ? std::move(q.parts.front()) : q;
    }

    BulkQuery all_of() {
        BulkQuery q = of_kind(BulkQuery::Kind::all_of);
        for (;;) {
            while (at('+')) ++i_;
            skip_space();
            if (i_ >= s_.size() || s_[i_] == ')' || s_[i_] == '|') break;
            q.parts.push_back(unary());
        }
        return q.parts.size() == 1 ? std::move(q.parts.front()) : q;
    }

    BulkQuery unary() {
        const Nesting nesting(*this);
        if (at('-')) {
            ++i_;
            BulkQuery q = of_kind(BulkQuery::Kind::none_of);
            skip_space();
            if (i_ >= s_.size() || s_[i_] == ')' || s_[i_] == '|') fail("'-' with nothing after it");
            q.parts.push_back(unary());
            return q;
        }
        return primary();
    }

    int distance(int fallback) {
        if (i_ >= s_.size() || s_[i_] != '~') return -1;
        ++i_;
        if (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) {
            const int n = s_[i_++] - '0';
            if (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) fail("'~' takes one digit");
            return std::min(n, max_fuzz);
        }
        return fallback;
    }

    BulkQuery primary() {
        skip_space();
        if (s_[i_] == '(') {
            ++i_;
            BulkQuery q = any_of();
            if (!at(')')) fail("a '(' is not closed");
            ++i_;
            return q;
        }
        if (s_[i_] == '"') {
            const std::size_t close = s_.find('"', i_ + 1);
            if (close == std::string::npos) fail("a '\"' is not closed");
            if (++terms_ > max_terms) fail("more than " + std::to_string(max_terms) + " words and phrases");
            BulkQuery q = of_kind(BulkQuery::Kind::phrase);
            q.words = words_of(s_.substr(i_ + 1, close - i_ - 1));
            i_ = close + 1;
            q.distance = distance(0);
            if (q.words.empty()) fail("an empty phrase");
            return q;
        }
        if (++terms_ > max_terms) fail("more than " + std::to_string(max_terms) + " words and phrases");
        const std::size_t start = i_;
        while (i_ < s_.size() && !std::isspace(static_cast<unsigned char>(s_[i_])) &&
               std::string("|()\"~*+").find(s_[i_]) == std::string::npos)
            ++i_;
        BulkQuery q = of_kind(BulkQuery::Kind::word);
        q.words = words_of(s_.substr(start, i_ - start));
        if (q.words.empty()) fail("unexpected '" + std::string(1, s_[start]) + "' at character " + std::to_string(start + 1));
        if (q.words.size() > 1) q.kind = BulkQuery::Kind::phrase;  // "covid-19": its words together
        if (i_ < s_.size() && s_[i_] == '*') ++i_, q.prefix = true;
        q.distance = distance(q.kind == BulkQuery::Kind::word ? default_fuzz : 0);
        return q;
    }

    /// Counts the levels open; refuses the query past max_depth.
    struct Nesting {
        explicit Nesting(Parser& p) : p_(p) {
            if (++p_.depth_ > max_depth) p_.fail("brackets and '-' nest more than " + std::to_string(max_depth) + " deep");
        }
        ~Nesting() { --p_.depth_; }
        Parser& p_;
    };

    const std::string& s_;
    std::size_t i_ = 0;
    int depth_ = 0;
    std::size_t terms_ = 0;
};

}  // namespace

BulkQuery parse_bulk_query(const std::string& text) {
    if (std::all_of(text.begin(), text.end(), [](char c) { return std::isspace(static_cast<unsigned char>(c)); }))
        return of_kind(BulkQuery::Kind::all_of);
    return Parser(text).parse();
}

std::size_t edit_distance(const std::string& a, const std::string& b, std::size_t limit) {
    const std::size_t la = a.size(), lb = b.size();
    if ((la > lb ? la - lb : lb - la) > limit) return limit + 1;
    std::vector<std::size_t> prev(lb + 1), cur(lb + 1);
    for (std::size_t j = 0; j <= lb; ++j) prev[j] = j;
    for (std::size_t i = 1; i <= la; ++i) {
        cur[0] = i;
        std::size_t best = cur[0];
        for (std::size_t j = 1; j <= lb; ++j) {
            cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
            best = std::min(best, cur[j]);
        }
        if (best > limit) return limit + 1;
        std::swap(prev, cur);
    }
    return std::min(prev[lb], limit + 1);
}

}  // namespace novelty::host::s2
