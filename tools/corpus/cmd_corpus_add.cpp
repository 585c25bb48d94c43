// novelty corpus add DIR --in FILE... --format F: papers added to an existing corpus, their
// vectors attached or embedded, the density caches updated.
#include "cli_common.hpp"
#include "embedder_choice.hpp"

#include "novelty/corpus/corpus.hpp"
#include "novelty/corpus/corpus_add.hpp"
#include "novelty/util/error.hpp"
#include "novelty_host/jobs/progress.hpp"

#include <cstdio>
#include <memory>

namespace novelty::cli {

namespace {

struct CorpusAddArgs {
    std::string dir;
    std::vector<std::string> inputs;
    std::vector<std::string> formats{"jsonl"};
    std::vector<std::string> fields;
    bool skip_invalid = false;
    bool quiet = false;
    EmbedderFlags embedder;
};

std::string one_or_each(const std::vector<std::string>& values, std::size_t i, const char* flag, std::size_t n) {
    if (values.empty()) return {};
    if (values.size() == 1) return values[0];
    if (values.size() != n)
        throw UsageError(std::string(flag) + " takes one value, or one per --in file (" + std::to_string(n) + "), not " +
                         std::to_string(values.size()));
    return values[i];
}

void print_summary(const AddPapersSummary& s, const std::string& dir) {
    std::printf("added %s to %s (%s removed: deleted or replaced; %s now)\n", count_of(s.n_added, "row").c_str(),
                dir.c_str(), thousands(s.n_removed).c_str(), count_of(s.n_papers, "paper").c_str());
    if (s.n_added == 0 && s.n_removed == 0 && !s.rebuilt)
        std::printf("nothing changed: every record given is already in the corpus as given\n");
    if (s.n_vectors_replaced > 0)
        std::printf("replaced the vectors of %s (s2 embeddings given for papers of the corpus; each counts as "
                    "replaced)\n", count_of(s.n_vectors_replaced, "paper").c_str());
    if (s.n_vectors_kept > 0)
        std::printf("%s kept their vectors (s2 papers records given without a new vector)\n",
                    count_of(s.n_vectors_kept, "revised paper").c_str());
    if (s.first_renumbered_row)
        std::printf("rows from %zu on were renumbered (papers keep their ids; row numbers in earlier outputs no "
                    "longer apply from there)\n", *s.first_renumbered_row);
    if (s.rebuilt)
        std::printf("papers.sqlite rebuilt from every paper in %.2f s (a corpus of an older layout, or s2 abstracts or "
                    "vectors given for old papers without their records)\n", s.papers_seconds);
    else
        std::printf("papers.sqlite updated in %.2f s (only the new papers written and indexed)\n", s.papers_seconds);
    if (s.n_embedded > 0) std::printf("embedded %s\n", count_of(s.n_embedded, "new paper").c_str());
    for (const auto& c : s.caches_updated)
        std::printf("cache %s updated: %s searched again, %s gained a new neighbour\n", c.c_str(),
                    count_of(s.rows_searched, "row").c_str(), count_of(s.rows_entered, "old row").c_str());
    if (s.density_lists_kept + s.density_lists_dropped > 0)
        std::printf("density store: %s carried over, %s dropped (computed again when an idea needs them)\n",
                    count_of(s.density_lists_kept, "list").c_str(), count_of(s.density_lists_dropped, "list").c_str());
    if (!s.caches_updated.empty()) std::printf("caches updated in %.2f s\n", s.cache_seconds);
    for (const auto& c : s.caches_dropped)
        std::printf("cache %s dropped (a row prefix or another backend's): 'novelty index' computes it again\n",
                    c.c_str());
}

int run_corpus_add(const CorpusAddArgs& args) {
    AddPapersOptions options;
    for (std::size_t i = 0; i < args.inputs.size(); ++i)
        options.sources.push_back({args.inputs[i],
                                   parse_import_format(one_or_each(args.formats, i, "--format", args.inputs.size())),
                                   one_or_each(args.fields, i, "--field", args.inputs.size())});
    options.skip_invalid = args.skip_invalid;
    options.make_embedder = [&] {
        const Corpus corpus = Corpus::open(args.dir, Corpus::Part::papers);
        return embedder_for_corpus(corpus, args.embedder);
    };
    host::ProgressBar bar("corpus add", "papers", args.quiet);
    options.on_progress = [&](const ImportProgress& p) { bar.update(p.records, 0, "(" + p.stage + ")"); };
    options.on_skip = [&](const SkippedRecord& s) {
        if (!args.quiet) std::fprintf(stderr, "novelty: skipped %s:%zu: %s\n", s.file.c_str(), s.line, s.problem.c_str());
    };
    options.on_duplicate = [&](const SkippedRecord& s) {
        if (!args.quiet) std::fprintf(stderr, "novelty: note: %s:%zu: %s\n", s.file.c_str(), s.line, s.problem.c_str());
    };
    const AddPapersSummary summary = add_papers(args.dir, options);
    bar.finish();
    print_summary(summary, args.dir);
    return exit_ok;
}

}  // namespace

void add_corpus_add_command(CLI::App& corpus, int& exit_code) {
    auto args = std::make_shared<CorpusAddArgs>();
    CLI::App* cmd = corpus.add_subcommand(
        "add", "Add papers to an existing corpus: rows stay in date order, new papers get vectors (from s2 embeddings "
               "files or the corpus's embedder), and the neighbour-density caches are updated, not recomputed; "
               "a record with an id already in the corpus replaces that paper, a PubMed DeleteCitation removes one");
    cmd->add_option("dir", args->dir, "Corpus directory")->required();
    cmd->add_option("--in", args->inputs, "Input files, read in order after the corpus's own papers")
        ->required()->expected(1, -1);
    cmd->add_option("--format", args->formats, "Input format, as for 'corpus import' (one for all, or one per --in)")
        ->expected(1, -1)->check(CLI::IsMember({"jsonl", "arxiv", "openalex", "paperlists", "s2", "pubmed"}));
    cmd->add_option("--field", args->fields, "Research field given to every record of the inputs, as for 'corpus import'");
    cmd->add_flag("--skip-invalid", args->skip_invalid, "Skip bad records, reporting each, instead of stopping");
    add_embedder_flags(*cmd, args->embedder);
    cmd->add_flag("-q,--quiet", args->quiet, "No progress or skip messages on stderr");
    cmd->callback([args, &exit_code] { exit_code = run_guarded([&] { return run_corpus_add(*args); }); });
}

}  // namespace novelty::cli
