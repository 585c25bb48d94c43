#include "novelty/error.hpp"

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

InputError::InputError(std::string file, std::size_t line, const std::string& problem)
    : Error(locate(file, line, problem)), file_(std::move(file)), line_(line), problem_(problem) {}

}  // namespace novelty
