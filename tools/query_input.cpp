#include "query_input.hpp"

#include "cli_common.hpp"

#include "novelty/corpus/vectors.hpp"
#include "util/message_text.hpp"
#include "novelty/util/error.hpp"
#include "novelty/io/npy.hpp"
#include "util/notices.hpp"
#include "novelty/request/scope.hpp"
#include "novelty_host/jobs/progress.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

namespace novelty::cli {

IdeaVectors load_idea_vectors(const IdeaVectorsOptions& options) {
    RecordBatch batch = read_record_file(options.path, options.vectors_path, options.dim, options.dim_owner);
    IdeaVectors input;
    input.from_npy = !batch.own_papers;
    input.dim = batch.dim != 0 ? batch.dim : options.dim;
    input.vectors = batch.dim != 0 ? std::move(batch.given) : std::vector<float>(batch.size() * input.dim);
    input.records = std::move(batch.records);
    std::vector<std::size_t> to_embed, textless;
    for (std::size_t i = 0; i < input.records.size(); ++i) {
        const QueryRecord& r = input.records[i];
        if (batch.given_vector(i)) continue;
        if (!r.has_text()) {
            if (!options.textless) throw InputError(options.path, r.line, "query " + quote_value(r.id) + " has no text");
            textless.push_back(i);
        } else if (!options.make_embedder) {
            throw InputError(options.path, r.line, "query " + quote_value(r.id) + " has text but no encoder was given to embed it");
        } else {
            to_embed.push_back(i);
        }
    }
    // Records without text first when the dimension is known, so their errors come before any embedding.
    const bool dim_known = input.dim != 0;
    if (dim_known)
        for (std::size_t i : textless) options.textless(input.records[i], input.vectors.data() + i * input.dim);
    if (!to_embed.empty()) {
        const std::unique_ptr<Embedder> embedder = options.make_embedder();
        const EmbedSettings settings{embedder->name(), 64, options.on_embed_progress, embedder->precision()};
        embed_records(input.records, to_embed, [&](const std::vector<std::string>& texts) { return embedder->embed(texts); },
                      settings, input.vectors, input.dim, options.dim_owner);
    }
    if (!dim_known)
        for (std::size_t i : textless) options.textless(input.records[i], input.vectors.data() + i * input.dim);
    return input;
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

void note_unknown_papers(const Corpus& corpus, const PaperFilter& run) {
    if (!run.papers) return;
    const UnknownPapers unknown = unknown_papers(corpus, *run.papers);
    if (unknown.count == 0) return;
    std::string first;
    for (const auto& id : unknown.first) first += (first.empty() ? "" : ", ") + quote_value(id);
    notice("--papers: " + std::to_string(unknown.count) + " of the " + std::to_string(run.papers->size()) +
           " papers listed are not in the corpus (" + first + (unknown.count > unknown.first.size() ? ", ..." : "") +
           "); they match nothing");
}

std::vector<std::shared_ptr<const RowFilter>> record_filters(const Corpus& corpus, const std::vector<QueryRecord>& records,
                                                             const PaperFilter& run) {
    note_unknown_papers(corpus, run);
    ResolveOptions options;
    options.filter = run;
    options.vectors = false;
    RecordBatch batch;
    batch.records = records;
    return RequestResolver(corpus, std::move(options)).resolve(std::move(batch)).filters;
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

QueryInput load_queries(const Corpus& corpus, const QueryFlags& flags, const std::string& what, ResolveOptions needs) {
    // The flags first, then the corpus, then the records: a bad flag is reported before any file is read.
    if (!flags.cutoff.empty()) needs.cutoff = parse_cutoff(flags.cutoff);
    needs.exclude = split_ids(flags.exclude);
    needs.filter = run_filter(flags.filter);
    if (needs.vectors) corpus.vectors();  // a corpus without vectors is refused before any query is read
    RecordBatch batch = read_record_file(flags.path, flags.vectors, corpus.manifest().dim);
    note_unknown_papers(corpus, needs.filter);
    QueryInput input = RequestResolver(corpus, std::move(needs)).resolve(std::move(batch));
    if (input.to_embed.empty()) return input;
    EmbedderFlags embedder_flags = flags.embedder;
    embedder_flags.threads = flags.threads;
    const std::unique_ptr<Embedder> embedder = embedder_for_corpus(corpus, embedder_flags);
    host::ProgressBar bar("embed " + what, what, flags.quiet);
    const EmbedSettings settings{embedder->name(), 64, [&](std::size_t done, std::size_t total) { bar.update(done, total); },
                                 embedder->precision()};
    embed_pending(input, [&](const std::vector<std::string>& texts) { return embedder->embed(texts); }, settings);
    bar.finish();
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

}  // namespace novelty::cli
