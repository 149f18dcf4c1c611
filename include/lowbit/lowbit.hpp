// SPDX-License-Identifier: Apache-2.0
/**
 * @file lowbit.hpp
 * Umbrella header: everything public in lowbit.
 */
#ifndef LOWBIT_LOWBIT_HPP
#define LOWBIT_LOWBIT_HPP

#include "attributes.hpp"
#include "bipolar_quant.hpp"
#include "broadcast.hpp"
#include "codes.hpp"
#include "config.hpp"
#include "data_type.hpp"
#include "error.hpp"
#include "error_stats.hpp"
#include "float_quant.hpp"
#include "group_quant.hpp"
#include "int_quant.hpp"
#include "minifloat.hpp"
#include "mx_quant.hpp"
#include "nvfp4.hpp"
#include "packing.hpp"
#include "parallel.hpp"
#include "rounding.hpp"
#include "stochastic.hpp"
#include "trunc.hpp"
#include "view.hpp"

#endif  // LOWBIT_LOWBIT_HPP
