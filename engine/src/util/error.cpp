#include "novelty/util/error.hpp"

#include <string_view>
#include <utility>

namespace novelty {

namespace {
std::string locate(const std::string& file, std::size_t line, const std::string& problem) {
    std::string message;
    message.append(file.empty() ? std::string_view("<input>") : std::string_view(file));
    if (line > 0) message.append(":").append(std::to_string(line));
    message.append(": ").append(problem);
    return message;
}
}  // namespace

ErrorCodes error_codes(ErrorKind kind) {
    // The one table. A corpus the server cannot use is the server's fault, not the client's,
    // hence 500 beside the CLI's own exit code 4.
    static constexpr ErrorCodes table[] = {
        {ErrorKind::usage, 2, 400, "usage"},
        {ErrorKind::input, 3, 400, "input"},
        {ErrorKind::corpus, 4, 500, "corpus"},
        {ErrorKind::failure, 1, 500, "failure"},
    };
    for (const ErrorCodes& codes : table)
        if (codes.kind == kind) return codes;
    return table[3];
}

ErrorKind error_kind(const std::exception& error) {
    if (dynamic_cast<const UsageError*>(&error)) return ErrorKind::usage;
    if (dynamic_cast<const InputError*>(&error)) return ErrorKind::input;
    if (dynamic_cast<const CorpusError*>(&error)) return ErrorKind::corpus;
    return ErrorKind::failure;
}

InputError::InputError(std::string file, std::size_t line, const std::string& problem)
    : Error(locate(file, line, problem)), file_(std::move(file)), line_(line), problem_(problem) {}

}  // namespace novelty
