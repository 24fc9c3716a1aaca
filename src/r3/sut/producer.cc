#include "r3/sut/producer.h"

namespace r3::sut {
namespace {

class HostProducer final : public Producer {
 public:
  explicit HostProducer(SutOptions options) : Producer(options) {}

  std::vector<Observation> Observe(std::span<const Case> cases) override {
    std::vector<Observation> out;
    out.reserve(cases.size());
    for (const Case& c : cases) out.push_back(RunSut(c, options()));
    return out;
  }
  std::string Label() const override { return std::string(SutName(options().version)); }
  std::string Id() const override { return Label(); }
};

}  // namespace

std::shared_ptr<Producer> MakeHostProducer(SutOptions options) {
  return std::make_shared<HostProducer>(options);
}

}  // namespace r3::sut
