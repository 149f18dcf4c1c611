// SPDX-License-Identifier: Apache-2.0
/**
 * @file detail/buffer.hpp
 * A fixed-size, zero-initialized array on the heap: the scratch tensors of
 * the codes stages. lowbit's headers use it instead of std::vector, whose
 * header (with vector<bool>) every translation unit that includes lowbit
 * would otherwise parse (docs/performance.md, "Compile time").
 */
#ifndef LOWBIT_DETAIL_BUFFER_HPP
#define LOWBIT_DETAIL_BUFFER_HPP

#include <cstddef>
#include <memory>

#include "../config.hpp"

LOWBIT_BEGIN_DETAIL_NAMESPACE

template <class T>
class buffer {
 public:
  /// n value-initialized elements (zeros for arithmetic T).
  explicit buffer(std::size_t n) : p_(n ? new T[n]() : nullptr), n_(n) {}

  T* data() noexcept { return p_.get(); }
  const T* data() const noexcept { return p_.get(); }
  std::size_t size() const noexcept { return n_; }
  T& operator[](std::size_t i) noexcept { return p_[i]; }
  const T& operator[](std::size_t i) const noexcept { return p_[i]; }

 private:
  std::unique_ptr<T[]> p_;
  std::size_t n_;
};

LOWBIT_END_DETAIL_NAMESPACE

#endif  // LOWBIT_DETAIL_BUFFER_HPP
