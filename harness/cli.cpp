#include "harness/cli.hpp"

#include <cstdio>

namespace repix::cli {
int main(int, char**) {
  std::puts("repix: skeleton");
  return 0;
}
}  // namespace repix::cli
