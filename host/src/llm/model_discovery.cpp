#include "novelty_host/llm/model_discovery.hpp"

#include "novelty/util/error.hpp"

#include "llm/http_util.hpp"

#include <curl/curl.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <memory>

namespace novelty::host {

namespace {

std::size_t append_body(char* data, std::size_t size, std::size_t n, void* out) {
    static_cast<std::string*>(out)->append(data, size * n);
    return size * n;
}

/// GET url; returns the body, throws Error for a transport failure or a non-2xx status.
std::string http_get(const std::string& url, const std::string& api_key, double timeout_seconds) {
    std::unique_ptr<CURL, void (*)(CURL*)> curl(curl_easy_init(), curl_easy_cleanup);
    if (!curl) throw Error("GET " + url + ": cannot start libcurl");
    std::unique_ptr<curl_slist, void (*)(curl_slist*)> headers(nullptr, curl_slist_free_all);
    if (!api_key.empty()) headers.reset(curl_slist_append(nullptr, ("Authorization: Bearer " + api_key).c_str()));
    std::string body;
    char message[CURL_ERROR_SIZE] = {0};
    const long timeout_ms = static_cast<long>(std::max(1.0, timeout_seconds * 1000.0));
    curl_easy_setopt(curl.get(), CURLOPT_URL, url.c_str());
    curl_easy_setopt(curl.get(), CURLOPT_HTTPGET, 1L);
    if (headers) curl_easy_setopt(curl.get(), CURLOPT_HTTPHEADER, headers.get());
    curl_easy_setopt(curl.get(), CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(curl.get(), CURLOPT_CONNECTTIMEOUT_MS, std::min<long>(timeout_ms, 30000));
    curl_easy_setopt(curl.get(), CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl.get(), CURLOPT_WRITEFUNCTION, append_body);
    curl_easy_setopt(curl.get(), CURLOPT_WRITEDATA, &body);
    curl_easy_setopt(curl.get(), CURLOPT_ERRORBUFFER, message);
    const CURLcode code = curl_easy_perform(curl.get());
    if (code != CURLE_OK)
        throw Error("GET " + url + ": " + (message[0] != '\0' ? std::string(message) : curl_easy_strerror(code)));
    long status = 0;
    curl_easy_getinfo(curl.get(), CURLINFO_RESPONSE_CODE, &status);
    if (status < 200 || status >= 300)
        throw Error("GET " + url + ": HTTP " + std::to_string(status) + ": " + detail::body_excerpt(body));
    return body;
}

}  // namespace

std::vector<std::string> list_models(const std::string& base_url, const std::string& api_key, double timeout_seconds) {
    std::string root = base_url;
    while (!root.empty() && root.back() == '/') root.pop_back();
    const std::string url = root + "/models";
    const std::string body = http_get(url, api_key, timeout_seconds);
    const nlohmann::json answer = nlohmann::json::parse(body, nullptr, false);
    const auto data = answer.is_object() ? answer.find("data") : answer.end();
    if (!answer.is_object() || data == answer.end() || !data->is_array())
        throw Error("GET " + url + ": the answer has no \"data\" array of models: " + detail::body_excerpt(body));
    std::vector<std::string> ids;
    for (const auto& model : *data) {
        const auto id = model.is_object() ? model.find("id") : model.end();
        if (!model.is_object() || id == model.end() || !id->is_string())
            throw Error("GET " + url + ": a model in \"data\" has no string \"id\": " + detail::body_excerpt(model.dump()));
        ids.push_back(id->get<std::string>());
    }
    return ids;
}

ChatClientOptions with_server_model(ChatClientOptions options) {
    if (!options.model.empty() || options.base_url.empty()) return options;
    std::vector<std::string> models;
    try {
        models = list_models(options.base_url, options.api_key, options.timeout_seconds);
    } catch (const Error& e) {
        throw UsageError(std::string("no model named (give --llm-model or set NOVELTY_LLM_MODEL), and asking the server "
                                     "failed: ") + e.what());
    }
    if (models.size() == 1) return options.model = models[0], options;
    std::string list;
    for (const std::string& m : models) list += (list.empty() ? "" : ", ") + m;
    if (models.empty())
        throw UsageError("no model named, and " + options.base_url + "/models lists none: give --llm-model");
    throw UsageError("no model named, and " + options.base_url + "/models lists " + std::to_string(models.size()) +
                     ": " + list + "; choose one with --llm-model");
}

}  // namespace novelty::host
