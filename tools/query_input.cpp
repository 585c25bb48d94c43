#include "query_input.hpp"

#include "cli_common.hpp"

#include "novelty/corpus/vectors.hpp"
#include "novelty/util/message_text.hpp"
#include "novelty/util/error.hpp"
#include "novelty/io/npy.hpp"
#include "novelty/util/notices.hpp"
#include "novelty/request/scope.hpp"
#include "novelty_host/jobs/progress.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

namespace novelty::cli {

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void check_vector(const float* v, std::size_t dim, const std::string& file, std::size_t line, const std::string& what) {
    if (const RowProblem problem = row_problem(v, dim); problem != RowProblem::none)
        throw InputError(file, line, what + " " + row_problem_text(problem));
}

}  // namespace

namespace {

// Dimension check of a given matrix against the expected one.
void check_dim(const NpyMatrix& m, const IdeaVectorsOptions& options, const std::string& path) {
    if (options.dim != 0 && m.cols() != options.dim)
        throw InputError(path, 0, "vectors have dimension " + std::to_string(m.cols()) + " but " + options.dim_owner +
                                      " has " + std::to_string(options.dim));
}

void load_npy_rows(const IdeaVectorsOptions& options, IdeaVectors& input) {
    if (!options.vectors_path.empty()) throw UsageError("--vectors goes with a .jsonl query file, not a .npy one");
    const NpyMatrix m = NpyMatrix::open(options.path);
    check_dim(m, options, options.path);
    if (m.rows() == 0) throw InputError(options.path, 0, "holds no vectors");
    const std::size_t dim = input.dim = m.cols();
    input.vectors.resize(m.rows() * dim);
    for (std::size_t i = 0; i < m.rows(); ++i) {
        m.row_as_f32(i, input.vectors.data() + i * dim);
        check_vector(input.vectors.data() + i * dim, dim, options.path, 0, "row " + std::to_string(i));
        QueryRecord r;
        r.id = std::to_string(i);
        r.line = i + 1;
        input.records.push_back(r);
    }
}

// Embeds the records listed in `to_embed`, 64 at a time; the first batch fixes the dimension
// when nothing else did.
void embed_records(const IdeaVectorsOptions& options, const std::vector<std::size_t>& to_embed, IdeaVectors& input) {
    const std::unique_ptr<Embedder> embedder = options.make_embedder();
    constexpr std::size_t batch = 64;
    std::vector<std::string> texts;
    for (std::size_t begin = 0; begin < to_embed.size(); begin += batch) {
        const std::size_t end = std::min(to_embed.size(), begin + batch);
        texts.clear();
        for (std::size_t j = begin; j < end; ++j)
            texts.push_back(embedding_text(input.records[to_embed[j]].title, input.records[to_embed[j]].text));
        const std::vector<float> vectors = embedder->embed(texts);
        if (input.dim == 0 && !vectors.empty() && vectors.size() % texts.size() == 0) {
            input.dim = vectors.size() / texts.size();
            input.vectors.assign(input.records.size() * input.dim, 0.0f);
        }
        const std::size_t dim = input.dim;
        if (vectors.size() != texts.size() * dim)
            throw UsageError("the encoder '" + embedder->name() + "' makes vectors of dimension " +
                             std::to_string(vectors.size() / texts.size()) + " but " + options.dim_owner + " has " +
                             std::to_string(dim));
        for (std::size_t j = begin; j < end; ++j)
            std::copy(vectors.begin() + (j - begin) * dim, vectors.begin() + (j - begin + 1) * dim,
                      input.vectors.begin() + to_embed[j] * dim);
        if (options.on_embed_progress) options.on_embed_progress(end, to_embed.size());
    }
}

}  // namespace

