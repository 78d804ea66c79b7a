// kestrel-cli's subcommands. Each returns the process exit code: 0 on
// success, 1 on a runtime error (message on stderr), 2 on bad usage.
#pragma once

#include "cli_args.h"
#include "kestrel/engine.h"

#include <memory>

namespace kestrel::cli {

int runGenerate(int argc, char** argv);
int runTokenize(int argc, char** argv);
int runBench(int argc, char** argv);
int runInfo(int argc, char** argv);
int runChat(int argc, char** argv);
int runTemplate(int argc, char** argv);
int runSynth(int argc, char** argv);  // cmd_synth.cpp

// Shared by the subcommands: the options every one that loads a model takes.
std::vector<std::vector<std::string>> modelFlags();  // -m, --threads, --device
// Loads the model named by -m; prints the error and returns nullptr on failure.
std::shared_ptr<Model> loadModel(Args& args, bool showProgress);
int usageError(const std::string& command, const std::string& message);
int runtimeError(const Status& status);

}  // namespace kestrel::cli
