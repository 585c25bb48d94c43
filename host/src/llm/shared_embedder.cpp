#include "novelty_host/llm/shared_embedder.hpp"

#include "novelty/util/error.hpp"

#include <mutex>

namespace novelty::host {

namespace {

struct SharedModel {
    std::unique_ptr<Embedder> embedder;
    std::mutex mutex;
};

class EmbedderView : public Embedder {
public:
    explicit EmbedderView(std::shared_ptr<SharedModel> model) : model_(std::move(model)) {}
    std::string name() const override { return model_->embedder->name(); }
    std::size_t dim() const override {
        std::lock_guard lock(model_->mutex);
        return model_->embedder->dim();
    }
    std::string pooling() const override { return model_->embedder->pooling(); }
    std::string device() const override { return model_->embedder->device(); }
    std::string precision() const override { return model_->embedder->precision(); }
    std::vector<float> embed(const std::vector<std::string>& texts) override {
        std::lock_guard lock(model_->mutex);
        return model_->embedder->embed(texts);
    }

private:
    std::shared_ptr<SharedModel> model_;
};

}  // namespace

std::function<std::unique_ptr<Embedder>()> share_embedder(std::unique_ptr<Embedder> embedder) {
    if (!embedder) throw UsageError("share_embedder: no embedder");
    auto model = std::make_shared<SharedModel>();
    model->embedder = std::move(embedder);
    return [model] { return std::make_unique<EmbedderView>(model); };
}

}  // namespace novelty::host
