#ifndef ACCOUNTD_CARGON2_SHIM_H
#define ACCOUNTD_CARGON2_SHIM_H
#include <argon2.h>
#endif
