// libcrypt (libxcrypt on Debian): crypt_r and crypt_gensalt_rn, for the web panel's stored password hash.
#include <crypt.h>
