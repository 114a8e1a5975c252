// REPIX_HD: functions callable from host and device code (plain inline in host-only builds).
#pragma once
#ifndef REPIX_HD
#ifdef __CUDACC__
#define REPIX_HD __host__ __device__ __forceinline__
#else
#define REPIX_HD inline
#endif
#endif
