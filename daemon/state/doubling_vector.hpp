// A small vector that doubles its heap capacity when it grows. A fingerprint's window, workers,
// results and tallies start inline and grow one element at a time as calls arrive; boost's
// default growth (1.6x, at least one element) reallocates 6 times on the way from 1 to 10
// elements, doubling 4 times (docs/performance.md, "CPU per event and memory per fingerprint").
#pragma once

#include <cstddef>

#include <boost/container/options.hpp>
#include <boost/container/small_vector.hpp>

namespace loopguard::daemon {

template <class T, std::size_t N>
using doubling_vector = boost::container::small_vector<
    T, N, void,
    boost::container::small_vector_options_t<
        boost::container::growth_factor<boost::container::growth_factor_100>>>;

}  // namespace loopguard::daemon
