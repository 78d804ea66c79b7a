// The sampling options shared by `generate` and `chat`.
#pragma once

#include "cli_args.h"
#include "kestrel/sampling.h"

#include <optional>
#include <string>
#include <vector>

namespace kestrel::cli {

std::vector<std::vector<std::string>> samplingFlags();
// nullopt (with args.error() set) when a value is malformed.
std::optional<SamplingParams> samplingFromArgs(Args& args, const SamplingParams& defaults);

}  // namespace kestrel::cli
