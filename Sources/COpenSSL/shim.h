#include <openssl/hmac.h>
#include <openssl/evp.h>