IdeaVectors load_idea_vectors(const IdeaVectorsOptions& options) {
    IdeaVectors input;
    input.dim = options.dim;
    input.from_npy = ends_with(options.path, ".npy");
    if (input.from_npy) {
        load_npy_rows(options, input);
        return input;
    }
    input.records = read_query_records(options.path);
    const std::size_t n = input.records.size();
    std::optional<NpyMatrix> given;
    if (!options.vectors_path.empty()) {
        given.emplace(NpyMatrix::open(options.vectors_path));
        if (given->rows() != n)
            throw InputError(options.vectors_path, 0, "has " + std::to_string(given->rows()) + " rows but " +
                                                          options.path + " has " + std::to_string(n) + " records");
        check_dim(*given, options, options.vectors_path);
        input.dim = given->cols();
    }
    input.vectors.resize(n * input.dim);
    std::vector<std::size_t> to_embed, textless;
    for (std::size_t i = 0; i < n; ++i) {
        const QueryRecord& r = input.records[i];
        if (given) {
            float* v = input.vectors.data() + i * input.dim;
            given->row_as_f32(i, v);
            check_vector(v, input.dim, options.vectors_path, 0, "row " + std::to_string(i) + " (query " + quote_value(r.id) + ")");
        } else if (r.has_text()) {
            if (!options.make_embedder)
                throw InputError(options.path, r.line, "query " + quote_value(r.id) + " has text but no encoder was given to embed it");
            to_embed.push_back(i);
        } else {
            if (!options.textless) throw InputError(options.path, r.line, "query " + quote_value(r.id) + " has no text");
            textless.push_back(i);
        }
    }
    // Records without text first when the dimension is known, so their errors come before any embedding.
    const bool dim_known = input.dim != 0;
    if (dim_known)
        for (std::size_t i : textless) options.textless(input.records[i], input.vectors.data() + i * input.dim);
    if (!to_embed.empty()) embed_records(options, to_embed, input);
    if (!dim_known)
        for (std::size_t i : textless) options.textless(input.records[i], input.vectors.data() + i * input.dim);
    return input;
}

QueryInput load_query_input(const Corpus& corpus, const QueryInputOptions& options) {
    const std::size_t dim = corpus.manifest().dim;
    corpus.vectors();  // a corpus without vectors is refused (CorpusError) before any query is read
    IdeaVectorsOptions idea_options;
    idea_options.path = options.queries_path;
    idea_options.vectors_path = options.vectors_path;
    idea_options.dim = dim;
    idea_options.make_embedder = options.make_embedder;
    idea_options.on_embed_progress = options.on_embed_progress;
    idea_options.textless = [&](const QueryRecord& r, float* v) {
        if (!copy_paper_vector(corpus, r.id, v))
            throw InputError(options.queries_path, r.line, "query " + quote_value(r.id) + " has no text and is not the id of a corpus paper");
    };
    IdeaVectors ideas = load_idea_vectors(idea_options);
    QueryInput input;
    input.dim = dim;
    input.records = std::move(ideas.records);
    input.vectors = std::move(ideas.vectors);
    const bool from_npy = ideas.from_npy;

    // Cutoffs, exclusions, and the query's own paper (.npy rows have made-up ids "0", "1", ...).
    input.scopes = resolve_scopes(corpus, input.records, options.cutoff, options.exclude, !from_npy);
    return input;
}

std::vector<RecordScope> resolve_scopes(const Corpus& corpus, const std::vector<QueryRecord>& records,
                                        const std::optional<PartialDate>& cutoff,
                                        const std::vector<std::string>& exclude, bool own_paper) {
    ScopeResolver resolver(corpus, cutoff, exclude);
    std::vector<RecordScope> scopes;
    scopes.reserve(records.size());
    for (const QueryRecord& r : records) scopes.push_back(resolver.resolve(r.id, r.date, r.exclude, own_paper));
    return scopes;
}

void add_filter_flags(CLI::App& cmd, FilterFlags& flags) {
    cmd.add_option("--field", flags.fields,
                   "Only papers of these fields (comma-separated, as 'corpus info' lists them; the flag may repeat)")
        ->allow_extra_args(false)
        ->check(checked_by([](const std::string& v) { filter_names(v, "field"); }));
    cmd.add_option("--venue", flags.venues, "Only papers of these venues (comma-separated, exact names; the flag may repeat)")
        ->allow_extra_args(false)
        ->check(checked_by([](const std::string& v) { filter_names(v, "venue"); }));
    cmd.add_option("--venue-file", flags.venue_file,
                   "Only papers of the venues listed in this file (one exact name per line; for names with commas)")
        ->check(non_empty_value());
    cmd.add_option("--min-citations", flags.min_citations, "Only papers with at least this many citations")
        ->check(checked_by([](const std::string& v) { parse_min_citations(v, "min_citations"); }));
    cmd.add_option("--papers", flags.papers,
                   "Only the papers listed in this file (one id or alias per line, or JSON Lines with \"id\")")
        ->check(non_empty_value());
}

PaperFilter run_filter(const FilterFlags& flags) {
    PaperFilter filter;
    for (const auto& list : flags.fields)
        for (auto& name : filter_names(list, "field")) filter.fields.push_back(std::move(name));
    for (const auto& list : flags.venues)
        for (auto& name : filter_names(list, "venue")) filter.venues.push_back(std::move(name));
    if (!flags.venue_file.empty())
        for (auto& name : read_name_file(flags.venue_file)) filter.venues.push_back(std::move(name));
    if (!flags.min_citations.empty()) filter.min_citations = parse_min_citations(flags.min_citations, "min_citations");
    if (!flags.papers.empty()) filter.papers = read_paper_list(flags.papers);
    return filter;
}

