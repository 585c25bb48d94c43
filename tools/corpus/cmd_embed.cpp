// novelty embed (records -> .npy) and novelty corpus embed (every paper of a corpus).
#include "cli_common.hpp"
#include "embedder_choice.hpp"

#include "util/message_text.hpp"
#include "novelty/corpus/corpus_embed.hpp"
#include "novelty/util/error.hpp"
#include "novelty/io/npy.hpp"
#include "novelty/request/query_records.hpp"
#include "novelty_host/jobs/progress.hpp"

#include <cstdio>
#include <memory>

namespace novelty::cli {

namespace {

struct EmbedArgs {
    std::string in;
    std::string out;
    std::string dtype = "f32";
    std::size_t batch = 64;
    EmbedderFlags embedder;
    bool quiet = false;
};

int run_embed(const EmbedArgs& args) {
    refuse_output_over_inputs("--out", args.out, {args.in});
    const std::vector<QueryRecord> records = read_query_records(args.in);
    for (const auto& r : records)
        if (!r.has_text()) throw InputError(args.in, r.line, "record " + quote_value(r.id) + " has no title or text to embed");
    auto embedder = make_embedder(args.embedder);
    std::unique_ptr<NpyWriter> writer;
    host::ProgressBar bar("embed", "records", args.quiet);
    std::vector<std::string> texts;
    for (std::size_t begin = 0; begin < records.size(); begin += args.batch) {
        const std::size_t end = std::min(records.size(), begin + args.batch);
        texts.clear();
        for (std::size_t i = begin; i < end; ++i) texts.push_back(embedding_text(records[i].title, records[i].text));
        const std::vector<float> vectors = embedder->embed(texts);
        const std::size_t dim = vectors.size() / texts.size();
        if (!writer) writer = std::make_unique<NpyWriter>(args.out, args.dtype == "f16" ? DType::f16 : DType::f32, dim);
        writer->append_f32(vectors.data(), texts.size());
        bar.update(end, records.size());
    }
    writer->finish();
    bar.finish();
    std::fprintf(stderr, "novelty: wrote %s x %zu to %s (embedder %s; row i is line i's record)\n",
                 thousands(records.size()).c_str(), writer->cols(), args.out.c_str(), embedder->name().c_str());
    return exit_ok;
}

struct CorpusEmbedArgs {
    std::string dir;
    std::size_t batch = 256;
    bool resume = false;
    std::string dtype = "f32";
    EmbedderFlags embedder;
    bool quiet = false;
};

int run_corpus_embed(const CorpusEmbedArgs& args) {
    auto embedder = make_embedder(args.embedder);
    EmbedCorpusOptions options;
    options.batch = args.batch;
    options.resume = args.resume;
    options.dtype = args.dtype == "f16" ? DType::f16 : DType::f32;
    host::ProgressBar bar("embed", "papers", args.quiet);
    options.on_progress = [&](std::size_t done, std::size_t total) { bar.update(done, total); };
    const std::size_t embedded = embed_corpus(args.dir, *embedder, options);
    bar.finish();
    std::printf("embedded %s with %s (dim %zu, %s pooling); vectors attached to %s\n",
                count_of(embedded, "paper").c_str(), embedder->name().c_str(), embedder->dim(),
                embedder->pooling().empty() ? "unknown" : embedder->pooling().c_str(), args.dir.c_str());
    return exit_ok;
}

}  // namespace

void add_embed_commands(CLI::App& app, CLI::App& corpus, int& exit_code) {
    auto embed_args = std::make_shared<EmbedArgs>();
    CLI::App* embed = app.add_subcommand(
        "embed", "Embed JSON Lines records (\"title\" and \"text\"/\"abstract\", joined as papers are) into an N x D .npy, "
                 "one row per line");
    embed->add_option("--in", embed_args->in, "JSON Lines records with an \"id\" and text")->required();
    embed->add_option("--out", embed_args->out, "Output .npy (written atomically)")->required();
    embed->add_option("--dtype", embed_args->dtype, "f32 (default) or f16")->check(CLI::IsMember({"f32", "f16"}));
    embed->add_option("--batch", embed_args->batch, "Records per call to the encoder (default 64)")
        ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 20));
    add_embedder_flags(*embed, embed_args->embedder);
    embed->add_option("--threads", embed_args->embedder.threads, "Encoder threads (default: all cores)")
        ->check(CLI::NonNegativeNumber);
    embed->add_flag("-q,--quiet", embed_args->quiet, "No progress on stderr");
    embed->callback([embed_args, &exit_code] { exit_code = run_guarded([&] { return run_embed(*embed_args); }); });

    auto corpus_args = std::make_shared<CorpusEmbedArgs>();
    CLI::App* corpus_embed = corpus.add_subcommand(
        "embed", "Embed every paper (title, a blank line, abstract) with the chosen encoder and attach the vectors; "
                 "finished batches are saved, so an interrupted run continues with --resume");
    corpus_embed->add_option("dir", corpus_args->dir, "Corpus directory")->required();
    add_embedder_flags(*corpus_embed, corpus_args->embedder);
    corpus_embed->add_option("--batch", corpus_args->batch, "Papers per call to the encoder and per saved step (default 256)")
        ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 20));
    corpus_embed->add_flag("--resume", corpus_args->resume, "Continue an interrupted run (same encoder, same papers)");
    corpus_embed->add_option("--dtype", corpus_args->dtype, "Store vectors as f32 (default) or f16")
        ->check(CLI::IsMember({"f32", "f16"}));
    corpus_embed->add_option("--threads", corpus_args->embedder.threads, "Encoder threads (default: all cores)")
        ->check(CLI::NonNegativeNumber);
    corpus_embed->add_flag("-q,--quiet", corpus_args->quiet, "No progress on stderr");
    corpus_embed->callback([corpus_args, &exit_code] { exit_code = run_guarded([&] { return run_corpus_embed(*corpus_args); }); });
}

}  // namespace novelty::cli
