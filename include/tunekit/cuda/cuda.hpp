#pragma once
/// \file cuda.hpp
/// Everything of tunekit's CUDA backend in one include.

#include <tunekit/cuda/compare.hpp>
#include <tunekit/cuda/device.hpp>
#include <tunekit/cuda/error.hpp>
#include <tunekit/cuda/measurer.hpp>
#include <tunekit/cuda/options.hpp>
