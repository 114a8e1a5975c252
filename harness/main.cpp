// repix command line: see harness/cli.cpp.
#include "harness/cli.hpp"

int main(int argc, char** argv) { return repix::cli::main(argc, argv); }
