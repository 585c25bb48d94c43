// novelty._core.Embedder: the built-in BERT encoder or an OpenAI-compatible embedding server.
#include "bindings.hpp"

#include "novelty/encoder/text_encoder.hpp"
#include "novelty/util/error.hpp"
#include "novelty_host/llm/http_embedder.hpp"

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

namespace novelty::python {

namespace {

/// The built-in encoder under another name: the model the PyPI package installs lives in a
/// directory called "model", but corpora record it as all-MiniLM-L6-v2.
class RenamedEmbedder : public Embedder {
public:
    RenamedEmbedder(std::unique_ptr<Embedder> inner, std::string name) : inner_(std::move(inner)), name_(std::move(name)) {}
    std::string name() const override { return name_; }
    std::size_t dim() const override { return inner_->dim(); }
    std::string pooling() const override { return inner_->pooling(); }
    std::string device() const override { return inner_->device(); }
    std::string precision() const override { return inner_->precision(); }
    std::vector<float> embed(const std::vector<std::string>& texts) override { return inner_->embed(texts); }

private:
    std::unique_ptr<Embedder> inner_;
    std::string name_;
};

EmbedderHandle* builtin(const std::string& model_dir, const std::string& name, std::size_t threads,
                        const std::string& precision) {
    EncoderOptions options;
    options.threads = threads;
    options.precision = precision;
    std::unique_ptr<Embedder> e;
    {
        nb::gil_scoped_release release;
        e = load_builtin_encoder(model_dir, options);
    }
    if (!name.empty() && name != e->name()) e = std::make_unique<RenamedEmbedder>(std::move(e), name);
    auto* h = new EmbedderHandle;
    h->embedder = std::move(e);
    return h;
}

EmbedderHandle* http(const std::string& base_url, const std::string& model, const std::string& api_key) {
    host::HttpEmbedderOptions given;
    given.base_url = base_url;
    given.model = model;
    given.api_key = api_key;
    auto* h = new EmbedderHandle;
    h->embedder = std::make_unique<host::HttpEmbedder>(host::http_embedder_options_from_env(given));
    return h;
}

nb::ndarray<nb::numpy, float> embed(EmbedderHandle& h, const std::vector<std::string>& texts) {
    std::vector<float> values;
    std::size_t dim = 0;
    {
        nb::gil_scoped_release release;
        std::lock_guard<CallLock> lock(h.mutex);
        if (!texts.empty()) values = h.embedder->embed(texts);
        dim = texts.empty() ? h.embedder->dim() : values.size() / texts.size();
    }
    return float_array(std::move(values), texts.size(), dim);
}

}  // namespace

void bind_embedder(nb::module_& m) {
    nb::class_<EmbedderHandle>(m, "Embedder", "A text encoder: texts in, L2-normalised float32 vectors out.")
        .def_static("builtin", &builtin, nb::arg("model_dir"), nb::arg("name") = "", nb::arg("threads") = 0,
                    nb::arg("precision") = "auto",
                    "The built-in encoder from a sentence-transformers model directory; precision: auto, f32, "
                    "bf16 or int8 (the CPU encoder's linear layers).")
        .def_static("http", &http, nb::arg("base_url"), nb::arg("model") = "", nb::arg("api_key") = "",
                    "An OpenAI-compatible /v1/embeddings server (model and key default to the environment).")
        .def_prop_ro("name", [](const EmbedderHandle& h) { return h.embedder->name(); })
        .def_prop_ro("dim", [](const EmbedderHandle& h) { return h.embedder->dim(); })
        .def_prop_ro("pooling", [](const EmbedderHandle& h) { return h.embedder->pooling(); })
        .def_prop_ro("device", [](const EmbedderHandle& h) { return h.embedder->device(); })
        .def_prop_ro("precision", [](const EmbedderHandle& h) { return h.embedder->precision(); })
        .def("embed", &embed, nb::arg("texts"),
             "Embeds each text: a float32 array of len(texts) x dim, each row L2-normalised.");
    m.def("embedding_text", &embedding_text, nb::arg("title"), nb::arg("text"),
          "The text embedded for a record: title, a blank line, text (trimmed; one of them when the other is empty).");
}

}  // namespace novelty::python
