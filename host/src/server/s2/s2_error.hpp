// An error answered in the Semantic Scholar Graph API's shape: the status it uses and
// {"error": message} (docs/api.md, "Semantic Scholar-compatible API").
#pragma once

#include "util/message_text.hpp"

#include <stdexcept>
#include <string>

namespace novelty::host::s2 {

class S2Error : public std::runtime_error {
public:
    S2Error(int status, const std::string& message) : std::runtime_error(message), status_(status) {}
    int status() const { return status_; }

private:
    int status_;
};

/// A 400 naming query parameters with values the API refuses, in its message form
/// "Unacceptable query params: [name=value]" followed by what to send instead. The name and value
/// are shown as a message shows input (clip_for_message: a NUL or control byte escaped, not
/// cutting the message short).
[[noreturn]] inline void bad_param(const std::string& name, const std::string& value, const std::string& why) {
    throw S2Error(400, "Unacceptable query params: [" + clip_for_message(name) + "=" + clip_for_message(value) + "]: " + why);
}

}  // namespace novelty::host::s2
