// Which model an OpenAI-compatible server serves: GET {base_url}/models, for `--llm URL` given
// without `--llm-model` (docs/claimnov.md, docs/cli.md).
#pragma once

#include "novelty_host/llm/chat_client.hpp"

#include <string>
#include <vector>

namespace novelty::host {

/// The model ids of GET {base_url}/models ({"data": [{"id": STR}, ...]}), in the server's order.
/// Sends "Authorization: Bearer KEY" when `api_key` is set. Throws Error naming the URL for a
/// connection failure, a non-2xx status or an answer without a "data" array of objects with a
/// string "id".
std::vector<std::string> list_models(const std::string& base_url, const std::string& api_key, double timeout_seconds);

/// `options` unchanged when it names a model or has no base URL; else with the only model of
/// its server. Throws UsageError when the server lists no model or several (naming them and
/// asking for --llm-model), or when the server cannot be asked (with the reason).
ChatClientOptions with_server_model(ChatClientOptions options);

}  // namespace novelty::host
