// The emulated device (device.hpp): one device in host RAM. Work runs when it is queued, in
// queue order, on the calling thread; streams and events only order what is already done.
// Internal to engine/src/device/emulated.
#pragma once

#include "device/device.hpp"
#include "device/emulated/emulated_memory.hpp"

namespace novelty::dev::emulated {

class EmulatedDevice final : public Device {
public:
    explicit EmulatedDevice(std::size_t memory_bytes) : memory_(memory_bytes) {}

    std::string name() const override { return "cuda-emulated"; }
    bool emulated() const override { return true; }

    int count() override { return 1; }
    void set_current(int device) override;
    int current() override { return 0; }
    void memory_info(std::size_t& free_bytes, std::size_t& total_bytes) override;
    void* allocate(std::size_t bytes) override { return memory_.allocate(bytes); }
    void release(void* ptr_d) noexcept override { memory_.release(ptr_d); }
    void* allocate_pinned(std::size_t bytes) override;
    void release_pinned(void* ptr) noexcept override;

    Stream make_stream() override;
    void destroy(Stream stream) noexcept override;
    void synchronize(Stream) override {}
    Event make_event(bool timing) override;
    void destroy(Event event) noexcept override;
    void record(Event, Stream) override {}
    void wait(Stream, Event) override {}
    void synchronize(Event) override {}
    float elapsed_ms(Event, Event) override { return 0.0f; }
    void copy(void* dst, const void* src, std::size_t bytes, Copy kind, Stream stream) override;
    void copy_2d(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch, std::size_t row_bytes,
                 std::size_t rows, Copy kind, Stream stream) override;
    void fill_bytes(void* dst_d, int value, std::size_t bytes, Stream stream) override;

    std::unique_ptr<Blas> make_blas() override;
    std::unique_ptr<Selector> make_selector(std::size_t workspace_bytes) override;

    void mask_tile(void* sims_d, Element tile_type, std::int64_t n_queries, std::int64_t n_cols, std::int64_t ld,
                   const kernels::TileMask& mask, Stream stream) override;
    void place_columns(const float* src_vals_d, const std::int64_t* src_idx_d, std::int64_t n_rows, std::int64_t n_src,
                       float* dst_vals_d, std::int64_t* dst_idx_d, std::int64_t dst_ld, std::int64_t dst_col,
                       std::int64_t n_total, std::int64_t idx_offset, Stream stream) override;
    void filter_above(const float* sims_d, std::int64_t n_rows, std::int64_t n_cols, float* cand_vals_d,
                      std::int64_t* cand_idx_d, std::int64_t cand_ld, std::int64_t k, std::int64_t capacity,
                      std::int64_t idx_offset, int* overflow_d, Stream stream) override;
    void filter_rescore(const kernels::FilterRescoreJob& job, Stream stream) override;
    void candidate_dots(const float* queries_d, const void* rows_d, Element row_type, std::int64_t dim,
                        const std::int32_t* pair_query_d, const std::int64_t* pair_row_d, std::int64_t n_pairs,
                        float* out_d, Stream stream, std::int64_t pairs_per_query) override;
    void convert_values(const void* in_d, Element in_type, void* out_d, Element out_type, std::size_t n,
                        Stream stream) override;
    void max_row_norm(const void* rows_d, Element type, std::int64_t n_rows, std::int64_t dim, float* out_d,
                      Stream stream) override;
    void normalize_rows(const float* in_d, void* out_d, Element out_type, std::size_t n_rows, std::size_t dim,
                        int* row_status_d, Stream stream) override;

    void embed_layer_norm(const std::int32_t* ids_d, const std::int32_t* positions_d, std::size_t n_tokens,
                          const void* word_d, const void* pos_d, const void* type_row_d, const float* gamma_d,
                          const float* beta_d, float eps, std::size_t h, float* x_d, void* half_d, Element type,
                          Stream stream) override;
    void add_layer_norm(const float* y_d, const float* bias_d, float* x_d, std::size_t n_tokens, std::size_t h,
                        const float* gamma_d, const float* beta_d, float eps, void* half_d, Element type,
                        Stream stream) override;
    void bias_act_convert(const float* y_d, const float* bias_d, bool gelu, std::size_t n_tokens, std::size_t cols,
                          void* out_d, Element type, Stream stream) override;
    void attention(const AttentionArgs& args, bool tiled, Stream stream) override;
    void pool(const float* x_d, const std::int32_t* offsets_d, std::size_t n_seqs, std::size_t h, bool cls,
              float* out_d, Stream stream) override;

    /// Throws unless [ptr, ptr + bytes) is device memory of this device.
    void check(const void* ptr, std::size_t bytes, const char* what) const { memory_.check(ptr, bytes, what); }

private:
    Memory memory_;
};

/// Value i of a device array of `type` as float32 (16-bit values widened exactly).
float load_value(const void* values, Element type, std::size_t i);
/// Stores `v` as value i of a device array of `type`, rounded to nearest even for 16-bit types.
void store_value(void* values, Element type, std::size_t i, float v);
/// Values [0, n) of a device array of `type` as float32 into `out` (load_value of each).
void load_values(const void* values, Element type, std::size_t n, float* out);
/// in[0, n) stored as `type` into `values` (store_value of each).
void store_values(void* values, Element type, std::size_t n, const float* in);

}  // namespace novelty::dev::emulated
