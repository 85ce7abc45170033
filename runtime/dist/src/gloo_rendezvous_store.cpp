#include "gloo_rendezvous_store.hpp"

#include <algorithm>
#include <charconv>
#include <span>
#include <string_view>

namespace odbatch {

void GlooRendezvousStore::set(const std::string& key, const std::vector<char>& data) {
  store_.set(key, std::as_bytes(std::span(data)));
}

std::vector<char> GlooRendezvousStore::get(const std::string& key) {
  note_peer(key);
  const auto value = store_.get(key, default_timeout_);
  const auto* first = reinterpret_cast<const char*>(value.data());
  return std::vector<char>(first, first + value.size());
}

void GlooRendezvousStore::wait(const std::vector<std::string>& keys) {
  wait(keys, default_timeout_);
}

void GlooRendezvousStore::wait(const std::vector<std::string>& keys,
                               const std::chrono::milliseconds& timeout) {
  if (!keys.empty()) note_peer(keys.front());
  // Gloo passes its context's timeout, a fifth of the mesh's (see GlooCollective): the peers'
  // addresses may take the whole of it.
  store_.wait(keys, std::max(timeout, default_timeout_));
}

void GlooRendezvousStore::note_peer(const std::string& key) {
  // Gloo's keys: "<rank>" (its pairs' addresses), "rank_<rank>" (its host name), or, in older
  // versions, "<rank>/<peer>".
  std::string_view text = key;
  if (text.starts_with("rank_")) text.remove_prefix(5);
  std::uint32_t peer = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), peer);
  if (error == std::errc{} && (end == text.data() + text.size() || *end == '/'))
    current_peer_ = peer;
}

}  // namespace odbatch
