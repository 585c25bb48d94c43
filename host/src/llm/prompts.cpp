#include "novelty_host/llm/prompts.hpp"

#include "novelty/util/error.hpp"

namespace novelty::host {

std::string_view prompt_text(std::string_view name) {
    for (std::size_t i = 0; i < detail::n_embedded_prompts; ++i)
        if (name == detail::embedded_prompts[i].name) return detail::embedded_prompts[i].text;
    throw UsageError("no prompt named '" + std::string(name) + "' is built in");
}

std::vector<std::string> prompt_names() {
    std::vector<std::string> names;
    for (std::size_t i = 0; i < detail::n_embedded_prompts; ++i) names.emplace_back(detail::embedded_prompts[i].name);
    return names;
}

}  // namespace novelty::host
