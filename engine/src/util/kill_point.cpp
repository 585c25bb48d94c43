#include "util/kill_point.hpp"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <unistd.h>

namespace novelty {

namespace {

struct KillPlan {
    bool active = false;
    std::string step;       // kill here ...
    long occurrence = 1;    // ... on this occurrence
    std::string trace;      // file listing reached steps
    long seen = 0;
    std::mutex mutex;
};

KillPlan& plan() {
    static KillPlan* p = [] {
        auto* made = new KillPlan;  // never destroyed: steps may run during static destruction
        if (const char* at = std::getenv("NOVELTY_KILL_AT"); at && *at) {
            made->step = at;
            const auto hash = made->step.rfind('#');
            if (hash != std::string::npos) {
                made->occurrence = std::atol(made->step.c_str() + hash + 1);
                made->step.resize(hash);
            }
            made->active = true;
        }
        if (const char* trace = std::getenv("NOVELTY_KILL_TRACE"); trace && *trace) {
            made->trace = trace;
            made->active = true;
        }
        return made;
    }();
    return *p;
}

}  // namespace

void kill_point(const std::string& step) {
    KillPlan& p = plan();
    if (!p.active) return;
    std::lock_guard lock(p.mutex);
    if (!p.trace.empty()) {
        if (std::FILE* f = std::fopen(p.trace.c_str(), "a")) {
            std::fprintf(f, "%s\n", step.c_str());
            std::fclose(f);
        }
    }
    if (step == p.step && ++p.seen == p.occurrence) {
        ::kill(::getpid(), SIGKILL);
        ::pause();
    }
}

std::string kill_step_for(const char* what, const std::string& path) {
    const auto slash = path.rfind('/');
    std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
    const auto tmp = name.find(".tmp-");
    if (tmp != std::string::npos) name.resize(tmp);
    return std::string(what) + ":" + name;
}

}  // namespace novelty
