// novelty._core.ClaimsChecker: the ClaimNov check (docs/claimnov.md) through the host layer's
// ClaimsService, the code path of `novelty claims` and POST /v1/claims, so the records are theirs.
#include "bindings.hpp"

#include "novelty/util/error.hpp"
#include "novelty_host/claimnov/claims_service.hpp"

#include <nanobind/stl/string.h>

namespace novelty::python {

namespace {

struct ClaimsHandle {
    std::unique_ptr<host::ClaimsService> service;
    CallLock mutex{"the claims checker"};
};

struct ClaimsConfig {
    std::string llm, llm_model, llm_key, judge, judge_model, response_cache, claims_cache, weights;
    std::size_t concurrency = 8, window = 64;
    double timeout_seconds = 120, alpha = 0.5, threshold = 0.5;
    int retries = 5, max_tokens = 0;
};

ClaimsHandle* make_checker(const std::string& corpus_dir, EmbedderHandle& embedder, const ClaimsConfig& c) {
    host::ClaimsServiceOptions options;
    options.corpus_dir = corpus_dir;
    options.llm.llm = c.llm;
    options.llm.llm_model = c.llm_model;
    options.llm.llm_key = c.llm_key;
    options.llm.judge = c.judge;
    options.llm.judge_model = c.judge_model;
    options.llm.concurrency = c.concurrency;
    options.llm.concurrency_given = true;
    options.llm.timeout_seconds = c.timeout_seconds;
    options.llm.retries = c.retries;
    options.llm.max_tokens = c.max_tokens;
    options.llm.response_cache = c.response_cache;
    options.claims_cache = c.claims_cache;
    options.window = c.window;
    options.method.alpha = c.alpha;
    options.method.weights = c.weights;
    options.method.threshold = c.threshold;
    options.max_proposals = static_cast<std::size_t>(-1);
    options.max_text_bytes = static_cast<std::size_t>(-1);
    std::unique_ptr<Embedder> owned;
    {
        std::lock_guard<CallLock> lock(embedder.mutex);
        owned = std::move(embedder.embedder);
    }
    if (!owned) throw UsageError("the embedder was already given to another checker", "embedder");
    auto* h = new ClaimsHandle;
    try {
        nb::gil_scoped_release release;
        h->service = std::make_unique<host::ClaimsService>(options, std::move(owned));
    } catch (...) {
        delete h;
        throw;
    }
    return h;
}

/// Runs one request body ({"proposals": [...], "cutoff"?, "exclude"?, "pool"?, "judge"?}); returns
/// the job's JSON result. progress(stage, done, total) is called as progress_callback's are (the
/// GIL taken, Ctrl-C noticed, its exception carried out as itself).
std::string check(ClaimsHandle& h, const std::string& body, nb::object progress) {
    host::JobProgressFn on_progress = stage_progress_callback(std::move(progress));
    std::string result;
    {
        nb::gil_scoped_release release;
        std::lock_guard<CallLock> lock(h.mutex);
        auto job = h.service->make_job(body);
        result = job(on_progress);
    }
    return result;
}

}  // namespace

void bind_claims(nb::module_& m) {
    nb::class_<ClaimsHandle>(m, "ClaimsChecker", "The ClaimNov check over a corpus (one run at a time).")
        .def_static("make", [](const std::string& corpus_dir, EmbedderHandle& embedder, const std::string& llm,
                               const std::string& llm_model, const std::string& llm_key, const std::string& judge,
                               const std::string& judge_model, std::size_t concurrency, double timeout_seconds,
                               int retries, int max_tokens, const std::string& response_cache,
                               const std::string& claims_cache, std::size_t window, double alpha,
                               const std::string& weights, double threshold) {
            ClaimsConfig c{llm, llm_model, llm_key, judge, judge_model, response_cache, claims_cache, weights,
                           concurrency, window, timeout_seconds, alpha, threshold, retries, max_tokens};
            return make_checker(corpus_dir, embedder, c);
        }, nb::arg("corpus_dir"), nb::arg("embedder"), nb::arg("llm"), nb::arg("llm_model"), nb::arg("llm_key"),
           nb::arg("judge"), nb::arg("judge_model"), nb::arg("concurrency"), nb::arg("timeout_seconds"),
           nb::arg("retries"), nb::arg("max_tokens"), nb::arg("response_cache"), nb::arg("claims_cache"),
           nb::arg("window"), nb::arg("alpha"), nb::arg("weights"), nb::arg("threshold"),
           "Takes the embedder's encoder (it embeds claims; it must be the corpus's).")
        .def_prop_ro("approximate", [](const ClaimsHandle& h) { return h.service->approximate(); })
        .def_prop_ro("stages", [](const ClaimsHandle& h) { return h.service->describe(); })
        .def("check", &check, nb::arg("body"), nb::arg("progress") = nb::none(),
             "Runs a POST /v1/claims body; returns the job's result as JSON text.");
}

}  // namespace novelty::python
