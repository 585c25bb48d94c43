#include "util/notices.hpp"

#include <cstdio>

namespace novelty {

namespace {
NoticeHandler& handler() {
    static NoticeHandler h;
    return h;
}
}  // namespace

void set_notice_handler(NoticeHandler h) { handler() = std::move(h); }

void notice(const std::string& message) {
    if (handler()) handler()(message);
    else std::fprintf(stderr, "novelty: note: %s\n", message.c_str());
}

}  // namespace novelty
