#include "novelty/request/scope.hpp"

#include "novelty/request/query_records.hpp"
#include "novelty/scoring/scoring.hpp"

#include <utility>

namespace novelty {

ScopeResolver::ScopeResolver(const Corpus& corpus, std::optional<PartialDate> default_cutoff,
                             std::vector<std::string> run_exclude)
    : corpus_(corpus), default_cutoff_(std::move(default_cutoff)), run_exclude_(std::move(run_exclude)) {
    for (const auto& id : run_exclude_) {
        if (auto row = corpus_.find_row(id)) run_rows_.push_back(static_cast<std::int64_t>(*row));
        else ++run_unknown_;
    }
}

std::size_t ScopeResolver::rows_through(const PartialDate& date) {
    const std::string key = date.effective();
    auto it = rows_through_.find(key);
    if (it == rows_through_.end()) it = rows_through_.emplace(key, corpus_.rows_through(date)).first;
    return it->second;
}

RecordScope ScopeResolver::resolve(const std::string& id, const std::optional<PartialDate>& date,
                                   const std::vector<std::string>& exclude, bool own_paper) {
    RecordScope scope;
    const std::optional<PartialDate>& cutoff = date ? date : default_cutoff_;
    if (cutoff) {
        scope.row_limit = rows_through(*cutoff);
        scope.cutoff = cutoff->text();
    } else {
        scope.row_limit = corpus_.size();
    }
    scope.excluded_rows = run_rows_;
    scope.excluded_ids = run_exclude_;
    scope.unknown_excluded = run_unknown_;
    for (const auto& excluded : exclude) {
        scope.excluded_ids.push_back(excluded);
        if (auto row = corpus_.find_row(excluded)) scope.excluded_rows.push_back(static_cast<std::int64_t>(*row));
        else ++scope.unknown_excluded;
    }
    if (own_paper)
        if (auto self = corpus_.find_row(id)) {
            scope.excluded_ids.push_back(id);
            scope.excluded_rows.push_back(static_cast<std::int64_t>(*self));
        }
    return scope;
}

bool copy_paper_vector(const Corpus& corpus, const std::string& id, float* out) {
    const auto row = corpus.find_row(id);
    if (!row) return false;
    corpus.vectors().row_as_f32(*row, out);
    return true;
}

std::string scope_reach_problem(const RecordScope& scope, std::size_t corpus_rows, std::size_t p, std::size_t q) {
    const std::size_t reachable =
        reachable_papers(scope.row_limit, corpus_rows, scope.excluded_rows.data(), scope.excluded_rows.size());
    return reach_problem(p, q, reachable, scope.cutoff);
}

namespace {

/// The rows published before `date` starts: those on or before the end of the period before it
/// ("2011" -> through 2010-12-31, "2011-03" -> through 2011-02, "2011-03-01" -> through 2011-02).
std::size_t rows_before(const Corpus& corpus, PartialDate date) {
    if (date.month == 0) return corpus.rows_through(PartialDate{date.year - 1, 0, 0});
    if (date.day > 1) return corpus.rows_through(PartialDate{date.year, date.month, date.day - 1});
    return corpus.rows_through(date.month > 1 ? PartialDate{date.year, date.month - 1, 0} : PartialDate{date.year - 1, 12, 0});
}

}  // namespace

ScoreWindows score_windows(const Corpus& corpus, const std::string& split, const std::string& historical_from) {
    ScoreWindows windows;
    if (split.empty()) return windows;
    windows.split_row = corpus.rows_through(parse_cutoff(split, "split"));
    // The RND paper's historical window starts in 2011; by default that bound applies when it
    // lies before the split (a split in or before 2011 keeps every earlier paper).
    if (historical_from == "none") return windows;
    const bool given = !historical_from.empty();
    const std::size_t from = rows_before(corpus, parse_cutoff(given ? historical_from : "2011", "historical_from"));
    if (given || from < *windows.split_row) {
        windows.historical_from_row = from;
        windows.historical_from = given ? historical_from : "2011";
    }
    return windows;
}

ScoreReportContext score_report_context(const Corpus& corpus, std::size_t p, std::size_t q, bool include_self,
                                        std::size_t evidence, const std::string& backend_label) {
    ScoreReportContext context;
    context.corpus_identity = corpus.identity();
    context.embedder = corpus.manifest().embedder ? corpus.manifest().embedder->name : "";
    context.embedder_precision = corpus.manifest().embedder ? corpus.manifest().embedder->precision : "";
    context.p = p;
    context.q = q;
    context.include_self = include_self;
    context.evidence = evidence;
    // Which arithmetic produced the neighbours: float16 storage on the GPU can reorder near-ties
    // that the CPU (and float32 storage) resolve exactly.
    context.backend = backend_label;
    return context;
}

}  // namespace novelty
