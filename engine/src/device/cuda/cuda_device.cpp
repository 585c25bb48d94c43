// The real CUDA device (device.hpp), CUDA builds only: the CUDA runtime, cuBLAS / cuBLASLt
// (cuda_blas.cpp), RAFT's select_k and the kernels of kernels/, each call checked and turned
// into kernels::KernelError on failure.
#include <cuda_runtime_api.h>

#include <string>

#include "candidate_dots.cuh"
#include "convert_values.cuh"
#include "cuda_check.cuh"
#include "device/cuda/cuda_blas.hpp"
#include "device/device.hpp"
#include "encoder_kernels.cuh"
#include "filter_above.cuh"
#include "filter_rescore.cuh"
#include "max_row_norm.cuh"
#include "normalize_rows.cuh"
#include "place_columns.cuh"
#include "select_k.cuh"
#include "tile_mask.cuh"

namespace novelty::dev {

namespace {

cudaStream_t raw(Stream stream) { return reinterpret_cast<cudaStream_t>(stream); }
cudaEvent_t raw(Event event) { return reinterpret_cast<cudaEvent_t>(event); }

cudaMemcpyKind kind_of(Copy kind) {
    switch (kind) {
        case Copy::host_to_device: return cudaMemcpyHostToDevice;
        case Copy::device_to_host: return cudaMemcpyDeviceToHost;
        case Copy::device_to_device: return cudaMemcpyDeviceToDevice;
    }
    return cudaMemcpyDefault;
}

class RaftSelector final : public Selector {
public:
    explicit RaftSelector(std::size_t workspace_bytes) : select_(workspace_bytes) {}
    void largest(const float* in_vals_d, const std::int64_t* in_idx_d, std::int64_t n_rows, std::int64_t len,
                 std::int64_t k, float* out_vals_d, std::int64_t* out_idx_d, Stream stream) override {
        select_.largest(in_vals_d, in_idx_d, n_rows, len, k, out_vals_d, out_idx_d, raw(stream));
    }

private:
    kernels::SelectK select_;
};

class CudaDevice final : public Device {
public:
    std::string name() const override { return "cuda"; }
    bool emulated() const override { return false; }

    int count() override {
        int n = 0;
        if (cudaGetDeviceCount(&n) != cudaSuccess) {
            cudaGetLastError();  // no driver or no device: none
            return 0;
        }
        return n;
    }
    void set_current(int device) override { NOVELTY_CUDA_CHECK(cudaSetDevice(device)); }
    int current() override {
        int device = 0;
        NOVELTY_CUDA_CHECK(cudaGetDevice(&device));
        return device;
    }
    void memory_info(std::size_t& free_bytes, std::size_t& total_bytes) override {
        NOVELTY_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    }
    void* allocate(std::size_t bytes) override {
        void* ptr = nullptr;
        NOVELTY_CUDA_CHECK(cudaMalloc(&ptr, bytes));
        return ptr;
    }
    void release(void* ptr_d) noexcept override { cudaFree(ptr_d); }
    void* allocate_pinned(std::size_t bytes) override {
        void* ptr = nullptr;
        NOVELTY_CUDA_CHECK(cudaMallocHost(&ptr, bytes));
        return ptr;
    }
    void release_pinned(void* ptr) noexcept override { cudaFreeHost(ptr); }

    Stream make_stream() override {
        cudaStream_t stream = nullptr;
        NOVELTY_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
        return reinterpret_cast<Stream>(stream);
    }
    void destroy(Stream stream) noexcept override { cudaStreamDestroy(raw(stream)); }
    void synchronize(Stream stream) override { NOVELTY_CUDA_CHECK(cudaStreamSynchronize(raw(stream))); }
    Event make_event(bool timing) override {
        cudaEvent_t event = nullptr;
        NOVELTY_CUDA_CHECK(cudaEventCreateWithFlags(&event, timing ? cudaEventDefault : cudaEventDisableTiming));
        return reinterpret_cast<Event>(event);
    }
    void destroy(Event event) noexcept override { cudaEventDestroy(raw(event)); }
    void record(Event event, Stream stream) override { NOVELTY_CUDA_CHECK(cudaEventRecord(raw(event), raw(stream))); }
    void wait(Stream stream, Event event) override { NOVELTY_CUDA_CHECK(cudaStreamWaitEvent(raw(stream), raw(event), 0)); }
    void synchronize(Event event) override { NOVELTY_CUDA_CHECK(cudaEventSynchronize(raw(event))); }
    float elapsed_ms(Event start, Event stop) override {
        float ms = 0;
        NOVELTY_CUDA_CHECK(cudaEventElapsedTime(&ms, raw(start), raw(stop)));
        return ms;
    }
    void copy(void* dst, const void* src, std::size_t bytes, Copy kind, Stream stream) override {
        if (bytes > 0) NOVELTY_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, kind_of(kind), raw(stream)));
    }
    void copy_2d(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch, std::size_t row_bytes,
                 std::size_t rows, Copy kind, Stream stream) override {
        if (rows > 0 && row_bytes > 0)
            NOVELTY_CUDA_CHECK(
                cudaMemcpy2DAsync(dst, dst_pitch, src, src_pitch, row_bytes, rows, kind_of(kind), raw(stream)));
    }
    void fill_bytes(void* dst_d, int value, std::size_t bytes, Stream stream) override {
        if (bytes > 0) NOVELTY_CUDA_CHECK(cudaMemsetAsync(dst_d, value, bytes, raw(stream)));
    }

    std::unique_ptr<Blas> make_blas() override { return make_cuda_blas(); }
    std::unique_ptr<Selector> make_selector(std::size_t workspace_bytes) override {
        return std::make_unique<RaftSelector>(workspace_bytes);
    }

