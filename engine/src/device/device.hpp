// The device layer: everything the CUDA backend (engine/src/search/cuda) and the CUDA encoder
// (engine/src/encoder/cuda) do to a device goes through one Device: buffers and copies, streams
// and events, the GEMMs (cuBLAS on a card), top-k selection (RAFT on a card) and each of the
// project's kernels (kernels/). Two implementations sit behind it, as a backend table:
//   - the real one (device/cuda/cuda_device.cpp, CUDA builds only): the CUDA runtime, cuBLAS,
//     cuBLASLt, RAFT and kernels/*.cu, unchanged;
//   - the emulated one (device/emulated/), in every build: memory in host RAM with a settable
//     limit, the GEMMs through the CPU BLAS, top-k by the CPU's exact rule (similarity
//     descending, then lower index), and each kernel's per-element body (the __host__ __device__
//     functions in kernels/*_body.cuh that the real kernels call) run over the grid by a host
//     loop; kernels whose threads cooperate (block reductions, shared-memory compaction) have
//     host twins (docs/cuda.md lists which).
// The emulated device runs each piece of work when it is queued, in the order queued, so it
// proves the host logic and the kernels' arithmetic, never launch shapes, timing, races between
// streams or device memory: those only a card proves.
//
// Internal to the engine; no CUDA header is included here. Pointers named *_d are device
// pointers of this Device; every failure throws (kernels::KernelError on a card,
// novelty::Error in the emulator).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "element_type.cuh"
#include "novelty/search/devices.hpp"
#include "filter_rescore_body.cuh"
#include "tile_mask_body.cuh"

namespace novelty::dev {

using kernels::Element;

/// Opaque handles: a cudaStream_t / cudaEvent_t on a card, the emulator's own objects otherwise.
struct StreamTag;
struct EventTag;
using Stream = StreamTag*;
using Event = EventTag*;

enum class Copy { host_to_device, device_to_host, device_to_device };

/// A top-k selector (RAFT's select_k on a card) with its own workspace.
class Selector {
public:
    virtual ~Selector() = default;
    /// The k largest of each of n_rows rows of in_vals_d (n_rows x len float32) with their
    /// payload in_idx_d (n_rows x len int64; null: column numbers) into out_vals_d / out_idx_d
    /// (n_rows x k), in no particular order (the emulator writes them best last); 1 <= k <= len.
    /// Among equal values at the k-th place a card may keep any; the emulator keeps the lower
    /// payload.
    virtual void largest(const float* in_vals_d, const std::int64_t* in_idx_d, std::int64_t n_rows, std::int64_t len,
                         std::int64_t k, float* out_vals_d, std::int64_t* out_idx_d, Stream stream) = 0;
};

/// The GEMMs (cuBLAS / cuBLASLt on a card) with their handles and workspace.
class Blas {
public:
    virtual ~Blas() = default;
    /// sims_d[i * ld + j] = dot(queries row i, rows row j), i < n_queries, j < n_rows; inputs
    /// row-major of `type`, float32 accumulation, output `out_type` (f32, or f16 for f16 inputs).
    virtual void similarity(Stream stream, Element type, const void* queries_d, std::int64_t n_queries,
                            const void* rows_d, std::int64_t n_rows, std::int64_t dim, void* sims_d, std::int64_t ld,
                            Element out_type) = 0;
    /// y_d [n_tokens x out] float32 = x_d [n_tokens x in] (`type`) * W^T, W_d [out x in] (`type`),
    /// plus bias_d (float32, out values) when the implementation adds it in its epilogue. Returns
    /// true when the bias was added (always when bias_d is null), false when the caller must add it.
    virtual bool linear(Stream stream, Element type, const void* w_d, const float* bias_d, const void* x_d,
                        std::size_t n_tokens, std::size_t in, std::size_t out, float* y_d) = 0;
};

/// Arguments of the encoder's attention kernels (encoder_kernels.cuh): qkv_d [T x 3h] float32,
/// qkv_bias_d 3h values or null, ctx_d [T x h] of `type`. Packed: seq_start_d / seq_len_d per
/// token. Tiled: per query tile of kernels::attention_query_tile queries, tile_seq_start_d,
/// tile_seq_len_d, tile_q_begin_d (n_tiles each).
struct AttentionArgs {
    const float* qkv_d = nullptr;
    const float* qkv_bias_d = nullptr;
    const std::int32_t* seq_start_d = nullptr;
    const std::int32_t* seq_len_d = nullptr;
    std::size_t n_tokens = 0;
    const std::int32_t* tile_seq_start_d = nullptr;
    const std::int32_t* tile_seq_len_d = nullptr;
    const std::int32_t* tile_q_begin_d = nullptr;
    std::size_t n_tiles = 0;
    std::size_t h = 0, heads = 0;
    void* ctx_d = nullptr;
    Element type = Element::f16;
};

/// One device: memory, copies, streams, events, libraries and kernels (shapes and rules of each
/// kernel as in its kernels/*.cuh header).
class Device {
public:
    virtual ~Device() = default;
    /// "cuda" or "cuda-emulated".
    virtual std::string name() const = 0;
    virtual bool emulated() const = 0;

    // --- devices and memory
    virtual int count() = 0;
    virtual void set_current(int device) = 0;
    virtual int current() = 0;
    virtual void memory_info(std::size_t& free_bytes, std::size_t& total_bytes) = 0;
    virtual void* allocate(std::size_t bytes) = 0;
    virtual void release(void* ptr_d) noexcept = 0;
    virtual void* allocate_pinned(std::size_t bytes) = 0;
    virtual void release_pinned(void* ptr) noexcept = 0;

