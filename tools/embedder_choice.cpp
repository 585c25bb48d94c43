#include "embedder_choice.hpp"

#include "cli_common.hpp"
#include "novelty/util/error.hpp"
#include "novelty/encoder/text_encoder.hpp"
#include "novelty_host/llm/http_embedder.hpp"

namespace novelty::cli {

namespace {

bool is_url(const std::string& spec) { return spec.rfind("http://", 0) == 0 || spec.rfind("https://", 0) == 0; }

}  // namespace

std::unique_ptr<Embedder> make_embedder(const EmbedderFlags& flags) {
    const std::string spec = flags.spec.empty() ? "default" : flags.spec;
    if (is_url(spec)) {
        host::HttpEmbedderOptions given;
        given.base_url = spec;
        given.model = flags.model;
        given.api_key = flags.api_key;
        return std::make_unique<host::HttpEmbedder>(host::http_embedder_options_from_env(given));
    }
    EncoderOptions options;
    options.threads = flags.threads;
    options.device = encoder_device(flags);
    options.precision = flags.precision;
    return load_builtin_encoder(spec == "default" ? default_model_dir() : spec, options);
}

std::unique_ptr<Embedder> embedder_for_corpus(const Corpus& corpus, const EmbedderFlags& flags) {
    const auto& recorded = corpus.manifest().embedder;
    if (!flags.spec.empty()) {
        auto embedder = make_embedder(flags);
        // A corpus whose vectors came with the data (the s2 embeddings files) records only the
        // model's name: an embedding server serving that model makes comparable vectors.
        if (recorded && !host::same_encoder(recorded->name, embedder->name()))
            throw UsageError("the corpus " + corpus.dir() + " was embedded with '" + recorded->name +
                             "', but queries would be embedded with '" + embedder->name() +
                             "'; their vectors would not be comparable");
        return embedder;
    }
    if (!recorded) throw UsageError("the corpus " + corpus.dir() + " records no embedder; give --embedder");
    EmbedderFlags from_corpus = flags;
    const std::string& name = recorded->name;
    if (name == "all-MiniLM-L6-v2") {
        from_corpus.spec = "default";
    } else if (is_url(name)) {
        const auto hash = name.rfind('#');
        from_corpus.spec = name.substr(0, hash);
        if (from_corpus.model.empty() && hash != std::string::npos) from_corpus.model = name.substr(hash + 1);
    } else {
        throw UsageError("the corpus " + corpus.dir() + " was embedded with '" + name +
                         "'; give --embedder with that model's directory (or --embedder URL --embed-model " + name +
                         " for an embedding server running it) to embed text queries, or give each query's vector "
                         "made by that model with --vectors FILE.npy (row i = line i)");
    }
    return embedder_for_corpus(corpus, from_corpus);
}

std::string encoder_device(const EmbedderFlags& flags) {
    if (flags.shared_device != nullptr && flags.shared_device->count() > 0) return flags.shared_device->as<std::string>();
    return flags.device;
}

void add_embedder_flags(CLI::App& command, EmbedderFlags& flags) {
    if (const CLI::Option* existing = command.get_option_no_throw("--device")) {
        flags.shared_device = existing;
    } else {
        command.add_option("--device", flags.device,
                           "Where the built-in encoder runs: auto (default: CUDA when compiled in and a GPU is "
                           "present), cpu, cuda or cuda-emulated (the CUDA encoder on an emulated device, for "
                           "testing)")
            ->check(CLI::IsMember({"auto", "cpu", "cuda", "cuda-emulated"}));
    }
    command.add_option("--embedder", flags.spec,
                       "Text encoder: 'default' (the built-in all-MiniLM-L6-v2), a model directory (BERT-family, "
                       "sentence-transformers layout), or the base URL of an OpenAI-compatible server "
                       "(http://host:port/v1)");
    command.add_option("--embed-model", flags.model,
                       "Model name sent to an embedding server (default: $NOVELTY_EMBED_MODEL)");
    command.add_option("--precision", flags.precision,
                       "Arithmetic of the built-in CPU encoder's linear layers: auto (default: the fastest that "
                       "meets the accuracy bar on this CPU, never slower than f32: measured once per CPU and thread count "
                       "and cached, `novelty info` says what it chose and why), f32 (the reference), "
                       "bf16 (bf16 weights and activations, float32 sums, by AVX512-BF16 where the CPU has it) or "
                       "int8 (int8 query, key, attention-output and first feed-forward layers, bf16 for the rest, "
                       "by AVX512-VNNI where the CPU has it); elsewhere bf16 and int8 give the same vectors, no "
                       "faster (docs/encoder.md)")
        ->check(CLI::IsMember({"auto", "f32", "bf16", "int8"}));
    command.add_option("--embed-key", flags.api_key,
                       "API key for an embedding server (default: $NOVELTY_EMBED_API_KEY, else $OPENAI_API_KEY)");
}

}  // namespace novelty::cli