    void mask_tile(void* sims_d, Element tile_type, std::int64_t n_queries, std::int64_t n_cols, std::int64_t ld,
                   const kernels::TileMask& mask, Stream stream) override {
        if (tile_type == Element::f16)
            kernels::launch_mask_tile_f16(sims_d, n_queries, n_cols, ld, mask, raw(stream));
        else
            kernels::launch_mask_tile(static_cast<float*>(sims_d), n_queries, n_cols, ld, mask, raw(stream));
    }
    void place_columns(const float* src_vals_d, const std::int64_t* src_idx_d, std::int64_t n_rows, std::int64_t n_src,
                       float* dst_vals_d, std::int64_t* dst_idx_d, std::int64_t dst_ld, std::int64_t dst_col,
                       std::int64_t n_total, std::int64_t idx_offset, Stream stream) override {
        kernels::launch_place_columns(src_vals_d, src_idx_d, n_rows, n_src, dst_vals_d, dst_idx_d, dst_ld, dst_col,
                                      n_total, idx_offset, raw(stream));
    }
    void filter_above(const float* sims_d, std::int64_t n_rows, std::int64_t n_cols, float* cand_vals_d,
                      std::int64_t* cand_idx_d, std::int64_t cand_ld, std::int64_t k, std::int64_t capacity,
                      std::int64_t idx_offset, int* overflow_d, Stream stream) override {
        kernels::launch_filter_above(sims_d, n_rows, n_cols, cand_vals_d, cand_idx_d, cand_ld, k, capacity, idx_offset,
                                     overflow_d, raw(stream));
    }
    void filter_rescore(const kernels::FilterRescoreJob& job, Stream stream) override {
        kernels::launch_filter_rescore(job, raw(stream));
    }
    void candidate_dots(const float* queries_d, const void* rows_d, Element row_type, std::int64_t dim,
                        const std::int32_t* pair_query_d, const std::int64_t* pair_row_d, std::int64_t n_pairs,
                        float* out_d, Stream stream, std::int64_t pairs_per_query) override {
        kernels::launch_candidate_dots(queries_d, rows_d, row_type, dim, pair_query_d, pair_row_d, n_pairs, out_d,
                                       raw(stream), pairs_per_query);
    }
    void convert_values(const void* in_d, Element in_type, void* out_d, Element out_type, std::size_t n,
                        Stream stream) override {
        kernels::launch_convert_values(in_d, in_type, out_d, out_type, n, raw(stream));
    }
    void max_row_norm(const void* rows_d, Element type, std::int64_t n_rows, std::int64_t dim, float* out_d,
                      Stream stream) override {
        kernels::launch_max_row_norm(rows_d, type, n_rows, dim, out_d, raw(stream));
    }
    void normalize_rows(const float* in_d, void* out_d, Element out_type, std::size_t n_rows, std::size_t dim,
                        int* row_status_d, Stream stream) override {
        if (out_type == Element::f16)
            kernels::launch_normalize_rows_f16(in_d, static_cast<std::uint16_t*>(out_d), n_rows, dim, row_status_d,
                                               raw(stream));
        else
            kernels::launch_normalize_rows_f32(in_d, static_cast<float*>(out_d), n_rows, dim, row_status_d, raw(stream));
    }

    void embed_layer_norm(const std::int32_t* ids_d, const std::int32_t* positions_d, std::size_t n_tokens,
                          const void* word_d, const void* pos_d, const void* type_row_d, const float* gamma_d,
                          const float* beta_d, float eps, std::size_t h, float* x_d, void* half_d, Element type,
                          Stream stream) override {
        kernels::launch_embed_layer_norm(ids_d, positions_d, n_tokens, word_d, pos_d, type_row_d, gamma_d, beta_d, eps,
                                         h, x_d, half_d, type, raw(stream));
    }
    void add_layer_norm(const float* y_d, const float* bias_d, float* x_d, std::size_t n_tokens, std::size_t h,
                        const float* gamma_d, const float* beta_d, float eps, void* half_d, Element type,
                        Stream stream) override {
        kernels::launch_add_layer_norm(y_d, bias_d, x_d, n_tokens, h, gamma_d, beta_d, eps, half_d, type, raw(stream));
    }
    void bias_act_convert(const float* y_d, const float* bias_d, bool gelu, std::size_t n_tokens, std::size_t cols,
                          void* out_d, Element type, Stream stream) override {
        kernels::launch_bias_act_convert(y_d, bias_d, gelu, n_tokens, cols, out_d, type, raw(stream));
    }
    void attention(const AttentionArgs& a, bool tiled, Stream stream) override {
        if (tiled)
            kernels::launch_tiled_attention(a.qkv_d, a.qkv_bias_d, a.tile_seq_start_d, a.tile_seq_len_d,
                                            a.tile_q_begin_d, a.n_tiles, a.h, a.heads, a.ctx_d, a.type, raw(stream));
        else
            kernels::launch_packed_attention(a.qkv_d, a.qkv_bias_d, a.seq_start_d, a.seq_len_d, a.n_tokens, a.h,
                                             a.heads, a.ctx_d, a.type, raw(stream));
    }
    void pool(const float* x_d, const std::int32_t* offsets_d, std::size_t n_seqs, std::size_t h, bool cls,
              float* out_d, Stream stream) override {
        kernels::launch_pool(x_d, offsets_d, n_seqs, h, cls, out_d, raw(stream));
    }
};

}  // namespace

Device& cuda_device() {
    static CudaDevice device;
    return device;
}

}  // namespace novelty::dev
