// The pieces of the novelty._core module, each registered by its own file (module.cpp calls them).
#pragma once

#include "novelty/corpus/corpus.hpp"
#include "novelty/encoder/embedder.hpp"
#include "novelty/request/resolver.hpp"
#include "novelty/search/search.hpp"

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <functional>
#include <thread>
#include <string>
#include <vector>

namespace novelty::python {

namespace nb = nanobind;

void bind_errors(nb::module_& m);
void bind_corpus(nb::module_& m);
void bind_embedder(nb::module_& m);
void bind_index(nb::module_& m);
void bind_score(nb::module_& m);
void bind_retrieve(nb::module_& m);
void bind_eval(nb::module_& m);
void bind_claims(nb::module_& m);
void bind_records(nb::module_& m);
void bind_dedup(nb::module_& m);

/// The lock of an engine object that serves one call at a time (a Lockable, for std::lock_guard).
/// It knows which thread holds it: taking it again from that thread, or from a progress callback
/// of the call that holds it (on whatever thread the engine calls it), throws UsageError naming
/// `what` instead of waiting forever. Other threads wait for their turn.
class CallLock {
public:
    explicit CallLock(std::string what) : what_(std::move(what)) {}
    CallLock(const CallLock&) = delete;
    CallLock& operator=(const CallLock&) = delete;
    void lock();
    void unlock();

private:
    std::string what_;
    std::mutex mutex_;
    std::atomic<std::thread::id> owner_{};
};

/// An open corpus shared by the Python objects that use it (an index keeps its corpus alive). A
/// Corpus is not thread-safe (one SQLite connection): every use of its papers takes `lock`.
struct CorpusHandle {
    std::shared_ptr<const Corpus> corpus;
    std::shared_ptr<CallLock> lock = std::make_shared<CallLock>("the corpus");
};

/// Runs fn() with the GIL released and `lock` held. The GIL goes first, so a thread waiting for
/// the lock never blocks one that holds it and needs the GIL (a progress callback).
template <typename F>
auto with_lock(CallLock& lock, F&& fn) {
    nb::gil_scoped_release release;
    std::lock_guard<CallLock> guard(lock);
    return fn();
}

/// A text encoder; one call at a time (the HTTP client and the built-in encoder keep state).
struct EmbedderHandle {
    std::unique_ptr<Embedder> embedder;
    CallLock mutex{"the encoder"};
};

/// A search index over a corpus's vectors. The engine's index serves one call at a time, so
/// calls from several Python threads take turns on `mutex` (with the GIL released).
struct IndexHandle {
    std::shared_ptr<const Corpus> corpus;
    std::shared_ptr<CallLock> corpus_lock;  ///< the CorpusHandle's; taken after `mutex`
    std::unique_ptr<SearchBackend> backend;
    std::unique_ptr<SearchIndex> index;
    CallLock mutex{"the index"};
    /// Seconds the engine spent in the last search() (for measuring the binding's own cost).
    std::atomic<double> last_engine_seconds{0};
};

/// Records resolved by the request layer (novelty._core.Resolved), with the corpus they were
/// resolved against.
struct ResolvedHandle {
    std::shared_ptr<const Corpus> corpus;
    ResolvedBatch batch;
};

/// Query vectors as the engine reads them: a pointer into the caller's array when it is float32
/// and C-contiguous, else a float32 copy held in `owned`.
struct QueryMatrix {
    const float* data = nullptr;
    std::size_t n = 0;
    std::size_t dim = 0;
    std::vector<float> owned;
};

/// Any CPU array, read-only, of any dtype and strides (checked by query_matrix).
using AnyArray = nb::ndarray<nb::ro, nb::device::cpu>;

/// Views or converts a 2-D (or 1-D: one row) float32/float16 array of `dim` columns (0 = any).
/// Throws UsageError naming `parameter` for another dtype, rank or width. Counts copies in
/// query_copies() and records the pointer the engine gets in last_query_pointer().
QueryMatrix query_matrix(const AnyArray& array, std::size_t dim, const std::string& parameter);

/// The search queries of resolved records: their scopes and filters, with the vectors of `given`
/// (an array's rows, one per record) or, when null, the records' own (given, embedded or their
/// corpus papers'; UsageError when some are still to be embedded).
SearchQueries resolved_queries(const ResolvedHandle& r, const QueryMatrix* given);

/// How many query arrays had to be copied (not float32, or not C-contiguous), since the start.
std::size_t query_copies();
/// The address of the last query matrix handed to the engine.
std::uintptr_t last_query_pointer();

/// A float32 array of shape {rows, cols} owning `values` (moved in).
nb::ndarray<nb::numpy, float> float_array(std::vector<float>&& values, std::size_t rows, std::size_t cols);
/// An int64 array of shape {rows, cols} (cols 0: a 1-D array of `rows`) owning `values`.
nb::ndarray<nb::numpy, std::int64_t> int_array(std::vector<std::int64_t>&& values, std::size_t rows, std::size_t cols);

/// The progress function handed to the engine for a Python `progress(done, total)` (None: none).
/// Called from engine code on any thread, it takes the GIL, checks for a pending signal (Ctrl-C:
/// PyErr_CheckSignals, which only acts on the main thread) and calls the callback. A pending
/// KeyboardInterrupt or an exception the callback raises is thrown as nb::python_error, which
/// stops the engine's work and reaches the caller as that same Python exception. With None it
/// still checks for signals, so that Ctrl-C interrupts a long call at its next batch.
ProgressFn progress_callback(nb::object callback);

/// progress(stage, done, total), called as progress_callback's functions are.
using StageProgressFn = std::function<void(const std::string& stage, std::size_t done, std::size_t total)>;
StageProgressFn stage_progress_callback(nb::object callback);

/// Runs `call` (a Python callable) as progress_callback's functions do: the GIL taken, signals
/// checked first, re-entrant engine calls from inside it refused by CallLock.
void call_python(const std::function<void()>& call);

}  // namespace novelty::python
