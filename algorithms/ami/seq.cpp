// `seq`: the reference pair, ranklet seq (sorted windows) -> quantise -> auto-mi seq (one histogram per lag).
#include "ami/variants.hpp"

namespace repix::ami {

Variant seq_variant() {
  return make_pipeline("seq", "reference", "ranklet seq -> quantise -> auto-mi seq (the reference)", "seq", "seq");
}

}  // namespace repix::ami
