#ifndef ACCOUNTD_CSODIUM_SHIM_H
#define ACCOUNTD_CSODIUM_SHIM_H
#include <sodium.h>
#endif
