// The request layer's resolution of one record against a corpus, shared by the CLI, the server
// and the Python package: which rows it may search (its cutoff), which it leaves out (its
// exclusions and its own paper), whether the corpus has enough of them for p and q, and the
// provenance a score record reports.
#pragma once

#include "novelty/corpus/corpus.hpp"
#include "novelty/request/result_json.hpp"
#include "novelty/util/dates.hpp"

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace novelty {

/// What one record may search.
struct RecordScope {
    std::size_t row_limit = 0;  ///< rows [0, row_limit) are searchable: those on or before the cutoff
    std::string cutoff;         ///< the cutoff's text as given, "" when none
    /// Rows left out: the run's exclusions found in the corpus, the record's, then its own paper.
    /// May repeat a row.
    std::vector<std::int64_t> excluded_rows;
    /// Ids left out, as given (the run's, then the record's), then the record's own id when it
    /// names a corpus paper; unknown ids included.
    std::vector<std::string> excluded_ids;
    std::size_t unknown_excluded = 0;  ///< given ids that name no corpus paper
};

/// Resolves records against one corpus. Not thread-safe; cheap to make per request.
class ScopeResolver {
public:
    /// `default_cutoff` applies to records without their own date; `run_exclude` to every record.
    ScopeResolver(const Corpus& corpus, std::optional<PartialDate> default_cutoff = std::nullopt,
                  std::vector<std::string> run_exclude = {});

    /// The scope of a record with id `id`, its own date (nullopt: the default cutoff) and its
    /// exclusions. With `own_paper`, a record whose id names a corpus paper never finds that
    /// paper (false for made-up ids, such as the row numbers given to .npy queries).
    RecordScope resolve(const std::string& id, const std::optional<PartialDate>& date,
                        const std::vector<std::string>& exclude, bool own_paper = true);

private:
    std::size_t rows_through(const PartialDate& date);

    const Corpus& corpus_;
    std::optional<PartialDate> default_cutoff_;
    std::vector<std::string> run_exclude_;
    std::vector<std::int64_t> run_rows_;
    std::size_t run_unknown_ = 0;
    std::map<std::string, std::size_t> rows_through_;  ///< cutoff (effective) -> rows on or before it
};

/// Copies the vector of the corpus paper with id `id` into `out` (dim floats, as stored) and
/// returns true; false when no paper has that id.
bool copy_paper_vector(const Corpus& corpus, const std::string& id, float* out);

/// Why a record with this scope cannot be scored with p and q ("" when it can): too few papers
/// are searchable once its exclusions are left out (see reach_problem in scoring.hpp).
std::string scope_reach_problem(const RecordScope& scope, std::size_t corpus_rows, std::size_t p, std::size_t q);

/// The date windows of a score run with a split (the RND paper's HD and ON): papers before the
/// split are historical, from it on contemporary; HD's historical window starts at
/// historical_from.
struct ScoreWindows {
    std::optional<std::size_t> split_row;            ///< rows [0, split_row) lie before the split
    std::optional<std::size_t> historical_from_row;  ///< HD's window starts here; nullopt: at row 0
    std::string historical_from;  ///< the window's first date as used ("" when it starts at row 0)
};

/// The windows for `split` ("" = no split: nothing set) and `historical_from` ("" = the paper's
/// 2011 when it lies before the split; "none" = every paper before the split; else a date).
/// Throws UsageError naming split or historical_from for a date it cannot read.
ScoreWindows score_windows(const Corpus& corpus, const std::string& split, const std::string& historical_from);

/// The provenance every score record of a run reports: the corpus's identity and embedder, p, q,
/// include_self, the evidence count and the backend's label. The split, the historical window and
/// the methods are left for the caller.
ScoreReportContext score_report_context(const Corpus& corpus, std::size_t p, std::size_t q, bool include_self,
                                        std::size_t evidence, const std::string& backend_label);

}  // namespace novelty
