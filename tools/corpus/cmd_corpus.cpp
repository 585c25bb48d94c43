// novelty corpus import | add-vectors | info (corpus add: cmd_corpus_add.cpp)
#include "cli_common.hpp"

#include "novelty/util/checksum.hpp"
#include "novelty/corpus/corpus.hpp"
#include "novelty/util/error.hpp"
#include "novelty/corpus/import.hpp"
#include "novelty/scoring/neighbor_cache.hpp"
#include "novelty_host/jobs/progress.hpp"

#include "io/json/json_parse.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <memory>

namespace novelty::cli {

namespace {

struct ImportArgs {
    std::vector<std::string> formats{"jsonl"};
    std::vector<std::string> inputs;
    std::vector<std::string> fields;
    std::string out;
    bool overwrite = false;
    bool skip_invalid = false;
    bool quiet = false;
};

// One value for every input, or one per input.
std::string per_input(const std::vector<std::string>& values, std::size_t i, const char* flag, std::size_t n_inputs) {
    if (values.empty()) return {};
    if (values.size() == 1) return values[0];
    if (values.size() != n_inputs)
        throw UsageError(std::string(flag) + " takes one value, or one per --in file (" + std::to_string(n_inputs) +
                         "), not " + std::to_string(values.size()));
    return values[i];
}

int run_import(const ImportArgs& args) {
    ImportOptions options;
    for (std::size_t i = 0; i < args.inputs.size(); ++i) {
        ImportSource source;
        source.path = args.inputs[i];
        source.format = parse_import_format(per_input(args.formats, i, "--format", args.inputs.size()));
        source.field = per_input(args.fields, i, "--field", args.inputs.size());
        options.sources.push_back(source);
    }
    options.out_dir = args.out;
    options.overwrite = args.overwrite;
    options.skip_invalid = args.skip_invalid;
    host::ProgressBar bar("import", "papers", args.quiet);
    std::size_t n_files = options.sources.size();
    std::size_t records_read = 0;  // the later stages report no count: they work on every paper read
    options.on_progress = [&](const ImportProgress& p) {
        records_read = std::max(records_read, p.records);
        if (p.stage == "reading") {
            // A pipe has no size: say how much was read instead of a percentage.
            const std::string read = p.file_bytes ? std::to_string(100 * p.bytes_read / p.file_bytes) + "% read"
                                                  : std::to_string(p.bytes_read >> 20) + " MiB read";
            const std::string note =
                "(file " + std::to_string(p.file_index + 1) + "/" + std::to_string(n_files) + ", " + read + ")";
            bar.update(p.records, 0, note);
        } else {
            bar.update(records_read, 0, "(" + p.stage + ")");
        }
    };
    options.on_skip = [&](const SkippedRecord& s) {
        if (!args.quiet) std::fprintf(stderr, "novelty: skipped %s:%zu: %s\n", s.file.c_str(), s.line, s.problem.c_str());
    };
    options.on_duplicate = [&](const SkippedRecord& s) {
        if (!args.quiet) std::fprintf(stderr, "novelty: note: %s:%zu: %s\n", s.file.c_str(), s.line, s.problem.c_str());
    };
    const ImportSummary summary = import_corpus(options);
    bar.finish();
    std::printf("imported %s papers into %s", thousands(summary.n_papers).c_str(), summary.out_dir.c_str());
    if (summary.n_skipped > 0) std::printf(" (%s skipped)", count_of(summary.n_skipped, "invalid record").c_str());
    if (summary.n_duplicates > 0)
        std::printf(" (%s dropped)", count_of(summary.n_duplicates, "identical duplicate record").c_str());
    if (summary.n_revised > 0) std::printf(" (%s)", count_of(summary.n_revised, "revised record").c_str());
    if (summary.n_deleted > 0) std::printf(" (%s)", count_of(summary.n_deleted, "deleted record").c_str());
    std::printf("\n");
    if (summary.n_unmatched_abstracts > 0)
        std::printf("passed over %s of papers not in the input\n",
                    count_of(summary.n_unmatched_abstracts, "abstract").c_str());
    if (summary.n_unmatched_citations > 0)
        std::printf("passed over %s of papers not in the corpus (or naming no cited paper)\n",
                    count_of(summary.n_unmatched_citations, "citation").c_str());
    if (summary.n_unembedded > 0)
        std::printf("left out %s given without a vector: they are not rows, so no search sees them "
                    "('novelty corpus info' names them)\n",
                    count_of(summary.n_unembedded, "paper").c_str());
    return exit_ok;
}

struct AddVectorsArgs {
    std::string dir;
    std::string vectors;
    std::string ids;
    std::string dtype;
    std::string embedder = "external";
    std::string pooling;
    std::string order = "input";
    bool quiet = false;
};

int run_add_vectors(const AddVectorsArgs& args) {
    AddVectorsOptions options;
    options.vectors_path = args.vectors;
    options.ids_path = args.ids;
    options.order = args.order == "corpus" ? VectorOrder::corpus : VectorOrder::input;
    if (args.dtype == "f32") options.dtype = DType::f32;
    else if (args.dtype == "f16") options.dtype = DType::f16;
    else if (!args.dtype.empty()) throw UsageError("--dtype must be f32 or f16, not '" + args.dtype + "'");
    options.embedder.name = args.embedder;
    options.embedder.pooling = args.pooling;
    host::ProgressBar bar("add-vectors", "rows", args.quiet);
    options.on_progress = [&](std::size_t done, std::size_t total) { bar.update(done, total); };
    add_vectors(args.dir, options);
    bar.finish();
    const CorpusManifest m = read_manifest(args.dir);
    std::printf("attached %s x %zu %s vectors to %s (embedder %s)\n", thousands(m.count).c_str(), m.dim, m.dtype.c_str(),
                args.dir.c_str(), m.embedder ? m.embedder->name.c_str() : "?");
    return exit_ok;
}

struct InfoArgs {
    std::string dir;
    bool json = false;
    bool verify = false;
};

std::string join_counts(const std::vector<NameCount>& counts, std::size_t limit) {
    std::string out;
    for (std::size_t i = 0; i < counts.size() && i < limit; ++i)
        out += (i ? ", " : "") + counts[i].name + " " + thousands(counts[i].count);
    if (counts.size() > limit) out += ", ...";
    return out.empty() ? "none" : out;
}

// The deep check of --verify: every byte of papers.sqlite and vectors.npy against the manifest's
// SHA-256, and every self-join cache against its own. Fills `verified` (file -> ok) and returns
// the files that fail.
std::vector<std::string> verify_files(const Corpus& corpus, nlohmann::json& verified, std::vector<std::string>& notes) {
    namespace fs = std::filesystem;
    const CorpusManifest& m = corpus.manifest();
    const fs::path root(corpus.dir());
    std::vector<std::string> failed;
    auto check = [&](const std::string& name, bool ok) {
        verified[name] = ok;
        if (!ok) failed.push_back(name);
    };
    check("papers.sqlite", sha256_file((root / "papers.sqlite").string()) == m.papers_sha256);
    if (!m.vectors_sha256.empty()) check("vectors.npy", sha256_file((root / "vectors.npy").string()) == m.vectors_sha256);
    std::error_code ec;
    std::vector<fs::path> caches;
    for (fs::directory_iterator it(root / "cache", ec), end; !ec && it != end; it.increment(ec))
        if (it->path().filename().string().rfind("selfjoin-", 0) == 0) caches.push_back(it->path());
    std::sort(caches.begin(), caches.end());
    for (const auto& path : caches) {
        const std::string name = "cache/" + path.filename().string();
        std::size_t q = 0, k = 0, rows = 0;
        const std::string file = path.filename().string();
        if (file.find(".tmp-") != std::string::npos) continue;  // an unfinished write: never read
        if (!file.ends_with(".bin") || std::sscanf(file.c_str(), "selfjoin-q%zu-k%zu-rows%zu.bin", &q, &k, &rows) != 3) {
            notes.push_back(name + ": not a cache file of this engine; not used");
            continue;
        }
        SelfJoin join;
        try {
            if (read_self_join(path.string(), m.vectors_sha256, rows, q, k, join)) check(name, true);
            else notes.push_back(name + ": from other vectors or an earlier format; not used (novelty index replaces it)");
        } catch (const CorpusError& e) {
            check(name, false);
            notes.push_back(e.what());
        }
    }
    return failed;
}

int run_info(const InfoArgs& args) {
    const Corpus corpus = Corpus::open(args.dir);
    const CorpusManifest& m = corpus.manifest();
    namespace fs = std::filesystem;
    nlohmann::json verified = nlohmann::json::object();
    std::vector<std::string> failed, notes;
    if (args.verify) failed = verify_files(corpus, verified, notes);
    if (args.json) {
        std::ifstream in(fs::path(args.dir) / "manifest.json");
        std::stringstream text;
        text << in.rdbuf();
        nlohmann::json j = parse_json(text.str());
        j["dir"] = args.dir;
        j["identity"] = corpus.identity();
        if (args.verify) j["verified"] = verified;
        std::printf("%s\n", j.dump(2).c_str());
    } else {
        std::printf("corpus      %s\n", args.dir.c_str());
        std::printf("papers      %s", thousands(m.count).c_str());
        if (m.n_duplicates > 0) std::printf(" (%s dropped)", count_of(m.n_duplicates, "identical duplicate record").c_str());
        if (m.n_skipped > 0) std::printf(" (%s skipped)", count_of(m.n_skipped, "invalid record").c_str());
        std::printf("\n");
        if (m.dim > 0)
            std::printf("vectors     %s x %zu %s, L2-normalised\n", thousands(m.count).c_str(), m.dim, m.dtype.c_str());
        else
            std::printf("vectors     none (attach with 'novelty corpus add-vectors')\n");
        if (m.embedder)
            std::printf("embedder    %s (dim %zu%s%s)\n", m.embedder->name.c_str(), m.embedder->dim,
                        m.embedder->pooling.empty() ? "" : (", " + m.embedder->pooling + " pooling").c_str(),
                        m.embedder->precision.empty() ? "" : (", " + m.embedder->precision).c_str());
        else
            std::printf("embedder    none\n");
        if (m.n_dated > 0)
            std::printf("dates       %s .. %s (%s dated, %s undated)\n", m.date_min.c_str(), m.date_max.c_str(),
                        thousands(m.n_dated).c_str(), thousands(m.count - m.n_dated).c_str());
        else
            std::printf("dates       none known (%s undated)\n", thousands(m.count).c_str());
        std::printf("fields      %s\n", join_counts(m.fields, 10).c_str());
        std::printf("venues      %s distinct: %s\n", thousands(m.n_venues).c_str(), join_counts(m.venues, 8).c_str());
        std::printf("citations   known for %s papers\n", thousands(m.n_with_citations).c_str());
        if (m.n_revised > 0 || m.n_deleted > 0)
            std::printf("updates     %s, %s applied\n", count_of(m.n_revised, "revision").c_str(),
                        count_of(m.n_deleted, "deletion").c_str());
        if (m.n_unembedded > 0) {
            std::string ids;
            for (const auto& id : m.unembedded) ids += (ids.empty() ? "" : ", ") + id;
            if (m.n_unembedded > m.unembedded.size()) ids += ", ...";
            std::printf("unembedded  %s given without a vector, left out of the corpus (not rows, never searched): %s\n",
                        count_of(m.n_unembedded, "paper").c_str(), ids.c_str());
        }
        for (const auto& s : m.sources)
            std::printf("source      %s (%s%s, %s%s%s, sha256 %s)\n", s.path.c_str(), s.format.c_str(),
                        s.field.empty() ? "" : (", field " + s.field).c_str(), count_of(s.records, "record").c_str(),
                        (s.skipped ? ", " + thousands(s.skipped) + " skipped" : std::string()).c_str(),
                        (s.duplicates ? ", " + thousands(s.duplicates) + " duplicates dropped" : std::string()).c_str(),
                        s.sha256.c_str());
        std::printf("checksum    papers.sqlite %s%s\n", m.papers_sha256.c_str(),
                    args.verify ? (verified["papers.sqlite"].get<bool>() ? " (verified)" : " (MISMATCH)") : "");
        if (!m.vectors_sha256.empty())
            std::printf("checksum    vectors.npy %s%s\n", m.vectors_sha256.c_str(),
                        args.verify ? (verified["vectors.npy"].get<bool>() ? " (verified)" : " (MISMATCH)") : "");
        for (const auto& [name, ok] : verified.items())
            if (name.rfind("cache/", 0) == 0)
                std::printf("checksum    %s (%s)\n", name.c_str(), ok.get<bool>() ? "verified" : "DAMAGED");
        std::printf("identity    %s\n", corpus.identity().c_str());
        std::printf("created     %s\n", m.created.c_str());
    }
    for (const auto& note : notes) std::fprintf(stderr, "novelty: note: %s\n", note.c_str());
    if (!failed.empty()) {
        std::string names;
        for (const auto& f : failed) names += (names.empty() ? "" : ", ") + f;
        std::fprintf(stderr, "novelty: error: %s: %s %s not match %s checksum%s (%s)\n", args.dir.c_str(), names.c_str(),
                     failed.size() == 1 ? "does" : "do", failed.size() == 1 ? "its" : "their", failed.size() == 1 ? "" : "s",
                     "papers.sqlite and vectors.npy against manifest.json, caches against their own");
        return exit_corpus;
    }
    return exit_ok;
}

}  // namespace

void add_corpus_add_command(CLI::App& corpus, int& exit_code);  // cmd_corpus_add.cpp

CLI::App& add_corpus_commands(CLI::App& app, int& exit_code) {
    CLI::App* corpus = app.add_subcommand("corpus", "Build and inspect corpus directories (papers, vectors, caches)");
    corpus->require_subcommand(1);

    auto import_args = std::make_shared<ImportArgs>();
    CLI::App* import = corpus->add_subcommand(
        "import", "Import paper metadata into a new corpus directory (papers.sqlite with a full-text index, manifest.json). "
                  "Rows are ordered by publication date, undated papers last, ties by id.");
    import->add_option("--in", import_args->inputs,
                       "Input files (JSON Lines or, for pubmed, XML; plain or .gz); several allowed, read in order")
        ->required()->expected(1, -1);
    import->add_option("--format", import_args->formats,
                       "Input format: jsonl (generic: id, title, abstract|text, date|year, field, venue, citations), "
                       "arxiv (metadata snapshot), openalex (works, abstract_inverted_index), paperlists, "
                       "s2 (Semantic Scholar papers, abstracts, embeddings and citations files, joined on corpusid), "
                       "pubmed (baseline and update XML, applied in order); "
                       "one for all inputs or one per --in (default jsonl)")
        ->expected(1, -1)->check(CLI::IsMember({"jsonl", "arxiv", "openalex", "paperlists", "s2", "pubmed"}));
    import->add_option("--field", import_args->fields,
                       "Research field given to every record of the inputs (one for all, or one per --in); "
                       "default: the field each record names, if any");
    import->add_option("--out", import_args->out, "Corpus directory to create (must not exist unless --overwrite)")
        ->required();
    import->add_flag("--overwrite", import_args->overwrite,
                     "Replace an existing corpus at --out (only a directory holding a corpus manifest)");
    import->add_flag("--skip-invalid", import_args->skip_invalid,
                     "Skip bad records (malformed JSON, duplicate ids, bad dates, no text), reporting each on stderr "
                     "and in the manifest, instead of stopping at the first");
    import->add_flag("-q,--quiet", import_args->quiet, "No progress or skip messages on stderr");
    import->callback([import_args, &exit_code] { exit_code = run_guarded([&] { return run_import(*import_args); }); });

    auto vector_args = std::make_shared<AddVectorsArgs>();
    CLI::App* add = corpus->add_subcommand(
        "add-vectors", "Attach one vector per paper (an N x D float32 or float16 .npy); rows are L2-normalised, and NaN, "
                       "Inf or zero rows are rejected by paper id");
    add->add_option("dir", vector_args->dir, "Corpus directory")->required();
    add->add_option("--vectors", vector_args->vectors, "N x D .npy file, little-endian float32 or float16, C order")
        ->required();
    add->add_option("--ids", vector_args->ids,
                    "Paper id of each vector row: a text file with one id per line, or .jsonl with an \"id\" per line; "
                    "default: see --order");
    add->add_option("--order", vector_args->order,
                    "Without --ids, which paper each row belongs to: input (default: row i is the i-th record of the "
                    "import's input file, as 'novelty embed' writes it; refused when the corpus cannot tell) or corpus "
                    "(row i is corpus row i, in date order)")
        ->check(CLI::IsMember({"input", "corpus"}));
    add->add_option("--dtype", vector_args->dtype, "Store as f32 or f16 (default: as the input)")
        ->check(CLI::IsMember({"f32", "f16"}));
    add->add_option("--embedder", vector_args->embedder,
                    "Name of the model that made the vectors, recorded in the manifest (default: external)");
    add->add_option("--pooling", vector_args->pooling, "Pooling of that model (mean or cls), recorded in the manifest")
        ->check(CLI::IsMember({"mean", "cls"}));
    add->add_flag("-q,--quiet", vector_args->quiet, "No progress on stderr");
    add->callback([vector_args, &exit_code] { exit_code = run_guarded([&] { return run_add_vectors(*vector_args); }); });

    auto info_args = std::make_shared<InfoArgs>();
    CLI::App* info = corpus->add_subcommand(
        "info", "Print a corpus's size, vector dimension, date range, fields, venues, embedder and checksums");
    info->add_option("dir", info_args->dir, "Corpus directory")->required();
    info->add_flag("--json", info_args->json, "Print the manifest as JSON (plus dir and identity)");
    info->add_flag("--verify", info_args->verify,
                   "Recompute the checksums of papers.sqlite and vectors.npy and compare with the manifest "
                   "(exit code 4 on a mismatch)");
    info->callback([info_args, &exit_code] { exit_code = run_guarded([&] { return run_info(*info_args); }); });
    add_corpus_add_command(*corpus, exit_code);
    return *corpus;
}

}  // namespace novelty::cli
