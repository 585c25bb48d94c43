// novelty dedup: near-duplicate clusters of ideas (connected components over the pairs at or
// above a cosine threshold), a representative per cluster, and each idea's match in an archive
// of earlier ideas or a corpus (docs/dedup.md).
#include "cli_common.hpp"
#include "device_choice.hpp"
#include "embedder_choice.hpp"
#include "query_input.hpp"

#include "novelty/util/atomic_file.hpp"
#include "novelty/corpus/corpus.hpp"
#include "novelty/scoring/dedup.hpp"
#include "novelty/util/error.hpp"
#include "novelty_host/jobs/progress.hpp"
#include "novelty_host/llm/shared_embedder.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>

namespace novelty::cli {

namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

struct DedupArgs {
    QueryFlags ideas;
    std::string against;
    std::string against_vectors;
    double threshold = 0.8;
    std::string representative = "central";
    std::size_t first_k = 32;
    std::string out;
    DeviceFlags device;
};

/// The archive: a corpus's vectors (with its ids) or an ideas file's.
struct Archive {
    std::optional<Corpus> corpus;
    IdeaVectors ideas;  ///< when the archive is a JSON Lines file; vectors normalised
    std::string id(std::int64_t row) const {
        return corpus ? corpus->id_and_title(static_cast<std::size_t>(row)).first : ideas.records[row].id;
    }
    VectorView view() const {
        return corpus ? VectorView::of(corpus->vectors()) : VectorView::of(ideas.vectors, ideas.dim);
    }
};

void normalise_rows(std::vector<float>& v, std::size_t dim) {
    for (std::size_t r = 0; dim > 0 && r < v.size() / dim; ++r) {
        double sum = 0;
        for (std::size_t c = 0; c < dim; ++c) sum += double(v[r * dim + c]) * v[r * dim + c];
        const double inv = sum > 0 ? 1.0 / std::sqrt(sum) : 0.0;
        for (std::size_t c = 0; c < dim; ++c) v[r * dim + c] = static_cast<float>(v[r * dim + c] * inv);
    }
}

// The ideas (records without text and without a --vectors row are kept, inactive) and the
// archive, embedded with one encoder: the corpus's when the archive is a corpus, else --embedder
// (the built-in one by default).
IdeaVectors load_inputs(const DedupArgs& args, Archive& archive, std::vector<char>& active) {
    std::function<std::unique_ptr<Embedder>()> shared;
    EmbedderFlags embedder_flags = args.ideas.embedder;
    embedder_flags.threads = args.ideas.threads;
    if (!args.against.empty() && fs::is_directory(args.against)) archive.corpus.emplace(Corpus::open(args.against));
    auto make = [&]() -> std::unique_ptr<Embedder> {
        if (!shared)
            shared = host::share_embedder(archive.corpus ? embedder_for_corpus(*archive.corpus, embedder_flags)
                                                         : make_embedder(embedder_flags));
        return shared();
    };
    IdeaVectorsOptions options;
    options.path = args.ideas.path;
    options.vectors_path = args.ideas.vectors;
    if (archive.corpus) options.dim = archive.corpus->manifest().dim;
    options.make_embedder = make;
    options.textless = [](const QueryRecord&, float*) {};  // stays zero; marked inactive below
    host::ProgressBar bar("embed ideas", "ideas", args.ideas.quiet);
    options.on_embed_progress = [&](std::size_t done, std::size_t total) { bar.update(done, total); };
    IdeaVectors ideas = load_idea_vectors(options);
    bar.finish();
    active.assign(ideas.records.size(), 1);
    if (!ideas.from_npy && args.ideas.vectors.empty())
        for (std::size_t i = 0; i < ideas.records.size(); ++i) active[i] = ideas.records[i].has_text();
    if (args.against.empty() || archive.corpus) {
        if (!args.against_vectors.empty()) throw UsageError("--against-vectors goes with an --against .jsonl file");
        return ideas;
    }
    IdeaVectorsOptions archive_options = options;
    archive_options.path = args.against;
    archive_options.vectors_path = args.against_vectors;
    archive_options.dim = ideas.dim;
    archive_options.dim_owner = "the ideas file";
    archive_options.textless = {};
    host::ProgressBar archive_bar("embed archive", "ideas", args.ideas.quiet);
    archive_options.on_embed_progress = [&](std::size_t done, std::size_t total) { archive_bar.update(done, total); };
    archive.ideas = load_idea_vectors(archive_options);
    archive_bar.finish();
    normalise_rows(archive.ideas.vectors, archive.ideas.dim);
    return ideas;
}

ordered_json cluster_json(const IdeaVectors& ideas, const DedupResult& result, const std::vector<char>& active,
                          const std::vector<ArchiveMatch>& matches, const Archive& archive,
                          const std::vector<std::size_t>& members, std::size_t c) {
    ordered_json record;
    record["cluster"] = c;
    record["representative"] = ideas.records[result.representative[c]].id;
    record["size"] = members.size();
    ordered_json list = ordered_json::array();
    for (std::size_t i : members) {
        ordered_json m;
        m["id"] = ideas.records[i].id;
        m["line"] = ideas.records[i].line;
        m["sim"] = result.sim_to_representative[i];
        m["mean_sim"] = std::isnan(result.mean_sim[i]) ? ordered_json(nullptr) : ordered_json(result.mean_sim[i]);
        if (!active[i]) m["empty"] = true;
        if (!matches.empty())
            m["archive"] = matches[i].row < 0 ? ordered_json(nullptr)
                                              : ordered_json{{"id", archive.id(matches[i].row)}, {"sim", matches[i].sim}};
        list.push_back(std::move(m));
    }
    record["members"] = std::move(list);
    return record;
}

Representative parse_representative(const std::string& text) {
    if (text == "central") return Representative::central;
    if (text == "first") return Representative::first;
    throw UsageError("--representative must be central or first, not '" + text + "'");
}

int run_dedup(const DedupArgs& args) {
    if (!(args.threshold >= -1 && args.threshold <= 1)) throw UsageError("--threshold must be in [-1, 1]");
    Archive archive;
    std::vector<char> active;
    const IdeaVectors ideas = load_inputs(args, archive, active);
    const std::size_t n = ideas.records.size();
    auto backend = make_search_backend(args.device, args.ideas.threads, args.ideas.quiet);
    DedupOptions options;
    options.threshold = static_cast<float>(args.threshold);
    options.representative = parse_representative(args.representative);
    options.first_k = args.first_k;
    host::ProgressBar bar("dedup", "blocks", args.ideas.quiet);
    options.progress = [&](std::size_t done, std::size_t total) { bar.update(done, total); };
    const auto start = std::chrono::steady_clock::now();
    const DedupResult result = dedup_ideas(*backend, ideas.vectors.data(), n, ideas.dim, active, options);
    bar.finish();
    std::vector<ArchiveMatch> matches;
    if (!args.against.empty()) {
        if (archive.corpus && archive.corpus->size() == 0) throw CorpusError(args.against + ": the corpus is empty");
        matches = match_archive(*backend, archive.view(), ideas.vectors.data(), n, ideas.dim, active, options.threshold);
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

    std::vector<std::vector<std::size_t>> members(result.representative.size());
    for (std::size_t i = 0; i < n; ++i) members[result.cluster[i]].push_back(i);
    std::unique_ptr<AtomicFile> out;
    if (!args.out.empty()) out = std::make_unique<AtomicFile>(args.out);
    std::string text;
    std::size_t duplicates = 0, repeats = 0;
    for (std::size_t c = 0; c < members.size(); ++c) {
        duplicates += members[c].size() - 1;
        text += cluster_json(ideas, result, active, matches, archive, members[c], c).dump() + "\n";
        if (text.size() > (1u << 20) || c + 1 == members.size()) {
            if (out) out->write(text.data(), text.size());
            else std::fputs(text.c_str(), stdout);
            text.clear();
        }
    }
    for (const auto& m : matches) repeats += m.row >= 0;
    if (out) out->commit();
    if (!args.ideas.quiet)
        std::fprintf(stderr, "novelty: %s in %s (%s duplicates of another) in %.1fs%s%s\n", count_of(n, "idea").c_str(),
                     count_of(members.size(), "cluster").c_str(), thousands(duplicates).c_str(), seconds,
                     matches.empty() ? "" : (", " + thousands(repeats) + " repeat an archived one").c_str(),
                     out ? (" into " + args.out).c_str() : "");
    return exit_ok;
}

}  // namespace

void add_dedup_command(CLI::App& app, int& exit_code) {
    auto a = std::make_shared<DedupArgs>();
    CLI::App* cmd = app.add_subcommand(
        "dedup", "Group near-duplicate ideas: clusters are the connected components of the pairs whose cosine similarity "
                 "is at or above --threshold, each with a representative; with --against, ideas that repeat an "
                 "archived idea or a corpus paper are marked with the match");
    cmd->add_option("--ideas", a->ideas.path,
                    "Ideas: .jsonl with \"id\" and \"title\"/\"text\" (a record without text is kept as its own "
                    "cluster, marked empty), or an N x D .npy")
        ->required();
    cmd->add_option("--vectors", a->ideas.vectors, "N x D .npy with the vector of each idea (row i = line i)");
    cmd->add_option("--against", a->against,
                    "Earlier ideas: a .jsonl of ideas (embedded like --ideas) or a corpus directory (its vectors; the "
                    "ideas are then embedded with the corpus's encoder)");
    cmd->add_option("--against-vectors", a->against_vectors, "N x D .npy with the vector of each --against .jsonl line");
    cmd->add_option("--threshold", a->threshold, "Cosine similarity at or above which two ideas are linked (default 0.8)")
        ->check(non_empty_value());
    cmd->add_option("--representative", a->representative,
                    "central (default: the highest mean similarity to the other members, ties to the earlier idea) or "
                    "first (the earliest idea)")
        ->check(CLI::IsMember({"central", "first"}));
    cmd->add_option("--first-k", a->first_k,
                    "Neighbours per idea in the first pass (default 32); more are searched where needed, so the "
                    "clusters do not depend on it")
        ->check(CLI::Range(std::size_t{1}, SearchBackend::max_k));
    cmd->add_option("--out", a->out, "Output JSON Lines, one record per cluster (written atomically); default: stdout");
    cmd->add_option("--threads", a->ideas.threads, "Worker threads (default: all cores)");
    add_device_flags(cmd, a->device);
    add_embedder_flags(*cmd, a->ideas.embedder);
    cmd->add_flag("-q,--quiet", a->ideas.quiet, "No progress or summary on stderr");
    cmd->callback([a, &exit_code] { exit_code = run_guarded([&] { return run_dedup(*a); }); });
}

}  // namespace novelty::cli
