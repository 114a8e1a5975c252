// The CPU reconstruct variants' entry points (one file each), for the registry
// (reconstruct_register.cpp). Everything else reaches them through reconstruct::variants().
#pragma once
#include "iwpp/reconstruct.hpp"

namespace repix::reconstruct {
Result run_seq(const HostImage& marker, const HostImage& mask, const Options& opt);           // reconstruct_seq.cpp
Result run_seq_sr(const HostImage& marker, const HostImage& mask, const Options& opt);        // reconstruct_seq_sr.cpp
Result run_seq_qb(const HostImage& marker, const HostImage& mask, const Options& opt);        // reconstruct_seq_qb.cpp
Result run_omp_tiled(const HostImage& marker, const HostImage& mask, const Options& opt);     // reconstruct_omp_tiled.cpp
Result run_omp_nontiled(const HostImage& marker, const HostImage& mask, const Options& opt);  // reconstruct_omp_nontiled.cpp
}  // namespace repix::reconstruct
