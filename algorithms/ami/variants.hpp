// The ami pipeline's engine, for the registry (register.cpp).
#pragma once
#include <string>

#include "ami/ami.hpp"

namespace repix::ami {

// A pipeline variant chaining ranklet variant `ranklet_id` and auto-mi variant `auto_mi_id`
// (pipeline.cpp): the ranklet stage's run() on the host image, each plane quantised to Q - 1 on
// the host, the feature stage's run() per plane. GPU when either stage is.
Variant make_pipeline(std::string id, std::string step, std::string description, std::string ranklet_id,
                      std::string auto_mi_id);

}  // namespace repix::ami