    // --- streams, events, copies
    virtual Stream make_stream() = 0;
    virtual void destroy(Stream stream) noexcept = 0;
    virtual void synchronize(Stream stream) = 0;
    virtual Event make_event(bool timing) = 0;
    virtual void destroy(Event event) noexcept = 0;
    virtual void record(Event event, Stream stream) = 0;
    virtual void wait(Stream stream, Event event) = 0;
    virtual void synchronize(Event event) = 0;
    /// Milliseconds between two timing events (both recorded and complete).
    virtual float elapsed_ms(Event start, Event stop) = 0;
    virtual void copy(void* dst, const void* src, std::size_t bytes, Copy kind, Stream stream) = 0;
    /// `rows` rows of `row_bytes` bytes, source rows `src_pitch` bytes apart, destination rows `dst_pitch`.
    virtual void copy_2d(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch,
                         std::size_t row_bytes, std::size_t rows, Copy kind, Stream stream) = 0;
    virtual void fill_bytes(void* dst_d, int value, std::size_t bytes, Stream stream) = 0;

    // --- libraries
    virtual std::unique_ptr<Blas> make_blas() = 0;
    /// `workspace_bytes`: the most device memory the selector may keep for its temporaries.
    virtual std::unique_ptr<Selector> make_selector(std::size_t workspace_bytes) = 0;

    // --- the search kernels (kernels/*.cuh)
    virtual void mask_tile(void* sims_d, Element tile_type, std::int64_t n_queries, std::int64_t n_cols,
                           std::int64_t ld, const kernels::TileMask& mask, Stream stream) = 0;
    virtual void place_columns(const float* src_vals_d, const std::int64_t* src_idx_d, std::int64_t n_rows,
                               std::int64_t n_src, float* dst_vals_d, std::int64_t* dst_idx_d, std::int64_t dst_ld,
                               std::int64_t dst_col, std::int64_t n_total, std::int64_t idx_offset, Stream stream) = 0;
    virtual void filter_above(const float* sims_d, std::int64_t n_rows, std::int64_t n_cols, float* cand_vals_d,
                              std::int64_t* cand_idx_d, std::int64_t cand_ld, std::int64_t k, std::int64_t capacity,
                              std::int64_t idx_offset, int* overflow_d, Stream stream) = 0;
    virtual void filter_rescore(const kernels::FilterRescoreJob& job, Stream stream) = 0;
    virtual void candidate_dots(const float* queries_d, const void* rows_d, Element row_type, std::int64_t dim,
                                const std::int32_t* pair_query_d, const std::int64_t* pair_row_d,
                                std::int64_t n_pairs, float* out_d, Stream stream,
                                std::int64_t pairs_per_query = 1) = 0;
    virtual void convert_values(const void* in_d, Element in_type, void* out_d, Element out_type, std::size_t n,
                                Stream stream) = 0;
    virtual void max_row_norm(const void* rows_d, Element type, std::int64_t n_rows, std::int64_t dim, float* out_d,
                              Stream stream) = 0;
    /// normalize_rows.cuh; `out_type` f32 (out_d may equal in_d) or f16 (binary16 bits).
    virtual void normalize_rows(const float* in_d, void* out_d, Element out_type, std::size_t n_rows,
                                std::size_t dim, int* row_status_d, Stream stream) = 0;

    // --- the encoder's kernels (encoder_kernels.cuh)
    virtual void embed_layer_norm(const std::int32_t* ids_d, const std::int32_t* positions_d, std::size_t n_tokens,
                                  const void* word_d, const void* pos_d, const void* type_row_d, const float* gamma_d,
                                  const float* beta_d, float eps, std::size_t h, float* x_d, void* half_d,
                                  Element type, Stream stream) = 0;
    virtual void add_layer_norm(const float* y_d, const float* bias_d, float* x_d, std::size_t n_tokens,
                                std::size_t h, const float* gamma_d, const float* beta_d, float eps, void* half_d,
                                Element type, Stream stream) = 0;
    virtual void bias_act_convert(const float* y_d, const float* bias_d, bool gelu, std::size_t n_tokens,
                                  std::size_t cols, void* out_d, Element type, Stream stream) = 0;
    /// The packed (one warp per query) or tiled attention kernel.
    virtual void attention(const AttentionArgs& args, bool tiled, Stream stream) = 0;
    virtual void pool(const float* x_d, const std::int32_t* offsets_d, std::size_t n_seqs, std::size_t h, bool cls,
                      float* out_d, Stream stream) = 0;
};

/// The real CUDA device (the CUDA runtime's devices); throws UsageError "CUDA was not compiled
/// in" in a CPU-only build.
Device& cuda_device();
/// The emulated device: one device whose memory limit is NOVELTY_EMULATED_DEVICE_MIB (MiB,
/// default 16384) and which refuses any allocation beyond it as a card's cudaMalloc would.
Device& emulated_device();
/// The emulated device when `emulated` or when the environment sets NOVELTY_DEVICE=cuda-emulated
/// (every request for the CUDA device in that process then gets the emulator: how CI runs
/// tests/gpu), else the real one.
Device& select_device(bool emulated);
/// True when NOVELTY_DEVICE=cuda-emulated is set; UsageError for another value.
bool emulation_forced();
/// The emulated device as list_devices() reports it (index 0, name "cuda-emulated (host
/// memory)", its memory limit and what is free).
std::vector<DeviceInfo> emulated_device_list();

}  // namespace novelty::dev
