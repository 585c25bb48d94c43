// Notes the engine gives the user about things it did on its own (a corpus recovered after an
// interrupted import, leftovers removed). Not errors: the operation goes on.
#pragma once

#include <functional>
#include <string>

namespace novelty {

using NoticeHandler = std::function<void(const std::string& message)>;

/// Replaces the handler (the default prints "novelty: note: MESSAGE" on stderr); an empty
/// handler restores the default. Not thread-safe against concurrent notice() calls: set it once
/// at start-up.
void set_notice_handler(NoticeHandler handler);
/// Passes `message` to the handler.
void notice(const std::string& message);

}  // namespace novelty
