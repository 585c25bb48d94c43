#include "novelty/util/cpu_path.hpp"

#include "novelty/util/error.hpp"

#include <atomic>
#include <cstdlib>

#if defined(__linux__) && defined(__x86_64__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace novelty {

namespace {

constexpr const char* env_name = "NOVELTY_CPU_PATH";
constexpr int no_override = -1;
std::atomic<int> override_path{no_override};

// Asks Linux for the AMX tile data state (needed before the first tile instruction, once per
// process); false when the kernel refuses or is too old to know the request.
bool request_amx_permission() {
#if defined(__linux__) && defined(__x86_64__)
    constexpr long arch_req_xcomp_perm = 0x1023;
    constexpr long xfeature_xtiledata = 18;
    return syscall(SYS_arch_prctl, arch_req_xcomp_perm, xfeature_xtiledata) == 0;
#else
    return false;
#endif
}

CpuFeatures read_features() {
    CpuFeatures f;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    // libgcc's CPUID checks include the OS's support for the AVX and AVX-512 register state (XGETBV).
    __builtin_cpu_init();
    f.avx2 = __builtin_cpu_supports("avx2");
    f.fma = __builtin_cpu_supports("fma");
    f.avxvnni = __builtin_cpu_supports("avxvnni");
    f.avx512f = __builtin_cpu_supports("avx512f");
    f.avx512vnni = __builtin_cpu_supports("avx512vnni");
    f.avx512bf16 = __builtin_cpu_supports("avx512bf16");
    f.amx_tile = __builtin_cpu_supports("amx-tile");
    f.amx_int8 = __builtin_cpu_supports("amx-int8");
    f.amx_bf16 = __builtin_cpu_supports("amx-bf16");
    f.amx_permitted = f.amx_tile && f.amx_int8 && request_amx_permission();
#endif
    return f;
}

// NOVELTY_CPU_PATH's path, checked against the CPU; nullopt when it is unset or empty.
std::optional<CpuPath> env_path(CpuPath best) {
    const char* value = std::getenv(env_name);
    if (!value || !*value) return std::nullopt;
    const std::optional<CpuPath> path = parse_cpu_path(value);
    if (!path)
        throw Error(std::string(env_name) + "=" + value + " names no CPU path; use amx, avx512, avxvnni, avx2 or f32");
    if (*path > best)
        throw Error(std::string(env_name) + "=" + value + " asks for instructions this CPU does not run (its best path is " +
                    cpu_path_name(best) + ")");
    return path;
}

}  // namespace

const char* cpu_path_name(CpuPath path) {
    switch (path) {
        case CpuPath::amx: return "amx";
        case CpuPath::avx512: return "avx512";
        case CpuPath::avxvnni: return "avxvnni";
        case CpuPath::avx2: return "avx2";
        case CpuPath::f32: break;
    }
    return "f32";
}

std::optional<CpuPath> parse_cpu_path(const std::string& name) {
    for (CpuPath p : {CpuPath::f32, CpuPath::avx2, CpuPath::avxvnni, CpuPath::avx512, CpuPath::amx})
        if (name == cpu_path_name(p)) return p;
    return std::nullopt;
}

const CpuFeatures& cpu_features() {
    static const CpuFeatures features = read_features();
    return features;
}

CpuPath best_cpu_path(const CpuFeatures& f) {
    const bool avx512 = f.avx512f && f.avx512vnni;
    if (avx512 && f.amx_tile && f.amx_int8 && f.amx_permitted) return CpuPath::amx;
    if (avx512) return CpuPath::avx512;
    if (f.avx2 && f.fma && f.avxvnni) return CpuPath::avxvnni;
    if (f.avx2 && f.fma) return CpuPath::avx2;
    return CpuPath::f32;
}

CpuPath cpu_path() {
    const int forced = override_path.load(std::memory_order_relaxed);
    if (forced != no_override) return static_cast<CpuPath>(forced);
    // A bad NOVELTY_CPU_PATH throws from the initializer, so every call throws again.
    static const CpuPath chosen = [] {
        const CpuPath best = best_cpu_path(cpu_features());
        return env_path(best).value_or(best);
    }();
    return chosen;
}

std::string cpu_path_reason() {
    const CpuPath best = best_cpu_path(cpu_features());
    const CpuFeatures& f = cpu_features();
    std::string why;
    if (override_path.load() != no_override) why = "forced by a test";
    else if (env_path(best)) why = std::string("forced by ") + env_name + " (this CPU's best is " + cpu_path_name(best) + ")";
    else why = "the best this CPU runs";
    if (f.amx_tile && f.amx_int8 && !f.amx_permitted) why += "; the OS refused the AMX tile state, so no AMX";
    return why;
}

bool int8_kernel_available() { return cpu_path() >= CpuPath::avx2; }

bool bf16_kernel_available() { return cpu_path() >= CpuPath::avx512 && cpu_features().avx512bf16; }

ScopedCpuPath::ScopedCpuPath(CpuPath path) : previous_(override_path.load()) {
    const CpuPath best = best_cpu_path(cpu_features());
    if (path > best)
        throw Error(std::string("the CPU path ") + cpu_path_name(path) + " was asked for on a CPU whose best is " +
                    cpu_path_name(best));
    override_path.store(static_cast<int>(path));
}

ScopedCpuPath::~ScopedCpuPath() { override_path.store(previous_); }

}  // namespace novelty
