// The tests' fake OpenAI-compatible LLM (tests/fake_llm_server.hpp) as a process, for bench
// scripts that count LLM calls without a real model: prints its base URL on stdout, serves until
// SIGTERM or SIGINT, then prints the number of chat requests it answered on stderr.
//   fake_llm [--delay-ms MS]   (stop it with SIGTERM)
#include "fake_llm_server.hpp"

#include <csignal>
#include <cstdio>
#include <iostream>
#include <string>

int main(int argc, char** argv) {
    int delay_ms = 0;
    if (argc == 3 && std::string(argv[1]) == "--delay-ms") delay_ms = std::stoi(argv[2]);
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGTERM);
    sigaddset(&signals, SIGINT);
    pthread_sigmask(SIG_BLOCK, &signals, nullptr);
    novelty::test::FakeLlmServer server;
    server.set_delay_ms(delay_ms);
    std::printf("%s\n", server.base_url().c_str());
    std::fflush(stdout);
    int received = 0;
    sigwait(&signals, &received);
    std::fprintf(stderr, "fake_llm: answered %zu requests\n", server.n_requests());
    return 0;
}
