// Python code called from inside engine work (progress callbacks): the GIL taken for the call,
// Ctrl-C noticed at each call, the callback's exception carried out to the caller as itself, and
// re-entrant calls into an engine object that the reporting call holds refused (CallLock)
// instead of deadlocking.
#include "bindings.hpp"

#include "novelty/util/error.hpp"

#include <nanobind/stl/string.h>

#include <Python.h>

namespace novelty::python {

namespace {

/// While a progress callback runs: the thread of the call that reports (the one holding that
/// call's locks), so that CallLock refuses those locks on whatever thread the callback runs.
thread_local std::thread::id reporting_for{};

}  // namespace

void CallLock::lock() {
    const std::thread::id holder = owner_.load();
    const std::thread::id me = std::this_thread::get_id();
    if (holder != std::thread::id{} && (holder == me || holder == reporting_for))
        throw UsageError(what_ + " is busy with the call whose progress callback is running; a progress callback "
                         "cannot call back into it: do that after the call returns", "progress");
    mutex_.lock();
    owner_.store(me);
}

void CallLock::unlock() {
    owner_.store(std::thread::id{});
    mutex_.unlock();
}

void call_python(const std::function<void()>& call) {
    nb::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) throw nb::python_error();
    call();
}

namespace {

/// The callback's object, released with the GIL taken (the engine may drop a function on any
/// thread); null for None.
std::shared_ptr<nb::object> hold(nb::object callback) {
    if (callback.is_none()) return {};
    return std::shared_ptr<nb::object>(new nb::object(std::move(callback)), [](nb::object* o) {
        nb::gil_scoped_acquire gil;
        delete o;
    });
}

/// Calls the held callback (if any) with `args`, as progress_callback documents.
template <typename... Args>
void report(const std::shared_ptr<nb::object>& holder, std::thread::id caller, const Args&... args) {
    call_python([&] {
        if (!holder) return;
        const std::thread::id outer = reporting_for;
        reporting_for = caller;
        try {
            (*holder)(args...);
        } catch (...) {
            reporting_for = outer;
            throw;
        }
        reporting_for = outer;
    });
}

}  // namespace

ProgressFn progress_callback(nb::object callback) {
    return [holder = hold(std::move(callback)), caller = std::this_thread::get_id()](std::size_t done, std::size_t total) {
        report(holder, caller, done, total);
    };
}

StageProgressFn stage_progress_callback(nb::object callback) {
    return [holder = hold(std::move(callback)), caller = std::this_thread::get_id()](
               const std::string& stage, std::size_t done, std::size_t total) { report(holder, caller, stage, done, total); };
}

}  // namespace novelty::python
