// Fuzzes the server's request parser: a body through the JSON parse entry point, then every
// field reader of docs/api.md. Every input must parse or end in UsageError / InputError (the
// server's 400); anything else (a crash, a sanitizer report, another exception: the server's
// 500) is a finding.
#include "novelty/util/error.hpp"
#include "server/server_requests.hpp"

#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string body(reinterpret_cast<const char*>(data), size);
    try {
        const nlohmann::json j = novelty::host::parse_body(body);
        novelty::host::RequestLimits limits;
        limits.max_records = 64;
        for (const char* key : {"ideas", "queries", "records"}) {
            try {
                const novelty::RecordBatch batch = novelty::host::parse_records(j, key, limits, 4);
                for (std::size_t i = 0; i < batch.size(); ++i) {
                    if (batch.records[i].id.empty()) __builtin_trap();
                    if (batch.given_vector(i) && batch.given.size() != 4 * batch.size()) __builtin_trap();
                }
            } catch (const novelty::UsageError&) {
            }
        }
        for (const char* key : {"k", "p", "q"}) {
            try {
                const std::size_t n = novelty::host::parse_count(j, key, 10, 2048);
                if (n < 1 || n > 2048) __builtin_trap();
            } catch (const novelty::UsageError&) {
            }
        }
        try {
            (void)novelty::host::parse_date_field(j, "cutoff");
        } catch (const novelty::UsageError&) {
        }
    } catch (const novelty::UsageError&) {
    } catch (const novelty::InputError&) {
    }
    return 0;
}
