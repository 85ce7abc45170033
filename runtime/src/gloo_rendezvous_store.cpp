#include "gloo_rendezvous_store.hpp"

#include <algorithm>
#include <span>

namespace odbatch {

void GlooRendezvousStore::set(const std::string& key, const std::vector<char>& data) {
  store_.set(key, std::as_bytes(std::span(data)));
}

std::vector<char> GlooRendezvousStore::get(const std::string& key) {
  const auto value = store_.get(key, default_timeout_);
  const auto* first = reinterpret_cast<const char*>(value.data());
  return std::vector<char>(first, first + value.size());
}

void GlooRendezvousStore::wait(const std::vector<std::string>& keys) {
  store_.wait(keys, default_timeout_);
}

void GlooRendezvousStore::wait(const std::vector<std::string>& keys,
                               const std::chrono::milliseconds& timeout) {
  // Gloo passes its context's timeout, a fifth of the mesh's (see GlooCollective): the peers'
  // addresses may take the whole of it.
  store_.wait(keys, std::max(timeout, default_timeout_));
}

}  // namespace odbatch
