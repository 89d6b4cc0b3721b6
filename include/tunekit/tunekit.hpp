#pragma once
/// \file tunekit.hpp
/// Everything of tunekit's core in one include.

#include <tunekit/campaign.hpp>
#include <tunekit/communicator.hpp>
#include <tunekit/config.hpp>
#include <tunekit/config_space.hpp>
#include <tunekit/contextual.hpp>
#include <tunekit/environment.hpp>
#include <tunekit/error.hpp>
#include <tunekit/hardware.hpp>
#include <tunekit/key.hpp>
#include <tunekit/launcher.hpp>
#include <tunekit/log.hpp>
#include <tunekit/measure.hpp>
#include <tunekit/process_context.hpp>
#include <tunekit/shapes.hpp>
#include <tunekit/tuner.hpp>
#include <tunekit/tuner_options.hpp>
#include <tunekit/value.hpp>
#include <tunekit/version.hpp>
#include <tunekit/winner_cache.hpp>