std::vector<std::shared_ptr<const RowFilter>> record_filters(const Corpus& corpus, const std::vector<QueryRecord>& records,
                                                             const PaperFilter& run) {
    if (run.papers) {
        const UnknownPapers unknown = unknown_papers(corpus, *run.papers);
        if (unknown.count > 0) {
            std::string first;
            for (const auto& id : unknown.first) first += (first.empty() ? "" : ", ") + quote_value(id);
            notice("--papers: " + std::to_string(unknown.count) + " of the " + std::to_string(run.papers->size()) +
                   " papers listed are not in the corpus (" + first + (unknown.count > unknown.first.size() ? ", ..." : "") +
                   "); they match nothing");
        }
    }
    RowFilterCache cache(corpus, 2 * records.size() + 2);
    std::vector<std::shared_ptr<const RowFilter>> filters;
    bool any = false;
    for (const QueryRecord& r : records) {
        filters.push_back(cache.rows(run, r.filter));
        any = any || filters.back();
    }
    if (!any) filters.clear();
    return filters;
}

std::vector<std::string> split_ids(const std::string& list) {
    std::vector<std::string> ids;
    std::stringstream ss(list);
    for (std::string id; std::getline(ss, id, ',');)
        if (!id.empty()) ids.push_back(id);
    return ids;
}

std::vector<std::size_t> parse_counts(const std::string& list, const std::string& flag, std::size_t max) {
    std::vector<std::size_t> counts;
    for (const std::string& item : split_ids(list)) {
        std::size_t used = 0;
        unsigned long long value = 0;
        try {
            value = std::stoull(item, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used != item.size() || item[0] == '-' || value < 1 || (max > 0 && value > max))
            throw UsageError(flag + ": '" + item + "' is not " +
                             (max > 0 ? "an integer from 1 to " + std::to_string(max) : std::string("a positive integer")));
        counts.push_back(static_cast<std::size_t>(value));
    }
    if (counts.empty()) throw UsageError(flag + " needs at least one value");
    return counts;
}

QueryInput load_queries(const Corpus& corpus, const QueryFlags& flags, const std::string& what) {
    QueryInputOptions options;
    options.queries_path = flags.path;
    options.vectors_path = flags.vectors;
    if (!flags.cutoff.empty()) options.cutoff = parse_cutoff(flags.cutoff);
    options.exclude = split_ids(flags.exclude);
    const PaperFilter filter = run_filter(flags.filter);
    EmbedderFlags embedder_flags = flags.embedder;
    embedder_flags.threads = flags.threads;
    options.make_embedder = [&] { return embedder_for_corpus(corpus, embedder_flags); };
    host::ProgressBar bar("embed " + what, what, flags.quiet);
    options.on_embed_progress = [&](std::size_t done, std::size_t total) { bar.update(done, total); };
    QueryInput input = load_query_input(corpus, options);
    bar.finish();
    input.filters = record_filters(corpus, input.records, filter);
    return input;
}

std::vector<std::pair<std::size_t, std::size_t>> pending_runs(const QueryInput& input, const std::set<std::string>& done,
                                                              std::size_t max_run) {
    std::vector<std::pair<std::size_t, std::size_t>> runs;
    for (std::size_t i = 0; i < input.records.size(); ++i) {
        if (done.count(input.records[i].id)) continue;
        if (!runs.empty() && runs.back().second == i && i - runs.back().first < max_run)
            ++runs.back().second;
        else
            runs.emplace_back(i, i + 1);
    }
    return runs;
}

SearchQueries query_slice(const QueryInput& input, std::size_t begin, std::size_t end) {
    SearchQueries q;
    q.vectors = input.vectors.data() + begin * input.dim;
    q.n_queries = end - begin;
    q.dim = input.dim;
    for (std::size_t i = begin; i < end; ++i) {
        q.row_limit.push_back(input.scopes[i].row_limit);
        q.excluded.add(input.scopes[i].excluded_rows);
        if (!input.filters.empty()) q.filters.push_back(input.filters[i]);
    }
    return q;
}

ScoreInput score_batch_of(const QueryInput& input, const std::vector<std::size_t>& which, std::vector<float>& vectors) {
    ScoreInput batch;
    batch.dim = input.dim;
    vectors.clear();
    for (std::size_t i : which) {
        vectors.insert(vectors.end(), input.vectors.begin() + i * input.dim, input.vectors.begin() + (i + 1) * input.dim);
        batch.row_limit.push_back(input.scopes[i].row_limit);
        batch.excluded.add(input.scopes[i].excluded_rows);
        if (!input.filters.empty()) batch.filters.push_back(input.filters[i]);
    }
    batch.vectors = vectors.data();
    batch.n_ideas = which.size();
    return batch;
}

}  // namespace novelty::cli
