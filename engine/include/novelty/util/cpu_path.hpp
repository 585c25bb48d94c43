// Which instructions the CPU kernels use: the int8 products of the encoder's linear layers and of
// the int8-screened search, self-join and densities (util/int8_gemm.hpp), and the bf16 products of
// the bf16 precision and storage (util/bf16_gemm.hpp). One choice for the whole process, made at run
// time by CPUID (never by build flags: one binary runs on every x86-64 CPU), from the best down:
//   amx      AMX-INT8 tiles (Sapphire Rapids and later), after the kernel grants the process the
//            tile state (Linux arch_prctl ARCH_REQ_XCOMP_PERM); AVX512-BF16 for bf16 products
//   avx512   AVX512-VNNI's vpdpbusd on 512-bit registers; AVX512-BF16's vdpbf16ps where present
//   avxvnni  AVX-VNNI's vpdpbusd on 256-bit registers (Alder Lake and later, Zen 5)
//   avx2     AVX2's vpmaddubsw and vpmaddwd (Haswell and later, every Zen)
//   f32      none of them: the narrow values widened to float32 through sgemm
// Every int8 path computes the same exact integer sums, so the same bits; bf16 products differ
// only between AVX512-BF16 and sgemm on widened values (float32 sums in another order), which the
// search's screens allow for (results stay f32's bit for bit either way).
//
// NOVELTY_CPU_PATH=amx|avx512|avxvnni|avx2|f32 forces a path no better than the CPU's best, for
// tests and benchmarks; a name it does not know, or a path this CPU cannot run, is an Error naming
// the variable, at the first product.
#pragma once

#include <optional>
#include <string>

namespace novelty {

/// Ordered: a higher path needs every instruction of the lower ones.
enum class CpuPath { f32 = 0, avx2 = 1, avxvnni = 2, avx512 = 3, amx = 4 };

/// "f32", "avx2", "avxvnni", "avx512" or "amx".
const char* cpu_path_name(CpuPath path);
/// The path a name gives (as cpu_path_name writes it); nullopt for another name.
std::optional<CpuPath> parse_cpu_path(const std::string& name);

/// What CPUID (and the OS) say this CPU runs.
struct CpuFeatures {
    bool avx2 = false, fma = false, avxvnni = false;
    bool avx512f = false, avx512vnni = false, avx512bf16 = false;
    bool amx_tile = false, amx_int8 = false, amx_bf16 = false;
    bool amx_permitted = false;  ///< the kernel granted the tile state (asked only when amx_int8)
};
/// This CPU's features, read once (the AMX permission asked for once, on the first call).
const CpuFeatures& cpu_features();
/// The best path `features` run: amx needs amx_tile, amx_int8, avx512f, avx512vnni and the
/// permission; avx512 needs avx512f and avx512vnni; avxvnni needs avx2, fma and avxvnni; avx2 needs
/// avx2 and fma.
CpuPath best_cpu_path(const CpuFeatures& features);

/// The path the kernels use now: the test override, else NOVELTY_CPU_PATH, else the best this CPU
/// runs. Throws Error when NOVELTY_CPU_PATH names no path or one better than this CPU runs.
CpuPath cpu_path();
/// One line saying why cpu_path() is what it is ("best this CPU runs", "forced by NOVELTY_CPU_PATH",
/// with the AMX permission refused when it was), for `novelty info`.
std::string cpu_path_reason();

/// True when the int8 products run a kernel (cpu_path() >= avx2), else they run on float32.
bool int8_kernel_available();
/// True when the bf16 products run AVX512-BF16's kernel: cpu_path() >= avx512 and the CPU has it.
bool bf16_kernel_available();

/// For tests: while one lives, cpu_path() is `path` (an Error when this CPU cannot run it).
class ScopedCpuPath {
public:
    explicit ScopedCpuPath(CpuPath path);
    ~ScopedCpuPath();
    ScopedCpuPath(const ScopedCpuPath&) = delete;
    ScopedCpuPath& operator=(const ScopedCpuPath&) = delete;

private:
    int previous_;
};

}  // namespace novelty
